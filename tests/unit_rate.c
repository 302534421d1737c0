// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --rate N/T (pacer_rate.h) through both backends and both placements,
 * against exact per-source GCRA oracles:
 *   - in ticks (the arithmetic the cells approximate): with no collision,
 *     every verdict is the oracle's (no false drop, no false pass); with
 *     collisions, every admitted packet still conforms to it;
 *   - in nanoseconds, GCRA(T/N, (N-1)T/N): the admitted stream of every
 *     source conforms, so it never has more admissions up to any instant
 *     than the exact greedy GCRA, and never more than 2N - 1 in a window of
 *     T (N with --interval T/N);
 *   - the CLI's rates (load's default tick): a fresh or long-idle source
 *     gets exactly N at once, a source sending faster gets N/T within 1 %
 *     and never more (the rates of the issue's table, one source at
 *     2000 packets/s), and the sketch refuses what it cannot deliver;
 *   - N = 1 is --interval: the same ticks and the same verdicts;
 *   - shared placement with two threads on the same sources: never more
 *     admissions than the oracle allows.
 */
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "race.h"
#include "sketch_sim.h"
#include "two_choice_sim.h"
#include "pacer_rate.h"
#include "layout.h"
#include "ticks.h"
#include "live_opts.h"
#include "lib_rng.h"

#define NONE INT64_MIN

/* The exact GCRA in ticks, on unbounded integers: v is the virtual last admission. */
static int tick_oracle(int64_t *v, int64_t tick, const struct pacer_rate *r, int update_on_drop)
{
	uint32_t a = *v == NONE || tick - *v >= r->sat ? r->sat : (uint32_t)(tick - *v);

	if (a < r->thresh) {
		if (update_on_drop)
			*v = tick;
		return 1;
	}
	*v = tick - pacer_rate_next_age(a, r);
	return 0;
}

/* The exact GCRA in ns, scaled by N: conforming iff N t >= TAT_N - (N-1)T. */
struct ns_gcra {
	unsigned __int128 tat; /* N * TAT; 0: never admitted */
	int seen;
};

static int ns_conforms(const struct ns_gcra *g, uint64_t t, uint32_t n, uint64_t period)
{
	return !g->seen || (unsigned __int128)n * t + (unsigned __int128)(n - 1) * period >= g->tat;
}

static void ns_admit(struct ns_gcra *g, uint64_t t, uint32_t n, uint64_t period)
{
	unsigned __int128 nt = (unsigned __int128)n * t;

	g->tat = (g->seen && g->tat > nt ? g->tat : nt) + period;
	g->seen = 1;
}

/* One of the backends a rate runs on. */
struct bk {
	const char *name;
	int table;
	uint32_t kind, rows, lines_log2;
};

struct rsim {
	int table;
	struct sketch_sim sk;
	struct two_choice_sim tb;
};

static void rsim_init(struct rsim *s, const struct bk *b, uint32_t tick_shift,
		      const struct pacer_rate *r, uint32_t policy, uint32_t placement, uint64_t seed)
{
	__u64 key[2] = { pacer_mix64(seed) | 1, pacer_mix64(seed + 7) | 1 };

	memset(s, 0, sizeof(*s));
	s->table = b->table;
	if (b->table) {
		ck_assert_int_eq(table_sim_init(&s->tb, b->lines_log2, tick_shift, 8, policy,
						PACER_TBL_FULL_DROP, key), 0);
		s->tb.thresh = r->thresh;
		s->tb.burst = r->burst;
		s->tb.placement = placement;
	} else {
		ck_assert_int_eq(sketch_sim_init(&s->sk, b->rows, b->kind, b->lines_log2, tick_shift, 8,
						 policy, key), 0);
		s->sk.thresh = r->thresh;
		s->sk.burst = r->burst;
		s->sk.placement = placement;
	}
}

static uint64_t rsim_hash(const struct rsim *s, uint32_t src)
{
	return pacer_hash_v4(s->table ? s->tb.key : s->sk.key, 0x0a000000u + src);
}

static int rsim_packet(struct rsim *s, uint64_t h, uint64_t now)
{
	uint32_t age, event;

	if (s->table)
		return table_sim_verdict(&s->tb, h, now, &age, &event);
	return sketch_sim_packet(&s->sk, h, now, &age);
}

static void rsim_free(struct rsim *s)
{
	if (s->table)
		table_sim_free(&s->tb);
	else
		sketch_sim_free(&s->sk);
}

static const struct bk big[] = {
	{ "sketch rows", 0, PACER_LAYOUT_ROWS, 4, 10 },
	{ "sketch blocked", 0, PACER_LAYOUT_BLOCKED, 4, 12 },
	{ "table", 1, 0, 1, 10 },
};

/* What a run found, per source and in total. */
struct outcome {
	uint64_t packets, admitted, oracle_admitted, differ, nonconform, window_over, prefix_over;
	uint64_t max_in_window;
};

#define MAXSRC 512
#define WIN 4096

/*
 * nsrc sources send a random stream (sub-tick offsets, bursts, idle jumps
 * up to max_jump ticks); every packet is run through the backend and the
 * tick oracle, and the admitted ones are checked against the ns oracle.
 */
