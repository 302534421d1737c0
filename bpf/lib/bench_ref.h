/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the benchmark's checking programs share: its frames are Ethernet +
 * IPv4 from a contiguous source range, and each source has one 64-bit word
 * of its last pass.
 */
#ifndef PACER_BPF_BENCH_REF_H
#define PACER_BPF_BENCH_REF_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* An array of one last-pass word per source index. */
#define BENCH_LAST_MAP(name, n)                       \
	struct {                                      \
		__uint(type, BPF_MAP_TYPE_ARRAY);     \
		__uint(max_entries, n);               \
		__type(key, __u32);                   \
		__type(value, __u64);                 \
	} name SEC(".maps")

/* The frame's IPv4 source in host order: 0, or -1 for anything else. */
static __always_inline int bench_ipv4_source(void *data, void *data_end, __u32 *saddr)
{
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return -1;
	*saddr = bpf_ntohl(iph->saddr);
	return 0;
}

#endif
