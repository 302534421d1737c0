/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ethernet (+ VLAN tags) + IPv4/IPv6 + UDP frames: the generator's template
 * and the tests' frames, built one way.
 */
#ifndef PACER_FRAME_H
#define PACER_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cli_values.h"

#define FRAME_ETH_P_8021Q 0x8100
#define FRAME_ETH_P_8021AD 0x88a8

struct frame_spec {
	uint8_t dmac[6], smac[6];
	struct pacer_addr src, dst; /* the same family */
	uint16_t vlan_tci[2];       /* outer first */
	unsigned n_vlans;           /* 0, 1 or 2 */
	uint16_t outer_tpid;        /* with two tags (0: 802.1ad); inner tags are 802.1Q */
	uint16_t sport, dport;
	size_t payload;             /* UDP payload bytes */
	uint8_t fill;               /* payload byte */
	uint8_t ihl;                /* IPv4 header length in words, 5..15 (0: 5) */
	uint8_t ttl;                /* IPv4 TTL, IPv6 hop limit (0: 64) */
	bool df;                    /* IPv4 don't-fragment */
	bool csum;                  /* IPv4 header checksum, IPv6 UDP checksum */
};

/*
 * Write the frame into b: its length, or 0 if cap is too small.  *l3 (if
 * not NULL) gets the offset of the IP header.
 */
size_t frame_build(uint8_t *b, size_t cap, const struct frame_spec *s, size_t *l3);

/* One's-complement sum of 16-bit words loaded little-endian, as the XDP programs load them. */
uint32_t frame_sum_le16(const uint8_t *b, size_t len);

/* The sum folded to 16 bits. */
uint16_t frame_fold(uint64_t sum);

/*
 * For a frame built with a zero source address, zero UDP source port and no
 * checksums: the sum of what the checksum covers besides those (IPv4: the
 * header; IPv6: pseudo-header and UDP), which the generator completes per
 * frame with the source it writes.
 */
uint32_t frame_csum_base(const uint8_t *b, size_t len, size_t l3, int family);

#endif
