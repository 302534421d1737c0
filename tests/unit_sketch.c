// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the logic the datapath shares with userspace: hashing, slot
 * derivation, prefix masks, modular ages and epochs, thresholds, the model
 * (the CLI's parsers are in unit_parse.c).
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pacer_defaults.h"
#include "pacer_sketch.h"
#include "cli_values.h" /* addresses for the mask tests */
#include "race.h"
#include "sketch_sim.h"

static const __u64 test_key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

START_TEST(test_mix64_is_bijective_on_sample)
{
	/* Distinct inputs never collide in a bijection: check a dense sample. */
	enum { N = 1 << 16 };
	__u64 *v = malloc(N * sizeof(*v));
	int i, j, dup = 0;

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < N; i++)
		v[i] = pacer_mix64((__u64)i);
	for (i = 0; i < N && !dup; i++)
		for (j = i + 1; j < i + 64 && j < N; j++)
			dup |= v[i] == v[j];
	ck_assert_int_eq(dup, 0);
	ck_assert_uint_ne(pacer_mix64(1), 1);
	free(v);
}
END_TEST

START_TEST(test_hash_depends_on_key_and_family)
{
	__u64 other[2] = { test_key[0] ^ 1, test_key[1] };

	ck_assert_uint_ne(pacer_hash_v4(test_key, 0x0100000a), pacer_hash_v4(other, 0x0100000a));
	ck_assert_uint_ne(pacer_hash_v4(test_key, 0x0100000a), pacer_hash_v4(test_key, 0x0200000a));
	/* An IPv6 key spelling the IPv4 word must not land on the IPv4 hash. */
	ck_assert_uint_ne(pacer_hash_v4(test_key, 0x0100000a), pacer_hash_v6(test_key, 0x0100000a, 0));
	ck_assert_uint_eq(pacer_hash_v6(test_key, 5, 7), pacer_hash_v6(test_key, 5, 7));
}
END_TEST

START_TEST(test_hash_low_bits_uniform)
{
	/* Sequential addresses (a typical scan) must spread over lines evenly. */
	enum { LINES = 256, N = LINES * 200 };
	unsigned count[LINES] = { 0 }, i, min = N, max = 0;

	for (i = 0; i < N; i++)
		count[pacer_hash_v4(test_key, __builtin_bswap32(0x0a000000u + i)) & (LINES - 1)]++;
	for (i = 0; i < LINES; i++) {
		min = count[i] < min ? count[i] : min;
		max = count[i] > max ? count[i] : max;
	}
	/* 200 expected per line; +-40% is > 5 sigma. */
	ck_assert_uint_gt(min, 120);
	ck_assert_uint_lt(max, 280);
}
END_TEST

START_TEST(test_masks_v4)
{
	struct pacer_addr a;

	ck_assert_int_eq(parse_address("192.168.37.201", &a), 0);
	pacer_addr_mask(&a, 24);
	ck_assert_uint_eq(a.bytes[0], 192);
	ck_assert_uint_eq(a.bytes[2], 37);
	ck_assert_uint_eq(a.bytes[3], 0);
	ck_assert_int_eq(parse_address("192.168.37.201", &a), 0);
	pacer_addr_mask(&a, 0);
	ck_assert_uint_eq(a.lo, 0);
	ck_assert_int_eq(parse_address("192.168.37.201", &a), 0);
	pacer_addr_mask(&a, 32);
	ck_assert_uint_eq(a.bytes[3], 201);
	ck_assert_int_eq(parse_address("192.168.37.201", &a), 0);
	pacer_addr_mask(&a, 20);
	ck_assert_uint_eq(a.bytes[2], 32); /* 37 = 0b00100101, top 4 bits kept */
	ck_assert_uint_eq(pacer_mask4(32), 0xffffffffu);
	ck_assert_uint_eq(pacer_mask4(0), 0);
}
END_TEST

