// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark baseline: the conventional exact limiter.  An LRU hash keyed by
 * the masked source holds its last admitted time; same parsing, same pace
 * policy, same coarse clock as the pacer's per-packet clock option.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_sketch.h"
#include "pacer_parse.h"

const volatile __u64 lru_interval_ns = 1000000000ULL;

struct lru_key {
	__u64 lo, hi;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1 << 20);
	__type(key, struct lru_key);
	__type(value, __u64);
} lru_last_seen SEC(".maps");

SEC("xdp")
int bench_lru(struct xdp_md *ctx)
{
	struct pacer_src src;
	struct lru_key k;
	__u64 now, *last;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	if (kind == PACER_PKT_NONIP || kind == PACER_PKT_MALFORMED)
		return XDP_PASS;
	if (kind == PACER_PKT_V4) {
		k.lo = src.lo & pacer_mask4(32);
		k.hi = 4;
	} else {
		k.lo = src.lo & pacer_mask6_lo(64);
		k.hi = 6;
	}
	now = bpf_ktime_get_coarse_ns();
	last = bpf_map_lookup_elem(&lru_last_seen, &k);
	if (last && now - *last < lru_interval_ns)
		return XDP_DROP;
	if (last)
		*last = now;
	else
		bpf_map_update_elem(&lru_last_seen, &k, &now, BPF_ANY);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
