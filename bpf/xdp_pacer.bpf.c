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

SEC("xdp")
int xdp_pacer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pacer_counters *st;
	struct pacer_src src;
	struct sketch_key sk;
	struct table_key tk;
	__u64 h, now_ns, tick;
	struct pacer_rate rate;
	__u32 prefix, age;
	int kind, drop, budget_drop;

	st = stats_get();
	if (!st)
		return XDP_PASS;
	st->c[PACER_STAT_SEEN]++;

	kind = pacer_parse(data, data_end, &src);
	if (kind != PACER_PKT_V4 && kind != PACER_PKT_V6)
		return not_ip_verdict(kind, st);
	h = source_hash(kind, &src, &prefix, st);

	now_ns = clock_now();
	tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	rate = rate_now();
	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		drop = table_judge(h, tick, &rate, &age, &tk, st);
	else
		drop = sketch_judge(h, tick, &rate, &age, &sk, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return XDP_DROP;
	}

	/* After pacing: the global budget (counts its own drops; sets the admission time). */
	budget_drop = !drop && budget_stage(h, &now_ns, st);
	/* Admitted by both: now the source's state is written, at the admission time. */
	if (!drop && !budget_drop) {
		tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
		if (pacer_layout.backend == PACER_BACKEND_TABLE)
			drop = table_commit(&tk, tick, &rate, st);
		else
			drop = sketch_commit(&sk, tick, &rate, st);
	}
	if (record_wanted())
		record(h, &src, kind, prefix, now_ns, age, rate.thresh, drop | budget_drop, st);
	if (budget_drop)
		return XDP_DROP;
	if (drop) {
		st->c[PACER_STAT_DROPPED_RECENT]++;
		return XDP_DROP;
	}
	st->c[PACER_STAT_PASSED]++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
