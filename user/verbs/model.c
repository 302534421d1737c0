// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer model: the false-drop model for a sketch geometry, for sizing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "json_writer.h"
#include "opts.h"
#include "cli_values.h"
#include "sketch_sim.h"
#include "two_choice_sim.h"

enum { ARRIVALS_RANDOM, ARRIVALS_PACED };

static const struct opt_choice arrival_choices[] = {
	{ "random", ARRIVALS_RANDOM },
	{ "paced", ARRIVALS_PACED },
	{ NULL, 0 },
};

struct model_opts {
	uint64_t n, rows, width;
	uint32_t kind, backend, arrivals;
	double target;
	bool n_set, json, arrivals_set, rows_set, layout_set;
};

static const struct opt_spec model_specs[] = {
	{ .name = "sources", .type = OPT_U64, .flags = OPT_REQUIRED, .arg = "N", .min = 1,
	  .max = 1ULL << 40, OPT_FIELD(struct model_opts, n), OPT_GIVEN(struct model_opts, n_set),
	  .help = "distinct sources active per interval" },
	{ .name = "rows", .type = OPT_U64, .arg = "D", .min = 1, .max = PACER_MAX_ROWS, .dflt = "4",
	  OPT_FIELD(struct model_opts, rows), OPT_GIVEN(struct model_opts, rows_set),
	  .help = "sketch rows" },
	{ .name = "width", .type = OPT_U64, .arg = "W", .min = PACER_MIN_WIDTH,
	  .max = PACER_MAX_WIDTH, .dflt = "1048576", OPT_FIELD(struct model_opts, width),
	  .help = "sketch: cells per row; table: entries (powers of two); dense: entries" },
	{ .name = "layout", .type = OPT_ENUM, .arg = "rows|blocked", .lookup = parse_layout,
	  .dflt = "rows", OPT_FIELD(struct model_opts, kind), OPT_GIVEN(struct model_opts, layout_set),
	  .help = "sketch layout" },
	{ .name = "backend", .type = OPT_ENUM, .arg = "sketch|table|dense", .lookup = parse_backend,
	  .dflt = "sketch", OPT_FIELD(struct model_opts, backend), .help = "what is modelled" },
	{ .name = "arrivals", .type = OPT_ENUM, .choices = arrival_choices, .dflt = "random",
	  OPT_FIELD(struct model_opts, arrivals), OPT_GIVEN(struct model_opts, arrivals_set),
	  .help = "tables: random (each source's packets at random times; the steady state)\n"
		  "or paced (each source once per period under two intervals, keeping its entry)" },
	{ .name = "target-false-drop", .type = OPT_DECIMAL, .flags = OPT_MIN_OPEN | OPT_MAX_OPEN,
	  .arg = "P", .dmin = 0, .dmax = 1, OPT_FIELD(struct model_opts, target),
	  .why = "expected a probability in (0, 1)",
	  .help = "list the smallest geometry that meets false-drop rate P" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct model_opts, json),
	  .help = "JSON instead of the text" },
	{ 0 },
};

static const struct opt_verb model_verb = {
	.name = "model",
	.synopsis = "--sources N [--rows D] [--width W] [--layout rows|blocked]\n"
		    "                        [--backend sketch|table|dense] [--arrivals random|paced]\n"
		    "                        [--target-false-drop P] [--json]",
	.intro = "Modelled false-drop rate for N distinct sources active per interval on a\n"
		 "sketch of D rows x W cells (the layout's own formula; see docs/design.md).\n"
		 "With --target-false-drop P, list for each row count the smallest width that\n"
		 "meets P.  --backend table: N sources admitted per interval at random times on\n"
		 "a table of W entries, at its steady state (entries live until they expire):\n"
		 "false drops in one-sided mode (overflow + fingerprint collisions), and in\n"
		 "opposite mode (collisions) with the share of admissions that evict a fresh\n"
		 "entry; --arrivals paced: N strictly paced sources, each keeping its entry\n"
		 "(all N held at once).  With --target-false-drop P, the smallest power-of-two\n"
		 "table whose one-sided rate meets P.  --backend dense: the same for the dense\n"
		 "table of W entries (rounded up to lines of 24, any number of lines, 2.67 bytes\n"
		 "an entry, 13-bit fingerprints); with --target-false-drop P, the smallest line\n"
		 "count that meets P.\n",
	.opts = model_specs,
};

