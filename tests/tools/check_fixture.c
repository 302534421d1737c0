// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A Check suite with known results, for tests/integ_runner.sh to check how
 * tests/run.sh counts: two tests pass, one fails with a message, one dies
 * of a signal.
 */
#include <check.h>
#include <stdlib.h>
#include "check_run.h"

START_TEST(test_passes)
{
	ck_assert_int_eq(1, 1);
}
END_TEST

START_TEST(test_fails)
{
	ck_assert_msg(0, "fixture failure %d", 42);
}
END_TEST

START_TEST(test_aborts)
{
	abort();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("runner fixture");
	TCase *tc = tcase_create("fixture");

	tcase_add_test(tc, test_passes);
	tcase_add_test(tc, test_fails);
	tcase_add_test(tc, test_aborts);
	tcase_add_test(tc, test_passes);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
