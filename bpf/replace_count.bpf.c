// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The replace test's program (tests/tools/xdp_replace_check): counts every
 * frame under its generation, set before load, and passes it.  The old
 * program and its replacement share the counters (the new one reuses the
 * old one's map, as a limiter's replacement reuses its maps), so the
 * counts say which program judged how many frames: together exactly the
 * frames sent, none judged twice and none by neither.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define REPLACE_GENERATIONS 4

volatile const __u32 replace_generation = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, REPLACE_GENERATIONS);
	__type(key, __u32);
	__type(value, __u64);
} replace_seen SEC(".maps");

SEC("xdp")
int replace_count(struct xdp_md *ctx)
{
	__u32 gen = replace_generation;
	__u64 *n = bpf_map_lookup_elem(&replace_seen, &gen);

	if (n)
		__sync_fetch_and_add(n, 1);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
