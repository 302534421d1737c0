// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "parse.h"
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

/* The share of N/T the CLI accepts a rate's ticks for, and the default tick's aim (per mille). */
#define RATE_MIN_PERMILLE 990
#define RATE_AIM_PERMILLE 995

/*
 * Whether --rate N/T (N > 1) at this tick delivers at least permille/1000
 * of N/T to a source that sends faster: one packet per spacing ticks
 * against T/N, i.e. 1000 T >= permille N spacing q.
 */
static int rate_within(uint32_t n, uint64_t period_ns, uint32_t tick_shift,
		       const struct pacer_rate *r, unsigned permille)
{
	unsigned __int128 asked = (unsigned __int128)period_ns * 1000;

	return asked >= (unsigned __int128)permille * n * pacer_rate_spacing(r) << tick_shift;
}

/* What a rate's ticks deliver, in % of N/T (for messages). */
static double rate_delivered_pct(uint32_t n, uint64_t period_ns, uint32_t tick_shift,
				 const struct pacer_rate *r)
{
	return 100.0 * (double)period_ns /
	       ((double)n * (double)pacer_rate_spacing(r) * (double)(1ULL << tick_shift));
}

/*
 * The tick at which the backend delivers N/T best (the coarsest of equals),
 * or -1 when no tick holds the burst.
 */
static int rate_best_tick_shift(uint32_t n, uint64_t period_ns, uint32_t backend)
{
	uint32_t s, max_sat = pacer_rate_max_sat(backend);
	struct pacer_rate r;
	double best_pct = -1, pct;
	int best = -1;

	for (s = 0; s <= PACER_TICK_SHIFT_MAX; s++) {
		if (pacer_rate_ticks(n, period_ns, s, max_sat, &r))
			continue;
		pct = rate_delivered_pct(n, period_ns, s, &r);
		if (pct >= best_pct) {
			best_pct = pct;
			best = (int)s;
		}
	}
	return best;
}

/*
 * N > 1: the coarsest tick that delivers 99.5 % of N/T and holds the burst,
 * else the one that delivers most.  Coarse ticks keep the ages a full burst
 * needs few (the table's 16-bit ticks alias an idle entry as young for
 * sat of every 2^16 ticks); the spacing needs the tick fine against T/N
 * (pacer_rate.h).  N = 1: the interval's, T in about 47 ticks.
 */
uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t period_ns, uint32_t backend)
{
	uint32_t s, max_sat = pacer_rate_max_sat(backend);
	struct pacer_rate r;
	int chosen = -1;

	if (n <= 1)
		return pacer_default_tick_shift(period_ns);
	for (s = 0; s <= PACER_TICK_SHIFT_MAX; s++)
		if (!pacer_rate_ticks(n, period_ns, s, max_sat, &r) &&
		    rate_within(n, period_ns, s, &r, RATE_AIM_PERMILLE))
			chosen = (int)s;
	if (chosen < 0)
		chosen = rate_best_tick_shift(n, period_ns, backend);
	return chosen < 0 ? pacer_default_tick_shift(period_ns / n) : (uint32_t)chosen;
}

/*
 * The largest N' < n for which the table delivers N'/T' within 1 %, with
 * T' = T N'/n rounded up (the same spacing, never a faster rate); 0 if none.
 */
static uint32_t table_largest_n(uint32_t n, uint64_t period_ns, uint64_t *period_out)
{
	uint32_t m;

	for (m = n - 1; m >= 2; m--) {
		uint64_t t = (uint64_t)(((unsigned __int128)period_ns * m + n - 1) / n);
		int s = rate_best_tick_shift(m, t, PACER_BACKEND_TABLE);
		struct pacer_rate r;

		if (s >= 0 && !pacer_rate_ticks(m, t, (uint32_t)s, PACER_RATE_TBL_MAX_SAT, &r) &&
		    rate_within(m, t, (uint32_t)s, &r, RATE_MIN_PERMILLE)) {
			*period_out = t;
			return m;
		}
	}
	return 0;
}

/*
 * N > 1 the backend cannot deliver within 1 % at any tick: what it can do
 * at best, and what to use instead.
 */
