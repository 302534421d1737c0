// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recency table (pacer_table.h through two_choice_sim.c) against exact
 * oracles:
 *   one-sided mode, both policies: no source ever has two admitted packets
 *     less than the interval apart, under overflow, fingerprint collisions,
 *     16-bit tick wrap-around and live interval changes; under quiet, every
 *     packet an exact last-seen table would drop is dropped, unless the
 *     source found no slot within the interval (it could not be recorded);
 *   opposite mode: every drop is either right (the source was admitted less
 *     than the interval ago) or a fingerprint collision;
 *   both error rates follow the model: table_model_fill() for strictly
 *     paced sources, table_model() (the steady state) for sources sending
 *     at random times.
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

#define NO_TIME UINT64_MAX

struct tchecker {
	struct two_choice_sim sim;
	uint64_t *last_seen, *last_admit, *last_full, interval;
	uint64_t *hash;
	uint32_t nsrc;
	uint64_t packets, drops, violations, unexplained_drops, collision_drops;
};

static void tchecker_init(struct tchecker *c, uint32_t nsrc, uint32_t lines_log2,
			  uint32_t tick_shift, uint64_t interval, uint32_t policy, uint32_t on_full,
			  uint64_t seed)
{
	__u64 key[2] = { pacer_mix64(seed) | 1, pacer_mix64(seed + 1) | 1 };
	uint32_t i;

	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(table_sim_init(&c->sim, lines_log2, tick_shift,
					pacer_thresh_ticks(interval, tick_shift), policy, on_full, key),
			 0);
	c->interval = interval;
	c->nsrc = nsrc;
	c->last_seen = malloc(nsrc * sizeof(uint64_t));
	c->last_admit = malloc(nsrc * sizeof(uint64_t));
	c->last_full = malloc(nsrc * sizeof(uint64_t));
	c->hash = malloc(nsrc * sizeof(uint64_t));
	ck_assert(c->last_seen && c->last_admit && c->last_full && c->hash);
	for (i = 0; i < nsrc; i++) {
		c->last_seen[i] = c->last_admit[i] = c->last_full[i] = NO_TIME;
		c->hash[i] = pacer_hash_v4(key, __builtin_bswap32(0x0a000000u + i));
	}
}

static void tchecker_free(struct tchecker *c)
{
	table_sim_free(&c->sim);
	free(c->last_seen);
	free(c->last_admit);
	free(c->last_full);
	free(c->hash);
}

static void tchecker_set_interval(struct tchecker *c, uint64_t interval)
{
	uint32_t t = pacer_thresh_ticks(interval, c->sim.tick_shift);

	ck_assert_uint_ne(t, 0);
	c->interval = interval;
	c->sim.thresh = t;
}

static int within(uint64_t last, uint64_t t, uint64_t interval)
{
	return last != NO_TIME && t - last < interval;
}

/*
 * A drop the table may rightly make: the source's own entry (written at
 * `last`) reads fresh: within the threshold in whole ticks (up to two ticks
 * past the interval), also after a whole number of 2^16-tick wraps, give
 * or take the window kept for CPUs whose clock runs ahead.
 */
static int own_entry_fresh(const struct tchecker *c, uint64_t last, uint64_t t)
{
	uint32_t sh = c->sim.tick_shift;

	return last != NO_TIME && pacer_tbl_fresh(pacer_tbl_entry(1, last >> sh), t >> sh, c->sim.thresh);
}

/* Does another source share src's fingerprint and one of its lines? */
static int has_fp_twin(const struct tchecker *c, uint32_t src)
{
	uint32_t a[2], b[2], i;

	pacer_tbl_lines(c->hash[src], c->sim.lines_log2, a);
	for (i = 0; i < c->nsrc; i++) {
		if (i == src || pacer_tbl_fp(c->hash[i]) != pacer_tbl_fp(c->hash[src]))
			continue;
		pacer_tbl_lines(c->hash[i], c->sim.lines_log2, b);
		if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1])
			return 1;
	}
	return 0;
}

static int tchecker_packet(struct tchecker *c, uint32_t src, uint64_t t)
{
	uint64_t full_before = c->sim.full;
	int drop = table_sim_packet(&c->sim, c->hash[src], t, NULL);

	c->packets++;
	c->drops += (uint64_t)drop;
	if (c->sim.full != full_before)
		c->last_full[src] = t;
	if (!drop && within(c->last_admit[src], t, c->interval))
		c->violations++; /* both policies admit at most once per interval */
	if (c->sim.on_full == PACER_TBL_FULL_DROP && c->sim.policy == PACER_POLICY_QUIET && !drop &&
	    within(c->last_seen[src], t, c->interval) && !within(c->last_full[src], t, c->interval))
		c->violations++;
	if (c->sim.on_full == PACER_TBL_FULL_EVICT && drop &&
	    !own_entry_fresh(c, c->last_admit[src], t) &&
	    !(c->sim.policy == PACER_POLICY_QUIET && own_entry_fresh(c, c->last_seen[src], t))) {
		if (has_fp_twin(c, src))
			c->collision_drops++;
		else
			c->unexplained_drops++;
	}
	if (!drop)
		c->last_admit[src] = t;
	c->last_seen[src] = t;
	return drop;
}

