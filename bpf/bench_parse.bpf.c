// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Benchmark: the pacer's parsing and nothing else, then drop. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_parse.h"

__u64 bench_parsed;

SEC("xdp")
int bench_parse(struct xdp_md *ctx)
{
	struct pacer_src src;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	/* Keep the address live so the parse is not optimised away. */
	if (kind >= PACER_PKT_V4 && src.lo == 0x12345678)
		bench_parsed++;
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
