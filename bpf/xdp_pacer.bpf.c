// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer datapath: admit a source prefix's packets at its rate (one per
 * interval, or N per T with bursts: GCRA), judged by a recency sketch (include/pacer_sketch.h) or table
 * (include/pacer_table.h), then by the global budget.  One header per stage
 * in bpf/lib/; the logic they share with userspace is in include/.
 *
 * Order: pacing judges (reads the per-source state), the budget decides,
 * and only a packet both admitted is written into the per-source state.  So
 * a flood the budget refuses inserts no keys (at most K per T get in) and
 * cannot push returning sources out before the budget's reserve sees them;
 * a refused packet was not admitted, so leaving its source untouched
 * cannot let the source through early.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_parse.h"
#include "pacer_classify.h"
#include "lib/config.h"
#include "lib/stats.h"
#include "lib/key.h"
#include "lib/clock.h"
#include "lib/sketch.h"
#include "lib/table.h"
#include "lib/budget.h"
#include "lib/record.h"
#include "lib/class.h"
#include "lib/lists.h"

/* Frames that are not IP pass; malformed IP frames get the configured verdict. */
static __always_inline int not_ip_verdict(int kind, struct pacer_counters *st)
{
	if (kind == PACER_PKT_NONIP) {
		st->c[PACER_STAT_NONIP_PASSED]++;
		return XDP_PASS;
	}
	if (pacer_cfg.malformed == PACER_MALFORMED_DROP) {
		st->c[PACER_STAT_MALFORMED_DROPPED]++;
		return XDP_DROP;
	}
	st->c[PACER_STAT_MALFORMED_PASSED]++;
	return XDP_PASS;
}

/* A rate from its ticks; a corrupt one must not open the gate: use the strictest the cells hold. */
static __always_inline struct pacer_rate rate_checked(__u32 thresh_ticks, __u32 burst_ticks)
{
	__u32 max_sat = pacer_rate_max_sat(pacer_layout.backend);
	struct pacer_rate r = pacer_rate_of(thresh_ticks, burst_ticks);

	if (r.thresh < PACER_MIN_THRESH || r.thresh > max_sat || r.burst > max_sat || r.sat > max_sat)
		return pacer_rate_of(max_sat, 0);
	return r;
}

/*
 * The stages after the parser are global functions: the kernel's verifier
 * checks a global function once, on its own, with its arguments unknown,
 * instead of once per path that reaches it.  Inline, every stage would be
 * walked again for each of the parser's outcomes and of the earlier
 * stages' branches: more than the 1 000 000 instructions Linux 6.1 allows
 * (docs/verifier.md has the counts).  Pointer arguments may be NULL to the
 * verifier; each checks its own.  The rate is passed by pointer: read in a
 * stage, its "corrupt: use the strictest" branch would have the verifier
 * walk the stage twice.
 *
 * Pacing is two global functions: the judgement reads the source's state,
 * the commit writes it, only once the budget admitted the packet too.  The
 * backend is fixed at load (.rodata), so the verifier walks its branch
 * alone.  The commit finds the key's lines again from its hash (map value
 * pointers do not survive a global function's boundary: the verifier sees
 * the stack bytes as scalars); what the table's judgement chose (the entry,
 * the event) travels in *io.
 */
struct pacer_stage_io {
	__u32 age, slot, event;
	__u32 commit_now; /* no budget: write the admission in the judgement */
	__u32 policy;     /* enum pacer_policy: the global one, or the deciding class's */
};

/*
 * 1 to drop, 0 if pacing admits, -1 on a map error.  With no budget to
 * ask (io->commit_now), an admission is written here at once, through the
 * pointers the judgement found (0 then means written; 1 if another CPU
 * won the key); else nothing is written yet: pacer_commit_stage does it.
 */
__noinline int pacer_judge_stage(__u64 h, __u64 tick, const struct pacer_rate *rate,
				 struct pacer_stage_io *io, struct pacer_counters *st)
{
	struct sketch_key sk;
	struct table_key tk;
	int drop;

