/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared between the traffic generator's XDP program and `xdp-pacer gen`. */
#ifndef PACER_GEN_ABI_H
#define PACER_GEN_ABI_H

#include <linux/types.h>

enum gen_dist {
	GEN_DIST_UNIFORM = 0, /* N sources, each thread cycling through its share */
	GEN_DIST_ZIPF = 1,    /* Zipf(s) over N sources, drawn from a slot table */
	GEN_DIST_SPOOFED = 2, /* a random source for every packet */
	GEN_DIST_MIX = 3,     /* paced well-behaved sources inside a spoofed flood */
	GEN_DIST_HEAVY = 4,   /* heavy sources, a share of the frames, inside a spoofed flood */
};

/* heavy: at most this many heavy sources, each counted (gen_heavy_sent). */
#define GEN_MAX_HEAVY 1024

/*
 * Zipf: 2^16 slots of equal probability; slot j covers the sources whose
 * CDF interval meets [j, j+1) / 2^16 and a draw picks uniformly among them.
 * The head (sources more likely than one slot) is exact to a slot; in the
 * tail, neighbouring sources are within a fraction of a percent of each
 * other's probability, so uniform within a slot is what Zipf gives there.
 * 512 KiB of table, so drawing costs no cache miss to speak of.
 */
#define GEN_ZIPF_SLOTS_LOG2 16

struct gen_zipf_slot {
	__u32 first; /* first source index of the slot */
	__u32 span;  /* how many consecutive sources share it (>= 1) */
};

/*
 * The first GEN_HDR_BYTES of every frame are written from hdr[] on every
 * run: live-frames pages are recycled without being re-initialised, and a
 * receiver could have changed them.  Frames are at least that long (64
 * bytes for IPv4, 80 for IPv6); the rest of a frame is UDP payload that
 * nothing reads.
 */
#define GEN_HDR_BYTES 64
#define GEN_L3_OFF 14
#define GEN_V4_CSUM_OFF (GEN_L3_OFF + 10)
#define GEN_V4_SADDR_OFF (GEN_L3_OFF + 12)
#define GEN_V4_SPORT_OFF (GEN_L3_OFF + 20)
#define GEN_V6_SADDR_OFF (GEN_L3_OFF + 8)
#define GEN_V6_SPORT_OFF (GEN_L3_OFF + 40)
#define GEN_V6_UDP_CSUM_OFF (GEN_L3_OFF + 46)

/* Fixed for one run (.rodata). */
struct gen_params {
	__u32 dist;
	__u32 family;          /* 4 or 6 */
	__u32 ifindex;         /* where frames are redirected */
	__u32 src_base4;       /* first structured source, network byte order */
	__u32 spoof_mask4;     /* spoofed IPv4 source: random & mask | bits */
	__u32 spoof_bits4;
	__u64 src_base6[2];    /* first structured source, as little-endian loads */
	__u64 spoof_mask6;     /* spoofed IPv6 /64: random & mask | bits (first word) */
	__u64 spoof_bits6;
	/*
	 * One's-complement sum (16-bit little-endian words, unfolded) of what
	 * the checksum covers with the source address and UDP source port
	 * zeroed: the IPv4 header, or for IPv6 the UDP pseudo-header, header
	 * and payload.  The program adds the variable words and folds.
	 */
	__u32 csum_base;
	__u16 sport_flood;     /* network byte order */
	__u16 sport_good;      /* mix, heavy: the well-behaved (heavy) sources' port */
	__u32 heavy_count;     /* heavy: sources 0 .. heavy_count - 1 of the base range */
	__u32 heavy_thresh;    /* heavy: a frame is a heavy source's when a random u32 < this */
	__u64 hdr[GEN_HDR_BYTES / 8];
};

/*
 * Per-CPU state (one generator thread per CPU): userspace writes each
 * CPU's quota, pace and share of the sources before the run and reads the
 * counters after.  A frame that is over quota or ahead of the pace is
 * dropped instead of sent, so one long BPF_PROG_TEST_RUN call can run a
 * whole paced or counted run (each call costs ~25 ms of set-up here).
 */
struct gen_cpu_state {
	__u64 sent;
	__u64 good_sent;
	__u64 quota;          /* frames this CPU may send */
	__u64 gap_ns;         /* paced: ns between frames (whole part); 0 and */
	__u32 gap_frac;       /*   gap_frac 0: as fast as possible; 2^-32 ns units */
	__u32 next_frac;
	__u64 next_send_ns;   /* paced: when the next frame is due */
	__u64 next_good_ns;   /* mix: when the next well-behaved packet is due */
	__u64 good_gap_ns;    /* mix: period / good_count */
	__u32 src_first;      /* uniform: this CPU's sources */
	__u32 src_count;
	__u32 src_cursor;
	__u32 good_first;     /* mix: this CPU's well-behaved sources */
	__u32 good_count;
	__u32 good_cursor;
	/*
	 * --affinity source: this CPU sends only the drawn sources whose
	 * address hashes to aff_index of aff_count (0: any source), as RSS on
	 * the source address would deliver them; a draw that is not this
	 * CPU's is redrawn, up to GEN_AFFINITY_TRIES times.
	 */
	__u32 aff_index;
	__u32 aff_count;
};

#define GEN_AFFINITY_TRIES 64

#endif
