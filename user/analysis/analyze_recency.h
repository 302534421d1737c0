/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The paper's Table 1, measured: an exact recency oracle,
 * HistoricalMembership (relative error eps) and the fixed-block
 * OptimalSM-style baseline (absolute error D = eps * W) run on the same
 * stream of source-sampled packets.  Each item is queried (its recency
 * before this occurrence) and then inserted.
 *
 * Recency is counted in items, as in the paper: r = 0 when the source was
 * the previous item.  To compare with the limiter's interval, a recency r
 * for the item at stream position p is mapped to the timestamp of position
 * p - 1 - r, giving a time gap; "verdicts differ" counts items where the gap
 * a structure implies falls on the other side of the interval from the exact
 * gap (absent counts as "longer than the interval").  With the default
 * window (the most items any one interval holds) "absent" is exact: a source
 * more than W items back was last seen more than an interval ago.
 *
 * Memory is what each structure reports for itself (every byte it
 * allocated); time is query + insert per item with the structure run alone
 * on a fresh copy.
 *
 * The same pass fills the recency distributions for the report: time since
 * the source's previous packet (exact and HistoricalMembership), the
 * sketch's recorded estimate, and the policy's truth (previous admitted
 * packet under pace).
 */
#ifndef PACER_ANALYZE_RECENCY_H
#define PACER_ANALYZE_RECENCY_H

#include <stdint.h>
#include "analyze_stream.h"
#include "analyze_recency_structs.h"

/* Recency histogram: bins of 2^(1/T1_BINS_PER_OCTAVE) in ns from 2^T1_HIST_MIN_LOG2. */
#define T1_BINS_PER_OCTAVE 2
#define T1_HIST_MIN_LOG2 10
#define T1_HIST_MAX_LOG2 40
#define T1_HIST_BINS ((T1_HIST_MAX_LOG2 - T1_HIST_MIN_LOG2) * T1_BINS_PER_OCTAVE + 2)
/* bin 0: below 2^10 ns (incl. 0); last bin: absent / never / beyond range */

/* The timing pass runs each structure alone on at most this many items. */
#define T1_TIMED_ITEMS 200000

enum t1_hist { T1_H_EXACT, T1_H_HM, T1_H_SKETCH, T1_H_POLICY, T1_NHIST };

struct t1_params {
	uint64_t window;     /* W in items; 0: the most items any one interval holds */
	uint32_t inv_eps;    /* 1/eps, an integer >= 1 */
	uint64_t interval_ns;
	uint32_t tick_shift, policy;
};

struct t1_row {
	const char *name;
	uint64_t bytes;          /* memory the structure reports for itself */
	double bits_per_item;    /* bytes * 8 / W */
	double ns_per_item;      /* query + insert, wall clock, structure alone on a fresh copy */
	uint64_t in_window;      /* items whose exact recency r <= W (queries judged) */
	uint64_t within_bound;   /* estimate within the structure's guarantee */
	uint64_t missed;         /* r <= W but reported absent */
	uint64_t stale;          /* r > W + slack but reported present */
	double mean_rel_err, max_rel_err;
	uint64_t max_abs_err;
	uint64_t verdict_diff;   /* gap mapped to time on the other side of the interval */
	uint64_t insert_failures; /* a table could not grow: an item may have been lost */
	int ok;                  /* 0: could not be built (e.g. out of memory); see note */
};

struct t1_result {
	uint64_t items, window, slack_hm, slack_block, block_d;
	uint64_t timed_items;    /* items of the timing pass (a prefix of the stream) */
	uint32_t inv_eps;
	double window_span_s;    /* mean time W items span */
	double universe_log2;    /* log2 N: key bits of the recorded families/prefixes */
	double b_bits;           /* log2 C(N, W): information-theoretic minimum for the window's set */
	double paper_hm_bits;    /* (1 + eps)(B + W log2(1/eps)) */
	double paper_block_bits; /* (1 + D/W)(B + W log2(W/D)) */
	unsigned key_bits;       /* keys given to the structures are below 2^key_bits */
	uint64_t distinct_max;   /* most distinct sources among any W + 1 consecutive items */
	double distinct_mean;    /* mean over the windows ending at each item from W on */
	double paper_hm_distinct_bits; /* the HM bound with W replaced by distinct_max */
	struct t1_row row[T1_NSTRUCT];
	uint64_t hist[T1_NHIST][T1_HIST_BINS];
	char note[256];
};

/* The default window: most source-sampled items inside any one interval (at least 64). */
uint64_t t1_default_window(const struct an_stream *s, uint64_t interval_ns);

/* Histogram bin of a gap in ns (UINT64_MAX: absent). */
unsigned t1_hist_bin(uint64_t gap_ns);
/* Lower edge of a bin in ns (for plotting). */
double t1_hist_edge(unsigned bin);

/* 0, -EINVAL (bad parameters), -ENODATA (no source-sampled items) or -ENOMEM. */
int t1_run(const struct an_stream *s, const struct t1_params *p, struct t1_result *out,
	   an_progress_fn progress, void *ctx);

#endif
