/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whether an update returns only after every XDP program that was running
 * when it began has returned: the property pacer_classes_install's bank
 * flip relies on (pacer_wait_packets_in_flight; docs/design.md, Live
 * changes).  Checked as such, not by timing the wait, whose length is the
 * kernel's to choose: an RCU grace period takes milliseconds, an expedited
 * one (/sys/kernel/rcu_expedited) tens of microseconds.
 *
 * A round: a runner thread, on one CPU, runs bpf/grace_probe.bpf.c once by
 * BPF_PROG_TEST_RUN; the program notes began_ns, spins GRACE_SPIN_NS and
 * notes ended_ns.  The calling thread, on another CPU, sees began_ns, takes
 * the clock (the update begins: the program is in flight), runs the update
 * and takes the clock again.  An update that returned before ended_ns ran
 * wholly while the program was in flight: it did not wait, however slow
 * this thread was.  One that returned after it waited, or stalled until
 * the program's end; a round counts only when the update began at least
 * GRACE_LEAD_MIN_NS before that end, so an update that does not wait
 * would have to stall that long, in every round, to pass.  A round that
 * began later (this thread preempted on a loaded machine) is run again.
 * No threshold depends on how long the wait takes.
 *
 * The program and the update must run at once, on two CPUs: the runner's
 * and this thread's affinity are set to two of the CPUs this thread may
 * use (grace_cpu_pair), and this thread's is restored afterwards.  The
 * includer defines _GNU_SOURCE (the affinity calls) and links libbpf and
 * pthread.
 */
#ifndef PACER_GRACE_CHECK_H
#define PACER_GRACE_CHECK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "grace_probe.skel.h"
#include "classes_map.h"

/* How long the program stays in flight; the clock reads of bpf_loop's cap fill 80 ms at 10 ns a read. */
#define GRACE_SPIN_NS 30000000ULL
/* How long before the program's end an update must begin for its round to count. */
#define GRACE_LEAD_MIN_NS 10000000ULL
/* How long to wait for the runner's program to begin (a loaded machine schedules it late). */
#define GRACE_BEGIN_TIMEOUT_NS 5000000000ULL

/* The update under test: 0 or a negative errno. */
typedef int (*grace_update_fn)(void *arg);

struct grace_result {
	int after;  /* updates that returned after the program's end (begun GRACE_LEAD_MIN_NS before it) */
	int before; /* updates that returned before the program's end: they did not wait */
	int missed; /* rounds whose update began too close to the program's end to count */
	/* Over the rounds that count: how long before the program's end the update began, */
	uint64_t lead_min_ns, lead_max_ns;
	/* its return's time less the program's end (negative: it returned before), */
	int64_t ret_min_ns, ret_max_ns;
	/* and how long the update took. */
	uint64_t took_min_ns, took_max_ns;
};

static inline uint64_t grace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Two CPUs this thread may run on into cpu[]: how many it has, at most 2. */
static inline int grace_cpu_pair(int cpu[2])
{
	cpu_set_t set;
	int c, n = 0;

	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set))
		return 0;
	for (c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	return n;
}

struct grace_runner {
	int prog_fd;
	int err;  /* 0, or BPF_PROG_TEST_RUN's negative errno */
	int done; /* set when the run has returned */
};

static inline void *grace_run_once(void *arg)
{
	struct grace_runner *r = arg;
	unsigned char frame[64] = { 0 }; /* XDP's test run wants an Ethernet header's worth */
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame), .repeat = 1);

	r->err = bpf_prog_test_run_opts(r->prog_fd, &o) ? -errno : 0;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * One round on cpu[0] (the program) and cpu[1] (the update, this thread,
 * already there): 0 with *lead (the program's end less the update's
 * start), *ret (the update's return less the program's end) and *took, or
 * a negative errno with why in err.
 */
