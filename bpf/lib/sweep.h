/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tables' sweep (`load --backend table` or `dense`): a BPF timer that
 * walks every copy's lines a chunk per round (bpf_loop) and clears each
 * entry expired at the datapath's time, so that no entry's tick (16 bits in
 * the table, 8 in the dense table) wraps around into "fresh"
 * (include/pacer_table.h and pacer_dense.h have the bounds,
 * pacer_tbl_sweep_plan() and pacer_dense_sweep_plan() the rounds).  A line
 * is swept by the engine's sweep_line (include/pacer_two_choice.h: swaps
 * from the value judged, so a CPU's write in between stays), the same for
 * both tables and for the simulators; sweep_line() below is the one place
 * a line's sweep is called from.
 */
#ifndef PACER_BPF_SWEEP_H
#define PACER_BPF_SWEEP_H

#include "clock.h"
#include "placement.h"
#include "rate.h"
#include "stats.h"
#include "pacer_table.h"
#include "pacer_dense.h"

static __always_inline struct pacer_clock_state *sweep_state(void)
{
	__u32 elem = SWEEP_ELEM;

	return bpf_map_lookup_elem(&pacer_clock, &elem);
}

/*
 * The time a packet would read now (clock.h), so that the sweep never finds
 * an entry older than a packet would: 0 while the cached clock is not
 * running (packets read the coarse clock then, ahead of the cached one).
 */
static __always_inline __u64 sweep_now(void)
{
	const struct pacer_clock_state *c;

	if (pacer_layout.clock == PACER_CLOCK_PRECISE)
		return bpf_ktime_get_ns();
	if (pacer_layout.clock == PACER_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	c = clock_cached();
	if (!c || c->armed != CLOCK_RUNNING)
		return 0;
	return c->now_ns;
}

/* Every copy's lines: the sweep walks them all, one index space. */
static __always_inline __u64 sweep_lines(void)
{
	__u64 lines = PACER_LAYOUT_LINES(pacer_layout);

	return pacer_layout.placement == PACER_PLACEMENT_PERCPU && pacer_layout.copies > 1 ?
		       lines * pacer_layout.copies : lines;
}

struct sweep_ctx {
	__u64 tick;
	__u32 start, sat;
	__u64 cleared; /* entries the round's swaps cleared */
};

/*
 * The loaded table's sweep of line l: the entries it cleared (a CPU that
 * rewrote one first keeps it), the one value the sweep's counter adds.
 */
static __always_inline __u32 sweep_one_line(void *l, const struct sweep_ctx *x)
{
	if (pacer_layout.backend == PACER_BACKEND_DENSE)
		return pacer_dense_sweep_line(l, x->tick, x->sat);
	return pacer_tbl_sweep_line(l, x->tick, x->sat);
}

/* One line of the round (bpf_loop's callback): 1 stops the loop (a line beyond the map). */
static long sweep_line(__u32 i, void *arg)
{
	struct sweep_ctx *x = arg;
	void *l = line_at(x->start + i);

	if (!l)
		return 1;
	x->cleared += sweep_one_line(l, x);
	return 0;
}

/* The plan of the loaded table's sweep (rounds of the dense table: 8-bit ticks). */
static __always_inline void sweep_plan(__u64 lines, struct pacer_tbl_sweep *plan)
{
	if (pacer_layout.backend == PACER_BACKEND_DENSE)
		pacer_dense_sweep_plan(lines, pacer_layout.tick_shift, plan); /* load refused a plan that falls behind */
	else
		pacer_tbl_sweep_plan(lines, pacer_layout.tick_shift, plan);
}

/*
 * One round at time now_ns: the next chunk of lines.  It clears only what
 * no limit the table can hold still needs (an age from its largest sat
 * up): the global limit, every class's own, and whatever a live `set`
 * brings may each be any of them, and the bound on the sweep's pace
 * (PACER_TBL_SWEEP_TICKS) is taken with that largest sat already.
 */
static __always_inline void sweep_round(struct pacer_clock_state *s, __u64 now_ns)
{
	struct pacer_counters *st = stats_get();
	struct pacer_tbl_sweep plan;
	struct sweep_ctx x;
	__u64 lines = sweep_lines(), start = s->next_line, n;

	sweep_plan(lines, &plan);
	if (start >= lines)
		start = 0;
	n = lines - start;
	if (n > plan.chunk)
		n = plan.chunk;
	x.tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	x.start = (__u32)start;
	x.cleared = 0;
	x.sat = pacer_layout.backend == PACER_BACKEND_DENSE ? PACER_DENSE_MAX_SAT
							     : PACER_RATE_TBL_MAX_SAT;
	bpf_loop((__u32)n, sweep_line, &x, 0);
	s->next_line = start + n >= lines ? 0 : start + n;
	/* This CPU's counters: the timer runs on one CPU at a time, as a packet does. */
	if (st) {
		st->c[PACER_STAT_SWEEP_ROUNDS]++;
		st->c[PACER_STAT_SWEEP_LINES] += n;
		st->c[PACER_STAT_SWEEP_CLEARED] += x.cleared;
	}
}

static int sweep_fire(void *map, __u32 *key, struct pacer_clock_state *s)
{
	struct pacer_tbl_sweep plan;
	__u64 now = sweep_now();

	if (now)
		sweep_round(s, now);
	sweep_plan(sweep_lines(), &plan);
	bpf_timer_start(&s->timer, plan.period_ns, 0);
	return 0;
}

/* As clock_arm(): the first packet arms it, one CPU wins; a failure is retried a second later. */
static __noinline void sweep_arm(struct pacer_clock_state *s)
{
	__u64 now = bpf_ktime_get_coarse_ns();
	__u64 state = s->armed;
	long err;

	if (state > CLOCK_RUNNING && now < state)
		return;
	if (__sync_val_compare_and_swap(&s->armed, state, CLOCK_RUNNING) != state)
		return;
	err = bpf_timer_init(&s->timer, &pacer_clock, 1 /* CLOCK_MONOTONIC */);
	if (err == -16 /* -EBUSY */)
		err = 0;
	if (!err)
		err = bpf_timer_set_callback(&s->timer, sweep_fire);
	if (!err)
		err = bpf_timer_start(&s->timer, PACER_TBL_SWEEP_MIN_NS, 0);
	if (err)
		s->armed = now + CLOCK_ARM_RETRY_NS;
}

/* Per packet (the tables only): one lookup and a load once the timer runs. */
static __always_inline void sweep_check(void)
{
	struct pacer_clock_state *s = sweep_state();

	if (s && s->armed != CLOCK_RUNNING)
		sweep_arm(s);
}

#endif /* PACER_BPF_SWEEP_H */
