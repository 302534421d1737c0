/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Run one Check suite; exit status 0 only when every test passed. */
#ifndef PACER_CHECK_RUN_H
#define PACER_CHECK_RUN_H

#include <check.h>

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
