/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tables' datapath (`load --backend table` and `dense`): the glue of
 * two_choice.h once per slot layout, table_* over include/pacer_table.h's
 * and dense_* over include/pacer_dense.h's; the logic, shared placement's
 * exclusive admission included, is the engine's (include/pacer_two_choice.h).
 */
#ifndef PACER_BPF_TABLE_H
#define PACER_BPF_TABLE_H

#include "config.h"
#include "pacer_table.h"
#include "pacer_dense.h"

/* The table: a power of two of lines, picked by disjoint bits of the hash. */
#define table_lines_of(h, idx) pacer_tbl_lines(h, pacer_layout.lines_log2, idx)
#define TCB_PREFIX table_
#define TCB_ENGINE pacer_tbl_
#define TCB_LINE struct pacer_tbl_line
#define TCB_LINES table_lines_of
#include "two_choice.h"

/* The dense table: any number of lines, picked by multiply-shift. */
#define dense_lines_of(h, idx) pacer_dense_lines(h, pacer_layout.lines, idx)
#define TCB_PREFIX dense_
#define TCB_ENGINE pacer_dense_
#define TCB_LINE struct pacer_dense_line
#define TCB_LINES dense_lines_of
#include "two_choice.h"

#endif /* PACER_BPF_TABLE_H */
