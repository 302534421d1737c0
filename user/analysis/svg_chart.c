// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Inline SVG line and bar charts for the HTML report and the docs. */
#include <math.h>
#include "svg_chart.h"
#include "html_out.h"

#define SVG_W 860.0
#define SVG_H 340.0
#define M_LEFT 72.0
#define M_RIGHT 230.0
#define M_TOP 34.0
#define M_BOTTOM 50.0

struct axis {
	double lo, hi;
	int log;
};

static double ax_map(const struct axis *a, double v, double from, double to)
{
	double t;

	if (a->log)
		t = (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
	else
		t = (v - a->lo) / (a->hi - a->lo);
	return from + t * (to - from);
}

static int usable(const struct axis *a, double v)
{
	return isfinite(v) && (!a->log || v > 0);
}

static void ax_range(struct axis *a, const struct svg_chart *c, int want_x)
{
	size_t i, k;
	int any = 0;

	a->lo = INFINITY;
	a->hi = -INFINITY;
	for (i = 0; i < c->nseries; i++) {
		for (k = 0; k < c->series[i].n; k++) {
			double v = want_x ? c->series[i].x[k] : c->series[i].y[k];

			if (!usable(a, v))
				continue;
			any = 1;
			a->lo = v < a->lo ? v : a->lo;
			a->hi = v > a->hi ? v : a->hi;
		}
	}
	if (!want_x && usable(a, c->hline) && c->hline) {
		a->lo = c->hline < a->lo ? c->hline : a->lo;
		a->hi = c->hline > a->hi ? c->hline : a->hi;
		any = 1;
	}
	if (!any) {
		a->lo = a->log ? 1 : 0;
		a->hi = a->log ? 10 : 1;
	}
	if (a->log) {
		a->lo = pow(10, floor(log10(a->lo)));
		a->hi = pow(10, ceil(log10(a->hi)));
		if (a->hi <= a->lo)
			a->hi = a->lo * 10;
	} else {
		if (!want_x && a->lo > 0)
			a->lo = 0; /* counts and fractions read best from zero */
		if (a->hi <= a->lo)
			a->hi = a->lo + 1;
	}
}

static double nice_step(double span)
{
	double raw = span / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;

	return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

static void ticks(FILE *f, const struct axis *a, int is_x)
{
	double v, step;
	int n = 0;

	if (a->log) {
		for (v = a->lo; v <= a->hi * 1.0001 && n < 40; v *= 10, n++) {
			double p = is_x ? ax_map(a, v, M_LEFT, SVG_W - M_RIGHT) : ax_map(a, v, SVG_H - M_BOTTOM, M_TOP);

			if (is_x)
				fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/><text x='%.1f' y='%.1f' class='tx'>%g</text>\n",
					p, M_TOP, p, SVG_H - M_BOTTOM, p, SVG_H - M_BOTTOM + 16, v);
			else
				fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/><text x='%.1f' y='%.1f' class='ty'>%g</text>\n",
					M_LEFT, p, SVG_W - M_RIGHT, p, M_LEFT - 6, p + 4, v);
		}
		return;
	}
	step = nice_step(a->hi - a->lo);
	for (v = ceil(a->lo / step) * step; v <= a->hi + step * 1e-9 && n < 40; v += step, n++) {
		double p = is_x ? ax_map(a, v, M_LEFT, SVG_W - M_RIGHT) : ax_map(a, v, SVG_H - M_BOTTOM, M_TOP);

		if (is_x)
			fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/><text x='%.1f' y='%.1f' class='tx'>%g</text>\n",
				p, M_TOP, p, SVG_H - M_BOTTOM, p, SVG_H - M_BOTTOM + 16, fabs(v) < step * 1e-9 ? 0 : v);
		else
			fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/><text x='%.1f' y='%.1f' class='ty'>%g</text>\n",
				M_LEFT, p, SVG_W - M_RIGHT, p, M_LEFT - 6, p + 4, fabs(v) < step * 1e-9 ? 0 : v);
	}
}

/* Text element content, escaped; NULL as empty. */
static void svg_label(FILE *f, const char *text)
{
	html_text(f, text ? text : "");
	fputs("</text>\n", f);
}

