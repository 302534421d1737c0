/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the traffic generator puts in a frame, shared verbatim by its XDP
 * program (bpf/gen.bpf.c, the live-frames engine) and by the socket
 * engines in userspace (user/verbs/gen/gen_sock.c): which source a frame
 * gets, the pace, and the checksums.  So every engine sends the same
 * distributions, and what the tests check of one holds for the others.
 *
 * The includer supplies, before including this header, its environment:
 *   struct gen_env;
 *   PACER_INLINE __u32 gen_env_rand(struct gen_env *e);       a random u32
 *   PACER_INLINE __u64 gen_env_coarse_ns(struct gen_env *e);  CLOCK_MONOTONIC, coarse
 *   PACER_INLINE const struct gen_zipf_slot *gen_env_zipf(struct gen_env *e, __u32 slot);
 * (the BPF program: helpers and its map; userspace: a per-thread generator,
 * the clock cached per batch, the table in memory).
 */
#ifndef PACER_GEN_DRAW_H
#define PACER_GEN_DRAW_H

#include <linux/types.h>
#include "gen_abi.h"
#include "pacer_compiler.h"
#include "pacer_sketch.h" /* pacer_mix64: the stand-in for a NIC's RSS hash */

/*
 * A header field's store: one store in the program (as it always was);
 * memcpy in userspace, where the field's offset leaves it unaligned for C.
 */
#ifdef __bpf__
#define GEN_STORE(at, v) (*(__typeof__(v) *)(at) = (v))
#else
#define GEN_STORE(at, v) __builtin_memcpy((at), &(v), sizeof(v))
#endif

/*
 * The parameters as each side reads them: the program's are .rodata that
 * libbpf writes at load, so every read must be a load (volatile: the
 * compiler would otherwise fold the object's zero initialiser into the
 * code); userspace's are a plain struct.
 */
#ifdef __bpf__
typedef const volatile struct gen_params gen_params_ro;
#else
typedef const struct gen_params gen_params_ro;
#endif

/* A paced sender this far behind its schedule starts it afresh. */
#define GEN_MAX_LAG_NS 50000000ULL

enum gen_src_kind {
	GEN_SRC_STRUCTURED, /* index into the base range */
	GEN_SRC_GOOD,       /* mix: a well-behaved source; heavy: a heavy one (index into the base range) */
	GEN_SRC_SPOOFED,    /* random */
};

/* One frame's source: its kind, and for structured and good ones its index. */
struct gen_pick {
	int kind; /* enum gen_src_kind, or -1: no frame (no draw was this sender's) */
	__u32 idx;
};

PACER_INLINE __u32 gen_advance(__u32 *cursor, __u32 count)
{
	__u32 c = *cursor;

	*cursor = c + 1 >= count ? 0 : c + 1;
	return c;
}

/* Which source this frame gets. */
PACER_INLINE struct gen_pick gen_pick_source(struct gen_env *e, gen_params_ro *p,
					     struct gen_cpu_state *st)
{
	struct gen_pick r = { GEN_SRC_SPOOFED, 0 };

	switch (p->dist) {
	case GEN_DIST_UNIFORM:
		r.kind = GEN_SRC_STRUCTURED;
		r.idx = st->src_first + gen_advance(&st->src_cursor, st->src_count);
		break;
	case GEN_DIST_ZIPF: {
		__u32 slot = gen_env_rand(e) >> (32 - GEN_ZIPF_SLOTS_LOG2);
		const struct gen_zipf_slot *z = gen_env_zipf(e, slot);

		if (!z)
			break;
		r.kind = GEN_SRC_STRUCTURED;
		r.idx = z->first;
		if (z->span > 1)
			r.idx += (__u32)(((__u64)gen_env_rand(e) * z->span) >> 32);
		break;
	}
	case GEN_DIST_MIX:
		if (st->good_count) {
			__u64 now = gen_env_coarse_ns(e);

			/* Due well-behaved packets go first, round robin; the rest is flood. */
			if (now >= st->next_good_ns) {
				st->next_good_ns = st->next_good_ns ? st->next_good_ns + st->good_gap_ns
								    : now + st->good_gap_ns;
				r.kind = GEN_SRC_GOOD;
				r.idx = st->good_first + gen_advance(&st->good_cursor, st->good_count);
			}
		}
		break;
	case GEN_DIST_HEAVY:
		/* Split by nothing: every sender draws them all. */
		if (gen_env_rand(e) < p->heavy_thresh) {
			r.kind = GEN_SRC_GOOD;
			r.idx = (__u32)(((__u64)gen_env_rand(e) * p->heavy_count) >> 32);
		}
		break;
	}
	return r;
}

/* Whether a source whose address hashes to h is this sender's (always, without affinity). */
PACER_INLINE int gen_mine(const struct gen_cpu_state *st, __u64 h)
{
	return !st->aff_count || (__u32)(((h >> 32) * st->aff_count) >> 32) == st->aff_index;
}

/*
 * Uniform and well-behaved sources are split between senders by index
 * already; drawn ones (Zipf, spoofed) are redrawn until they are this
 * sender's.
 */
PACER_INLINE int gen_affine_by_index(gen_params_ro *p, int kind)
{
	return kind == GEN_SRC_GOOD || (kind == GEN_SRC_STRUCTURED && p->dist == GEN_DIST_UNIFORM);
}

