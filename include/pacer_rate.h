/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-source rate `--rate N/T` as GCRA (the generic cell rate algorithm),
 * in whole ticks, shared by the XDP program, the simulators and the CLI.
 * `--interval L` is the case N = 1, T = L, and gives the same bytes.
 *
 * GCRA(I, tau), I = T/N the emission interval, tau = (N-1)T/N the burst
 * tolerance: a packet at t conforms if t >= TAT - tau; then
 * TAT = max(TAT, t) + I.  A cell stores V = TAT - tau - I - 1 tick, the
 * "virtual last admission": for N = 1 that is the tick of the last admission,
 * exactly what the recency cells held before.  In ticks (emit = ceil(I/q),
 * burst = floor(tau/q)) and with a = now - V the cell's age:
 *
 *   admit  iff  a >= thresh = emit + 1
 *   then   a' = min(a - emit, burst)          (write V' = now - a')
 *
 * a' >= 0: V is never in the future, so the wrap and skew rules of the
 * cells (which read a future value as clock skew) keep their meaning; a
 * burst lies in the past instead, and ages from sat = emit + max(burst, 1)
 * up all mean "a full burst", so a cell only needs ages up to sat (the
 * sketch: <= PACER_MAX_THRESH, its re-base age; the table: PACER_RATE_TBL_MAX_SAT).
 *
 * One-sided: the update is monotone in V (a larger V, i.e. a younger cell,
 * never gives a smaller V'), so cells that are upper bounds of the exact
 * V (collisions, re-base, wrap: each only makes a cell younger) stay upper
 * bounds, and every admission the cells allow, the exact per-key GCRA in
 * ticks fed the same admissions allows too.  That one is GCRA(emit, burst - 1) in ticks, so m
 * admissions after a first one take a tick gap g >= m*emit - burst + 1; the
 * true gap exceeds (g - 1)q >= m*emit*q - burst*q >= mI - tau: the admitted
 * stream conforms to GCRA(I, tau) in nanoseconds (docs/design.md, "Per-source rate").
 */
#ifndef PACER_RATE_H
#define PACER_RATE_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"

/* N of --rate N/T; with T at most 2^50 ns, (N - 1) * T stays in 64 bits. */
#define PACER_RATE_MAX_N 16384
#define PACER_RATE_MAX_PERIOD_NS (1ULL << 50)
/* The sketch's N: emit >= 1 and emit + burst <= its 64 ticks. */
#define PACER_RATE_SKETCH_MAX_N 64
/* Ages a table entry must tell apart (16-bit ticks less the skew window). */
#define PACER_RATE_TBL_MAX_SAT 16384

struct pacer_rate {
	__u32 thresh; /* admit when the key's age is at least this (emit + 1) */
	__u32 emit;   /* emission interval in ticks, ceil(T / N / tick) */
	__u32 burst;  /* burst tolerance in ticks, floor((N - 1) T / N / tick); 0 for N = 1 */
	__u32 sat;    /* ages from here up all mean a full burst: emit + max(burst, 1) */
};

/* The rate behind a threshold and a burst (the two the datapath stores). */
PACER_INLINE struct pacer_rate pacer_rate_of(__u32 thresh, __u32 burst)
{
	struct pacer_rate r;

	r.thresh = thresh;
	r.emit = thresh - 1;
	r.burst = burst;
	r.sat = r.emit + (burst ? burst : 1);
	return r;
}

/* The age a key's cells get when it is admitted at age a (a >= thresh). */
PACER_INLINE __u32 pacer_rate_next_age(__u32 a, const struct pacer_rate *r)
{
	__u32 d = a - r->emit;

	return d < r->burst ? d : r->burst;
}

/* Packets a key of age a may send now, one after the other (0: it is limited). */
PACER_INLINE __u32 pacer_rate_credits(__u32 a, const struct pacer_rate *r)
{
	__u32 n = 0;

	if (a > r->sat)
		a = r->sat;
	while (a >= r->thresh && n < PACER_RATE_MAX_N) {
		a = pacer_rate_next_age(a, r);
		n++;
	}
	return n;
}

/*
 * Ticks of --rate N/T at a tick of 2^tick_shift ns.  0, or -1 when the
 * emission interval is below one tick or the burst needs ages beyond
 * max_sat (the backend's limit).
 */
PACER_INLINE int pacer_rate_ticks(__u32 n, __u64 period_ns, __u32 tick_shift, __u32 max_sat,
				  struct pacer_rate *r)
{
	__u64 q, emit, burst;

	if (n < 1 || n > PACER_RATE_MAX_N || !period_ns || period_ns > PACER_RATE_MAX_PERIOD_NS ||
	    tick_shift > PACER_TICK_SHIFT_MAX)
		return -1;
	q = 1ULL << tick_shift;
	if (period_ns < n * q)
		return -1;
	emit = (period_ns + n * q - 1) / (n * q);
	burst = (n - 1) * period_ns / n / q;
	if (emit + (burst ? burst : 1) > max_sat)
		return -1;
	*r = pacer_rate_of((__u32)emit + 1, (__u32)burst);
	return 0;
}

/* The largest age a backend's cells tell apart for a rate. */
PACER_INLINE __u32 pacer_rate_max_sat(__u32 backend)
{
	return backend == PACER_BACKEND_TABLE ? PACER_RATE_TBL_MAX_SAT : PACER_MAX_THRESH;
}

#endif /* PACER_RATE_H */
