/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Inline SVG line charts (linear or log axes, markers, a legend) for HTML pages. */
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

#endif
