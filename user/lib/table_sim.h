/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's recency table run in userspace on the shared code of
 * pacer_table.h (property tests, sizing), and the table's error model.
 */
#ifndef PACER_TABLE_SIM_H
#define PACER_TABLE_SIM_H

#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_table.h"
#include "sketch_sim.h" /* enum sim_stage_verdict */

struct table_sim {
	uint32_t lines_log2, tick_shift, thresh, policy, on_full;
	uint32_t burst; /* GCRA burst tolerance in ticks (pacer_rate.h); 0: one per interval */
	uint32_t placement; /* SHARED: claim entries as a shared table does */
	__u64 key[2];
	struct pacer_tbl_line *lines;
	uint64_t full, evicted; /* packets that found no slot / replaced a fresh entry */
};

/* 0 or -EINVAL (bad geometry) / -ENOMEM.  Entries start never written; placement per-CPU. */
int table_sim_init(struct table_sim *s, uint32_t lines_log2, uint32_t tick_shift, uint32_t thresh,
		   uint32_t policy, uint32_t on_full, const __u64 key[2]);
void table_sim_free(struct table_sim *s);

/* One packet of a key with hash h at now_ns: returns 1 if dropped; *age (may be NULL). */
int table_sim_packet(struct table_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age);

/*
 * One packet through pacing and a later stage, as sketch_sim_staged():
 * returns an enum sim_stage_verdict.
 */
int table_sim_staged(struct table_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		     uint32_t *age);

/*
 * The same without counting (*event: enum pacer_tbl_event), so that with
 * shared placement several threads may send packets at once.
 */
int table_sim_verdict(const struct table_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age,
		      uint32_t *event);

/*
 * The table's error model for n distinct sources admitted per interval at
 * random times over 2^lines_log2 lines: two-choice balls-into-bins with
 * expiry (the fluid limit of Mitzenmacher's "power of two choices" as a
 * loss system: bins of PACER_TBL_WAYS, each fresh entry leaving after about
 * an interval), at its steady state.  *overflow is the share of admissions
 * that find both lines full of fresh entries: false drops in one-sided
 * mode, evictions of a fresh entry (each at most one false pass) in
 * opposite mode.  *collision is the share of keys that meet another key's
 * fresh entry with their fingerprint in one of their two lines (false drops
 * in both modes).
 */
void table_model(uint32_t lines_log2, double n, double *overflow, double *collision);

/*
 * Keys arriving one by one into the less full of two random lines of
 * `ways` entries, m keys per line in the end (a fluid model): *lost the
 * keys per line that found both lines full, *occ the mean entries per line.
 * Both tables' fill models (table_model_fill(), dense_model_fill()).
 */
#define TWO_CHOICE_MAX_WAYS 32
void two_choice_fill(uint32_t ways, double m, double *lost, double *occ);

/*
 * The same lines in steady state under expiry (table_model()): a
 * admissions per line per interval, each entry fresh for one; *full the
 * share of keys that find both lines full, *occ the mean fresh entries
 * per line.  Both tables' steady models.
 */
void two_choice_steady(uint32_t ways, double a, double *full, double *occ);

/* A key's chance that one of about 2 * occ fresh entries carries its fingerprint (fps values). */
double two_lines_collision(double occ, double fps);

/*
 * The same for n sources that each keep one entry (a fill without expiry):
 * strictly paced sources whose period is under two intervals rewrite their
 * own expired entry, so the table holds all n at once.  A lower bound on
 * table_model()'s overflow for the same n.
 */
void table_model_fill(uint32_t lines_log2, double n, double *overflow, double *collision);

/* Bytes of table storage per copy. */
uint64_t table_bytes(uint32_t lines_log2);

#endif
