// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dense table's descriptor (backend.h): one row of any number of lines
 * of PACER_DENSE_WAYS entries; --width counts entries, rounded up to whole
 * lines.
 */
#include <inttypes.h>
#include <stdio.h>
#include "backend.h"
#include "cli_values.h"
#include "pacer_dense.h"
#include "pacer_names.h"
#include "pacer_place.h"
#include "pacer_rate.h"
#include "dense_sim.h"

static uint32_t ceil_log2(uint64_t x)
{
	uint32_t lg = 0;

	while ((1ULL << lg) < x)
		lg++;
	return lg;
}

static int dense_lines(uint64_t width, uint32_t rows, uint32_t kind, struct pacer_layout *lay,
		       uint64_t *lines, char *err, size_t len)
{
	(void)rows, (void)kind; /* load refuses --rows and --layout with a dense table */
	lay->rows = 1;
	lay->kind = PACER_LAYOUT_ROWS;
	*lines = (width + PACER_DENSE_WAYS - 1) / PACER_DENSE_WAYS;
	/* From the option's minimum (above two lines), as load --help says. */
	if (width < PACER_MIN_WIDTH || *lines > PACER_DENSE_MAX_LINES) {
		snprintf(err, len, "--width %llu: a dense table takes %u to %llu entries",
			 (unsigned long long)width, PACER_MIN_WIDTH,
			 (unsigned long long)PACER_DENSE_WAYS * PACER_DENSE_MAX_LINES);
		return 2;
	}
	lay->lines = (uint32_t)*lines;
	return 0;
}

static const char *dense_check(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
			       char *buf, size_t len)
{
	if (rows == 1 && kind == PACER_LAYOUT_ROWS && lines >= 2 && lines <= PACER_DENSE_MAX_LINES &&
	    lines_log2 == ceil_log2(lines))
		return NULL;
	snprintf(buf, len,
		 "a dense table is one row of 2..%u lines (lines_log2 its ceiling's log2), not %u rows of %u lines, lines_log2 %u (layout %u)",
		 PACER_DENSE_MAX_LINES, rows, lines, lines_log2, kind);
	return buf;
}

static uint64_t dense_width(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines)
{
	(void)kind, (void)rows, (void)lines_log2;
	return (uint64_t)PACER_DENSE_WAYS * lines;
}

static uint32_t dense_max_lines_log2(uint32_t kind, uint32_t rows)
{
	(void)kind, (void)rows;
	return ceil_log2(PACER_DENSE_MAX_LINES);
}

static int dense_evicts(uint32_t on_full)
{
	return on_full == PACER_TBL_FULL_EVICT;
}

static const char *dense_report_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				    uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	snprintf(buf, len, "dense table of %" PRIu64 " entries (%u lines), on full: %s",
		 dense_width(kind, rows, lines_log2, lines), lines, on_full_name(on_full));
	return buf;
}

static const char *dense_live_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				  uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " entries in %u lines, on full: %s",
		 dense_width(kind, rows, lines_log2, lines), lines, on_full_name(on_full));
	return buf;
}

static const char *dense_load_args(uint32_t rows, uint32_t kind, uint64_t width, uint32_t on_full,
				   char *buf, size_t len)
{
	(void)rows, (void)kind;
	snprintf(buf, len, "--backend dense --width %" PRIu64 " --on-full %s", width,
		 on_full_name(on_full));
	return buf;
}

static int dense_init(void *sim, const struct backend_sim_cfg *c)
{
	uint32_t lines = c->lines ? c->lines : c->lines_log2 < 32 ? 1u << c->lines_log2 : 0;

	int err = dense_sim_init(sim, lines, c->tick_shift, c->thresh, c->policy, c->on_full, c->key);

	((struct dense_sim *)sim)->sweep = 1; /* as the datapath's timer: 8-bit ticks wrap */
	return err;
}

static int dense_packet(void *sim, uint64_t hash, uint64_t now_ns)
{
	return dense_sim_packet(sim, hash, now_ns, NULL);
}

static uint64_t dense_evictions(const void *sim)
{
	return ((const struct dense_sim *)sim)->evicted;
}

static void dense_free(void *sim)
{
	dense_sim_free(sim);
}

/* One-sided: overflow drops; evict-oldest: overflow evicts instead.  Both count. */
static double dense_model_rate(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			       double n)
{
	double overflow, collision;

	(void)kind, (void)rows;
	dense_model(lines ? lines : 1u << lines_log2, n, &overflow, &collision);
	return overflow + collision;
}

/*
 * The sweep must visit every line of every copy within
 * PACER_DENSE_SWEEP_TICKS (pacer_dense.h); refuse a table too large for
 * the tick, in one line naming the numbers.
 */
static int dense_layout_check(const struct pacer_layout *lay, char *err, size_t len)
{
	uint64_t copies = lay->placement == PACER_PLACEMENT_PERCPU && lay->copies > 1 ? lay->copies : 1;
	uint64_t lines = (uint64_t)lay->lines * copies;
	uint64_t span = pacer_ticks_ns(PACER_DENSE_SWEEP_TICKS, lay->tick_shift);
	struct pacer_tbl_sweep p;
	char a[32], b[32];

	if (!pacer_dense_sweep_plan(lines, lay->tick_shift, &p))
		return 0;
	format_duration(pacer_tick_ns(lay->tick_shift), a, sizeof(a));
	if (span < PACER_TBL_SWEEP_MIN_NS)
		snprintf(err, len,
			 "a dense table's sweep must visit every line within %u ticks of %s (%s), under the 1 ms between its rounds: choose a longer interval (a coarser --tick) or --backend table",
			 PACER_DENSE_SWEEP_TICKS, a, format_duration(span, b, sizeof(b)));
	else
		snprintf(err, len,
			 "a dense table of %llu lines%s needs a sweep of %u lines a ms to visit all within %u ticks of %s (at most %u): choose a longer interval, a smaller --width, or --backend table",
			 (unsigned long long)lines, copies > 1 ? " (all copies)" : "", p.chunk,
			 PACER_DENSE_SWEEP_TICKS, a, PACER_DENSE_SWEEP_MAX_CHUNK);
	return 2;
}

const struct backend_desc backend_dense = {
	.name = "dense", .noun = "dense table", .takes_on_full = 1, .max_rows = 1,
	/* 8-bit ticks as the sketch's cells: bursts up to N = 31, but none within 1 % of N/T (ticks.c). */
	.rate_max_n = 1, .rate_max_sat = PACER_DENSE_MAX_SAT,
	.rate_n_hint = "use --backend table (up to 16384 ticks)",
	.rate_hint = "--backend table holds 16384 ticks, or a coarser --tick",
	.unseen_note = " if one of its lines has a free entry",
	.sweep_from_per_line = 2 * PACER_DENSE_WAYS, /* 2 sources per entry */
	.any_line_count = 1,
	.layout_check = dense_layout_check,
	BACKEND_FUNCS(dense),
};
