// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dense table (pacer_dense.h, through two_choice_sim.c) against oracles:
 *   the lane arithmetic (scan, idle, held, oldest, expired, the sweep's
 *     word) against plain per-entry code over random lines holding every
 *     entry state: unwritten, fresh, held, expired, "future";
 *   the verdict against an exact per-key GCRA: one-sided mode, both
 *     policies, rates with bursts: never an admission the exact oracle
 *     refuses, under overflow and fingerprint collisions; evict-oldest:
 *     no more such admissions than evictions counted;
 *   lines and fingerprints for any line count; shared placement's claim
 *     (its re-check, its retry when only a neighbouring entry moved, the
 *     admission race); the sweep's plan and what it clears.
 */
#include <check.h>
#include "check_run.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "race.h"
#include "two_choice_sim.h"
#include "lib_rng.h"

/*
 * Check's assertions each write a checkpoint to a pipe: loops of millions
 * of comparisons assert only on a mismatch.
 */
#define EXPECT_EQ(a, b)                                   \
	do {                                              \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b); \
		if (a_ != b_)                             \
			ck_assert_uint_eq(a_, b_);        \
	} while (0)
#define EXPECT(cond)                        \
	do {                                \
		if (!(cond))                \
			ck_assert(cond);    \
	} while (0)

/* ---- the lane arithmetic against plain per-entry code ---- */

/* A random entry of fingerprint fp (or another, or none) at an age of one of the states. */
static uint32_t random_entry(struct rng *r, uint32_t fp, uint64_t tick, const struct pacer_rate *rt)
{
	uint64_t u = rnd(r);
	uint32_t efp = u % 3 ? fp : 1 + (uint32_t)(u >> 20) % PACER_DENSE_FP_MAX, age;

	switch ((u >> 8) % 6) {
	case 0:
		return 0; /* unwritten */
	case 1: /* fresh */
		age = (uint32_t)(u >> 32) % rt->thresh;
		break;
	case 2: /* held: conforming but not free */
		age = rt->thresh + (uint32_t)(u >> 32) % (rt->sat - rt->thresh + 1);
		break;
	case 3: /* expired, some far beyond twice sat */
		age = rt->sat + (uint32_t)(u >> 32) % (256 - PACER_DENSE_FUTURE - rt->sat);
		break;
	case 4: /* future */
		age = 256 - PACER_DENSE_FUTURE + (uint32_t)(u >> 32) % PACER_DENSE_FUTURE;
		break;
	default: /* near every threshold */
		age = (uint32_t)((u >> 32) % 5) - 2 +
		      ((u >> 40) % 3 == 0 ? rt->thresh : (u >> 40) % 3 == 1 ? rt->sat : 2 * rt->sat);
		break;
	}
	return pacer_dense_entry(efp, tick - age);
}

static struct pacer_rate random_rate(struct rng *r)
{
	uint64_t u = rnd(r);
	uint32_t n = 1 + (uint32_t)(u % 4), emit = 1 + (uint32_t)(u >> 8) % 20;

	if (n == 1)
		return pacer_rate_of(PACER_MIN_THRESH + (uint32_t)(u >> 16) % (PACER_DENSE_MAX_SAT - 2),
				     0);
	while (emit + (n - 1) * emit + 1 > PACER_DENSE_MAX_SAT)
		emit--;
	return pacer_rate_of(emit + 1, (n - 1) * emit + 1);
}

static void random_lines(struct rng *r, struct pacer_dense_line *lines, uint32_t fp, uint64_t tick,
			 const struct pacer_rate *rt)
{
	struct pacer_dense_line *l[2] = { &lines[0], &lines[1] };
	uint32_t i;

	memset(lines, 0, 2 * sizeof(*lines));
	for (i = 0; i < PACER_DENSE_SLOTS; i++)
		pacer_dense_set(l, i, random_entry(r, fp, tick, rt));
}

/* Plain code: an entry's age taken FUTURE late, as the lanes compare it. */
static uint32_t late_age(uint32_t e, uint64_t tick)
{
	return (uint8_t)(tick + PACER_DENSE_FUTURE - e);
}