/* _i: lines_log2 in {1, 2, 10} x policy x on_full. */
START_TEST(test_random_streams)
{
	static const uint32_t sizes[] = { 1, 2, 10 };
	uint32_t lines_log2 = sizes[_i / 4], policy = (uint32_t)(_i / 2 % 2);
	uint32_t on_full = (uint32_t)(_i % 2), nsrc = 3000, tick_shift = 20;
	uint64_t interval = 30ULL << tick_shift, t = 1ULL << 40;
	struct rng r = { (uint64_t)_i * 7919 + 1 };
	struct tchecker c;
	int i;

	tchecker_init(&c, nsrc, lines_log2, tick_shift, interval, policy, on_full, (uint64_t)_i);
	for (i = 0; i < 200000; i++) {
		uint64_t u = rnd(&r) % 1000;
		uint32_t src;

		if (u < 900)
			t += rnd(&r) % (interval / 64);
		else if (u < 999)
			t += rnd(&r) % (3 * interval);
		else /* whole multiples of 2^16 ticks: entries alias */
			t += (rnd(&r) % 8 + 1) << (tick_shift + 16);
		src = rnd(&r) % 2 ? (uint32_t)(rnd(&r) % 20) : (uint32_t)(rnd(&r) % nsrc);
		tchecker_packet(&c, src, t);
		if (i % 40000 == 39999)
			tchecker_set_interval(&c, (4 + rnd(&r) % 59) << tick_shift);
	}
	if (on_full == PACER_TBL_FULL_DROP) {
		ck_assert_uint_eq(c.violations, 0);
		if (lines_log2 < 10)
			ck_assert_uint_gt(c.sim.full, 10); /* overflow really happened */
	} else {
		ck_assert_uint_eq(c.unexplained_drops, 0);
		if (lines_log2 < 10)
			ck_assert_uint_gt(c.sim.evicted, 10);
	}
	ck_assert_uint_gt(c.drops, 1000);
	tchecker_free(&c);
}
END_TEST

/* Paced sources spaced to straddle the threshold, tick edges and the 2^16 wrap. */
START_TEST(test_adversarial_streams)
{
	uint32_t policy = (uint32_t)(_i % 2), on_full = (uint32_t)(_i / 2), tick_shift = 16, s;
	uint64_t q = 1ULL << tick_shift, interval = 20 * q + 1, t = (1ULL << 32) - 3;
	struct tchecker c;
	int i, k;

	tchecker_init(&c, 64, 1, tick_shift, interval, policy, on_full, (uint64_t)_i + 5);
	for (i = 0; i < 4000; i++) {
		static const int64_t deltas[] = { -1, 0, 1 };

		for (k = 0; k < 3; k++) {
			t += interval + (uint64_t)deltas[k];
			tchecker_packet(&c, (uint32_t)(i % 3), t);
		}
		t += q - (t % q) - 1;
		tchecker_packet(&c, 3, t);
		t += 1;
		tchecker_packet(&c, 3, t);
	}
	for (s = 0; s < 6; s++) {
		static const uint64_t periods[] = { 65536, 65535, 65537, 131072, 32768, 65536 + 20 };

		for (i = 0; i < 200; i++) {
			tchecker_packet(&c, 10 + s, t);
			tchecker_packet(&c, 10 + s, t + 1);
			tchecker_packet(&c, 20 + s, t + q / 2);
			t += periods[s] * q;
		}
	}
	/* Bursts of 34 sources into 2 lines of 16: always full. */
	for (i = 0; i < 300; i++) {
		for (k = 0; k < 500; k++)
			tchecker_packet(&c, 30 + (uint32_t)(k % 34), t + (uint64_t)k);
		t += (uint64_t)(i % 7) * interval / 3 + 1;
	}
	if (on_full == PACER_TBL_FULL_DROP)
		ck_assert_uint_eq(c.violations, 0);
	else
		ck_assert_uint_eq(c.unexplained_drops, 0);
	tchecker_free(&c);
}
END_TEST

/* Without overflow or collisions the table is exact (up to ticks). */
START_TEST(test_exact_when_roomy)
{
	uint32_t tick_shift = 20, src;
	uint64_t q = 1ULL << tick_shift, interval = 25 * q, t = 1ULL << 36;
	struct tchecker c;
	int i;

	tchecker_init(&c, 64, 8, tick_shift, interval, PACER_POLICY_PACE, (uint32_t)_i, 3);
	for (i = 0; i < 2000; i++) {
		for (src = 0; src < 64; src++) {
			ck_assert_int_eq(tchecker_packet(&c, src, t + src), 0);
			ck_assert_int_eq(tchecker_packet(&c, src, t + src + 1), 1);
		}
		t += interval + 2 * q;
	}
	ck_assert_uint_eq(c.sim.full + c.sim.evicted, 0);
	tchecker_free(&c);
}
END_TEST