static void chart_frame(FILE *f, const struct svg_chart *c, const struct axis *ax, const struct axis *ay)
{
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' viewBox='0 0 %.0f %.0f' role='img'>\n",
		SVG_W, SVG_H, SVG_W, SVG_H);
	fputs("<style>.grid{stroke:#ddd;stroke-width:1}.tx{font:11px sans-serif;text-anchor:middle;fill:#444}"
	      ".ty{font:11px sans-serif;text-anchor:end;fill:#444}.lab{font:12px sans-serif;fill:#222}"
	      ".ttl{font:bold 13px sans-serif;fill:#111}.mark{stroke:#888;stroke-dasharray:4 3}</style>\n", f);
	fprintf(f, "<text x='%.1f' y='18' class='ttl'>", M_LEFT);
	svg_label(f, c->title);
	ticks(f, ax, 1);
	ticks(f, ay, 0);
	fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#888'/>\n", M_LEFT, M_TOP,
		SVG_W - M_RIGHT - M_LEFT, SVG_H - M_BOTTOM - M_TOP);
	fprintf(f, "<text x='%.1f' y='%.1f' class='tx'>", (M_LEFT + SVG_W - M_RIGHT) / 2, SVG_H - 12);
	html_text(f, c->xlabel ? c->xlabel : "");
	fprintf(f, "</text>\n<text transform='translate(16 %.1f) rotate(-90)' class='tx'>", (M_TOP + SVG_H - M_BOTTOM) / 2);
	svg_label(f, c->ylabel);
}

/* The vertical and horizontal markers, where they fall inside the axes. */
static void chart_markers(FILE *f, const struct svg_chart *c, const struct axis *ax, const struct axis *ay)
{
	if (c->vline && usable(ax, c->vline) && c->vline >= ax->lo && c->vline <= ax->hi) {
		double x = ax_map(ax, c->vline, M_LEFT, SVG_W - M_RIGHT);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='mark'/><text x='%.1f' y='%.1f' class='lab'>",
			x, M_TOP, x, SVG_H - M_BOTTOM, x + 3, M_TOP + 12);
		svg_label(f, c->vline_label);
	}
	if (c->hline && usable(ay, c->hline) && c->hline >= ay->lo && c->hline <= ay->hi) {
		double y = ax_map(ay, c->hline, SVG_H - M_BOTTOM, M_TOP);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='mark'/><text x='%.1f' y='%.1f' class='lab'>",
			M_LEFT, y, SVG_W - M_RIGHT, y, M_LEFT + 4, y - 4);
		svg_label(f, c->hline_label);
	}
}

/* Series i: its line, dots when it has few points, and its legend entry. */
static void chart_series(FILE *f, const struct svg_series *s, size_t i, const struct axis *ax,
			 const struct axis *ay)
{
	int drawn = 0;
	size_t k;

	fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", s->color,
		s->dashed ? " stroke-dasharray='6 4'" : "");
	for (k = 0; k < s->n; k++) {
		if (!usable(ax, s->x[k]) || !usable(ay, s->y[k]))
			continue;
		fprintf(f, "%s%.1f,%.1f", drawn++ ? " " : "", ax_map(ax, s->x[k], M_LEFT, SVG_W - M_RIGHT),
			ax_map(ay, s->y[k], SVG_H - M_BOTTOM, M_TOP));
	}
	fputs("'/>\n", f);
	if (s->n <= 64) {
		for (k = 0; k < s->n; k++)
			if (usable(ax, s->x[k]) && usable(ay, s->y[k]))
				fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='%s'/>\n",
					ax_map(ax, s->x[k], M_LEFT, SVG_W - M_RIGHT),
					ax_map(ay, s->y[k], SVG_H - M_BOTTOM, M_TOP), s->color);
	}
	fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='3'%s/><text x='%.1f' y='%.1f' class='lab'>",
		SVG_W - M_RIGHT + 10, M_TOP + 10 + 18.0 * (double)i, SVG_W - M_RIGHT + 30,
		M_TOP + 10 + 18.0 * (double)i, s->color, s->dashed ? " stroke-dasharray='6 4'" : "",
		SVG_W - M_RIGHT + 35, M_TOP + 14 + 18.0 * (double)i);
	svg_label(f, s->name);
}

