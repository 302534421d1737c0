/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Per-CPU counters (enum pacer_stat); every stage counts into them. */
#ifndef PACER_BPF_STATS_H
#define PACER_BPF_STATS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_counters);
} pacer_stats SEC(".maps");

static __always_inline struct pacer_counters *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&pacer_stats, &zero);
}

#endif /* PACER_BPF_STATS_H */
