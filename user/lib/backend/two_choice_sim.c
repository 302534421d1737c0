// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "two_choice_sim.h"

/* What both tables' simulators check and allocate; lines: the line count. */
static int two_choice_sim_init(struct two_choice_sim *s, uint32_t lines, uint32_t lines_log2,
			       size_t line_bytes, uint32_t max_sat, uint32_t tick_shift,
			       uint32_t thresh, uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	if (tick_shift > 40 || thresh < PACER_MIN_THRESH || thresh > max_sat ||
	    policy >= PACER_POLICY_MAX || on_full >= PACER_TBL_FULL_MAX)
		return -EINVAL;
	*s = (struct two_choice_sim){ .lines = lines, .lines_log2 = lines_log2,
				      .tick_shift = tick_shift, .thresh = thresh, .policy = policy,
				      .on_full = on_full, .key = { key[0], key[1] } };
	s->tl = calloc(lines, line_bytes);
	return s->tl ? 0 : -ENOMEM;
}

int table_sim_init(struct two_choice_sim *s, uint32_t lines_log2, uint32_t tick_shift,
		   uint32_t thresh, uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	memset(s, 0, sizeof(*s));
	if (lines_log2 < 1 || lines_log2 > PACER_TBL_MAX_LINES_LOG2)
		return -EINVAL;
	return two_choice_sim_init(s, 1u << lines_log2, lines_log2, sizeof(struct pacer_tbl_line),
				   PACER_RATE_TBL_MAX_SAT, tick_shift, thresh, policy, on_full, key);
}

int dense_sim_init(struct two_choice_sim *s, uint32_t lines, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	uint32_t lg = 0;

	memset(s, 0, sizeof(*s));
	if (lines < 2 || lines > PACER_DENSE_MAX_LINES)
		return -EINVAL;
	while ((1ULL << lg) < lines)
		lg++;
	return two_choice_sim_init(s, lines, lg, sizeof(struct pacer_dense_line),
				   PACER_DENSE_MAX_SAT, tick_shift, thresh, policy, on_full, key);
}

#define table_sim_lines(s, h, idx) pacer_tbl_lines(h, (s)->lines_log2, idx)
#define TCS_PREFIX table_
#define TCS_ENGINE pacer_tbl_
#define TCS_LINE struct pacer_tbl_line
#define TCS_STORE tl
#define TCS_LINES table_sim_lines
#define TCS_SWEEP_TICKS PACER_TBL_SWEEP_TICKS
#define TCS_SWEEP_SAT PACER_RATE_TBL_MAX_SAT
#include "two_choice_sim_body.h"

#define dense_sim_lines(s, h, idx) pacer_dense_lines(h, (s)->lines, idx)
#define TCS_PREFIX dense_
#define TCS_ENGINE pacer_dense_
#define TCS_LINE struct pacer_dense_line
#define TCS_STORE dl
#define TCS_LINES dense_sim_lines
#define TCS_SWEEP_TICKS PACER_DENSE_SWEEP_TICKS
#define TCS_SWEEP_SAT PACER_DENSE_MAX_SAT
#include "two_choice_sim_body.h"

uint64_t table_bytes(uint32_t lines_log2)
{
	return (1ULL << lines_log2) * sizeof(struct pacer_tbl_line);
}

uint64_t dense_bytes(uint32_t lines)
{
	return (uint64_t)lines * sizeof(struct pacer_dense_line);
}

double two_lines_collision(double occ, double fps)
{
	return 1.0 - pow(1.0 - 1.0 / fps, 2.0 * occ);
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

/* Steady (expiry) or fill model of `lines` lines of `ways` entries under fps fingerprints. */
static void two_choice_model(uint32_t ways, double fps, double lines, double n, int fill,
			     double *overflow, double *collision)
{
	double m = lines > 0 ? n / lines : 0, lost, occ;

	if (fill) {
		two_choice_fill(ways, m, &lost, &occ);
		*overflow = m > 0 ? lost / m : 0;
	} else {
		two_choice_steady(ways, m, overflow, &occ);
	}
	*collision = two_lines_collision(occ, fps);
}

void table_model(uint32_t lines_log2, double n, double *overflow, double *collision)
{
	two_choice_model(PACER_TBL_WAYS, 65535.0, (double)(1ULL << lines_log2), n, 0, overflow,
			 collision);
}

void table_model_fill(uint32_t lines_log2, double n, double *overflow, double *collision)
{
	two_choice_model(PACER_TBL_WAYS, 65535.0, (double)(1ULL << lines_log2), n, 1, overflow,
			 collision);
}

void dense_model(uint32_t lines, double n, double *overflow, double *collision)
{
	two_choice_model(PACER_DENSE_WAYS, PACER_DENSE_FP_MAX, lines, n, 0, overflow, collision);
}

void dense_model_fill(uint32_t lines, double n, double *overflow, double *collision)
{
	two_choice_model(PACER_DENSE_WAYS, PACER_DENSE_FP_MAX, lines, n, 1, overflow, collision);
}