/*
 * n sources, each one packet per period = interval + 3 ticks, spread
 * evenly (n * 20/23 active per interval).  Returns false drops per packet.
 */
static double paced_run(uint32_t lines_log2, uint32_t n, uint32_t on_full, double *evicted,
			double *collisions)
{
	uint32_t tick_shift = 20, round, src;
	uint64_t q = 1ULL << tick_shift, interval = 20 * q, period = interval + 3 * q;
	uint64_t t = 1ULL << 36, drops = 0, total = 0, ev0 = 0;
	struct tchecker c;

	tchecker_init(&c, n, lines_log2, tick_shift, interval, PACER_POLICY_PACE, on_full, 99);
	for (round = 0; round < 10; round++) {
		if (round == 2)
			ev0 = c.sim.evicted;
		for (src = 0; src < n; src++) {
			int drop = tchecker_packet(&c, src, t + (uint64_t)src * period / n);

			if (round >= 2) {
				drops += (uint64_t)drop;
				total++;
			}
		}
		t += period;
	}
	*evicted = (double)(c.sim.evicted - ev0) / (double)total;
	*collisions = (double)c.collision_drops / (double)c.packets;
	if (on_full == PACER_TBL_FULL_EVICT)
		ck_assert_uint_eq(c.unexplained_drops, 0);
	tchecker_free(&c);
	return (double)drops / (double)total;
}

START_TEST(test_error_rates_follow_model)
{
	static const struct {
		uint32_t lines_log2;
		double load; /* sources (each once per period) per entry */
	} cases[] = { { 10, 0.90 }, { 10, 1.00 }, { 10, 1.10 }, { 12, 1.05 } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double entries = (double)(PACER_TBL_WAYS << cases[i].lines_log2);
		/*
		 * A source keeps its entry between its packets (its own expired
		 * entry is rewritten first, others take the longest idle), so the
		 * load is every source sending once per period, not only those
		 * of the last interval.
		 */
		uint32_t n = (uint32_t)(cases[i].load * entries);
		double overflow, collision, ev, coll, one_sided, opposite;

		table_model_fill(cases[i].lines_log2, n, &overflow, &collision);
		one_sided = paced_run(cases[i].lines_log2, n, PACER_TBL_FULL_DROP, &ev, &coll);
		opposite = paced_run(cases[i].lines_log2, n, PACER_TBL_FULL_EVICT, &ev, &coll);
		printf("table 2^%u lines, load %.2f: one-sided false drops %.5f (model %.5f); "
		       "opposite evictions %.5f (model %.5f), false drops %.6f (collisions, model %.6f)\n",
		       cases[i].lines_log2, cases[i].load, one_sided, overflow + collision, ev,
		       overflow, opposite, collision);
		/* Pace thins the crowded lines (a dropped key does not write): at or below. */
		ck_assert_double_lt(one_sided, 1.3 * (overflow + collision) + 0.002);
		ck_assert_double_gt(one_sided, 0.25 * (overflow + collision) - 0.001);
		/*
		 * Up to the table's size an overflowing key evicts as the model
		 * says; beyond, evicted keys come back and evict in turn (churn),
		 * which the static model does not count.
		 */
		if (cases[i].load <= 1.0)
			ck_assert_double_lt(ev, 1.5 * overflow + 0.002);
		ck_assert_double_lt(opposite, 3 * collision + 0.001);
	}
}
END_TEST

/*
 * n sources sending at random times (Poisson, each at rate one per
 * interval): a source is admitted about once per two intervals, so about
 * n / 2 are fresh at a time.  Returns the share of the packets the table
 * should admit (the source's last admission reads expired) that it drops;
 * *evicted: evictions per admission.
 */
static double random_run(uint32_t lines_log2, uint32_t n, uint32_t on_full, double *evicted)
{
	uint32_t tick_shift = 20;
	uint64_t interval = 20ULL << tick_shift, t = 1ULL << 36, due = 0, dropped = 0, ev0 = 0;
	uint64_t admitted = 0, k, packets = 40ULL * n;
	struct rng r = { 7 };
	struct tchecker c;

	tchecker_init(&c, n, lines_log2, tick_shift, interval, PACER_POLICY_PACE, on_full, 5);
	for (k = 0; k < packets; k++) {
		uint32_t src = (uint32_t)(rnd(&r) % n);
		/* Exponential gaps of mean interval / n, from 53 random bits. */
		double u = ((double)(rnd(&r) >> 11) + 0.5) / 9007199254740992.0;
		/* Due: its own entry, had it kept it, would read expired (whole ticks). */
		int should = !own_entry_fresh(&c, c.last_admit[src], t), drop;

		t += (uint64_t)(-log(u) * (double)interval / n);
		if (k == packets / 4)
			ev0 = c.sim.evicted;
		drop = tchecker_packet(&c, src, t);
		if (k >= packets / 4 && should) { /* after the warm-up */
			due++;
			dropped += (uint64_t)drop;
			admitted += (uint64_t)!drop;
		}
	}
	*evicted = (double)(c.sim.evicted - ev0) / (double)(admitted ? admitted : 1);
	if (on_full == PACER_TBL_FULL_DROP) /* an eviction may admit twice by design */
		ck_assert_uint_eq(c.violations, 0);
	tchecker_free(&c);
	return (double)dropped / (double)due;
}