START_TEST(test_masks_v6)
{
	struct pacer_addr a, b;
	int i;

	for (i = 0; i <= 128; i++) {
		int byte;

		ck_assert_int_eq(parse_address("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", &a), 0);
		pacer_addr_mask(&a, (unsigned)i);
		/* Count the bits left set: exactly the prefix's worth of ones in the masked part. */
		for (byte = 0; byte < 16; byte++) {
			int keep = i - byte * 8;
			unsigned want;

			ck_assert_int_eq(parse_address("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", &b), 0);
			want = keep >= 8 ? b.bytes[byte] : keep <= 0 ? 0 : (b.bytes[byte] & (0xff00u >> keep) & 0xff);
			ck_assert_uint_eq(a.bytes[byte], want);
		}
	}
	ck_assert_uint_eq(pacer_mask6_hi(64), 0);
	ck_assert_uint_eq(pacer_mask6_lo(64), ~0ULL);
	ck_assert_uint_eq(pacer_mask6_hi(128), ~0ULL);
}
END_TEST

/*
 * Check's assertions each write a checkpoint to a pipe its parent reads:
 * millions of them took 85 s at load 20 (past the 60 s timeout) for 2 s
 * of CPU.  The loops below assert only on a mismatch (as unit_dense does).
 */
#define EXPECT(cond, ...)                               \
	do {                                            \
		if (!(cond))                            \
			ck_assert_msg(cond, __VA_ARGS__); \
	} while (0)

START_TEST(test_slots_in_range)
{
	__u32 rows, kind, i, r;

	for (kind = 0; kind < 2; kind++) {
		for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
			__u32 lg = 5, seen_cell[PACER_LINE_CELLS] = { 0 };

			for (i = 0; i < 20000; i++) {
				__u32 idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS];
				__u64 h = pacer_mix64(i * 7919ULL + rows);

				pacer_slots(kind, rows, lg, h, idx, cell);
				for (r = 0; r < rows; r++) {
					EXPECT(cell[r] < PACER_LINE_CELLS, "kind %u rows %u key %u: cell %u", kind,
					       rows, i, cell[r]);
					EXPECT(idx[r] < pacer_total_lines(kind, rows, lg),
					       "kind %u rows %u key %u: line %u", kind, rows, i, idx[r]);
					if (kind == PACER_LAYOUT_ROWS) {
						EXPECT(idx[r] >> lg == r, "rows %u key %u: row %u's line %u",
						       rows, i, r, idx[r]);
					} else {
						EXPECT(idx[r] == idx[0], "rows %u key %u: row %u's line %u, not %u",
						       rows, i, r, idx[r], idx[0]);
						EXPECT(cell[r] >= r * pacer_seg_cells(rows) &&
							       cell[r] < (r + 1) * pacer_seg_cells(rows),
						       "rows %u key %u: row %u's cell %u outside its segment", rows,
						       i, r, cell[r]);
					}
					seen_cell[cell[r]]++;
				}
			}
			/* Rows layout uses every cell of a line. */
			if (kind == PACER_LAYOUT_ROWS)
				for (i = 0; i < PACER_LINE_CELLS; i++)
					ck_assert_uint_gt(seen_cell[i], 0);
		}
	}
}
END_TEST

START_TEST(test_rows_are_independent)
{
	/*
	 * Two keys sharing their row-0 cell must not share the other rows:
	 * the failure the public i*h(x) scheme has.
	 */
	__u32 lg = 4, shared_all = 0, pairs = 0, i, j;
	static __u32 c0[4096], i0[4096], c1[4096], i1[4096];

	for (i = 0; i < 4096; i++) {
		__u32 idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS];

		pacer_slots(PACER_LAYOUT_ROWS, 2, lg, pacer_hash_v4(test_key, i), idx, cell);
		i0[i] = idx[0];
		c0[i] = cell[0];
		i1[i] = idx[1];
		c1[i] = cell[1];
	}
	for (i = 0; i < 4096; i++)
		for (j = i + 1; j < 4096; j++)
			if (i0[i] == i0[j] && c0[i] == c0[j]) {
				pairs++;
				shared_all += i1[i] == i1[j] && c1[i] == c1[j];
			}
	ck_assert_uint_gt(pairs, 100);
	/* Independent rows: about pairs / (16 * 62) of them collide again. */
	ck_assert_uint_lt(shared_all, 1 + pairs / 100);
}
END_TEST

