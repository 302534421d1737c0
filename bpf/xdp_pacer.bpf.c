// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer datapath: admit a source prefix's packets at its rate (one per
 * interval, or N per T with bursts: GCRA), judged by a recency sketch (include/pacer_sketch.h) or table
 * (include/pacer_table.h), then by the global budget.  One header per stage
 * in bpf/lib/; the logic they share with userspace is in include/.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_parse.h"
#include "lib/config.h"
#include "lib/stats.h"
#include "lib/key.h"
#include "lib/clock.h"
#include "lib/sketch.h"
#include "lib/table.h"
#include "lib/budget.h"
#include "lib/record.h"

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

/* The rate in force; a corrupt one must not open the gate: use the strictest the cells hold. */
static __always_inline struct pacer_rate rate_now(void)
{
	__u32 max_sat = pacer_rate_max_sat(pacer_layout.backend);
	struct pacer_rate r = pacer_rate_of(pacer_cfg.thresh_ticks, pacer_cfg.burst_ticks);

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
 */
__noinline int pacer_sketch_stage(__u64 h, __u64 tick, const struct pacer_rate *rate, __u32 *age,
				  struct pacer_counters *st)
{
	if (!rate || !age || !st)
		return -1;
	return sketch_verdict(h, tick, rate, age, st);
}

__noinline int pacer_table_stage(__u64 h, __u64 tick, const struct pacer_rate *rate, __u32 *age,
				 struct pacer_counters *st)
{
	if (!rate || !age || !st)
		return -1;
	return table_verdict(h, tick, rate, age, st);
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
	__u32 kind, prefix, age, thresh, drop;
};

__noinline int pacer_record_stage(__u64 h, const struct pacer_src *src,
				  const struct pacer_outcome *o, struct pacer_counters *st)
{
	if (!src || !o || !st)
		return 0;
	record(h, src, o->kind, o->prefix, o->now_ns, o->age, o->thresh, o->drop, st);
	return 0;
}

/* An IP packet's verdict: pacing, then the global budget; recording. */
__noinline int pacer_judge(struct pacer_src *src, int kind, struct pacer_counters *st)
{
	__u64 h, now_ns, tick;
	struct pacer_rate rate;
	__u32 prefix, age = PACER_AGE_STALE;
	int drop, budget_drop;

	if (!src || !st)
		return XDP_DROP;
	h = source_hash(kind, src, &prefix, st);
	now_ns = clock_now();
	tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	rate = rate_now();
	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		drop = pacer_table_stage(h, tick, &rate, &age, st);
	else
		drop = pacer_sketch_stage(h, tick, &rate, &age, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return XDP_DROP;
	}
	/* After pacing: the global budget (counts its own drops; sets the admission time). */
	budget_drop = !drop && pacer_budget_stage(h, &now_ns, st);
	if (record_wanted()) {
		struct pacer_outcome o = {
			.now_ns = now_ns, .kind = kind, .prefix = prefix, .age = age,
			.thresh = rate.thresh, .drop = drop | budget_drop,
		};

		pacer_record_stage(h, src, &o, st);
	}
	if (budget_drop)
		return XDP_DROP;
	if (drop) {
		st->c[PACER_STAT_DROPPED_RECENT]++;
		return XDP_DROP;
	}
	st->c[PACER_STAT_PASSED]++;
	return XDP_PASS;
}

SEC("xdp")
int xdp_pacer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pacer_counters *st;
	struct pacer_src src;
	int kind;

	st = stats_get();
	if (!st)
		return XDP_PASS;
	st->c[PACER_STAT_SEEN]++;
	kind = pacer_parse(data, data_end, &src);
	if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
		return not_ip_verdict(kind, st);
	return pacer_judge(&src, kind, st);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
