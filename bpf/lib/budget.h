/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The global budget stage of the XDP datapath (include/pacer_budget.h has
 * the ring logic): runs after per-source pacing judged a packet admissible,
 * before its source's state is written (only if this stage admits it too).
 *
 * Across CPUs the ring is one map value guarded by a bpf_spin_lock, but a
 * CPU takes the lock only to draw a batch of admissions (include/
 * pacer_budget.h: the batch B and the slack it adds, ncpus * (B - 1) above
 * K in any window) and spends them from its own per-CPU value.  A refusal
 * takes no lock while the ring's full_until says it is full: it reads that
 * cache line and writes nothing shared, so a flood the budget refuses
 * costs each CPU its own work.  Release, check and draw are one critical
 * section.  The cached clock is read inside the lock, so the ring's time is
 * the clock itself unless a CPU's reading was behind.
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

/* Each CPU's batch of drawn admissions. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_budget_local);
} pacer_budget_local SEC(".maps");

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
	out->batch = c->batch;
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

/* A refusal's own event; the verdict (dropped_budget, or observed) is counted by the program. */
static __always_inline int budget_refuse(struct pacer_counters *st, int verdict)
{
	if (verdict == PACER_BUDGET_NO_BUCKET)
		st->c[PACER_STAT_BUDGET_NO_BUCKET]++;
	return 1;
}

/*
 * 0: admitted (or budget off), *now_ns set to the ring time of the
 * admission; 1: refused (the caller counts the verdict).  A reserve (new_limit < limit) makes
 * sources not admitted within the horizon wait once new_limit are in flight.
 * An admission spends one of this CPU's drawn admissions, or draws a batch
 * under the lock; a refusal reads full_until, or finds the ring full under
 * the lock.
 */
static __always_inline int budget_stage(__u64 h, __u64 *now_ns, struct pacer_counters *st)
{
	const struct pacer_clock_state *clk;
	struct pacer_budget_local *loc;
	struct pacer_budget_cfg c;
	struct pacer_budget_state *s;
	__u64 limit, got = 0, inflight, t = *now_ns;
	__u32 zero = 0, slot;
	int returning = 0, verdict;

	if (!PACER_HAS(PACER_F_BUDGET) || !pacer_budget_cfg.limit)
		return 0;
	if (budget_cfg_read(&c) < 0 && budget_cfg_read(&c) < 0) {
		return 1; /* being changed right now: fail closed */
	}
	if (!c.limit)
		return 0;
	s = bpf_map_lookup_elem(&pacer_budget, &zero);
	loc = bpf_map_lookup_elem(&pacer_budget_local, &zero);
	if (!s || !loc) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return 1;
	}
	limit = c.limit;
	slot = PACER_BUDGET_RETURNING;
	if (c.new_limit < c.limit) {
		returning = seen_probe(h, &c, t, 0);
		if (!returning) {
			limit = c.new_limit;
			slot = PACER_BUDGET_NEW;
		}
	} else {
		returning = 1; /* no reserve: every batch serves every source */
	}
	if (!pacer_budget_spend(loc, c.seq, returning, &t)) {
		clk = clock_cached();
		if (clk && clk->armed == CLOCK_RUNNING && *(volatile const __u64 *)&clk->now_ns > t)
			t = *(volatile const __u64 *)&clk->now_ns;
		/* full until a later time under this configuration: refuse without the lock */
		if (pacer_budget_full(s, c.seq, slot, t))
			return budget_refuse(st, PACER_BUDGET_EMPTY);
		bpf_spin_lock(&s->lock);
		if (clk && clk->armed == CLOCK_RUNNING && *(volatile const __u64 *)&clk->now_ns > t)
			t = *(volatile const __u64 *)&clk->now_ns;
		verdict = pacer_budget_draw_locked(s, &c, limit, &t, &got);
		inflight = s->ring.inflight;
		bpf_spin_unlock(&s->lock);
		if (verdict != PACER_BUDGET_ADMIT)
			return budget_refuse(st, verdict);
		pacer_budget_keep(loc, c.seq, got, inflight <= c.new_limit, t);
	}
	if (c.new_limit < c.limit) {
		seen_probe(h, &c, t, 1);
		st->c[PACER_STAT_BUDGET_RETURNING] += returning;
	}
	*now_ns = t;
	return 0;
}

#endif /* PACER_BPF_BUDGET_H */
