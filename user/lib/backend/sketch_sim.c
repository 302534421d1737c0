// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "sketch_sim.h"

int sketch_sim_init(struct sketch_sim *s, uint32_t rows, uint32_t kind, uint32_t lines_log2,
		    uint32_t tick_shift, uint32_t thresh, uint32_t policy, const __u64 key[2])
{
	memset(s, 0, sizeof(*s));
	if (rows < 1 || rows > PACER_MAX_ROWS || lines_log2 > 30 || tick_shift > PACER_TICK_SHIFT_MAX ||
	    (kind != PACER_LAYOUT_ROWS && kind != PACER_LAYOUT_BLOCKED) ||
	    thresh < PACER_MIN_THRESH || thresh > PACER_MAX_THRESH || policy >= PACER_POLICY_MAX)
		return -EINVAL;
	*s = (struct sketch_sim){ .rows = rows, .kind = kind, .lines_log2 = lines_log2, .tick_shift = tick_shift,
				  .thresh = thresh, .policy = policy, .key = { key[0], key[1] },
				  .nlines = pacer_total_lines(kind, rows, lines_log2) };
	s->lines = calloc(s->nlines, sizeof(*s->lines));
	return s->lines ? 0 : -ENOMEM;
}

void sketch_sim_free(struct sketch_sim *s)
{
	free(s->lines);
	s->lines = NULL;
}

uint64_t sketch_sim_hash(const struct sketch_sim *s, int family, uint64_t lo, uint64_t hi)
{
	return family == 4 ? pacer_hash_v4(s->key, (uint32_t)lo) : pacer_hash_v6(s->key, lo, hi);
}

static void resolve(const struct sketch_sim *s, uint64_t h, struct pacer_line *line[PACER_MAX_ROWS],
		    uint32_t cell[PACER_MAX_ROWS])
{
	uint32_t idx[PACER_MAX_ROWS] = { 0 };
	uint32_t r;

	pacer_slots(s->kind, s->rows, s->lines_log2, h, idx, cell);
	for (r = 0; r < s->rows; r++)
		line[r] = &s->lines[idx[r]];
}

uint32_t sketch_sim_age(const struct sketch_sim *s, uint64_t h, uint64_t now_ns)
{
	struct pacer_line *line[PACER_MAX_ROWS];
	uint32_t cell[PACER_MAX_ROWS];

	resolve(s, h, line, cell);
	return pacer_key_age(line, cell, s->rows, pacer_now_tick(now_ns, s->tick_shift));
}

int sketch_sim_packet(struct sketch_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age_out)
{
	struct pacer_line *line[PACER_MAX_ROWS];
	uint32_t cell[PACER_MAX_ROWS], age, rebased = 0; /* counted by the datapath only */
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	int drop;

	resolve(s, h, line, cell);
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);

	drop = pacer_sketch_packet(line, cell, s->rows, tick, &rate, s->policy, s->placement,
				   &age, &rebased);
	if (age_out)
		*age_out = age;
	return drop;
}

int sketch_sim_staged(struct sketch_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		      uint32_t *age_out)
{
	struct pacer_line *line[PACER_MAX_ROWS];
	uint32_t cell[PACER_MAX_ROWS], age, rebased = 0;
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);
	int v = SIM_ADMITTED;

	resolve(s, h, line, cell);
	if (pacer_sketch_judge(line, cell, s->rows, tick, &rate, s->policy, &age, &rebased))
		v = SIM_PACED;
	else if (!later_admits)
		v = SIM_REFUSED_LATER;
	else if (pacer_sketch_commit(line, cell, s->rows, tick, &rate, s->placement, &rebased))
		v = SIM_PACED;
	if (age_out)
		*age_out = age;
	return v;
}

uint64_t sketch_sim_bytes(const struct sketch_sim *s)
{
	return s->nlines * sizeof(struct pacer_line);
}

double sketch_model_false_drop(uint32_t kind, uint32_t rows, uint32_t lines_log2, double n)
{
	if (kind == PACER_LAYOUT_ROWS) {
		double w = (double)(1ULL << lines_log2) * PACER_LINE_CELLS;

		return pow(1.0 - exp(-n / w), rows);
	} else {
		double lambda = n / (double)(1ULL << lines_log2);
		double seg = pacer_seg_cells(rows), p = 0, spread = 12 * sqrt(lambda) + 30;
		double lo = lambda - spread > 0 ? floor(lambda - spread) : 0, k;

		/*
		 * Other keys in our line ~ Poisson(lambda): sum the pmf (in log
		 * space, so large lambda does not underflow) over its bulk.
		 */
		for (k = lo; k <= lambda + spread; k++) {
			double logpk = -lambda + (lambda > 0 ? k * log(lambda) : (k ? -INFINITY : 0)) -
				       lgamma(k + 1);

			p += exp(logpk) * pow(1.0 - pow(1.0 - 1.0 / seg, k), rows);
		}
		return p;
	}
}
