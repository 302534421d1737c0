/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dense table's datapath (`load --backend dense`): its lines live in
 * the same aligned map as the other backends', one region of
 * pacer_layout.lines lines per CPU (placement.h).  The logic, shared
 * placement's exclusive admission included, is include/pacer_dense.h's;
 * this adds the map lookups.
 */
#ifndef PACER_BPF_DENSE_H
#define PACER_BPF_DENSE_H

#include "placement.h"
#include "pacer_dense.h"

/* A key's two lines and chosen entry, from its judgement to its commit. */
struct dense_key {
	struct pacer_dense_line *l[2];
	__u32 slot, event, fp;
};

/* The fingerprint and two lines of the key with hash h; -1 if a line is missing. */
static __always_inline int dense_key_of(__u64 h, struct dense_key *k)
{
	__u32 idx[2], base = copy_base();

	k->fp = pacer_dense_fp(h);
	k->slot = 0;
	k->event = 0;
	pacer_dense_lines(h, pacer_layout.lines, idx);
	k->l[0] = (struct pacer_dense_line *)line_at(base + idx[0]);
	k->l[1] = (struct pacer_dense_line *)line_at(base + idx[1]);
	return k->l[0] && k->l[1] ? 0 : -1;
}

/*
 * Pacing's judgement for a key with hash h (pacer_dense_judge): 1 to drop,
 * 0 if pacing admits it (nothing written yet: dense_commit() does, if
 * every later stage admits it too), -1 if a line is missing.  *age is read
 * only if want_age (the packet is recorded: record_pick()).
 */
static __always_inline int dense_judge(__u64 h, __u64 tick, const struct pacer_rate *rate,
				       __u32 policy, int want_age, __u32 *age, struct dense_key *k,
				       struct pacer_counters *st)
{
	int drop;

	if (dense_key_of(h, k) < 0)
		return -1;
	drop = pacer_dense_judge(k->l, k->fp, tick, rate, policy, pacer_layout.on_full,
				 pacer_layout.placement, want_age, age, &k->event, &k->slot);
	st->c[PACER_STAT_TABLE_FULL] += k->event == PACER_TBL_EV_FULL;
	return drop;
}

/* Write the admission at tick (pacer_dense_commit): 0 admitted, 1 lost to another CPU. */
static __always_inline int dense_commit(struct dense_key *k, __u64 tick,
					const struct pacer_rate *rate, struct pacer_counters *st)
{
	int drop;

	drop = pacer_dense_commit(k->l, k->fp, tick, rate, pacer_layout.placement, k->slot,
				  &k->event);
	st->c[PACER_STAT_TABLE_EVICT] += k->event == PACER_TBL_EV_EVICT;
	st->c[PACER_STAT_TABLE_RACE] += k->event == PACER_TBL_EV_RACE;
	return drop;
}

#endif /* PACER_BPF_DENSE_H */
