// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <check.h>
#include <string.h>
#include "lib_opts.h"

int budget_parse_opt(const char *name, const char *arg, struct budget_opts *o, char *err,
		     size_t len)
{
	const struct opt_spec *s = opts_find(budget_specs, name, NULL);
	struct opt_error e;
	int rc = opts_parse_value(s, arg, o, &e);
	const char *msg = rc ? e.msg : "";
	size_t n = strlen(msg) < len ? strlen(msg) : len - 1;

	memcpy(err, msg, n);
	err[n] = 0;
	return rc;
}

void budget_cfg(struct pacer_budget_cfg *c, const char *rate, const char *slack_time,
		const char *slack_count, const char *reserve)
{
	struct budget_opts o = { 0 };
	struct pacer_budget_cfg cur = *c;
	char err[256];

	ck_assert_int_eq(budget_parse_opt("budget", rate, &o, err, sizeof(err)), 0);
	if (slack_time)
		ck_assert_int_eq(budget_parse_opt("slack-time", slack_time, &o, err, sizeof(err)), 0);
	if (slack_count)
		ck_assert_int_eq(budget_parse_opt("slack-count", slack_count, &o, err, sizeof(err)), 0);
	if (reserve)
		ck_assert_int_eq(budget_parse_opt("reserve", reserve, &o, err, sizeof(err)), 0);
	ck_assert_msg(budget_apply(&o, &cur, c, err, sizeof(err)) == 0, "%s", err);
}