static int lines_log2_for(uint32_t kind, uint32_t rows, uint64_t width)
{
	uint64_t lines = width / PACER_LINE_BYTES * (kind == PACER_LAYOUT_BLOCKED ? rows : 1);
	int lg = 0;

	while ((1ULL << lg) < lines)
		lg++;
	return (1ULL << lg) == lines ? lg : -1;
}

static void print_json(uint64_t n, uint64_t rows, uint64_t width, uint32_t kind, double p)
{
	struct json_writer w;

	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "sources", n);
	jsonw_uint_field(&w, "rows", rows);
	jsonw_uint_field(&w, "width", width);
	jsonw_string_field(&w, "layout", layout_name(kind));
	jsonw_float_field_fmt(&w, "false_drop", "%.6g", p);
	jsonw_uint_field(&w, "bytes", rows * width);
	jsonw_float_field_fmt(&w, "bytes_per_source", "%.3f", (double)(rows * width) / (double)n);
	jsonw_end_object(&w);
}

static void print_table_json(uint64_t n, uint64_t entries, uint32_t lg, double overflow, double collision)
{
	struct json_writer w;

	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "sources", n);
	jsonw_string_field(&w, "backend", "table");
	jsonw_uint_field(&w, "entries", entries);
	jsonw_float_field_fmt(&w, "false_drop", "%.6g", overflow + collision);
	jsonw_float_field_fmt(&w, "opposite_false_drop", "%.6g", collision);
	jsonw_float_field_fmt(&w, "opposite_evict", "%.6g", overflow);
	jsonw_uint_field(&w, "bytes", table_bytes(lg));
	jsonw_float_field_fmt(&w, "bytes_per_source", "%.3f", (double)table_bytes(lg) / (double)n);
	jsonw_end_object(&w);
}

/* The table's model for the arrivals asked for. */
static void table_errors(uint32_t arrivals, uint32_t lg, double n, double *overflow, double *collision)
{
	if (arrivals == ARRIVALS_PACED)
		table_model_fill(lg, n, overflow, collision);
	else
		table_model(lg, n, overflow, collision);
}

static void table_line(uint64_t n, uint64_t entries, uint32_t arrivals, bool json)
{
	uint32_t lg = 0;
	double overflow, collision;
	char mb[32];

	while ((uint64_t)PACER_TBL_WAYS << lg < entries)
		lg++;
	table_errors(arrivals, lg, (double)n, &overflow, &collision);
	if (json)
		print_table_json(n, entries, lg, overflow, collision);
	else
		printf("%llu sources, table of %llu entries: one-sided false drops %.4f%%; "
		       "evict-oldest false drops %.4f%% and %.4f%% of admissions evict a fresh entry; "
		       "%s per copy, %.2f bytes per source\n",
		       (unsigned long long)n, (unsigned long long)entries, 100 * (overflow + collision),
		       100 * collision, 100 * overflow, format_bytes(table_bytes(lg), mb, sizeof(mb)),
		       (double)table_bytes(lg) / (double)n);
}

/* The table's sizing: one line for --width, or the smallest table meeting --target. */
static int table_sizing(uint64_t n, uint64_t width, uint32_t arrivals, double target, bool json)
{
	uint64_t w;

	if (width < 2 * PACER_TBL_WAYS || width > (uint64_t)PACER_TBL_WAYS << PACER_TBL_MAX_LINES_LOG2) {
		pr_err("--width %llu: a table takes 32 to 268435456 entries", (unsigned long long)width);
		return 2;
	}
	if (!target) {
		table_line(n, width, arrivals, json);
		return 0;
	}
	for (w = 2 * PACER_TBL_WAYS; w <= (uint64_t)PACER_TBL_WAYS << PACER_TBL_MAX_LINES_LOG2; w <<= 1) {
		uint32_t lg = 0;
		double overflow, collision;

		while ((uint64_t)PACER_TBL_WAYS << lg < w)
			lg++;
		table_errors(arrivals, lg, (double)n, &overflow, &collision);
		if (overflow + collision <= target) {
			table_line(n, w, arrivals, json);
			return 0;
		}
	}
	pr_err("no table up to 268435456 entries meets --target-false-drop for %llu sources",
	       (unsigned long long)n);
	return 1;
}

