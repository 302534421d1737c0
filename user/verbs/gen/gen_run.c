// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen: the choice of engine, and one sending thread per CPU,
 * stopped at the count, the deadline or Ctrl-C.
 */
#define _GNU_SOURCE /* CPU affinity */
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/if_link.h>
#include "common.h"
#include "gen.h"
#include "time_now.h"

const char *const gen_engine_names[] = {
	[GEN_ENGINE_AUTO] = "auto",
	[GEN_ENGINE_LIVE] = "live",
	[GEN_ENGINE_XSK] = "xsk",
	[GEN_ENGINE_PACKET] = "packet",
};

/* In auto's order: the fastest first (docs/benchmark.md, the generator's engines). */
static const struct gen_engine *const engines[GEN_ENGINE_MAX] = {
	[GEN_ENGINE_LIVE] = &gen_engine_live,
	[GEN_ENGINE_XSK] = &gen_engine_xsk,
	[GEN_ENGINE_PACKET] = &gen_engine_packet,
};

int gen_open_engine(struct gen_ctx *g)
{
	char why[GEN_ENGINE_MAX][192] = {};
	uint32_t id, first = g->o.engine, last = g->o.engine;

	if (g->o.engine == GEN_ENGINE_AUTO) {
		first = GEN_ENGINE_LIVE;
		last = GEN_ENGINE_MAX - 1;
	}
	for (id = first; id <= last; id++) {
		g->engine = engines[id];
		g->engine_mode[0] = '\0';
		if (!g->engine->open(g, why[id], sizeof(why[id])))
			break;
		g->engine->close(g);
		g->engine = NULL;
	}
	if (g->o.engine != GEN_ENGINE_AUTO) {
		if (!g->engine)
			pr_err("gen --engine %s cannot send on %s: %s", gen_engine_names[first], g->o.ifname,
			       why[first]);
		return g->engine ? 0 : 1;
	}
	if (!g->engine) {
		pr_err("gen: no engine can send on %s: live: %s; xsk: %s; packet: %s", g->o.ifname,
		       why[GEN_ENGINE_LIVE], why[GEN_ENGINE_XSK], why[GEN_ENGINE_PACKET]);
		return 1;
	}
	/* Once, on stderr: which engine auto took, and why not a faster one. */
	if (id == GEN_ENGINE_LIVE)
		fprintf(stderr, "xdp-pacer gen: engine live (%s)\n", g->engine_mode);
	else if (id == GEN_ENGINE_XSK)
		fprintf(stderr, "xdp-pacer gen: engine xsk (%s); not live: %s\n", g->engine_mode,
			why[GEN_ENGINE_LIVE]);
	else
		fprintf(stderr, "xdp-pacer gen: engine packet (%s); not live: %s; not xsk: %s\n",
			g->engine_mode, why[GEN_ENGINE_LIVE], why[GEN_ENGINE_XSK]);
	return 0;
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_wakeup(int sig)
{
	(void)sig; /* only there to interrupt a blocking call (EINTR) */
}

void gen_thread_fail(struct gen_thread *t, int err, const char *fmt, ...)
{
	va_list ap;

	t->err = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(t->why, sizeof(t->why), fmt, ap);
	va_end(ap);
}

/* Each thread: Ctrl-C is the main thread's; the CPU is its own; then the engine sends. */
static void *thread_start(void *arg)
{
	struct gen_thread *t = arg;
	sigset_t block;
	cpu_set_t set;
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		gen_thread_fail(t, -err, "cannot run on CPU %d: %s", t->cpu, strerror(err));
	else
		t->g->engine->send(t);
	t->finished = 1;
	return NULL;
}

static void handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_wakeup; /* no SA_RESTART: the blocking call must return */
	sigaction(SIGUSR1, &sa, NULL);
}

/* Start the threads; on failure, how many did start is in *started. */
static int start_threads(struct gen_ctx *g, struct gen_thread *threads, uint32_t *started)
{
	uint32_t i;
	int err;

	for (i = 0; i < g->o.threads; i++) {
		struct gen_thread *t = &threads[i];

		t->g = g;
		t->index = i;
		t->cpu = g->cpus[i];
		err = pthread_create(&t->tid, NULL, thread_start, t);
		if (err) {
			pr_err("cannot start generator thread %u: %s", i, strerror(err));
			*started = i;
			return err;
		}
	}
	*started = i;
	return 0;
}

/* Stop the workers at the deadline, at their quota, on Ctrl-C or a failure; then join them. */
static void supervise(struct gen_ctx *g, struct gen_thread *threads, uint32_t n, bool failed,
		      uint64_t t0)
{
	struct timespec tick = { .tv_nsec = 2000000 };
	uint32_t i, running;

	for (;;) {
		bool one_failed = false;

		for (i = 0, running = 0; i < n; i++) {
			running += !threads[i].finished;
			one_failed |= threads[i].err != 0;
		}
		if (!running)
			break;
		if (stop || failed || one_failed || (g->engine->done && g->engine->done(g)) ||
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

/*
 * The device's own count of frames it dropped on transmit (tx_dropped,
 * from the kernel's link statistics in this network namespace): false
 * where it cannot be read.
 */
static bool device_tx_dropped(const char *ifname, uint64_t *dropped)
{
	struct ifaddrs *all, *a;
	bool found = false;

	if (getifaddrs(&all))
		return false;
	for (a = all; a; a = a->ifa_next) {
		if (a->ifa_addr && a->ifa_addr->sa_family == AF_PACKET && a->ifa_data &&
		    !strcmp(a->ifa_name, ifname)) {
			*dropped = ((const struct rtnl_link_stats *)a->ifa_data)->tx_dropped;
			found = true;
			break;
		}
	}
	freeifaddrs(all);
	return found;
}

int gen_run(struct gen_ctx *g)
{
	struct gen_thread *threads = calloc(g->o.threads, sizeof(*threads));
	uint64_t t0, drop0 = 0, drop1 = 0;
	uint32_t started = 0, i;
	char eb[128];
	bool drops;
	int err;

	if (!threads) {
		pr_err("out of memory");
		return 1;
	}
	handle_signals();
	drops = device_tx_dropped(g->o.ifname, &drop0);
	t0 = mono_ns();
	err = start_threads(g, threads, &started);
	supervise(g, threads, started, err != 0, t0);
	g->elapsed_ns = mono_ns() - t0;
	if (drops && device_tx_dropped(g->o.ifname, &drop1)) {
		g->device_dropped = (uint32_t)(drop1 - drop0); /* 32-bit counters */
		g->device_dropped_known = true;
	}
	for (i = 0; !err && i < started; i++) {
		if (threads[i].err) {
			pr_err("gen --engine %s on %s, CPU %d: %s%s%s", g->engine->name, g->o.ifname,
			       threads[i].cpu, threads[i].why, threads[i].why[0] ? ": " : "",
			       err_str(threads[i].err, eb, sizeof(eb)));
			err = 1;
		}
	}
	if (!err)
		err = g->engine->collect(g);
	free(threads);
	return err ? 1 : 0;
}
