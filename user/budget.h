/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The global budget on a running pacer: its live configuration and its ring. */
#ifndef PACER_USER_BUDGET_H
#define PACER_USER_BUDGET_H

#include "common.h"
#include "budget_cfg.h"

/* getopt_long entries for the budget options (load and set). */
#define BUDGET_LONGOPTS                                                        \
	{ "budget", required_argument, NULL, BUDGET_OPT_BUDGET },              \
	{ "slack-time", required_argument, NULL, BUDGET_OPT_SLACK_TIME },      \
	{ "slack-count", required_argument, NULL, BUDGET_OPT_SLACK_COUNT },    \
	{ "reserve", required_argument, NULL, BUDGET_OPT_RESERVE },            \
	{ "horizon", required_argument, NULL, BUDGET_OPT_HORIZON }

/* switch labels for the budget options in a verb's getopt loop */
#define BUDGET_OPT_CASES                                                       \
	case BUDGET_OPT_BUDGET:                                                \
	case BUDGET_OPT_SLACK_TIME:                                            \
	case BUDGET_OPT_SLACK_COUNT:                                           \
	case BUDGET_OPT_RESERVE:                                               \
	case BUDGET_OPT_HORIZON

/* A getopt result that is a budget option: parse it into o; 0 or 2 (said why). */
int budget_cli_opt(int c, const char *arg, struct budget_opts *o);

/* Apply o to the running program on h; prints the result.  0, 1 or 2. */
int budget_set(const struct pacer_handle *h, const struct budget_opts *o);

/* status: the configuration and the ring (buckets, counts, free). */
void budget_show(const struct pacer_handle *h);

#endif
