/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The full parse a class's match needs (pacer_classify.h): addresses,
 * protocol, ports, TCP flags and the outermost VLAN id.  The datapath runs
 * it only while classes are configured (pacer_parse() alone, the source
 * and nothing more, when none are); userspace runs the same code on
 * captured frames (analyze --pcap).
 *
 * A frame pacer_parse() calls IP is malformed here too if its first
 * fragment (or unfragmented datagram) cuts the TCP or UDP header short, or
 * if an IPv6 header chain has more than PACER_IPV6_EXT_MAX extension
 * headers: either would otherwise hide its ports from every class (the
 * tiny-fragment trick of RFC 1858) and pass unclassified.  A non-first
 * fragment carries no L4 header at all: it has a protocol but no ports or
 * flags (l4 = 0), so it matches no port or flags term; a class without
 * such terms (e.g. `udp`) still catches it.
 */
#ifndef PACER_PKT_H
#define PACER_PKT_H

#include <linux/types.h>
#include <linux/udp.h>
#include "pacer_parse.h"

#define PACER_VLAN_NONE 0xffffu  /* no VLAN tag (ids are 0..4095) */
#define PACER_IPV6_EXT_MAX 4     /* extension headers walked before L4 */
#define PACER_TCP_FLAGS_OFF 13   /* the TCP header's byte of flags */
#define PACER_TCP_FIN 0x01
#define PACER_TCP_SYN 0x02
#define PACER_TCP_RST 0x04
#define PACER_TCP_ACK 0x10
#define PACER_TCP_HDR_MIN 20

/*
 * IP protocol numbers (IANA), spelled here: linux/in.h and the C library's
 * netinet/in.h clash in a userspace file that includes both.
 */
#define PACER_IPPROTO_HOPOPTS 0
#define PACER_IPPROTO_ICMP 1
#define PACER_IPPROTO_TCP 6
#define PACER_IPPROTO_UDP 17
#define PACER_IPPROTO_ROUTING 43
#define PACER_IPPROTO_FRAGMENT 44
#define PACER_IPPROTO_ESP 50
#define PACER_IPPROTO_AH 51
#define PACER_IPPROTO_ICMPV6 58
#define PACER_IPPROTO_DSTOPTS 60
#define PACER_UDP_HDR_LEN 8

/* What a class can match on; addresses as struct pacer_src holds a source. */
struct pacer_pkt {
	struct pacer_src src, dst;
	__u16 sport, dport; /* host byte order; 0 unless l4 */
	__u16 vlan;         /* outermost VLAN id, or PACER_VLAN_NONE */
	__u8 kind;          /* PACER_PKT_V4 or PACER_PKT_V6 */
	__u8 proto;         /* IPPROTO_*: after IPv6 extension headers */
	__u8 tcp_flags;     /* TCP only, else 0 */
	__u8 l4;            /* 1: a TCP or UDP header was read (ports, flags valid) */
	__u16 pad;
};

/* The IPv6 extension headers walked to find L4 (ESP and "no next header" end the chain). */
static __always_inline int pacer_ipv6_is_ext(__u8 nh)
{
	return nh == PACER_IPPROTO_HOPOPTS || nh == PACER_IPPROTO_ROUTING || nh == PACER_IPPROTO_DSTOPTS ||
	       nh == PACER_IPPROTO_FRAGMENT || nh == PACER_IPPROTO_AH;
}

/*
 * Ports and flags of the TCP or UDP header at pos: 0, or -1 when it is cut
 * short (malformed).  Other protocols have none (l4 stays 0).
 */
static __always_inline int pacer_parse_l4(void *pos, void *data_end, struct pacer_pkt *p)
{
	__be16 port;

	if (p->proto == PACER_IPPROTO_TCP) {
		/* Its own bounds check: one of a computed length loses the range in the verifier. */
		if (pos + PACER_TCP_HDR_MIN > data_end)
			return -1;
		p->tcp_flags = *(__u8 *)(pos + PACER_TCP_FLAGS_OFF);
	} else if (p->proto == PACER_IPPROTO_UDP) {
		if (pos + PACER_UDP_HDR_LEN > data_end)
			return -1;
	} else {
		return 0;
	}
	PACER_HDR_FIELD(port, struct udphdr, pos, source);
	p->sport = bpf_ntohs(port);
	PACER_HDR_FIELD(port, struct udphdr, pos, dest);
	p->dport = bpf_ntohs(port);
	p->l4 = 1;
	return 0;
}

/*
 * Walk the IPv6 extension headers from pos (nh: the fixed header's next
 * header) to L4: its offset into *l4_pos and protocol into p->proto.
 * 1: a non-first fragment (no L4 here), 0: found, -1: malformed.
 */
