// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include "ticks.h"
#include "backend.h"
#include "cli_values.h"
#include "pacer_names.h"
#include "pacer_ticks.h"

void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns)
{
	uint64_t q = 1ULL << tick_shift;

	/* Below 4 ticks the quantisation error would exceed 25 %. */
	*min_ns = 4 * q;
	*max_ns = (uint64_t)(PACER_MAX_THRESH - 1) * q;
}

uint32_t pacer_default_tick_shift(uint64_t interval_ns)
{
	uint32_t s = 0;

	while (s < PACER_TICK_SHIFT_MAX && (interval_ns + (1ULL << s) - 1) >> s > 47)
		s++;
	return s;
}

/* The share of N/T the CLI accepts a rate's ticks for, and the default tick's aim (per mille). */
#define RATE_MIN_PERMILLE 990
#define RATE_AIM_PERMILLE 995

/*
 * Whether --rate N/T (N > 1) at this tick delivers at least permille/1000
 * of N/T to a source that sends faster: one packet per spacing ticks
 * against T/N, i.e. 1000 T >= permille N spacing q.
 */
static int rate_within(uint32_t n, uint64_t interval_ns, uint32_t tick_shift,
		       const struct pacer_rate *r, unsigned permille)
{
	unsigned __int128 asked = (unsigned __int128)interval_ns * 1000;

	return asked >= (unsigned __int128)permille * n * pacer_rate_spacing(r) << tick_shift;
}

/* What a rate's ticks deliver, in % of N/T (for messages). */
static double rate_delivered_pct(uint32_t n, uint64_t interval_ns, uint32_t tick_shift,
				 const struct pacer_rate *r)
{
	return 100.0 * (double)interval_ns /
	       ((double)n * (double)pacer_rate_spacing(r) * (double)pacer_tick_ns(tick_shift));
}

/*
 * The tick at which the backend delivers N/T best (the coarsest of equals),
 * or -1 when no tick holds the burst.
 */
static int rate_best_tick_shift(uint32_t n, uint64_t interval_ns, const struct backend_desc *d)
{
	double best_pct = -1, pct;
	struct pacer_rate r;
	int best = -1;
	uint32_t s;

	for (s = 0; s <= PACER_TICK_SHIFT_MAX; s++) {
		if (pacer_rate_ticks(n, interval_ns, s, d->rate_max_sat, &r))
			continue;
		pct = rate_delivered_pct(n, interval_ns, s, &r);
		if (pct >= best_pct) {
			best_pct = pct;
			best = (int)s;
		}
	}
	return best;
}

/* Whether the backend delivers N/T within 1 % at its best tick. */
static int rate_deliverable(uint32_t n, uint64_t interval_ns, const struct backend_desc *d)
{
	int s = rate_best_tick_shift(n, interval_ns, d);
	struct pacer_rate r;

	return s >= 0 && !pacer_rate_ticks(n, interval_ns, (uint32_t)s, d->rate_max_sat, &r) &&
	       rate_within(n, interval_ns, (uint32_t)s, &r, RATE_MIN_PERMILLE);
}

/*
 * N > 1: the coarsest tick that delivers 99.5 % of N/T and holds the burst,
 * else the one that delivers most.  Coarse ticks keep the ages a full burst
 * needs few (and the table's sweep, which visits every line once per
 * PACER_TBL_SWEEP_TICKS, slow); the spacing needs the tick fine against T/N
 * (pacer_rate.h).  N = 1: the interval's, T in about 47 ticks.
 */
uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t interval_ns, uint32_t backend)
{
	const struct backend_desc *d = backend_of(backend);
	struct pacer_rate r;
	int chosen = -1;
	uint32_t s;

	if (n <= 1 || !d) /* an unknown backend: rate_fit refuses it */
		return pacer_default_tick_shift(interval_ns);
	for (s = 0; s <= PACER_TICK_SHIFT_MAX; s++)
		if (!pacer_rate_ticks(n, interval_ns, s, d->rate_max_sat, &r) &&
		    rate_within(n, interval_ns, s, &r, RATE_AIM_PERMILLE))
			chosen = (int)s;
	if (chosen < 0)
		chosen = rate_best_tick_shift(n, interval_ns, d);
	return chosen < 0 ? pacer_default_tick_shift(interval_ns / n) : (uint32_t)chosen;
}

