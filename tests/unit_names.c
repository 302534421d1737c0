// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The name tables (user/lib/words/pacer_names.c): names match the ABI's values and parse back. */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <string.h>
#include "pacer_names.h"

struct table {
	const char *(*name)(uint32_t v);
	int (*parse)(const char *s, uint32_t *out);
	const char *const *want; /* by value, NULL-terminated */
};

static const char *const policies[] = { [PACER_POLICY_PACE] = "pace", [PACER_POLICY_QUIET] = "quiet", NULL };
static const char *const placements[] = { [PACER_PLACEMENT_PERCPU] = "percpu",
					   [PACER_PLACEMENT_SHARED] = "shared", NULL };
static const char *const layouts[] = { [PACER_LAYOUT_ROWS] = "rows", [PACER_LAYOUT_BLOCKED] = "blocked", NULL };
static const char *const clocks[] = { [PACER_CLOCK_COARSE] = "coarse", [PACER_CLOCK_PRECISE] = "precise",
				      [PACER_CLOCK_CACHED] = "cached", NULL };
static const char *const malformed[] = { [PACER_MALFORMED_PASS] = "pass", [PACER_MALFORMED_DROP] = "drop", NULL };
static const char *const backends[] = { [PACER_BACKEND_SKETCH] = "sketch", [PACER_BACKEND_TABLE] = "table",
				       [PACER_BACKEND_DENSE] = "dense", NULL };
static const char *const on_full[] = { [PACER_TBL_FULL_DROP] = "drop", [PACER_TBL_FULL_EVICT] = "evict-oldest", NULL };

static const struct table tables[] = {
	{ policy_name, parse_policy, policies },
	{ placement_name, parse_placement, placements },
	{ layout_name, parse_layout, layouts },
	{ clock_name, parse_clock, clocks },
	{ malformed_name, parse_malformed, malformed },
	{ backend_name, parse_backend, backends },
	{ on_full_name, parse_on_full, on_full },
};

START_TEST(test_names_match_the_abi_and_parse_back)
{
	const struct table *t = &tables[_i];
	uint32_t v, got;

	for (v = 0; t->want[v]; v++) {
		ck_assert_str_eq(t->name(v), t->want[v]);
		got = 99;
		ck_assert_int_eq(t->parse(t->want[v], &got), 0);
		ck_assert_uint_eq(got, v);
	}
	ck_assert_str_eq(t->name(v), "?");
	ck_assert_str_eq(t->name(UINT32_MAX), "?");
}
END_TEST

START_TEST(test_unknown_names_are_refused_and_leave_the_value)
{
	const struct table *t = &tables[_i];
	static const char *const bad[] = { "", "?", "PACE", "pace ", "rowsx", "evict" };
	uint32_t got;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		got = 77;
		ck_assert_int_eq(t->parse(bad[i], &got), -EINVAL);
		ck_assert_uint_eq(got, 77);
	}
}
END_TEST

/* Counter names are JSON keys and Prometheus label values written unescaped. */
START_TEST(test_stat_names_are_distinct_plain_identifiers)
{
	int i, j;

	for (i = 0; i < PACER_STAT_MAX; i++) {
		ck_assert_ptr_nonnull(pacer_stat_names[i]);
		ck_assert_uint_gt(strlen(pacer_stat_names[i]), 0);
		ck_assert_uint_eq(strspn(pacer_stat_names[i], "abcdefghijklmnopqrstuvwxyz0123456789_"),
				  strlen(pacer_stat_names[i]));
		for (j = 0; j < i; j++)
			ck_assert_str_ne(pacer_stat_names[i], pacer_stat_names[j]);
	}
	ck_assert_str_eq(pacer_stat_names[PACER_STAT_SEEN], "seen");
	ck_assert_str_eq(pacer_stat_names[PACER_STAT_DROPPED_RECENT], "dropped_recent");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("names");
	int n = (int)(sizeof(tables) / sizeof(tables[0]));

	tcase_add_loop_test(tc, test_names_match_the_abi_and_parse_back, 0, n);
	tcase_add_loop_test(tc, test_unknown_names_are_refused_and_leave_the_value, 0, n);
	tcase_add_test(tc, test_stat_names_are_distinct_plain_identifiers);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