static int rate_refuse_backend(uint32_t n, uint64_t period_ns, uint32_t backend, char *err,
			       size_t len)
{
	char a[32], b[32], c[32], best[160] = "";
	int s = rate_best_tick_shift(n, period_ns, backend);
	struct pacer_rate r;

	format_duration(period_ns, a, sizeof(a));
	format_duration(period_ns / n, b, sizeof(b));
	if (s >= 0 && !pacer_rate_ticks(n, period_ns, (uint32_t)s, pacer_rate_max_sat(backend), &r))
		snprintf(best, sizeof(best), " (at best one per %s, %.1f %% of the rate)",
			 format_duration((uint64_t)pacer_rate_spacing(&r) << s, c, sizeof(c)),
			 rate_delivered_pct(n, period_ns, (uint32_t)s, &r));
	if (backend == PACER_BACKEND_SKETCH) {
		snprintf(err, len,
			 "--rate %u/%s: the sketch's cells tell %u ticks apart, too few for a burst of %u and then one per %s within 1 %%%s; use --backend table",
			 n, a, PACER_MAX_THRESH, n, b, best);
	} else {
		uint64_t t = 0;
		uint32_t m = table_largest_n(n, period_ns, &t);
		char alt[96] = "";

		if (m)
			snprintf(alt, sizeof(alt), "; the same spacing with bursts of up to %u fits: --rate %u/%s",
				 m, m, format_duration(t, c, sizeof(c)));
		snprintf(err, len,
			 "--rate %u/%s: the table's entries tell %u ticks apart, too few for a burst of %u and then one per %s within 1 %%%s%s",
			 n, a, PACER_RATE_TBL_MAX_SAT, n, b, best, alt);
	}
	return 2;
}

int rate_fit(uint32_t n, uint64_t period_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len)
{
	char a[32], b[32], c[64], d[32];
	uint64_t min_ns, max_ns;

	if (n > 1) {
		int best = rate_best_tick_shift(n, period_ns, backend);
		struct pacer_rate r;

		if (!pacer_rate_ticks(n, period_ns, tick_shift, pacer_rate_max_sat(backend), rate) &&
		    rate_within(n, period_ns, tick_shift, rate, RATE_MIN_PERMILLE))
			return 0;
		if (best < 0 || pacer_rate_ticks(n, period_ns, (uint32_t)best, pacer_rate_max_sat(backend), &r) ||
		    !rate_within(n, period_ns, (uint32_t)best, &r, RATE_MIN_PERMILLE))
			return rate_refuse_backend(n, period_ns, backend, err, len);
		/* The backend can, but not at this tick. */
		format_duration(period_ns, a, sizeof(a));
		format_duration(1ULL << tick_shift, b, sizeof(b));
		if (!pacer_rate_ticks(n, period_ns, tick_shift, pacer_rate_max_sat(backend), rate))
			snprintf(c, sizeof(c), "one per %s, %.1f %% of the rate",
				 format_duration((uint64_t)pacer_rate_spacing(rate) << tick_shift, d,
						 sizeof(d)),
				 rate_delivered_pct(n, period_ns, tick_shift, rate));
		else
			snprintf(c, sizeof(c), "its burst needs more than the %s's %u ticks",
				 backend_name(backend), pacer_rate_max_sat(backend));
		snprintf(err, len,
			 "--rate %u/%s does not fit tick %s on the %s (%s): it needs a tick of %s (within 1 %% of N/T)",
			 n, a, b, backend_name(backend), c,
			 format_duration(1ULL << pacer_default_rate_tick_shift(n, period_ns, backend), d,
					 sizeof(d)));
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
		 "rate %u per %s (GCRA: a burst of %u at once, then one per %s, %.2f %% of the rate; emission %u ticks, burst tolerance %u ticks of %s)",
		 c->rate_n, format_duration(c->interval_ns, a, sizeof(a)), pacer_rate_credits(r.sat, &r),
		 format_duration((uint64_t)pacer_rate_spacing(&r) << tick_shift, b, sizeof(b)),
		 rate_delivered_pct(c->rate_n, c->interval_ns, tick_shift, &r), r.emit, r.burst,
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
