// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <string.h>
#include "pacer_names.h"

const char *const pacer_stat_names[PACER_STAT_MAX] = {
	[PACER_STAT_SEEN] = "seen",
	[PACER_STAT_PASSED] = "passed",
	[PACER_STAT_DROPPED_RECENT] = "dropped_recent",
	[PACER_STAT_NONIP_PASSED] = "nonip_passed",
	[PACER_STAT_MALFORMED_PASSED] = "malformed_passed",
	[PACER_STAT_MALFORMED_DROPPED] = "malformed_dropped",
	[PACER_STAT_IPV4] = "ipv4",
	[PACER_STAT_IPV6] = "ipv6",
	[PACER_STAT_LINE_REFRESH] = "line_rebased",
	[PACER_STAT_RECORDED] = "recorded",
	[PACER_STAT_RECORD_LOST] = "record_lost",
	[PACER_STAT_KEY_INIT] = "key_init",
	[PACER_STAT_MAP_ERROR] = "map_error",
	[PACER_STAT_DROPPED_BUDGET] = "dropped_budget",
	[PACER_STAT_BUDGET_NO_BUCKET] = "budget_no_bucket",
	[PACER_STAT_BUDGET_RETURNING] = "budget_returning",
	[PACER_STAT_TABLE_FULL] = "table_full",
	[PACER_STAT_TABLE_EVICT] = "table_evict",
	[PACER_STAT_TABLE_RACE] = "table_race",
	[PACER_STAT_EXEMPT_PASSED] = "exempt_passed",
	[PACER_STAT_DENY_DROPPED] = "deny_dropped",
	[PACER_STAT_UNCLASSIFIED] = "unclassified_passed",
	[PACER_STAT_CLASS_DROPPED] = "dropped_class",
	[PACER_STAT_OBSERVED_RECENT] = "would_drop_recent",
	[PACER_STAT_OBSERVED_BUDGET] = "would_drop_budget",
	[PACER_STAT_OBSERVED_CLASS] = "would_drop_class",
	[PACER_STAT_OBSERVED_DENY] = "would_drop_deny",
	[PACER_STAT_OBSERVED_MALFORMED] = "would_drop_malformed",
	[PACER_STAT_SWEEP_ROUNDS] = "sweep_rounds",
	[PACER_STAT_SWEEP_LINES] = "sweep_lines",
	[PACER_STAT_SWEEP_CLEARED] = "sweep_cleared",
};

int pacer_stat_observes(unsigned stat)
{
	switch (stat) {
	case PACER_STAT_OBSERVED_RECENT: return PACER_STAT_DROPPED_RECENT;
	case PACER_STAT_OBSERVED_BUDGET: return PACER_STAT_DROPPED_BUDGET;
	case PACER_STAT_OBSERVED_CLASS: return PACER_STAT_CLASS_DROPPED;
	case PACER_STAT_OBSERVED_DENY: return PACER_STAT_DENY_DROPPED;
	case PACER_STAT_OBSERVED_MALFORMED: return PACER_STAT_MALFORMED_DROPPED;
	default: return -1;
	}
}

/* Indexed by the ABI's values (PACER_POLICY_PACE = 0, ...). */
static const char *const policy_names[] = { "pace", "quiet" };
static const char *const placement_names[] = { "percpu", "shared" };
static const char *const layout_names[] = { "rows", "blocked" };
static const char *const clock_names[] = { "coarse", "precise", "cached" };
static const char *const malformed_names[] = { "pass", "drop" };
static const char *const backend_names[] = { "sketch", "table", "dense" };
static const char *const on_full_names[] = { "drop", "evict-oldest" };
/* enum pacer_mode: a class's or the deny list's GLOBAL follows the global mode. */
static const char *const mode_names[] = { "global", "enforce", "observe" };

#define NAME_OF(tab, v) ((v) < sizeof(tab) / sizeof(tab[0]) ? tab[v] : "?")

const char *const pacer_class_stat_names[PACER_CSTAT_MAX] = {
	[PACER_CSTAT_SEEN] = "seen",
	[PACER_CSTAT_PASSED] = "passed",
	[PACER_CSTAT_DROPPED] = "dropped",
	[PACER_CSTAT_DROPPED_BUDGET] = "dropped_budget",
	[PACER_CSTAT_OBSERVED] = "would_drop",
	[PACER_CSTAT_OBSERVED_BUDGET] = "would_drop_budget",
};

const char *policy_name(uint32_t p) { return NAME_OF(policy_names, p); }
const char *placement_name(uint32_t p) { return NAME_OF(placement_names, p); }
const char *layout_name(uint32_t k) { return NAME_OF(layout_names, k); }
const char *clock_name(uint32_t c) { return NAME_OF(clock_names, c); }
const char *malformed_name(uint32_t m) { return NAME_OF(malformed_names, m); }
const char *backend_name(uint32_t b) { return NAME_OF(backend_names, b); }
const char *on_full_name(uint32_t f) { return NAME_OF(on_full_names, f); }
/* The global mode's 0 is enforce (a zeroed config enforces). */
const char *mode_name(uint32_t m) { return m == PACER_MODE_GLOBAL ? "enforce" : NAME_OF(mode_names, m); }
const char *own_mode_name(uint32_t m) { return NAME_OF(mode_names, m); }

static int lookup_name(const char *const *tab, size_t n, const char *s, uint32_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(tab[i], s)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	return -EINVAL;
}

#define LOOKUP(tab, s, out) lookup_name(tab, sizeof(tab) / sizeof(tab[0]), s, out)

int parse_policy(const char *s, uint32_t *out) { return LOOKUP(policy_names, s, out); }
int parse_placement(const char *s, uint32_t *out) { return LOOKUP(placement_names, s, out); }
int parse_layout(const char *s, uint32_t *out) { return LOOKUP(layout_names, s, out); }
int parse_clock(const char *s, uint32_t *out) { return LOOKUP(clock_names, s, out); }
int parse_malformed(const char *s, uint32_t *out) { return LOOKUP(malformed_names, s, out); }
int parse_backend(const char *s, uint32_t *out) { return LOOKUP(backend_names, s, out); }
int parse_on_full(const char *s, uint32_t *out) { return LOOKUP(on_full_names, s, out); }

int parse_mode(const char *s, uint32_t *out)
{
	return strcmp(s, "global") ? LOOKUP(mode_names, s, out) : -EINVAL;
}

int parse_own_mode(const char *s, uint32_t *out) { return LOOKUP(mode_names, s, out); }
