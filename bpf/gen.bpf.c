// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic generator: run with BPF_PROG_TEST_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES, it writes each frame's headers and source
 * address and redirects it out of an interface.  Live-frames pages are
 * recycled without their data being re-initialised, so every header byte is
 * written on every run (from the template in .rodata), and the checksums
 * that cover the source are recomputed: the IPv4 header checksum, and for
 * IPv6 the UDP checksum (mandatory there).  IPv4 frames carry UDP checksum 0
 * ("none"), so the source needs no UDP fix-up.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "gen_abi.h"
#include "pacer_sketch.h" /* pacer_mix64: the stand-in for a NIC's RSS hash */

/* A paced CPU this far behind its schedule starts it afresh. */
#define GEN_MAX_LAG_NS 50000000ULL

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

enum src_kind {
	SRC_STRUCTURED, /* index into the base range */
	SRC_GOOD,       /* mix: a well-behaved source, index into the base range */
	SRC_SPOOFED,    /* random */
};

static __always_inline __u32 advance(__u32 *cursor, __u32 count)
{
	__u32 c = *cursor;

	*cursor = c + 1 >= count ? 0 : c + 1;
	return c;
}

/* Which source this frame gets: *idx for structured ones. */
static __always_inline int pick(struct gen_cpu_state *st, __u32 *idx)
{
	switch (gen_params.dist) {
	case GEN_DIST_UNIFORM:
		*idx = st->src_first + advance(&st->src_cursor, st->src_count);
		return SRC_STRUCTURED;
	case GEN_DIST_ZIPF: {
		__u32 slot = bpf_get_prandom_u32() >> (32 - GEN_ZIPF_SLOTS_LOG2);
		struct gen_zipf_slot *z = bpf_map_lookup_elem(&gen_zipf, &slot);

		if (!z)
			return SRC_SPOOFED;
		*idx = z->first;
		if (z->span > 1)
			*idx += (__u32)(((__u64)bpf_get_prandom_u32() * z->span) >> 32);
		return SRC_STRUCTURED;
	}
	case GEN_DIST_MIX:
		if (st->good_count) {
			__u64 now = bpf_ktime_get_coarse_ns();

			/* Due well-behaved packets go first, round robin; the rest is flood. */
			if (now >= st->next_good_ns) {
				st->next_good_ns = st->next_good_ns ? st->next_good_ns + st->good_gap_ns
								    : now + st->good_gap_ns;
				*idx = st->good_first + advance(&st->good_cursor, st->good_count);
				st->good_sent++;
				return SRC_GOOD;
			}
		}
		return SRC_SPOOFED;
	case GEN_DIST_HEAVY:
		if (bpf_get_prandom_u32() < gen_params.heavy_thresh) {
			__u64 *n;

			*idx = (__u32)(((__u64)bpf_get_prandom_u32() * gen_params.heavy_count) >> 32);
			n = bpf_map_lookup_elem(&gen_heavy_sent, idx);
			if (n)
				(*n)++;
			st->good_sent++;
			return SRC_GOOD; /* split by nothing: every thread draws them all */
		}
		return SRC_SPOOFED;
	default:
		return SRC_SPOOFED;
	}
}

/* Whether a source whose address hashes to h is this CPU's (always, without affinity). */
static __always_inline int mine(const struct gen_cpu_state *st, __u64 h)
{
	return !st->aff_count || (__u32)(((h >> 32) * st->aff_count) >> 32) == st->aff_index;
}

/*
 * Uniform and well-behaved sources are split between CPUs by index
 * already; drawn ones (Zipf, spoofed) are redrawn until they are this
 * CPU's.  Negative: no draw was, the frame is not sent.
 */
static __always_inline int affine_by_index(int kind)
{
	return kind == SRC_GOOD || (kind == SRC_STRUCTURED && gen_params.dist == GEN_DIST_UNIFORM);
}