static void run_stream(const struct bk *b, uint32_t placement, uint32_t n, uint64_t period,
		       uint32_t tick_shift, uint32_t nsrc, uint64_t npkts, uint64_t max_jump,
		       uint32_t tick_every, uint64_t seed, struct outcome *o)
{
	struct pacer_rate r;
	struct rsim s;
	struct rng g = { seed };
	static int64_t v[MAXSRC];
	static struct ns_gcra ns[MAXSRC], greedy[MAXSRC];
	static uint64_t wins[MAXSRC][WIN], nadm[MAXSRC], ngreedy[MAXSRC];
	uint64_t tick = 1000, i, h[MAXSRC], last = 0;
	uint32_t k;

	ck_assert_int_eq(pacer_rate_ticks(n, period, tick_shift, b->table ? PACER_RATE_TBL_MAX_SAT
									   : PACER_MAX_THRESH, &r), 0);
	ck_assert_uint_le(nsrc, MAXSRC);
	rsim_init(&s, b, tick_shift, &r, PACER_POLICY_PACE, placement, seed);
	memset(o, 0, sizeof(*o));
	for (k = 0; k < nsrc; k++) {
		v[k] = NONE;
		ns[k] = greedy[k] = (struct ns_gcra){ 0 };
		nadm[k] = ngreedy[k] = 0;
		h[k] = rsim_hash(&s, k);
	}
	for (i = 0; i < npkts; i++) {
		uint64_t x = rnd(&g), now;
		uint32_t src = (uint32_t)(x % nsrc);
		int drop, odrop;

		if ((x >> 20) % 600 == 0)
			tick += (x >> 32) % max_jump;
		else if ((x >> 48) % tick_every == 0)
			tick += (x >> 40) % 3;
		/* Anywhere in the tick, but never before the previous packet (a CPU's clock). */
		now = (tick << tick_shift) + ((x >> 8) & ((1ULL << tick_shift) - 1));
		now = now > last ? now : last;
		last = now;
		drop = rsim_packet(&s, h[src], now);
		odrop = tick_oracle(&v[src], (int64_t)tick, &r, 0);
		o->packets++;
		o->differ += drop != odrop;
		if (ns_conforms(&greedy[src], now, n, period)) {
			ns_admit(&greedy[src], now, n, period);
			ngreedy[src]++;
		}
		o->oracle_admitted += !odrop;
		if (drop)
			continue;
		o->admitted++;
		if (!ns_conforms(&ns[src], now, n, period))
			o->nonconform++;
		ns_admit(&ns[src], now, n, period);
		/* Admissions in the half-open window of T ending now (the last WIN kept). */
		{
			uint64_t m = nadm[src] < WIN ? nadm[src] : WIN, j, c = 1;

			for (j = 1; j <= m; j++) {
				if (now - wins[src][(nadm[src] - j) % WIN] >= period)
					break;
				c++;
			}
			o->max_in_window = c > o->max_in_window ? c : o->max_in_window;
			o->window_over += c > 2ULL * n - 1;
			wins[src][nadm[src] % WIN] = now;
			nadm[src]++;
		}
		o->prefix_over += nadm[src] > ngreedy[src];
	}
	rsim_free(&s);
}

static void expect_exact(const struct outcome *o, const char *what)
{
	ck_assert_msg(o->differ == 0, "%s: %llu of %llu verdicts differ from the tick oracle", what,
		      (unsigned long long)o->differ, (unsigned long long)o->packets);
	ck_assert_msg(o->nonconform == 0 && o->prefix_over == 0 && o->window_over == 0,
		      "%s: %llu admissions not GCRA-conforming, %llu over the greedy count, %llu over 2N-1",
		      what, (unsigned long long)o->nonconform, (unsigned long long)o->prefix_over,
		      (unsigned long long)o->window_over);
	ck_assert_msg(o->admitted > o->packets / 50, "%s: only %llu of %llu admitted", what,
		      (unsigned long long)o->admitted, (unsigned long long)o->packets);
}

/* The rates each backend is run with: N, T in ticks. */
struct rcase {
	uint32_t n;
	uint64_t period_ticks;
};

/* The sketch holds N * emit + 1 <= 64 ticks, the table 16384. */
static const struct rcase sketch_cases[] = {
	{ 1, 30 }, { 2, 40 }, { 4, 40 }, { 5, 40 }, { 15, 30 }, { 7, 33 },
};
static const struct rcase table_cases[] = {
	{ 1, 30 }, { 4, 40 }, { 100, 4700 }, { 700, 14000 }, { 3, 1000 }, { 64, 64 },
};

/* Collision-free (16 sources in a large sketch or table): exactly the tick oracle, both placements. */
START_TEST(test_exact_without_collisions)
{
	const struct bk *b = &big[_i / 2];
	uint32_t placement = _i % 2 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	const struct rcase *cs = b->table ? table_cases : sketch_cases;
	size_t nc = b->table ? sizeof(table_cases) / sizeof(table_cases[0])
			     : sizeof(sketch_cases) / sizeof(sketch_cases[0]), c;
	const uint32_t shift = 10;
	struct outcome o;
	char what[128];

	for (c = 0; c < nc; c++) {
		uint64_t period = (cs[c].period_ticks << shift) + 333; /* not a whole number of ticks */
		/* Idle jumps: across many epochs (sketch), below the 16-bit wrap (table). */
		uint64_t jump = b->table ? (cs[c].period_ticks < 4000 ? 4 * cs[c].period_ticks + 1000 : 20000)
					: 3000;

		run_stream(b, placement, cs[c].n, period, shift, 16, 60000, jump, 1, 42 + c, &o);
		snprintf(what, sizeof(what), "%s %s, rate %u/%llu ticks", b->name,
			 placement ? "shared" : "percpu", cs[c].n,
			 (unsigned long long)cs[c].period_ticks);
		expect_exact(&o, what);
		ck_assert_uint_le(o.max_in_window, 2 * cs[c].n - 1);
	}
}
END_TEST

