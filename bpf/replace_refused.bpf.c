// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A program the verifier refuses (it reads the frame without checking its
 * length): the replace test's failing replacement, which must leave the
 * interface as it was (tests/tools/xdp_replace_check).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int replace_refused(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;

	return data[12] == 0x08 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
