// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * svg_plot: the docs' charts, drawn by the analysis report's SVG code
 * (user/analysis/svg_chart.c) from tab-separated rows on stdin.
 *
 *   svg_plot line TITLE XLABEL YLABEL [--logx] [--logy] [--hline Y LABEL]
 *       rows: SERIES <tab> X <tab> Y        (a series' points in input order)
 *   svg_plot bars TITLE XLABEL
 *       rows: GROUP <tab> SERIES <tab> VALUE (groups and series in first-seen order)
 *
 * The SVG goes to stdout.  A malformed row, or no rows, is an error naming
 * the line: exit 2 and nothing written (scripts/plot-*.sh keep the old file).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "svg_chart.h"

#define MAX_GROUPS 64 /* bars: programs */
#define MAX_SERIES 16 /* one color each */
#define MAX_POINTS 4096

static const char *const colors[MAX_SERIES] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					       "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
					       "#7f7f7f", "#bcbd22", "#aec7e8", "#ff9896",
					       "#98df8a", "#c5b0d5", "#ffbb78", "#c49c94" };

/* names[0]: the bars' groups; names[1]: the series. */
static char *names[2][MAX_GROUPS];
static size_t nnames[2];

static void die(unsigned line, const char *what, const char *value)
{
	fprintf(stderr, "svg_plot: stdin:%u: %s '%s'\n", line, what, value);
	exit(2);
}

/* The index of name in list k (added if new). */
static size_t name_index(int k, const char *name, unsigned line)
{
	size_t i;

	for (i = 0; i < nnames[k]; i++)
		if (!strcmp(names[k][i], name))
			return i;
	if (nnames[k] == (k ? MAX_SERIES : MAX_GROUPS))
		die(line, k ? "more than 16 series at" : "more than 64 groups at", name);
	names[k][nnames[k]] = strdup(name);
	if (!names[k][nnames[k]])
		exit(1);
	return nnames[k]++;
}

static double number(const char *s, unsigned line)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE)
		die(line, "not a number:", s);
	return v;
}

/* Splits a row into exactly three tab-separated fields. */
static void fields(char *row, char *f[3], unsigned line)
{
	size_t n = strcspn(row, "\n");

	row[n] = 0;
	f[0] = row;
	f[1] = strchr(row, '\t');
	f[2] = f[1] ? strchr(f[1] + 1, '\t') : NULL;
	if (!f[1] || !f[2] || strchr(f[2] + 1, '\t') || f[1] == row)
		die(line, "expected three tab-separated fields, got", row);
	*f[1]++ = 0;
	*f[2]++ = 0;
}

static int usage(void)
{
	fputs("usage: svg_plot line TITLE XLABEL YLABEL [--logx] [--logy] [--hline Y LABEL] < SERIES\\tX\\tY rows\n"
	      "       svg_plot bars TITLE XLABEL < GROUP\\tSERIES\\tVALUE rows\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	static double xs[MAX_SERIES][MAX_POINTS], ys[MAX_SERIES][MAX_POINTS], value[MAX_GROUPS * MAX_SERIES];
	static size_t npts[MAX_SERIES];
	int bars = argc >= 4 && !strcmp(argv[1], "bars");
	int line_chart = argc >= 5 && !strcmp(argv[1], "line");
	struct svg_chart c = { 0 };
	char row[1024], *f[3];
	unsigned line = 0;
	size_t i;
	int a;

	if (!bars && !line_chart)
		return usage();
	if (bars && argc != 4)
		return usage();
	for (a = 5; line_chart && a < argc; a++) {
		if (!strcmp(argv[a], "--logx"))
			c.logx = 1;
		else if (!strcmp(argv[a], "--logy"))
			c.logy = 1;
		else if (!strcmp(argv[a], "--hline") && a + 2 < argc) {
			c.hline = number(argv[a + 1], 0);
			c.hline_label = argv[a + 2];
			a += 2;
		} else
			return usage();
	}
	for (i = 0; i < MAX_GROUPS * MAX_SERIES; i++)
		value[i] = NAN;
	while (fgets(row, sizeof(row), stdin)) {
		line++;
		if (!strchr(row, '\n') && !feof(stdin))
			die(line, "line longer than 1023 bytes:", "...");
		fields(row, f, line);
		if (bars) {
			size_t g = name_index(0, f[0], line), s = name_index(1, f[1], line);

			value[g * MAX_SERIES + s] = number(f[2], line);
		} else {
			size_t s = name_index(1, f[0], line);

			if (npts[s] == MAX_POINTS)
				die(line, "more than 4096 points in series", f[0]);
			xs[s][npts[s]] = number(f[1], line);
			ys[s][npts[s]++] = number(f[2], line);
		}
	}
	if (!nnames[1]) {
		fprintf(stderr, "svg_plot: stdin: no rows\n");
		return 2;
	}
	if (bars) {
		static double packed[MAX_GROUPS * MAX_SERIES];
		size_t g, s;

		for (g = 0; g < nnames[0]; g++)
			for (s = 0; s < nnames[1]; s++)
				packed[g * nnames[1] + s] = value[g * MAX_SERIES + s];
		struct svg_bars b = { .title = argv[2], .xlabel = argv[3],
				      .groups = (const char *const *)names[0], .ngroups = nnames[0],
				      .series = (const char *const *)names[1], .colors = colors,
				      .nseries = nnames[1], .value = packed };

		svg_bars_write(stdout, &b);
	} else {
		static struct svg_series series[MAX_SERIES];

		for (i = 0; i < nnames[1]; i++)
			series[i] = (struct svg_series){ .name = names[1][i], .color = colors[i],
							 .x = xs[i], .y = ys[i], .n = npts[i] };
		c.title = argv[2];
		c.xlabel = argv[3];
		c.ylabel = argv[4];
		c.series = series;
		c.nseries = nnames[1];
		svg_chart_write(stdout, &c);
	}
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}
