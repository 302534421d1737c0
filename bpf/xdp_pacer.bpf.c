// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer datapath: admit a source prefix's packets at its rate (one per
 * interval, or N per T with bursts: GCRA), judged by a recency sketch (include/pacer_sketch.h),
 * table (include/pacer_table.h) or dense table (include/pacer_dense.h), the two one
 * two-choice engine (include/pacer_two_choice.h), then by the global budget.  One header per
 * stage in bpf/lib/; the logic they share with userspace is in include/.
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
#include <xdp/xdp_helpers.h>
#include "pacer_defaults.h"
#include "pacer_parse.h"
#include "pacer_classify.h"
#include "lib/config.h"
#include "lib/stats.h"
#include "lib/key.h"
#include "lib/clock.h"
#include "lib/sketch.h"
#include "lib/table.h"
#include "lib/sweep.h"
#include "lib/budget.h"
#include "lib/record.h"
#include "lib/class.h"
#include "lib/lists.h"

/*
 * The final action of a drop verdict, the one place observe mode acts:
 * every stage before judged and wrote its state as enforcing would;
 * observing counts the verdict's would-drop twin and passes the packet.
 */
static __always_inline int drop_verdict(struct pacer_counters *st, __u32 dropped, __u32 observed,
					int observe)
{
	if (observe) {
		st->c[observed]++;
		return XDP_PASS;
	}
	st->c[dropped]++;
	return XDP_DROP;
}

/* Whether a drop verdict is observed: never in a variant without observe mode. */
#define OBSERVING(observes) (PACER_HAS(PACER_F_OBSERVE) && (observes))

/* Frames that are not IP pass; malformed IP frames get the configured verdict. */
static __always_inline int not_ip_verdict(int kind, struct pacer_counters *st)
{
	if (kind == PACER_PKT_NONIP) {
		st->c[PACER_STAT_NONIP_PASSED]++;
		return XDP_PASS;
	}
	if (pacer_cfg.malformed == PACER_MALFORMED_DROP)
		return drop_verdict(st, PACER_STAT_MALFORMED_DROPPED, PACER_STAT_OBSERVED_MALFORMED,
				    OBSERVING(pacer_cfg.mode == PACER_MODE_OBSERVE));
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
 * the stack bytes as scalars); what a table's judgement chose (the entry,
 * the event) travels in *io.
 */
struct pacer_stage_io {
	__u64 now_ns;     /* the packet's time; the budget moves it to the admission's */
	__u32 age, slot, event;
	__u32 commit_now; /* no budget: write the admission in the judgement */
	__u32 policy;     /* enum pacer_policy: the global one, or the deciding class's */
	__u32 thresh;     /* for the record: the threshold in force */
	__u32 drop;       /* for the record: refused by pacing or the budget; | 2 observed */
	__u32 sampled;    /* record_pick()'s flags: for the record, and whether the age is wanted */
};

/*
 * What pacing a key needs besides its hash and source travels as scalars
 * (a struct in the program's frame would cost stack: Linux 6.1 allows 512
 * bytes across the chain of calls, each frame rounded up to 32): the
 * limit, and the policy and what a record says of the key.
 */
#define PACER_LIMIT(thresh, burst) ((__u64)(thresh) | (__u64)(burst) << 32)
#define PACER_META(policy, kind, prefix, slot, key_mode, observe)                      \
	((__u32)((policy) == PACER_POLICY_QUIET) | (__u32)((kind) == PACER_PKT_V6) << 1 | \
	 ((__u32)(prefix) & 0xff) << 2 | ((__u32)(slot) & 0x1ff) << 10 |                 \
	 ((__u32)(key_mode) & 3) << 19 | (__u32)!!(observe) << 21)
