/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * xdp-pacer gen, one concern per file: options (gen_opts.c), the program's
 * parameters and tables (gen_setup.c), the sending threads (gen_run.c) and
 * the report (gen_report.c).  The Zipf table and the frame template are in
 * the library (zipf.h, frame.h).
 */
#ifndef PACER_GEN_H
#define PACER_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include "gen_abi.h"
#include "opts.h"
#include "zipf.h"

#define GEN_ZIPF_MAX_SOURCES (1u << 26)
#define GEN_SPORT_FLOOD 40000
#define GEN_SPORT_GOOD 40001
#define GEN_DPORT 9 /* discard */
#define GEN_MAX_THREADS 1024

struct gen_mac {
	uint8_t b[6];
};

struct gen_opts {
	uint32_t dist, family, sources, good, threads, affinity_source, heavy;
	double zipf, heavy_share;
	uint64_t good_period_ns, count, duration_ns, rate;
	struct opt_address src_base, dst;
	struct gen_mac dst_mac, src_mac;
	const char *ifname;
	bool count_set, json, src_mac_set;
};

struct gen_bpf;
struct gen_cpu_state;

/* One run of the generator: its options and what setting it up made. */
struct gen_ctx {
	struct gen_opts o;
	int cpus[GEN_MAX_THREADS]; /* thread i runs on cpus[i] */
	int ifindex;
	struct gen_bpf *skel;
	struct gen_cpu_state *states; /* indexed by CPU */
	uint32_t ncpus_possible;
	struct zipf z;
	uint8_t frame[128];
	size_t len;
	uint64_t elapsed_ns;
	uint64_t heavy_sent[GEN_MAX_HEAVY]; /* heavy: frames per heavy source, after the run */
};

extern const char *const gen_dist_names[];

/* Options and their combinations, and the CPUs to run on: 0, OPTS_HELP or 2. */
int gen_parse(int argc, char **argv, struct gen_ctx *g);
/* Open, parametrise and load the program, fill its tables: 0 or 1 (said why). */
int gen_setup(struct gen_ctx *g);
/* Send until the count, the duration or Ctrl-C; read the counters.  0 or 1. */
int gen_run(struct gen_ctx *g);
/* What was sent, as text or JSON. */
void gen_report(const struct gen_ctx *g);
void gen_teardown(struct gen_ctx *g);

#endif
