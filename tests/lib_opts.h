/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Options for tests, parsed through the CLI's own tables. */
#ifndef PACER_TEST_OPTS_H
#define PACER_TEST_OPTS_H

#include <stddef.h>
#include "budget_cfg.h"

/* One budget option (by name) into o, as load and set parse it: 0 or 2 with err. */
int budget_parse_opt(const char *name, const char *arg, struct budget_opts *o, char *err,
		     size_t len);

#endif