#define PACER_META_POLICY(m) ((m) & 1 ? PACER_POLICY_QUIET : PACER_POLICY_PACE)
#define PACER_META_KIND(m) ((m) & 2 ? PACER_PKT_V6 : PACER_PKT_V4)
#define PACER_META_PREFIX(m) (((m) >> 2) & 0xff)
#define PACER_META_SLOT(m) (((m) >> 10) & 0x1ff) /* record's class_slot: stat_slot + 1, 0 none */
#define PACER_META_KEY_MODE(m) (((m) >> 19) & 3)
#define PACER_META_OBSERVE(m) (((m) >> 21) & 1) /* a drop verdict is observed, not enforced */
_Static_assert(PACER_MAX_CLASSES + 1 <= 0x1ff, "a class's slot + 1 fits the meta's 9 bits");

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
	int drop;

	if (!rate || !io || !st)
		return -1;
	if (pacer_layout.backend == PACER_BACKEND_DENSE)
		return dense_judge_stage(h, tick, rate, io->policy, io->sampled != 0, io->commit_now,
					 &io->age,
					 &io->slot, &io->event, st);
	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		return table_judge_stage(h, tick, rate, io->policy, io->sampled != 0, io->commit_now,
					 &io->age,
					 &io->slot, &io->event, st);
	drop = sketch_judge(h, tick, rate, io->policy, &io->age, &sk, st);
	if (drop || !io->commit_now)
		return drop;
	return sketch_commit_judged(&sk, tick, rate, io->age, st) ? 1 : 0;
}

/* Write the admission at tick: 0 admitted, 1 lost to another CPU (or, failing closed, a map error). */
__noinline int pacer_commit_stage(__u64 h, __u64 tick, const struct pacer_rate *rate,
				  struct pacer_stage_io *io, struct pacer_counters *st)
{
	struct sketch_key sk;

	if (!rate || !io || !st)
		return 1;
	if (pacer_layout.backend == PACER_BACKEND_DENSE)
		return dense_commit_stage(h, tick, rate, io->slot, io->event, st);
	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		return table_commit_stage(h, tick, rate, io->slot, io->event, st);
	return sketch_key_of(h, &sk) < 0 ? 1 : sketch_commit(&sk, tick, rate, st);
}

/* 0: admitted by the global budget (or it is off), *now_ns the admission time; 1: dropped. */
__noinline int pacer_budget_stage(__u64 h, __u64 *now_ns, struct pacer_counters *st)
{
	if (!now_ns || !st)
		return 1;
	return budget_stage(h, now_ns, st);
}

__noinline int pacer_record_stage(__u64 h, const struct pacer_src *src,
				  const struct pacer_stage_io *io, __u32 meta,
				  struct pacer_counters *st)
{
	if (!src || !io || !st)
		return 0;
	record(h, src, PACER_META_KIND(meta), PACER_META_PREFIX(meta), io->now_ns, io->age,
	       io->thresh, io->drop, PACER_META_SLOT(meta), PACER_META_KEY_MODE(meta), io->sampled, st);
	return 0;
}

enum pacer_pace_verdict {
	PACER_PACE_PASS,
	PACER_PACE_DROP,        /* its rate refused it */
	PACER_PACE_DROP_BUDGET, /* the global budget refused it (counted by the budget) */
	PACER_PACE_DROP_ERROR,  /* a map went missing: failing closed (counted here) */
};

/* A class's counter row; NULL (nothing counted) if the slot is out of range. */
static __always_inline struct pacer_class_counters *class_counters(__u32 slot)
{
	return bpf_map_lookup_elem(&pacer_class_stats, &slot);
}

/*
 * Pace the key h (src: its masked source, for records) under limit and
 * meta: pacing judges, the budget decides, the admission is written;
 * recording; a class's counters.  An enum pacer_pace_verdict.  Inline in
 * the program: a packet dropped by pacing, or admitted with no budget,
 * makes one call (the judgement), where a global function here made two.
 * The verifier walks this glue once per path of the parser (a few hundred
 * instructions each); the stages it calls are global and walked once.
 */
static __always_inline int pacer_pace(__u64 h, __u64 limit, __u32 meta, struct pacer_src *src,
				      struct pacer_counters *st)
{
	struct pacer_class_counters *cs;
	struct pacer_rate rate;
	struct pacer_stage_io io;
	int drop, budget_drop, commit_now;
	__u32 sampled;
	__u64 tick;