PACER_INLINE struct gen_pick gen_draw_v4(struct gen_env *e, gen_params_ro *p,
					 struct gen_cpu_state *st, __u32 *src)
{
	struct gen_pick r = { -1, 0 };
	int try;

	for (try = 0; try < GEN_AFFINITY_TRIES; try++) {
		r = gen_pick_source(e, p, st);
		if (r.kind == GEN_SRC_SPOOFED)
			*src = (gen_env_rand(e) & p->spoof_mask4) | p->spoof_bits4;
		else
			*src = __builtin_bswap32(__builtin_bswap32(p->src_base4) + r.idx);
		if (gen_affine_by_index(p, r.kind) || gen_mine(st, pacer_mix64(*src)))
			return r;
	}
	r.kind = -1;
	return r;
}

PACER_INLINE struct gen_pick gen_draw_v6(struct gen_env *e, gen_params_ro *p,
					 struct gen_cpu_state *st, __u64 *lo, __u64 *hi)
{
	struct gen_pick r = { -1, 0 };
	int try;

	for (try = 0; try < GEN_AFFINITY_TRIES; try++) {
		r = gen_pick_source(e, p, st);
		if (r.kind == GEN_SRC_SPOOFED) {
			*lo = ((__u64)gen_env_rand(e) << 32 | gen_env_rand(e));
			*lo = (*lo & p->spoof_mask6) | p->spoof_bits6;
			*hi = (__u64)gen_env_rand(e) << 32 | gen_env_rand(e);
		} else {
			/* One /64 per source: the index is added to the prefix. */
			*lo = __builtin_bswap64(__builtin_bswap64(p->src_base6[0]) + r.idx);
			*hi = p->src_base6[1];
		}
		if (gen_affine_by_index(p, r.kind) || gen_mine(st, pacer_mix64(*lo ^ pacer_mix64(*hi))))
			return r;
	}
	r.kind = -1;
	return r;
}

PACER_INLINE __u32 gen_fold(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u32)sum;
}

/*
 * Paced: whether a frame is due at now (and if so, the schedule moves on
 * by one gap); unpaced senders are always due.  After a stall (or at the
 * start) the schedule restarts instead of bursting.
 */
PACER_INLINE int gen_due(struct gen_cpu_state *st, __u64 now)
{
	__u64 frac;

	if (!(st->gap_ns | st->gap_frac))
		return 1;
	if (now < st->next_send_ns)
		return 0;
	if (now - st->next_send_ns > GEN_MAX_LAG_NS) {
		st->next_send_ns = now;
		st->next_frac = 0;
	}
	frac = (__u64)st->next_frac + st->gap_frac;
	st->next_send_ns += st->gap_ns + (frac >> 32);
	st->next_frac = (__u32)frac;
	return 1;
}

/*
 * Draw the next frame's source and write it, its UDP source port and the
 * checksum that covers them into a frame that holds the template (the
 * first GEN_HDR_BYTES of p->hdr).  Returns the pick; kind -1: no frame.
 * Counting is the caller's (gen_count), once the frame is sent.
 */
PACER_INLINE struct gen_pick gen_write_source(struct gen_env *e, gen_params_ro *p,
					      struct gen_cpu_state *st, void *data)
{
	struct gen_pick r;
	__u16 sport;

	if (p->family == 4) {
		__u32 src;
		__u16 csum;

		r = gen_draw_v4(e, p, st, &src);
		if (r.kind < 0)
			return r;
		sport = r.kind == GEN_SRC_GOOD ? p->sport_good : p->sport_flood;
		csum = (__u16)~gen_fold((__u64)p->csum_base + (src & 0xffff) + (src >> 16));
		GEN_STORE(data + GEN_V4_SADDR_OFF, src);
		GEN_STORE(data + GEN_V4_SPORT_OFF, sport);
		GEN_STORE(data + GEN_V4_CSUM_OFF, csum);
	} else {
		__u64 lo, hi;
		__u16 sum;

		r = gen_draw_v6(e, p, st, &lo, &hi);
		if (r.kind < 0)
			return r;
		sport = r.kind == GEN_SRC_GOOD ? p->sport_good : p->sport_flood;
		sum = (__u16)~gen_fold((__u64)p->csum_base + (lo & 0xffffffff) + (lo >> 32) +
				       (hi & 0xffffffff) + (hi >> 32) + sport);
		/* 0 means "no checksum", which IPv6 forbids: send its other form. */
		sum = sum ? sum : 0xffff;
		GEN_STORE(data + GEN_V6_SADDR_OFF, lo);
		GEN_STORE(data + GEN_V6_SADDR_OFF + 8, hi);
		GEN_STORE(data + GEN_V6_SPORT_OFF, sport);
		GEN_STORE(data + GEN_V6_UDP_CSUM_OFF, sum);
	}
	return r;
}

/* A frame was sent: the sender's counters (per heavy source: the caller's). */
PACER_INLINE void gen_count(struct gen_cpu_state *st, int kind)
{
	st->sent++;
	if (kind == GEN_SRC_GOOD)
		st->good_sent++;
}

#endif /* PACER_GEN_DRAW_H */
