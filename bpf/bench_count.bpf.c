// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark referee, on tc ingress (after XDP): counts what the limiter
 * under test passed, and checks the pace guarantee exactly for the sources
 * it tracks (a contiguous IPv4 range): two passed packets of one source
 * closer than min_gap_ns (the interval less a clock tolerance) are a false
 * pass.  The last-pass time is swapped atomically, so two CPUs passing the
 * same source at once are both seen.  It also counts passes received on
 * another CPU than the source's previous pass: 0 means every tracked source
 * reached one CPU (what source-affine RSS promises).  Every frame is dropped here: counted,
 * nothing further needs it.
 */
#include <linux/pkt_cls.h>
#include "lib/bench_ref.h"

/*
 * Set by the benchmark after `tc filter ... obj` loaded the object, before
 * traffic (the object's .bss map, written with bpftool).
 */
struct bench_ref_cfg {
	__u32 track_base; /* first tracked source, host byte order */
	__u32 track_n;
	__u64 min_gap_ns;
};

struct bench_ref_cfg bench_ref_cfg;

struct bench_ref_counts {
	__u64 passed;         /* IPv4 frames the limiter passed */
	__u64 tracked_passed; /* ... from tracked sources */
	__u64 tracked_first;  /* tracked sources passed for the first time */
	__u64 false_passes;   /* tracked passes closer than min_gap_ns to the previous */
	__u64 worst_gap_ns;   /* the closest such pair (0: none): a race or a clock lag? */
	__u64 cpu_moves;      /* tracked passes on another CPU than the source's previous one */
};

/* The last-pass word: time in the high bits, the CPU in the low byte. */
#define REF_CPU_BITS 8

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bench_ref_counts);
} bench_counts SEC(".maps");

/* Last pass of each tracked source (bpf_ktime_get_ns, CPU in the low byte); 0: never. */
BENCH_LAST_MAP(bench_last, 1 << 21);

SEC("tc")
int bench_count(struct __sk_buff *skb)
{
	struct bench_ref_counts *c;
	__u32 zero = 0, idx, src;
	__u64 now, old, *last;

	if (bench_ipv4_source((void *)(long)skb->data, (void *)(long)skb->data_end, &src))
		return TC_ACT_SHOT;
	c = bpf_map_lookup_elem(&bench_counts, &zero);
	if (!c)
		return TC_ACT_SHOT;
	c->passed++;
	idx = src - bench_ref_cfg.track_base;
	if (idx >= bench_ref_cfg.track_n)
		return TC_ACT_SHOT;
	c->tracked_passed++;
	last = bpf_map_lookup_elem(&bench_last, &idx);
	if (!last)
		return TC_ACT_SHOT;
	/* precise: a race shows as microseconds, not a jiffy (less 256 ns for the CPU byte) */
	now = bpf_ktime_get_ns() >> REF_CPU_BITS << REF_CPU_BITS;
	old = __sync_lock_test_and_set(last, now | (bpf_get_smp_processor_id() & 0xff));
	if (old && (old & 0xff) != (bpf_get_smp_processor_id() & 0xff))
		c->cpu_moves++;
	old = old >> REF_CPU_BITS << REF_CPU_BITS;
	if (!old)
		c->tracked_first++;
	else if ((__s64)(now - old) < (__s64)bench_ref_cfg.min_gap_ns) {
		__u64 gap = (__s64)(now - old) > 0 ? now - old : 1;

		c->false_passes++;
		if (!c->worst_gap_ns || gap < c->worst_gap_ns)
			c->worst_gap_ns = gap;
	}
	return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