/* Slots, set and read back, are the entries the masks number: bit `slot` of a one-entry scan. */
START_TEST(test_slots_are_the_scan_bits)
{
	struct pacer_dense_line lines[2];
	struct pacer_dense_line *l[2] = { &lines[0], &lines[1] };
	struct pacer_rate rt = pacer_rate_of(8, 0);
	uint32_t slot, other;

	for (slot = 0; slot < PACER_DENSE_SLOTS; slot++) {
		struct pacer_dense_scan s;

		memset(lines, 0, sizeof(lines));
		pacer_dense_set(l, slot, pacer_dense_entry(77, 1000));
		ck_assert_uint_eq(pacer_dense_get(l, slot), pacer_dense_entry(77, 1000));
		for (other = 0; other < PACER_DENSE_SLOTS; other++)
			if (other != slot)
				ck_assert_uint_eq(pacer_dense_get(l, other), 0);
		pacer_dense_scan(l, 77, 1000, &rt, &s);
		ck_assert_uint_eq(s.fresh_mask, 1ULL << slot);
		ck_assert_uint_eq(s.free_mask, ((1ULL << PACER_DENSE_SLOTS) - 1) & ~(1ULL << slot));
		/* Bit 63 of every word stays clear. */
		for (other = 0; other < PACER_DENSE_WORDS; other++)
			ck_assert_uint_eq(lines[0].w[other] >> 63 | lines[1].w[other] >> 63, 0);
	}
}
END_TEST

START_TEST(test_scan_matches_plain_code)
{
	struct rng r = { 11 };
	int k;

	for (k = 0; k < 30000; k++) {
		struct pacer_dense_line lines[2];
		struct pacer_dense_line *l[2] = { &lines[0], &lines[1] };
		struct pacer_rate rt = random_rate(&r);
		uint64_t tick = rnd(&r) >> 4, fresh = 0, own = 0, held = 0, fre = 0, idle = 0, hl = 0;
		uint64_t best = 0, exp0 = 0;
		uint32_t fp = 1 + (uint32_t)(rnd(&r) % PACER_DENSE_FP_MAX), i;
		struct pacer_dense_scan s;

		random_lines(&r, lines, fp, tick, &rt);
		for (i = 0; i < PACER_DENSE_SLOTS; i++) {
			uint32_t e = pacer_dense_get(l, i), a = pacer_dense_age(e, tick);
			int written = (e >> 8) != 0, match = (e >> 8) == fp;

			fresh |= (uint64_t)(match && a < rt.thresh) << i;
			own |= (uint64_t)(match && a >= rt.thresh) << i;
			held |= (uint64_t)(match && a < rt.sat) << i;
			fre |= (uint64_t)(!written || a >= rt.sat) << i;
			idle |= (uint64_t)(!written || a >= 2 * rt.sat) << i;
			hl |= (uint64_t)(match && a < rt.sat) << i;
			if (i < PACER_DENSE_WAYS)
				exp0 |= (uint64_t)(written && a >= rt.sat) << i;
			if (written && ((uint64_t)late_age(e, tick) << 6 | i) > best)
				best = (uint64_t)late_age(e, tick) << 6 | i;
			/* pacer_dense_age's "future" reads fresh */
			if (written && (uint8_t)(tick - e) >= 256 - PACER_DENSE_FUTURE)
				EXPECT_EQ(a, 0);
		}
		pacer_dense_scan(l, fp, tick, &rt, &s);
		EXPECT_EQ(s.fresh_mask, fresh);
		EXPECT_EQ(s.own_mask, own);
		EXPECT_EQ(s.held_mask, held);
		EXPECT_EQ(s.free_mask, fre);
		EXPECT_EQ(pacer_dense_idle_line(l[0], 0, tick, rt.sat) |
					  pacer_dense_idle_line(l[1], 1, tick, rt.sat),
				  idle);
		EXPECT_EQ(pacer_dense_held_line(l[0], 0, tick, fp, rt.sat) |
					  pacer_dense_held_line(l[1], 1, tick, fp, rt.sat),
				  hl);
		EXPECT_EQ(pacer_dense_expired_line(l[0], tick, rt.sat), exp0);
		if (best)
			EXPECT_EQ(pacer_dense_oldest(l, tick), best & 63);
		if (fresh | own) {
			uint64_t m = fresh ? fresh : own;
			uint32_t y = pacer_dense_youngest(l, m, tick), ya = pacer_dense_age(pacer_dense_get(l, y), tick);

			EXPECT(m >> y & 1);
			for (i = 0; i < PACER_DENSE_SLOTS; i++)
				if (m >> i & 1)
					EXPECT(ya <= pacer_dense_age(pacer_dense_get(l, i), tick));
			EXPECT_EQ(pacer_dense_key_age(l, &s, tick), ya);
		} else {
			EXPECT_EQ(pacer_dense_key_age(l, &s, tick), PACER_AGE_STALE);
		}
	}
}
END_TEST

