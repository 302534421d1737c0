/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's two tables run in userspace on their shared code (the
 * two-choice engine, include/pacer_two_choice.h, over pacer_table.h's and
 * pacer_dense.h's layouts): property tests, sizing.  One simulator for
 * both, its functions once per layout (table_sim_*, dense_sim_*, from
 * two_choice_sim_body.h), and the tables' error models.
 */
#ifndef PACER_TWO_CHOICE_SIM_H
#define PACER_TWO_CHOICE_SIM_H

#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_table.h"
#include "pacer_dense.h"
#include "sketch_sim.h" /* enum sim_stage_verdict */

struct two_choice_sim {
	uint32_t lines;      /* lines of the table (the recency table: 2^lines_log2) */
	uint32_t lines_log2; /* the recency table's geometry */
	uint32_t tick_shift, thresh, policy, on_full;
	uint32_t burst;     /* GCRA burst tolerance in ticks (pacer_rate.h); 0: one per interval */
	uint32_t placement; /* SHARED: claim entries as a shared table does */
	uint32_t sweep;     /* 1: _packet() and _staged() sweep as the datapath's timer */
	uint64_t swept_tick;
	__u64 key[2];
	union {
		struct pacer_tbl_line *tl;   /* table_sim_* */
		struct pacer_dense_line *dl; /* dense_sim_* */
	};
	uint64_t full, evicted; /* packets that found no slot / replaced a fresh entry */
};

/*
 * 0 or -EINVAL (bad geometry: lines_log2 outside 1..PACER_TBL_MAX_LINES_LOG2,
 * dense lines outside 2..PACER_DENSE_MAX_LINES, a threshold beyond the
 * table's largest sat) / -ENOMEM.  Entries start never written; placement
 * per-CPU; no sweep.
 */
int table_sim_init(struct two_choice_sim *s, uint32_t lines_log2, uint32_t tick_shift,
		   uint32_t thresh, uint32_t policy, uint32_t on_full, const __u64 key[2]);
int dense_sim_init(struct two_choice_sim *s, uint32_t lines, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2]);

/*
 * Each table's simulator, X_sim_* for X table and dense (a simulator is
 * used with its own table's functions alone):
 *
 * X_sim_packet: one packet of a key with hash h at now_ns: returns 1 if
 * dropped; *age (may be NULL).
 *
 * X_sim_staged: one packet through pacing and a later stage, as
 * sketch_sim_staged(): returns an enum sim_stage_verdict.
 *
 * X_sim_verdict: the same as X_sim_packet without counting (*event: enum
 * pacer_tbl_event), so that with shared placement several threads may
 * send packets at once.
 *
 * X_sim_sweep: the datapath's sweep at now_ns: every written entry aged
 * the table's largest sat (PACER_RATE_TBL_MAX_SAT, PACER_DENSE_MAX_SAT) or
 * more cleared (bpf/lib/sweep.h does it a chunk of lines per timer round;
 * a simulation whose clock moves in steps of at most the table's sweep
 * ticks calls this once per step, or sets `sweep`: a packet then sweeps
 * the whole table when the last sweep is that old).  Clearing expired
 * entries changes no verdict: only the pace matters.
 *
 * X_sim_sweep_key: the sweep of the two lines of the key with hash h alone
 * (threads may share the simulator).
 */
#define TWO_CHOICE_SIM_API(X)                                                                  \
	void X##_sim_free(struct two_choice_sim *s);                                           \
	int X##_sim_packet(struct two_choice_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age); \
	int X##_sim_staged(struct two_choice_sim *s, uint64_t h, uint64_t now_ns,               \
			   int later_admits, uint32_t *age);                                    \
	int X##_sim_verdict(const struct two_choice_sim *s, uint64_t h, uint64_t now_ns,        \
			    uint32_t *age, uint32_t *event);                                    \
	void X##_sim_sweep(struct two_choice_sim *s, uint64_t now_ns);                          \
	void X##_sim_sweep_key(const struct two_choice_sim *s, uint64_t h, uint64_t now_ns);
TWO_CHOICE_SIM_API(table)
TWO_CHOICE_SIM_API(dense)
#undef TWO_CHOICE_SIM_API

/*
 * The tables' error model for n distinct sources admitted per interval at
 * random times: two-choice balls-into-bins with expiry (the fluid limit of
 * Mitzenmacher's "power of two choices" as a loss system: bins of a line's
 * entries, each fresh entry leaving after about an interval), at its
 * steady state.  *overflow is the share of admissions that find both lines
 * full of fresh entries: false drops in one-sided mode, evictions of a
 * fresh entry (each at most one false pass) in opposite mode.  *collision
 * is the share of keys that meet another key's fresh entry with their
 * fingerprint in one of their two lines (false drops in both modes).
 * table_model: 2^lines_log2 lines of PACER_TBL_WAYS, 16-bit fingerprints;
 * dense_model: `lines` lines of PACER_DENSE_WAYS, 13-bit fingerprints.
 */
void table_model(uint32_t lines_log2, double n, double *overflow, double *collision);
void dense_model(uint32_t lines, double n, double *overflow, double *collision);

/*
 * The same for n sources that each keep one entry (a fill without expiry):
 * strictly paced sources whose period is under two intervals rewrite their
 * own expired entry, so the table holds all n at once.  A lower bound on
 * the steady model's overflow for the same n.
 */
void table_model_fill(uint32_t lines_log2, double n, double *overflow, double *collision);
void dense_model_fill(uint32_t lines, double n, double *overflow, double *collision);

/*
 * Keys arriving one by one into the less full of two random lines of
 * `ways` entries, m keys per line in the end (a fluid model): *lost the
 * keys per line that found both lines full, *occ the mean entries per line.
 */
#define TWO_CHOICE_MAX_WAYS 32
void two_choice_fill(uint32_t ways, double m, double *lost, double *occ);

/*
 * The same lines in steady state under expiry: a admissions per line per
 * interval, each entry fresh for one; *full the share of keys that find
 * both lines full, *occ the mean fresh entries per line.
 */
void two_choice_steady(uint32_t ways, double a, double *full, double *occ);

/* A key's chance that one of about 2 * occ fresh entries carries its fingerprint (fps values). */
double two_lines_collision(double occ, double fps);

/* Bytes of table storage per copy. */
uint64_t table_bytes(uint32_t lines_log2);
uint64_t dense_bytes(uint32_t lines);

#endif
