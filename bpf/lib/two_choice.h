/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tables' datapath glue, written once for both (`load --backend table`
 * and `dense`): a key's two lines found in the aligned map the other
 * backends use too, one region of lines per CPU (placement.h), and the
 * judgement and commit of the two-choice engine (include/pacer_two_choice.h)
 * with their counters.  A template as the engine is: table.h instantiates
 * it once per layout, with
 *   TCB_PREFIX   the glue's prefix (table_, dense_)
 *   TCB_ENGINE   the engine's prefix (pacer_tbl_, pacer_dense_)
 *   TCB_LINE     the layout's line type
 *   TCB_LINES    the key's two lines: a function (h, idx[2]) of the layout
 * and #undefs them.
 */
#include "placement.h"
#include "record.h"

#define TCB_CAT2(a, b) a##b
#define TCB_CAT(a, b) TCB_CAT2(a, b)
#define TCB(name) TCB_CAT(TCB_PREFIX, name)
#define TCE(name) TCB_CAT(TCB_ENGINE, name)

/* A key's two lines and chosen entry, from its judgement to its commit. */
struct TCB(key) {
	TCB_LINE *l[2];
	__u32 slot, event, fp;
};

/* The fingerprint and two lines of the key with hash h; -1 if a line is missing. */
static __always_inline int TCB(key_of)(__u64 h, struct TCB(key) *k)
{
	__u32 idx[2], base = copy_base();

	k->fp = TCE(fp)(h);
	k->slot = 0;
	k->event = 0;
	TCB_LINES(h, idx);
	k->l[0] = (TCB_LINE *)line_at(base + idx[0]);
	k->l[1] = (TCB_LINE *)line_at(base + idx[1]);
	return k->l[0] && k->l[1] ? 0 : -1;
}

/*
 * Pacing's judgement for a key with hash h under rate and policy (the
 * engine's judge): 1 to drop, 0 if pacing admits it (nothing written yet:
 * TCB(commit) does, if every later stage admits it too), -1 if a line is
 * missing.  *age is read only if want_age (the packet is recorded:
 * record_pick()).
 */
static __always_inline int TCB(judge)(__u64 h, __u64 tick, const struct pacer_rate *rate,
				      __u32 policy, int want_age, __u32 *age, struct TCB(key) *k,
				      struct pacer_counters *st)
{
	int drop;

	if (TCB(key_of)(h, k) < 0)
		return -1;
	drop = TCE(judge)(k->l, k->fp, tick, rate, policy, pacer_layout.on_full,
			  pacer_layout.placement, want_age, age, &k->event, &k->slot);
	st->c[PACER_STAT_TABLE_FULL] += k->event == PACER_TBL_EV_FULL;
	return drop;
}

/*
 * Write the admission at tick (the engine's commit): 0 admitted, 1 lost to
 * another CPU.  Evictions are counted here: a judgement the budget refused
 * evicted nothing.
 */
static __always_inline int TCB(commit)(struct TCB(key) *k, __u64 tick,
				       const struct pacer_rate *rate, struct pacer_counters *st)
{
	int drop;

	drop = TCE(commit)(k->l, k->fp, tick, rate, pacer_layout.placement, k->slot, &k->event);
	st->c[PACER_STAT_TABLE_EVICT] += k->event == PACER_TBL_EV_EVICT;
	st->c[PACER_STAT_TABLE_RACE] += k->event == PACER_TBL_EV_RACE;
	return drop;
}

/*
 * The pacing stage's judgement: 1 to drop, 0 if pacing admits, -1 on a map
 * error.  With commit_now (no budget to ask) an admission is written at
 * once (0 then means written, 1 that another CPU won the key); else the
 * chosen entry and event go to *slot and *event for TCB(commit_stage).
 */
static __always_inline int TCB(judge_stage)(__u64 h, __u64 tick, const struct pacer_rate *rate,
					    __u32 policy, int want_age, __u32 commit_now, __u32 *age,
					    __u32 *slot, __u32 *event, struct pacer_counters *st)
{
	struct TCB(key) k;
	int drop = TCB(judge)(h, tick, rate, policy, want_age, age, &k, st);

	if (drop || !commit_now) {
		*slot = k.slot;
		*event = k.event;
		return drop;
	}
	return TCB(commit)(&k, tick, rate, st) ? 1 : 0;
}

/* The stage's commit of a judgement's slot and event: 0 admitted, 1 lost (or a map error). */
static __always_inline int TCB(commit_stage)(__u64 h, __u64 tick, const struct pacer_rate *rate,
					     __u32 slot, __u32 event, struct pacer_counters *st)
{
	struct TCB(key) k;

	if (TCB(key_of)(h, &k) < 0)
		return 1;
	k.slot = slot;
	k.event = event;
	return TCB(commit)(&k, tick, rate, st);
}

#undef TCB
#undef TCE
#undef TCB_PREFIX
#undef TCB_ENGINE
#undef TCB_LINE
#undef TCB_LINES
