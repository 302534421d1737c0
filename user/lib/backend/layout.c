// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>
#include "layout.h"
#include "backend.h"
#include "ticks.h"
#include "cli_values.h"
#include "pacer_names.h"
#include "pacer_sketch.h"
#include "pacer_table.h"
#include "pacer_rate.h"
#include "pacer_place.h"

static int fail(char *err, size_t len, const char *fmt, const char *a, uint64_t b, uint64_t c)
{
	snprintf(err, len, fmt, a, (unsigned long long)b, (unsigned long long)c);
	return 2;
}

/*
 * Lines of the sketch or tables, and its rows and cell layout in lay; a
 * backend of any line count (dense) sets lay->lines, lines_log2 is then its
 * ceiling's.
 */
static int geometry(const struct layout_req *r, struct pacer_layout *lay, char *err, size_t len)
{
	const struct backend_desc *d = backend_of(r->backend);
	uint64_t lines;
	int lg;

	if (!d) {
		snprintf(err, len, "backend %u is not sketch (0), table (1) or dense (2)", r->backend);
		return 2;
	}
	lay->lines = 0;
	if (d->lines(r->width, r->rows, r->kind, lay, &lines, err, len))
		return 2;
	if (lay->lines)
		for (lg = 0; (1ULL << lg) < lines; lg++)
			;
	else
		lg = log2_exact(lines);
	if (lg < 0 || PACER_LAYOUT_LINES(*lay) > UINT32_MAX / 2)
		return fail(err, len, "%ssketch of %llu rows x %llu cells is too large for one map", "",
			    r->rows, r->width);
	lay->lines_log2 = (uint32_t)lg;
	lay->copies = r->placement == PACER_PLACEMENT_PERCPU ? r->ncpus : 1;
	if (PACER_LAYOUT_LINES(*lay) * lay->copies > UINT32_MAX)
		return fail(err, len, "%s of width %llu on %llu CPUs is too large for one map",
			    backend_name(lay->backend), r->width, lay->copies);
	return 0;
}

int layout_check_geometry(const struct layout_req *r, char *err, size_t len)
{
	struct pacer_layout lay = { .rows = r->rows, .kind = r->kind, .backend = r->backend };

	return geometry(r, &lay, err, len);
}

int layout_build(const struct layout_req *r, struct pacer_layout *lay, struct pacer_rate *rate,
		 char *err, size_t len)
{
	const struct backend_desc *d;
	int ret;

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
	if (r->wide_limit && r->tick_ns) {
		lay->tick_shift = (uint32_t)pacer_tick_shift_of(r->tick_ns); /* bounded by parse */
		ret = limit_fit(r->rate_n ? r->rate_n : 1, r->interval_ns, lay->tick_shift,
				    r->backend, rate, err, len);
	} else {
		ret = ticks_choose(r->rate_n, r->interval_ns, r->tick_ns, r->backend,
				       &lay->tick_shift, rate, err, len);
	}
	d = backend_of(r->backend);
	if (!ret && d->layout_check)
		ret = d->layout_check(lay, err, len);
	return ret;
}

bool layout_readable(const struct pacer_layout *lay)
{
	return lay->magic == PACER_LAYOUT_MAGIC && lay->abi_version == PACER_ABI_VERSION &&
	       lay->tick_shift <= PACER_TICK_SHIFT_MAX && lay->backend < PACER_BACKEND_MAX;
}
