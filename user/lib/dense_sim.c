// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "dense_sim.h"
#include "table_sim.h" /* the two-choice models */

int dense_sim_init(struct dense_sim *s, uint32_t lines, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	memset(s, 0, sizeof(*s));
	if (lines < 2 || lines > PACER_DENSE_MAX_LINES || tick_shift > 40 ||
	    thresh < PACER_MIN_THRESH || thresh > PACER_DENSE_MAX_SAT || policy >= PACER_POLICY_MAX ||
	    on_full >= PACER_TBL_FULL_MAX)
		return -EINVAL;
	s->lines = lines;
	s->tick_shift = tick_shift;
	s->thresh = thresh;
	s->policy = policy;
	s->on_full = on_full;
	s->key[0] = key[0];
	s->key[1] = key[1];
	s->l = calloc(lines, sizeof(*s->l));
	return s->l ? 0 : -ENOMEM;
}

void dense_sim_free(struct dense_sim *s)
{
	free(s->l);
	s->l = NULL;
}

static void dense_sim_key(const struct dense_sim *s, uint64_t h, struct pacer_dense_line *l[2])
{
	uint32_t idx[2];

	pacer_dense_lines(h, s->lines, idx);
	l[0] = &s->l[idx[0]];
	l[1] = &s->l[idx[1]];
}

int dense_sim_verdict(const struct dense_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age,
		      uint32_t *event)
{
	struct pacer_dense_line *l[2];
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);

	dense_sim_key(s, h, l);
	return pacer_dense_verdict(l, pacer_dense_fp(h), pacer_now_tick(now_ns, s->tick_shift), &rate,
				   s->policy, s->on_full, s->placement, 1, age, event);
}

static void dense_sim_keep_swept(struct dense_sim *s, uint64_t now_ns)
{
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);

	if (s->sweep && (tick - s->swept_tick >= PACER_DENSE_SWEEP_TICKS || tick < s->swept_tick)) {
		dense_sim_sweep(s, now_ns);
		s->swept_tick = tick;
	}
}

int dense_sim_packet(struct dense_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age_out)
{
	uint32_t age, event;
	int drop;

	dense_sim_keep_swept(s, now_ns);
	drop = dense_sim_verdict(s, h, now_ns, &age, &event);

	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return drop;
}

int dense_sim_staged(struct dense_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		     uint32_t *age_out)
{
	struct pacer_dense_line *l[2];
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	uint32_t age, event, slot = 0, fp = pacer_dense_fp(h);
	int v = SIM_ADMITTED;

	dense_sim_keep_swept(s, now_ns);
	dense_sim_key(s, h, l);
	if (pacer_dense_judge(l, fp, tick, &rate, s->policy, s->on_full, s->placement, 1, &age,
			      &event, &slot))
		v = SIM_PACED;
	else if (!later_admits)
		v = SIM_REFUSED_LATER;
	else if (pacer_dense_commit(l, fp, tick, &rate, s->placement, slot, &event))
		v = SIM_PACED;
	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += v == SIM_ADMITTED && event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return v;
}

/* As bpf/lib/sweep.h: a swap from the value judged, so a concurrent claim's write stays. */
static void dense_sweep_line(struct pacer_dense_line *l, uint64_t tick)
{
	uint32_t j;

	for (j = 0; j < PACER_DENSE_WORDS; j++) {
		__u64 cur = *(volatile __u64 *)&l->w[j], want = pacer_dense_swept_word(cur, tick, PACER_DENSE_MAX_SAT);

		if (want != cur)
			__sync_val_compare_and_swap(&l->w[j], cur, want);
	}
}

void dense_sim_sweep(struct dense_sim *s, uint64_t now_ns)
{
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	uint32_t i;

	for (i = 0; i < s->lines; i++)
		dense_sweep_line(&s->l[i], tick);
}

void dense_sim_sweep_key(const struct dense_sim *s, uint64_t h, uint64_t now_ns)
{
	struct pacer_dense_line *l[2];
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);

	dense_sim_key(s, h, l);
	dense_sweep_line(l[0], tick);
	dense_sweep_line(l[1], tick);
}

uint64_t dense_bytes(uint32_t lines)
{
	return (uint64_t)lines * sizeof(struct pacer_dense_line);
}

/* Two lines of about occ fresh entries each; fingerprints are 1..PACER_DENSE_FP_MAX. */
static double fp_collision(double occ)
{
	return two_lines_collision(occ, PACER_DENSE_FP_MAX);
}

void dense_model(uint32_t lines, double n, double *overflow, double *collision)
{
	double occ;

	two_choice_steady(PACER_DENSE_WAYS, lines ? n / (double)lines : 0, overflow, &occ);
	*collision = fp_collision(occ);
}

void dense_model_fill(uint32_t lines, double n, double *overflow, double *collision)
{
	double m = lines ? n / (double)lines : 0, lost, occ;

	two_choice_fill(PACER_DENSE_WAYS, m, &lost, &occ);
	*overflow = m > 0 ? lost / m : 0;
	*collision = fp_collision(occ);
}