/*
 * The largest N' < n for which the backend delivers N'/T' within 1 %, with
 * T' = T N'/n rounded up (the same spacing, never a faster rate); 0 if none.
 */
static uint32_t rate_largest_n(uint32_t n, uint64_t interval_ns, const struct backend_desc *d,
			       uint64_t *interval_out)
{
	uint32_t m;

	for (m = n - 1; m >= 2; m--) {
		uint64_t t = (uint64_t)(((unsigned __int128)interval_ns * m + n - 1) / n);

		if (rate_deliverable(m, t, d)) {
			*interval_out = t;
			return m;
		}
	}
	return 0;
}

/*
 * N > 1 the backend cannot deliver within 1 % at any tick: what it can do
 * at best, a smaller burst at the same spacing if one fits, and the
 * backend's own hint (the sketch: use the table).
 */
static int rate_refuse_backend(uint32_t n, uint64_t interval_ns, const struct backend_desc *d,
			       char *err, size_t len)
{
	char a[32], b[32], c[32], best[160] = "", alt[96] = "";
	int s = rate_best_tick_shift(n, interval_ns, d);
	uint32_t m = 0;
	struct pacer_rate r;
	uint64_t t = 0;

	format_duration(interval_ns, a, sizeof(a));
	format_duration(interval_ns / n, b, sizeof(b));
	if (s >= 0 && !pacer_rate_ticks(n, interval_ns, (uint32_t)s, d->rate_max_sat, &r))
		snprintf(best, sizeof(best), " (at best one per %s, %.1f %% of the rate)",
			 format_duration(pacer_ticks_ns(pacer_rate_spacing(&r), (uint32_t)s), c,
					 sizeof(c)),
			 rate_delivered_pct(n, interval_ns, (uint32_t)s, &r));
	if (!d->rate_n_hint[0])
		m = rate_largest_n(n, interval_ns, d, &t);
	if (m)
		snprintf(alt, sizeof(alt), "; the same spacing with bursts of up to %u fits: --rate %u/%s",
			 m, m, format_duration(t, c, sizeof(c)));
	snprintf(err, len,
		 "--rate %u/%s: the %s tells %u ticks apart, too few for a burst of %u and then one per %s within 1 %%%s%s%s%s",
		 n, a, d->noun, d->rate_max_sat, n, b, best, alt, d->rate_n_hint[0] ? "; " : "",
		 d->rate_n_hint);
	return 2;
}

int rate_fit(uint32_t n, uint64_t interval_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len)
{
	const struct backend_desc *d = backend_of(backend);
	char a[32], b[32], c[64], e[32];
	uint64_t min_ns, max_ns;

	if (!d) {
		snprintf(err, len, "backend %u is not sketch (0), table (1) or dense (2)", backend);
		return 2;
	}
	if (n > 1) {
		if (!pacer_rate_ticks(n, interval_ns, tick_shift, d->rate_max_sat, rate) &&
		    rate_within(n, interval_ns, tick_shift, rate, RATE_MIN_PERMILLE))
			return 0;
		if (!rate_deliverable(n, interval_ns, d))
			return rate_refuse_backend(n, interval_ns, d, err, len);
		/* The backend can, but not at this tick. */
		format_duration(interval_ns, a, sizeof(a));
		format_duration(pacer_tick_ns(tick_shift), b, sizeof(b));
		if (!pacer_rate_ticks(n, interval_ns, tick_shift, d->rate_max_sat, rate))
			snprintf(c, sizeof(c), "one per %s, %.1f %% of the rate",
				 format_duration(pacer_ticks_ns(pacer_rate_spacing(rate), tick_shift), e,
						 sizeof(e)),
				 rate_delivered_pct(n, interval_ns, tick_shift, rate));
		else
			snprintf(c, sizeof(c), "its burst needs more than the %s's %u ticks", d->noun,
				 d->rate_max_sat);
		snprintf(err, len,
			 "--rate %u/%s does not fit tick %s on the %s (%s): it needs a tick of %s (within 1 %% of N/T)",
			 n, a, b, d->noun, c,
			 format_duration(pacer_tick_ns(pacer_default_rate_tick_shift(n, interval_ns, backend)),
					 e, sizeof(e)));
		return 2;
	}
	interval_range(tick_shift, &min_ns, &max_ns);
	*rate = pacer_rate_of(pacer_thresh_ticks(interval_ns, tick_shift), 0);
	if (interval_ns >= min_ns && interval_ns <= max_ns && rate->thresh)
		return 0;
	snprintf(err, len, "--interval %s does not fit tick %s: with this tick the interval must be within %s",
		 format_duration(interval_ns, a, sizeof(a)), format_duration(1ULL << tick_shift, b, sizeof(b)),
		 format_duration_range(min_ns, max_ns, c, sizeof(c)));
	return 2;
}

