/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recency sketch's datapath (`load --backend sketch`): the map lookups
 * for a key's lines; the decision is include/pacer_verdict.h's, which the
 * userspace simulator and the tests run too.
 */
#ifndef PACER_BPF_SKETCH_H
#define PACER_BPF_SKETCH_H

#include "placement.h"
#include "pacer_verdict.h"

/* Map lookups for the key's lines; -1 if one is missing (map sized wrong). */
static __always_inline int lookup_lines(const __u32 idx[PACER_MAX_ROWS],
					struct pacer_line *line[PACER_MAX_ROWS], __u32 rows)
{
	__u32 base = copy_base();
	int r;

	if (pacer_layout.kind == PACER_LAYOUT_BLOCKED) {
		struct pacer_line *l = line_at(base + idx[0]);

		if (!l)
			return -1;
#pragma unroll
		for (r = 0; r < PACER_MAX_ROWS; r++)
			line[r] = l;
		return 0;
	}
#pragma unroll
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows) {
			line[r] = line_at(base + idx[r]);
			if (!line[r])
				return -1;
		}
	}
	return 0;
}

/* The sketch's verdict for a key with hash h: 1 to drop, -1 if a line is missing. */
static __always_inline int sketch_verdict(__u64 h, __u64 tick,
					  const struct pacer_rate *rate, __u32 *age,
					  struct pacer_counters *st)
{
	struct pacer_line *line[PACER_MAX_ROWS];
	__u32 idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS];
	__u32 rows = pacer_layout.rows, rebased = 0;
	int drop;

	pacer_slots(pacer_layout.kind, rows, pacer_layout.lines_log2, h, idx, cell);
	if (lookup_lines(idx, line, rows) < 0)
		return -1;
	drop = pacer_sketch_packet(line, cell, rows, tick, rate, pacer_cfg.policy,
				   pacer_layout.placement, age, &rebased);
	st->c[PACER_STAT_LINE_REFRESH] += rebased;
	return drop;
}

#endif /* PACER_BPF_SKETCH_H */