	if (!src || !st)
		return PACER_PACE_DROP_ERROR;
	/* A local beside io's copy: read after the judgement, io's must come from memory. */
	commit_now = !PACER_HAS(PACER_F_BUDGET) || !pacer_budget_cfg.limit;
	/* Field by field: an initialiser would be a constant in .rodata, which holds the config. */
	io.age = PACER_AGE_STALE;
	io.slot = 0;
	io.event = 0;
	io.commit_now = commit_now;
	io.policy = PACER_META_POLICY(meta);
	/* A local beside io's copy, as commit_now: whether to record, and the tables' age with it. */
	sampled = record_pick(h, st);
	io.sampled = sampled;
	io.now_ns = clock_now();
	if (pacer_layout.backend == PACER_BACKEND_TABLE || pacer_layout.backend == PACER_BACKEND_DENSE)
		sweep_check();
	tick = pacer_now_tick(io.now_ns, pacer_layout.tick_shift);
	rate = rate_checked((__u32)limit, (__u32)(limit >> 32));
	drop = pacer_judge_stage(h, tick, &rate, &io, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		/* A class counts it dropped: its seen stays passed + dropped + dropped by the budget. */
		cs = PACER_META_SLOT(meta) ? class_counters(PACER_META_SLOT(meta) - 1) : NULL;
		if (cs) {
			cs->c[PACER_CSTAT_SEEN]++;
			cs->c[PACER_CSTAT_DROPPED]++;
		}
		return PACER_PACE_DROP_ERROR;
	}
	/* No budget, no record, no class (a flood's packets, mostly): judged and written. */
	if (commit_now && !PACER_META_SLOT(meta) && !sampled)
		return drop ? PACER_PACE_DROP : PACER_PACE_PASS;
	/* After pacing: the global budget (counts its own drops; sets the admission time). */
	budget_drop = !drop && !commit_now && pacer_budget_stage(h, &io.now_ns, st);
	/* Admitted by both: now the source's state is written, at the admission time. */
	if (!drop && !budget_drop && !commit_now) {
		tick = pacer_now_tick(io.now_ns, pacer_layout.tick_shift);
		drop = pacer_commit_stage(h, tick, &rate, &io, st);
	}
	if (sampled) {
		io.thresh = rate.thresh;
		io.drop = (__u32)(drop | budget_drop) | (__u32)((drop | budget_drop) &&
								PACER_META_OBSERVE(meta)) << 1;
		io.sampled = sampled;
		pacer_record_stage(h, src, &io, meta, st);
	}
	cs = PACER_META_SLOT(meta) ? class_counters(PACER_META_SLOT(meta) - 1) : NULL;
	if (cs)
		cs->c[PACER_CSTAT_SEEN]++;
	if (budget_drop) {
		if (cs)
			cs->c[PACER_META_OBSERVE(meta) ? PACER_CSTAT_OBSERVED_BUDGET
						       : PACER_CSTAT_DROPPED_BUDGET]++;
		return PACER_PACE_DROP_BUDGET;
	}
	if (cs)
		cs->c[!drop ? PACER_CSTAT_PASSED
		      : PACER_META_OBSERVE(meta) ? PACER_CSTAT_OBSERVED : PACER_CSTAT_DROPPED]++;
	return drop ? PACER_PACE_DROP : PACER_PACE_PASS;
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
	if (v == PACER_LIST_DENY)
		return drop_verdict(st, PACER_STAT_DENY_DROPPED, PACER_STAT_OBSERVED_DENY,
				    OBSERVING(PACER_MODE_OBSERVES(pacer_cfg.deny_mode, pacer_cfg.mode)));
	return -1;
}

/*
 * The index in its bank of the first class whose match fits p, or -1:
 * the compiled classifier (pacer_cls.h), a bounded number of lookups
 * whatever the number of classes.  A missing entry (a bank half-written
 * by a broken installer) classifies nothing: the packet passes,
 * unclassified, as a packet no class matches.  Inline in the class path:
 * out of line it cost 8 ns (8 classes) to 14 ns (256) a packet more, by
 * BPF_PROG_TEST_RUN, for 20 000 more instructions verified on 6.1.
 */