/* The steady-state model against the simulated datapath, at loads around capacity. */
START_TEST(test_steady_state_follows_model)
{
	static const double loads[] = { 0.80, 0.90, 1.00, 1.10 }; /* fresh sources per entry */
	uint32_t lines_log2 = 10;
	size_t i;

	for (i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		double entries = (double)(PACER_TBL_WAYS << lines_log2), fresh = loads[i] * entries;
		/* A source at rate 1/interval is fresh half the time: 2 x fresh sources. */
		uint32_t n = (uint32_t)(2 * fresh);
		double overflow, collision, ev, one_sided;

		table_model(lines_log2, fresh, &overflow, &collision);
		one_sided = random_run(lines_log2, n, PACER_TBL_FULL_DROP, &ev);
		random_run(lines_log2, n, PACER_TBL_FULL_EVICT, &ev);
		printf("table 2^%u lines, %.0f fresh (%.2f per entry), random times: one-sided false "
		       "drops %.5f (model %.5f); opposite evictions per admission %.5f (model %.5f)\n",
		       lines_log2, fresh, loads[i], one_sided, overflow + collision, ev, overflow);
		fflush(stdout);
		/* Measured 1.7-2.9x the model: a dropped source retries at its next packet. */
		ck_assert_double_lt(one_sided, 3 * (overflow + collision) + 0.001);
		ck_assert_double_gt(one_sided, (overflow + collision) / 3 - 0.001);
		/*
		 * Evictions feed themselves (an evicted source is admitted again at
		 * its next packet and evicts in turn), which the model does not
		 * count: measured 5-10x the model from 0.9 fresh per entry up.
		 */
		ck_assert_double_lt(ev, 10 * overflow + 0.001);
		ck_assert_double_gt(ev, overflow / 3 - 0.001);
	}
}
END_TEST

/*
 * pacer_tbl_oldest() against a per-entry reference: random full lines, ages
 * across the whole 16-bit range, "future" entries (youngest) included, the
 * unwritten one (never chosen over a written one) too.
 */
START_TEST(test_oldest_is_the_oldest)
{
	struct pacer_tbl_line lines[2];
	struct pacer_tbl_line *l[2] = { &lines[0], &lines[1] };
	struct rng r = { 11 };
	int round;

	for (round = 0; round < 20000; round++) {
		uint64_t tick = rnd(&r);
		uint32_t slot, want = 0, best = 0, got;

		for (slot = 0; slot < PACER_TBL_SLOTS; slot++) {
			uint64_t x = rnd(&r);
			/* Mostly fresh-looking ages, some far, some in the future window. */
			uint32_t age = x & 1 ? (uint32_t)(x >> 8) % 64 : (uint32_t)(x >> 8) & 0xffff;
			uint32_t e = pacer_tbl_entry((uint16_t)(x >> 40) | 1, tick - age);

			if (round % 7 == 0 && slot == (uint32_t)(x >> 50) % PACER_TBL_SLOTS)
				e = 0; /* unwritten */
			*pacer_tbl_slot(l, slot) = e;
		}
		for (slot = 0; slot < PACER_TBL_SLOTS; slot++) {
			uint32_t e = *pacer_tbl_slot(l, slot);
			/* Rank: unwritten 0, future 1, otherwise 2 + age. */
			uint32_t age = (uint16_t)((uint16_t)tick - (uint16_t)e);
			uint32_t rank = !(e >> 16) ? 0 : age >= 0x10000 - PACER_TBL_FUTURE ? 1 : 2 + age;

			if (rank > best || (rank == best && slot > want && rank != 1)) {
				best = rank;
				want = slot;
			}
		}
		got = pacer_tbl_oldest(l, tick);
		if (best >= 2)
			ck_assert_uint_eq(got, want);
		else /* only future or unwritten entries: any of the future ones */
			ck_assert(*pacer_tbl_slot(l, got) >> 16 || best == 0);
	}
}
END_TEST

/*
 * The shortcuts against the full scan, on random lines (ages across the
 * 16-bit range, future ones, unwritten entries, the key's fingerprint in
 * a few): pacer_tbl_held_line() gives the scan's held mask, and a
 * judgement that skips the second line after a fresh entry in the first
 * gives the verdict, slot and event of one that scans both.
 */
