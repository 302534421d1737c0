/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The fixed-at-load layout `load` builds from its options (its tick from ticks.h). */
#ifndef PACER_LAYOUT_H
#define PACER_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_rate.h"
#include "geometry.h"

/* What load was asked for (its option values). */
struct layout_req {
	uint64_t interval_ns, tick_ns; /* T of --rate N/T (or the interval); tick 0: derived from it */
	uint32_t rate_n;               /* N of --rate N/T; 0 or 1: --interval */
	uint64_t width;                /* sketch: cells per row; table: entries */
	uint32_t rows, kind, placement, clock, backend, on_full;
	uint32_t ncpus;                /* copies of a per-CPU layout */
	int wide_limit;                /* classes configured: the global limit takes limit_fit()'s range */
};

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
 * Whether lay, read from a running or pinned program, is this ABI's and in
 * the bounds its readers index and shift by (tick shift, backend).
 */
bool layout_readable(const struct pacer_layout *lay);

#endif
