/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Inline SVG charts for HTML pages and the docs: line charts (linear or log
 * axes, markers, a legend) and grouped horizontal bar charts. */
#ifndef PACER_SVG_CHART_H
#define PACER_SVG_CHART_H

#include <stddef.h>
#include <stdio.h>

struct svg_series {
	const char *name, *color;
	const double *x, *y;
	size_t n;
	int dashed;
};

struct svg_chart {
	const char *title, *xlabel, *ylabel;
	int logx, logy;
	const struct svg_series *series;
	size_t nseries;
	double vline;          /* vertical marker at this x (0: none) */
	const char *vline_label;
	double hline;          /* horizontal marker at this y (0: none) */
	const char *hline_label;
};

void svg_chart_write(FILE *f, const struct svg_chart *c);

/*
 * Grouped horizontal bars on a linear axis from 0: one row per group (its
 * label at the left), one bar per series in each row, value[g * nseries + s]
 * (NAN: no bar).  Each bar is labelled with its value.
 */
struct svg_bars {
	const char *title, *xlabel;
	const char *const *groups;
	size_t ngroups;
	const char *const *series, *const *colors;
	size_t nseries;
	const double *value;
};

void svg_bars_write(FILE *f, const struct svg_bars *b);

#endif
