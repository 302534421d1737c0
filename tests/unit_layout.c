// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the layout `load` builds from its options (user/lib/backend/layout.c):
 * geometry, tick and threshold, and the refusals with the numbers they
 * print (each bound formatted into its own buffer).
 */
#include <check.h>
#include "check_run.h"
#include <string.h>
#include "layout.h"
#include "ticks.h"
#include "cli_values.h"
#include "pacer_ticks.h"
#include "pacer_defaults.h"
#include "live_opts.h"
#include "opts.h"

static struct layout_req req(void)
{
	return (struct layout_req){ .interval_ns = 1000000000ULL, .width = 1u << 20, .rows = 4,
				    .kind = PACER_LAYOUT_ROWS, .placement = PACER_PLACEMENT_PERCPU,
				    .clock = PACER_CLOCK_CACHED, .backend = PACER_BACKEND_SKETCH,
				    .ncpus = 2 };
}

START_TEST(test_default_sketch_layout)
{
	struct layout_req r = req();
	struct pacer_layout l;
	struct pacer_rate rate;
	char err[256];

	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.magic, PACER_LAYOUT_MAGIC);
	ck_assert_uint_eq(l.rows, 4);
	ck_assert_uint_eq(l.lines_log2, 14); /* 2^20 one-byte cells in 64-byte lines */
	ck_assert_uint_eq(l.copies, 2);
	ck_assert_uint_eq(l.tick_shift, pacer_default_tick_shift(r.interval_ns));
	ck_assert_uint_eq(rate.thresh, pacer_thresh_ticks(r.interval_ns, l.tick_shift));
	r.placement = PACER_PLACEMENT_SHARED;
	r.kind = PACER_LAYOUT_BLOCKED;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.copies, 1);
	ck_assert_uint_eq(l.lines_log2, 16); /* a line per key: rows x width / 64 lines */
	r.backend = PACER_BACKEND_TABLE;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.rows, 1);
	ck_assert_uint_eq(l.kind, PACER_LAYOUT_ROWS);
}
END_TEST

START_TEST(test_readable_layout)
{
	struct layout_req r = req();
	struct pacer_layout l, bad;
	struct pacer_rate rate;
	char err[256];

	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert(layout_readable(&l));
	bad = l;
	bad.magic ^= 1;
	ck_assert(!layout_readable(&bad));
	bad = l;
	bad.abi_version++;
	ck_assert(!layout_readable(&bad));
	bad = l;
	bad.tick_shift = PACER_TICK_SHIFT_MAX + 1; /* would shift past what the readers' ticks hold */
	ck_assert(!layout_readable(&bad));
	bad = l;
	bad.backend = PACER_BACKEND_MAX; /* would index past the backends' tables */
	ck_assert(!layout_readable(&bad));
}
END_TEST

START_TEST(test_refusals_name_the_values)
{
	struct layout_req r = req();
	struct pacer_layout l;
	struct pacer_rate rate;
	char err[256];

	r.kind = PACER_LAYOUT_BLOCKED;
	r.rows = 3;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--layout blocked needs --rows to be a power of two (1, 2, 4 or 8), not 3");
	r = req();
	r.backend = PACER_BACKEND_TABLE;
	r.width = 16;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 16: a table takes a power of two from 32 to 268435456 entries");
	/* --width takes any number (the dense table's): the others refuse what is not a power of two. */
	r.width = 1000;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 1000: a table takes a power of two from 32 to 268435456 entries");
	r.backend = PACER_BACKEND_SKETCH;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 1000: a sketch row takes a power of two from 64 to 1073741824 cells");
	r.backend = PACER_BACKEND_DENSE;
	r.rows = 1;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.lines, 42);
	r = req();
	r.width = 1u << 30;
	r.rows = 8;
	r.ncpus = 64;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "too large for one map"));
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "too large for one map"));
}
END_TEST

/* The geometry checks analyze's advice goes through are load's whole range, not the option parser's alone. */
START_TEST(test_geometry_check)
{
	struct layout_req r = req();
	char err[256];

	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 0);
	r.kind = PACER_LAYOUT_BLOCKED;
	r.width = 32; /* 4 rows: two lines, but narrower than load's --width */
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 32: a sketch row takes a power of two from 64 to 1073741824 cells");
	r.width = 64;
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 0);
	r.width = 96;
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 2);
	r.width = 64;
	r.rows = 16;
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--rows 16: a sketch has 1 to 8 rows");
	r = req();
	r.backend = PACER_BACKEND_TABLE;
	r.width = 32;
	ck_assert_int_eq(layout_check_geometry(&r, err, sizeof(err)), 0);
}
END_TEST

