// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Checking a class list before it reaches a pacer (classes_check.h): pure, no kernel calls. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "classes_check.h"
#include "pacer_classify.h"
#include "pacer_rate.h"

/* A limit the datapath would take as corrupt (and run at its strictest) is refused here. */
static const char *limit_problem(const struct pacer_class *c, uint32_t backend)
{
	uint32_t max_sat = pacer_rate_max_sat(backend);
	struct pacer_rate r = pacer_rate_of(c->thresh_ticks, c->burst_ticks);

	if (r.thresh < PACER_MIN_THRESH || r.thresh > max_sat || r.burst > max_sat || r.sat > max_sat)
		return "its limit is outside the range the loaded backend's cells hold";
	return NULL;
}

static bool name_ok(const char *name)
{
	size_t n = strnlen(name, PACER_CLASS_NAME_LEN), i;

	if (!n || n >= PACER_CLASS_NAME_LEN)
		return false;
	for (i = 0; i < n; i++) {
		char ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

int pacer_classes_check(const struct pacer_class *c, int n, uint32_t backend, char *err, size_t len)
{
	int i, j;

	if (n < 0 || n > PACER_MAX_CLASSES || (n && !c)) {
		snprintf(err, len, "%d classes: at most %d", n, PACER_MAX_CLASSES);
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		const char *why = NULL;

		if (!name_ok(c[i].name)) {
			snprintf(err, len, "class %d: its name is not 1..%d of [a-zA-Z0-9_-]", i + 1,
				 PACER_CLASS_NAME_LEN - 1);
			return -EINVAL;
		}
		why = pacer_match_problem(&c[i].m);
		if (!why && c[i].action >= PACER_ACTION_MAX)
			why = "unknown action";
		if (!why && c[i].key_mode >= PACER_KEY_MAX)
			why = "unknown key mode";
		if (!why && (c[i].prefix4 > 32 || c[i].prefix6 > 128))
			why = "key prefix out of range (IPv4 0..32, IPv6 0..128)";
		if (!why && c[i].stat_slot >= PACER_MAX_CLASSES)
			why = "stat slot out of range";
		if (!why && c[i].action == PACER_ACTION_PACE) {
			if (c[i].policy >= PACER_POLICY_MAX)
				why = "unknown policy";
			else
				why = limit_problem(&c[i], backend);
		}
		for (j = 0; !why && j < i; j++) {
			if (!strncmp(c[i].name, c[j].name, PACER_CLASS_NAME_LEN))
				why = "a class of this name comes earlier";
			else if (c[i].stat_slot == c[j].stat_slot)
				why = "its stat slot is an earlier class's";
		}
		if (why) {
			snprintf(err, len, "class '%.*s': %s", PACER_CLASS_NAME_LEN - 1, c[i].name, why);
			return -EINVAL;
		}
	}
	return 0;
}
