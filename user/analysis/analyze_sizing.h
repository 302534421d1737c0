/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sizing from a recording: replay the source-sampled packets through the
 * datapath's own code for the recorded backend (sketch_sim, or table_sim in
 * the recorded --on-full mode) at other geometries and find the smallest
 * one meeting a target error rate: false drops; for the table in
 * evict-oldest mode, false drops plus evictions of a fresh entry (each at
 * most one false pass).
 *
 * Scaling.  Source sampling keeps a uniform 1-in-N subset of sources (N =
 * 2^32 / sample_src_thresh), each with every one of its packets.  A sketch's
 * false drops depend on the load n/w (distinct sources per interval per
 * cell), so the sample on a sketch N times narrower behaves like the whole
 * stream on the full sketch: simulated lines_log2 l stands for
 * l + log2(N) at full scale.  When N is not a power of two, that is rounded
 * up to the next power of two, which only makes the recommendation wider.
 * A backend of any line count (the dense table) is scaled exactly: sim
 * lines L stand for ceil(L * N) lines, and its sweep steps in 1/8 octaves
 * of lines, then bisects between the last line count that missed the
 * target and the first that met it.
 *
 * A simulated false drop is a drop that an exact last-seen table comparing
 * whole ticks would not make, judged on the simulation's own admitted stream
 * (under pace the simulated and recorded streams diverge after the first
 * difference, so the recorded verdicts are the wrong oracle).  Quantisation
 * drops are by design and not counted here.
 */
#ifndef PACER_ANALYZE_SIZING_H
#define PACER_ANALYZE_SIZING_H

#include <stdint.h>
#include "analyze_stream.h"
#include "geometry.h"

struct sizing_params {
	uint32_t backend, on_full;    /* enum pacer_backend, enum pacer_on_full */
	uint32_t kind, policy, placement, tick_shift, thresh, ncpus;
	uint32_t rate_n;              /* N of a --rate recording (not modelled); 0 or 1: interval */
	uint64_t interval_ns;
	uint64_t sample_src_thresh;   /* of 2^32 */
	double target;                /* false-drop rate to meet, e.g. 1e-3 */
	uint32_t cur_rows, cur_lines_log2;
	uint32_t cur_lines;           /* the dense table's line count; 0 for the others */
	uint64_t max_sim_bytes;       /* cap on simulated sketch memory (0: 256 MiB) */
	__u64 key[2];                 /* hash key of the simulation (any random key) */
};

struct sizing_point {
	uint32_t rows, sim_lines_log2, target_lines_log2;
	uint32_t sim_lines, target_lines; /* any line count (the dense table); 0: powers of two */
	double target_lines_exact;    /* sim_lines_log2 + log2(N) before rounding */
	uint64_t target_bytes;        /* map memory at full scale, all copies */
	uint64_t width_cells;         /* `xdp-pacer load --width` at full scale */
	uint64_t packets, eligible, false_drops;
	uint64_t evictions;           /* table, evict-oldest: fresh entries replaced */
	double rate, rate_upper95, model_rate;
	int simulated;                /* 0: extrapolated by the model beyond a zero-drop width */
	int loadable;                 /* `load` takes this geometry (user/lib/backend/layout.c says) */
	int meets;                    /* loadable, and meets the target */
};

struct sizing_result {
	double scale, log2_scale;
	double n_mean, n_peak;        /* distinct sampled sources per interval, per sketch copy */
	uint64_t packets;             /* sampled-source packets replayed */
	struct sizing_point *pts;
	size_t npts;
	int best;                     /* index into pts, -1 if nothing in range meets the target */
	int best_by_model;            /* best met the target only with the model's help */
	struct sizing_point current;  /* the recorded geometry, simulated (current.simulated = 0 if impossible) */
	char note[256];
};

/* N = 2^32 / thresh; 0 if source sampling was off. */
double sizing_scale(uint64_t sample_src_thresh);
/* Full-scale lines_log2 a simulated one stands for, rounded up to a power of two. */
uint32_t sizing_target_lines_log2(uint32_t sim_lines_log2, double scale);
/* Simulated lines_log2 for a full-scale one (rounded down: narrower, conservative); -1 if below one line. */
int sizing_sim_lines_log2(uint32_t target_lines_log2, double scale);
/* Any line count: full-scale lines a simulated count stands for (rounded up), and back (down). */
uint64_t sizing_target_lines(uint32_t sim_lines, double scale);
uint32_t sizing_sim_lines(uint32_t target_lines, double scale);
/* The recorded limiter's --width: the sketch's cells per row or the table's entries. */
uint64_t sizing_header_width(const struct pacer_file_header *h);

/* Parameters from a recording's header (target and key left for the caller). */
void sizing_params_from_header(struct sizing_params *p, const struct pacer_file_header *h);

/*
 * 0, -ENODATA (no source-sampled packets: nothing to replay), -EINVAL or
 * -ENOMEM.  out->note explains a -ENODATA.
 */
int sizing_run(const struct an_stream *s, const struct sizing_params *p, struct sizing_result *out,
	       an_progress_fn progress, void *ctx);
void sizing_free(struct sizing_result *r);

#endif
