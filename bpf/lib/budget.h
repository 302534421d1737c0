/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The global budget stage of the XDP datapath (include/pacer_budget.h has
 * the ring logic): runs after per-source pacing judged a packet admissible,
 * before its source's state is written (only if this stage admits it too).
 *
 * Across CPUs the ring is one map value guarded by a bpf_spin_lock: the
 * release, the check and the admission are one critical section, so the
 * guarantee (at most K admissions in any window of length T of the ring's
 * time) is exact on any number of CPUs.  Cost per packet that reaches the
 * stage: one lock round trip on a cache line every CPU writes, plus the
 * release loop (amortised one bucket per admission).  Packets the pacer
 * drops never reach it.  The cached clock is read inside the lock, so the
 * ring's time is the clock itself unless a CPU's reading was behind.
 */
#ifndef PACER_BPF_BUDGET_H
#define PACER_BPF_BUDGET_H

#include "clock.h"
#include "pacer_budget.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_budget_state);
} pacer_budget SEC(".maps");

/* The returning-source filter; the loader sizes it (--reserve-cells). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_BUDGET_DEFAULT_SEEN_LINES);
	__type(key, __u32);
	__type(value, struct pacer_seen_line);
} pacer_seen SEC(".maps");

/* Off until load or set turns it on; its own mmapable map, written under a sequence count. */
struct pacer_budget_cfg pacer_budget_cfg SEC(".data.budget") = {
	.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2,
};

/* A stable copy of the configuration, or -1 while `set` is writing it. */
static __always_inline int budget_cfg_read(struct pacer_budget_cfg *out)
{
	volatile struct pacer_budget_cfg *c = &pacer_budget_cfg;
	__u64 seq = c->seq;

	asm volatile("" ::: "memory"); /* x86 keeps loads in order; keep the compiler from moving them */
	out->limit = c->limit;
	out->window_ns = c->window_ns;
	out->slack_ns = c->slack_ns;
	out->slack_count = c->slack_count;
	out->new_limit = c->new_limit;
	out->horizon_ns = c->horizon_ns;
	out->buckets = c->buckets;
	out->seen_cells_log2 = c->seen_cells_log2;
	asm volatile("" ::: "memory");
	return (seq & 1) || c->seq != seq ? -1 : 0;
}

static __always_inline struct pacer_seen_line *seen_line(__u64 h, __u32 i, __u32 log2, __u32 *cell)
{
	__u32 c = pacer_seen_cell(h, i, log2), idx = c / PACER_SEEN_CELLS_PER_LINE;

	*cell = c % PACER_SEEN_CELLS_PER_LINE;
	return bpf_map_lookup_elem(&pacer_seen, &idx);
}

/*
 * Whether every probe cell of h was stamped within the horizon; with
 * `stamp`, also stamp them now (the budget admitted the source).
 */
static __always_inline int seen_probe(__u64 h, const struct pacer_budget_cfg *c, __u64 now,
				      int stamp)
{
	struct pacer_seen_line *l;
	__u32 i, cell;
	int recent = 1;

#pragma unroll
	for (i = 0; i < PACER_SEEN_PROBES; i++) {
		__u16 *st;

		l = seen_line(h, i, c->seen_cells_log2, &cell);
		if (!l)
			return 0;
		st = &l->stamp[cell & (PACER_SEEN_CELLS_PER_LINE - 1)];
		recent &= pacer_seen_recent(*st, now, c->horizon_ns);
		if (stamp)
			*st = pacer_seen_stamp(now);
	}
	return recent;
}

/*
 * 0: admitted (or budget off), *now_ns set to the ring time of the
 * admission; 1: dropped, counted.  A reserve (new_limit < limit) makes
 * sources not admitted within the horizon wait once new_limit are in flight.
 */
static __always_inline int budget_stage(__u64 h, __u64 *now_ns, struct pacer_counters *st)
{
	const struct pacer_clock_state *clk;
	struct pacer_budget_cfg c;
	struct pacer_budget_params p;
	struct pacer_budget_state *s;
	__u64 limit, t = *now_ns;
	__u32 zero = 0;
	int returning = 0, verdict;

	if (!pacer_budget_cfg.limit)
		return 0;
	if (budget_cfg_read(&c) < 0 && budget_cfg_read(&c) < 0) {
		st->c[PACER_STAT_DROPPED_BUDGET]++; /* being changed right now: fail closed */
		return 1;
	}
	if (!c.limit)
		return 0;
	s = bpf_map_lookup_elem(&pacer_budget, &zero);
	if (!s) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return 1;
	}
	limit = c.limit;
	if (c.new_limit < c.limit) {
		returning = seen_probe(h, &c, t, 0);
		if (!returning)
			limit = c.new_limit;
	}
	pacer_budget_params_of(&c, &p);
	clk = clock_cached();
	bpf_spin_lock(&s->lock);
	if (clk && clk->armed == CLOCK_RUNNING && *(volatile const __u64 *)&clk->now_ns > t)
		t = *(volatile const __u64 *)&clk->now_ns;
	verdict = pacer_budget_take(&s->ring, &p, limit, &t);
	bpf_spin_unlock(&s->lock);
	if (verdict != PACER_BUDGET_ADMIT) {
		st->c[PACER_STAT_DROPPED_BUDGET]++;
		if (verdict == PACER_BUDGET_NO_BUCKET)
			st->c[PACER_STAT_BUDGET_NO_BUCKET]++;
		return 1;
	}
	if (c.new_limit < c.limit) {
		seen_probe(h, &c, t, 1);
		st->c[PACER_STAT_BUDGET_RETURNING] += returning;
	}
	*now_ns = t;
	return 0;
}

#endif /* PACER_BPF_BUDGET_H */