static __always_inline int draw_v4(struct gen_cpu_state *st, __u32 *src)
{
	__u32 idx = 0;
	int kind, try;

	for (try = 0; try < GEN_AFFINITY_TRIES; try++) {
		kind = pick(st, &idx);
		if (kind == SRC_SPOOFED)
			*src = (bpf_get_prandom_u32() & gen_params.spoof_mask4) | gen_params.spoof_bits4;
		else
			*src = __builtin_bswap32(__builtin_bswap32(gen_params.src_base4) + idx);
		if (affine_by_index(kind) || mine(st, pacer_mix64(*src)))
			return kind;
	}
	return -1;
}

static __always_inline int draw_v6(struct gen_cpu_state *st, __u64 *lo, __u64 *hi)
{
	__u32 idx = 0;
	int kind, try;

	for (try = 0; try < GEN_AFFINITY_TRIES; try++) {
		kind = pick(st, &idx);
		if (kind == SRC_SPOOFED) {
			*lo = ((__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32());
			*lo = (*lo & gen_params.spoof_mask6) | gen_params.spoof_bits6;
			*hi = (__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32();
		} else {
			/* One /64 per source: the index is added to the prefix. */
			*lo = __builtin_bswap64(__builtin_bswap64(gen_params.src_base6[0]) + idx);
			*hi = gen_params.src_base6[1];
		}
		if (affine_by_index(kind) || mine(st, pacer_mix64(*lo ^ pacer_mix64(*hi))))
			return kind;
	}
	return -1;
}

static __always_inline __u32 fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u32)sum;
}

SEC("xdp")
int xdp_gen(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct gen_cpu_state *st;
	__u32 zero = 0;
	__u64 *w = data;
	__u16 sport;
	int kind, i;

	if (data + GEN_HDR_BYTES > data_end)
		return XDP_ABORTED;
	st = bpf_map_lookup_elem(&gen_state, &zero);
	if (!st)
		return XDP_ABORTED;
	if (st->sent >= st->quota)
		return XDP_DROP;
	if (st->gap_ns | st->gap_frac) {
		/* Paced: precise clock, only here; a frame ahead of time is not sent. */
		__u64 now = bpf_ktime_get_ns(), frac;

		if (now < st->next_send_ns)
			return XDP_DROP;
		/* After a stall (or at the start), restart the schedule instead of bursting. */
		if (now - st->next_send_ns > GEN_MAX_LAG_NS) {
			st->next_send_ns = now;
			st->next_frac = 0;
		}
		frac = (__u64)st->next_frac + st->gap_frac;
		st->next_send_ns += st->gap_ns + (frac >> 32);
		st->next_frac = (__u32)frac;
	}

#pragma unroll
	for (i = 0; i < GEN_HDR_BYTES / 8; i++)
		w[i] = gen_params.hdr[i];

	if (gen_params.family == 4) {
		__u32 src;

		kind = draw_v4(st, &src);
		if (kind < 0)
			return XDP_DROP;
		sport = kind == SRC_GOOD ? gen_params.sport_good : gen_params.sport_flood;
		*(__u32 *)(data + GEN_V4_SADDR_OFF) = src;
		*(__u16 *)(data + GEN_V4_SPORT_OFF) = sport;
		*(__u16 *)(data + GEN_V4_CSUM_OFF) =
			(__u16)~fold((__u64)gen_params.csum_base + (src & 0xffff) + (src >> 16));
	} else {
		__u64 lo, hi;
		__u32 sum;

		kind = draw_v6(st, &lo, &hi);
		if (kind < 0)
			return XDP_DROP;
		sport = kind == SRC_GOOD ? gen_params.sport_good : gen_params.sport_flood;
		*(__u64 *)(data + GEN_V6_SADDR_OFF) = lo;
		*(__u64 *)(data + GEN_V6_SADDR_OFF + 8) = hi;
		*(__u16 *)(data + GEN_V6_SPORT_OFF) = sport;
		sum = ~fold((__u64)gen_params.csum_base + (lo & 0xffffffff) + (lo >> 32) +
			    (hi & 0xffffffff) + (hi >> 32) + sport) & 0xffff;
		/* 0 means "no checksum", which IPv6 forbids: send its other form. */
		*(__u16 *)(data + GEN_V6_UDP_CSUM_OFF) = sum ? (__u16)sum : 0xffff;
	}
	st->sent++;
	return bpf_redirect(gen_params.ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
