// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark referee, on tc ingress (after XDP): counts what the limiter
 * under test passed, and checks the pace guarantee exactly for the sources
 * it tracks (a contiguous IPv4 range): two passed packets of one source
 * closer than the interval (less a clock tolerance) are a false pass.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/*
 * Configuration and counters in one global (the object's .bss map), so a
 * script can set and read it with bpftool after `tc filter ... obj` loads it.
 */
struct bench_ref {
	__u32 track_base; /* first tracked source, host byte order */
	__u32 track_n;
	__u64 min_gap_ns; /* the interval less the clock tolerance */
	__u64 passed;
	__u64 tracked_passed;
	__u64 false_passes;
};

struct bench_ref bench_ref;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 21);
	__type(key, __u32);
	__type(value, __u64);
} bench_last SEC(".maps");

SEC("tc")
int bench_count(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data, *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *iph = (void *)(eth + 1);
	__u32 idx;
	__u64 now, *last;

	if ((void *)(iph + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP))
		return TC_ACT_SHOT;
	__sync_fetch_and_add(&bench_ref.passed, 1);
	idx = bpf_ntohl(iph->saddr) - bench_ref.track_base;
	if (idx >= bench_ref.track_n)
		return TC_ACT_SHOT;
	__sync_fetch_and_add(&bench_ref.tracked_passed, 1);
	last = bpf_map_lookup_elem(&bench_last, &idx);
	if (!last)
		return TC_ACT_SHOT;
	now = bpf_ktime_get_coarse_ns();
	if (*last && now - *last < bench_ref.min_gap_ns)
		__sync_fetch_and_add(&bench_ref.false_passes, 1);
	*last = now;
	/* Counted: nothing further needs the frame. */
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
