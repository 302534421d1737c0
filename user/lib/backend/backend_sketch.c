// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The recency sketch's descriptor (backend.h): d rows of cells, rows or blocked layout. */
#include <inttypes.h>
#include <stdio.h>
#include "backend.h"
#include "geometry.h"
#include "pacer_names.h"
#include "pacer_rate.h"
#include "sketch_sim.h"

static int sketch_lines(uint64_t width, uint32_t rows, uint32_t kind, struct pacer_layout *lay,
			uint64_t *lines, char *err, size_t len)
{
	*lines = width / PACER_LINE_BYTES;
	if (width < PACER_MIN_WIDTH || width > PACER_MAX_WIDTH || log2_exact(width) < 0) {
		snprintf(err, len, "--width %llu: a sketch row takes a power of two from 64 to %llu cells",
			 (unsigned long long)width, (unsigned long long)PACER_MAX_WIDTH);
		return 2;
	}
	if (rows < 1 || rows > PACER_MAX_ROWS) {
		snprintf(err, len, "--rows %u: a sketch has 1 to %u rows", rows, (unsigned)PACER_MAX_ROWS);
		return 2;
	}
	if (kind == PACER_LAYOUT_BLOCKED) {
		*lines *= rows;
		if (log2_exact(rows) < 0) {
			snprintf(err, len,
				 "--layout blocked needs --rows to be a power of two (1, 2, 4 or 8), not %u",
				 rows);
			return 2;
		}
	}
	(void)lay; /* rows and kind as asked */
	return 0;
}

static const char *sketch_check(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
				char *buf, size_t len)
{
	(void)rows, (void)kind, (void)lines_log2, (void)lines, (void)buf, (void)len;
	return NULL; /* the header's own checks cover rows, layout and width */
}

static int sketch_evicts(uint32_t on_full)
{
	(void)on_full;
	return 0;
}

/* "R rows x W cells" then the layout, in the form fmt gives. */
static const char *sketch_shape(const char *fmt, uint32_t rows, uint32_t kind, uint32_t lines_log2,
				char *buf, size_t len)
{
	snprintf(buf, len, fmt, rows, geom_width_cells(kind, rows, lines_log2), layout_name(kind));
	return buf;
}

static const char *sketch_report_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				     uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	(void)lines, (void)on_full;
	return sketch_shape("%u rows x %" PRIu64 " cells (%s layout)", rows, kind, lines_log2, buf, len);
}

static const char *sketch_live_str(uint32_t rows, uint32_t kind, uint32_t lines_log2,
				   uint32_t lines, uint32_t on_full, char *buf, size_t len)
{
	(void)lines, (void)on_full;
	return sketch_shape("%u rows x %" PRIu64 " cells, %s layout", rows, kind, lines_log2, buf, len);
}

static const char *sketch_load_args(uint32_t rows, uint32_t kind, uint64_t width, uint32_t on_full,
				    char *buf, size_t len)
{
	(void)on_full;
	snprintf(buf, len, "--rows %u --width %" PRIu64 " --layout %s", rows, width, layout_name(kind));
	return buf;
}

static int sketch_init(void *sim, const struct backend_sim_cfg *c)
{
	return sketch_sim_init(sim, c->rows, c->kind, c->lines_log2, c->tick_shift, c->thresh,
			       c->policy, c->key);
}

static int sketch_packet(void *sim, uint64_t hash, uint64_t now_ns)
{
	return sketch_sim_packet(sim, hash, now_ns, NULL);
}

static uint64_t sketch_evictions(const void *sim)
{
	(void)sim;
	return 0;
}

static void sketch_free(void *sim)
{
	sketch_sim_free(sim);
}

static uint64_t sketch_width(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines)
{
	(void)lines;
	return geom_width_cells(kind, rows, lines_log2);
}

static double sketch_model_rate(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
				double n)
{
	(void)lines;
	return sketch_model_false_drop(kind, rows, lines_log2, n);
}

static uint32_t sketch_fresh_in_line(const void *line, uint64_t tick, uint32_t thresh)
{
	const struct pacer_line *l = line;
	uint32_t c, n = 0;

	for (c = 0; c < PACER_LINE_CELLS; c++)
		n += pacer_cell_age(l, c, tick) < thresh;
	return n;
}

/* geom_max_lines_log2 is the sketch's own. */
#define sketch_max_lines_log2 geom_max_lines_log2

const struct backend_desc backend_sketch = {
	.name = "sketch", .noun = "sketch", .sized_by_rows = 1, .max_rows = PACER_MAX_ROWS,
	/* N up to 64 at any tick, T up to 64 ticks: the age a cell's re-base keeps */
	/* Its cells hold bursts up to PACER_RATE_SKETCH_MAX_N, but none within 1 % of N/T (ticks.c). */
	.rate_max_n = 1, .rate_max_sat = PACER_MAX_THRESH,
	.rate_n_hint = "use --backend table (up to 16384 ticks)",
	.rate_hint = "--backend table holds 16384 ticks, or a coarser --tick",
	.unseen_note = "", /* a sketch cell is never refused */
	.sweep_from_per_line = 4 * PACER_LINE_CELLS, /* 4 sources per cell */
	.fresh_in_line = sketch_fresh_in_line, .entries_per_source_is_rows = 1,
	BACKEND_FUNCS(sketch),
};