START_TEST(test_shortcuts_match_the_scan)
{
	struct pacer_tbl_line lines[2], copy[2];
	struct pacer_tbl_line *l[2] = { &lines[0], &lines[1] }, *c[2] = { &copy[0], &copy[1] };
	struct rng r = { 23 };
	int round;

	for (round = 0; round < 20000; round++) {
		uint64_t tick = rnd(&r);
		uint16_t fp = (uint16_t)(rnd(&r) | 1);
		struct pacer_rate rate = pacer_rate_of(2 + (uint32_t)(rnd(&r) % 200),
						       round % 2 ? 0 : 1 + (uint32_t)(rnd(&r) % 3000));
		uint32_t slot, held, age_a, age_b, ev_a, ev_b, slot_a = 0, slot_b = 0;
		struct pacer_tbl_scan s;
		int da, db;

		for (slot = 0; slot < PACER_TBL_SLOTS; slot++) {
			uint64_t x = rnd(&r);
			uint32_t age = x & 1 ? (uint32_t)(x >> 8) % (2 * rate.sat + 2)
					     : (uint32_t)(x >> 8) & 0xffff;
			uint16_t f = (x >> 40) % 5 == 0 ? fp : (uint16_t)(x >> 44) | 1;

			*pacer_tbl_slot(l, slot) = (x >> 60) == 0 ? 0 : pacer_tbl_entry(f, tick - age);
		}
		pacer_tbl_scan(l, fp, tick, &rate, &s);
		held = pacer_tbl_held_line(l[0], 0, tick, fp, rate.sat) |
		       pacer_tbl_held_line(l[1], 1, tick, fp, rate.sat);
		ck_assert_uint_eq(held, s.held_mask);
		/* want_age scans both lines; without it the second may be skipped. */
		memcpy(copy, lines, sizeof(lines));
		da = pacer_tbl_judge(l, fp, tick, &rate, PACER_POLICY_PACE, round % 3 == 0,
				     PACER_PLACEMENT_PERCPU, 0, &age_a, &ev_a, &slot_a);
		db = pacer_tbl_judge(c, fp, tick, &rate, PACER_POLICY_PACE, round % 3 == 0,
				     PACER_PLACEMENT_PERCPU, 1, &age_b, &ev_b, &slot_b);
		ck_assert_int_eq(da, db);
		ck_assert_uint_eq(ev_a, ev_b);
		if (!da)
			ck_assert_uint_eq(slot_a, slot_b);
	}
}
END_TEST

/* The scan's masks entry by entry, from pacer_tbl_age alone: the reference for the lane scans. */
static void scan_reference(struct pacer_tbl_line *const l[2], uint16_t fp, uint64_t tick,
			   const struct pacer_rate *rate, struct pacer_tbl_scan *s)
{
	uint32_t slot;

	memset(s, 0, sizeof(*s));
	for (slot = 0; slot < PACER_TBL_SLOTS; slot++) {
		uint32_t e = *pacer_tbl_slot(l, slot), a = pacer_tbl_age(e, tick), bit = 1u << slot;
		int written = e >> 16 != 0, mine = (e >> 16) == fp;

		s->fresh_mask |= mine && a < rate->thresh ? bit : 0;
		s->own_mask |= mine && a >= rate->thresh ? bit : 0;
		s->held_mask |= mine && a < rate->sat ? bit : 0;
		s->free_mask |= !written || a >= rate->sat ? bit : 0;
		s->idle_mask |= !written || a >= 2 * rate->sat ? bit : 0;
	}
}

/*
 * The datapath's judgement (fingerprints first, ages of the key's entries
 * alone, free entries only for an admission without an own entry) and the
 * shared re-check against the reference, entry by entry: random lines with
 * the key's fingerprint in none, one or several entries of a line
 * (collisions take the full scan), ages across the 16-bit range, future
 * and unwritten entries; the verdict, slot and event against the rule as
 * the top of pacer_table.h states it.
 */
