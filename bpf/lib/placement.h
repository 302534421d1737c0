/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The state's lines: one BPF_F_MMAPABLE array holding every CPU's copy
 * (per-CPU placement) or the one copy (shared); include/pacer_place.h says
 * where a CPU's copy starts.  Every backend keeps its lines here.
 */
#ifndef PACER_BPF_PLACEMENT_H
#define PACER_BPF_PLACEMENT_H

#include "config.h"
#include "pacer_sketch.h"
#include "pacer_place.h"

/*
 * Sized by the loader (copies x lines per copy); these defaults are what
 * `ip link ... xdp obj` gets.  Mmapable: values start page-aligned, so each
 * line is one cache line (pacer_place.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PACER_DEFAULT_COPIES * (PACER_DEFAULT_ROWS << PACER_DEFAULT_LINES_LOG2));
	__type(key, __u32);
	__type(value, struct pacer_line);
} pacer_sk SEC(".maps");

/* First line of this CPU's copy. */
static __always_inline __u32 copy_base(void)
{
	__u32 lines = (__u32)PACER_LAYOUT_LINES(pacer_layout);

	return pacer_copy_base(pacer_layout.placement, pacer_layout.copies,
			       bpf_get_smp_processor_id(), lines);
}

static __always_inline struct pacer_line *line_at(__u32 idx)
{
	return bpf_map_lookup_elem(&pacer_sk, &idx);
}

#endif /* PACER_BPF_PLACEMENT_H */
