// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Baseline: pass every packet (the bare XDP program that scripts/policy-demo.sh
 * measures real services behind, beside the limiter). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