START_TEST(test_judgement_matches_the_reference)
{
	struct pacer_tbl_line lines[2];
	struct pacer_tbl_line *l[2] = { &lines[0], &lines[1] };
	struct rng r = { 31 };
	int round;

	for (round = 0; round < 40000; round++) {
		uint64_t tick = rnd(&r);
		uint16_t fp = (uint16_t)(rnd(&r) | 1);
		struct pacer_rate rate = pacer_rate_of(2 + (uint32_t)(rnd(&r) % 200),
						       round % 2 ? 0 : 1 + (uint32_t)(rnd(&r) % 3000));
		uint32_t mine = (uint32_t)(rnd(&r) % 4), on_full = round % 3 == 0;
		uint32_t slot, want, want_event = PACER_TBL_EV_NONE, age, event, got = 0, f0, f1, lm;
		struct pacer_tbl_scan ref, s, full;
		int drop;

		for (slot = 0; slot < PACER_TBL_SLOTS; slot++) {
			uint64_t x = rnd(&r);
			uint32_t a = x & 1 ? (uint32_t)(x >> 8) % (3 * rate.sat + 2)
					   : (uint32_t)(x >> 8) & 0xffff;
			/* 0: no entry of the key; 1: about one per line; 2, 3: several. */
			uint16_t f = mine && (x >> 40) % (mine == 1 ? 16 : 4) == 0 ? fp
										 : (uint16_t)(x >> 44) | 1;

			*pacer_tbl_slot(l, slot) = (x >> 60) == 0 ? 0 : pacer_tbl_entry(f, tick - a);
		}
		scan_reference(l, fp, tick, &rate, &ref);
		pacer_tbl_scan(l, fp, tick, &rate, &full);
		ck_assert_uint_eq(full.fresh_mask, ref.fresh_mask);
		ck_assert_uint_eq(full.own_mask, ref.own_mask);
		ck_assert_uint_eq(full.held_mask, ref.held_mask);
		ck_assert_uint_eq(full.free_mask, ref.free_mask);
		ck_assert_uint_eq(full.idle_mask, ref.idle_mask);
		pacer_tbl_scan_init(&s, fp, &rate);
		pacer_tbl_judge_line(l[0], 0, tick, &s);
		pacer_tbl_judge_line(l[1], 1, tick, &s);
		ck_assert_uint_eq(s.fresh_mask, ref.fresh_mask);
		ck_assert_uint_eq(s.own_mask, ref.own_mask);
		ck_assert_uint_eq(s.held_mask, ref.held_mask);
		ck_assert_uint_eq(s.free_mask, 0);
		pacer_tbl_free_line(l[0], 0, tick, &s);
		pacer_tbl_free_line(l[1], 1, tick, &s);
		ck_assert_uint_eq(s.free_mask, ref.free_mask);
		ck_assert_uint_eq(s.idle_mask, ref.idle_mask);
		for (slot = 0; slot < PACER_TBL_SLOTS; slot++)
			ck_assert_uint_eq(pacer_tbl_held_elsewhere(l, slot, fp, tick, rate.sat),
					  ref.held_mask & ~(1u << slot));

		/* The verdict by the rule. */
		if (ref.fresh_mask) {
			want = PACER_TBL_NONE;
		} else if (ref.own_mask) {
			want = rate.burst ? pacer_tbl_youngest(l, ref.own_mask, tick)
					  : pacer_tbl_first(ref.own_mask);
		} else if (ref.free_mask) {
			f0 = (uint32_t)__builtin_popcount(ref.free_mask & 0xffff);
			f1 = (uint32_t)__builtin_popcount(ref.free_mask >> 16);
			lm = f1 > f0 ? 0xffff0000u : 0xffffu;
			want = (uint32_t)__builtin_ctz(ref.idle_mask & lm ? ref.idle_mask & lm
									 : ref.free_mask & lm);
		} else {
			want = on_full ? pacer_tbl_oldest(l, tick) : PACER_TBL_NONE;
			want_event = on_full ? PACER_TBL_EV_EVICT : PACER_TBL_EV_FULL;
		}
		drop = pacer_tbl_judge(l, fp, tick, &rate, PACER_POLICY_PACE, on_full,
				       PACER_PLACEMENT_PERCPU, round % 5 == 0, &age, &event, &got);
		ck_assert_int_eq(drop, want == PACER_TBL_NONE);
		if (!drop)
			ck_assert_uint_eq(got, want);
		ck_assert_uint_eq(event, want_event);
	}
}
END_TEST

static int table_admits(void *sim, uint64_t h, uint64_t now_ns)
{
	uint32_t age, event;

	return !table_sim_verdict(sim, h, now_ns, &age, &event);
}

/*
 * The admission race (race.h) on a shared table, through the simulator's
 * shared path (pacer_table.h, as the datapath): both CPUs pick the same
 * entry and one swap fails.  Roomy enough that opposite mode never evicts
 * (an eviction may admit twice by design).  _i: on_full.
 */
START_TEST(test_admit_race_one_winner)
{
	const __u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	struct two_choice_sim sim;
	struct admit_race x = { .admit = table_admits, .sim = &sim };
	int k;

	ck_assert_int_eq(table_sim_init(&sim, 8, 0, 8, PACER_POLICY_PACE, (uint32_t)_i, key), 0);
	sim.placement = PACER_PLACEMENT_SHARED;
	x.interval_ns = (uint64_t)sim.thresh << sim.tick_shift;
	for (k = 0; k < RACE_KEYS; k++)
		x.h[k] = pacer_hash_v4(key, 0x0a000000u + (uint32_t)k);
	admit_race_check(&x, 20000);
	table_sim_free(&sim);
}
END_TEST

/* Shared placement on one CPU decides and writes what the sequential path does. */
START_TEST(test_shared_placement_is_sequential_alone)
{
	const __u64 key[2] = { 0x1234567 | 1, 0x89abcdef | 1 };
	uint32_t policy = (uint32_t)(_i & 1), on_full = (uint32_t)(_i >> 1);
	struct two_choice_sim a, b;
	uint64_t t = 1ULL << 40, seed = (uint64_t)_i, drops = 0;
	int i;

	ck_assert_int_eq(table_sim_init(&a, 3, 20, 31, policy, on_full, key), 0);
	ck_assert_int_eq(table_sim_init(&b, 3, 20, 31, policy, on_full, key), 0);
	b.placement = PACER_PLACEMENT_SHARED;
	for (i = 0; i < 200000; i++) {
		uint64_t h = pacer_mix64(pacer_mix64(++seed) % 300);
		uint32_t age_a, age_b;
		int da, db;

		t += pacer_mix64(++seed) % (2ULL << 20);
		da = table_sim_packet(&a, h, t, &age_a);
		db = table_sim_packet(&b, h, t, &age_b);
		ck_assert_int_eq(da, db);
		ck_assert_uint_eq(age_a, age_b);
		drops += (uint64_t)da;
	}
	ck_assert_int_eq(memcmp(a.tl, b.tl, table_bytes(3)), 0);
	ck_assert_uint_eq(a.full, b.full);
	ck_assert_uint_eq(a.evicted, b.evicted);
	ck_assert_uint_gt(drops, 1000);
	table_sim_free(&a);
	table_sim_free(&b);
}
END_TEST