static inline int grace_round(struct grace_probe_bpf *skel, const int cpu[2], grace_update_fn update,
			      void *arg, int64_t *lead, int64_t *ret, uint64_t *took, char *err, size_t len)
{
	struct grace_runner r = { .prog_fd = bpf_program__fd(skel->progs.grace_probe) };
	uint64_t t0, t1, began, ended, deadline;
	pthread_attr_t attr;
	pthread_t runner;
	cpu_set_t set;
	int e;

	skel->bss->spin_ns = GRACE_SPIN_NS;
	__atomic_store_n(&skel->bss->began_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&skel->bss->ended_ns, 0, __ATOMIC_RELAXED);
	CPU_ZERO(&set);
	CPU_SET(cpu[0], &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	e = pthread_create(&runner, &attr, grace_run_once, &r);
	pthread_attr_destroy(&attr);
	if (e) {
		snprintf(err, len, "cannot start the runner thread: %s", strerror(e));
		return -e;
	}
	deadline = grace_now_ns() + GRACE_BEGIN_TIMEOUT_NS;
	while (!__atomic_load_n(&skel->bss->began_ns, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE) && grace_now_ns() < deadline)
		;
	/* Read again: this thread may have been preempted past the whole run (a round that does not count). */
	began = __atomic_load_n(&skel->bss->began_ns, __ATOMIC_ACQUIRE);
	e = 0;
	t0 = t1 = 0;
	if (began) {
		t0 = grace_now_ns();
		e = update(arg);
		t1 = grace_now_ns();
	}
	pthread_join(runner, NULL);
	ended = __atomic_load_n(&skel->bss->ended_ns, __ATOMIC_ACQUIRE);
	if (r.err) {
		snprintf(err, len, "BPF_PROG_TEST_RUN: %s", strerror(-r.err));
		return r.err;
	}
	if (!began) {
		snprintf(err, len, "the program did not begin within %.0f s", GRACE_BEGIN_TIMEOUT_NS / 1e9);
		return -ETIMEDOUT;
	}
	if (e) {
		snprintf(err, len, "the update: %s", strerror(-e));
		return e;
	}
	if (!ended) {
		snprintf(err, len, "the program returned without noting its end");
		return -EIO;
	}
	*lead = (int64_t)(ended - t0);
	*ret = (int64_t)(t1 - ended);
	*took = t1 - t0;
	return 0;
}

/*
 * rounds rounds that count (at most tries in all) of update against the
 * program in flight, into *res.  0, or a negative errno with why in err
 * (where this thread has fewer than two CPUs, -EXDEV).
 */
static inline int grace_check(struct grace_probe_bpf *skel, grace_update_fn update, void *arg, int rounds,
			      int tries, struct grace_result *res, char *err, size_t len)
{
	cpu_set_t saved, set;
	int cpu[2], e = 0, i;
	int64_t lead = 0, ret = 0;
	uint64_t took = 0;

	memset(res, 0, sizeof(*res));
	if (grace_cpu_pair(cpu) < 2) {
		snprintf(err, len, "one CPU: the program in flight and the update cannot run at once");
		return -EXDEV;
	}
	pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
	CPU_ZERO(&set);
	CPU_SET(cpu[1], &set);
	if ((e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set))) {
		snprintf(err, len, "cannot move to CPU %d: %s", cpu[1], strerror(e));
		return -e;
	}
	/* Untimed: the first call may make what the update needs (maps). */
	e = update(arg);
	if (e)
		snprintf(err, len, "the update: %s", strerror(-e));
	for (i = 0; !e && i < tries && res->after + res->before < rounds; i++) {
		e = grace_round(skel, cpu, update, arg, &lead, &ret, &took, err, len);
		if (e)
			break;
		if (ret < 0)
			res->before++;
		else if (lead >= (int64_t)GRACE_LEAD_MIN_NS)
			res->after++;
		else {
			res->missed++;
			continue;
		}
		if (res->after + res->before == 1) {
			res->lead_min_ns = res->lead_max_ns = (uint64_t)lead;
			res->ret_min_ns = res->ret_max_ns = ret;
			res->took_min_ns = res->took_max_ns = took;
			continue;
		}
		res->lead_min_ns = (uint64_t)lead < res->lead_min_ns ? (uint64_t)lead : res->lead_min_ns;
		res->lead_max_ns = (uint64_t)lead > res->lead_max_ns ? (uint64_t)lead : res->lead_max_ns;
		res->ret_min_ns = ret < res->ret_min_ns ? ret : res->ret_min_ns;
		res->ret_max_ns = ret > res->ret_max_ns ? ret : res->ret_max_ns;
		res->took_min_ns = took < res->took_min_ns ? took : res->took_min_ns;
		res->took_max_ns = took > res->took_max_ns ? took : res->took_max_ns;
	}
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	return e;
}

/*
 * One line of res for the logs: "5 of 5 returned after the program's end
 * (begun 29.9-30.0 ms before it, returned +0.031..+0.207 ms after it,
 * took 29.9-30.1 ms)".
 */
/*
 * The two updates the checks time against a program in flight: the class
 * install's wait (a map-in-map update), and a plain array update (arg: its
 * map's fd), which does not wait: the control that the check can fail.
 */
static inline int grace_map_in_map_update(void *arg)
{
	(void)arg;
	return pacer_wait_packets_in_flight();
}

static inline int grace_plain_update(void *arg)
{
	__u32 zero = 0, v = 1;

	return bpf_map_update_elem(*(int *)arg, &zero, &v, BPF_ANY) ? -errno : 0;
}

static inline void grace_format(const struct grace_result *res, char *buf, size_t len)
{
	int n = snprintf(buf, len,
			 "%d of %d returned after the program's end (begun %.1f-%.1f ms before it, "
			 "returned %+.3f..%+.3f ms after it, took %.3f-%.3f ms)",
			 res->after, res->after + res->before, res->lead_min_ns / 1e6, res->lead_max_ns / 1e6,
			 res->ret_min_ns / 1e6, res->ret_max_ns / 1e6, res->took_min_ns / 1e6,
			 res->took_max_ns / 1e6);

	if (res->missed && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %d begun too late to count", res->missed);
}

#endif
