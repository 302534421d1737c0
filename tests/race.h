/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Two threads racing on shared state, for the shared-placement tests. */
#ifndef PACER_TEST_RACE_H
#define PACER_TEST_RACE_H

#include <check.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>

/*
 * Two threads released together, round after round (a spinning barrier: no
 * sleep in between).  Round n (from 1) runs setup(n - 1) before releasing
 * the threads into work(n - 1); work can wait for its peer on -n.
 */
struct race {
	volatile int arrived, round;
	int rounds;
	void (*setup)(struct race *r, int round);
	void (*work)(struct race *r, int thread, int round);
	void *ctx;
};

static inline void race_wait(struct race *r, int round)
{
	if (__sync_add_and_fetch(&r->arrived, 1) == 2) {
		r->arrived = 0;
		if (r->setup && round > 0 && round <= r->rounds)
			r->setup(r, round - 1);
		__sync_synchronize();
		r->round = round;
	}
	/* Spin (so both threads leave together); yield if the peer is not running. */
	for (int spins = 0; r->round != round; spins++)
		if (spins > 10000)
			sched_yield();
}

struct racer {
	struct race *r;
	int thread;
};

static inline void *racer_main(void *arg)
{
	struct racer *me = arg;
	int round;

	for (round = 0; round < me->r->rounds; round++) {
		race_wait(me->r, round + 1);
		me->r->work(me->r, me->thread, round);
	}
	race_wait(me->r, me->r->rounds + 1);
	return NULL;
}

static inline void race_run(struct race *r)
{
	struct racer a = { r, 0 }, b = { r, 1 };
	pthread_t ta, tb;

	r->arrived = 0;
	r->round = 0;
	ck_assert_int_eq(pthread_create(&ta, NULL, racer_main, &a), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, racer_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
}

/*
 * Two CPUs send the same sources at the same instant into shared state:
 * each source is old at the start of every round (rounds are `interval`
 * ns apart), so at most one of the two may admit it; both is a false pass.
 * admit() runs one packet (1: admitted) on the simulator in ctx.
 */
#define RACE_KEYS 64

struct admit_race {
	int (*admit)(void *sim, uint64_t h, uint64_t now_ns);
	void *sim;
	uint64_t interval_ns, h[RACE_KEYS];
	uint8_t admitted[2][RACE_KEYS];
	int twice, once;
};

static inline void admit_race_work(struct race *r, int thread, int round)
{
	struct admit_race *x = r->ctx;
	uint64_t now = (uint64_t)(round + 1) * x->interval_ns;
	int k;

	for (k = 0; k < RACE_KEYS; k++)
		x->admitted[thread][k] = (uint8_t)x->admit(x->sim, x->h[k], now);
	race_wait(r, -1 - round);
	if (thread == 0)
		for (k = 0; k < RACE_KEYS; k++) {
			x->twice += x->admitted[0][k] && x->admitted[1][k];
			x->once += x->admitted[0][k] != x->admitted[1][k];
		}
}

/* Run the race; never both, and nearly every source admitted once per round. */
static inline void admit_race_check(struct admit_race *x, int rounds)
{
	struct race r = { .rounds = rounds, .work = admit_race_work, .ctx = x };

	race_run(&r);
	ck_assert_msg(x->twice == 0, "%d sources admitted by both threads in one interval",
		      x->twice);
	ck_assert_int_gt(x->once, rounds * RACE_KEYS * 9 / 10);
}

#endif
