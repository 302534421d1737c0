/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Time policy, the one place userspace turns an interval or a rate into
 * ticks: the tick load picks (or --tick asks for), the threshold and burst
 * of N per T at a tick, the live interval range a loaded tick allows, and
 * how a rate reads in ticks.  The arithmetic the datapath shares is in
 * include/pacer_ticks.h (interval -> threshold) and include/pacer_rate.h
 * (GCRA in ticks); load, set, status, analyze --pcap and the simulators'
 * tools call this file rather than working ticks out themselves.
 *
 * One name per quantity: interval_ns is L of --interval and T of
 * --rate N/T (the header's, the config's, the JSON's interval_ns and
 * Prometheus' xdp_pacer_interval_seconds); tick_shift the tick as a power
 * of two (tick_ns = 2^tick_shift); thresh_ticks the threshold;
 * burst_ticks the GCRA burst tolerance.
 */
#ifndef PACER_TICKS_POLICY_H
#define PACER_TICKS_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_rate.h"

/* The tick load picks for an interval: the smallest power of two keeping the threshold <= 48 ticks. */
uint32_t pacer_default_tick_shift(uint64_t interval_ns);

/*
 * The default tick for N per T (N = 1: the interval's): T/N in about 47
 * ticks, coarser until the burst fits the backend's cells.
 */
uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t interval_ns, uint32_t backend);

/* The valid live interval range for a loaded tick. */
void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns);

/* N per T (N = 1: --interval T) in ticks of a loaded tick: 0, or 2 with why in err. */
int rate_fit(uint32_t n, uint64_t interval_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len);

/*
 * The tick for N per T (n 0 or 1: --interval T): --tick's (tick_ns, 0 for
 * none) or the default, and the rate's ticks in it: 0, or 2 with why in err.
 */
int ticks_choose(uint32_t n, uint64_t interval_ns, uint64_t tick_ns, uint32_t backend,
		 uint32_t *tick_shift, struct pacer_rate *rate, char *err, size_t len);

/*
 * A traffic class's limit (pacer_class.h), and the global one while
 * classes are configured: the backend's whole range.  N = 1 on the sketch
 * and any N > 1 as rate_fit(); N = 1 on the table from 4 ticks up to the
 * ages its entries tell apart (PACER_RATE_TBL_MAX_SAT - 1 ticks, 4096
 * times the shortest), so one load holds classes 1000x apart.  0, or 2
 * with why in err.
 */
int limit_fit(uint32_t n, uint64_t interval_ns, uint32_t tick_shift, uint32_t backend,
	      struct pacer_rate *rate, char *err, size_t len);

/* The intervals limit_fit() accepts at a tick. */
void limit_range(uint32_t tick_shift, uint32_t backend, uint64_t *min_ns, uint64_t *max_ns);

/* One limit of the set a load must fit: N per T (N = 1: an interval), and who asked for it. */
struct limit_req {
	uint32_t n;
	uint64_t interval_ns;
	const char *who; /* "FILE:LINE: class 'dns'", "--class 'dns: ...'", "the global interval" */
};

/*
 * The tick for several limits (the classes and the global one): --tick's
 * (tick_ns; 0: none), else the tick every limit fits at nearest to the
 * default tick of the coarsest (so one limit alone gets today's tick).  0,
 * or 2 with err naming the limit that does not fit, or the two whose span
 * no tick of the backend holds (and what would).
 */
int limits_choose_tick(const struct limit_req *l, int n, uint64_t tick_ns, uint32_t backend,
		       uint32_t *tick_shift, char *err, size_t len);

/* "interval 1s (threshold 31 ticks)" or the rate's burst and spacing. */
const char *rate_describe(const struct pacer_config *c, uint32_t tick_shift, char *buf, size_t len);

/*
 * Whether the datapath clock steps by more than the gap a source's
 * admissions need (interval/n): packets of a source within one step then look
 * simultaneous, so all but the first are dropped.  The precise clock never.
 */
int gap_below_clock(uint32_t clock, uint32_t n, uint64_t interval_ns, uint64_t clock_res_ns);

#endif
