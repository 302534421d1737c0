/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Header parsing for the datapath, also compiled into userspace (analyze
 * --pcap) so a capture is classified as the datapath classifies it: a
 * cursor that only moves forward after the bytes it moves over were checked
 * against data_end.
 */
#ifndef PACER_PKT_PARSE_H
#define PACER_PKT_PARSE_H

#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
/*
 * Userspace takes only __always_inline from bpf_helpers.h, whose helper
 * declarations would clash with libbpf's bpf.h in a file that uses both.
 */
#ifdef __bpf__
#include <bpf/bpf_helpers.h>
#elif !defined(__always_inline)
#define __always_inline inline __attribute__((always_inline))
#endif
#include <bpf/bpf_endian.h>
#include "pacer_compiler.h"

#define PACER_VLAN_MAX_DEPTH 2

enum pacer_pkt_kind {
	PACER_PKT_NONIP,
	PACER_PKT_MALFORMED,
	PACER_PKT_V4,
	PACER_PKT_V6,
};

struct pacer_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

struct pacer_src {
	__u64 lo; /* IPv4 address, or first 8 bytes of the IPv6 one */
	__u64 hi; /* last 8 bytes of the IPv6 address */
};

/*
 * Copy a header field into dst.  A frame's headers sit at any address (a
 * capture's buffer, a VLAN tag's 4 bytes), and C has no misaligned typed
 * load, so userspace copies the field's bytes from an untyped address
 * (one unaligned load where the CPU has them).  The BPF target copies
 * through the typed member instead: its alignment lets clang emit one load
 * of the field's width where a copy from an untyped address becomes one
 * load per byte, and the verifier, not C, rules packet loads there
 * (unaligned ones are allowed where the CPU handles them, checked where
 * not).
 */
#ifdef __bpf__
#define PACER_HDR_FIELD(dst, type, hdr, member) \
	__builtin_memcpy(&(dst), &((const type *)(hdr))->member, sizeof(dst))
#else
#define PACER_HDR_FIELD(dst, type, hdr, member) \
	__builtin_memcpy(&(dst), (const __u8 *)(hdr) + __builtin_offsetof(type, member), sizeof(dst))
#endif

static __always_inline int pacer_proto_is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/*
 * The IPv4 header at pos: its length in bytes, or 0 if it is malformed (it
 * does not fit before data_end, its version or IHL is wrong, or its total
 * length is shorter than the header).  Both parsers (this one and
 * pacer_pkt.h's) take it from here, so they call the same frames malformed.
 */
static __always_inline __u32 pacer_ipv4_hdr_len(void *pos, void *data_end)
{
	__u32 hdr_len;
	__be16 tot_len;
	__u8 ver_ihl;

	if (pos + sizeof(struct iphdr) > data_end)
		return 0;
	ver_ihl = *(__u8 *)pos;
	if (ver_ihl >> 4 != 4 || (ver_ihl & 0xf) < 5)
		return 0;
	hdr_len = (ver_ihl & 0xf) * 4;
	if (pos + hdr_len > data_end)
		return 0;
	PACER_HDR_FIELD(tot_len, struct iphdr, pos, tot_len);
	if (bpf_ntohs(tot_len) < hdr_len)
		return 0;
	return hdr_len;
}

/*
 * Classify a frame and extract its source address.  A frame that claims to
 * be IP but whose header does not fit, whose version or IHL is wrong, or
 * whose total length is shorter than its header, is malformed; so is a
 * frame shorter than an Ethernet header, a truncated VLAN tag, or a third
 * VLAN tag (deeper stacks are not parsed, and guessing would let them
 * bypass the limiter).
 */
static __always_inline int pacer_parse(void *data, void *data_end, struct pacer_src *src)
{
	struct ethhdr *eth = data; /* packed: any address will do */
	void *pos = eth + 1;
	__be16 proto;
	__u8 ver_ihl; /* IPv6: version and traffic class */
	int i;

	if (pos > data_end)
		return PACER_PKT_MALFORMED;
	proto = eth->h_proto;

PACER_UNROLL
	for (i = 0; i < PACER_VLAN_MAX_DEPTH; i++) {
		if (!pacer_proto_is_vlan(proto))
			break;
		if (pos + sizeof(struct pacer_vlan_hdr) > data_end)
			return PACER_PKT_MALFORMED;
		PACER_HDR_FIELD(proto, struct pacer_vlan_hdr, pos, encap_proto);
		pos += sizeof(struct pacer_vlan_hdr);
	}
	if (pacer_proto_is_vlan(proto))
		return PACER_PKT_MALFORMED;

	if (proto == bpf_htons(ETH_P_IP)) {
		__u32 saddr;

		if (!pacer_ipv4_hdr_len(pos, data_end))
			return PACER_PKT_MALFORMED;
		PACER_HDR_FIELD(saddr, struct iphdr, pos, saddr);
		src->lo = saddr;
		src->hi = 0;
		return PACER_PKT_V4;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		if (pos + sizeof(struct ipv6hdr) > data_end)
			return PACER_PKT_MALFORMED;
		ver_ihl = *(__u8 *)pos;
		if (ver_ihl >> 4 != 6)
			return PACER_PKT_MALFORMED;
		PACER_HDR_FIELD(src->lo, struct ipv6hdr, pos, saddr.s6_addr[0]);
		PACER_HDR_FIELD(src->hi, struct ipv6hdr, pos, saddr.s6_addr[8]);
		return PACER_PKT_V6;
	}
	return PACER_PKT_NONIP;
}

#endif /* PACER_PKT_PARSE_H */