/* What the sweep swaps in: exactly the written entries aged sat or more cleared, nothing else. */
START_TEST(test_sweep_clears_exactly_the_expired)
{
	struct rng r = { 12 };
	int k, i, j;

	for (k = 0; k < 30000; k++) {
		struct pacer_dense_line lines[2];
		struct pacer_rate rt = random_rate(&r);
		uint64_t tick = rnd(&r) >> 4;
		uint32_t sat = k % 2 ? PACER_DENSE_MAX_SAT : rt.sat;

		random_lines(&r, lines, 1 + (uint32_t)(rnd(&r) % PACER_DENSE_FP_MAX), tick, &rt);
		for (i = 0; i < PACER_DENSE_WORDS; i++) {
			uint64_t w = lines[0].w[i], swept = pacer_dense_swept_word(w, tick, sat);
			uint32_t cleared = 0;

			for (j = 0; j < PACER_DENSE_LANES; j++) {
				uint32_t e = (uint32_t)(w >> (21 * j)) & PACER_DENSE_ENTRY_MASK;
				int gone = (e >> 8) && pacer_dense_age(e, tick) >= sat &&
					   (uint8_t)(tick - e) < 256 - PACER_DENSE_FUTURE;

				EXPECT_EQ((swept >> (21 * j)) & PACER_DENSE_ENTRY_MASK, gone ? 0 : e);
				EXPECT_EQ(pacer_dense_expired(e, tick, sat), (uint32_t)gone);
				cleared += (uint32_t)gone;
			}
			/* What the sweep counts as cleared: the expired entries, each once. */
			EXPECT_EQ(pacer_dense_lanes_set(pacer_dense_swept_lanes(w, tick, sat)), cleared);
		}
	}
}
END_TEST

START_TEST(test_first_and_popcount)
{
	struct rng r = { 13 };
	uint32_t i;

	for (i = 0; i < 64; i++)
		EXPECT_EQ(pacer_dense_first(1ULL << i), i);
	for (i = 0; i < 200000; i++) {
		uint64_t x = rnd(&r), m = x >> (x & 63);

		if (m)
			EXPECT_EQ(pacer_dense_first(m), (uint32_t)__builtin_ctzll(m));
		EXPECT_EQ(pacer_dense_popcount_line(x & 0xffffff),
				  (uint32_t)__builtin_popcountll(x & 0xffffff));
	}
}
END_TEST

/* ---- lines and fingerprints ---- */

/*
 * Any line count: both lines in range and distinct, lines used evenly
 * (odd counts included), and within one line the fingerprints spread over
 * all 8191 values (a chi-square well inside its bounds): the fingerprint
 * does not follow from the line.
 */
START_TEST(test_lines_and_fingerprints_any_count)
{
	static const uint32_t counts[] = { 2, 3, 5, 7, 24, 1021, 468750, 1000003,
					   PACER_DENSE_MAX_LINES - 1, PACER_DENSE_MAX_LINES };
	static uint32_t fph[PACER_DENSE_FP_MAX + 1];
	uint32_t ci = (uint32_t)_i, lines = counts[ci], n = 1u << 21, i, per_line[1021];
	uint64_t in_line0 = 0;
	struct rng r = { 14 + ci };
	double chi = 0, exp_fp;

	memset(fph, 0, sizeof(fph));
	memset(per_line, 0, sizeof(per_line));
	for (i = 0; i < n; i++) {
		uint64_t h = rnd(&r);
		uint32_t idx[2], fp = pacer_dense_fp(h);

		pacer_dense_lines(h, lines, idx);
		EXPECT(idx[0] < lines && idx[1] < lines && idx[0] != idx[1]);
		EXPECT(fp >= 1 && fp <= PACER_DENSE_FP_MAX);
		if (lines <= 1021)
			per_line[idx[0]]++;
		if (idx[0] == 0 || lines > 1021) {
			fph[fp]++;
			in_line0++;
		}
	}
	if (lines <= 1021)
		for (i = 0; i < lines; i++) {
			double mean = (double)n / lines;

			ck_assert_msg(fabs(per_line[i] - mean) < 6 * sqrt(mean) + 1,
				      "%u lines: line %u has %u of %.0f", lines, i, per_line[i], mean);
		}
	exp_fp = (double)in_line0 / PACER_DENSE_FP_MAX;
	if (exp_fp >= 5) {
		for (i = 1; i <= PACER_DENSE_FP_MAX; i++)
			chi += (fph[i] - exp_fp) * (fph[i] - exp_fp) / exp_fp;
		ck_assert_msg(fabs(chi - (PACER_DENSE_FP_MAX - 1)) < 8 * sqrt(2.0 * PACER_DENSE_FP_MAX),
			      "%u lines: chi-square %.0f", lines, chi);
	}
}
END_TEST

