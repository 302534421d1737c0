// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark probes for the exempt/deny lists' lookup (scripts/bench.py):
 * the pacer's parse, then one way of asking whether the source is on a
 * list of prefixes, then drop.  bench_lpm: the LPM trie the datapath uses
 * (bpf/lib/lists.h); bench_hash2: a hash of (address, length) keys asked
 * for the /32 and then the /24, the alternative for IPv4 lists of only
 * those lengths; bench_filter: the datapath's bitmap in front of the trie
 * (pacer_list_filter), the trie asked only when the source's bit is set.
 * tests/tools/classes_fill fills the maps.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_abi.h"
#include "pacer_parse.h"
#include "pacer_classify.h"

struct probe_hash_key {
	__u32 addr; /* network byte order, masked to len */
	__u32 len;
};

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PACER_LIST_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pacer_list4_key);
	__type(value, __u32);
} probe_lpm4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PACER_LIST_MAX_ENTRIES);
	__type(key, struct probe_hash_key);
	__type(value, __u32);
} probe_hash4 SEC(".maps");

/* As the datapath's pacer_list_filter: both families' bitmaps, IPv4's first. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * PACER_LIST_FILTER_WORDS);
	__type(key, __u32);
	__type(value, __u64);
} probe_filter4 SEC(".maps");

__u64 bench_listed;

/* Ask the probe's trie for an IPv4 source's /32 (its longest match), counting a hit. */
static __always_inline void probe_trie_ask(const struct pacer_src *src)
{
	struct pacer_list4_key k;

	k.prefixlen = 32;
	__builtin_memcpy(k.addr, &src->lo, 4);
	if (bpf_map_lookup_elem(&probe_lpm4, &k))
		bench_listed++;
}

SEC("xdp")
int bench_lpm(struct xdp_md *ctx)
{
	struct pacer_src src;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	if (kind == PACER_PKT_V4)
		probe_trie_ask(&src);
	return XDP_DROP;
}

SEC("xdp")
int bench_hash2(struct xdp_md *ctx)
{
	struct probe_hash_key k;
	struct pacer_src src;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	if (kind != PACER_PKT_V4)
		return XDP_DROP;
	k.addr = (__u32)src.lo;
	k.len = 32;
	if (bpf_map_lookup_elem(&probe_hash4, &k)) {
		bench_listed++;
		return XDP_DROP;
	}
	k.addr &= bpf_htonl(0xffffff00);
	k.len = 24;
	if (bpf_map_lookup_elem(&probe_hash4, &k))
		bench_listed++;
	return XDP_DROP;
}

SEC("xdp")
int bench_filter(struct xdp_md *ctx)
{
	struct pacer_src src;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);
	__u32 bit, w;
	__u64 *word;

	if (kind != PACER_PKT_V4)
		return XDP_DROP;
	bit = pacer_list_filter_bit(kind, &src);
	w = bit >> 6;
	word = bpf_map_lookup_elem(&probe_filter4, &w);
	if (word && ((*word >> (bit & 63)) & 1))
		probe_trie_ask(&src);
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
