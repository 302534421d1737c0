// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "cli_values.h"
#include "pacer_names.h"
#include "pacer_sketch.h"
#include "pacer_table.h"
#include "pacer_rate.h"

void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns)
{
	uint64_t q = 1ULL << tick_shift;

	/* Below 4 ticks the quantisation error would exceed 25 %. */
	*min_ns = 4 * q;
	*max_ns = (uint64_t)(PACER_MAX_THRESH - 1) * q;
}

int log2_exact(uint64_t v)
{
	int n = 0;

	if (!v || (v & (v - 1)))
		return -1;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

static int fail(char *err, size_t len, const char *fmt, const char *a, uint64_t b, uint64_t c)
{
	snprintf(err, len, fmt, a, (unsigned long long)b, (unsigned long long)c);
	return 2;
}

/* Lines of the sketch or table, and its rows and cell layout in lay. */
static int geometry(const struct layout_req *r, struct pacer_layout *lay, char *err, size_t len)
{
	uint64_t lines = r->width / PACER_LINE_BYTES;
	int lg;

	if (r->backend == PACER_BACKEND_TABLE) {
		/* One "row" of lines of PACER_TBL_WAYS entries. */
		lay->rows = 1;
		lay->kind = PACER_LAYOUT_ROWS;
		lines = r->width / PACER_TBL_WAYS;
		if (r->width < 2 * PACER_TBL_WAYS || lines > 1ULL << PACER_TBL_MAX_LINES_LOG2)
			return fail(err, len, "%s%llu: a table takes 32 to 268435456 entries", "--width ",
				    r->width, 0);
	} else if (r->kind == PACER_LAYOUT_BLOCKED) {
		lines *= r->rows;
		if (log2_exact(r->rows) < 0)
			return fail(err, len, "%s power of two (1, 2, 4 or 8), not %llu",
				    "--layout blocked needs --rows to be a", r->rows, 0);
	}
	lg = log2_exact(lines);
	if (lg < 0 || pacer_total_lines(lay->kind, lay->rows, (uint32_t)lg) > UINT32_MAX / 2)
		return fail(err, len, "%ssketch of %llu rows x %llu cells is too large for one map", "",
			    r->rows, r->width);
	lay->lines_log2 = (uint32_t)lg;
	lay->copies = r->placement == PACER_PLACEMENT_PERCPU ? r->ncpus : 1;
	if (pacer_total_lines(lay->kind, lay->rows, (uint32_t)lg) * lay->copies > UINT32_MAX)
		return fail(err, len, "%s of width %llu on %llu CPUs is too large for one map",
			    backend_name(lay->backend), r->width, lay->copies);
	return 0;
}

uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t period_ns, uint32_t backend)
{
	uint32_t s = pacer_default_tick_shift(period_ns / (n ? n : 1));
	struct pacer_rate r;

	if (n <= 1)
		return s;
	while (s < PACER_TICK_SHIFT_MAX &&
	       pacer_rate_ticks(n, period_ns, s, pacer_rate_max_sat(backend), &r))
		s++;
	return s;
}

int rate_fit(uint32_t n, uint64_t period_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len)
{
	char a[32], b[32], c[64];
	uint64_t min_ns, max_ns;

	if (n > 1) {
		if (!pacer_rate_ticks(n, period_ns, tick_shift, pacer_rate_max_sat(backend), rate))
			return 0;
		if (backend == PACER_BACKEND_SKETCH && n > PACER_RATE_SKETCH_MAX_N) {
			snprintf(err, len,
				 "--rate %u/%s: the sketch's cells tell 64 ticks apart, so it holds N up to %d at any tick; use --backend table (up to %d ticks)",
				 n, format_duration(period_ns, a, sizeof(a)), PACER_RATE_SKETCH_MAX_N,
				 PACER_RATE_TBL_MAX_SAT);
			return 2;
		}
		snprintf(err, len,
			 "--rate %u/%s does not fit tick %s on the %s: T/N must be at least one tick and T at most about %u ticks (%s)",
			 n, format_duration(period_ns, a, sizeof(a)),
			 format_duration(1ULL << tick_shift, b, sizeof(b)), backend_name(backend),
			 pacer_rate_max_sat(backend),
			 backend == PACER_BACKEND_TABLE ? "a coarser --tick, or a smaller T"
							: "--backend table holds 16384 ticks, or a coarser --tick");
		return 2;
	}
	interval_range(tick_shift, &min_ns, &max_ns);
	*rate = pacer_rate_of(pacer_thresh_ticks(period_ns, tick_shift), 0);
	if (period_ns >= min_ns && period_ns <= max_ns && rate->thresh)
		return 0;
	snprintf(err, len, "--interval %s does not fit tick %s: with this tick the interval must be within %s",
		 format_duration(period_ns, a, sizeof(a)), format_duration(1ULL << tick_shift, b, sizeof(b)),
		 format_duration_range(min_ns, max_ns, c, sizeof(c)));
	return 2;
}

const char *rate_describe(const struct pacer_config *c, uint32_t tick_shift, char *buf, size_t len)
{
	struct pacer_rate r = pacer_rate_of(c->thresh_ticks, c->burst_ticks);
	char a[32], b[32], d[32];

	if (c->rate_n <= 1) {
		snprintf(buf, len, "interval %s (threshold %u ticks)",
			 format_duration(c->interval_ns, a, sizeof(a)), c->thresh_ticks);
		return buf;
	}
	snprintf(buf, len,
		 "rate %u per %s (GCRA: a burst of up to %u at once, then one per %s; emission %u ticks, burst tolerance %u ticks of %s)",
		 c->rate_n, format_duration(c->interval_ns, a, sizeof(a)), pacer_rate_credits(r.sat, &r),
		 format_duration((uint64_t)r.emit << tick_shift, b, sizeof(b)), r.emit, r.burst,
		 format_duration(1ULL << tick_shift, d, sizeof(d)));
	return buf;
}

/* The tick, and the rate's ticks in it. */
static int timing(const struct layout_req *r, struct pacer_layout *lay, struct pacer_rate *rate,
		  char *err, size_t len)
{
	uint32_t n = r->rate_n ? r->rate_n : 1;

	lay->tick_shift = r->tick_ns ? (uint32_t)pacer_tick_shift_of(r->tick_ns) /* bounded by parse */
				     : pacer_default_rate_tick_shift(n, r->interval_ns, r->backend);
	return rate_fit(n, r->interval_ns, lay->tick_shift, r->backend, rate, err, len);
}

int layout_build(const struct layout_req *r, struct pacer_layout *lay, struct pacer_rate *rate,
		 char *err, size_t len)
{
	memset(lay, 0, sizeof(*lay));
	lay->magic = PACER_LAYOUT_MAGIC;
	lay->abi_version = PACER_ABI_VERSION;
	lay->rows = r->rows;
	lay->kind = r->kind;
	lay->placement = r->placement;
	lay->clock = r->clock;
	lay->backend = r->backend;
	lay->on_full = r->on_full;
	if (geometry(r, lay, err, len))
		return 2;
	return timing(r, lay, rate, err, len);
}

int gap_below_clock(uint32_t clock, uint32_t n, uint64_t period_ns, uint64_t clock_res_ns)
{
	return clock != PACER_CLOCK_PRECISE && period_ns / (n ? n : 1) < clock_res_ns;
}
