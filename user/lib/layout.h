/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The fixed-at-load layout `load` builds from its options, and the interval range a tick allows. */
#ifndef PACER_LAYOUT_H
#define PACER_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"

/* What load was asked for (its option values). */
struct layout_req {
	uint64_t interval_ns, tick_ns; /* tick 0: derived from the interval */
	uint64_t width;                /* sketch: cells per row; table: entries */
	uint32_t rows, kind, placement, clock, backend, on_full;
	uint32_t ncpus;                /* copies of a per-CPU layout */
};

/* The valid live interval range for a loaded tick. */
void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns);

/* log2 of a power of two, -1 for anything else. */
int log2_exact(uint64_t v);

/*
 * The layout and the interval's threshold in ticks for r: 0, or 2 with
 * what is wrong (naming the options and values) in err.
 */
int layout_build(const struct layout_req *r, struct pacer_layout *lay, uint32_t *thresh, char *err,
		 size_t len);

#endif
