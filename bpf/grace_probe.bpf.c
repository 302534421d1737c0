// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A packet that stays in flight for a known time: run once by
 * BPF_PROG_TEST_RUN (which holds rcu_read_lock across the run, as NAPI's
 * softirq does for a real packet), it notes when it began, spins for
 * spin_ns and notes when it ended, both on bpf_ktime_get_ns()'s clock
 * (CLOCK_MONOTONIC).  tests/grace_check.h starts an update while it spins
 * and compares the update's return with ended_ns: an update that waits for
 * the programs in flight returns after it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* How long a run spins, set by userspace before the run. */
__u64 spin_ns;
/* Written by the run, read by userspace through the mmapped .bss. */
volatile __u64 began_ns, ended_ns;

/* bpf_loop's callback: 1 (stop) once the deadline in ctx has passed. */
static long spin_until(__u32 i, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

SEC("xdp")
int grace_probe(struct xdp_md *ctx)
{
	__u64 deadline;

	began_ns = bpf_ktime_get_ns();
	deadline = began_ns + spin_ns;
	/*
	 * At most BPF_MAX_LOOPS (1 << 23) steps of a clock read each: over
	 * 80 ms where a read takes 10 ns; ended_ns says how long it ran.
	 */
	bpf_loop(1 << 23, spin_until, &deadline, 0);
	ended_ns = bpf_ktime_get_ns();
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
