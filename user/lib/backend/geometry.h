/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A map's geometry in the CLI's terms: the lines of kind/rows/lines_log2 as
 * memory and as --width.  Shared by load, status, the exporter and sizing.
 */
#ifndef PACER_GEOMETRY_H
#define PACER_GEOMETRY_H

#include <stdint.h>

/* Map bytes of a geometry, every per-CPU copy included. */
uint64_t geom_bytes(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t placement,
		    uint32_t ncpus);
/*
 * The same for a geometry that may have any line count: lines, when not 0
 * (the dense table's, pacer_layout.lines), else those of kind/rows/lines_log2.
 */
uint64_t geom_bytes_lines(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			  uint32_t placement, uint32_t ncpus);
/* The CLI's --width (cells per row) for a geometry. */
uint64_t geom_width_cells(uint32_t kind, uint32_t rows, uint32_t lines_log2);
/* log2 of a power of two, -1 for anything else. */
int log2_exact(uint64_t v);
/* Largest lines_log2 the loader accepts for a geometry (one map under 2^31 lines). */
uint32_t geom_max_lines_log2(uint32_t kind, uint32_t rows);

#endif
