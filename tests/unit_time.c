// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The clock helpers (user/lib/sys/time_now.c). */
#include <check.h>
#include "check_run.h"
#include "time_now.h"

START_TEST(test_timespec_ns_converts_exactly)
{
	struct timespec a = { 0, 0 }, b = { 1, 5 }, c = { 4000000000LL, 999999999 };

	ck_assert_uint_eq(timespec_ns(&a), 0);
	ck_assert_uint_eq(timespec_ns(&b), 1000000005ULL);
	ck_assert_uint_eq(timespec_ns(&c), 4000000000999999999ULL);
}
END_TEST

/* Each reading lies between clock_gettime's readings taken around it. */
START_TEST(test_readings_agree_with_clock_gettime)
{
	struct timespec before, after;
	uint64_t ns, prev = 0;
	double s;
	int i;

	for (i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC, &before);
		ns = mono_ns();
		s = mono_s();
		clock_gettime(CLOCK_MONOTONIC, &after);
		ck_assert_uint_ge(ns, timespec_ns(&before));
		ck_assert_uint_le(ns, timespec_ns(&after));
		ck_assert_uint_ge(ns, prev);
		ck_assert(s * 1e9 >= (double)timespec_ns(&before) - 1e3);
		ck_assert(s * 1e9 <= (double)timespec_ns(&after) + 1e3);
		prev = ns;
	}
	clock_gettime(CLOCK_REALTIME, &before);
	ns = clock_now_ns(CLOCK_REALTIME);
	clock_gettime(CLOCK_REALTIME, &after);
	ck_assert_uint_ge(ns, timespec_ns(&before));
	ck_assert_uint_le(ns, timespec_ns(&after));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("time_now");
	TCase *tc = tcase_create("time_now");

	tcase_add_test(tc, test_timespec_ns_converts_exactly);
	tcase_add_test(tc, test_readings_agree_with_clock_gettime);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
