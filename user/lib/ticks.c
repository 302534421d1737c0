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

uint32_t pacer_default_rate_tick_shift(uint32_t n, uint64_t interval_ns, uint32_t backend)
{
	const struct backend_desc *d = backend_of(backend);
	uint32_t s = pacer_default_tick_shift(interval_ns / (n ? n : 1));
	struct pacer_rate r;

	if (n <= 1 || !d)
		return s; /* an unknown backend: rate_fit refuses it */
	while (s < PACER_TICK_SHIFT_MAX &&
	       pacer_rate_ticks(n, interval_ns, s, d->rate_max_sat, &r))
		s++;
	return s;
}

int rate_fit(uint32_t n, uint64_t interval_ns, uint32_t tick_shift, uint32_t backend,
	     struct pacer_rate *rate, char *err, size_t len)
{
	const struct backend_desc *d = backend_of(backend);
	char a[32], b[32], c[64];
	uint64_t min_ns, max_ns;

	if (!d) {
		snprintf(err, len, "backend %u is neither sketch (0) nor table (1)", backend);
		return 2;
	}
	if (n > 1) {
		if (!pacer_rate_ticks(n, interval_ns, tick_shift, d->rate_max_sat, rate))
			return 0;
		if (n > d->rate_max_n) {
			snprintf(err, len,
				 "--rate %u/%s: the %s's cells tell %u ticks apart, so it holds N up to %u at any tick; %s",
				 n, format_duration(interval_ns, a, sizeof(a)), d->name, d->rate_max_sat,
				 d->rate_max_n, d->rate_n_hint);
			return 2;
		}
		snprintf(err, len,
			 "--rate %u/%s does not fit tick %s on the %s: T/N must be at least one tick and T at most about %u ticks (%s)",
			 n, format_duration(interval_ns, a, sizeof(a)),
			 format_duration(1ULL << tick_shift, b, sizeof(b)), d->name, d->rate_max_sat,
			 d->rate_hint);
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
		 "rate %u per %s (GCRA: a burst of up to %u at once, then one per %s; emission %u ticks, burst tolerance %u ticks of %s)",
		 c->rate_n, format_duration(c->interval_ns, a, sizeof(a)), pacer_rate_credits(r.sat, &r),
		 format_duration(pacer_ticks_ns(r.emit, tick_shift), b, sizeof(b)), r.emit, r.burst,
		 format_duration(1ULL << tick_shift, d, sizeof(d)));
	return buf;
}

int gap_below_clock(uint32_t clock, uint32_t n, uint64_t interval_ns, uint64_t clock_res_ns)
{
	return clock != PACER_CLOCK_PRECISE && interval_ns / (n ? n : 1) < clock_res_ns;
}
