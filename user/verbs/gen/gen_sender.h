/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A socket engine's sender: one thread's frames as the live-frames program
 * makes them (include/gen_draw.h, the same code), its quota and pace, and
 * its counters.  The engine fills frames, hands them to the device, and
 * says which the device took (gen_sender_sent) and which it never will
 * (gen_sender_unsent); sent counts only the first.
 */
#ifndef PACER_GEN_SENDER_H
#define PACER_GEN_SENDER_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>
#include "pacer_compiler.h"
#include "gen.h"

/* gen_draw.h's environment in userspace. */
struct gen_env {
	uint64_t rng;       /* xorshift64*, seeded per thread */
	uint64_t coarse_ns; /* CLOCK_MONOTONIC_COARSE, read once per batch */
	const struct gen_zipf_slot *zipf;
};

PACER_INLINE __u32 gen_env_rand(struct gen_env *e)
{
	uint64_t x = e->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	e->rng = x;
	return (__u32)((x * 0x2545f4914f6cdd1dULL) >> 32);
}

PACER_INLINE __u64 gen_env_coarse_ns(struct gen_env *e)
{
	return e->coarse_ns;
}

PACER_INLINE const struct gen_zipf_slot *gen_env_zipf(struct gen_env *e, __u32 slot)
{
	return e->zipf ? &e->zipf[slot & ((1u << GEN_ZIPF_SLOTS_LOG2) - 1)] : NULL;
}

#include "gen_draw.h"

struct gen_sender {
	struct gen_env env;
	gen_params_ro *p;
	struct gen_cpu_state *st; /* this thread's share and counters (g->states[cpu]) */
	uint64_t heavy[GEN_MAX_HEAVY]; /* heavy: this thread's frames per heavy source */
	uint64_t pending;         /* filled, neither taken by the device nor given up */
};

/* A sender for thread t: 0, or -errno (out of randomness). */
int gen_sender_init(struct gen_sender *s, struct gen_thread *t);

/*
 * How many frames to fill now, at most max: within the quota (frames sent
 * and pending count) and, paced, those due by now.  0 with *wake_ns set:
 * nothing is due before then; 0 with *wake_ns 0: the quota is filled.
 */
uint32_t gen_sender_due(struct gen_sender *s, uint32_t max, uint64_t *wake_ns);

/* Fill a frame that holds the template: the pick (kind -1: no frame, nothing pending). */
static inline struct gen_pick gen_sender_fill(struct gen_sender *s, uint8_t *frame)
{
	struct gen_pick pick = gen_write_source(&s->env, s->p, s->st, frame);

	s->pending += pick.kind >= 0;
	return pick;
}

/* The device took a filled frame. */
static inline void gen_sender_sent(struct gen_sender *s, struct gen_pick pick)
{
	s->pending--;
	gen_count(s->st, pick.kind);
	if (pick.kind == GEN_SRC_GOOD && s->p->dist == GEN_DIST_HEAVY)
		s->heavy[pick.idx % GEN_MAX_HEAVY]++;
}

/* A filled frame will never be sent (the run stopped, the device dropped it). */
static inline void gen_sender_unsent(struct gen_sender *s)
{
	s->pending--;
}

/* Every frame of the quota is sent: the thread is done. */
static inline bool gen_sender_done(const struct gen_sender *s)
{
	return s->st->sent >= s->st->quota;
}

/* Sleep (or spin, when it is close) until wake_ns or the thread is stopped. */
void gen_sender_wait(const struct gen_thread *t, uint64_t wake_ns);

/* Add this sender's per-heavy-source counts to the run's. */
void gen_sender_collect(const struct gen_sender *s, struct gen_ctx *g);

#endif
