// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic generator, the live-frames engine of `xdp-pacer gen`: run with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES, it writes each frame's
 * headers and source address and redirects it out of an interface.
 * Live-frames pages are recycled without their data being re-initialised,
 * so every header byte is written on every run (from the template in
 * .rodata), and the checksums that cover the source are recomputed: the
 * IPv4 header checksum, and for IPv6 the UDP checksum (mandatory there).
 * IPv4 frames carry UDP checksum 0 ("none"), so the source needs no UDP
 * fix-up.  What goes in a frame is include/gen_draw.h's, which the socket
 * engines in userspace share.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "gen_abi.h"
#include "pacer_compiler.h"

const volatile struct gen_params gen_params = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << GEN_ZIPF_SLOTS_LOG2);
	__type(key, __u32);
	__type(value, struct gen_zipf_slot);
} gen_zipf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gen_cpu_state);
} gen_state SEC(".maps");

/* heavy: frames sent per heavy source, per CPU (the truth `top` is checked against). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GEN_MAX_HEAVY);
	__type(key, __u32);
	__type(value, __u64);
} gen_heavy_sent SEC(".maps");

/* gen_draw.h's environment: the kernel's random numbers and clock, the Zipf map. */
struct gen_env;

PACER_INLINE __u32 gen_env_rand(struct gen_env *e)
{
	(void)e;
	return bpf_get_prandom_u32();
}

PACER_INLINE __u64 gen_env_coarse_ns(struct gen_env *e)
{
	(void)e;
	return bpf_ktime_get_coarse_ns();
}

PACER_INLINE const struct gen_zipf_slot *gen_env_zipf(struct gen_env *e, __u32 slot)
{
	(void)e;
	return bpf_map_lookup_elem(&gen_zipf, &slot);
}

#include "gen_draw.h"

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	gen_params_ro *p = &gen_params;
	struct gen_cpu_state *st;
	struct gen_pick pick;
	__u32 zero = 0;
	__u64 *w = data;
	int i;

	if (data + GEN_HDR_BYTES > data_end)
		return XDP_ABORTED;
	st = bpf_map_lookup_elem(&gen_state, &zero);
	if (!st)
		return XDP_ABORTED;
	if (st->sent >= st->quota)
		return XDP_DROP;
	/* Paced: the precise clock, only here; a frame ahead of time is not sent. */
	if ((st->gap_ns | st->gap_frac) && !gen_due(st, bpf_ktime_get_ns()))
		return XDP_DROP;

#pragma unroll
	for (i = 0; i < GEN_HDR_BYTES / 8; i++)
		w[i] = p->hdr[i];
	pick = gen_write_source(NULL, p, st, data);
	if (pick.kind < 0)
		return XDP_DROP;
	if (pick.kind == GEN_SRC_GOOD && p->dist == GEN_DIST_HEAVY) {
		__u64 *n = bpf_map_lookup_elem(&gen_heavy_sent, &pick.idx);

		if (n)
			(*n)++;
	}
	gen_count(st, pick.kind);
	return bpf_redirect(p->ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
