/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xdp-pacer gen, one concern per file: options (gen_opts.c), the frame's
 * parameters and each sender's share (gen_setup.c), the threads and the
 * choice of engine (gen_run.c), the engines (gen_live.c: BPF_PROG_TEST_RUN
 * live frames; gen_xsk.c: AF_XDP; gen_packet.c: AF_PACKET, the last two
 * over gen_sender.c) and the report (gen_report.c).  What goes in a frame
 * is include/gen_draw.h's, the same code in every engine; the Zipf table
 * and the frame template are in the library (zipf.h, frame.h).
 */
#ifndef PACER_GEN_H
#define PACER_GEN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gen_abi.h"
#include "opts.h"
#include "zipf.h"

#define GEN_ZIPF_MAX_SOURCES (1u << 26)
#define GEN_SPORT_FLOOD 40000
#define GEN_SPORT_GOOD 40001
#define GEN_DPORT 9 /* discard */
#define GEN_MAX_THREADS 1024
#define GEN_FRAME_MAX 128

enum gen_engine_id {
	GEN_ENGINE_AUTO,
	GEN_ENGINE_LIVE,   /* BPF_PROG_TEST_RUN with live frames, redirected out */
	GEN_ENGINE_XSK,    /* AF_XDP: zero-copy where the driver offers it, else copy */
	GEN_ENGINE_PACKET, /* AF_PACKET, sendmmsg, the qdisc bypassed */
	GEN_ENGINE_MAX,
};

struct gen_mac {
	uint8_t b[6];
};

struct gen_opts {
	uint32_t dist, family, sources, good, threads, affinity_source, heavy, engine;
	double zipf, heavy_share;
	uint64_t good_period_ns, count, duration_ns, rate;
	struct opt_address src_base, dst;
	struct gen_mac dst_mac, src_mac;
	const char *ifname;
	bool count_set, json, src_mac_set;
};

struct gen_ctx;
struct gen_thread;

/*
 * A way of sending.  open makes it ready for every thread, or says in why
 * (one line, no prefix) why it cannot here; send is each thread's
 * sending, on its CPU, until its quota is sent or it is stopped (a failure
 * in t->err and t->why); collect puts what was sent into g->states and
 * g->heavy_sent.  close undoes open, also after a failed open.
 */
struct gen_engine {
	const char *name; /* --engine NAME, the report's "engine" */
	int (*open)(struct gen_ctx *g, char *why, size_t len);
	void (*send)(struct gen_thread *t);
	/* Optional: whether every sender has its count (live: the program counts). */
	bool (*done)(struct gen_ctx *g);
	int (*collect)(struct gen_ctx *g);
	void (*close)(struct gen_ctx *g);
};

extern const struct gen_engine gen_engine_live, gen_engine_xsk, gen_engine_packet;

/* One sending thread: the run's context and its own share. */
struct gen_thread {
	pthread_t tid;
	struct gen_ctx *g;
	uint32_t index; /* 0 .. threads - 1 */
	int cpu, err;   /* err: negative errno, why says what failed */
	char why[160];
	volatile int stop; /* set by the main thread, then SIGUSR1 */
	volatile int finished;
};

/* One run of the generator: its options and what setting it up made. */
struct gen_ctx {
	struct gen_opts o;
	int cpus[GEN_MAX_THREADS]; /* thread i runs on cpus[i] */
	int ifindex;
	struct gen_params params;     /* what every engine writes into frames */
	struct gen_cpu_state *states; /* each sender's share and counters, indexed by CPU */
	uint32_t ncpus_possible;
	struct zipf z;
	uint8_t frame[GEN_FRAME_MAX]; /* the template, len bytes */
	size_t len;
	uint64_t elapsed_ns;
	uint64_t heavy_sent[GEN_MAX_HEAVY]; /* heavy: frames per heavy source, after the run */
	/* What sends: the engine, how (its mode, for the report) and its state. */
	const struct gen_engine *engine;
	char engine_mode[64];
	void *engine_state;
	/* The device's own drop count over the run (its tx_dropped), if readable. */
	uint64_t device_dropped;
	bool device_dropped_known;
};

extern const char *const gen_dist_names[];
extern const char *const gen_engine_names[];

/* Options and their combinations, and the CPUs to run on: 0, OPTS_HELP or 2. */
int gen_parse(int argc, char **argv, struct gen_ctx *g);
/* The frame's parameters, the Zipf table, each sender's share: 0 or 1 (said why). */
int gen_setup(struct gen_ctx *g);
/* Pick the engine (--engine, or the first that works) and open it: 0 or 1 (said why). */
int gen_open_engine(struct gen_ctx *g);
/* Send until the count, the duration or Ctrl-C; read the counters.  0 or 1. */
int gen_run(struct gen_ctx *g);
/* What was sent, as text or JSON. */
void gen_report(const struct gen_ctx *g);
void gen_teardown(struct gen_ctx *g);

/* The stop flag a sending thread polls: Ctrl-C, the deadline, the quota, a failure. */
static inline bool gen_thread_stopping(const struct gen_thread *t)
{
	return t->stop;
}

/* A thread's failure: errno and the line that says what failed. */
void gen_thread_fail(struct gen_thread *t, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
