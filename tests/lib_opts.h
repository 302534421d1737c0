/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Options for tests, parsed through the CLI's own tables. */
#ifndef PACER_TEST_OPTS_H
#define PACER_TEST_OPTS_H

#include <stddef.h>
#include "budget_cfg.h"

/* One budget option (by name) into o, as load and set parse it: 0 or 2 with err. */
int budget_parse_opt(const char *name, const char *arg, struct budget_opts *o, char *err,
		     size_t len);

/*
 * A budget configuration from the options as load and set take them
 * (slack and reserve may be NULL), applied over *c; fails the test on a
 * bad value.
 */
void budget_cfg(struct pacer_budget_cfg *c, const char *rate, const char *slack_time,
		const char *slack_count, const char *reserve);

#endif
