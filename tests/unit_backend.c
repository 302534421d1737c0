// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the backend seam (user/lib/backend/backend.h): every backend has a
 * complete descriptor, the lookup fails closed outside the enum, and the
 * descriptor's geometry, simulator and model are the backend's own code
 * (the same numbers as calling the sketch's and the tables' directly).
 */
#include <check.h>
#include "check_run.h"
#include <string.h>
#include "backend.h"
#include "geometry.h"
#include "pacer_names.h"
#include "pacer_rate.h"
#include "pacer_table.h"
#include "sketch_sim.h"
#include "two_choice_sim.h"
#include "pacer_dense.h"
#include "pacer_place.h"
#include "layout.h"
#include "ticks.h"

START_TEST(test_every_backend_is_complete)
{
	uint32_t b;

	for (b = 0; b < PACER_BACKEND_MAX; b++) {
		const struct backend_desc *d = backend_of(b);

		ck_assert_ptr_nonnull(d);
		ck_assert_str_eq(d->name, backend_name(b));
		ck_assert(d->lines && d->check && d->width && d->max_lines_log2 && d->evicts);
		ck_assert(d->report_str && d->live_str && d->load_args);
		ck_assert(d->sim_init && d->sim_packet && d->sim_evictions && d->sim_free);
		ck_assert(d->model_rate && d->sim_size && d->sweep_from_per_line);
		ck_assert(d->rate_n_hint && d->rate_hint && d->unseen_note);
		ck_assert_uint_ge(d->max_rows, 1);
		ck_assert_uint_le(d->max_rows, PACER_MAX_ROWS);
		ck_assert_uint_ge(d->rate_max_n, 1);
		ck_assert_uint_le(d->rate_max_n, PACER_RATE_MAX_N);
		/* The datapath's own bound on ages, from its compile-time branch. */
		ck_assert_uint_eq(d->rate_max_sat, pacer_rate_max_sat(b));
	}
	ck_assert_ptr_null(backend_of(PACER_BACKEND_MAX));
	ck_assert_ptr_null(backend_of(UINT32_MAX));
}
END_TEST

