// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
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
