/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Run one Check suite; exit status 0 only when every test passed. */
#ifndef PACER_CHECK_RUN_H
#define PACER_CHECK_RUN_H

#include <check.h>

/*
 * Test cases that take seconds (exhaustive sweeps, races, statistical
 * streams) carry this tag; `make check` leaves them out with
 * CK_EXCLUDE_TAGS=slow, every other run (tests/run.sh, scripts/test.sh)
 * includes them.
 */
#define CHECK_TAG_SLOW "slow"

static inline int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
