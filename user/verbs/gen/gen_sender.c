// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer gen: a socket engine's sender (gen_sender.h): quota, pace, counters. */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include "gen_sender.h"
#include "time_now.h"

/* Paced and nothing due for longer than this: sleep; closer than this: spin. */
#define GEN_SPIN_NS 100000ULL

int gen_sender_init(struct gen_sender *s, struct gen_thread *t)
{
	struct gen_ctx *g = t->g;

	memset(s, 0, sizeof(*s));
	s->p = &g->params;
	s->st = &g->states[g->cpus[t->index]];
	s->env.zipf = g->o.dist == GEN_DIST_ZIPF ? g->z.slots : NULL;
	if (getrandom(&s->env.rng, sizeof(s->env.rng), 0) != sizeof(s->env.rng))
		return -errno;
	s->env.rng |= 1; /* xorshift's one forbidden state is 0 */
	return 0;
}

uint32_t gen_sender_due(struct gen_sender *s, uint32_t max, uint64_t *wake_ns)
{
	struct gen_cpu_state *st = s->st;
	uint64_t left = st->sent + s->pending >= st->quota ? 0 : st->quota - st->sent - s->pending;
	uint32_t n = left < max ? (uint32_t)left : max, due;
	uint64_t now;

	*wake_ns = 0;
	s->env.coarse_ns = clock_now_ns(CLOCK_MONOTONIC_COARSE);
	if (!n || !(st->gap_ns | st->gap_frac))
		return n;
	now = mono_ns();
	for (due = 0; due < n && gen_due(st, now); due++)
		;
	if (!due)
		*wake_ns = st->next_send_ns;
	return due;
}

void gen_sender_wait(const struct gen_thread *t, uint64_t wake_ns)
{
	uint64_t now = mono_ns();

	while (now < wake_ns && !gen_thread_stopping(t)) {
		if (wake_ns - now > GEN_SPIN_NS) {
			uint64_t ns = wake_ns - now - GEN_SPIN_NS / 2;
			struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
					       .tv_nsec = (long)(ns % 1000000000ULL) };

			nanosleep(&ts, NULL); /* SIGUSR1 (stop) cuts it short */
		}
		now = mono_ns();
	}
}

void gen_sender_collect(const struct gen_sender *s, struct gen_ctx *g)
{
	uint32_t k;

	for (k = 0; k < g->o.heavy && k < GEN_MAX_HEAVY; k++)
		g->heavy_sent[k] += s->heavy[k];
}
