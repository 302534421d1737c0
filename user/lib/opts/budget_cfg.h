/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The global budget's options (load and set) turned into a live configuration. */
#ifndef PACER_BUDGET_CFG_H
#define PACER_BUDGET_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_budget.h"
#include "opts.h"

#define BUDGET_MAX_LIMIT (1ULL << 32)
#define BUDGET_MAX_RESERVE_PCT 90
#define BUDGET_DEFAULT_SLACK_DIV 10   /* slack time T/10 and slack count ceil(K/10) */
#define BUDGET_DEFAULT_HORIZON_MUL 10 /* horizon 10 T */

/* What the operator asked for; unset fields keep the running value. */
struct budget_opts {
	bool set_budget, off, set_slack_time, set_slack_count, set_reserve, set_horizon;
	uint64_t limit, window_ns, slack_ns, slack_count, horizon_ns;
	uint32_t reserve_pct;
};

/* The budget options of load and set, on struct budget_opts (opts.h). */
extern const struct opt_spec budget_specs[];

/* "K/T": K admissions per window T ("50000/1s"). 0 or -EINVAL / -ERANGE. */
int budget_parse_rate(const char *s, uint64_t *limit, uint64_t *window_ns);

/* The CPUs the datapath can run on (possible CPUs): the batch and its slack scale with them. */
uint32_t budget_cpus(void);

/*
 * The configuration that results from applying o to cur (seq is left to the
 * writer).  --budget without slack options resets them to T/10 and
 * ceil(K/10), and the horizon to 10 T unless given; the batch follows K,
 * the slack count and budget_cpus().  0, or 2 with the error
 * in err (e.g. a ring larger than PACER_BUDGET_MAX_BUCKETS).
 */
int budget_apply(const struct budget_opts *o, const struct pacer_budget_cfg *cur,
		 struct pacer_budget_cfg *out, char *err, size_t len);

/*
 * Write cfg into the live (mmapped) configuration under its sequence count,
 * so the datapath never uses a half-written one.
 */
void budget_cfg_store(struct pacer_budget_cfg *live, const struct pacer_budget_cfg *cfg);

/*
 * Whether a and b are the same budget as the datapath applies it (the
 * sequence count aside; any two that are off are the same): what `set`
 * reports as changed or not.
 */
bool budget_cfg_same(const struct pacer_budget_cfg *a, const struct pacer_budget_cfg *b);

/* Whether any budget option was given. */
bool budget_opts_any(const struct budget_opts *o);

/* One line describing cfg ("off" or K/T, slack, ring, reserve). */
const char *budget_describe(const struct pacer_budget_cfg *c, char *buf, size_t len);

#endif
