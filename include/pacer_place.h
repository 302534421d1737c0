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
