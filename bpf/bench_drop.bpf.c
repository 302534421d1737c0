// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Benchmark floor: the cheapest possible XDP program. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bench_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