	if (!rate || !io || !st)
		return -1;
	if (pacer_layout.backend != PACER_BACKEND_TABLE) {
		drop = sketch_judge(h, tick, rate, io->policy, &io->age, &sk, st);
		if (drop || !io->commit_now)
			return drop;
		return sketch_commit(&sk, tick, rate, st) ? 1 : 0;
	}
	drop = table_judge(h, tick, rate, io->policy, &io->age, &tk, st);
	if (drop || !io->commit_now) {
		io->slot = tk.slot;
		io->event = tk.event;
		return drop;
	}
	return table_commit(&tk, tick, rate, st) ? 1 : 0;
}

/* Write the admission at tick: 0 admitted, 1 lost to another CPU (or, failing closed, a map error). */
__noinline int pacer_commit_stage(__u64 h, __u64 tick, const struct pacer_rate *rate,
				  struct pacer_stage_io *io, struct pacer_counters *st)
{
	struct sketch_key sk;
	struct table_key tk;

	if (!rate || !io || !st)
		return 1;
	if (pacer_layout.backend != PACER_BACKEND_TABLE)
		return sketch_key_of(h, &sk) < 0 ? 1 : sketch_commit(&sk, tick, rate, st);
	if (table_key_of(h, &tk) < 0)
		return 1;
	tk.slot = io->slot;
	tk.event = io->event;
	return table_commit(&tk, tick, rate, st);
}

/* 0: admitted by the global budget (or it is off), *now_ns the admission time; 1: dropped. */
__noinline int pacer_budget_stage(__u64 h, __u64 *now_ns, struct pacer_counters *st)
{
	if (!now_ns || !st)
		return 1;
	return budget_stage(h, now_ns, st);
}

/* What a record says besides the source (a global function takes at most five arguments). */
struct pacer_outcome {
	__u64 now_ns;
	__u32 kind, prefix, age, thresh, drop, class_slot;
};

__noinline int pacer_record_stage(__u64 h, const struct pacer_src *src,
				  const struct pacer_outcome *o, struct pacer_counters *st)
{
	if (!src || !o || !st)
		return 0;
	record(h, src, o->kind, o->prefix, o->now_ns, o->age, o->thresh, o->drop, o->class_slot, st);
	return 0;
}

/* What pacing a key needs besides its source: the key's hash, its limit, what a record says. */
struct pacer_pace_in {
	__u64 h;
	__u32 thresh_ticks, burst_ticks, policy;
	__u32 kind, prefix, class_slot;
};

enum pacer_pace_verdict {
	PACER_PACE_PASS,
	PACER_PACE_DROP,        /* its rate refused it (counted by the caller) */
	PACER_PACE_DROP_BUDGET, /* the global budget refused it (counted by the budget) */
	PACER_PACE_DROP_ERROR,  /* a map went missing: failing closed (counted here) */
};

/*
 * Pace the key in->h (src: its masked source, for records): pacing judges,
 * the budget decides, the admission is written; recording.  An enum
 * pacer_pace_verdict.
 */
__noinline int pacer_pace(const struct pacer_pace_in *in, struct pacer_src *src,
			  struct pacer_counters *st)
{
	__u64 h, now_ns, tick;
	struct pacer_rate rate;
	struct pacer_stage_io io;
	int drop, budget_drop;