int ticks_choose(uint32_t n, uint64_t interval_ns, uint64_t tick_ns, uint32_t backend,
		 uint32_t *tick_shift, struct pacer_rate *rate, char *err, size_t len)
{
	n = n ? n : 1;
	*tick_shift = tick_ns ? (uint32_t)pacer_tick_shift_of(tick_ns) /* bounded by parse */
			      : pacer_default_rate_tick_shift(n, interval_ns, backend);
	return rate_fit(n, interval_ns, *tick_shift, backend, rate, err, len);
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
		 format_duration(pacer_ticks_ns(pacer_rate_spacing(&r), tick_shift), b, sizeof(b)),
		 rate_delivered_pct(c->rate_n, c->interval_ns, tick_shift, &r), r.emit, r.burst,
		 format_duration(1ULL << tick_shift, d, sizeof(d)));
	return buf;
}

int gap_below_clock(uint32_t clock, uint32_t n, uint64_t interval_ns, uint64_t clock_res_ns)
{
	return clock != PACER_CLOCK_PRECISE && interval_ns / (n ? n : 1) < clock_res_ns;
}

/* Below 4 ticks a limit's quantisation error would exceed 25 % (interval_range). */
#define LIMIT_MIN_TICKS 4

void limit_range(uint32_t tick_shift, uint32_t backend, uint64_t *min_ns, uint64_t *max_ns)
{
	const struct backend_desc *d = backend_of(backend);

	interval_range(tick_shift, min_ns, max_ns);
	if (d && d->rate_max_sat > PACER_MAX_THRESH)
		*max_ns = (uint64_t)(d->rate_max_sat - 1) << tick_shift;
}

int limit_fit(uint32_t n, uint64_t interval_ns, uint32_t tick_shift, uint32_t backend,
	      struct pacer_rate *rate, char *err, size_t len)
{
	const struct backend_desc *d = backend_of(backend);
	uint64_t min_ns, max_ns;
	char a[32], b[32], c[64];

	if (n > 1 || !d || d->rate_max_sat <= PACER_MAX_THRESH)
		return rate_fit(n, interval_ns, tick_shift, backend, rate, err, len);
	limit_range(tick_shift, backend, &min_ns, &max_ns);
	if (interval_ns >= min_ns && interval_ns <= max_ns &&
	    !pacer_rate_ticks(1, interval_ns, tick_shift, d->rate_max_sat, rate))
		return 0;
	snprintf(err, len, "interval %s does not fit tick %s on the %s: with this tick an interval must be within %s",
		 format_duration(interval_ns, a, sizeof(a)), format_duration(1ULL << tick_shift, b, sizeof(b)),
		 d->noun, format_duration_range(min_ns, max_ns, c, sizeof(c)));
	return 2;
}

