// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two tables' descriptors (backend.h), one two-choice engine over two
 * slot layouts (include/pacer_two_choice.h): the recency table is one row
 * of a power of two of lines of PACER_TBL_WAYS entries; the dense table one
 * row of any number of lines of PACER_DENSE_WAYS entries, --width rounded
 * up to whole lines.  What the two share (--on-full, the simulator's
 * counters, load's options) is written once here.
 */
#include <inttypes.h>
#include <stdio.h>
#include "backend.h"
#include "cli_values.h"
#include "pacer_names.h"
#include "pacer_place.h"
#include "pacer_rate.h"
#include "two_choice_sim.h"

static uint32_t ceil_log2(uint64_t x)
{
	uint32_t lg = 0;

	while ((1ULL << lg) < x)
		lg++;
	return lg;
}

/* What both tables share. */

static int tables_evicts(uint32_t on_full)
{
	return on_full == PACER_TBL_FULL_EVICT;
}

static const char *tables_load_args(const char *backend, uint64_t width, uint32_t on_full,
				    char *buf, size_t len)
{
	snprintf(buf, len, "--backend %s --width %" PRIu64 " --on-full %s", backend, width,
		 on_full_name(on_full));
	return buf;
}

/* X_load_args, descriptor-shaped: "--backend X --width W --on-full M". */
#define TABLES_LOAD_ARGS(X)                                                                   \
	static const char *X##_load_args(uint32_t rows, uint32_t kind, uint64_t width,         \
					 uint32_t on_full, char *buf, size_t len)               \
	{                                                                                      \
		(void)rows, (void)kind;                                                        \
		return tables_load_args(#X, width, on_full, buf, len);                         \
	}

static uint64_t tables_evictions(const void *sim)
{
	return ((const struct two_choice_sim *)sim)->evicted;
}

static void tables_free(void *sim)
{
	table_sim_free(sim); /* one store for both layouts */
}

/* One-sided: overflow drops; evict-oldest: overflow evicts instead.  Both count. */
static double tables_rate(void (*model)(uint32_t, double, double *, double *), uint32_t geometry,
			  double n)
{
	double overflow, collision;

	model(geometry, n, &overflow, &collision);
	return overflow + collision;
}

/* The recency table. */

static int table_lines(uint64_t width, uint32_t rows, uint32_t kind, struct pacer_layout *lay,
		       uint64_t *lines, char *err, size_t len)
{
	(void)rows, (void)kind; /* load refuses --rows and --layout with a table */
	lay->rows = 1;
	lay->kind = PACER_LAYOUT_ROWS;
	*lines = width / PACER_TBL_WAYS;
	if (width < 2 * PACER_TBL_WAYS || *lines > 1ULL << PACER_TBL_MAX_LINES_LOG2 ||
	    (width & (width - 1))) {
		snprintf(err, len, "--width %llu: a table takes a power of two from 32 to 268435456 entries",
			 (unsigned long long)width);
		return 2;
	}
	return 0;
}

static const char *table_check(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
			       char *buf, size_t len)
{
	(void)lines;
	if (rows == 1 && kind == PACER_LAYOUT_ROWS && lines_log2 >= 1 &&
	    lines_log2 <= PACER_TBL_MAX_LINES_LOG2)
		return NULL;
	snprintf(buf, len, "a table is one row of 2^1..2^%d lines, not %u rows of 2^%u (layout %u)",
		 PACER_TBL_MAX_LINES_LOG2, rows, lines_log2, kind);
	return buf;
}

static uint64_t table_width(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines)
{
	(void)kind, (void)rows, (void)lines;
	return (uint64_t)PACER_TBL_WAYS << lines_log2;
}

static uint32_t table_max_lines_log2(uint32_t kind, uint32_t rows)
{
	(void)kind, (void)rows;
	return PACER_TBL_MAX_LINES_LOG2;
}

static const char *table_report_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				    uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	snprintf(buf, len, "table of %" PRIu64 " entries, on full: %s",
		 table_width(kind, rows, lines_log2, lines), on_full_name(on_full));
	return buf;
}