	if (!in || !src || !st)
		return PACER_PACE_DROP_ERROR;
	h = in->h;
	/* Field by field: an initialiser would be a constant in .rodata, which holds the config. */
	io.age = PACER_AGE_STALE;
	io.slot = 0;
	io.event = 0;
	io.commit_now = !pacer_budget_cfg.limit;
	io.policy = in->policy;
	now_ns = clock_now();
	tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	rate = rate_checked(in->thresh_ticks, in->burst_ticks);
	drop = pacer_judge_stage(h, tick, &rate, &io, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return PACER_PACE_DROP_ERROR;
	}
	/* After pacing: the global budget (counts its own drops; sets the admission time). */
	budget_drop = !drop && !io.commit_now && pacer_budget_stage(h, &now_ns, st);
	/* Admitted by both: now the source's state is written, at the admission time. */
	if (!drop && !budget_drop && !io.commit_now) {
		tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
		drop = pacer_commit_stage(h, tick, &rate, &io, st);
	}
	if (record_wanted()) {
		struct pacer_outcome o = {
			.now_ns = now_ns, .kind = in->kind, .prefix = in->prefix, .age = io.age,
			.thresh = rate.thresh, .drop = drop | budget_drop,
			.class_slot = in->class_slot,
		};

		pacer_record_stage(h, src, &o, st);
	}
	if (budget_drop)
		return PACER_PACE_DROP_BUDGET;
	return drop ? PACER_PACE_DROP : PACER_PACE_PASS;
}

/* An IP packet's verdict with no classes: its source, the global limit. */
static __always_inline int pacer_judge(struct pacer_src *src, int kind, struct pacer_counters *st)
{
	struct pacer_pace_in in;
	int v;

	in.h = source_hash(kind, src, &in.prefix, st);
	in.thresh_ticks = pacer_cfg.thresh_ticks;
	in.burst_ticks = pacer_cfg.burst_ticks;
	in.policy = pacer_cfg.policy;
	in.kind = kind;
	in.class_slot = 0;
	v = pacer_pace(&in, src, st);
	if (v == PACER_PACE_PASS) {
		st->c[PACER_STAT_PASSED]++;
		return XDP_PASS;
	}
	if (v == PACER_PACE_DROP)
		st->c[PACER_STAT_DROPPED_RECENT]++;
	return XDP_DROP;
}

/* The exempt/deny lists' verdict (counted), or -1 when the source is on neither. */
static __always_inline int lists_verdict(int kind, const struct pacer_src *src,
					 struct pacer_counters *st)
{
	__u32 v = list_verdict(kind, src);

	if (v == PACER_LIST_EXEMPT) {
		st->c[PACER_STAT_EXEMPT_PASSED]++;
		return XDP_PASS;
	}
	if (v == PACER_LIST_DENY) {
		st->c[PACER_STAT_DENY_DROPPED]++;
		return XDP_DROP;
	}
	return -1;
}

/* A class's counter row; NULL (nothing counted) if the slot is out of range. */
static __always_inline struct pacer_class_counters *class_counters(__u32 slot)
{
	return bpf_map_lookup_elem(&pacer_class_stats, &slot);
}

/*
 * The index in its bank of the first class whose match fits p, or -1.
 * Classes are live data: the verifier accepts this walk for any list.
 */
static __always_inline int class_find(const struct pacer_pkt *p, __u32 sel)
{
	__u32 n = PACER_CLASS_SEL_COUNT(sel), base = PACER_CLASS_SEL_BANK(sel) * PACER_MAX_CLASSES;
	int i;

	for (i = 0; i < PACER_MAX_CLASSES; i++) {
		__u32 idx = base + i;
		const struct pacer_class *c;

		if (i >= n)
			break;
		c = bpf_map_lookup_elem(&pacer_classes, &idx);
		if (!c)
			break;
		if (pacer_match_fits(&c->m, p))
			return i;
	}
	return -1;
}

#define PACER_CLASS_PACES (-1) /* pacer_class_path: the class paces; *in says how */

/*
 * With classes: the full parse, the lists, then the first class that fits
 * decides; no class: pass, unclassified.  class_sel is read once here, so
 * a bank flip mid-packet cannot mix two lists.  An XDP verdict, or
 * PACER_CLASS_PACES with *in and *masked set for pacer_pace() (called by
 * the program itself: a call from here would nest one level deeper than
 * 6.1's 512 bytes of stack across calls allow).
 */
