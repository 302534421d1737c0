/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Shared between the traffic generator's XDP program and `xdp-pacer gen`. */
#ifndef PACER_GEN_ABI_H
#define PACER_GEN_ABI_H

#include <linux/types.h>

enum gen_dist {
	GEN_DIST_UNIFORM = 0, /* uniform over N sources */
	GEN_DIST_ZIPF = 1,    /* Zipf(s) over N sources, from a table of samples */
	GEN_DIST_SPOOFED = 2, /* a random source for every packet */
	GEN_DIST_MIX = 3,     /* paced well-behaved sources inside a spoofed flood */
};

#define GEN_ZIPF_TABLE_LOG2 20

/* Fixed for one run (.rodata). */
struct gen_params {
	__u32 dist;
	__u32 family;         /* 4 or 6 */
	__u32 nsources;       /* uniform/zipf: sources; mix: well-behaved sources */
	__u32 ifindex;        /* where frames are redirected */
	__u32 src_base4;      /* first source (network byte order) */
	__u32 spoof_mask4;    /* spoofed IPv4: random & mask | bits */
	__u32 spoof_bits4;
	__u32 l3_off;         /* offset of the IP header in the frame */
	__u64 src_base6[2];   /* first source, as loaded little-endian */
	__u64 good_gap_ns;    /* mix: time between two well-behaved packets */
};

/* Counters the generator keeps (.bss); one CPU runs it. */
struct gen_counters {
	__u64 sent;
	__u64 good_sent;
	__u64 next_good_ns;
	__u64 good_cursor;
};

#endif
