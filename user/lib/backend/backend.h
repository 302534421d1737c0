/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The backend seam: what userspace knows of each structure that remembers
 * sources (enum pacer_backend), looked up once by backend_of() and then
 * called through, so no caller tests which backend it has.  One descriptor
 * per backend (backend_sketch.c; backend_tables.c has both tables'): its geometry and limits,
 * the --width of a geometry, its simulator and false-drop model (sizing),
 * the lines reports and status print.  The datapath keeps its compile-time
 * branch (bpf/xdp_pacer.bpf.c, include/pacer_rate.h's pacer_rate_max_sat),
 * where the verifier needs constants.
 *
 * A new backend: its datapath header and branch, a descriptor file here
 * with a line in backend.c's table, and a line in each verb's table that
 * reads the live map or models it (query.c, model.c); docs/hacking.md.
 */
#ifndef PACER_BACKEND_H
#define PACER_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"

/*
 * What a simulator copy is built with (rows and kind: the sketch's; on_full:
 * the tables'; lines: the dense table's line count, 0 for the others).
 */
struct backend_sim_cfg {
	uint32_t rows, kind, lines_log2, tick_shift, thresh, policy, on_full;
	uint32_t lines;
	const __u64 *key;
};

struct backend_desc {
	const char *name;          /* as --backend spells it */
	const char *noun;          /* what messages call it: "the %s" */
	int sized_by_rows;         /* --rows and --layout shape it (else --width alone) */
	int takes_on_full;         /* --on-full applies */
	uint32_t max_rows;         /* rows a geometry can have */
	uint32_t rate_max_n;       /* largest N of --rate N/T it can deliver (1: --interval only) */
	uint32_t rate_max_sat;     /* largest age its cells tell apart for a rate */
	const char *rate_n_hint;   /* what to try when N is above rate_max_n */
	const char *rate_hint;     /* what to try when N/T does not fit a tick */
	const char *unseen_note;   /* query: the condition on "a packet now would pass" */
	/*
	 * Its geometry is any number of lines (layout.lines), not a power of
	 * two: the functions below take that count as `lines` (the others get
	 * 0 and go by lines_log2), and sizing steps in fractions of an octave.
	 */
	int any_line_count;

	/*
	 * Lines for load's --width (and --rows, --layout), and the rows and
	 * kind the map has into lay: 0, or 2 with why (naming the option) in err.
	 * A backend of any line count (dense) sets lay->lines too: lines_log2 is
	 * then its ceiling's log2, else lines must be a power of two.
	 */
	int (*lines)(uint64_t width, uint32_t rows, uint32_t kind, struct pacer_layout *lay,
		     uint64_t *lines, char *err, size_t len);
	/* A recorded geometry's fault (buf, returned), or NULL if it is one load could make. */
	const char *(*check)(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
			     char *buf, size_t len);
	/* --width of a geometry: the sketch's cells per row, the tables' entries. */
	uint64_t (*width)(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines);
	/* Largest lines_log2 the loader accepts. */
	uint32_t (*max_lines_log2)(uint32_t kind, uint32_t rows);
	/* Whether, in this --on-full mode, a fresh entry can be replaced (each a false pass). */
	int (*evicts)(uint32_t on_full);
	/* "4 rows x 1048576 cells (rows layout)" / "table of 65536 entries, on full: drop". */
	const char *(*report_str)(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
				  uint32_t on_full, char *buf, size_t len);
	/* status and load: "4 rows x 1048576 cells, rows layout" / "65536 entries, on full: drop". */
	const char *(*live_str)(uint32_t rows, uint32_t kind, uint32_t lines_log2, uint32_t lines,
				uint32_t on_full, char *buf, size_t len);
	/* The options that load this geometry: "--rows 4 --width 1024 --layout rows". */
	const char *(*load_args)(uint32_t rows, uint32_t kind, uint64_t width, uint32_t on_full,
				 char *buf, size_t len);

	/* The simulator (sizing): sim_size bytes per copy. */
	size_t sim_size;
	int (*sim_init)(void *sim, const struct backend_sim_cfg *c);
	int (*sim_packet)(void *sim, uint64_t hash, uint64_t now_ns);
	uint64_t (*sim_evictions)(const void *sim);
	void (*sim_free)(void *sim);
	/* Sources per line where sizing's sweep starts (narrower: everything collides). */
	uint32_t sweep_from_per_line;
	/* Modelled error rate for n sources per interval (the table: overflow plus collisions). */
	double (*model_rate)(uint32_t kind, uint32_t rows, uint32_t lines_log2, uint32_t lines,
			     double n);
	/*
	 * A built layout's fault no single option shows (the dense table: its
	 * sweep cannot keep pace at this tick), in err: 2; 0 if none.  NULL: none.
	 */
	int (*layout_check)(const struct pacer_layout *lay, char *err, size_t len);
	/*
	 * Entries of one 64-byte line that hold a source seen less than
	 * thresh ticks before tick (the sketch: cells; the tables: entries),
	 * and how many entries one source takes (the sketch: its rows).
	 */
	uint32_t (*fresh_in_line)(const void *line, uint64_t tick, uint32_t thresh);
	int entries_per_source_is_rows;
};

/*
 * A descriptor's functions by naming convention: backend_NAME.c defines
 * NAME_lines, NAME_check, ... NAME_model_rate, and its descriptor takes
 * them all with BACKEND_FUNCS(NAME) after its own values.
 */
#define BACKEND_FUNCS(b)                                                               \
	.lines = b##_lines, .check = b##_check, .width = b##_width,                     \
	.max_lines_log2 = b##_max_lines_log2, .evicts = b##_evicts,                     \
	.report_str = b##_report_str, .live_str = b##_live_str, .load_args = b##_load_args, \
	.sim_size = sizeof(struct b##_sim), .sim_init = b##_init, .sim_packet = b##_packet, \
	.sim_evictions = b##_evictions, .sim_free = b##_free, .model_rate = b##_model_rate

extern const struct backend_desc backend_sketch, backend_table, backend_dense;

/* The descriptor of a backend; NULL outside enum pacer_backend. */
const struct backend_desc *backend_of(uint32_t backend);

/*
 * About how many sources the state map's lines (lay's, every copy, nlines
 * of 64 bytes at mem) hold that were seen less than thresh ticks before
 * tick: what discarding the state loses.
 */
uint64_t backend_fresh_sources(const struct pacer_layout *lay, const void *mem, uint64_t nlines,
			       uint64_t tick, uint32_t thresh);

#endif