/* ---- the verdict against an exact per-key oracle ---- */

#define NO_TICK UINT64_MAX

struct dchecker {
	struct two_choice_sim sim;
	struct pacer_rate rate;
	uint64_t *hash, *vtat, *last_seen, *last_full;
	uint32_t nsrc;
	uint64_t packets, drops, admits, violations, full;
};

static void dchecker_init(struct dchecker *c, uint32_t nsrc, uint32_t lines, uint32_t thresh,
			  uint32_t burst, uint32_t policy, uint32_t on_full, uint64_t seed)
{
	__u64 key[2] = { pacer_mix64(seed) | 1, pacer_mix64(seed + 1) | 1 };
	uint32_t i;

	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(dense_sim_init(&c->sim, lines, 0, thresh, policy, on_full, key), 0);
	c->sim.burst = burst;
	c->rate = pacer_rate_of(thresh, burst);
	c->nsrc = nsrc;
	c->hash = malloc(nsrc * sizeof(uint64_t));
	c->vtat = malloc(nsrc * sizeof(uint64_t));
	c->last_seen = malloc(nsrc * sizeof(uint64_t));
	c->last_full = malloc(nsrc * sizeof(uint64_t));
	ck_assert(c->hash && c->vtat && c->last_seen && c->last_full);
	for (i = 0; i < nsrc; i++) {
		c->hash[i] = pacer_hash_v4(key, __builtin_bswap32(0x0a000000u + i));
		c->vtat[i] = c->last_seen[i] = c->last_full[i] = NO_TICK;
	}
}

static void dchecker_free(struct dchecker *c)
{
	dense_sim_free(&c->sim);
	free(c->hash);
	free(c->vtat);
	free(c->last_seen);
	free(c->last_full);
}

/*
 * One packet at tick t (tick_shift 0): the exact per-key GCRA in ticks
 * (pacer_rate.h: the cell's age a, admitted from thresh up) fed the
 * simulator's admissions must admit whatever the simulator admits; under
 * quiet the exact last-seen time must be a threshold old too, unless the
 * source found no entry (could not be recorded) within the threshold.
 */
static void dchecker_packet(struct dchecker *c, uint32_t src, uint64_t t)
{
	uint64_t full_before = c->sim.full;
	int drop = dense_sim_packet(&c->sim, c->hash[src], t, NULL);
	uint64_t a = c->vtat[src] == NO_TICK ? c->rate.sat : t - c->vtat[src];

	if (a > c->rate.sat)
		a = c->rate.sat;
	c->packets++;
	c->drops += (uint64_t)drop;
	if (c->sim.full != full_before)
		c->last_full[src] = t;
	if (!drop) {
		c->admits++;
		if (a < c->rate.thresh)
			c->violations++;
		else if (c->sim.policy == PACER_POLICY_QUIET && c->last_seen[src] != NO_TICK &&
			 t - c->last_seen[src] < c->rate.thresh &&
			 (c->last_full[src] == NO_TICK || t - c->last_full[src] >= c->rate.thresh))
			c->violations++;
		c->vtat[src] = a < c->rate.thresh ? t : t - pacer_rate_next_age((uint32_t)a, &c->rate);
	}
	c->last_seen[src] = t;
}

/*
 * Random streams over small tables (overflow, collisions), the clock in
 * steps of up to two intervals and now and then far ahead, the sweep run
 * as the datapath's timer would.  _i: policy x on_full x {N = 1, N = 3 with
 * a burst} x {2 lines, 3 lines, 61 lines}.
 */