/* Tiny structures, many sources: false drops, never an admission the oracle refuses. */
START_TEST(test_one_sided_under_collisions)
{
	static const struct bk tiny[] = {
		{ "sketch rows", 0, PACER_LAYOUT_ROWS, 2, 0 },
		{ "sketch blocked", 0, PACER_LAYOUT_BLOCKED, 2, 1 },
		{ "table", 1, 0, 1, 1 },
	};
	const struct bk *b = &tiny[_i / 2];
	uint32_t placement = _i % 2 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	const uint32_t shift = 10, n = 8;
	uint64_t period = (40ULL << shift) + 77;
	struct outcome o;

	run_stream(b, placement, n, period, shift, 400, 200000, 500, 50, 7, &o);
	ck_assert_msg(o.nonconform == 0 && o.prefix_over == 0 && o.window_over == 0,
		      "%s: %llu non-conforming admissions, %llu over the greedy count, %llu over 2N-1",
		      b->name, (unsigned long long)o.nonconform, (unsigned long long)o.prefix_over,
		      (unsigned long long)o.window_over);
	/* The structure is overloaded: it must err, and only by dropping. */
	ck_assert_uint_gt(o.differ, 0);
	ck_assert_uint_lt(o.admitted, o.oracle_admitted);
}
END_TEST

/* 16-bit ticks wrap: idle gaps of whole wraps only ever make a source look younger. */
START_TEST(test_table_wrap_one_sided)
{
	const struct bk b = { "table", 1, 0, 1, 6 };
	struct pacer_rate r;
	struct rsim s;
	struct ns_gcra g = { 0 };
	struct rng x = { 5 };
	uint64_t tick = 100, now, h, admitted = 0, i;
	const uint64_t period = 4000; /* tick_shift 0: ns are ticks */

	ck_assert_int_eq(pacer_rate_ticks(20, period, 0, PACER_RATE_TBL_MAX_SAT, &r), 0);
	rsim_init(&s, &b, 0, &r, PACER_POLICY_PACE, PACER_PLACEMENT_PERCPU, 3);
	h = rsim_hash(&s, 1);
	for (i = 0; i < 20000; i++) {
		uint64_t y = rnd(&x);

		/* Mostly bursts, sometimes an idle gap of k wraps plus or minus a little. */
		if (y % 50 == 0)
			tick += ((y >> 8) % 3 + 1) * 65536 - 300 + (y >> 16) % 600;
		else
			tick += (y >> 32) % 40;
		now = tick;
		if (rsim_packet(&s, h, now))
			continue;
		admitted++;
		ck_assert_msg(ns_conforms(&g, now, 20, period), "admission %llu at %llu breaks GCRA",
			      (unsigned long long)admitted, (unsigned long long)now);
		ns_admit(&g, now, 20, period);
	}
	ck_assert_uint_gt(admitted, 1000);
	rsim_free(&s);
}
END_TEST

/* N = 1: the ticks of --interval L, and the verdicts of "admit L after the last admission". */
START_TEST(test_n1_is_interval)
{
	uint32_t shift;
	uint64_t l;
	struct pacer_rate r;

	for (shift = 0; shift <= 30; shift += 5)
		for (l = 4ULL << shift; l <= 63ULL << shift; l += (1ULL << shift) / 3 + 1) {
			ck_assert_int_eq(pacer_rate_ticks(1, l, shift, PACER_MAX_THRESH, &r), 0);
			ck_assert_uint_eq(r.thresh, pacer_thresh_ticks(l, shift));
			ck_assert_uint_eq(r.burst, 0);
			ck_assert_uint_eq(r.sat, r.thresh);
			ck_assert_uint_eq(pacer_rate_credits(r.sat, &r), 1);
		}
}
END_TEST

/* N = 1 in a large structure: exactly one packet per interval, the pacing of old. */
START_TEST(test_n1_exact_pacing)
{
	const uint32_t shift = 10;
	const uint64_t interval = (20ULL << shift) + 5;
	struct outcome o;
	int bi;

	for (bi = 0; bi < 3; bi++) {
		run_stream(&big[bi], PACER_PLACEMENT_PERCPU, 1, interval, shift, 16, 40000, 500, 1, 3, &o);
		expect_exact(&o, big[bi].name);
		ck_assert_uint_eq(o.max_in_window, 1);
	}
}
END_TEST

/* --interval T/N (tau = 0) caps every window of T at N; --rate N/T reaches 2N - 1. */
START_TEST(test_window_bounds)
{
	const uint32_t shift = 10, n = 5;
	const uint64_t period = 50ULL << shift;
	struct outcome o;

	run_stream(&big[2], PACER_PLACEMENT_PERCPU, 1, period / n, shift, 4, 200000, 200, 1, 17, &o);
	ck_assert_uint_le(o.max_in_window, n);
	ck_assert_uint_eq(o.window_over, 0);
	run_stream(&big[2], PACER_PLACEMENT_PERCPU, n, period, shift, 4, 200000, 200, 1, 17, &o);
	ck_assert_uint_le(o.max_in_window, 2 * n - 1);
	ck_assert_uint_gt(o.max_in_window, n); /* the burst then the sustained rate */
}
END_TEST