/* The interval refusal prints three different durations: none may repeat another's text. */
START_TEST(test_interval_refusal_prints_each_bound)
{
	struct layout_req r = req();
	struct pacer_layout l;
	struct pacer_rate rate;
	char err[256];

	r.tick_ns = 1ULL << 23; /* 8.389 ms: [33.554 ms, 528.482 ms] */
	r.interval_ns = 1000000000ULL;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--interval 1 s does not fit tick 8.389 ms: with this tick the interval must be within [33.554 ms, 528.482 ms]");
	r.interval_ns = 500000000ULL;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_interval_range_and_log2)
{
	uint64_t lo, hi;

	interval_range(23, &lo, &hi);
	ck_assert_uint_eq(lo, 4ULL << 23);
	ck_assert_uint_eq(hi, (uint64_t)(PACER_MAX_THRESH - 1) << 23);
	ck_assert_int_eq(log2_exact(1), 0);
	ck_assert_int_eq(log2_exact(1ULL << 40), 40);
	ck_assert_int_eq(log2_exact(0), -1);
	ck_assert_int_eq(log2_exact(12), -1);
}
END_TEST

/*
 * The loader's defaults, as its options spell them, build exactly the layout
 * and live configuration the object carries as compiled (so `ip link ... obj`
 * and `xdp-pacer load` with no options limit the same way).
 */
START_TEST(test_loader_defaults_are_the_compiled_ones)
{
	static const struct opt_spec live[] = {
		{ .type = OPT_INCLUDE, .sub = pacing_specs },
		{ .type = OPT_INCLUDE, .sub = malformed_specs },
		{ 0 },
	};
	const struct opt_verb verb = { .name = "defaults", .opts = live };
	const struct pacer_layout compiled = PACER_DEFAULT_LAYOUT;
	const struct pacer_config cfg = PACER_DEFAULT_CONFIG;
	char *argv[] = { "defaults", NULL };
	struct layout_req r = req();
	struct live_opts o = { 0 };
	struct opt_error e;
	struct pacer_layout l;
	uint64_t rows, width;
	struct pacer_rate rate;
	char err[256];

	ck_assert_int_eq(opts_parse(&verb, 1, argv, &o, stdout, &e), 0);
	ck_assert_uint_eq(o.interval_ns, cfg.interval_ns);
	ck_assert_uint_eq(o.policy, cfg.policy);
	ck_assert_uint_eq(o.malformed, cfg.malformed);
	ck_assert_uint_eq(o.prefix4, cfg.prefix4);
	ck_assert_uint_eq(o.prefix6, cfg.prefix6);
	ck_assert_int_eq(parse_u64_range(PACER_DEFAULT_ROWS_TEXT, 1, PACER_MAX_ROWS, &rows), 0);
	ck_assert_int_eq(parse_u64_range(PACER_DEFAULT_WIDTH_TEXT, 1, UINT64_MAX, &width), 0);
	r.interval_ns = o.interval_ns;
	r.rows = (uint32_t)rows;
	r.width = width;
	r.ncpus = compiled.copies;
	ck_assert_int_eq(layout_build(&r, &l, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(l.rows, compiled.rows);
	ck_assert_uint_eq(l.lines_log2, compiled.lines_log2);
	ck_assert_uint_eq(l.tick_shift, compiled.tick_shift);
	ck_assert_uint_eq(l.copies, compiled.copies);
	ck_assert_uint_eq(rate.thresh, cfg.thresh_ticks);
	ck_assert_uint_eq(rate.burst, cfg.burst_ticks);
}
END_TEST

START_TEST(test_gap_below_clock)
{
	/* A 4 ms jiffy: the coarse and cached clocks cannot tell 1 ms apart. */
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_CACHED, 1, 1000000, 4000000), 1);
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_COARSE, 1, 1000000, 4000000), 1);
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_PRECISE, 1, 1000000, 4000000), 0);
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_CACHED, 1, 4000000, 4000000), 0);
	/* A rate's gap is T/N: 100 per 100 ms is a 1 ms gap. */
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_CACHED, 100, 100000000, 4000000), 1);
	ck_assert_int_eq(gap_below_clock(PACER_CLOCK_CACHED, 0, 4000000, 4000000), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("layout");
	TCase *tc = tcase_create("load's layout");

	tcase_add_test(tc, test_default_sketch_layout);
	tcase_add_test(tc, test_refusals_name_the_values);
	tcase_add_test(tc, test_geometry_check);
	tcase_add_test(tc, test_interval_refusal_prints_each_bound);
	tcase_add_test(tc, test_interval_range_and_log2);
	tcase_add_test(tc, test_loader_defaults_are_the_compiled_ones);
	tcase_add_test(tc, test_gap_below_clock);
	tcase_add_test(tc, test_readable_layout);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
