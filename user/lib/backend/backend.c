// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The table of backends (backend.h); one line per backend. */
#include "backend.h"

static const struct backend_desc *const backends[PACER_BACKEND_MAX] = {
	[PACER_BACKEND_SKETCH] = &backend_sketch,
	[PACER_BACKEND_TABLE] = &backend_table,
	[PACER_BACKEND_DENSE] = &backend_dense,
};

const struct backend_desc *backend_of(uint32_t backend)
{
	return backend < PACER_BACKEND_MAX ? backends[backend] : NULL;
}

uint64_t backend_fresh_sources(const struct pacer_layout *lay, const void *mem, uint64_t nlines,
			       uint64_t tick, uint32_t thresh)
{
	const struct backend_desc *d = backend_of(lay->backend);
	uint64_t n = 0, i;

	if (!d || !d->fresh_in_line)
		return 0;
	for (i = 0; i < nlines; i++)
		n += d->fresh_in_line((const char *)mem + i * PACER_LINE_BYTES, tick, thresh);
	return d->entries_per_source_is_rows && lay->rows ? n / lay->rows : n;
}