/* The credits query reports what the datapath would admit at once. */
START_TEST(test_credits_match_burst)
{
	const struct rcase *cs = table_cases;
	int bi;

	for (bi = 0; bi < 3; bi++) {
		const struct rcase c = big[bi].table ? cs[2] : sketch_cases[3];
		uint64_t period = c.period_ticks << 10, t0 = 1000ULL << 10, h;
		struct pacer_rate r;
		struct rsim s;
		uint32_t got = 0, k, age, want;

		ck_assert_int_eq(pacer_rate_ticks(c.n, period, 10, big[bi].table ? PACER_RATE_TBL_MAX_SAT
										 : PACER_MAX_THRESH, &r), 0);
		rsim_init(&s, &big[bi], 10, &r, PACER_POLICY_PACE, PACER_PLACEMENT_PERCPU, 1);
		h = rsim_hash(&s, 5);
		for (k = 0; k < 2 * c.n; k++)
			got += !rsim_packet(&s, h, t0);
		ck_assert_uint_eq(got, pacer_rate_credits(r.sat, &r));
		ck_assert_uint_eq(got, c.n); /* a fresh source: exactly N at once */
		/* Later: as many as the cell's age grants. */
		t0 += (uint64_t)(3 * r.emit + 1) << 10;
		if (s.table) {
			struct pacer_tbl_line *l[2];
			struct pacer_tbl_scan sc;
			uint32_t idx[2];

			pacer_tbl_lines(h, s.tb.lines_log2, idx);
			l[0] = &s.tb.tl[idx[0]];
			l[1] = &s.tb.tl[idx[1]];
			pacer_tbl_scan(l, pacer_tbl_fp(h), t0 >> 10, &r, &sc);
			age = pacer_tbl_key_age(l, &sc, t0 >> 10);
		} else {
			age = sketch_sim_age(&s.sk, h, t0);
		}
		want = pacer_rate_credits(age, &r);
		ck_assert_uint_ge(want, 3);
		ck_assert_uint_le(want, 4);
		for (got = 0, k = 0; k < 10; k++)
			got += !rsim_packet(&s, h, t0);
		ck_assert_uint_eq(got, want);
		rsim_free(&s);
	}
}
END_TEST

/* quiet with a rate: a packet sent while limited spends the rest of the burst. */
START_TEST(test_quiet_resets_credit)
{
	const struct bk *b = &big[_i];
	struct pacer_rate r;
	struct rsim s;
	uint64_t h, t = 1000ULL << 10;
	uint32_t k, got = 0;

	ck_assert_int_eq(pacer_rate_ticks(4, 40ULL << 10, 10, PACER_MAX_THRESH, &r), 0);
	rsim_init(&s, b, 10, &r, PACER_POLICY_QUIET, PACER_PLACEMENT_PERCPU, 2);
	h = rsim_hash(&s, 9);
	for (k = 0; k < 10; k++)
		got += !rsim_packet(&s, h, t);
	ck_assert_uint_eq(got, pacer_rate_credits(r.sat, &r));
	/* One emission interval on, a fresh credit, but a packet a tick earlier was dropped. */
	ck_assert_int_eq(rsim_packet(&s, h, t + ((uint64_t)r.emit << 10)), 1);
	ck_assert_int_eq(rsim_packet(&s, h, t + ((uint64_t)(r.emit + 1) << 10)), 1);
	ck_assert_int_eq(rsim_packet(&s, h, t + ((uint64_t)(2 * r.emit + 2) << 10)), 0);
	rsim_free(&s);
}
END_TEST

/* Two threads, the same sources, the same instants, shared state. */
#define RKEYS 32
#define RPKTS 6

struct rate_race {
	struct rsim s;
	struct pacer_rate r;
	uint64_t h[RKEYS];
	uint64_t step_ns;
	int nkeys;
	uint32_t admitted[2][RKEYS];
	uint64_t *per_round; /* [round][key]: admissions of both threads */
};

static void rate_race_work(struct race *rc, int thread, int round)
{
	struct rate_race *x = rc->ctx;
	uint64_t now = (uint64_t)(round + 1000) * x->step_ns;
	int k, p;

	for (k = 0; k < x->nkeys; k++) {
		x->admitted[thread][k] = 0;
		for (p = 0; p < RPKTS; p++)
			x->admitted[thread][k] += !rsim_packet(&x->s, x->h[k], now);
	}
	race_wait(rc, -1 - round);
	if (thread == 0)
		for (k = 0; k < x->nkeys; k++)
			x->per_round[(uint64_t)round * RKEYS + k] = x->admitted[0][k] + x->admitted[1][k];
}

/* 32 sources, or (hammer) both threads on the same two sources for longer. */
START_TEST(test_shared_race)
{
	const struct bk *b = &big[_i % 3];
	const int rounds = _i < 3 ? 400 : 4000;
	struct rate_race *x = calloc(1, sizeof(*x));
	uint64_t total = 0, allowed = 0;
	int k, rd;

	ck_assert_ptr_nonnull(x);
	x->per_round = calloc((size_t)rounds * RKEYS, sizeof(uint64_t));
	ck_assert_ptr_nonnull(x->per_round);
	/* N = 6 per 30 ticks; a round every 2 ticks, 12 packets per source per round. */
	ck_assert_int_eq(pacer_rate_ticks(6, 30ULL << 10, 10, PACER_MAX_THRESH, &x->r), 0);
	rsim_init(&x->s, b, 10, &x->r, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED, 4);
	x->step_ns = 2ULL << 10;
	x->nkeys = _i < 3 ? RKEYS : 2;
	for (k = 0; k < x->nkeys; k++)
		x->h[k] = rsim_hash(&x->s, (uint32_t)k);
	{
		struct race rc = { .rounds = rounds, .work = rate_race_work, .ctx = x };

		race_run(&rc);
	}
	for (k = 0; k < x->nkeys; k++) {
		int64_t v = NONE, w = NONE;
		uint64_t got = 0, may = 0;

		for (rd = 0; rd < rounds; rd++) {
			int64_t tick = (int64_t)((uint64_t)(rd + 1000) * 2);
			uint64_t p, adm = x->per_round[(uint64_t)rd * RKEYS + k];

			/* Every admission of both threads conforms to the oracle fed the admissions alone. */
			for (p = 0; p < adm; p++)
				ck_assert_msg(!tick_oracle(&w, tick, &x->r, 0),
					      "%s: source %d: admission %llu of round %d breaks GCRA",
					      b->name, k, (unsigned long long)p + 1, rd);
			/* The oracle with unlimited demand, for the share admitted. */
			for (p = 0; p < 2 * RPKTS; p++)
				may += !tick_oracle(&v, tick, &x->r, 0);
			got += adm;
		}
		total += got;
		allowed += may;
	}
	/* Races cost a few false drops, not the rate. */
	ck_assert_uint_gt(total, allowed * 8 / 10);
	rsim_free(&x->s);
	free(x->per_round);
	free(x);
}
END_TEST

