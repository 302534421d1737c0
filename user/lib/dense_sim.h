/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's dense table run in userspace on the shared code of
 * pacer_dense.h (property tests, sizing), and the dense table's error model.
 */
#ifndef PACER_DENSE_SIM_H
#define PACER_DENSE_SIM_H

#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_dense.h"
#include "sketch_sim.h" /* enum sim_stage_verdict */

struct dense_sim {
	uint32_t lines, tick_shift, thresh, policy, on_full;
	uint32_t burst;     /* GCRA burst tolerance in ticks (pacer_rate.h); 0: one per interval */
	uint32_t placement; /* SHARED: claim entries as a shared table does */
	uint32_t sweep;     /* 1: dense_sim_packet() and _staged() sweep as the datapath's timer */
	uint64_t swept_tick;
	__u64 key[2];
	struct pacer_dense_line *l;
	uint64_t full, evicted; /* packets that found no slot / replaced a fresh entry */
};

/*
 * 0 or -EINVAL (bad geometry: lines outside 2..PACER_DENSE_MAX_LINES, or a
 * threshold beyond PACER_DENSE_MAX_SAT) / -ENOMEM.  Entries start never
 * written; placement per-CPU.
 */
int dense_sim_init(struct dense_sim *s, uint32_t lines, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2]);
void dense_sim_free(struct dense_sim *s);

/* One packet of a key with hash h at now_ns: returns 1 if dropped; *age (may be NULL). */
int dense_sim_packet(struct dense_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age);

/* One packet through pacing and a later stage, as table_sim_staged(): an enum sim_stage_verdict. */
int dense_sim_staged(struct dense_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		     uint32_t *age);

/* The same as dense_sim_packet() without counting (*event: enum pacer_tbl_event): threads may share it. */
int dense_sim_verdict(const struct dense_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age,
		      uint32_t *event);

/*
 * The datapath's sweep at now_ns: every written entry aged
 * PACER_DENSE_MAX_SAT or more cleared (bpf/lib/sweep.h does it a chunk of
 * lines per timer round; a simulation whose clock moves in steps of at most
 * PACER_DENSE_SWEEP_TICKS calls this once per step, or sets `sweep`: a
 * packet then sweeps the whole table when the last sweep is
 * PACER_DENSE_SWEEP_TICKS old or more).  Clearing expired entries changes
 * no verdict: only the pace matters.
 */
void dense_sim_sweep(struct dense_sim *s, uint64_t now_ns);

/* The sweep of the two lines of the key with hash h alone (threads may share the simulator). */
void dense_sim_sweep_key(const struct dense_sim *s, uint64_t h, uint64_t now_ns);

/*
 * The dense table's error model for n distinct sources admitted per
 * interval at random times over `lines` lines: table_model()'s two-choice
 * fluid limit with lines of PACER_DENSE_WAYS and 13-bit fingerprints.
 */
void dense_model(uint32_t lines, double n, double *overflow, double *collision);

/*
 * The same for n sources that each keep one entry (strictly paced sources
 * whose period is under two intervals): table_model_fill() with lines of
 * PACER_DENSE_WAYS, a fill without expiry, the lower of the two.
 */
void dense_model_fill(uint32_t lines, double n, double *overflow, double *collision);

/* Bytes of dense table storage per copy. */
uint64_t dense_bytes(uint32_t lines);

#endif
