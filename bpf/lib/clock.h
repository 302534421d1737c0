/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath clock (layout.clock): the coarse or precise helper on every
 * packet, or the cached one, a coarse time a BPF timer refreshes a few times
 * per tick so packets read a map value instead of calling a helper.  The
 * map also holds the table's sweep timer (sweep.h), armed the same way.
 */
#ifndef PACER_BPF_CLOCK_H
#define PACER_BPF_CLOCK_H

#include "config.h"

/* Element 0: the cached clock; 1: the table's sweep (sweep.h). */
#define CLOCK_ELEM 0
#define SWEEP_ELEM 1

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct pacer_clock_state);
} pacer_clock SEC(".maps");

/* Refresh a few times per tick; finer than a jiffy would only repeat values. */
static __always_inline __u64 clock_period_ns(void)
{
	__u64 p = (1ULL << pacer_layout.tick_shift) / 4;

	return p < 1000000 ? 1000000 : p;
}

static int clock_refresh(void *map, __u32 *key, struct pacer_clock_state *c)
{
	c->now_ns = bpf_ktime_get_coarse_ns();
	bpf_timer_start(&c->timer, clock_period_ns(), 0);
	return 0;
}

/*
 * The first packet arms the timer (whoever loaded the program); until it
 * has fired, packets read the coarse clock themselves.  Arming can fail for
 * good: the kernel refuses timers in a map no user space holds (e.g. pins
 * made in a private bpffs that went away with its mount namespace).  Then
 * `armed` holds the coarse time before which nobody retries: packets pay
 * one coarse-clock helper call each, not a failing timer set-up.  now_ns is
 * written before `armed` says "running", so no CPU reads a stale one.
 */
#define CLOCK_ARM_RETRY_NS 1000000000ULL
#define CLOCK_RUNNING 1

static __noinline __u64 clock_arm(struct pacer_clock_state *c)
{
	__u64 now = bpf_ktime_get_coarse_ns();
	__u64 state = c->armed;
	long err;

	if (state > CLOCK_RUNNING && now < state)
		return now; /* failed recently */
	c->now_ns = now;
	if (__sync_val_compare_and_swap(&c->armed, state, CLOCK_RUNNING) != state)
		return now; /* another CPU is arming it */
	err = bpf_timer_init(&c->timer, &pacer_clock, 1 /* CLOCK_MONOTONIC */);
	if (err == -16 /* -EBUSY: initialised by an earlier, failed attempt */)
		err = 0;
	if (!err)
		err = bpf_timer_set_callback(&c->timer, clock_refresh);
	if (!err)
		err = bpf_timer_start(&c->timer, clock_period_ns(), 0);
	if (err)
		c->armed = now + CLOCK_ARM_RETRY_NS; /* > CLOCK_RUNNING: uptime is past 1 ns */
	return now;
}

static __always_inline __u64 clock_now(void)
{
	struct pacer_clock_state *c;
	__u32 zero = 0;

	if (pacer_layout.clock == PACER_CLOCK_PRECISE)
		return bpf_ktime_get_ns();
	if (pacer_layout.clock == PACER_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	c = bpf_map_lookup_elem(&pacer_clock, &zero);
	if (!c)
		return bpf_ktime_get_coarse_ns();
	if (c->armed != CLOCK_RUNNING)
		return clock_arm(c);
	return c->now_ns;
}

/* The cached clock's state, or NULL when the program reads a helper instead. */
static __always_inline const struct pacer_clock_state *clock_cached(void)
{
	__u32 zero = 0;

	if (pacer_layout.clock != PACER_CLOCK_CACHED)
		return NULL;
	return bpf_map_lookup_elem(&pacer_clock, &zero);
}

#endif /* PACER_BPF_CLOCK_H */