/*
 * The interleaving the re-scan after a claim exists for, step by step: CPU A
 * picks an entry for a new key; other keys then fill its line, so CPU B,
 * seeing more room in the other line, admits the key there; A's swap still
 * succeeds (its entry did not change), and only the re-scan shows B's entry.
 */
START_TEST(test_claim_rescan_catches_a_different_pick)
{
	const __u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	const uint64_t tick = 5000;
	struct pacer_tbl_line *l[2];
	struct pacer_tbl_scan s;
	struct two_choice_sim sim;
	uint32_t idx[2], a_slot, i, filled = 0, age, event;
	uint64_t h = pacer_hash_v4(key, 0x0a000001u);
	uint16_t fp = pacer_tbl_fp(h);
	struct pacer_rate rate = pacer_rate_of(8, 0);
	int evicted;

	ck_assert_int_eq(table_sim_init(&sim, 4, 0, 8, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key), 0);
	pacer_tbl_lines(h, sim.lines_log2, idx);
	l[0] = &sim.tl[idx[0]];
	l[1] = &sim.tl[idx[1]];
	/* A: scan and pick, not yet swapped. */
	pacer_tbl_scan(l, fp, tick, &rate, &s);
	a_slot = pacer_tbl_pick(l, &s, tick, 0, PACER_TBL_FULL_DROP, &evicted);
	ck_assert_uint_lt(a_slot, PACER_TBL_WAYS); /* equal room: line 0 */
	/* Two other keys take other entries of line 0. */
	for (i = 0; i < PACER_TBL_WAYS && filled < 2; i++)
		if (i != a_slot) {
			*pacer_tbl_slot(l, i) = pacer_tbl_entry((uint16_t)(fp ^ 0x5a5a), tick);
			filled++;
		}
	/* B: the whole packet, in line 1. */
	ck_assert_int_eq(pacer_tbl_verdict(l, fp, tick, &rate, PACER_POLICY_PACE,
					   PACER_TBL_FULL_DROP, PACER_PLACEMENT_SHARED, 1, &age, &event), 0);
	pacer_tbl_scan(l, fp, tick, &rate, &s);
	ck_assert_uint_ne(s.fresh_mask >> PACER_TBL_WAYS, 0); /* B admitted it in line 1 */
	/* A: its swap goes through, its re-scan finds B's entry: A drops. */
	ck_assert_int_eq(pacer_tbl_claim_shared(l, a_slot, fp, tick, &rate, 0, 0), -1);
	ck_assert_uint_eq(*pacer_tbl_slot(l, a_slot), pacer_tbl_entry(fp, tick));
	/* Without B, the same claim admits. */
	memset(sim.tl, 0, table_bytes(sim.lines_log2));
	ck_assert_int_eq(pacer_tbl_claim_shared(l, a_slot, fp, tick, &rate, 0, 0), 0);
	table_sim_free(&sim);
}
END_TEST

/*
 * The sweep's plan keeps the bound: every line of every copy is visited
 * within PACER_TBL_SWEEP_TICKS (so an expired entry is gone before its tick
 * wraps), rounds 1 ms to 1 s apart, at most PACER_TBL_SWEEP_CHUNK lines a
 * round unless rounds are as close as they may be.
 */
START_TEST(test_sweep_plan_keeps_the_bound)
{
	static const uint64_t lines[] = { 1, 2, 1024, 1025, 65536, 1ULL << 20, 16ULL << 24, 1024ULL << 24 };
	uint32_t shift, i;

	ck_assert_uint_lt(PACER_RATE_TBL_MAX_SAT + 2 * PACER_TBL_SWEEP_TICKS, 0x10000 - PACER_TBL_FUTURE + 1);
	for (shift = 6; shift <= PACER_TICK_SHIFT_MAX; shift++)
		for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
			struct pacer_tbl_sweep p;
			uint64_t span = (uint64_t)PACER_TBL_SWEEP_TICKS << shift, rounds;

			pacer_tbl_sweep_plan(lines[i], shift, &p);
			ck_assert_uint_ge(p.period_ns, PACER_TBL_SWEEP_MIN_NS);
			ck_assert_uint_le(p.period_ns, PACER_TBL_SWEEP_MAX_NS);
			ck_assert_uint_ge(p.chunk, 1);
			ck_assert_uint_le(p.chunk, PACER_TBL_SWEEP_MAX_CHUNK);
			rounds = (lines[i] + p.chunk - 1) / p.chunk;
			if (lines[i] <= (uint64_t)PACER_TBL_SWEEP_MAX_CHUNK * (span / PACER_TBL_SWEEP_MIN_NS))
				ck_assert_msg(rounds * p.period_ns <= span,
					      "tick 2^%u, %llu lines: %llu rounds of %llu ns > %llu ns", shift,
					      (unsigned long long)lines[i], (unsigned long long)rounds,
					      (unsigned long long)p.period_ns, (unsigned long long)span);
			if (p.period_ns > PACER_TBL_SWEEP_MIN_NS)
				ck_assert_uint_le(p.chunk, PACER_TBL_SWEEP_CHUNK);
		}
}
END_TEST

