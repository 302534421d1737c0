/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-source rate `--rate N/T` as GCRA (the generic cell rate algorithm),
 * in whole ticks, shared by the XDP program, the simulators and the CLI.
 * `--interval L` is the case N = 1, T = L, and gives the same bytes.
 *
 * GCRA(I, tau), I = T/N the emission interval, tau = (N-1)T/N the burst
 * tolerance: a packet at t conforms if t >= TAT - tau; then
 * TAT = max(TAT, t) + I.  A cell stores V, the "virtual last admission",
 * in ticks of q ns; with a = now - V the cell's age, emit and burst ticks:
 *
 *   admit  iff  a >= thresh = emit + 1
 *   then   a' = min(a - emit, burst)          (write V' = now - a')
 *
 * that is GCRA(emit, burst - 1) in ticks: m admissions after a first take
 * a tick gap g >= m*emit - burst + 1.  A tick gap g is a true gap over
 * (g - 1)q (the two packets may sit at the end and the start of their
 * ticks), so one-sidedness needs (m*emit - burst)q >= mI - tau for every
 * m with a gap of a tick or more.  A fresh source must get N at once
 * (g = 0 for m = N - 1): burst >= (N-1)emit + 1.  Then the packet after
 * such a burst comes emit ticks later, a true gap over (emit - 1)q, which
 * must be at least I: emit >= I/q + 1.  So, for N >= 2,
 *
 *   emit = ceil(I/q) + 1,   burst = (N-1)*emit + 1:
 *
 * exactly N at once; (m*emit - burst)q = (m-N+1)emit*q - q >= (m-N+1)I =
 * mI - tau for m >= N, since emit*q - I >= q; and m <= N - 1 needs nothing
 * (mI - tau <= 0).  The price is the spacing: a source sending faster than
 * its rate gets one packet per emit ticks, up to 2q more than I, so the
 * tick must be fine against I (below 1 % of it for the 1 % the CLI
 * promises: layout.c picks it).  No cell of one value does better: the
 * state after a burst and after a paced admission must be the same age
 * (the update below is monotone), so the spacing is the post-burst gap.
 * N = 1 (no burst): emit = ceil(I/q), burst = 0, a' = 0: a gap of emit + 1
 * ticks, over emit*q >= I: the interval's threshold.  Admissions are
 * taken in the order of their timestamps (a CPU's clock never runs back):
 * N at one instant conform, N in one tick out of order would not.
 *
 * a' >= 0: V is never in the future, so the wrap and skew rules of the
 * cells (which read a future value as clock skew) keep their meaning; a
 * burst lies in the past instead, and ages from sat = emit + max(burst, 1)
 * up all mean "a full burst", so a cell only needs ages up to sat (the
 * sketch: <= PACER_MAX_THRESH, its re-base age; the table: PACER_RATE_TBL_MAX_SAT).
 *
 * One-sided under collisions: the update is monotone in V (a larger V,
 * i.e. a younger cell, never gives a smaller V'), so cells that are upper
 * bounds of the exact V (collisions, re-base, wrap: each only makes a cell
 * younger) stay upper bounds, and every admission the cells allow, the
 * exact per-key tick GCRA fed the same admissions allows too, hence (above)
 * the admitted stream conforms to GCRA(I, tau) in nanoseconds (docs/design.md,
 * "Per-source rate").
 */
#ifndef PACER_RATE_H
#define PACER_RATE_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"

/* N of --rate N/T; with T at most 2^50 ns, (N - 1) * T stays in 64 bits. */
#define PACER_RATE_MAX_N 16384
#define PACER_RATE_MAX_PERIOD_NS (1ULL << 50)
/* The sketch's N: emit >= 2 and emit + burst = N * emit + 1 <= its 64 ticks. */
#define PACER_RATE_SKETCH_MAX_N 31
/* Ages a table entry must tell apart (16-bit ticks less the skew window). */
#define PACER_RATE_TBL_MAX_SAT 16384

struct pacer_rate {
	__u32 thresh; /* admit when the key's age is at least this (emit + 1) */
	__u32 emit;   /* emission interval in ticks: ceil(T / N / tick), + 1 for N > 1 */
	__u32 burst;  /* burst tolerance in ticks: (N - 1) emit + 1; 0 for N = 1 */
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
 * Ticks of --rate N/T at a tick of 2^tick_shift ns (the formulas above).
 * 0, or -1 when the emission interval is below one tick or the burst needs
 * ages beyond max_sat (the backend's limit).
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
	burst = 0;
	if (n > 1) {
		emit++;
		burst = (n - 1) * emit + 1;
	}
	if (emit + (burst ? burst : 1) > max_sat)
		return -1;
	*r = pacer_rate_of((__u32)emit + 1, (__u32)burst);
	return 0;
}

/*
 * Ticks between the admissions of a source that sends faster than its
 * rate, once its burst is spent: emit (N > 1), emit + 1 (N = 1).
 */
PACER_INLINE __u32 pacer_rate_spacing(const struct pacer_rate *r)
{
	return r->burst ? r->emit : r->thresh;
}

/*
 * The largest age a backend's cells tell apart for a rate: the table's
 * 16-bit ticks, or 8-bit ticks (the sketch's cells, the dense table's
 * entries: PACER_DENSE_MAX_SAT is PACER_MAX_THRESH).
 */
PACER_INLINE __u32 pacer_rate_max_sat(__u32 backend)
{
	return backend == PACER_BACKEND_TABLE ? PACER_RATE_TBL_MAX_SAT : PACER_MAX_THRESH;
}

#endif /* PACER_RATE_H */