/* A power-of-two --width, as the sketch and the table take it. */
static int pow2_width(uint64_t width)
{
	if (width & (width - 1)) {
		pr_err("--width %llu: the sketch and the table take a power of two (--backend dense takes any)",
		       (unsigned long long)width);
		return 2;
	}
	return 0;
}

/* The dense table's model for the arrivals asked for. */
static void dense_errors(uint32_t arrivals, uint32_t lines, double n, double *overflow,
			 double *collision)
{
	if (arrivals == ARRIVALS_PACED)
		dense_model_fill(lines, n, overflow, collision);
	else
		dense_model(lines, n, overflow, collision);
}

static void dense_line(uint64_t n, uint32_t lines, uint32_t arrivals, bool json)
{
	uint64_t entries = (uint64_t)lines * PACER_DENSE_WAYS, bytes = dense_bytes(lines);
	double overflow, collision;
	struct json_writer w;
	char mb[32];

	dense_errors(arrivals, lines, (double)n, &overflow, &collision);
	if (!json) {
		printf("%llu sources, dense table of %llu entries (%u lines): one-sided false drops %.4f%%; "
		       "evict-oldest false drops %.4f%% and %.4f%% of admissions evict a fresh entry; "
		       "%s per copy, %.2f bytes per source\n",
		       (unsigned long long)n, (unsigned long long)entries, lines,
		       100 * (overflow + collision), 100 * collision, 100 * overflow,
		       format_bytes(bytes, mb, sizeof(mb)), (double)bytes / (double)n);
		return;
	}
	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "sources", n);
	jsonw_string_field(&w, "backend", "dense");
	jsonw_uint_field(&w, "entries", entries);
	jsonw_uint_field(&w, "lines", lines);
	jsonw_float_field_fmt(&w, "false_drop", "%.6g", overflow + collision);
	jsonw_float_field_fmt(&w, "opposite_false_drop", "%.6g", collision);
	jsonw_float_field_fmt(&w, "opposite_evict", "%.6g", overflow);
	jsonw_uint_field(&w, "bytes", bytes);
	jsonw_float_field_fmt(&w, "bytes_per_source", "%.3f", (double)bytes / (double)n);
	jsonw_end_object(&w);
}

/*
 * The dense table: one line for --width (entries, rounded up to whole
 * lines), or the smallest line count whose one-sided rate meets --target
 * (bisection: the model's rate falls as lines are added).
 */
