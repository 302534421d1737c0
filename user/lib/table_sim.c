// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "table_sim.h"

int table_sim_init(struct table_sim *s, uint32_t lines_log2, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	memset(s, 0, sizeof(*s));
	if (lines_log2 < 1 || lines_log2 > PACER_TBL_MAX_LINES_LOG2 || tick_shift > 40 ||
	    thresh < PACER_MIN_THRESH || thresh > PACER_RATE_TBL_MAX_SAT || policy >= PACER_POLICY_MAX ||
	    on_full >= PACER_TBL_FULL_MAX)
		return -EINVAL;
	s->lines_log2 = lines_log2;
	s->tick_shift = tick_shift;
	s->thresh = thresh;
	s->policy = policy;
	s->on_full = on_full;
	s->key[0] = key[0];
	s->key[1] = key[1];
	s->lines = calloc(1ULL << lines_log2, sizeof(*s->lines));
	return s->lines ? 0 : -ENOMEM;
}

void table_sim_free(struct table_sim *s)
{
	free(s->lines);
	s->lines = NULL;
}

int table_sim_verdict(const struct table_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age,
		      uint32_t *event)
{
	struct pacer_tbl_line *l[2];
	uint32_t idx[2];

	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);

	pacer_tbl_lines(h, s->lines_log2, idx);
	l[0] = &s->lines[idx[0]];
	l[1] = &s->lines[idx[1]];
	return pacer_tbl_verdict(l, pacer_tbl_fp(h), pacer_now_tick(now_ns, s->tick_shift), &rate,
				 s->policy, s->on_full, s->placement, 1, age, event);
}

int table_sim_packet(struct table_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age_out)
{
	uint32_t age, event;
	int drop = table_sim_verdict(s, h, now_ns, &age, &event);

	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return drop;
}

int table_sim_staged(struct table_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		     uint32_t *age_out)
{
	struct pacer_tbl_line *l[2];
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	uint32_t idx[2], age, event, slot = 0;
	__u16 fp = pacer_tbl_fp(h);
	int v = SIM_ADMITTED;

	pacer_tbl_lines(h, s->lines_log2, idx);
	l[0] = &s->lines[idx[0]];
	l[1] = &s->lines[idx[1]];
	if (pacer_tbl_judge(l, fp, tick, &rate, s->policy, s->on_full, s->placement, 1, &age,
			    &event, &slot))
		v = SIM_PACED;
	else if (!later_admits)
		v = SIM_REFUSED_LATER;
	else if (pacer_tbl_commit(l, fp, tick, &rate, s->placement, slot, &event))
		v = SIM_PACED;
	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += v == SIM_ADMITTED && event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return v;
}

uint64_t table_bytes(uint32_t lines_log2)
{
	return (1ULL << lines_log2) * sizeof(struct pacer_tbl_line);
}

double two_lines_collision(double occ, double fps)
{
	return 1.0 - pow(1.0 - 1.0 / fps, 2.0 * occ);
}

/* Two lines of about occ fresh entries each; fingerprints are 1..65535. */
static double fp_collision(double occ)
{
	return two_lines_collision(occ, 65535.0);
}

void two_choice_fill(uint32_t ways, double m, double *lost, double *occ)
{
	/* s[i]: share of lines holding at least i entries, as keys arrive. */
	double s[TWO_CHOICE_MAX_WAYS + 1] = { 1.0 }, dt = m / 20000.0 + 1e-12, t;
	uint32_t i;

	*lost = 0;
	*occ = 0;
	if (ways > TWO_CHOICE_MAX_WAYS)
		ways = TWO_CHOICE_MAX_WAYS;
	for (t = 0; t < m; t += dt) {
		double prev = s[0] * s[0];

		for (i = 1; i <= ways; i++) {
			double cur = s[i] * s[i];

			s[i] += (prev - cur) * dt; /* a key lands in the less full of two lines */
			prev = cur;
		}
		*lost += s[ways] * s[ways] * dt;
	}
	for (i = 1; i <= ways; i++)
		*occ += s[i]; /* mean entries per line */
}

void table_model_fill(uint32_t lines_log2, double n, double *overflow, double *collision)
{
	double m = n / (double)(1ULL << lines_log2), lost, occ;

	two_choice_fill(PACER_TBL_WAYS, m, &lost, &occ);
	*overflow = m > 0 ? lost / m : 0;
	*collision = fp_collision(occ);
}

void two_choice_steady(uint32_t ways, double a, double *full, double *occ)
{
	/*
	 * s[i]: share of lines holding at least i fresh entries.  Time in
	 * intervals: a admissions per line per interval, each to the less full
	 * of two lines (none when both are full), and each fresh entry expires
	 * at rate 1 (its mean life is one interval):
	 *   ds_i/dt = a (s_{i-1}^2 - s_i^2) - i (s_i - s_{i+1}),
	 * integrated from an empty table to its fixed point.
	 */
	double s[TWO_CHOICE_MAX_WAYS + 2] = { 1.0 }, dt, t;
	uint32_t i;

	if (ways > TWO_CHOICE_MAX_WAYS)
		ways = TWO_CHOICE_MAX_WAYS;
	dt = 0.25 / (2 * a + ways + 1);
	/* Settled well within 20 intervals at every load (relaxation rate >= 1). */
	for (t = 0; t < 30; t += dt) {
		double ds[TWO_CHOICE_MAX_WAYS + 1];

		for (i = 1; i <= ways; i++)
			ds[i] = a * (s[i - 1] * s[i - 1] - s[i] * s[i]) - i * (s[i] - s[i + 1]);
		for (i = 1; i <= ways; i++)
			s[i] += ds[i] * dt;
	}
	*occ = 0;
	for (i = 1; i <= ways; i++)
		*occ += s[i]; /* mean fresh entries per line */
	*full = s[ways] * s[ways];
}

void table_model(uint32_t lines_log2, double n, double *overflow, double *collision)
{
	double occ;

	two_choice_steady(PACER_TBL_WAYS, n / (double)(1ULL << lines_log2), overflow, &occ);
	*collision = fp_collision(occ);
}