START_TEST(test_cell_age_modular_and_stale)
{
	struct pacer_line l;
	__u64 tick = 1000000;

	memset(&l, 0, sizeof(l));
	pacer_cell_touch(&l, 3, tick, 0);
	ck_assert_uint_eq(l.epoch, pacer_epoch(tick));
	ck_assert_uint_eq(pacer_cell_age(&l, 3, tick), 0);
	ck_assert_uint_eq(pacer_cell_age(&l, 3, tick + 17), 17);
	/* Still exact one epoch later. */
	ck_assert_uint_eq(pacer_cell_age(&l, 3, tick + 100), 100);
	/* Two epochs behind: the whole line is stale whatever the cells say. */
	ck_assert_uint_eq(pacer_cell_age(&l, 3, ((tick >> PACER_EPOCH_SHIFT) + 2) << PACER_EPOCH_SHIFT),
			  PACER_AGE_STALE);
}
END_TEST

/*
 * A line nothing has written (all zero, as maps start) holds no source,
 * whatever the clock says: at boot (fewer than 64 ticks since it) and
 * around every wrap of the epoch counter.
 */
START_TEST(test_never_written_line_is_never_seen)
{
	const __u64 wrap = (__u64)(PACER_EPOCH_MASK + 1) << PACER_EPOCH_SHIFT;
	const __u64 bases[] = { 0, wrap - 64, 2 * wrap, 3 * wrap + 5, 1ULL << 40 };
	struct pacer_line l;
	__u64 t;
	__u32 b, c;

	memset(&l, 0, sizeof(l));
	for (b = 0; b < sizeof(bases) / sizeof(bases[0]); b++)
		for (t = bases[b]; t < bases[b] + 4 * 64; t++)
			for (c = 0; c < PACER_LINE_CELLS; c++)
				ck_assert_msg(pacer_cell_age(&l, c, t) == PACER_AGE_STALE,
					      "tick %llu cell %u: a never-written line looks seen (age %u)",
					      (unsigned long long)t, c, pacer_cell_age(&l, c, t));
}
END_TEST

/*
 * The case: up 18 minutes, interval 3600 s (tick 2^37 ns, 137 s):
 * new sources pass once each, and the guarantee still holds for them.
 */
START_TEST(test_new_sources_pass_soon_after_boot)
{
	const __u64 key[2] = { 0x1234567, 0x89abcdef };
	uint32_t tick_shift = 37, src;
	uint64_t interval = 3600000000000ULL, boot = 18 * 60 * 1000000000ULL;
	struct sketch_sim s;

	ck_assert_int_eq(sketch_sim_init(&s, 4, PACER_LAYOUT_ROWS, 10, tick_shift,
					 pacer_thresh_ticks(interval, tick_shift), PACER_POLICY_PACE, key), 0);
	for (src = 0; src < 5; src++) {
		uint64_t h = sketch_sim_hash(&s, 4, 0x0a636300u + src, 0);

		ck_assert_uint_eq(sketch_sim_age(&s, h, boot), PACER_AGE_STALE);
		ck_assert_int_eq(sketch_sim_packet(&s, h, boot + src, NULL), 0);
		ck_assert_int_eq(sketch_sim_packet(&s, h, boot + src + 1, NULL), 1);
		ck_assert_int_eq(sketch_sim_packet(&s, h, boot + interval - 1, NULL), 1);
	}
	/* At the very start of the clock too. */
	ck_assert_int_eq(sketch_sim_packet(&s, sketch_sim_hash(&s, 4, 0x0a010101u, 0), 0, NULL), 0);
	ck_assert_int_eq(sketch_sim_packet(&s, sketch_sim_hash(&s, 4, 0x0a010101u, 0), 1, NULL), 1);
	sketch_sim_free(&s);
}
END_TEST