static int dense_run(const struct model_opts *o)
{
	uint64_t lines = (o->width + PACER_DENSE_WAYS - 1) / PACER_DENSE_WAYS;
	uint32_t lo = 1, hi = PACER_DENSE_MAX_LINES, mid;
	double overflow, collision;

	if (o->width < PACER_MIN_WIDTH || lines > PACER_DENSE_MAX_LINES) {
		pr_err("--width %llu: a dense table takes %d to %llu entries", (unsigned long long)o->width,
		       PACER_MIN_WIDTH, (unsigned long long)PACER_DENSE_MAX_LINES * PACER_DENSE_WAYS);
		return 2;
	}
	if (!o->target) {
		dense_line(o->n, (uint32_t)lines, o->arrivals, o->json);
		return 0;
	}
	dense_errors(o->arrivals, hi, (double)o->n, &overflow, &collision);
	if (overflow + collision > o->target) {
		pr_err("no dense table up to %llu entries meets --target-false-drop for %llu sources",
		       (unsigned long long)PACER_DENSE_MAX_LINES * PACER_DENSE_WAYS,
		       (unsigned long long)o->n);
		return 1;
	}
	/* lo misses (or is below the smallest table), hi meets. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		dense_errors(o->arrivals, mid, (double)o->n, &overflow, &collision);
		if (overflow + collision <= o->target)
			hi = mid;
		else
			lo = mid;
	}
	dense_line(o->n, hi < 2 ? 2 : hi, o->arrivals, o->json);
	return 0;
}

/* The sketch: its false drops at a geometry, or the smallest width per row count meeting a target. */
static int sketch_run(const struct model_opts *o)
{
	uint64_t n = o->n, rows = o->rows, width = o->width;
	uint32_t kind = o->kind, d;
	double target = o->target;
	bool json = o->json;
	char mb[32];
	int lg, met = 0;

	if (pow2_width(width))
		return 2;
	if (!target) {
		lg = lines_log2_for(kind, (uint32_t)rows, width);
		if (lg < 0) {
			pr_err("--layout blocked needs --rows to be a power of two");
			return 2;
		}
		double p = sketch_model_false_drop(kind, (uint32_t)rows, (uint32_t)lg, (double)n);

		if (json)
			print_json(n, rows, width, kind, p);
		else
			printf("%llu sources, %llu rows x %llu cells (%s): false drops %.4f%%, %s per copy, %.2f bytes per source\n",
			       (unsigned long long)n, (unsigned long long)rows, (unsigned long long)width,
			       layout_name(kind), 100 * p, format_bytes(rows * width, mb, sizeof(mb)),
			       (double)(rows * width) / (double)n);
		return 0;
	}
	for (d = 1; d <= PACER_MAX_ROWS; d++) {
		uint64_t w;

		if (kind == PACER_LAYOUT_BLOCKED && (d & (d - 1)))
			continue;
		for (w = PACER_MIN_WIDTH; w <= PACER_MAX_WIDTH; w <<= 1) {
			double p;

			lg = lines_log2_for(kind, d, w);
			p = sketch_model_false_drop(kind, d, (uint32_t)lg, (double)n);
			if (p <= target) {
				if (json)
					print_json(n, d, w, kind, p);
				else
					printf("rows %u: width %llu, %s per copy, %.2f bytes per source, false drops %.4f%%\n",
					       d, (unsigned long long)w, format_bytes(d * w, mb, sizeof(mb)),
					       (double)(d * w) / (double)n, 100 * p);
				met++;
				break;
			}
		}
	}
	if (!met) {
		pr_err("no geometry meets a false-drop rate of %g for %llu sources: the largest sketch (%d rows x %u cells, %s layout) does not",
		       target, (unsigned long long)n, PACER_MAX_ROWS, PACER_MAX_WIDTH, layout_name(kind));
		return 1;
	}
	return 0;
}

static int table_run(const struct model_opts *o)
{
	if (pow2_width(o->width))
		return 2;
	return table_sizing(o->n, o->width, o->arrivals, o->target, o->json);
}

/* Each backend's model (backend.h); one line per backend. */
static const struct {
	int (*run)(const struct model_opts *o);
	bool takes_arrivals;
} models[PACER_BACKEND_MAX] = {
	[PACER_BACKEND_SKETCH] = { sketch_run, false },
	[PACER_BACKEND_TABLE] = { table_run, true },
	[PACER_BACKEND_DENSE] = { dense_run, true },
};

int cmd_model(int argc, char **argv)
{
	struct model_opts o = { 0 };
	int err = parse_verb_opts(&model_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	/* As load: the tables are sized by --width alone. */
	if (models[o.backend].takes_arrivals && (o.rows_set || o.layout_set))
		return conf_conflict("model", o.rows_set ? "rows" : "layout", "backend",
				     "--rows and --layout size the sketch; the tables take --width (entries) only");
	if (o.arrivals_set && !models[o.backend].takes_arrivals)
		return usage_error("model", "--arrivals applies to --backend table and dense only");
	return models[o.backend].run(&o);
}
