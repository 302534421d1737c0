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
#include <bpf/bpf_helpers.h>
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

static __always_inline int pacer_proto_is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
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
	struct ethhdr *eth = data;
	void *pos = eth + 1;
	__be16 proto;
	int i;

	if (pos > data_end)
		return PACER_PKT_MALFORMED;
	proto = eth->h_proto;

PACER_UNROLL
	for (i = 0; i < PACER_VLAN_MAX_DEPTH; i++) {
		struct pacer_vlan_hdr *vlh = pos;

		if (!pacer_proto_is_vlan(proto))
			break;
		if ((void *)(vlh + 1) > data_end)
			return PACER_PKT_MALFORMED;
		proto = vlh->encap_proto;
		pos = vlh + 1;
	}
	if (pacer_proto_is_vlan(proto))
		return PACER_PKT_MALFORMED;

	if (proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = pos;
		__u32 hdr_len;

		if ((void *)(iph + 1) > data_end)
			return PACER_PKT_MALFORMED;
		if (iph->version != 4 || iph->ihl < 5)
			return PACER_PKT_MALFORMED;
		hdr_len = iph->ihl * 4;
		if (pos + hdr_len > data_end)
			return PACER_PKT_MALFORMED;
		if (bpf_ntohs(iph->tot_len) < hdr_len)
			return PACER_PKT_MALFORMED;
		src->lo = iph->saddr;
		src->hi = 0;
		return PACER_PKT_V4;
	}
	if (proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = pos;

		if ((void *)(ip6 + 1) > data_end)
			return PACER_PKT_MALFORMED;
		if (ip6->version != 6)
			return PACER_PKT_MALFORMED;
		__builtin_memcpy(&src->lo, &ip6->saddr.in6_u.u6_addr8[0], 8);
		__builtin_memcpy(&src->hi, &ip6->saddr.in6_u.u6_addr8[8], 8);
		return PACER_PKT_V6;
	}
	return PACER_PKT_NONIP;
}

#endif /* PACER_PKT_PARSE_H */
