/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Audit of recorded verdicts against what the policy promises, computed
 * exactly from the complete packet streams of source-sampled sources.
 *
 * Truth for a packet at time t of source x (datapath clock):
 *   pace:  t - (time of x's previous ADMITTED packet)
 *   quiet: t - (time of x's previous packet)
 * If x has no such packet in the recording, the truth is only known to be
 * at least t - start (source sampling was on from the start and every packet
 * of a sampled source is recorded); when that bound is below the interval
 * the packet is "unknown" and not judged.
 *
 *   false drop: dropped although truth >= interval.  Split into
 *     quantisation: an exact last-seen table comparing whole ticks the way the
 *       datapath does (age = tick(t) - tick(t_prev) < thresh_ticks) would have
 *       dropped it too.  thresh_ticks = ceil(interval/tick) + 1 makes this
 *       happen only for gaps in [interval, interval + 2 ticks): by design.
 *     collision: the exact table would have passed it; the sketch's estimate
 *       was younger than the truth because other keys share its cells.
 *   false pass: passed although truth < interval.  In shared placement it
 *     must not happen (the sketch errs one way); the only source is the
 *     documented race of two CPUs admitting one source at once.  In per-CPU
 *     placement every CPU keeps its own sketch, so a source spread over k
 *     CPUs can get up to k packets per interval: false passes against the
 *     global guarantee are expected there and are reported by CPU, beside
 *     false passes against each CPU's own stream, which must be 0.
 *
 * Traffic classes (format 3): every record is judged against its own
 * class's limit (interval or GCRA bound, policy), and records of different
 * classes are different sources.  A class whose key adds the destination
 * port or address (src+dport, src+dst) is audited on its sources alone,
 * because a record holds only the masked source: the packets of all the
 * keys one source opens are merged.  A key's admissions are a subset of
 * its source's, and the GCRA's debt only grows with admissions, so a drop
 * the merged stream owed a pass is a proven false drop (a lower bound on
 * them); a pass cannot be shown false (it may be another port's), so
 * false passes are not judged for such a class, and its packets the merged
 * stream does not owe a pass are counted as not judged.  A class whose
 * action is pass or drop is checked verdict by verdict against it.
 */
#ifndef PACER_ANALYZE_AUDIT_H
#define PACER_ANALYZE_AUDIT_H

#include <stdint.h>
#include "analyze_stream.h"

#define AUDIT_MAX_BINS 200
#define AUDIT_MAX_EXAMPLES 8

enum audit_kind {
	AUDIT_FALSE_DROP_COLLISION,
	AUDIT_FALSE_DROP_QUANTISATION,
	AUDIT_FALSE_PASS,
	AUDIT_FALSE_PASS_LOCAL,
	AUDIT_KIND_MAX,
};

struct audit_bin {
	uint64_t packets, drops, false_drops_collision, false_drops_quant, false_passes;
};

struct audit_example {
	uint64_t ts_ns, gap_ns;   /* gap: the truth (or its lower bound if !gap_known) */
	/* true_age_ticks: exact tick age in the sketch's view (the CPU's own stream in per-CPU placement) */
	uint32_t src, true_age_ticks, est_age_ticks, thresh;
	uint16_t cpu;
	uint8_t gap_known;   /* truth exact (else a lower bound from the start) */
	uint8_t age_known;   /* true_age_ticks exact (else a lower bound) */
};

struct audit_result {
	uint32_t policy, placement;
	uint64_t interval_ns;
	uint32_t rate_n;             /* the limit's N (1: an interval) */
	uint32_t class_slot;         /* audit_run_class: the class audited; 0: the global limit */
	uint32_t key_mode;           /* the class's key (PACER_KEY_SRC without classes) */
	uint32_t action;             /* the class's action (PACER_ACTION_PACE without classes) */
	int key_merged;              /* keys merged by source: false passes not judged (above) */
	uint64_t unknown_class;      /* records of a class not in the recording's table: not judged */
	uint64_t after_class_change; /* records after the class list changed (classes_changed_ns): not judged */
	/* Distinct sampled sources per interval-long tumbling window: what the table must hold for it. */
	uint64_t keys_per_interval_peak;
	double keys_per_interval_mean;
	uint64_t judged_records;     /* records of source-sampled sources */
	uint64_t packet_only;        /* chosen by packet sampling only: streams incomplete, not judged */
	uint64_t passes, drops;
	uint64_t observed_drops;     /* ... of the drops: passed in observe mode (judged as drops) */
	uint64_t unknown;            /* truth below the interval could not be ruled out or in */
	uint64_t eligible;           /* truth >= interval: the packet was owed a pass */
	uint64_t correct_passes, correct_drops;
	uint64_t false_drops;        /* = quant + collision */
	uint64_t false_drops_quant, false_drops_collision;
	uint64_t false_passes;       /* against the global (all-CPU) stream */
	uint64_t false_passes_local; /* per-CPU placement: against the CPU's own stream */
	uint64_t est_older_than_truth; /* sketch estimate older than the exact tick age */
	uint64_t other_thresh;       /* records judged under a threshold changed live */
	uint64_t sources, sources_multi_cpu;
	uint64_t max_admits_in_interval; /* most admits of one source inside one interval */
	uint64_t exact_passes;       /* what the exact greedy per-source GCRA (burst N) admits of the same packets */
	uint32_t ncpus;              /* length of the by-CPU arrays */
	uint64_t *packets_by_cpu, *false_passes_by_cpu, *false_drops_by_cpu;
	uint64_t t0, bin_ns;
	uint32_t nbins;
	struct audit_bin bins[AUDIT_MAX_BINS];
	uint32_t n_examples[AUDIT_KIND_MAX];
	struct audit_example examples[AUDIT_KIND_MAX][AUDIT_MAX_EXAMPLES];
};

/* The interval a record is judged against (the header's, or the one its threshold implies). */
uint64_t audit_interval_for(const struct pacer_file_header *h, uint32_t thresh_ticks);

/*
 * 0 or -ENOMEM.  Free with audit_free().  audit_run judges every record,
 * each against its own class's limit; audit_run_class only the records of
 * one class_slot (0: those paced by the global limit).
 */
int audit_run(const struct an_stream *s, struct audit_result *out);
int audit_run_class(const struct an_stream *s, uint32_t class_slot, struct audit_result *out);
void audit_free(struct audit_result *r);

/* False-drop rate among packets owed a pass (0 when none were). */
double audit_false_drop_rate(const struct audit_result *r);

#endif
