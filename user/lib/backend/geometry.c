// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "geometry.h"
#include "pacer_sketch.h"

uint64_t geom_bytes(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t placement,
		    uint32_t ncpus)
{
	uint64_t b = pacer_total_lines(kind, rows, lines_log2) * PACER_LINE_BYTES;

	return placement == PACER_PLACEMENT_PERCPU ? b * (ncpus ? ncpus : 1) : b;
}

uint64_t geom_bytes_lines(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			  uint32_t placement, uint32_t ncpus)
{
	uint64_t b = (uint64_t)lines * PACER_LINE_BYTES;

	if (!lines)
		return geom_bytes(kind, rows, lines_log2, placement, ncpus);
	return placement == PACER_PLACEMENT_PERCPU ? b * (ncpus ? ncpus : 1) : b;
}

uint64_t geom_width_cells(uint32_t kind, uint32_t rows, uint32_t lines_log2)
{
	uint64_t w = (uint64_t)PACER_LINE_BYTES << lines_log2;

	return kind == PACER_LAYOUT_BLOCKED ? w / rows : w;
}

uint32_t geom_max_lines_log2(uint32_t kind, uint32_t rows)
{
	uint32_t l = kind == PACER_LAYOUT_ROWS ? PACER_ROWS_MAX_LINES_LOG2 : 30;

	/* The loader keeps one map under 2^31 lines. */
	while (l && pacer_total_lines(kind, rows, l) > UINT32_MAX / 2)
		l--;
	return l;
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
