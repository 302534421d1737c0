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

/* A key's cells, from its judgement to its commit. */
struct sketch_key {
	struct pacer_line *line[PACER_MAX_ROWS];
	__u32 cell[PACER_MAX_ROWS];
};

/* The cells and lines of the key with hash h; -1 if a line is missing. */
static __always_inline int sketch_key_of(__u64 h, struct sketch_key *k)
{
	__u32 idx[PACER_MAX_ROWS];

	pacer_slots(pacer_layout.kind, pacer_layout.rows, pacer_layout.lines_log2, h, idx, k->cell);
	return lookup_lines(idx, k->line, pacer_layout.rows);
}

/*
 * Pacing's judgement for a key with hash h under rate and policy
 * (pacer_sketch_judge): 1 to drop,
 * 0 if pacing admits it (nothing written yet: sketch_commit() does, if every
 * later stage admits it too), -1 if a line is missing.
 */
static __always_inline int sketch_judge(__u64 h, __u64 tick, const struct pacer_rate *rate,
					__u32 policy, __u32 *age, struct sketch_key *k,
					struct pacer_counters *st)
{
	__u32 rebased = 0;
	int drop;

	if (sketch_key_of(h, k) < 0)
		return -1;
	drop = pacer_sketch_judge(k->line, k->cell, pacer_layout.rows, tick, rate, policy,
				  age, &rebased);
	st->c[PACER_STAT_LINE_REFRESH] += rebased;
	return drop;
}

/* Write the admission at tick (pacer_sketch_commit): 0 admitted, 1 lost to another CPU. */
static __always_inline int sketch_commit(const struct sketch_key *k, __u64 tick,
					 const struct pacer_rate *rate, struct pacer_counters *st)
{
	__u32 rebased = 0;
	int drop;

	drop = pacer_sketch_commit(k->line, k->cell, pacer_layout.rows, tick, rate,
				   pacer_layout.placement, &rebased);
	st->c[PACER_STAT_LINE_REFRESH] += rebased;
	return drop;
}

/*
 * Write an admission sketch_judge() just allowed at the same tick, with no
 * stage between (pacer_sketch_commit_judged): 0 admitted, 1 lost to another CPU.
 */
static __always_inline int sketch_commit_judged(const struct sketch_key *k, __u64 tick,
						const struct pacer_rate *rate, __u32 age,
						struct pacer_counters *st)
{
	__u32 rebased = 0;
	int drop;

	drop = pacer_sketch_commit_judged(k->line, k->cell, pacer_layout.rows, tick, rate,
					  pacer_layout.placement, age, &rebased);
	st->c[PACER_STAT_LINE_REFRESH] += rebased;
	return drop;
}

#endif /* PACER_BPF_SKETCH_H */