/* Ticks of a rate: the bounds and the backends' limits. */
START_TEST(test_rate_ticks)
{
	struct pacer_rate r;

	/*
	 * 100 per minute at 2^25 ns: T/N is 17.9 ticks, so emission 19 ticks
	 * (a tick of margin on ceil), tolerance 99 * 19 + 1: 100 at once.
	 */
	ck_assert_int_eq(pacer_rate_ticks(100, 60000000000ULL, 25, PACER_RATE_TBL_MAX_SAT, &r), 0);
	ck_assert_uint_eq(r.emit, 19);
	ck_assert_uint_eq(r.burst, 1882);
	ck_assert_uint_eq(r.thresh, 20);
	ck_assert_uint_eq(r.sat, 1901);
	ck_assert_uint_eq(pacer_rate_credits(r.sat, &r), 100);
	ck_assert_uint_eq(pacer_rate_spacing(&r), 19);
	/* ... which the sketch's 64 ticks cannot hold. */
	ck_assert_int_eq(pacer_rate_ticks(100, 60000000000ULL, 25, PACER_MAX_THRESH, &r), -1);
	/* Below one tick per emission, and out-of-range N or T. */
	ck_assert_int_eq(pacer_rate_ticks(64, 63ULL << 10, 10, PACER_MAX_THRESH, &r), -1);
	ck_assert_int_eq(pacer_rate_ticks(0, 1000, 0, PACER_MAX_THRESH, &r), -1);
	ck_assert_int_eq(pacer_rate_ticks(PACER_RATE_MAX_N + 1, 1ULL << 40, 10,
					  PACER_RATE_TBL_MAX_SAT, &r), -1);
	ck_assert_int_eq(pacer_rate_ticks(2, PACER_RATE_MAX_PERIOD_NS + 1, 40, PACER_RATE_TBL_MAX_SAT,
					  &r), -1);
	/* 31 per 31 ticks: the sketch's largest burst (emission 2, 31 * 2 + 1 ticks). */
	ck_assert_int_eq(pacer_rate_ticks(PACER_RATE_SKETCH_MAX_N, 31ULL << 10, 10, PACER_MAX_THRESH, &r), 0);
	ck_assert_uint_eq(r.sat, 63);
	ck_assert_uint_eq(pacer_rate_credits(r.sat, &r), PACER_RATE_SKETCH_MAX_N);
	ck_assert_int_eq(pacer_rate_ticks(32, 32ULL << 10, 10, PACER_MAX_THRESH, &r), -1);
	/* Next ages never leave [0, burst]. */
	for (uint32_t a = r.thresh; a <= 300; a++)
		ck_assert_uint_le(pacer_rate_next_age(a, &r), r.burst);
}
END_TEST

