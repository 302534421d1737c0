// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The HTML report's plots: recency distribution, false drops over time, sizing. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include "analyze_report_fmt.h"
#include "cli_values.h"
#include "svg_chart.h"

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
				      "#8c564b", "#e377c2", "#17becf" };

void an_plot_recency(FILE *f, const struct an_report *r)
{
	static const char *const names[T1_NHIST] = { "exact (previous packet)", "HistoricalMembership",
						    "sketch estimate (recorded)", "exact (policy truth)" };
	double x[T1_HIST_BINS], y[T1_NHIST][T1_HIST_BINS];
	struct svg_series s[T1_NHIST];
	struct svg_chart c = { 0 };
	const struct t1_result *t = r->t1;
	unsigned h, b, ns = 0;
	char lab[64], d[32];

	unsigned lo = T1_HIST_BINS, hi = 0;

	/* Plot only the populated span of bins (one empty bin either side). */
	for (h = 0; h < T1_NHIST; h++)
		for (b = 0; b + 1 < T1_HIST_BINS; b++)
			if (t->hist[h][b]) {
				lo = b < lo ? b : lo;
				hi = b > hi ? b : hi;
			}
	if (lo > hi)
		lo = hi = 1;
	/*
	 * Bin 0 (gaps under 1 us: items sharing a timestamp) has no place on a
	 * log axis; drawn at the left edge it looked like a spike.  Its share is
	 * printed under the plot instead.
	 */
	lo = lo > 2 ? lo - 1 : 1;
	hi = hi < lo ? lo : hi;
	hi = hi + 2 < T1_HIST_BINS ? hi + 1 : T1_HIST_BINS - 2;
	for (b = 0; b + 1 < T1_HIST_BINS; b++)
		x[b] = t1_hist_edge(b + 1) / 1e9; /* plotted at the bin's upper edge, in s */
	for (h = 0; h < T1_NHIST; h++) {
		uint64_t total = 0;

		if (h == T1_H_POLICY && r->rd->hdr.policy == PACER_POLICY_QUIET)
			continue; /* under quiet it is the same curve as the exact one */
		for (b = 0; b < T1_HIST_BINS; b++)
			total += t->hist[h][b];
		for (b = 0; b + 1 < T1_HIST_BINS; b++)
			y[h][b] = total ? (double)t->hist[h][b] / (double)total : 0;
		s[ns].name = names[h];
		s[ns].color = colors[h];
		s[ns].x = x + lo;
		s[ns].y = y[h] + lo;
		s[ns].n = hi - lo + 1;
		s[ns].dashed = h == T1_H_SKETCH;
		ns++;
	}
	snprintf(lab, sizeof(lab), "interval %s", format_duration(r->rd->hdr.interval_ns, d, sizeof(d)));
	c.title = "Recency distribution (fraction of packets per half-octave; absent/never not shown)";
	c.xlabel = "time since the source's previous packet (s, log scale)";
	c.ylabel = "fraction of packets";
	c.logx = 1;
	c.series = s;
	c.nseries = ns;
	c.vline = (double)r->rd->hdr.interval_ns / 1e9;
	c.vline_label = lab;
	svg_chart_write(f, &c);
	fputs("<p>Gaps under 1 &micro;s (same timestamp), not plotted:", f);
	for (h = 0; h < T1_NHIST; h++) {
		uint64_t total = 0;

		for (b = 0; b < T1_HIST_BINS; b++)
			total += t->hist[h][b];
		fprintf(f, "%s %s %.2f%%", h ? ";" : "", names[h], total ? 100.0 * (double)t->hist[h][0] / (double)total : 0);
	}
	fputs(".</p>\n", f);
}

void an_plot_timeline(FILE *f, const struct an_report *r)
{
	const struct audit_result *au = r->audit;
	double *x = calloc(au->nbins + 1, sizeof(double)), *y[3];
	struct svg_series s[3];
	struct svg_chart c = { 0 };
	char xl[96], d[32];
	uint32_t i;

	y[0] = calloc(au->nbins + 1, sizeof(double));
	y[1] = calloc(au->nbins + 1, sizeof(double));
	y[2] = calloc(au->nbins + 1, sizeof(double));
	if (!x || !y[0] || !y[1] || !y[2]) {
		fputs("<p>(out of memory for the plot)</p>", f);
		goto out;
	}
	for (i = 0; i < au->nbins; i++) {
		x[i] = (double)(i * au->bin_ns) / 1e9;
		y[0][i] = (double)au->bins[i].false_drops_collision;
		y[1][i] = (double)au->bins[i].false_drops_quant;
		y[2][i] = (double)au->bins[i].false_passes;
	}
	s[0] = (struct svg_series){ "collision false drops", colors[1], x, y[0], au->nbins, 0 };
	s[1] = (struct svg_series){ "quantisation drops", colors[4], x, y[1], au->nbins, 1 };
	s[2] = (struct svg_series){ "false passes", colors[3], x, y[2], au->nbins, 0 };
	snprintf(xl, sizeof(xl), "seconds since the first record (bins of %s)", format_duration(au->bin_ns, d, sizeof(d)));
	c.title = "False drops and false passes over time";
	c.xlabel = xl;
	c.ylabel = "packets per bin";
	c.series = s;
	c.nseries = 3;
	svg_chart_write(f, &c);
out:
	free(x);
	free(y[0]);
	free(y[1]);
	free(y[2]);
}

void an_plot_sizing(FILE *f, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	struct svg_series s[PACER_MAX_ROWS];
	double *x = calloc(z->npts + 1, sizeof(double)), *y = calloc(z->npts + 1, sizeof(double));
	struct svg_chart c = { 0 };
	static char names[PACER_MAX_ROWS][32];
	double floor_rate = 1;
	size_t i, used = 0, ns = 0;
	uint32_t rows;

	if (!x || !y) {
		fputs("<p>(out of memory for the plot)</p>", f);
		goto out;
	}
	/* A log axis cannot show 0: draw "none observed" at half the smallest measurable rate. */
	for (i = 0; i < z->npts; i++)
		if (z->pts[i].simulated && z->pts[i].eligible)
			floor_rate = fmin(floor_rate, 0.5 / (double)z->pts[i].eligible);
	for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
		size_t first = used;

		for (i = 0; i < z->npts; i++) {
			const struct sizing_point *p = &z->pts[i];

			if (p->rows != rows || !p->simulated)
				continue;
			x[used] = (double)p->width_cells;
			y[used] = p->false_drops ? p->rate : floor_rate;
			used++;
		}
		if (used == first)
			continue;
		snprintf(names[ns], sizeof(names[ns]), "%u row%s", rows, rows > 1 ? "s" : "");
		s[ns] = (struct svg_series){ names[ns], colors[(rows - 1) % 8], x + first, y + first, used - first, 0 };
		ns++;
	}
	c.title = "Simulated false-drop rate vs width (full scale; bottom = none observed)";
	c.xlabel = "cells per row (--width), log scale";
	c.ylabel = "false drops per owed pass";
	c.logx = 1;
	c.logy = 1;
	c.series = s;
	c.nseries = ns;
	c.hline = r->target;
	c.hline_label = "target";
	svg_chart_write(f, &c);
out:
	free(x);
	free(y);
}
