// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic generator: run with BPF_PROG_TEST_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES, it rewrites each frame's source address and
 * redirects it out of an interface.  Pages are recycled without being
 * re-initialised, so every field that varies is written on every run.
 * The IPv4 header checksum is left as in the template: the receivers it
 * feeds (XDP and tc programs) never check it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "gen_abi.h"

const volatile struct gen_params gen_params = {};
struct gen_counters gen_counters = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << GEN_ZIPF_TABLE_LOG2);
	__type(key, __u32);
	__type(value, __u32);
} gen_zipf SEC(".maps");

static __always_inline __u32 pick(__u32 *good)
{
	__u32 r = bpf_get_prandom_u32();

	*good = 0;
	switch (gen_params.dist) {
	case GEN_DIST_UNIFORM:
		return (__u32)(((__u64)r * gen_params.nsources) >> 32);
	case GEN_DIST_ZIPF: {
		__u32 k = r & ((1u << GEN_ZIPF_TABLE_LOG2) - 1);
		__u32 *v = bpf_map_lookup_elem(&gen_zipf, &k);

		return v ? *v : 0;
	}
	case GEN_DIST_MIX: {
		__u64 now = bpf_ktime_get_coarse_ns();

		/* Due well-behaved sources go first, round robin; the rest is flood. */
		if (now >= gen_counters.next_good_ns) {
			__u32 g = (__u32)(gen_counters.good_cursor++ % gen_params.nsources);

			gen_counters.next_good_ns = gen_counters.next_good_ns
				? gen_counters.next_good_ns + gen_params.good_gap_ns
				: now + gen_params.good_gap_ns;
			gen_counters.good_sent++;
			*good = 1;
			return g;
		}
		return r;
	}
	default:
		return r;
	}
}

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = gen_params.l3_off & 63, good, idx;
	__u8 *ip = data + off;
	int spoofed;

	idx = pick(&good);
	spoofed = gen_params.dist == GEN_DIST_SPOOFED || (gen_params.dist == GEN_DIST_MIX && !good);
	if (gen_params.family == 4) {
		__u32 *src;

		if ((void *)(ip + 20) > data_end)
			return XDP_ABORTED;
		src = (__u32 *)(ip + 12);
		if (spoofed)
			*src = (idx & gen_params.spoof_mask4) | gen_params.spoof_bits4;
		else
			*src = __builtin_bswap32(__builtin_bswap32(gen_params.src_base4) + idx);
	} else {
		__u64 *src;

		if ((void *)(ip + 40) > data_end)
			return XDP_ABORTED;
		src = (__u64 *)(ip + 8);
		if (spoofed) {
			src[0] = gen_params.src_base6[0] ^ ((__u64)bpf_get_prandom_u32() << 32 | idx);
			src[1] = ((__u64)bpf_get_prandom_u32() << 32) | bpf_get_prandom_u32();
		} else {
			/* One /64 per source: sources differ in the 4th 16-bit group. */
			src[0] = gen_params.src_base6[0] +
				 ((__u64)__builtin_bswap16((__u16)idx) << 48) +
				 ((__u64)__builtin_bswap16((__u16)(idx >> 16)) << 32);
			src[1] = gen_params.src_base6[1];
		}
	}
	gen_counters.sent++;
	return bpf_redirect(gen_params.ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