START_TEST(test_rebase_expires_old_cells_only)
{
	struct pacer_line l;
	__u64 t0 = 640000, t1;
	int i;

	memset(&l, 0, sizeof(l));
	for (i = 0; i < PACER_LINE_CELLS; i++)
		pacer_cell_touch(&l, (__u32)i, t0 + (__u64)i, 0);
	/* Into the next epoch: cells younger than 64 ticks keep their age. */
	t1 = ((((t0 + 61) >> PACER_EPOCH_SHIFT) + 1) << PACER_EPOCH_SHIFT) + 10;
	pacer_cell_touch(&l, 0, t1, 0);
	ck_assert_uint_eq(l.epoch, pacer_epoch(t1));
	ck_assert_uint_eq(pacer_cell_age(&l, 0, t1), 0);
	for (i = 1; i < PACER_LINE_CELLS; i++) {
		__u64 true_age = t1 - (t0 + (__u64)i);
		__u32 got = pacer_cell_age(&l, (__u32)i, t1);

		if (true_age >= PACER_MAX_THRESH)
			ck_assert_uint_eq(got, PACER_MAX_THRESH);
		else
			ck_assert_uint_eq(got, true_age);
	}
}
END_TEST

/*
 * The word-wise, branch-free re-base against the rule stated per cell: every
 * cell value at every tick, in every byte position, with and without
 * expire_all, and the last word's epoch bytes left alone.
 */
/* An update is max(cell, now): a cell written a tick ahead (another CPU's clock) stays. */
START_TEST(test_touch_keeps_a_newer_cell)
{
	struct pacer_line l;
	__u64 t = 640000 + 5;

	memset(&l, 0, sizeof(l));
	pacer_cell_touch(&l, 3, t + 1, 0);
	pacer_cell_touch(&l, 3, t, 0);
	ck_assert_uint_eq(l.cell[3], (__u8)(t + 1));
	ck_assert_uint_eq(pacer_cell_age(&l, 3, t), 0);
	ck_assert_uint_eq(pacer_cell_age(&l, 3, t + 2), 1);
	pacer_cell_touch(&l, 3, t + 2, 0);
	ck_assert_uint_eq(l.cell[3], (__u8)(t + 2));
}
END_TEST

/*
 * A CPU whose clock reading lags (skew, a held-up vCPU) sees lines re-based
 * into later epochs: up to PACER_EPOCH_AHEAD_MAX epochs ahead they are
 * current, and its write must not move them back in time.
 */
START_TEST(test_line_ahead_is_current_and_not_rebased_back)
{
	struct pacer_line l;
	__u64 now = 64ULL * 100000 + 7, lag;
	int k;

	for (k = 1; k <= PACER_EPOCH_AHEAD_MAX + 1; k++) {
		memset(&l, 0, sizeof(l));
		pacer_cell_touch(&l, 5, now, 0);      /* written by the CPU that is on time */
		lag = now - 64ULL * (__u64)k;      /* a CPU k epochs behind it */
		if (k <= PACER_EPOCH_AHEAD_MAX) {
			ck_assert_uint_ne(pacer_cell_age(&l, 9, lag), PACER_AGE_STALE);
			ck_assert_int_eq(pacer_cell_touch(&l, 9, lag, 0), 0);
			ck_assert_uint_eq(l.epoch, pacer_epoch(now));
			ck_assert_uint_eq(pacer_cell_age(&l, 5, now), 0);
		} else {
			ck_assert_uint_eq(pacer_cell_age(&l, 9, lag), PACER_AGE_STALE);
		}
	}
}
END_TEST

START_TEST(test_rebase_word_matches_cell_rule)
{
	uint64_t tick, v, pos;

	for (tick = 1000; tick < 1000 + 256; tick += 37) {
		for (v = 0; v < 256; v++) {
			for (pos = 0; pos < 8; pos++) {
				/* neighbours: distinct ages so a borrow across bytes would show */
				uint64_t w = 0x5a3c96f00fa5c369ULL ^ (tick * 0x9e3779b97f4a7c15ULL);
				uint64_t out, out_all, last;
				uint8_t age, want, got;
				int ex;

				w = (w & ~(0xffULL << (8 * pos))) | (v << (8 * pos));
				out = pacer_rebase_word(w, 8, tick, 0);
				out_all = pacer_rebase_word(w, 8, tick, 1);
				for (ex = 0; ex < 8; ex++) {
					uint8_t c = (uint8_t)(w >> (8 * ex));

					age = (uint8_t)((uint8_t)tick - c);
					want = age >= PACER_MAX_THRESH && age < PACER_AGE_FUTURE ?
						(uint8_t)(tick - PACER_MAX_THRESH) : c;
					got = (uint8_t)(out >> (8 * ex));
					ck_assert_msg(got == want, "tick %llu byte %d cell %u: got %u want %u",
						      (unsigned long long)tick, ex, c, got, want);
					ck_assert_uint_eq((uint8_t)(out_all >> (8 * ex)),
							  (uint8_t)(tick - PACER_MAX_THRESH));
				}
				last = pacer_rebase_last_word(w, tick, 1);
				ck_assert_uint_eq(last >> 48, pacer_epoch(tick));
				ck_assert_uint_eq(last & 0xffffffffffffULL,
						  out_all & 0xffffffffffffULL);
			}
		}
	}
}
END_TEST