__noinline int pacer_class_path(struct xdp_md *ctx, struct pacer_pace_in *in,
				struct pacer_src *masked, struct pacer_counters *st)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct pacer_class *c;
	struct pacer_class_counters *cs;
	struct pacer_pkt p;
	__u32 sel = pacer_cfg.class_sel, idx;
	__u64 key[2];
	int kind, v, i;

	if (!in || !masked || !st)
		return XDP_DROP;
	kind = pacer_parse_pkt(data, data_end, &p);
	if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
		return not_ip_verdict(kind, st);
	st->c[kind == PACER_PKT_V4 ? PACER_STAT_IPV4 : PACER_STAT_IPV6]++;
	if (pacer_cfg.list_sel) {
		v = lists_verdict(kind, &p.src, st);
		if (v >= 0)
			return v;
	}
	i = class_find(&p, sel);
	if (i < 0) {
		st->c[PACER_STAT_UNCLASSIFIED]++;
		return XDP_PASS;
	}
	idx = PACER_CLASS_SEL_BANK(sel) * PACER_MAX_CLASSES + (__u32)i;
	c = bpf_map_lookup_elem(&pacer_classes, &idx);
	if (!c) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return XDP_DROP;
	}
	cs = class_counters(c->stat_slot);
	if (cs)
		cs->c[PACER_CSTAT_SEEN]++;
	if (c->action == PACER_ACTION_PASS) {
		if (cs)
			cs->c[PACER_CSTAT_PASSED]++;
		st->c[PACER_STAT_PASSED]++;
		return XDP_PASS;
	}
	if (c->action != PACER_ACTION_PACE) { /* drop, or an action this build does not know */
		if (cs)
			cs->c[PACER_CSTAT_DROPPED]++;
		st->c[PACER_STAT_CLASS_DROPPED]++;
		return XDP_DROP;
	}
	key[0] = pacer_cfg.hash_key[0];
	key[1] = pacer_cfg.hash_key[1];
	if (!key[0] || !key[1])
		init_hash_key(key, st);
	in->h = pacer_class_key_hash(key, c, &p, masked, &in->prefix);
	in->thresh_ticks = c->thresh_ticks;
	in->burst_ticks = c->burst_ticks;
	in->policy = c->policy;
	in->kind = kind;
	in->class_slot = c->stat_slot + 1;
	return PACER_CLASS_PACES;
}

/* A paced class's packet: its verdict, counted for the class too. */
static __always_inline int pace_class(struct pacer_pace_in *in, struct pacer_src *masked,
				      struct pacer_counters *st)
{
	struct pacer_class_counters *cs;
	int v = pacer_pace(in, masked, st);

	cs = class_counters(in->class_slot - 1);
	if (v == PACER_PACE_PASS) {
		if (cs)
			cs->c[PACER_CSTAT_PASSED]++;
		st->c[PACER_STAT_PASSED]++;
		return XDP_PASS;
	}
	if (v == PACER_PACE_DROP) {
		st->c[PACER_STAT_DROPPED_RECENT]++;
		if (cs)
			cs->c[PACER_CSTAT_DROPPED]++;
	} else if (v == PACER_PACE_DROP_BUDGET && cs) {
		cs->c[PACER_CSTAT_DROPPED_BUDGET]++;
	}
	return XDP_DROP;
}

SEC("xdp")
int xdp_pacer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pacer_counters *st;
	struct pacer_src src;
	int kind, v;

	st = stats_get();
	if (!st)
		return XDP_PASS;
	st->c[PACER_STAT_SEEN]++;
	if (pacer_cfg.class_sel) {
		struct pacer_pace_in in;

		v = pacer_class_path(ctx, &in, &src, st);
		return v == PACER_CLASS_PACES ? pace_class(&in, &src, st) : v;
	}
	kind = pacer_parse(data, data_end, &src);
	if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
		return not_ip_verdict(kind, st);
	if (pacer_cfg.list_sel) {
		v = lists_verdict(kind, &src, st);
		if (v >= 0) {
			st->c[kind == PACER_PKT_V4 ? PACER_STAT_IPV4 : PACER_STAT_IPV6]++;
			return v;
		}
	}
	return pacer_judge(&src, kind, st);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