/* The CLI's side: --rate through the option table, the conflict, the fit and its messages. */
START_TEST(test_cli_rate)
{
	const struct opt_spec *spec = opts_find(pacing_specs, "rate", NULL);
	static const char *const bad[] = { "0/1s", "16385/1s", "5", "5/", "/1s", "5/0s", "x/1s",
					   "5/1x", "-1/1s", "2/2000000s" };
	struct live_opts o = { 0 };
	struct opt_error e;
	struct pacer_rate r;
	char err[256];
	uint64_t period;
	uint32_t n;
	size_t i;

	ck_assert_ptr_nonnull(spec);
	ck_assert(spec->flags & OPT_LIVE && spec->flags & OPT_CONF);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(opts_parse_value(spec, bad[i], &o, &e) != 0, "--rate %s accepted", bad[i]);
		ck_assert_ptr_nonnull(strstr(e.msg, bad[i]));
		ck_assert_ptr_nonnull(strstr(e.msg, "N/T"));
	}
	ck_assert_int_eq(opts_parse_value(spec, "100/60s", &o, &e), 0);
	ck_assert_uint_eq(o.rate.n, 100);
	ck_assert_uint_eq(o.rate.interval_ns, 60000000000ULL);
	o.rate_set = 1;
	live_opts_rate(&o, &n, &period);
	ck_assert_uint_eq(n, 100);
	ck_assert_uint_eq(period, 60000000000ULL);
	ck_assert_ptr_null(live_opts_conflict(&o));
	o.interval_set = 1;
	ck_assert_ptr_nonnull(strstr(live_opts_conflict(&o), "--interval and --rate"));
	o.rate_set = 0;
	o.interval_ns = 250000000ULL;
	live_opts_rate(&o, &n, &period);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(period, 250000000ULL);

	/*
	 * Default ticks: the coarsest that delivers 99.5 % of N/T (emission
	 * ceil(T/N/tick) + 1 ticks) and holds the burst, else the best.
	 */
	ck_assert_uint_eq(pacer_default_rate_tick_shift(5, 1000000000ULL, PACER_BACKEND_TABLE), 19);
	ck_assert_uint_eq(pacer_default_rate_tick_shift(50, 1000000000ULL, PACER_BACKEND_TABLE), 16);
	ck_assert_uint_eq(pacer_default_rate_tick_shift(1, 1000000000ULL, PACER_BACKEND_SKETCH),
			  pacer_default_tick_shift(1000000000ULL));
	ck_assert_int_eq(rate_fit(50, 1000000000ULL, 16, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 0);
	ck_assert_uint_le(r.sat, PACER_RATE_TBL_MAX_SAT);
	ck_assert_uint_eq(pacer_rate_credits(r.sat, &r), 50);
	/* Refusals name the rate in the user's units and what to change. */
	ck_assert_int_eq(rate_fit(100, 60000000000ULL, 24, PACER_BACKEND_SKETCH, &r, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--backend table"));
	ck_assert_int_eq(rate_fit(10, 1000000000ULL, 20, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--rate 10/1 s does not fit tick 1.049 ms on the table"));
	ck_assert_ptr_nonnull(strstr(err, "it needs a tick of 262.144 us"));
	ck_assert_int_eq(rate_fit(1000, 3600000000000ULL, 24, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "16384 ticks"));
	ck_assert_ptr_nonnull(strstr(err, "--rate 75/270 s")); /* the same spacing, a burst that fits */
	ck_assert_int_eq(rate_fit(1, 2000000000ULL, 24, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--interval 2 s does not fit tick"));
}
END_TEST

/*
 * One source sending every gap_ns from start for dur_ns: what the backend
 * admits, and what the exact greedy GCRA in ns admits of the same packets.
 * Every admission must conform to the exact GCRA too.
 */
struct flow {
	struct ns_gcra greedy, adm; /* the exact GCRA fed every packet, and fed the admitted ones */
};

static void flood(struct rsim *s, uint64_t h, struct flow *f, uint32_t n, uint64_t period,
		  uint64_t start, uint64_t dur_ns, uint64_t gap_ns, uint64_t *got, uint64_t *exact)
{
	uint64_t t;

	*got = *exact = 0;
	for (t = start; t < start + dur_ns; t += gap_ns) {
		if (ns_conforms(&f->greedy, t, n, period)) {
			ns_admit(&f->greedy, t, n, period);
			++*exact;
		}
		if (rsim_packet(s, h, t))
			continue;
		ck_assert_msg(ns_conforms(&f->adm, t, n, period),
			      "rate %u/%llu ns: admission at %llu breaks GCRA", n, (unsigned long long)period,
			      (unsigned long long)t);
		ns_admit(&f->adm, t, n, period);
		++*got;
	}
}

/* What load says to --rate n/period on a backend at its default tick: layout_build's result. */
static int load_says(uint32_t n, uint64_t period, uint32_t backend, char *err, size_t len)
{
	struct layout_req req = { .interval_ns = period, .rate_n = n, .width = 1 << 16, .rows = 4,
				  .kind = PACER_LAYOUT_ROWS, .placement = PACER_PLACEMENT_SHARED,
				  .backend = backend, .ncpus = 1 };
	struct pacer_layout lay;
	struct pacer_rate r;

	err[0] = '\0';
	return layout_build(&req, &lay, &r, err, len);
}

/* Packets of one source at one instant that pass. */
static uint32_t at_once(struct rsim *s, uint64_t h, uint64_t t, uint32_t tries)
{
	uint32_t got = 0;

	while (tries--)
		got += !rsim_packet(s, h, t);
	return got;
}

/*
 * The issue's rates at load's default tick, one source at 2000 packets/s
 * (as `gen --sources 1 --pps 2000`): the table gives exactly N at once,
 * within 1 % of the exact GCRA over 3 s and over 100 T, never more; again
 * N at once after an idle spell; the rates it cannot deliver so, and every
 * rate on the sketch, are refused naming what to use.
 */
START_TEST(test_issue_rates)
{
	static const struct {
		uint32_t n;
		uint64_t period;
	} ok[] = {
		{ 50, 1000000000ULL }, { 10, 1000000000ULL }, { 5, 100000000ULL }, { 5, 1000000000ULL },
		{ 80, 1000000000ULL }, { 4, 2000000000ULL }, { 2, 3000000ULL },
	}, sketch_refused[] = {
		{ 50, 1000000000ULL }, { 10, 1000000000ULL }, { 5, 100000000ULL }, { 60, 1000000000ULL },
		{ 2, 1000000000ULL },
	};
	const uint64_t gap = 500000, start = 1000000000000ULL; /* 2000 packets/s, from 1000 s */
	char err[512], what[64];
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t n = ok[i].n, shift = pacer_default_rate_tick_shift(n, ok[i].period, PACER_BACKEND_TABLE);
		uint64_t period = ok[i].period, got, exact, t, idle;
		struct flow f = { { 0 }, { 0 } };
		struct pacer_rate r;
		struct rsim s;
		uint64_t h;

		snprintf(what, sizeof(what), "table --rate %u/%llu ns", n, (unsigned long long)period);
		ck_assert_msg(rate_fit(n, period, shift, PACER_BACKEND_TABLE, &r, err, sizeof(err)) == 0,
			      "%s: %s", what, err);
		rsim_init(&s, &big[2], shift, &r, PACER_POLICY_PACE, PACER_PLACEMENT_PERCPU, 11 + i);
		h = rsim_hash(&s, 1);
		/* 3 s at 2000 packets/s, as the issue measured. */
		flood(&s, h, &f, n, period, start, 3000000000ULL, gap, &got, &exact);
		ck_assert_msg(got <= exact && 100 * got >= 99 * exact, "%s: 3 s: %llu admitted, exact GCRA %llu",
			      what, (unsigned long long)got, (unsigned long long)exact);
		/* A long window: 100 T more. */
		t = start + 3000000000ULL;
		flood(&s, h, &f, n, period, t, 100 * period, gap > period / n / 4 ? period / n / 4 : gap, &got,
		      &exact);
		ck_assert_msg(got <= exact && 100 * got >= 99 * exact,
			      "%s: 100 T: %llu admitted, exact GCRA %llu", what, (unsigned long long)got,
			      (unsigned long long)exact);
		/* Sent faster than N/T for 100 T: at least 99 % of N/T (and the burst spent). */
		ck_assert_msg(100 * got >= 99 * 100 * (uint64_t)n, "%s: %llu in 100 T", what,
			      (unsigned long long)got);
		ck_assert_uint_le(got, 101 * (uint64_t)n);
		/* Idle for a full burst's ages (below the 16-bit wrap), then exactly N at once. */
		t += 100 * period;
		idle = ((uint64_t)r.sat + 1) << shift;
		ck_assert_uint_eq(at_once(&s, h, t + idle, n + 5), n);
		/* A fresh source: exactly N at once. */
		ck_assert_uint_eq(at_once(&s, rsim_hash(&s, 2), t, n + 5), n);
		rsim_free(&s);
	}
	/* 1000/1s: beyond what the table's 16384 ticks space within 1 %: refused, with an alternative. */
	ck_assert_int_eq(load_says(1000, 1000000000ULL, PACER_BACKEND_TABLE, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "--rate 1000/1 s"));
	ck_assert_ptr_nonnull(strstr(err, "--rate 66/66.000 ms"));
	for (i = 0; i < sizeof(sketch_refused) / sizeof(sketch_refused[0]); i++) {
		uint32_t n = sketch_refused[i].n;

		ck_assert_int_eq(load_says(n, sketch_refused[i].period, PACER_BACKEND_SKETCH, err,
						     sizeof(err)), 2);
		ck_assert_msg(strstr(err, "use --backend table") && !strstr(err, "does not fit tick"), "%s", err);
	}
	ck_assert_ptr_nonnull(strstr(err, "--rate 2/1 s"));
}
END_TEST

/*
 * Every rate load accepts, on either backend, at its default tick or any
 * other: a full burst is exactly N, and the spacing is T/N or more, within
 * 1 % of it.  Whatever is refused says why.
 */
START_TEST(test_accepted_rates_deliver)
{
	struct rng g = { 99 };
	uint32_t i, accepted = 0, refused = 0;

	for (i = 0; i < 3000; i++) {
		uint64_t x = rnd(&g), period = 1000ULL + rnd(&g) % (x % 3 ? 10000000000ULL : PACER_RATE_MAX_PERIOD_NS);
		uint32_t n = 2 + (uint32_t)(x % (x >> 32 & 1 ? 200 : PACER_RATE_MAX_N - 1));
		uint32_t backend = (x >> 40) & 1 ? PACER_BACKEND_TABLE : PACER_BACKEND_SKETCH;
		uint32_t shift = (x >> 41) & 1 ? pacer_default_rate_tick_shift(n, period, backend)
					       : (uint32_t)((x >> 42) % (PACER_TICK_SHIFT_MAX + 1));
		struct pacer_rate r;
		char err[512];
		unsigned __int128 spacing_ns;

		if (rate_fit(n, period, shift, backend, &r, err, sizeof(err))) {
			ck_assert_msg(strstr(err, "--rate ") && (strstr(err, "1 %") || strstr(err, "tick")), "%s", err);
			refused++;
			continue;
		}
		accepted++;
		ck_assert_int_eq(backend, PACER_BACKEND_TABLE);
		ck_assert_uint_eq(pacer_rate_credits(r.sat, &r), n);
		ck_assert_uint_le(r.sat, PACER_RATE_TBL_MAX_SAT);
		spacing_ns = (unsigned __int128)pacer_rate_spacing(&r) << shift;
		ck_assert(spacing_ns * n >= period);
		ck_assert(spacing_ns * n * 99 <= (unsigned __int128)period * 100);
	}
	ck_assert_uint_gt(accepted, 150);
	ck_assert_uint_gt(refused, 150);
}
END_TEST

/* 20 fresh sources x 8 packets back to back under 5/1s: 5 each, both backends. */
START_TEST(test_fresh_sources_get_n)
{
	const struct bk *b = &big[_i];
	const uint64_t period = 1000000000ULL, t = 5000000000ULL;
	uint32_t shift = pacer_default_rate_tick_shift(5, period, b->table ? PACER_BACKEND_TABLE
									  : PACER_BACKEND_SKETCH);
	struct pacer_rate r;
	struct rsim s;
	uint32_t k, p;

	ck_assert_int_eq(pacer_rate_ticks(5, period, shift, b->table ? PACER_RATE_TBL_MAX_SAT
								      : PACER_MAX_THRESH, &r), 0);
	rsim_init(&s, b, shift, &r, PACER_POLICY_PACE, PACER_PLACEMENT_PERCPU, 21);
	for (k = 0; k < 20; k++) {
		uint64_t h = rsim_hash(&s, 100 + k);
		uint32_t got = 0;

		for (p = 0; p < 8; p++)
			got += !rsim_packet(&s, h, t + (uint64_t)(k * 8 + p) * 1000);
		ck_assert_msg(got == 5, "%s: source %u got %u of 8", b->name, k, got);
	}
	rsim_free(&s);
}
END_TEST

/*
 * N = 1 is the pacing of before, bit for bit: verdicts, ages and the final
 * bytes of tiny (heavily colliding) structures over one stream, hashed; the
 * expected hashes were computed with the code before --rate existed (the
 * recency cells of the previous commit on main), all backends, layouts,
 * placements and policies.
 */
static uint64_t golden_run(int table, uint32_t kind, uint32_t placement, uint32_t policy,
			   const uint64_t *hs, const uint64_t *ticks, size_t n)
{
	const uint32_t rows = table ? 1 : 4, lines_log2 = 3;
	size_t nl = table ? (1u << lines_log2) : (kind == PACER_LAYOUT_ROWS ? rows << lines_log2 : 1u << lines_log2);
	uint8_t *mem = calloc(nl, 64);
	struct pacer_rate rate = pacer_rate_of(33, 0);
	uint64_t hsh = 1469598103934665603ULL;
	size_t i;

	ck_assert_ptr_nonnull(mem);
	for (i = 0; i < n; i++) {
		uint32_t age, ev, rebased = 0;
		int d;

		if (table) {
			struct pacer_tbl_line *l[2];
			uint32_t idx[2];

			pacer_tbl_lines(hs[i], lines_log2, idx);
			l[0] = (struct pacer_tbl_line *)mem + idx[0];
			l[1] = (struct pacer_tbl_line *)mem + idx[1];
			d = pacer_tbl_verdict(l, pacer_tbl_fp(hs[i]), ticks[i], &rate, policy,
					      PACER_TBL_FULL_DROP, placement, 1, &age, &ev);
		} else {
			struct pacer_line *line[PACER_MAX_ROWS];
			uint32_t idx[PACER_MAX_ROWS] = { 0 }, cell[PACER_MAX_ROWS] = { 0 }, r;

			pacer_slots(kind, rows, lines_log2, hs[i], idx, cell);
			for (r = 0; r < rows; r++)
				line[r] = (struct pacer_line *)mem + idx[r];
			d = pacer_sketch_packet(line, cell, rows, ticks[i], &rate, policy, placement, &age,
						&rebased);
		}
		hsh = (hsh ^ (uint64_t)d ^ ((uint64_t)age << 8)) * 1099511628211ULL;
	}
	for (i = 0; i < nl * 64; i++)
		hsh = (hsh ^ mem[i]) * 1099511628211ULL;
	free(mem);
	return hsh;
}

START_TEST(test_n1_golden)
{
	static const struct {
		int table;
		uint32_t kind, placement, policy;
		uint64_t want;
	} gold[] = {
		{ 0, 0, 0, 0, 0x31f1681e69a27e7bULL }, { 0, 0, 0, 1, 0x2e1e6c55de992d4eULL },
		{ 0, 0, 1, 0, 0x31f1681e69a27e7bULL }, { 0, 0, 1, 1, 0x2e1e6c55de992d4eULL },
		{ 0, 1, 0, 0, 0xda5d1b1d445752beULL }, { 0, 1, 0, 1, 0x1182eecfefef3358ULL },
		{ 0, 1, 1, 0, 0xda5d1b1d445752beULL }, { 0, 1, 1, 1, 0x1182eecfefef3358ULL },
		{ 1, 0, 0, 0, 0xfb2bda9ac8849120ULL }, { 1, 0, 0, 1, 0xd3862186b62c5b98ULL },
		{ 1, 0, 1, 0, 0xfb2bda9ac8849120ULL }, { 1, 0, 1, 1, 0xd3862186b62c5b98ULL },
	};
	const size_t n = 200000;
	uint64_t *h = malloc(n * 8), *t = malloc(n * 8), tick = 5, s = 1;
	size_t i;

	ck_assert(h && t);
	for (i = 0; i < n; i++) {
		s = pacer_mix64(s + i);
		h[i] = pacer_mix64(s % 300 + 77);
		if (s % 3 == 0)
			tick++;
		if (s % 5000 == 0)
			tick += s % 900;
		t[i] = tick;
	}
	for (i = 0; i < sizeof(gold) / sizeof(gold[0]); i++)
		ck_assert_msg(golden_run(gold[i].table, gold[i].kind, gold[i].placement, gold[i].policy, h,
					 t, n) == gold[i].want,
			      "case %zu (table %d, kind %u, placement %u, policy %u) differs from before",
			      i, gold[i].table, gold[i].kind, gold[i].placement, gold[i].policy);
	free(h);
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rate");
	TCase *tc = tcase_create("gcra");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rate_ticks);
	tcase_add_test(tc, test_cli_rate);
	tcase_add_test(tc, test_issue_rates);
	tcase_add_test(tc, test_accepted_rates_deliver);
	tcase_add_loop_test(tc, test_fresh_sources_get_n, 0, 3);
	tcase_add_loop_test(tc, test_exact_without_collisions, 0, 6);
	tcase_add_loop_test(tc, test_one_sided_under_collisions, 0, 6);
	tcase_add_test(tc, test_table_wrap_one_sided);
	tcase_add_test(tc, test_n1_is_interval);
	tcase_add_test(tc, test_n1_golden);
	tcase_add_test(tc, test_n1_exact_pacing);
	tcase_add_test(tc, test_window_bounds);
	tcase_add_test(tc, test_credits_match_burst);
	tcase_add_loop_test(tc, test_quiet_resets_credit, 0, 3);
	tcase_add_loop_test(tc, test_shared_race, 0, 6);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