START_TEST(test_wrapped_cell_never_looks_recent_after_rebase)
{
	/* A cell written exactly 256 ticks before a write to its line must not alias to age 0. */
	struct pacer_line l;
	__u64 t0 = 1 << 20;

	memset(&l, 0, sizeof(l));
	pacer_cell_touch(&l, 1, t0, 0);
	pacer_cell_touch(&l, 2, t0 + 256, 0); /* re-bases: cell 1 is 256 ticks old */
	ck_assert_uint_ge(pacer_cell_age(&l, 1, t0 + 256), PACER_MAX_THRESH);
	ck_assert_uint_ge(pacer_cell_age(&l, 1, t0 + 300), PACER_MAX_THRESH);
}
END_TEST

START_TEST(test_thresh_ticks)
{
	ck_assert_uint_eq(pacer_thresh_ticks(1000000000ULL, 25), 31); /* 29.8 -> 30, +1 */
	ck_assert_uint_eq(pacer_thresh_ticks(1ULL << 30, 25), 33);     /* exact 32, +1 */
	ck_assert_uint_eq(pacer_thresh_ticks(63ULL << 25, 25), 64);
	ck_assert_uint_eq(pacer_thresh_ticks((63ULL << 25) + 1, 25), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(0, 25), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(1, 25), 2);
}
END_TEST

/*
 * The shared tick and interval bounds at and beyond their edges, including
 * the values that once hung load or overflowed (run under UBSan: no shift
 * of 64 or more, no overflow).
 */
START_TEST(test_tick_and_interval_bounds)
{
	ck_assert_uint_eq(PACER_INTERVAL_MAX_NS, 63ULL << 40);
	ck_assert_int_eq(pacer_tick_shift_of(1), 0);
	ck_assert_int_eq(pacer_tick_shift_of(3), 1);
	ck_assert_int_eq(pacer_tick_shift_of(33554432), 25);
	ck_assert_int_eq(pacer_tick_shift_of(PACER_TICK_MAX_NS), PACER_TICK_SHIFT_MAX);
	ck_assert_int_eq(pacer_tick_shift_of(PACER_TICK_MAX_NS + 1), -1);
	ck_assert_int_eq(pacer_tick_shift_of(2199023255552ULL), -1);       /* 2^41 */
	ck_assert_int_eq(pacer_tick_shift_of(4611686018427387904ULL), -1); /* 2^62 */
	ck_assert_int_eq(pacer_tick_shift_of(10000000000ULL * 1000000000ULL), -1);
	ck_assert_int_eq(pacer_tick_shift_of(UINT64_MAX), -1);
	ck_assert_int_eq(pacer_tick_shift_of(0), -1);
	ck_assert_uint_eq(pacer_thresh_ticks(PACER_INTERVAL_MAX_NS, PACER_TICK_SHIFT_MAX), 64);
	ck_assert_uint_eq(pacer_thresh_ticks(PACER_INTERVAL_MAX_NS + 1, PACER_TICK_SHIFT_MAX), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(10800000000000ULL, 41), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(1000000000ULL, 62), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(1000000000ULL, 64), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(1000000000ULL, 200), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(UINT64_MAX, PACER_TICK_SHIFT_MAX), 0);
	ck_assert_uint_eq(pacer_thresh_ticks(UINT64_MAX - 5, 0), 0);
}
END_TEST

