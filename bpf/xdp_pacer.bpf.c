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
#include "lib/sweep.h"
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
		drop = sketch_judge(h, tick, rate, &io->age, &sk, st);
		if (drop || !io->commit_now)
			return drop;
		return sketch_commit(&sk, tick, rate, st) ? 1 : 0;
	}
	drop = table_judge(h, tick, rate, &io->age, &tk, st);
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

/* An IP packet's verdict: pacing judges, the budget decides, the admission is written; recording. */
__noinline int pacer_judge(struct pacer_src *src, int kind, struct pacer_counters *st)
{
	__u64 h, now_ns, tick;
	struct pacer_rate rate;
	struct pacer_stage_io io;
	__u32 prefix;
	int drop, budget_drop;

	if (!src || !st)
		return XDP_DROP;
	/* Field by field: an initialiser would be a constant in .rodata, which holds the config. */
	io.age = PACER_AGE_STALE;
	io.slot = 0;
	io.event = 0;
	io.commit_now = !pacer_budget_cfg.limit;
	h = source_hash(kind, src, &prefix, st);
	now_ns = clock_now();
	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		sweep_check();
	tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	rate = rate_now();
	drop = pacer_judge_stage(h, tick, &rate, &io, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return XDP_DROP;
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
			.now_ns = now_ns, .kind = kind, .prefix = prefix, .age = io.age,
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