static __always_inline int pacer_parse_ipv6_ext(void *pos, void *data_end, __u8 nh,
						struct pacer_pkt *p, void **l4_pos)
{
	int i;

PACER_UNROLL
	for (i = 0; i < PACER_IPV6_EXT_MAX; i++) {
		__u8 *b = pos;
		__u32 len;

		if (!pacer_ipv6_is_ext(nh))
			break;
		if (pos + 8 > data_end) /* every extension header is at least 8 bytes */
			return -1;
		if (nh == PACER_IPPROTO_FRAGMENT) {
			__be16 off;

			__builtin_memcpy(&off, b + 2, sizeof(off));
			nh = b[0];
			if (bpf_ntohs(off) & 0xfff8) {
				p->proto = nh;
				return 1;
			}
			len = 8;
		} else if (nh == PACER_IPPROTO_AH) {
			len = ((__u32)b[1] + 2) * 4;
			nh = b[0];
		} else {
			len = ((__u32)b[1] + 1) * 8;
			nh = b[0];
		}
		pos += len;
	}
	if (pacer_ipv6_is_ext(nh))
		return -1;
	p->proto = nh;
	*l4_pos = pos;
	return 0;
}

/*
 * pacer_parse() and more: the same frames are IP, non-IP or malformed
 * (besides the L4 cases above), and p->src is what it sets.
 */
static __always_inline int pacer_parse_pkt(void *data, void *data_end, struct pacer_pkt *p)
{
	struct ethhdr *eth = data;
	void *pos = eth + 1, *l4_pos;
	__be16 proto;
	__u8 ver_ihl;
	int i;

	p->sport = 0;
	p->dport = 0;
	p->vlan = PACER_VLAN_NONE;
	p->proto = 0;
	p->tcp_flags = 0;
	p->l4 = 0;
	p->pad = 0;
	if (pos > data_end)
		return PACER_PKT_MALFORMED;
	proto = eth->h_proto;

PACER_UNROLL
	for (i = 0; i < PACER_VLAN_MAX_DEPTH; i++) {
		__be16 tci;

		if (!pacer_proto_is_vlan(proto))
			break;
		if (pos + sizeof(struct pacer_vlan_hdr) > data_end)
			return PACER_PKT_MALFORMED;
		if (i == 0) {
			PACER_HDR_FIELD(tci, struct pacer_vlan_hdr, pos, tci);
			p->vlan = bpf_ntohs(tci) & 0x0fff;
		}
		PACER_HDR_FIELD(proto, struct pacer_vlan_hdr, pos, encap_proto);
		pos += sizeof(struct pacer_vlan_hdr);
	}
	if (pacer_proto_is_vlan(proto))
		return PACER_PKT_MALFORMED;

	if (proto == bpf_htons(ETH_P_IP)) {
		__u32 hdr_len = pacer_ipv4_hdr_len(pos, data_end), addr;
		__be16 frag;

		if (!hdr_len)
			return PACER_PKT_MALFORMED;
		PACER_HDR_FIELD(addr, struct iphdr, pos, saddr);
		p->src.lo = addr;
		p->src.hi = 0;
		PACER_HDR_FIELD(addr, struct iphdr, pos, daddr);
		p->dst.lo = addr;
		p->dst.hi = 0;
		PACER_HDR_FIELD(p->proto, struct iphdr, pos, protocol);
		p->kind = PACER_PKT_V4;
		PACER_HDR_FIELD(frag, struct iphdr, pos, frag_off);
		if (bpf_ntohs(frag) & 0x1fff) /* a non-first fragment: no L4 header */
			return PACER_PKT_V4;
		return pacer_parse_l4(pos + hdr_len, data_end, p) ? PACER_PKT_MALFORMED : PACER_PKT_V4;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		__u8 nh;
		int r;

		if (pos + sizeof(struct ipv6hdr) > data_end)
			return PACER_PKT_MALFORMED;
		ver_ihl = *(__u8 *)pos;
		if (ver_ihl >> 4 != 6)
			return PACER_PKT_MALFORMED;
		PACER_HDR_FIELD(p->src.lo, struct ipv6hdr, pos, saddr.s6_addr[0]);
		PACER_HDR_FIELD(p->src.hi, struct ipv6hdr, pos, saddr.s6_addr[8]);
		PACER_HDR_FIELD(p->dst.lo, struct ipv6hdr, pos, daddr.s6_addr[0]);
		PACER_HDR_FIELD(p->dst.hi, struct ipv6hdr, pos, daddr.s6_addr[8]);
		PACER_HDR_FIELD(nh, struct ipv6hdr, pos, nexthdr);
		p->kind = PACER_PKT_V6;
		r = pacer_parse_ipv6_ext(pos + sizeof(struct ipv6hdr), data_end, nh, p, &l4_pos);
		if (r)
			return r > 0 ? PACER_PKT_V6 : PACER_PKT_MALFORMED;
		return pacer_parse_l4(l4_pos, data_end, p) ? PACER_PKT_MALFORMED : PACER_PKT_V6;
	}
	return PACER_PKT_NONIP;
}

#endif /* PACER_PKT_H */