START_TEST(test_model_values)
{
	/* rows: (1 - e^{-n/w})^d with w = 62 usable cells per 64-byte line. */
	double w = 62.0 * (1 << 10), p = sketch_model_false_drop(PACER_LAYOUT_ROWS, 4, 10, w * 0.38);

	ck_assert_double_eq_tol(p, pow(1 - exp(-0.38), 4), 1e-12);
	ck_assert_double_lt(p, 0.011);
	/* Blocked pays for locality: same memory, same load, more false drops. */
	ck_assert_double_gt(sketch_model_false_drop(PACER_LAYOUT_BLOCKED, 4, 12, w * 0.38), p);
	ck_assert_double_eq(sketch_model_false_drop(PACER_LAYOUT_ROWS, 4, 10, 0), 0);
	/* Crowded lines (large Poisson mean) must not underflow to "no drops". */
	ck_assert_double_gt(sketch_model_false_drop(PACER_LAYOUT_BLOCKED, 4, 0, 1e5), 0.99);
	ck_assert_double_gt(sketch_model_false_drop(PACER_LAYOUT_BLOCKED, 8, 4, 3000), 0.5);
}
END_TEST

/* The compiled default threshold is the one the default interval and tick give. */
START_TEST(test_default_thresh_matches_interval)
{
	ck_assert_uint_eq(pacer_thresh_ticks(PACER_DEFAULT_INTERVAL_NS, PACER_DEFAULT_TICK_SHIFT),
			  PACER_DEFAULT_THRESH);
}
END_TEST

/* What pacer_line_rebase() must leave in one cell, stated per cell (see pacer_sketch.h). */
static __u8 rebased_cell(__u8 c, __u64 tick, __u16 behind)
{
	__u8 age = (__u8)((__u8)tick - c);

	if (pacer_line_current(behind))
		return c;
	if (behind >= 2 || (age >= PACER_MAX_THRESH && age < PACER_AGE_FUTURE))
		return (__u8)(tick - PACER_MAX_THRESH);
	return c;
}

/*
 * The shared-safe whole-line re-base, alone on a line, against the per-cell
 * rule: random cells, lines 0 to 3 epochs behind, ahead, and never written.
 */
START_TEST(test_line_rebase_matches_cell_rule)
{
	__u64 seed = 12345;
	int n;

	for (n = 0; n < 20000; n++) {
		struct pacer_line l, before;
		__u64 tick = 64ULL * 1000 + (pacer_mix64(++seed) % 64);
		__s64 shift = (__s64)(pacer_mix64(++seed) % 6) - 1; /* -1 (ahead) .. 4 epochs behind */
		__u16 behind;
		int i;

		for (i = 0; i < PACER_LINE_CELLS; i++)
			l.cell[i] = (__u8)pacer_mix64(++seed);
		l.epoch = n % 50 == 0 ? 0 : pacer_epoch(tick - 64ULL * shift);
		before = l;
		behind = pacer_line_behind(l.epoch, tick);
		pacer_line_rebase(&l, tick);
		for (i = 0; i < PACER_LINE_CELLS; i++)
			EXPECT(l.cell[i] == rebased_cell(before.cell[i], tick, behind),
			       "cell %d was %u, behind %u: got %u", i, before.cell[i], behind, l.cell[i]);
		EXPECT(l.epoch == (pacer_line_current(behind) ? before.epoch : pacer_epoch(tick)),
		       "epoch %u, behind %u: got %u", before.epoch, behind, l.epoch);
	}
}
END_TEST

/*
 * Two CPUs write fresh cells into one line that needs a re-base: both
 * re-base it at once, each writes half the cells.  No fresh cell may be
 * lost to the other's re-base (it would read as expired: a false pass).
 */
struct rebase_race {
	struct pacer_line line;
	__u64 tick;
	int lost;
};

static void rebase_setup(struct race *r, int round)
{
	struct rebase_race *x = r->ctx;
	int i;

	x->tick = 64ULL * (1000 + 2 * (__u64)round) + 5;
	for (i = 0; i < PACER_LINE_CELLS; i++)
		x->line.cell[i] = (__u8)(x->tick - 100); /* expires at the re-base */
	x->line.epoch = pacer_epoch(x->tick - 64);
}

