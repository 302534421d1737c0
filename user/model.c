// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer model: the false-drop model for a sketch geometry, for sizing. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "json_out.h"
#include "parse.h"
#include "sketch_sim.h"
#include "table_sim.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-pacer model --sources N [--rows D] [--width W] [--layout rows|blocked]\n"
		   "                        [--backend sketch|table] [--target P] [--json]\n\n"
		   "Modelled false-drop rate for N distinct sources active per interval on a\n"
		   "sketch of D rows x W cells (the layout's own formula; see README).\n"
		   "With --target P, list for each row count the smallest width that meets P.\n"
		   "--backend table: N sources each sending once per interval on a table of W\n"
		   "entries: false drops in one-sided mode (overflow + fingerprint collisions),\n"
		   "and in opposite mode (collisions) with the share of admissions that evict a\n"
		   "fresh entry; with --target P, the smallest table whose one-sided rate meets P.\n");
}

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
	printf("{\"sources\":%llu,\"rows\":%llu,\"width\":%llu,\"layout\":",
	       (unsigned long long)n, (unsigned long long)rows, (unsigned long long)width);
	json_string(stdout, layout_name(kind));
	printf(",\"false_drop\":%.6g,\"bytes\":%llu,\"bytes_per_source\":%.3f}\n", p,
	       (unsigned long long)(rows * width), (double)(rows * width) / (double)n);
}

static void table_line(uint64_t n, uint64_t entries, bool json)
{
	uint32_t lg = 0;
	double overflow, collision;
	char mb[32];

	while ((uint64_t)PACER_TBL_WAYS << lg < entries)
		lg++;
	table_model(lg, (double)n, &overflow, &collision);
	if (json)
		printf("{\"sources\":%llu,\"backend\":\"table\",\"entries\":%llu,"
		       "\"false_drop\":%.6g,\"opposite_false_drop\":%.6g,\"opposite_evict\":%.6g,"
		       "\"bytes\":%llu,\"bytes_per_source\":%.3f}\n",
		       (unsigned long long)n, (unsigned long long)entries, overflow + collision,
		       collision, overflow, (unsigned long long)table_bytes(lg),
		       (double)table_bytes(lg) / (double)n);
	else
		printf("%llu sources, table of %llu entries: one-sided false drops %.4f%%; "
		       "evict-oldest false drops %.4f%% and %.4f%% of admissions evict a fresh entry; "
		       "%s per copy, %.2f bytes per source\n",
		       (unsigned long long)n, (unsigned long long)entries, 100 * (overflow + collision),
		       100 * collision, 100 * overflow, format_bytes(table_bytes(lg), mb, sizeof(mb)),
		       (double)table_bytes(lg) / (double)n);
}

/* The table's sizing: one line for --width, or the smallest table meeting --target. */
static int table_sizing(uint64_t n, uint64_t width, double target, bool json)
{
	uint64_t w;

	if (width < 2 * PACER_TBL_WAYS || width > (uint64_t)PACER_TBL_WAYS << PACER_TBL_MAX_LINES_LOG2) {
		pr_err("--width %llu: a table takes 32 to 268435456 entries", (unsigned long long)width);
		return 2;
	}
	if (!target) {
		table_line(n, width, json);
		return 0;
	}
	for (w = 2 * PACER_TBL_WAYS; w <= (uint64_t)PACER_TBL_WAYS << PACER_TBL_MAX_LINES_LOG2; w <<= 1) {
		uint32_t lg = 0;
		double overflow, collision;

		while ((uint64_t)PACER_TBL_WAYS << lg < w)
			lg++;
		table_model(lg, (double)n, &overflow, &collision);
		if (overflow + collision <= target) {
			table_line(n, w, json);
			return 0;
		}
	}
	pr_err("no table up to 268435456 entries meets --target for %llu sources",
	       (unsigned long long)n);
	return 1;
}

int cmd_model(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "sources", required_argument, NULL, 'n' }, { "rows", required_argument, NULL, 'r' },
		{ "width", required_argument, NULL, 'w' },   { "layout", required_argument, NULL, 'l' },
		{ "target", required_argument, NULL, 't' },  { "json", no_argument, NULL, 'j' },
		{ "backend", required_argument, NULL, 'b' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t n = 0, rows = 4, width = 1u << 20;
	uint32_t kind = PACER_LAYOUT_ROWS, backend = PACER_BACKEND_SKETCH, d;
	double target = 0;
	bool json = false;
	char *end, mb[32];
	int c, lg, met = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_u64_range(optarg, 1, 1ULL << 40, &n))
				return bad_value("--sources", optarg, "expected a positive integer");
			break;
		case 'r':
			if (parse_u64_range(optarg, 1, PACER_MAX_ROWS, &rows))
				return bad_value("--rows", optarg, "expected an integer from 1 to 8");
			break;
		case 'w':
			if (parse_u64_range(optarg, PACER_MIN_WIDTH, PACER_MAX_WIDTH, &width) || (width & (width - 1)))
				return bad_value("--width", optarg, "expected a power of two from 64 to 1073741824");
			break;
		case 'l':
			if (parse_layout(optarg, &kind))
				return bad_value("--layout", optarg, "expected rows or blocked");
			break;
		case 't':
			target = strtod(optarg, &end);
			if (*end || !(target > 0 && target < 1))
				return bad_value("--target", optarg, "expected a probability in (0, 1)");
			break;
		case 'j':
			json = true;
			break;
		case 'b':
			if (parse_backend(optarg, &backend))
				return bad_value("--backend", optarg, "expected sketch or table");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (expect_positionals(argc, argv, 0, "no arguments"))
		return 2;
	if (!n) {
		pr_err("model needs --sources");
		return 2;
	}
	if (backend == PACER_BACKEND_TABLE)
		return table_sizing(n, width, target, json);
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
