// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark floor: what any structure that reads one random cache line per
 * packet must pay.  Parse, one keyed 64-bit hash as the pacer computes it,
 * then one dependent read (its value decides the verdict) of a random
 * 64-byte line of an aligned (BPF_F_MMAPABLE) array.  The bench sizes the
 * array like the structure under test; line 0 holds the index mask.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_sketch.h"
#include "pacer_parse.h"

struct floor_line {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, struct floor_line);
} floor_lines SEC(".maps");

static const __u64 floor_key[2] = { 0x1234567887654321ULL, 0x0fedcba987654321ULL };

SEC("xdp")
int bench_floor(struct xdp_md *ctx)
{
	struct floor_line *cfg, *l;
	struct pacer_src src;
	__u32 zero = 0, idx;
	__u64 h;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	if (kind == PACER_PKT_NONIP || kind == PACER_PKT_MALFORMED)
		return XDP_PASS;
	h = kind == PACER_PKT_V4 ? pacer_hash_v4(floor_key, (__u32)src.lo)
				 : pacer_hash_v6(floor_key, src.lo, src.hi);
	cfg = bpf_map_lookup_elem(&floor_lines, &zero); /* always cached */
	if (!cfg)
		return XDP_PASS;
	idx = (__u32)(h & cfg->w[0]);
	l = bpf_map_lookup_elem(&floor_lines, &idx);
	if (!l)
		return XDP_PASS;
	/* The read decides the verdict, so it is on the packet's critical path. */
	return l->w[h & 7] == h ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