static void rebase_work(struct race *r, int thread, int round)
{
	struct rebase_race *x = r->ctx;
	int i, c;

	(void)round;
	/* Opposite orders: one writes the last words while the other re-bases them. */
	for (i = 0; i < PACER_LINE_CELLS / 2; i++) {
		c = thread ? PACER_LINE_CELLS - 1 - i : i;
		pacer_cell_touch(&x->line, (__u32)c, x->tick, 0);
	}
	race_wait(r, -1 - round); /* both done: check */
	if (thread == 0)
		for (c = 0; c < PACER_LINE_CELLS; c++)
			x->lost += pacer_cell_age(&x->line, (__u32)c, x->tick) != 0;
}

START_TEST(test_rebase_race_keeps_fresh_cells)
{
	struct rebase_race x = { 0 };
	struct race r = { .rounds = 200000, .setup = rebase_setup, .work = rebase_work, .ctx = &x };

	race_run(&r);
	ck_assert_msg(x.lost == 0, "%d fresh cells lost to a concurrent re-base", x.lost);
}
END_TEST

static int sketch_admits(void *sim, uint64_t h, uint64_t now_ns)
{
	return !sketch_sim_packet(sim, h, now_ns, NULL);
}

/*
 * The admission race (race.h) on a shared sketch, through the simulator's
 * packet path (pacer_verdict.h, as the datapath).  _i: the layout.
 */
START_TEST(test_admit_race_one_winner)
{
	struct sketch_sim sim;
	struct admit_race x = { .admit = sketch_admits, .sim = &sim };
	int k;

	ck_assert_int_eq(sketch_sim_init(&sim, 4, (uint32_t)_i, 10, 0, 8, PACER_POLICY_PACE,
					 test_key), 0);
	sim.placement = PACER_PLACEMENT_SHARED;
	x.interval_ns = (uint64_t)sim.thresh << sim.tick_shift;
	for (k = 0; k < RACE_KEYS; k++)
		x.h[k] = sketch_sim_hash(&sim, 4, 0x0a000000u + (uint32_t)k, 0);
	admit_race_check(&x, 20000);
	sketch_sim_free(&sim);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sketch");
	TCase *tc = tcase_create("shared logic");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_mix64_is_bijective_on_sample);
	tcase_add_test(tc, test_hash_depends_on_key_and_family);
	tcase_add_test(tc, test_hash_low_bits_uniform);
	tcase_add_test(tc, test_masks_v4);
	tcase_add_test(tc, test_masks_v6);
	tcase_add_test(tc, test_rows_are_independent);
	tcase_add_test(tc, test_cell_age_modular_and_stale);
	tcase_add_test(tc, test_never_written_line_is_never_seen);
	tcase_add_test(tc, test_new_sources_pass_soon_after_boot);
	tcase_add_test(tc, test_rebase_expires_old_cells_only);
	tcase_add_test(tc, test_touch_keeps_a_newer_cell);
	tcase_add_test(tc, test_line_ahead_is_current_and_not_rebased_back);
	tcase_add_test(tc, test_rebase_word_matches_cell_rule);
	tcase_add_test(tc, test_wrapped_cell_never_looks_recent_after_rebase);
	tcase_add_test(tc, test_thresh_ticks);
	tcase_add_test(tc, test_tick_and_interval_bounds);
	tcase_add_test(tc, test_model_values);
	tcase_add_test(tc, test_default_thresh_matches_interval);
	suite_add_tcase(s, tc);
	tc = tcase_create("exhaustive");
	tcase_set_timeout(tc, 60);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_slots_in_range);
	tcase_add_test(tc, test_line_rebase_matches_cell_rule);
	suite_add_tcase(s, tc);
	tc = tcase_create("shared placement races");
	tcase_set_timeout(tc, 120);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_rebase_race_keeps_fresh_cells);
	tcase_add_loop_test(tc, test_admit_race_one_winner, PACER_LAYOUT_ROWS, PACER_LAYOUT_BLOCKED + 1);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