/* The ticks a limit fits at: [*lo, *hi]; 0, or -1 when none. */
static int limit_ticks(const struct limit_req *l, uint32_t backend, uint32_t *lo, uint32_t *hi)
{
	struct pacer_rate r;
	char e[8];
	int found = 0;
	uint32_t s;

	for (s = 0; s <= PACER_TICK_SHIFT_MAX; s++)
		if (!limit_fit(l->n ? l->n : 1, l->interval_ns, s, backend, &r, e, sizeof(e))) {
			if (!found)
				*lo = s;
			*hi = s;
			found = 1;
		}
	return found ? 0 : -1;
}

/* "rate 20/1s" or "interval 100ms". */
static const char *limit_text(const struct limit_req *l, char *buf, size_t len)
{
	char d[32];

	if (l->n > 1)
		snprintf(buf, len, "rate %u/%s", l->n, format_duration(l->interval_ns, d, sizeof(d)));
	else
		snprintf(buf, len, "interval %s", format_duration(l->interval_ns, d, sizeof(d)));
	return buf;
}

int limits_choose_tick(const struct limit_req *l, int n, uint64_t tick_ns, uint32_t backend,
		       uint32_t *tick_shift, char *err, size_t len)
{
	const struct backend_desc *d = backend_of(backend);
	uint32_t lo = 0, hi = PACER_TICK_SHIFT_MAX, want = 0, s, best = 0;
	uint32_t llo = 0, lhi = 0;
	int i, coarse = 0, fine = 0, found = 0;
	uint64_t gap, best_gap = UINT64_MAX;
	struct pacer_rate r;
	char why[320], a[48], b[48];

	if (!d) {
		snprintf(err, len, "backend %u is not sketch (0), table (1) or dense (2)", backend);
		return 2;
	}
	if (tick_ns) {
		*tick_shift = (uint32_t)pacer_tick_shift_of(tick_ns);
		for (i = 0; i < n; i++)
			if (limit_fit(l[i].n ? l[i].n : 1, l[i].interval_ns, *tick_shift, backend, &r, why,
				      sizeof(why))) {
				snprintf(err, len, "%s: %s", l[i].who, why);
				return 2;
			}
		return 0;
	}
	for (i = 0; i < n; i++) {
		uint32_t dflt = pacer_default_rate_tick_shift(l[i].n ? l[i].n : 1, l[i].interval_ns, backend);

		if (limit_ticks(&l[i], backend, &llo, &lhi)) {
			/* No tick at all: the limit's own reason, at the tick it would want. */
			limit_fit(l[i].n ? l[i].n : 1, l[i].interval_ns, dflt, backend, &r, why, sizeof(why));
			snprintf(err, len, "%s: %s", l[i].who, why);
			return 2;
		}
		if (llo > lo || !i) {
			lo = llo;
			coarse = i;
		}
		if (lhi < hi || !i) {
			hi = lhi;
			fine = i;
		}
		want = dflt > want ? dflt : want;
	}
	for (s = lo; s <= hi; s++) {
		for (i = 0; i < n; i++)
			if (limit_fit(l[i].n ? l[i].n : 1, l[i].interval_ns, s, backend, &r, why, sizeof(why)))
				break;
		if (i < n)
			continue;
		gap = s > want ? s - want : want - s;
		if (gap < best_gap) {
			best_gap = gap;
			best = s;
			found = 1;
		}
	}
	if (found) {
		*tick_shift = best;
		return 0;
	}
	snprintf(err, len,
		 "%s (%s) and %s (%s) need different ticks: at one tick the %s holds limits from %u to %u ticks%s",
		 l[fine].who, limit_text(&l[fine], a, sizeof(a)), l[coarse].who,
		 limit_text(&l[coarse], b, sizeof(b)), d->noun, LIMIT_MIN_TICKS,
		 (d->rate_max_sat > PACER_MAX_THRESH ? d->rate_max_sat : PACER_MAX_THRESH) - 1,
		 d->rate_max_sat > PACER_MAX_THRESH
			 ? "; bring the limits closer together"
			 : " (its 8-bit ticks); 'backend = table' (--backend table) holds limits 4096x apart");
	return 2;
}