START_TEST(test_one_sided_against_exact)
{
	static const uint32_t sizes[] = { 2, 3, 61 };
	uint32_t policy = (uint32_t)(_i & 1), on_full = (uint32_t)(_i >> 1 & 1);
	uint32_t bursty = (uint32_t)(_i >> 2 & 1), lines = sizes[_i >> 3];
	uint32_t thresh = bursty ? 13 : 40, burst = bursty ? 25 : 0, nsrc = 40 * lines + 20;
	uint64_t t = 1000, last_sweep = t;
	struct rng r = { 100 + (uint64_t)_i };
	struct dchecker c;
	int i;

	if (policy == PACER_POLICY_QUIET && bursty)
		burst = 0, thresh = 30; /* quiet has no bursts: a second threshold instead */
	dchecker_init(&c, nsrc, lines, thresh, burst, policy, on_full, (uint64_t)_i);
	for (i = 0; i < 300000; i++) {
		uint64_t u = rnd(&r) % 1000;
		uint32_t src;

		if (u < 990)
			t += u % 8 == 0;
		else if (u < 999)
			t += rnd(&r) % (2 * thresh);
		else
			t += 100 + rnd(&r) % 2000;
		/* The sweep keeps its pace; a jump past it is a long idle time, swept on the way. */
		while (t - last_sweep >= PACER_DENSE_SWEEP_TICKS) {
			last_sweep += PACER_DENSE_SWEEP_TICKS;
			dense_sim_sweep(&c.sim, last_sweep);
		}
		src = rnd(&r) % 10 < 3 ? (uint32_t)(rnd(&r) % 10) : (uint32_t)(rnd(&r) % nsrc);
		dchecker_packet(&c, src, t);
	}
	if (on_full == PACER_TBL_FULL_DROP)
		ck_assert_uint_eq(c.violations, 0);
	else
		ck_assert_uint_le(c.violations, c.sim.evicted);
	if (lines < 61)
		ck_assert_uint_gt(on_full == PACER_TBL_FULL_DROP ? c.sim.full : c.sim.evicted, 100);
	ck_assert_uint_gt(c.drops, 10000);
	ck_assert_uint_gt(c.admits, 10000);
	dchecker_free(&c);
}
END_TEST

/* Roomy: no overflow and (almost) no collisions: the verdict is the exact oracle's. */
START_TEST(test_exact_when_roomy)
{
	uint32_t bursty = (uint32_t)_i, thresh = bursty ? 9 : 20, burst = bursty ? 17 : 0;
	uint64_t t = 1000, last_sweep = t, wrong = 0;
	struct rng r = { 200 + (uint64_t)_i };
	struct dchecker c;
	int i;

	dchecker_init(&c, 50, 4096, thresh, burst, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, 7);
	for (i = 0; i < 200000; i++) {
		uint32_t src = (uint32_t)(rnd(&r) % 50);
		uint64_t a, vt;
		int drop;

		t += rnd(&r) % 3;
		while (t - last_sweep >= PACER_DENSE_SWEEP_TICKS) {
			last_sweep += PACER_DENSE_SWEEP_TICKS;
			dense_sim_sweep(&c.sim, last_sweep);
		}
		vt = c.vtat[src];
		a = vt == NO_TICK || t - vt > c.rate.sat ? c.rate.sat : t - vt;
		drop = dense_sim_packet(&c.sim, c.hash[src], t, NULL);
		wrong += (uint64_t)(drop != (a < c.rate.thresh));
		if (!drop)
			c.vtat[src] = t - pacer_rate_next_age((uint32_t)a, &c.rate);
	}
	ck_assert_uint_eq(wrong, 0);
	dchecker_free(&c);
}
END_TEST

/*
 * The sweep is what keeps the 8-bit ticks honest: a key admitted once and
 * back 256 ticks later finds its own entry reading fresh (a false drop)
 * unless the sweep cleared it in between.
 */
START_TEST(test_sweep_prevents_the_wrap)
{
	const __u64 key[2] = { 3, 5 };
	struct two_choice_sim s;
	uint64_t h = 0x123456789abcdefULL, t;

	ck_assert_int_eq(dense_sim_init(&s, 16, 0, 10, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key), 0);
	ck_assert_int_eq(dense_sim_packet(&s, h, 1000, NULL), 0);
	ck_assert_int_eq(dense_sim_packet(&s, h, 1000 + 256, NULL), 1); /* aliased: fresh again */
	memset(s.dl, 0, dense_bytes(s.lines));
	ck_assert_int_eq(dense_sim_packet(&s, h, 1000, NULL), 0);
	for (t = 1000; t < 1000 + 256; t += PACER_DENSE_SWEEP_TICKS)
		dense_sim_sweep(&s, t);
	ck_assert_int_eq(dense_sim_packet(&s, h, 1000 + 256, NULL), 0);
	dense_sim_free(&s);
}
END_TEST