static const char *table_live_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				  uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " entries, on full: %s",
		 table_width(kind, rows, lines_log2, lines), on_full_name(on_full));
	return buf;
}

TABLES_LOAD_ARGS(table)

static int table_init(void *sim, const struct backend_sim_cfg *c)
{
	return table_sim_init(sim, c->lines_log2, c->tick_shift, c->thresh, c->policy, c->on_full,
			      c->key);
}

static int table_packet(void *sim, uint64_t hash, uint64_t now_ns)
{
	return table_sim_packet(sim, hash, now_ns, NULL);
}

static double table_model_rate(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			       double n)
{
	(void)kind, (void)rows, (void)lines;
	return tables_rate(table_model, lines_log2, n);
}

/* The dense table. */

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

TABLES_LOAD_ARGS(dense)

static int dense_init(void *sim, const struct backend_sim_cfg *c)
{
	uint32_t lines = c->lines ? c->lines : c->lines_log2 < 32 ? 1u << c->lines_log2 : 0;
	int err = dense_sim_init(sim, lines, c->tick_shift, c->thresh, c->policy, c->on_full, c->key);

	((struct two_choice_sim *)sim)->sweep = 1; /* as the datapath's timer: 8-bit ticks wrap */
	return err;
}

static int dense_packet(void *sim, uint64_t hash, uint64_t now_ns)
{
	return dense_sim_packet(sim, hash, now_ns, NULL);
}

static double dense_model_rate(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			       double n)
{
	(void)kind, (void)rows;
	return tables_rate(dense_model, lines ? lines : 1u << lines_log2, n);
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

static uint32_t table_fresh_in_line(const void *line, uint64_t tick, uint32_t thresh)
{
	const struct pacer_tbl_line *l = line;
	uint32_t i, n = 0;

	for (i = 0; i < PACER_TBL_WAYS; i++)
		n += (uint32_t)pacer_tbl_fresh(l->e[i], tick, thresh);
	return n;
}

static uint32_t dense_fresh_in_line(const void *line, uint64_t tick, uint32_t thresh)
{
	struct pacer_dense_line *const l[2] = { (struct pacer_dense_line *)line,
						(struct pacer_dense_line *)line };
	uint32_t i, n = 0;

	for (i = 0; i < PACER_DENSE_WAYS; i++)
		n += (uint32_t)pacer_dense_fresh(pacer_dense_get(l, i), tick, thresh);
	return n;
}

/* A table's functions by backend.h's convention, the shared ones beside them. */
#define TABLES_FUNCS(b)                                                                       \
	.lines = b##_lines, .check = b##_check, .width = b##_width,                            \
	.max_lines_log2 = b##_max_lines_log2, .evicts = tables_evicts,                         \
	.report_str = b##_report_str, .live_str = b##_live_str, .load_args = b##_load_args,    \
	.sim_size = sizeof(struct two_choice_sim), .sim_init = b##_init, .sim_packet = b##_packet, \
	.sim_evictions = tables_evictions, .sim_free = tables_free, .model_rate = b##_model_rate

const struct backend_desc backend_table = {
	.name = "table", .noun = "table", .takes_on_full = 1, .max_rows = 1,
	/* Any N --rate takes; T up to the 16-bit ticks less the skew window */
	.rate_max_n = PACER_RATE_MAX_N, .rate_max_sat = PACER_RATE_TBL_MAX_SAT,
	.rate_n_hint = "", .rate_hint = "a coarser --tick, or a smaller T",
	.unseen_note = " if one of its lines has a free entry",
	.sweep_from_per_line = 2 * PACER_TBL_WAYS, /* 2 sources per entry */
	.fresh_in_line = table_fresh_in_line,
	TABLES_FUNCS(table),
};

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
	.fresh_in_line = dense_fresh_in_line,
	TABLES_FUNCS(dense),
};
