/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The fixed-at-load layout `load` builds from its options, and the interval range a tick allows. */
#ifndef PACER_LAYOUT_H
#define PACER_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_rate.h"

/* What load was asked for (its option values). */
struct layout_req {
	uint64_t interval_ns, tick_ns; /* T of --rate N/T (or the interval); tick 0: derived from it */
	uint32_t rate_n;               /* N of --rate N/T; 0 or 1: --interval */
	uint64_t width;                /* sketch: cells per row; table: entries */
	uint32_t rows, kind, placement, clock, backend, on_full;
	uint32_t ncpus;                /* copies of a per-CPU layout */
};

/* The valid live interval range for a loaded tick. */
void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns);

/* log2 of a power of two, -1 for anything else. */
int log2_exact(uint64_t v);

/*
 * The layout and the rate's ticks for r: 0, or 2 with what is wrong
 * (naming the options and values) in err.
 */
int layout_build(const struct layout_req *r, struct pacer_layout *lay, struct pacer_rate *rate,
		 char *err, size_t len);

/*
 * Whether load takes r's geometry (backend, rows, width, cell layout, and
 * the copies its placement makes on ncpus CPUs): the checks layout_build
 * makes, for advice that must be loadable.  0, or 2 with why in err.
 */
int layout_check_geometry(const struct layout_req *r, char *err, size_t len);

/*
 * The default tick for N per T (N = 1: the interval's): T/N in about 47
 * ticks, coarser until the burst fits the backend's cells.
 */
uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t period_ns, uint32_t backend);

/* N per T (N = 1: --interval T) in ticks of a loaded tick: 0, or 2 with why in err. */
int rate_fit(uint32_t n, uint64_t period_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len);

/* "interval 1s (threshold 31 ticks)" or the rate's burst and spacing. */
const char *rate_describe(const struct pacer_config *c, uint32_t tick_shift, char *buf, size_t len);

/*
 * Whether the datapath clock steps by more than the gap a source's
 * admissions need (period/n): packets of a source within one step then look
 * simultaneous, so all but the first are dropped.  The precise clock never.
 */
int gap_below_clock(uint32_t clock, uint32_t n, uint64_t period_ns, uint64_t clock_res_ns);

#endif