/*
 * The sweep's plan visits every line within PACER_DENSE_SWEEP_TICKS, and
 * refuses exactly the geometries that need more than MAX_CHUNK lines a
 * round: 30 MB at a 10 ms interval's tick (2^18 ns) is one, at 1 s (2^25) not.
 */
START_TEST(test_sweep_plan_keeps_the_bound)
{
	static const uint64_t lines[] = { 2, 1024, 1025, 65536, 468750, 1ULL << 24, 64ULL << 24 };
	uint32_t shift, i;

	ck_assert_uint_lt(PACER_DENSE_MAX_SAT + 2 * PACER_DENSE_SWEEP_TICKS,
			  256 - PACER_DENSE_FUTURE + 1);
	for (shift = 6; shift <= PACER_TICK_SHIFT_MAX; shift++)
		for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			struct pacer_tbl_sweep p;
			uint64_t span = (uint64_t)PACER_DENSE_SWEEP_TICKS << shift, rounds;
			int ok = !pacer_dense_sweep_plan(lines[i], shift, &p);

			rounds = (lines[i] + p.chunk - 1) / p.chunk;
			ck_assert_uint_ge(p.period_ns, PACER_TBL_SWEEP_MIN_NS);
			ck_assert_uint_eq(ok, p.chunk <= PACER_DENSE_SWEEP_MAX_CHUNK &&
						      rounds * p.period_ns <= span);
			/* Refused only where no plan of rounds 1 ms apart, MAX_CHUNK lines each, keeps up. */
			if (!ok)
				ck_assert_uint_gt(lines[i], (uint64_t)PACER_DENSE_SWEEP_MAX_CHUNK *
								    (span / PACER_TBL_SWEEP_MIN_NS) / 2);
		}
	{
		struct pacer_tbl_sweep p;

		ck_assert_int_eq(pacer_dense_sweep_plan(468750, 18, &p), -1);
		ck_assert_int_eq(pacer_dense_sweep_plan(468750, 25, &p), 0);
	}
}
END_TEST

/* ---- shared placement ---- */

/*
 * The claim's re-check: A picks an entry, B admits the same key in the
 * other line meanwhile; A's swap goes through but its re-scan sees B's
 * entry and A drops.  Without B, the same claim admits.
 */
START_TEST(test_claim_rescan_catches_a_different_pick)
{
	const __u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	const uint64_t tick = 5000;
	struct pacer_dense_line *l[2];
	struct pacer_dense_scan s;
	struct two_choice_sim sim;
	uint32_t idx[2], a_slot, i, filled = 0, age, event;
	uint64_t h = pacer_hash_v4(key, 0x0a000001u);
	uint32_t fp = pacer_dense_fp(h);
	struct pacer_rate rate = pacer_rate_of(8, 0);
	int evicted;

	ck_assert_int_eq(dense_sim_init(&sim, 5, 0, 8, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key), 0);
	pacer_dense_lines(h, sim.lines, idx);
	l[0] = &sim.dl[idx[0]];
	l[1] = &sim.dl[idx[1]];
	pacer_dense_scan(l, fp, tick, &rate, &s);
	a_slot = pacer_dense_pick(l, &s, tick, 0, PACER_TBL_FULL_DROP, &evicted);
	ck_assert_uint_lt(a_slot, PACER_DENSE_WAYS); /* equal room: line 0 */
	for (i = 0; i < PACER_DENSE_WAYS && filled < 2; i++)
		if (i != a_slot) {
			pacer_dense_set(l, i, pacer_dense_entry(fp ^ 0x5a5, tick));
			filled++;
		}
	ck_assert_int_eq(pacer_dense_verdict(l, fp, tick, &rate, PACER_POLICY_PACE,
					     PACER_TBL_FULL_DROP, PACER_PLACEMENT_SHARED, 1, &age,
					     &event), 0);
	pacer_dense_scan(l, fp, tick, &rate, &s);
	ck_assert_uint_ne(s.fresh_mask >> PACER_DENSE_WAYS, 0);
	ck_assert_int_eq(pacer_dense_claim_shared(l, a_slot, fp, tick, &rate, 0, 0), -1);
	ck_assert_uint_eq(pacer_dense_get(l, a_slot), pacer_dense_entry(fp, tick));
	memset(sim.dl, 0, dense_bytes(sim.lines));
	ck_assert_int_eq(pacer_dense_claim_shared(l, a_slot, fp, tick, &rate, 0, 0), 0);
	/* An entry taken since the judgement (another key) fails the claim. */
	memset(sim.dl, 0, dense_bytes(sim.lines));
	pacer_dense_set(l, a_slot, pacer_dense_entry(fp ^ 1, tick));
	ck_assert_int_eq(pacer_dense_claim_shared(l, a_slot, fp, tick, &rate, 0, 0), -1);
	ck_assert_uint_eq(pacer_dense_get(l, a_slot), pacer_dense_entry(fp ^ 1, tick));
	dense_sim_free(&sim);
}
END_TEST

