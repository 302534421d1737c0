// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer gen: one sending thread per CPU, stopped at the count, the deadline or Ctrl-C. */
#define _GNU_SOURCE /* CPU affinity */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "gen.h"
#include "gen.skel.h"
#include "time_now.h"

#define GEN_REPEAT_MAX 0x7fffffffULL /* runs per BPF_PROG_TEST_RUN call, at most */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct gen_thread {
	pthread_t tid;
	int cpu, prog_fd, ifindex, err;
	bool counted;              /* unpaced --count: exactly repeat_total runs */
	uint64_t repeat_total;
	const uint8_t *frame;
	size_t len;
	volatile int stop;         /* set by the main thread, then SIGUSR1 */
	volatile int finished;
};

static void on_wakeup(int sig)
{
	(void)sig; /* only there to interrupt BPF_PROG_TEST_RUN with -EINTR */
}

/*
 * One long BPF_PROG_TEST_RUN per thread: each call pays tens of milliseconds of
 * set-up and tear-down (page pool, RCU grace period), so short calls would
 * halve the rate.  The program itself enforces quota and pace; the
 * main thread ends a call early with SIGUSR1 (-EINTR).
 */
static void *gen_thread_main(void *arg)
{
	struct gen_thread *t = arg;
	uint64_t left = t->repeat_total;
	sigset_t block;
	cpu_set_t set;

	/* Ctrl-C goes to the main thread, which stops the workers. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	t->err = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!t->err && !t->stop && (!t->counted || left)) {
		struct xdp_md ctx_in = { .data_end = (uint32_t)t->len,
					 .ingress_ifindex = (uint32_t)t->ifindex };
		uint64_t n = t->counted && left < GEN_REPEAT_MAX ? left : GEN_REPEAT_MAX;
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = t->frame,
			    .data_size_in = (uint32_t)t->len, .ctx_in = &ctx_in,
			    .ctx_size_in = sizeof(ctx_in), .repeat = (int)n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		int err = bpf_prog_test_run_opts(t->prog_fd, &r);

		if (err == -EINTR)
			continue; /* t->stop says whether that was the end */
		if (err)
			t->err = err;
		left -= t->counted ? n : 0;
	}
	t->finished = 1;
	return NULL;
}

static void handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_wakeup; /* no SA_RESTART: the syscall must return */
	sigaction(SIGUSR1, &sa, NULL);
}

/* Start the threads; on failure, how many did start is in *started. */
static int start_threads(struct gen_ctx *g, struct gen_thread *threads, uint32_t *started)
{
	uint32_t i;
	int err;

	for (i = 0; i < g->o.threads; i++) {
		struct gen_thread *t = &threads[i];

		t->cpu = g->cpus[i];
		t->prog_fd = bpf_program__fd(g->skel->progs.xdp_gen);
		t->frame = g->frame;
		t->len = g->len;
		t->ifindex = g->ifindex;
		/* Unpaced with a count: the runs are the frames; otherwise run until told. */
		t->counted = !g->o.duration_ns && !g->o.rate;
		t->repeat_total = t->counted ? g->states[g->cpus[i]].quota : 0;
		err = pthread_create(&t->tid, NULL, gen_thread_main, t);
		if (err) {
			pr_err("cannot start generator thread %u: %s", i, strerror(err));
			*started = i;
			return err;
		}
	}
	*started = i;
	return 0;
}

/* Paced with a count: whether every CPU has sent its quota (the program counts). */
static bool quota_met(struct gen_ctx *g)
{
	uint32_t i, zero = 0;
	bool met = true;

	if (g->o.duration_ns || !g->o.rate ||
	    bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gen_state), &zero, g->states))
		return false;
	for (i = 0; i < g->o.threads; i++)
		met &= g->states[g->cpus[i]].sent >= g->states[g->cpus[i]].quota;
	return met;
}

/* Stop the workers at the deadline, at their quota, or on Ctrl-C; then join them. */
static void supervise(struct gen_ctx *g, struct gen_thread *threads, uint32_t n, bool failed,
		      uint64_t t0)
{
	struct timespec tick = { .tv_nsec = 2000000 };
	uint32_t i, running;

	for (;;) {
		for (i = 0, running = 0; i < n; i++)
			running += !threads[i].finished;
		if (!running)
			break;
		if (stop || failed || quota_met(g) ||
		    (g->o.duration_ns && mono_ns() - t0 >= g->o.duration_ns)) {
			for (i = 0; i < n; i++) {
				threads[i].stop = 1;
				if (!threads[i].finished)
					pthread_kill(threads[i].tid, SIGUSR1);
			}
		}
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < n; i++)
		pthread_join(threads[i].tid, NULL);
}

/* A thread's error, or the counters could not be read: 1 after saying so. */
static int collect_heavy(struct gen_ctx *g);

static int collect(struct gen_ctx *g, const struct gen_thread *threads)
{
	uint32_t i, zero = 0;
	char eb[128];

	for (i = 0; i < g->o.threads; i++) {
		if (threads[i].err) {
			pr_err("BPF_PROG_TEST_RUN (live frames) into %s on CPU %d failed: %s", g->o.ifname,
			       threads[i].cpu, err_str(threads[i].err, eb, sizeof(eb)));
			return 1;
		}
	}
	if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gen_state), &zero, g->states)) {
		pr_err("cannot read the generator's counters: %s", err_str(-errno, eb, sizeof(eb)));
		return 1;
	}
	return g->o.dist == GEN_DIST_HEAVY ? collect_heavy(g) : 0;
}

/* heavy: each heavy source's frames, summed over the CPUs. */
static int collect_heavy(struct gen_ctx *g)
{
	uint64_t *v = calloc(g->ncpus_possible, sizeof(*v));
	char eb[128];
	uint32_t k, c;

	if (!v) {
		pr_err("out of memory");
		return 1;
	}
	for (k = 0; k < g->o.heavy; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(g->skel->maps.gen_heavy_sent), &k, v)) {
			pr_err("cannot read the heavy sources' counters: %s", err_str(-errno, eb, sizeof(eb)));
			free(v);
			return 1;
		}
		g->heavy_sent[k] = 0;
		for (c = 0; c < g->ncpus_possible; c++)
			g->heavy_sent[k] += v[c];
	}
	free(v);
	return 0;
}

int gen_run(struct gen_ctx *g)
{
	struct gen_thread *threads = calloc(g->o.threads, sizeof(*threads));
	uint32_t started = 0;
	uint64_t t0;
	int err;

	if (!threads) {
		pr_err("out of memory");
		return 1;
	}
	handle_signals();
	t0 = mono_ns();
	err = start_threads(g, threads, &started);
	supervise(g, threads, started, err != 0, t0);
	g->elapsed_ns = mono_ns() - t0;
	if (!err)
		err = collect(g, threads);
	free(threads);
	return err ? 1 : 0;
}
