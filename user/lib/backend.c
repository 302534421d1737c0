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
