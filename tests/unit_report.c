// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The report's building blocks (user/analysis): HTML escaping and rows, the
 * SVG chart, and the formatting the text, JSON and HTML reports share.
 */
#include <check.h>
#include "check_run.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_report_fmt.h"
#include "html_out.h"
#include "svg_chart.h"

static char *buf;
static size_t buf_len;

static FILE *open_out(void)
{
	FILE *f;

	buf = NULL;
	f = open_memstream(&buf, &buf_len);
	ck_assert_ptr_nonnull(f);
	return f;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

START_TEST(test_html_escapes_markup_and_builds_rows)
{
	FILE *f = open_out();

	html_text(f, "a<b>&\"c\"");
	html_kv(f, "<k>", "%d%%", 5);
	html_note(f, "Not run", "x & y");
	fclose(f);
	ck_assert_str_eq(buf, "a&lt;b&gt;&amp;&quot;c&quot;"
			      "<tr><th>&lt;k&gt;</th><td>5%</td></tr>\n"
			      "<p>Not run: x &amp; y</p>\n");
	free(buf);
}
END_TEST

/* Points a log axis cannot show (zero, negative, NaN) are left out, not drawn at the edge. */
START_TEST(test_svg_chart_drops_unplottable_points)
{
	static const double x[] = { 1, 10, 0, 100, -5, NAN, 1000 };
	static const double y[] = { 0.5, 0.25, 0.3, 0.125, 0.1, 0.2, 0.0625 };
	struct svg_series s = { .name = "a<b", .color = "#123456", .x = x, .y = y, .n = 7 };
	struct svg_chart c = { .title = "T&T", .xlabel = "x", .ylabel = "y", .logx = 1, .series = &s,
			       .nseries = 1, .vline = 10, .vline_label = "interval" };
	FILE *f = open_out();
	char *pts;

	svg_chart_write(f, &c);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<svg"));
	ck_assert_ptr_nonnull(strstr(buf, "</svg>\n"));
	ck_assert_ptr_nonnull(strstr(buf, "T&amp;T"));
	ck_assert_ptr_nonnull(strstr(buf, "a&lt;b"));
	ck_assert_ptr_nonnull(strstr(buf, ">interval<"));
	pts = strstr(buf, "points='");
	ck_assert_ptr_nonnull(pts);
	/* Four usable points: three spaces between them in the polyline. */
	ck_assert_uint_eq(count(pts, "<circle"), 4);
	*strchr(pts + 8, '\'') = 0;
	ck_assert_uint_eq(count(pts, " "), 3);
	ck_assert_ptr_null(strstr(pts, "nan"));
	free(buf);
}
END_TEST

/* Bars scale to the largest value; a missing value (NAN) draws no bar; labels are escaped. */
START_TEST(test_svg_bars_scale_to_the_largest_value)
{
	static const char *const groups[] = { "a<b", "c" }, *const series[] = { "s1", "s&2" },
				 *const colors[] = { "#111111", "#222222" };
	static const double value[] = { 50, 100, NAN, 25 };
	struct svg_bars b = { .title = "T", .xlabel = "ns", .groups = groups, .ngroups = 2, .series = series,
			      .colors = colors, .nseries = 2, .value = value };
	FILE *f = open_out();
	const char *p;
	double w[3];
	unsigned n = 0;

	svg_bars_write(f, &b);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<svg xmlns='http://www.w3.org/2000/svg'"));
	ck_assert_ptr_nonnull(strstr(buf, "</svg>\n"));
	ck_assert_ptr_nonnull(strstr(buf, ">a&lt;b<"));
	ck_assert_ptr_nonnull(strstr(buf, ">s&amp;2<"));
	ck_assert_ptr_null(strstr(buf, "nan"));
	for (p = buf; (p = strstr(p, "height='12.0' fill='#")) != NULL; p++) {
		const char *wp = p;

		while (wp > buf && strncmp(wp, "width='", 7))
			wp--;
		ck_assert_uint_lt(n, 3);
		w[n++] = strtod(wp + 7, NULL);
	}
	ck_assert_uint_eq(n, 3); /* 50, 100, 25: the NAN has no bar */
	ck_assert_double_eq_tol(w[0] * 2, w[1], 0.2);
	ck_assert_double_eq_tol(w[2] * 4, w[1], 0.2);
	free(buf);
}
END_TEST

START_TEST(test_rates_and_shares_read_as_the_datapath_means_them)
{
	char b[32];

	ck_assert_str_eq(an_rate_str(0, b, sizeof(b)), "off");
	ck_assert_str_eq(an_rate_str(1ULL << 26, b, sizeof(b)), "1/64");
	ck_assert_str_eq(an_rate_str(1ULL << 32, b, sizeof(b)), "1/1");
	ck_assert_str_eq(an_rate_str(3ULL << 30, b, sizeof(b)), "75%");
	ck_assert_str_eq(an_wall_str(0, b, sizeof(b)), "unknown");
	ck_assert_str_eq(an_wall_str(86400ULL * 1000000000ULL, b, sizeof(b)), "1970-01-02 00:00:00 UTC");
	ck_assert_double_eq(an_pct(1, 4), 25.0);
	ck_assert_double_eq(an_pct(1, 0), 0.0);
}
END_TEST

START_TEST(test_smallest_meeting_picks_per_row_count)
{
	struct sizing_point pts[] = {
		{ .rows = 2, .target_bytes = 4096, .meets = 1 },
		{ .rows = 2, .target_bytes = 1024, .meets = 0 },
		{ .rows = 2, .target_bytes = 2048, .meets = 1 },
		{ .rows = 4, .target_bytes = 512, .meets = 0 },
	};
	struct sizing_result z = { .pts = pts, .npts = 4 };

	ck_assert_ptr_eq(an_smallest_meeting(&z, 2), &pts[2]);
	ck_assert_ptr_null(an_smallest_meeting(&z, 4));
	ck_assert_ptr_null(an_smallest_meeting(&z, 1));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("report");

	tcase_add_test(tc, test_html_escapes_markup_and_builds_rows);
	tcase_add_test(tc, test_svg_chart_drops_unplottable_points);
	tcase_add_test(tc, test_svg_bars_scale_to_the_largest_value);
	tcase_add_test(tc, test_rates_and_shares_read_as_the_datapath_means_them);
	tcase_add_test(tc, test_smallest_meeting_picks_per_row_count);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