void svg_chart_write(FILE *f, const struct svg_chart *c)
{
	struct axis ax = { .log = c->logx }, ay = { .log = c->logy };
	size_t i;

	ax_range(&ax, c, 1);
	ax_range(&ay, c, 0);
	chart_frame(f, c, &ax, &ay);
	chart_markers(f, c, &ax, &ay);
	for (i = 0; i < c->nseries; i++)
		chart_series(f, &c->series[i], i, &ax, &ay);
	fputs("</svg>\n", f);
}

#define BAR_H 14.0
#define BAR_GAP 10.0
#define BAR_LEFT 210.0

void svg_bars_write(FILE *f, const struct svg_bars *b)
{
	double hi = 0, row_h = BAR_H * (double)b->nseries + BAR_GAP, plot_w = SVG_W - BAR_LEFT - 150;
	double h = M_TOP + 24 + row_h * (double)b->ngroups + M_BOTTOM;
	struct axis ax = { 0 };
	size_t g, s;

	for (g = 0; g < b->ngroups * b->nseries; g++)
		if (isfinite(b->value[g]) && b->value[g] > hi)
			hi = b->value[g];
	ax.lo = 0;
	ax.hi = hi > 0 ? hi : 1;
	ax.hi = ceil(ax.hi / nice_step(ax.hi)) * nice_step(ax.hi); /* end on a grid line */
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' viewBox='0 0 %.0f %.0f' role='img'>\n",
		SVG_W, h, SVG_W, h);
	fputs("<style>.grid{stroke:#ddd;stroke-width:1}.tx{font:11px sans-serif;text-anchor:middle;fill:#444}"
	      ".ty{font:11px sans-serif;text-anchor:end;fill:#222}.lab{font:12px sans-serif;fill:#222}"
	      ".val{font:10px sans-serif;fill:#222}.ttl{font:bold 13px sans-serif;fill:#111}</style>\n", f);
	fprintf(f, "<text x='%.1f' y='18' class='ttl'>", 10.0);
	svg_label(f, b->title);
	/* Legend on one line under the title. */
	for (s = 0; s < b->nseries; s++) {
		double x = BAR_LEFT + 160.0 * (double)s;

		fprintf(f, "<rect x='%.1f' y='%.1f' width='12' height='10' fill='%s'/><text x='%.1f' y='%.1f' class='lab'>",
			x, M_TOP - 6, b->colors[s], x + 16, M_TOP + 3);
		svg_label(f, b->series[s]);
	}
	double top = M_TOP + 18, bottom = h - M_BOTTOM;
	double step = nice_step(ax.hi), v; /* the step of the rounded range: at most 10 lines */
	int n = 0;

	for (v = 0; v <= ax.hi + step * 1e-9 && n < 40; v += step, n++) {
		double x = ax_map(&ax, v, BAR_LEFT, BAR_LEFT + plot_w);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='grid'/><text x='%.1f' y='%.1f' class='tx'>%g</text>\n",
			x, top, x, bottom, x, bottom + 16, v);
	}
	fprintf(f, "<text x='%.1f' y='%.1f' class='tx'>", BAR_LEFT + plot_w / 2, h - 12);
	svg_label(f, b->xlabel);
	for (g = 0; g < b->ngroups; g++) {
		double y0 = top + BAR_GAP / 2 + row_h * (double)g;

		fprintf(f, "<text x='%.1f' y='%.1f' class='ty'>", BAR_LEFT - 8, y0 + BAR_H * (double)b->nseries / 2 + 4);
		svg_label(f, b->groups[g]);
		for (s = 0; s < b->nseries; s++) {
			double val = b->value[g * b->nseries + s], y = y0 + BAR_H * (double)s;

			if (!isfinite(val))
				continue;
			fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>"
				   "<text x='%.1f' y='%.1f' class='val'>%.1f</text>\n",
				BAR_LEFT, y, ax_map(&ax, val, 0, plot_w), BAR_H - 2, b->colors[s],
				BAR_LEFT + ax_map(&ax, val, 0, plot_w) + 4, y + BAR_H - 4, val);
		}
	}
	fputs("</svg>\n", f);
}
