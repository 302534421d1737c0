/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's sketch run in userspace on the shared code of
 * pacer_sketch.h and pacer_verdict.h: used by the property and race tests,
 * the CLI's query (to read the real maps) and the offline sizing simulation.
 */
#ifndef PACER_SKETCH_SIM_H
#define PACER_SKETCH_SIM_H

#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_verdict.h"

struct sketch_sim {
	uint32_t rows, kind, lines_log2, tick_shift;
	uint32_t thresh, policy;
	uint32_t burst; /* GCRA burst tolerance in ticks (pacer_rate.h); 0: one per interval */
	uint32_t placement; /* SHARED: admit as a shared sketch does (packets may then run concurrently) */
	__u64 key[2];
	uint64_t nlines;
	struct pacer_line *lines;
};

/* 0 or -EINVAL (bad geometry) / -ENOMEM. Lines start all-expired; placement per-CPU. */
int sketch_sim_init(struct sketch_sim *s, uint32_t rows, uint32_t kind, uint32_t lines_log2,
		    uint32_t tick_shift, uint32_t thresh, uint32_t policy, const __u64 key[2]);
void sketch_sim_free(struct sketch_sim *s);

/* Hash of a source as the datapath computes it (family 4 or 6, masked words). */
uint64_t sketch_sim_hash(const struct sketch_sim *s, int family, uint64_t lo, uint64_t hi);

/* One packet of a key with hash h at now_ns: returns 1 if dropped; *age gets the estimate. */
int sketch_sim_packet(struct sketch_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age);

/* What happened to a packet run through pacing and a later stage (the global budget). */
enum sim_stage_verdict {
	SIM_ADMITTED = 0,
	SIM_PACED = 1,         /* dropped by pacing (or lost to another CPU's admission) */
	SIM_REFUSED_LATER = 2, /* pacing admitted it, the later stage did not: nothing written */
};

/*
 * One packet through the datapath's stages in its order: pacing judges,
 * a later stage admits or refuses (later_admits, asked only when pacing
 * admits), and only a packet both admitted is written.  Returns an enum
 * sim_stage_verdict; *age (may be NULL) gets the estimate.
 */
int sketch_sim_staged(struct sketch_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		      uint32_t *age);

/* Age estimate without updating. */
uint32_t sketch_sim_age(const struct sketch_sim *s, uint64_t h, uint64_t now_ns);

/* Bytes of cell storage (one copy). */
uint64_t sketch_sim_bytes(const struct sketch_sim *s);

/*
 * The false-drop model for n distinct active sources per interval.
 * rows: P = (1 - e^{-n/w})^d, w = usable cells per row.
 * blocked: keys share a line; P = sum_k Pois(k; n/B) (1 - (1 - 1/s)^k)^d,
 * B lines, s cells per row segment.
 */
double sketch_model_false_drop(uint32_t kind, uint32_t rows, uint32_t lines_log2, double n);

#endif
