// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark control for the referee: an exact pace limiter that cannot
 * admit a source twice within the interval, on any number of CPUs (one
 * last-admitted time per source, claimed by compare-and-swap, precise
 * clock).  Whatever false passes the referee reports behind it are
 * measurement artefacts, the floor against which the pacer's are read.
 * Sources are the benchmark's structured range, 10.64.0.0 + i, i < 2^20;
 * every other frame is dropped.
 */
#include "lib/bench_ref.h"

#define EXACT_BASE 0x0a400000u /* 10.64.0.0 */
#define EXACT_SOURCES (1u << 20)
#define EXACT_INTERVAL_NS 1000000000ULL

BENCH_LAST_MAP(exact_last, EXACT_SOURCES);

SEC("xdp")
int bench_exact(struct xdp_md *ctx)
{
	__u64 now, old, *last;
	__u32 idx, src;

	if (bench_ipv4_source((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src))
		return XDP_DROP;
	idx = src - EXACT_BASE;
	last = bpf_map_lookup_elem(&exact_last, &idx);
	if (!last)
		return XDP_DROP;
	now = bpf_ktime_get_ns();
	old = *(volatile __u64 *)last;
	if (old && now - old < EXACT_INTERVAL_NS)
		return XDP_DROP;
	return __sync_val_compare_and_swap(last, old, now) == old ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
