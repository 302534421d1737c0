/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The global budget on a running pacer: its live configuration and its ring. */
#ifndef PACER_USER_BUDGET_H
#define PACER_USER_BUDGET_H

#include "common.h"
#include "budget_cfg.h"

/*
 * Apply o to the running program on h; prints the result, saying whether
 * it changed anything (*changed, when not NULL).  0, 1 or 2.
 */
int budget_set(const struct pacer_handle *h, const struct budget_opts *o, bool *changed);
/* What budget_set would say of o, storing nothing: 0, 2 (said why) or 1. */
int budget_check(const struct pacer_handle *h, const struct budget_opts *o);

/* log2 of the running returning-source filter's cells (load --reserve-cells), or -1 if unreadable. */
int budget_seen_cells_log2(const struct pacer_handle *h);

/* status: the configuration and the ring (buckets, counts, free). */
void budget_show(const struct pacer_handle *h);

#endif
