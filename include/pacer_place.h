/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a CPU's copy of the state lives.  All copies share one
 * BPF_F_MMAPABLE array, whose values start on a page boundary, so every
 * 64-byte line is one cache line (a plain ARRAY's values start 56 bytes into
 * one, and PERCPU_ARRAY pays a dependent load of the element's per-CPU
 * pointer before the line itself).  Per-CPU placement gives CPU c the lines
 * [c * lines, (c + 1) * lines); shared placement has one copy.  A CPU
 * numbered beyond the copies (the object attached without the loader, which
 * sizes copies by the possible CPUs) shares copy c mod copies: the copy is
 * then written by several CPUs, which the shared-safe re-base tolerates, and a
 * source still gets at most one packet per interval per CPU.
 */
#ifndef PACER_PLACE_H
#define PACER_PLACE_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_sketch.h" /* pacer_total_lines */

/*
 * Lines in one copy of the state: the dense table's own count (any number),
 * the others' from their rows and power-of-two lines.
 */
static inline __attribute__((always_inline)) __u64
pacer_copy_lines(__u32 backend, __u32 kind, __u32 rows, __u32 lines_log2, __u32 lines)
{
	return backend == PACER_BACKEND_DENSE ? lines : pacer_total_lines(kind, rows, lines_log2);
}

/* The same for a layout. */
#define PACER_LAYOUT_LINES(l) \
	pacer_copy_lines((l).backend, (l).kind, (l).rows, (l).lines_log2, (l).lines)

/* First line of this CPU's copy; lines_per_copy lines per copy. */
static inline __attribute__((always_inline)) __u32
pacer_copy_base(__u32 placement, __u32 copies, __u32 cpu, __u32 lines_per_copy)
{
	if (placement != PACER_PLACEMENT_PERCPU || copies <= 1)
		return 0;
	if (cpu >= copies)
		cpu %= copies;
	return cpu * lines_per_copy;
}

#endif /* PACER_PLACE_H */