/*
 * What the sweep clears: exactly the written entries from sat up, never a
 * fresh, "future" or unwritten one; the line's mask and the word's swap agree.
 */
START_TEST(test_sweep_clears_exactly_the_expired)
{
	uint64_t x = 0x2545f4914f6cdd1dULL;
	uint32_t k, i;

	for (k = 0; k < 20000; k++) {
		struct pacer_tbl_line l;
		uint64_t tick;
		uint32_t sat, mask;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		tick = x >> 20;
		sat = 2 + (uint32_t)(x % PACER_RATE_TBL_MAX_SAT);
		for (i = 0; i < PACER_TBL_WAYS; i++) {
			uint32_t age, fp;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			age = (uint32_t)(x >> 8) & 0xffff;
			if (x % 4 == 0) /* near the thresholds */
				age = (sat + (uint32_t)(x >> 40) % 5 - 2) & 0xffff;
			if (x % 16 == 1)
				age = (0x10000 - PACER_TBL_FUTURE + (uint32_t)(x >> 40) % 5 - 2) & 0xffff;
			fp = x % 8 == 2 ? 0 : 1 + (uint32_t)(x >> 48) % 0xffff;
			l.e[i] = fp ? pacer_tbl_entry((uint16_t)fp, tick - age) : (uint32_t)(x >> 32) & 0xffff;
		}
		mask = pacer_tbl_expired_line(&l, tick, sat);
		for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
			uint64_t w = l.w[i], swept = pacer_tbl_swept_word(w, tick, sat);
			uint32_t lo = (uint32_t)w, hi = (uint32_t)(w >> 32);
			int lo_exp = (lo >> 16) && pacer_tbl_age(lo, tick) >= sat &&
				     (uint16_t)(tick - lo) < 0x10000 - PACER_TBL_FUTURE;
			int hi_exp = (hi >> 16) && pacer_tbl_age(hi, tick) >= sat &&
				     (uint16_t)(tick - hi) < 0x10000 - PACER_TBL_FUTURE;

			ck_assert_uint_eq((uint32_t)swept, lo_exp ? 0 : lo);
			ck_assert_uint_eq((uint32_t)(swept >> 32), hi_exp ? 0 : hi);
			/* Word i's entries are the mask's slots i and 8 + i. */
			ck_assert_uint_eq(mask >> i & 1, (uint32_t)lo_exp);
			ck_assert_uint_eq(mask >> (8 + i) & 1, (uint32_t)hi_exp);
			/* What the sweep counts as cleared: the expired entries, each once. */
			ck_assert_uint_eq(pacer_tbl_lanes_set(pacer_tbl_swept_lanes(w, tick, sat)), (uint32_t)(lo_exp + hi_exp));
		}
	}
}
END_TEST

/* The branch-free lowest-set-bit the slot choice uses, against the compiler's. */
START_TEST(test_first_is_the_lowest_set_bit)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint32_t i;

	for (i = 0; i < 32; i++)
		ck_assert_uint_eq(pacer_tbl_first(1u << i), i);
	for (i = 0; i < 200000; i++) {
		uint32_t m;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		m = (uint32_t)x >> (x >> 59); /* masks of every width */
		if (m)
			ck_assert_uint_eq(pacer_tbl_first(m), (uint32_t)__builtin_ctz(m));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("recency table");
	TCase *tc = tcase_create("oracle");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_first_is_the_lowest_set_bit);
	tcase_add_test(tc, test_sweep_plan_keeps_the_bound);
	tcase_add_test(tc, test_sweep_clears_exactly_the_expired);
	tcase_add_loop_test(tc, test_random_streams, 0, 12);
	tcase_add_loop_test(tc, test_adversarial_streams, 0, 4);
	tcase_add_loop_test(tc, test_exact_when_roomy, 0, 2);
	tcase_add_test(tc, test_error_rates_follow_model);
	tcase_add_test(tc, test_oldest_is_the_oldest);
	tcase_add_test(tc, test_shortcuts_match_the_scan);
	tcase_add_test(tc, test_judgement_matches_the_reference);
	tcase_add_test(tc, test_claim_rescan_catches_a_different_pick);
	suite_add_tcase(s, tc);
	tc = tcase_create("steady state and races");
	tcase_set_timeout(tc, 300);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_steady_state_follows_model);
	tcase_add_loop_test(tc, test_shared_placement_is_sequential_alone, 0, 4);
	tcase_add_loop_test(tc, test_admit_race_one_winner, PACER_TBL_FULL_DROP, PACER_TBL_FULL_MAX);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