START_TEST(test_geometry_and_lines)
{
	const struct backend_desc *s = backend_of(PACER_BACKEND_SKETCH), *t = backend_of(PACER_BACKEND_TABLE);
	const struct backend_desc *dn = backend_of(PACER_BACKEND_DENSE);
	char buf[160];

	ck_assert_uint_eq(s->width(PACER_LAYOUT_ROWS, 4, 14, 0), geom_width_cells(PACER_LAYOUT_ROWS, 4, 14));
	ck_assert_uint_eq(s->width(PACER_LAYOUT_BLOCKED, 4, 16, 0), 1ULL << 20);
	ck_assert_uint_eq(t->width(PACER_LAYOUT_ROWS, 1, 12, 0), (uint64_t)PACER_TBL_WAYS << 12);
	ck_assert_uint_eq(dn->width(PACER_LAYOUT_ROWS, 1, 19, 468750), 11250000);
	ck_assert_uint_eq(dn->max_lines_log2(PACER_LAYOUT_ROWS, 1), 24);
	ck_assert_str_eq(dn->report_str(1, PACER_LAYOUT_ROWS, 19, 468750, PACER_TBL_FULL_DROP, buf, sizeof(buf)),
			 "dense table of 11250000 entries (468750 lines), on full: drop");
	ck_assert_str_eq(dn->live_str(1, PACER_LAYOUT_ROWS, 2, 3, PACER_TBL_FULL_EVICT, buf, sizeof(buf)),
			 "72 entries in 3 lines, on full: evict-oldest");
	ck_assert_str_eq(dn->load_args(1, PACER_LAYOUT_ROWS, 72, PACER_TBL_FULL_DROP, buf, sizeof(buf)),
			 "--backend dense --width 72 --on-full drop");
	/* A recorded dense table: one row, its line count 2..2^24 and lines_log2 that count's ceiling. */
	ck_assert_ptr_null(dn->check(1, PACER_LAYOUT_ROWS, 19, 468750, buf, sizeof(buf)));
	ck_assert_ptr_null(dn->check(1, PACER_LAYOUT_ROWS, 24, PACER_DENSE_MAX_LINES, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(dn->check(1, PACER_LAYOUT_ROWS, 18, 468750, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(dn->check(1, PACER_LAYOUT_ROWS, 0, 1, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(dn->check(2, PACER_LAYOUT_ROWS, 2, 3, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(dn->check(1, PACER_LAYOUT_ROWS, 25, PACER_DENSE_MAX_LINES + 1, buf, sizeof(buf)));
	ck_assert(dn->evicts(PACER_TBL_FULL_EVICT) && !dn->evicts(PACER_TBL_FULL_DROP));
	ck_assert_uint_eq(s->max_lines_log2(PACER_LAYOUT_ROWS, 4), geom_max_lines_log2(PACER_LAYOUT_ROWS, 4));
	ck_assert_uint_eq(t->max_lines_log2(PACER_LAYOUT_ROWS, 1), PACER_TBL_MAX_LINES_LOG2);
	ck_assert_str_eq(s->report_str(4, PACER_LAYOUT_ROWS, 14, 0, 0, buf, sizeof(buf)),
			 "4 rows x 1048576 cells (rows layout)");
	ck_assert_str_eq(t->report_str(1, PACER_LAYOUT_ROWS, 4, 0, PACER_TBL_FULL_EVICT, buf, sizeof(buf)),
			 "table of 256 entries, on full: evict-oldest");
	ck_assert_str_eq(s->live_str(2, PACER_LAYOUT_ROWS, 6, 0, 0, buf, sizeof(buf)),
			 "2 rows x 4096 cells, rows layout");
	ck_assert_str_eq(t->live_str(1, PACER_LAYOUT_ROWS, 12, 0, PACER_TBL_FULL_DROP, buf, sizeof(buf)),
			 "65536 entries, on full: drop");
	ck_assert_str_eq(t->load_args(1, PACER_LAYOUT_ROWS, 4096, PACER_TBL_FULL_DROP, buf, sizeof(buf)),
			 "--backend table --width 4096 --on-full drop");
	ck_assert_str_eq(s->load_args(8, PACER_LAYOUT_BLOCKED, 4096, 0, buf, sizeof(buf)),
			 "--rows 8 --width 4096 --layout blocked");
	/* A recorded table must be one row of 2^1..2^24 lines; the sketch's checks are the header's. */
	ck_assert_ptr_null(t->check(1, PACER_LAYOUT_ROWS, 10, 0, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(t->check(2, PACER_LAYOUT_ROWS, 10, 0, buf, sizeof(buf)));
	ck_assert_ptr_nonnull(strstr(buf, "not 2 rows of 2^10"));
	ck_assert_ptr_nonnull(t->check(1, PACER_LAYOUT_ROWS, 0, 0, buf, sizeof(buf)));
	ck_assert_ptr_null(s->check(8, PACER_LAYOUT_BLOCKED, 3, 0, buf, sizeof(buf)));
	ck_assert(t->evicts(PACER_TBL_FULL_EVICT) && !t->evicts(PACER_TBL_FULL_DROP));
	ck_assert(!s->evicts(PACER_TBL_FULL_DROP));
}
END_TEST

/* The descriptor's simulator gives the backend's own verdicts, packet by packet. */
START_TEST(test_sim_through_descriptor_matches_direct)
{
	const __u64 key[2] = { 0x1234, 0x5678 };
	const uint32_t thresh = pacer_thresh_ticks(300000000ULL, 23);
	uint32_t b;

	for (b = 0; b < PACER_BACKEND_MAX; b++) {
		const struct backend_desc *d = backend_of(b);
		const struct backend_sim_cfg cfg = {
			.rows = 2, .kind = PACER_LAYOUT_ROWS, .lines_log2 = 2, .tick_shift = 23,
			.thresh = thresh, .policy = PACER_POLICY_PACE, .on_full = PACER_TBL_FULL_EVICT,
			.key = key,
		};
		struct sketch_sim sk;
		struct two_choice_sim tb;
		struct two_choice_sim dn;
		_Alignas(16) char via[sizeof(struct sketch_sim) + sizeof(struct two_choice_sim) + sizeof(struct two_choice_sim)];
		uint64_t i, differ = 0, drops = 0;

		ck_assert_uint_le(d->sim_size, sizeof(via));
		ck_assert_int_eq(d->sim_init(via, &cfg), 0);
		if (b == PACER_BACKEND_SKETCH)
			ck_assert_int_eq(sketch_sim_init(&sk, 2, PACER_LAYOUT_ROWS, 2, 23, thresh,
							 PACER_POLICY_PACE, key), 0);
		else if (b == PACER_BACKEND_TABLE)
			ck_assert_int_eq(table_sim_init(&tb, 2, 23, thresh, PACER_POLICY_PACE,
							PACER_TBL_FULL_EVICT, key), 0);
		else
			ck_assert_int_eq(dense_sim_init(&dn, 1u << 2, 23, thresh, PACER_POLICY_PACE,
							PACER_TBL_FULL_EVICT, key), 0);
		dn.sweep = 1; /* the descriptor's simulator sweeps as the datapath does */
		for (i = 0; i < 20000; i++) {
			uint64_t h = pacer_mix64(i % 700), now = 1000000000ULL + i * 50000ULL;
			int a = d->sim_packet(via, h, now);
			int c = b == PACER_BACKEND_SKETCH ? sketch_sim_packet(&sk, h, now, NULL)
				: b == PACER_BACKEND_TABLE ? table_sim_packet(&tb, h, now, NULL)
							   : dense_sim_packet(&dn, h, now, NULL);

			differ += a != c;
			drops += a;
		}
		ck_assert_uint_eq(differ, 0);
		/* Small enough to collide (the table, evict-oldest: to evict), so the comparison is not vacuous. */
		ck_assert_uint_gt(drops + d->sim_evictions(via), 0);
		if (b == PACER_BACKEND_TABLE) {
			ck_assert_uint_eq(d->sim_evictions(via), tb.evicted);
			table_sim_free(&tb);
		} else if (b == PACER_BACKEND_DENSE) {
			ck_assert_uint_eq(d->sim_evictions(via), dn.evicted);
			dense_sim_free(&dn);
		} else {
			ck_assert_uint_eq(d->sim_evictions(via), 0);
			sketch_sim_free(&sk);
		}
		d->sim_free(via);
	}
}
END_TEST

START_TEST(test_model_through_descriptor)
{
	double overflow, collision;

	ck_assert_double_eq(backend_of(PACER_BACKEND_SKETCH)->model_rate(PACER_LAYOUT_ROWS, 4, 10, 0, 5000),
			    sketch_model_false_drop(PACER_LAYOUT_ROWS, 4, 10, 5000));
	table_model(10, 5000, &overflow, &collision);
	ck_assert_double_eq(backend_of(PACER_BACKEND_TABLE)->model_rate(PACER_LAYOUT_ROWS, 1, 10, 0, 5000),
			    overflow + collision);
	dense_model(1000, 5000, &overflow, &collision);
	ck_assert_double_eq(backend_of(PACER_BACKEND_DENSE)->model_rate(PACER_LAYOUT_ROWS, 1, 10, 1000, 5000),
			    overflow + collision);
}
END_TEST

/* load's geometry through the descriptor: the refusals name the option and value. */
START_TEST(test_lines_refusals)
{
	struct pacer_layout lay = { 0 };
	uint64_t lines;
	char err[160];

	ck_assert_int_eq(backend_of(PACER_BACKEND_TABLE)->lines(16, 3, PACER_LAYOUT_BLOCKED, &lay, &lines, err,
							 sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 16: a table takes a power of two from 32 to 268435456 entries");
	ck_assert_int_eq(backend_of(PACER_BACKEND_TABLE)->lines(4096, 3, PACER_LAYOUT_BLOCKED, &lay, &lines,
								err, sizeof(err)), 0);
	ck_assert_uint_eq(lines, 4096 / PACER_TBL_WAYS);
	ck_assert_uint_eq(lay.rows, 1);
	ck_assert_int_eq(backend_of(PACER_BACKEND_SKETCH)->lines(4096, 3, PACER_LAYOUT_BLOCKED, &lay, &lines,
								 err, sizeof(err)), 2);
	ck_assert_str_eq(err, "--layout blocked needs --rows to be a power of two (1, 2, 4 or 8), not 3");
	ck_assert_int_eq(backend_of(PACER_BACKEND_SKETCH)->lines(4096, 4, PACER_LAYOUT_BLOCKED, &lay, &lines,
								 err, sizeof(err)), 0);
	ck_assert_uint_eq(lines, 4096 / PACER_LINE_BYTES * 4);
	/* Dense: entries rounded up to whole lines, any count. */
	ck_assert_int_eq(backend_of(PACER_BACKEND_DENSE)->lines(47, 1, PACER_LAYOUT_ROWS, &lay, &lines, err,
								sizeof(err)), 2);
	ck_assert_str_eq(err, "--width 47: a dense table takes 64 to 402653184 entries");
	ck_assert_int_eq(backend_of(PACER_BACKEND_DENSE)->lines(402653185, 1, PACER_LAYOUT_ROWS, &lay, &lines,
								err, sizeof(err)), 2);
	/* The range load --help gives, whatever the value refused. */
	ck_assert_str_eq(err, "--width 402653185: a dense table takes 64 to 402653184 entries");
	ck_assert_int_eq(backend_of(PACER_BACKEND_DENSE)->lines(402653185, 1, PACER_LAYOUT_ROWS, &lay, &lines,
								err, sizeof(err)), 2);
	ck_assert_int_eq(backend_of(PACER_BACKEND_DENSE)->lines(64, 1, PACER_LAYOUT_ROWS, &lay, &lines, err,
								sizeof(err)), 0);
	ck_assert_uint_eq(lines, 3);
	ck_assert_uint_eq(lay.lines, 3);
}
END_TEST

/*
 * load's layout for a dense table: any line count, lines_log2 its
 * ceiling's, the map sized lines x copies; refused in one line when the
 * sweep cannot keep pace (30 MB at a 10 ms interval), accepted at 1 s.
 */
START_TEST(test_dense_layout)
{
	struct layout_req r = { .interval_ns = 1000000000ULL, .width = 11250000, .rows = 1,
				.kind = PACER_LAYOUT_ROWS, .backend = PACER_BACKEND_DENSE, .ncpus = 2,
				.placement = PACER_PLACEMENT_SHARED };
	struct pacer_layout lay;
	struct pacer_rate rate;
	char err[512];

	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(lay.lines, 468750);
	ck_assert_uint_eq(lay.lines_log2, 19);
	ck_assert_uint_eq(lay.rows, 1);
	ck_assert_uint_eq(lay.copies, 1);
	ck_assert_uint_eq(PACER_LAYOUT_LINES(lay), 468750);
	r.placement = PACER_PLACEMENT_PERCPU;
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(lay.copies, 2);
	r.interval_ns = 10000000ULL;
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "a dense table of 937500 lines (all copies) needs a sweep of 58594 lines a ms to visit all within 64 ticks of 262.144 us (at most 16384): choose a longer interval, a smaller --width, or --backend table");
	ck_assert_uint_lt(strlen(err), 256); /* load's message buffer */
	r.placement = PACER_PLACEMENT_SHARED;
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 2);
	/* A tick so fine that 64 of them are under the 1 ms between rounds: any size. */
	r.width = 1000;
	r.interval_ns = 200000ULL; /* tick 2^13 ns: 64 ticks are 524 us */
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "a dense table's sweep must visit every line within 64 ticks of 8.192 us (524.288 us), under the 1 ms between its rounds: choose a longer interval (a coarser --tick) or --backend table");
	r.interval_ns = 10000000ULL;
	r.width = 1000000; /* 41667 lines: a round of 16384 lines keeps up */
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(lay.lines, 41667);
	/* The other backends leave the count 0. */
	r.backend = PACER_BACKEND_TABLE;
	r.width = 4096;
	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 0);
	ck_assert_uint_eq(lay.lines, 0);
}
END_TEST

/* An out-of-range backend is refused by name, never looked up. */
START_TEST(test_unknown_backend_refused)
{
	struct layout_req r = { .interval_ns = 1000000000ULL, .width = 4096, .rows = 4,
				.kind = PACER_LAYOUT_ROWS, .backend = PACER_BACKEND_MAX, .ncpus = 1 };
	struct pacer_layout lay;
	struct pacer_rate rate;
	char err[160];

	ck_assert_int_eq(layout_build(&r, &lay, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "backend 3 is not sketch (0), table (1) or dense (2)");
	ck_assert_int_eq(rate_fit(4, 1000000000ULL, 20, PACER_BACKEND_MAX, &rate, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "backend 3 is not sketch (0), table (1) or dense (2)");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("backend seam");
	TCase *tc = tcase_create("descriptors");

	tcase_add_test(tc, test_every_backend_is_complete);
	tcase_add_test(tc, test_geometry_and_lines);
	tcase_add_test(tc, test_sim_through_descriptor_matches_direct);
	tcase_add_test(tc, test_model_through_descriptor);
	tcase_add_test(tc, test_lines_refusals);
	tcase_add_test(tc, test_dense_layout);
	tcase_add_test(tc, test_unknown_backend_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