static __always_inline int pacer_class_find(const struct pacer_pkt *p, __u32 sel)
{
	__u32 n = PACER_CLASS_SEL_COUNT(sel), bank = PACER_CLASS_SEL_BANK(sel);
	__u32 dims = PACER_CLASS_SEL_DIMS_OF(sel), k;
	const struct pacer_cls_set *head;
	struct pacer_cls_set acc;
	int v6, i;

	if (!p)
		return -1;
	k = pacer_cls_head_slot(bank, pacer_cls_head_index(p));
	head = bpf_map_lookup_elem(&pacer_cls_sets, &k);
	if (!head)
		return -1;
	acc = *head;
	if ((dims & PACER_CLS_D_DPORT) && cls_and_port(&acc, bank, 0, p->dport))
		return -1;
	if ((dims & PACER_CLS_D_SPORT) && cls_and_port(&acc, bank, 1, p->sport))
		return -1;
	v6 = p->kind == PACER_PKT_V6;
	if ((dims & (v6 ? PACER_CLS_D_SRC6 : PACER_CLS_D_SRC4)) && cls_and_addr(&acc, bank, 0, p->kind, &p->src))
		return -1;
	if ((dims & (v6 ? PACER_CLS_D_DST6 : PACER_CLS_D_DST4)) && cls_and_addr(&acc, bank, 1, p->kind, &p->dst))
		return -1;
	if (dims & PACER_CLS_D_VLAN) {
		struct pacer_cls_vlan_key vk = { .bank = bank, .vlan = p->vlan };
		const __u32 *id = bpf_map_lookup_elem(&pacer_cls_vlan, &vk);

		if (cls_and_pool(&acc, bank, id ? *id : PACER_CLS_VLAN_DEFAULT))
			return -1;
	}
	i = pacer_cls_first(&acc, (n + 63) / 64);
	return i >= 0 && (__u32)i < n ? i : -1;
}

/* The class's key: its hash and limit (pacer_class_path() to pacer_pace()). */
struct pacer_pace_key {
	__u64 h, limit;
};

#define PACER_CLASS_PACES (1u << 30) /* pacer_class_path: the class paces; | its meta */

/*
 * With classes: the full parse into *p, the lists, then the first class
 * that fits decides; no class: pass, unclassified.  sel is class_sel as
 * the program read it, once, so a bank flip mid-packet cannot mix two
 * lists (nor a switch to no classes leave the packet unclassified).  An
 * XDP verdict, or PACER_CLASS_PACES | the key's meta with *k set and
 * p->src masked to the class's prefix, for pacer_pace().
 *
 * Inline in the program: as a global function of its own (which 6.1's
 * verifier once needed) it cost 8-10 ns a packet more, by
 * BPF_PROG_TEST_RUN.  Its packet is the program's, masked in place, so
 * the program's frame stays within 6.1's 512 bytes of stack across calls
 * with the dense table's judgement (docs/verifier.md).
 */
static __always_inline int pacer_class_path(struct xdp_md *ctx, __u32 sel, struct pacer_pkt *p,
					    struct pacer_pace_key *k, struct pacer_counters *st)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const struct pacer_class *c;
	struct pacer_class_counters *cs;
	const __u64 *key;
	__u32 idx, prefix;
	int kind, v, i, observe;

	kind = pacer_parse_pkt(data, data_end, p);
	if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
		return not_ip_verdict(kind, st);
	st->c[kind == PACER_PKT_V4 ? PACER_STAT_IPV4 : PACER_STAT_IPV6]++;
	if (PACER_HAS(PACER_F_LISTS) && pacer_cfg.list_sel) {
		v = lists_verdict(kind, &p->src, st);
		if (v >= 0)
			return v;
	}
	i = pacer_class_find(p, sel);
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
	/* A pace class's packet is counted by pacer_pace(), with its verdict: one lookup. */
	if (c->action == PACER_ACTION_PASS) {
		cs = class_counters(c->stat_slot);
		if (cs) {
			cs->c[PACER_CSTAT_SEEN]++;
			cs->c[PACER_CSTAT_PASSED]++;
		}
		st->c[PACER_STAT_PASSED]++;
		return XDP_PASS;
	}
	observe = OBSERVING(PACER_MODE_OBSERVES(c->mode, pacer_cfg.mode));
	if (c->action != PACER_ACTION_PACE) { /* drop, or an action this build does not know */
		cs = class_counters(c->stat_slot);
		if (cs) {
			cs->c[PACER_CSTAT_SEEN]++;
			cs->c[observe ? PACER_CSTAT_OBSERVED : PACER_CSTAT_DROPPED]++;
		}
		return drop_verdict(st, PACER_STAT_CLASS_DROPPED, PACER_STAT_OBSERVED_CLASS, observe);
	}
	/* The key's words read where the hash uses them, as source_hash() does: no copy in the frame. */
	key = (const __u64 *)pacer_cfg.hash_key;
	if (!key[0] || !key[1])
		hash_key_draw(st);
	k->h = pacer_class_key_hash(key, c, p, &p->src, &prefix);
	k->limit = PACER_LIMIT(c->thresh_ticks, c->burst_ticks);
	if (record_pick(k->h, st))
		record_key_note(k->h, c->key_mode, p);
	return PACER_CLASS_PACES |
	       PACER_META(c->policy, kind, prefix, c->stat_slot + 1, c->key_mode, observe);
}

