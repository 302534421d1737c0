/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recency table's datapath (`load --backend table`), included by
 * xdp_pacer.bpf.c: the table's lines live in the same aligned map as the
 * sketch's, one region per CPU (pacer_place.h).  The logic is
 * include/pacer_table.h's; this adds the map lookups and, for shared
 * placement, exclusive admission.
 */
#ifndef PACER_BPF_TABLE_H
#define PACER_BPF_TABLE_H

struct pacer_tbl_line;
struct pacer_tbl_scan;
__noinline int table_scan_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
			       struct pacer_tbl_scan *s);
#define PACER_TBL_SCAN_LINE table_scan_line
#include "pacer_table.h"

/*
 * A global function: the verifier checks it once, not once per path that
 * reaches it (the parser alone makes dozens).
 */
__noinline int table_scan_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
			       struct pacer_tbl_scan *s)
{
	if (!l || !s)
		return 0;
	pacer_tbl_scan_line(l, line, tick, s);
	return 0;
}

/*
 * Shared placement: entries are claimed by compare-and-swap of the whole
 * entry, from the value the choice was made on.  Two CPUs admitting
 * the same key pick the same entry from the same view and one swap fails;
 * if their views differed (another key wrote meanwhile) they may pick
 * different entries, so after its swap each re-reads both lines and drops
 * if the key has a second fresh entry: the later of two swaps always sees
 * the earlier one (the swaps are full barriers), so at most one admits.
 * A loser drops, counted as table_race; a failed swap can also be another
 * key taking the entry: a false drop, the safe side.
 */
/*
 * Swap one 32-bit entry from `old` to `new`: a 64-bit swap of its aligned
 * word (clang 14 emits 32-bit atomics only for -mcpu=v3), retried once when
 * only the neighbouring entry moved.  0 on success.
 */
static __always_inline int table_entry_swap(struct pacer_tbl_line *const l[2], __u32 slot,
					    __u32 old, __u32 new)
{
	struct pacer_tbl_line *line = slot < PACER_TBL_WAYS ? l[0] : l[1];
	__u32 entry = pacer_tbl_entry_of(slot), shift = (entry & 1) * 32;
	__u64 *w = &line->w[(entry >> 1) & (PACER_TBL_WAYS / 2 - 1)], cur, want, seen;
	int i;

	for (i = 0; i < 2; i++) {
		cur = *(volatile __u64 *)w;
		if ((__u32)(cur >> shift) != old)
			return -1;
		want = (cur & ~(0xffffffffULL << shift)) | ((__u64)new << shift);
		seen = __sync_val_compare_and_swap(w, cur, want);
		if (seen == cur)
			return 0;
	}
	return -1;
}

static __always_inline int table_claim_shared(struct pacer_tbl_line *const l[2], __u32 slot,
					      __u16 fp, __u64 tick, __u32 thresh, int evict)
{
	__u32 old = *(volatile __u32 *)pacer_tbl_slot(l, slot);
	struct pacer_tbl_scan s;

	if (!evict && pacer_tbl_fresh(old, tick, thresh))
		return -1; /* taken since we looked */
	if (table_entry_swap(l, slot, old, pacer_tbl_entry(fp, tick)))
		return -1;
	pacer_tbl_scan(l, fp, tick, thresh, &s);
	/* Another fresh entry of the key: admitted elsewhere meanwhile. */
	return s.fresh_mask & ~(1u << slot) ? -1 : 0;
}

static __always_inline int table_verdict_shared(struct pacer_tbl_line *const l[2], __u16 fp,
						__u64 tick, __u32 thresh, __u32 *age,
						struct pacer_counters *st)
{
	struct pacer_tbl_scan s;
	__u32 slot;
	int evicted;

	pacer_tbl_scan(l, fp, tick, thresh, &s);
	*age = pacer_tbl_key_age(l, &s, tick);
	if (s.fresh_mask) {
		__u32 fresh = pacer_tbl_first(s.fresh_mask);
		__u32 old = *(volatile __u32 *)pacer_tbl_slot(l, fresh);

		/* quiet: refresh unless already now; a failed swap means another CPU just wrote it. */
		if (pacer_cfg.policy == PACER_POLICY_QUIET && (__u16)(old >> 16) == fp &&
		    pacer_tbl_age(old, tick) != 0)
			table_entry_swap(l, fresh, old, pacer_tbl_entry(fp, tick));
		return 1;
	}
	slot = pacer_tbl_pick(l, &s, tick, pacer_layout.on_full, &evicted);
	if (slot == PACER_TBL_NONE) {
		st->c[PACER_STAT_TABLE_FULL]++;
		return 1;
	}
	if (table_claim_shared(l, slot, fp, tick, thresh, evicted) < 0) {
		st->c[PACER_STAT_TABLE_RACE]++;
		return 1;
	}
	st->c[PACER_STAT_TABLE_EVICT] += evicted;
	return 0;
}

/* The table's verdict for a key with hash h: 1 to drop, -1 if a line is missing. */
static __always_inline int table_verdict(__u64 h, __u64 tick, __u32 thresh, __u32 *age,
					 struct pacer_counters *st)
{
	struct pacer_tbl_line *l[2];
	__u32 idx[2], base = sketch_base(), event;
	__u16 fp = pacer_tbl_fp(h);
	int drop;

	pacer_tbl_lines(h, pacer_layout.lines_log2, idx);
	l[0] = (struct pacer_tbl_line *)line_at(base + idx[0]);
	l[1] = (struct pacer_tbl_line *)line_at(base + idx[1]);
	if (!l[0] || !l[1])
		return -1;
	if (pacer_layout.placement == PACER_PLACEMENT_SHARED)
		return table_verdict_shared(l, fp, tick, thresh, age, st);
	drop = pacer_tbl_packet(l, fp, tick, thresh, pacer_cfg.policy, pacer_layout.on_full, age,
				&event);
	st->c[PACER_STAT_TABLE_FULL] += event == PACER_TBL_EV_FULL;
	st->c[PACER_STAT_TABLE_EVICT] += event == PACER_TBL_EV_EVICT;
	return drop;
}

#endif /* PACER_BPF_TABLE_H */
