/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Time in ticks, the arithmetic the datapath needs: the datapath clock is
 * cut into ticks of 2^tick_shift ns; an interval becomes a threshold of
 * whole ticks (see pacer_sketch.h, "Verdict", for why the extra tick), and
 * an operator's --tick a shift.  Shared verbatim by the XDP program and
 * userspace; the policy that picks a tick for an interval or a rate is
 * userspace's (user/lib/backend/ticks.c).
 */
#ifndef PACER_TICKS_H
#define PACER_TICKS_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"

/* The tick a clock reading falls in. */
PACER_INLINE __u64 pacer_now_tick(__u64 now_ns, __u32 tick_shift)
{
	return now_ns >> tick_shift;
}

/* A tick's length, and a count of ticks, in ns. */
PACER_INLINE __u64 pacer_tick_ns(__u32 tick_shift)
{
	return 1ULL << tick_shift;
}

PACER_INLINE __u64 pacer_ticks_ns(__u64 ticks, __u32 tick_shift)
{
	return ticks << tick_shift;
}

/* ceil(interval / tick) + 1; 0 if out of the representable range. */
PACER_INLINE __u32 pacer_thresh_ticks(__u64 interval_ns, __u32 tick_shift)
{
	__u64 q, t;

	if (interval_ns == 0 || interval_ns > PACER_INTERVAL_MAX_NS ||
	    tick_shift > PACER_TICK_SHIFT_MAX)
		return 0;
	q = 1ULL << tick_shift;
	t = (interval_ns + q - 1) / q + 1;
	if (t < PACER_MIN_THRESH || t > PACER_MAX_THRESH)
		return 0;
	return (__u32)t;
}

/* The tick a --tick duration asks for: 2^floor(log2(tick_ns)); -1 out of bounds. */
PACER_INLINE int pacer_tick_shift_of(__u64 tick_ns)
{
	int s = 0;

	if (tick_ns == 0 || tick_ns > PACER_TICK_MAX_NS)
		return -1;
	while ((2ULL << s) <= tick_ns)
		s++;
	return s;
}

#endif /* PACER_TICKS_H */