/*
 * libxdp's run configuration (read from BTF, as xdp-filter declares its
 * own): its place in a dispatcher, and XDP_PASS goes on to the next
 * program; a drop ends the chain.  A data section libbpf and iproute2 skip.
 */
struct {
	__uint(priority, PACER_DEFAULT_RUN_PRIO);
	__uint(XDP_PASS, 1);
} XDP_RUN_CONFIG(xdp_pacer);

SEC("xdp")
int xdp_pacer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pacer_counters *st;
	struct pacer_pkt p;        /* without classes, only its source is parsed */
	struct pacer_pace_key k;
	__u32 meta, prefix, sel;
	int kind, v;

	st = stats_get();
	if (!st)
		return XDP_PASS;
	st->c[PACER_STAT_SEEN]++;
	/* Once: userspace flips it live.  Without the classes' stage it is 0 (the CLI swaps the variant first). */
	sel = PACER_HAS(PACER_F_CLASSES) ? *(volatile __u32 *)&pacer_cfg.class_sel : 0;
	if (PACER_CLASS_SEL_COUNT(sel)) { /* its generation bits are userspace's */
		v = pacer_class_path(ctx, sel, &p, &k, st);
		if (!(v & PACER_CLASS_PACES))
			return v;
		meta = (__u32)v & ~PACER_CLASS_PACES;
	} else {
		kind = pacer_parse(data, data_end, &p.src);
		if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
			return not_ip_verdict(kind, st);
		if (PACER_HAS(PACER_F_LISTS) && pacer_cfg.list_sel) {
			v = lists_verdict(kind, &p.src, st);
			if (v >= 0) {
				st->c[kind == PACER_PKT_V4 ? PACER_STAT_IPV4 : PACER_STAT_IPV6]++;
				return v;
			}
		}
		/* Without classes: the source's key under the global limit. */
		k.h = source_hash(kind, &p.src, &prefix, st);
		k.limit = PACER_LIMIT(pacer_cfg.thresh_ticks, pacer_cfg.burst_ticks);
		meta = PACER_META(pacer_cfg.policy, kind, prefix, 0, PACER_KEY_SRC,
				  OBSERVING(pacer_cfg.mode == PACER_MODE_OBSERVE));
	}
	v = pacer_pace(k.h, k.limit, meta, &p.src, st);
	if (v == PACER_PACE_PASS) {
		st->c[PACER_STAT_PASSED]++;
		return XDP_PASS;
	}
	if (v == PACER_PACE_DROP)
		return drop_verdict(st, PACER_STAT_DROPPED_RECENT, PACER_STAT_OBSERVED_RECENT,
				    PACER_META_OBSERVE(meta));
	if (v == PACER_PACE_DROP_BUDGET)
		return drop_verdict(st, PACER_STAT_DROPPED_BUDGET, PACER_STAT_OBSERVED_BUDGET,
				    PACER_META_OBSERVE(meta));
	return XDP_DROP; /* a map error: fail closed, whatever the mode (counted as map_error) */
}

/*
 * One sweep round at the datapath's time, on demand: not loaded unless a
 * test asks for it (the "?"), which runs it with BPF_PROG_TEST_RUN to
 * check and time the round the timer runs.  XDP_ABORTED: no round (the
 * cached clock is not running).
 */
SEC("?xdp")
int pacer_sweep_probe(struct xdp_md *ctx)
{
	struct pacer_clock_state *s = sweep_state();
	__u64 now = sweep_now();

	if (!s || !now)
		return XDP_ABORTED;
	sweep_round(s, now);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