/*
 * A swap retries when only a neighbouring entry of its word moved: two
 * threads each claim a different entry of the same word at once, round
 * after round; both must succeed every time (one CAS fails at most, the
 * retry sees the neighbour's new value).  And a swap whose own entry moved
 * fails.
 */
struct neighbour_race {
	struct pacer_dense_line line[2];
	int failed;
};

static void neighbour_setup(struct race *r, int round)
{
	struct neighbour_race *x = r->ctx;

	(void)round;
	memset(x->line, 0, sizeof(x->line));
}

static void neighbour_work(struct race *r, int thread, int round)
{
	struct neighbour_race *x = r->ctx;
	struct pacer_dense_line *l[2] = { &x->line[0], &x->line[1] };
	uint32_t slot = 3 + 8 * (uint32_t)(thread + (round & 1)); /* word 3, lanes 0/1 or 1/2 */

	if (pacer_dense_entry_swap(l, slot, 0, pacer_dense_entry(100 + (uint32_t)thread, round)))
		__sync_fetch_and_add(&x->failed, 1);
}

START_TEST(test_swap_retries_when_a_neighbour_moved)
{
	static struct neighbour_race x;
	struct race r = { .rounds = 20000, .setup = neighbour_setup, .work = neighbour_work, .ctx = &x };
	struct pacer_dense_line lines[2] = { 0 };
	struct pacer_dense_line *l[2] = { &lines[0], &lines[1] };

	race_run(&r);
	ck_assert_int_eq(x.failed, 0);
	pacer_dense_set(l, 30, pacer_dense_entry(5, 9));
	ck_assert_int_eq(pacer_dense_entry_swap(l, 30, 0, pacer_dense_entry(6, 9)), -1);
	ck_assert_int_eq(pacer_dense_entry_swap(l, 30, pacer_dense_entry(5, 9),
						pacer_dense_entry(6, 9)), 0);
	ck_assert_uint_eq(pacer_dense_get(l, 30), pacer_dense_entry(6, 9));
}
END_TEST

static int dense_admits(void *sim, uint64_t h, uint64_t now_ns)
{
	uint32_t age, event;

	/* The datapath's sweep would have visited the lines since: 8-bit ticks wrap every 32 rounds. */
	dense_sim_sweep_key(sim, h, now_ns);
	return !dense_sim_verdict(sim, h, now_ns, &age, &event);
}

/* The admission race (race.h): two CPUs admitting the same keys, never both.  _i: on_full. */
START_TEST(test_admit_race_one_winner)
{
	const __u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	struct two_choice_sim sim;
	struct admit_race x = { .admit = dense_admits, .sim = &sim };
	int k;

	ck_assert_int_eq(dense_sim_init(&sim, 257, 0, 8, PACER_POLICY_PACE, (uint32_t)_i, key), 0);
	sim.placement = PACER_PLACEMENT_SHARED;
	x.interval_ns = (uint64_t)sim.thresh << sim.tick_shift;
	for (k = 0; k < RACE_KEYS; k++)
		x.h[k] = pacer_hash_v4(key, 0x0a000000u + (uint32_t)k);
	admit_race_check(&x, 20000);
	dense_sim_free(&sim);
}
END_TEST

