// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The recency table's descriptor (backend.h): one row of lines of PACER_TBL_WAYS entries. */
#include <inttypes.h>
#include <stdio.h>
#include "backend.h"
#include "pacer_names.h"
#include "pacer_rate.h"
#include "pacer_table.h"
#include "table_sim.h"

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

static int table_evicts(uint32_t on_full)
{
	return on_full == PACER_TBL_FULL_EVICT;
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
		 table_width(kind, rows, lines_log2, lines),
		 on_full_name(on_full));
	return buf;
}

static const char *table_load_args(uint32_t rows, uint32_t kind, uint64_t width, uint32_t on_full,
				   char *buf, size_t len)
{
	(void)rows, (void)kind;
	snprintf(buf, len, "--backend table --width %" PRIu64 " --on-full %s", width,
		 on_full_name(on_full));
	return buf;
}

static int table_init(void *sim, const struct backend_sim_cfg *c)
{
	return table_sim_init(sim, c->lines_log2, c->tick_shift, c->thresh, c->policy, c->on_full,
			      c->key);
}

static int table_packet(void *sim, uint64_t hash, uint64_t now_ns)
{
	return table_sim_packet(sim, hash, now_ns, NULL);
}

static uint64_t table_evictions(const void *sim)
{
	return ((const struct table_sim *)sim)->evicted;
}

static void table_free(void *sim)
{
	table_sim_free(sim);
}

/* One-sided: overflow drops; evict-oldest: overflow evicts instead.  Both count. */
static double table_model_rate(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			       double n)
{
	double overflow, collision;

	(void)kind, (void)rows, (void)lines;
	table_model(lines_log2, n, &overflow, &collision);
	return overflow + collision;
}

const struct backend_desc backend_table = {
	.name = "table", .noun = "table", .takes_on_full = 1, .max_rows = 1,
	/* Any N --rate takes; T up to the 16-bit ticks less the skew window */
	.rate_max_n = PACER_RATE_MAX_N, .rate_max_sat = PACER_RATE_TBL_MAX_SAT,
	.rate_n_hint = "", .rate_hint = "a coarser --tick, or a smaller T",
	.unseen_note = " if one of its lines has a free entry",
	.sweep_from_per_line = 2 * PACER_TBL_WAYS, /* 2 sources per entry */
	BACKEND_FUNCS(table),
};
