/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recency table's datapath (`load --backend table`): the table's lines
 * live in the same aligned map as the sketch's, one region per CPU
 * (placement.h).  The logic, shared placement's exclusive admission
 * included, is include/pacer_table.h's; this adds the map lookups.
 */
#ifndef PACER_BPF_TABLE_H
#define PACER_BPF_TABLE_H

#include "placement.h"
#include "record.h"
#include "pacer_table.h"

/* The table's verdict for a key with hash h: 1 to drop, -1 if a line is missing. */
static __always_inline int table_verdict(__u64 h, __u64 tick,
					  const struct pacer_rate *rate, __u32 *age,
					 struct pacer_counters *st)
{
	struct pacer_tbl_line *l[2];
	__u32 idx[2], base = copy_base(), event;
	__u16 fp = pacer_tbl_fp(h);
	int drop;

	pacer_tbl_lines(h, pacer_layout.lines_log2, idx);
	l[0] = (struct pacer_tbl_line *)line_at(base + idx[0]);
	l[1] = (struct pacer_tbl_line *)line_at(base + idx[1]);
	if (!l[0] || !l[1])
		return -1;
	drop = pacer_tbl_verdict(l, fp, tick, rate, pacer_cfg.policy, pacer_layout.on_full,
				 pacer_layout.placement, record_wanted(), age, &event);
	st->c[PACER_STAT_TABLE_FULL] += event == PACER_TBL_EV_FULL;
	st->c[PACER_STAT_TABLE_EVICT] += event == PACER_TBL_EV_EVICT;
	st->c[PACER_STAT_TABLE_RACE] += event == PACER_TBL_EV_RACE;
	return drop;
}

#endif /* PACER_BPF_TABLE_H */