/* Shared placement on one CPU decides and writes what the per-CPU path does. */
START_TEST(test_shared_placement_is_sequential_alone)
{
	const __u64 key[2] = { 0x1234567 | 1, 0x89abcdef | 1 };
	uint32_t policy = (uint32_t)(_i & 1), on_full = (uint32_t)(_i >> 1);
	struct two_choice_sim a, b;
	uint64_t t = 1ULL << 20, seed = (uint64_t)_i, drops = 0;
	int i;

	ck_assert_int_eq(dense_sim_init(&a, 7, 0, 31, policy, on_full, key), 0);
	ck_assert_int_eq(dense_sim_init(&b, 7, 0, 31, policy, on_full, key), 0);
	b.placement = PACER_PLACEMENT_SHARED;
	for (i = 0; i < 200000; i++) {
		uint64_t h = pacer_mix64(pacer_mix64(++seed) % 400);
		uint32_t age_a, age_b;
		int da, db;

		t += pacer_mix64(++seed) % 2;
		if (i % 32 == 0) {
			dense_sim_sweep(&a, t);
			dense_sim_sweep(&b, t);
		}
		da = dense_sim_packet(&a, h, t, &age_a);
		db = dense_sim_packet(&b, h, t, &age_b);
		ck_assert_int_eq(da, db);
		ck_assert_uint_eq(age_a, age_b);
		drops += (uint64_t)da;
	}
	ck_assert_int_eq(memcmp(a.dl, b.dl, dense_bytes(7)), 0);
	ck_assert_uint_eq(a.full, b.full);
	ck_assert_uint_eq(a.evicted, b.evicted);
	ck_assert_uint_gt(drops, 1000);
	dense_sim_free(&a);
	dense_sim_free(&b);
}
END_TEST

/* The model and the simulator agree on the error rate at a loaded steady state. */
START_TEST(test_steady_state_follows_model)
{
	const __u64 key[2] = { 77, 99 };
	const uint32_t lines = 1024, thresh = 32;
	double n = 0.85 * PACER_DENSE_WAYS * lines, overflow, collision, sim_rate;
	struct two_choice_sim s;
	struct rng r = { 300 };
	uint64_t t, last_sweep = 0, admits = 0, errors = 0, ev = 0, i;

	ck_assert_int_eq(dense_sim_init(&s, lines, 0, thresh, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key), 0);
	dense_model(lines, n, &overflow, &collision);
	/* n distinct new keys per interval (thresh ticks), at random times: every drop is an error. */
	for (t = 0, i = 0; t < 200 * thresh; t++) {
		uint64_t per_tick = (uint64_t)(n / thresh), k;

		while (t - last_sweep >= PACER_DENSE_SWEEP_TICKS) {
			last_sweep += PACER_DENSE_SWEEP_TICKS;
			dense_sim_sweep(&s, last_sweep);
		}
		for (k = 0; k < per_tick; k++, i++) {
			int drop = dense_sim_packet(&s, rnd(&r), t, NULL);

			if (t >= 20 * thresh) {
				ev++;
				errors += (uint64_t)drop;
			}
		}
	}
	(void)admits;
	sim_rate = (double)errors / (double)ev;
	ck_assert_msg(fabs(sim_rate - (overflow + collision)) < 0.25 * (overflow + collision) + 0.002,
		      "simulated %.4f, model %.4f + %.4f", sim_rate, overflow, collision);
	dense_sim_free(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dense table");
	TCase *tc = tcase_create("oracle");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_slots_are_the_scan_bits);
	tcase_add_test(tc, test_scan_matches_plain_code);
	tcase_add_test(tc, test_sweep_clears_exactly_the_expired);
	tcase_add_test(tc, test_first_and_popcount);
	tcase_add_loop_test(tc, test_lines_and_fingerprints_any_count, 0, 10);
	tcase_add_loop_test(tc, test_one_sided_against_exact, 0, 24);
	tcase_add_loop_test(tc, test_exact_when_roomy, 0, 2);
	tcase_add_test(tc, test_sweep_prevents_the_wrap);
	tcase_add_test(tc, test_sweep_plan_keeps_the_bound);
	tcase_add_test(tc, test_claim_rescan_catches_a_different_pick);
	suite_add_tcase(s, tc);
	tc = tcase_create("steady state and races");
	tcase_set_timeout(tc, 300);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_steady_state_follows_model);
	tcase_add_test(tc, test_swap_retries_when_a_neighbour_moved);
	tcase_add_loop_test(tc, test_shared_placement_is_sequential_alone, 0, 4);
	tcase_add_loop_test(tc, test_admit_race_one_winner, PACER_TBL_FULL_DROP, PACER_TBL_FULL_MAX);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
