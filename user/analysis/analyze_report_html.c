// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `analyze --html`: one self-contained page with tables and SVG plots. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "analyze_report_fmt.h"
#include "html_out.h"
#include "cli_values.h"
#include "svg_chart.h"

/* A section that did not run says why; true then. */
static bool html_not_run(FILE *f, const void *result, const char *note)
{
	if (!result)
		html_note(f, "Not run", note ? note : "?");
	return !result;
}

static void html_audit(FILE *f, const struct an_report *r)
{
	const struct audit_result *au = r->audit;
	char a[32];

	fputs("<h2>Audit of the recorded verdicts</h2>\n", f);
	if (html_not_run(f, au, r->audit_note))
		return;
	fputs("<table class='kv'>\n", f);
	html_kv(f, "packets judged", "%" PRIu64 " of %" PRIu64 " source-sampled sources", au->judged_records, au->sources);
	html_kv(f, "admitted / dropped", "%" PRIu64 " / %" PRIu64, au->passes, au->drops);
	html_kv(f, "owed a pass", "%" PRIu64 " (truth >= interval %s)", au->eligible, format_duration(au->interval_ns, a, sizeof(a)));
	html_kv(f, "false drops", "%" PRIu64 " (%.4f%% of owed passes)", au->false_drops, 100.0 * audit_false_drop_rate(au));
	html_kv(f, "  quantisation (by design)", "%" PRIu64, au->false_drops_quant);
	html_kv(f, "  collisions", "%" PRIu64 " (%.4f%% of owed passes)", au->false_drops_collision,
		an_pct(au->false_drops_collision, au->eligible));
	html_kv(f, "false passes", "%" PRIu64 " (%s)", au->false_passes, an_false_pass_note(&r->rd->hdr));
	html_kv(f, "not judged", "%" PRIu64 " (truth unknown)", au->unknown);
	if (au->est_older_than_truth)
		html_kv(f, "estimates older than truth", "%" PRIu64, au->est_older_than_truth);
	fputs("</table>\n", f);
}

/* A capture's classes: frames, keys, what each limit admits and drops, keys per interval. */
/* A class table's header row: its column heads. */
static void html_class_heads(FILE *f, const char *const *heads, uint32_t n)
{
	uint32_t k;

	fputs("<table><tr>", f);
	for (k = 0; k < n; k++)
		html_cell(f, "th", heads[k]);
	fputs("</tr>\n", f);
}

/* A class's row: its name, its limit, then the figures b[2] to b[n - 1]. */
static void html_class_row(FILE *f, const struct an_class_audit *ca, char (*b)[48], uint32_t n)
{
	char lim[512];
	uint32_t k;

	fputs("<tr>", f);
	html_cell(f, "td", ca->c ? ca->c->name : "(global limit)");
	html_cell(f, "td", an_class_limit_str(ca, lim, sizeof(lim)));
	for (k = 2; k < n; k++)
		html_cell(f, "td", b[k]);
	fputs("</tr>\n", f);
}

/* A class table's end: the sizing sentence under it. */
static void html_class_sizing(FILE *f, const struct an_report *r)
{
	char lim[512];

	fputs("</table>\n<p>", f);
	html_text(f, an_class_sizing(r, lim, sizeof(lim)));
	fputs("</p>\n", f);
}

static void html_capture_classes(FILE *f, const struct an_report *r)
{
	static const char *const heads[] = { "class", "limit", "frames", "keys", "admitted", "dropped",
					      "keys per interval (peak)" };
	const struct pcap_summary *m = r->pcap;
	char lim[512], b[7][48];
	uint32_t i;

	fputs("<h2>Capture per class</h2>\n<p>", f);
	snprintf(lim, sizeof(lim),
		 "The datapath's classification; each class's limit applied by an exact limiter. Exempt list: %" PRIu64
		 " frames passed; deny list: %" PRIu64 " dropped; no class matched: %" PRIu64 " passed.",
		 m->exempt, m->denied, m->unclassified);
	html_text(f, lim);
	fputs("</p>\n", f);
	html_class_heads(f, heads, sizeof(heads) / sizeof(heads[0]));
	for (i = 0; i < r->n_classes; i++) {
		const struct an_class_audit *ca = &r->classes[i];
		const struct audit_result *au = ca->audit;

		snprintf(b[2], sizeof(b[2]), "%" PRIu64, m->class_frames[ca->slot]);
		snprintf(b[3], sizeof(b[3]), "%" PRIu64, au->sources);
		snprintf(b[4], sizeof(b[4]), "%" PRIu64, m->class_admitted[ca->slot]);
		snprintf(b[5], sizeof(b[5]), "%" PRIu64, m->class_dropped[ca->slot]);
		snprintf(b[6], sizeof(b[6]), "%" PRIu64, au->keys_per_interval_peak);
		html_class_row(f, ca, b, 7);
	}
	html_class_sizing(f, r);
}

static void html_classes(FILE *f, const struct an_report *r)
{
	static const char *const heads[] = { "class", "limit", "packets", "sources", "admitted", "dropped",
					      "owed a pass", "false drops", "false passes", "not judged" };
	char b[10][48];
	uint32_t i;

	if (!r->n_classes)
		return;
	if (r->pcap) {
		html_capture_classes(f, r);
		return;
	}
	fputs("<h2>Audit per class</h2>\n<p>Each packet judged against its own class's limit; classes never "
	      "share a source.</p>\n", f);
	html_class_heads(f, heads, sizeof(heads) / sizeof(heads[0]));
	for (i = 0; i < r->n_classes; i++) {
		const struct an_class_audit *ca = &r->classes[i];
		const struct audit_result *au = ca->audit;

		snprintf(b[2], sizeof(b[2]), "%" PRIu64, au->judged_records);
		snprintf(b[3], sizeof(b[3]), "%" PRIu64, au->sources);
		snprintf(b[4], sizeof(b[4]), "%" PRIu64, au->passes);
		snprintf(b[5], sizeof(b[5]), "%" PRIu64, au->drops);
		snprintf(b[6], sizeof(b[6]), "%" PRIu64, au->eligible);
		snprintf(b[7], sizeof(b[7]), "%" PRIu64 "%s", au->false_drops, au->key_merged ? " (at least)" : "");
		if (au->key_merged)
			snprintf(b[8], sizeof(b[8]), "not checked");
		else
			snprintf(b[8], sizeof(b[8]), "%" PRIu64, au->false_passes);
		snprintf(b[9], sizeof(b[9]), "%" PRIu64, au->unknown);
		html_class_row(f, ca, b, 10);
	}
	html_class_sizing(f, r);
	for (i = 0; i < r->n_classes; i++)
		if (r->classes[i].audit->key_merged) {
			fputs("<p>", f);
			html_text(f, r->classes[i].c ? r->classes[i].c->name : "");
			fputs(": ", f);
			html_text(f, an_class_key_note(r->classes[i].audit));
			fputs("</p>\n", f);
		}
}

static void html_table1(FILE *f, const struct an_report *r)
{
	static const char *const heads[] = { "structure", "memory", "bits/W", "ns/item", "mean err", "max err",
					      "in bound", "missed", "stale", "verdicts" };
	const struct t1_result *t = r->t1;
	char a[32], buf[512];
	unsigned i;

	fputs("<h2>Recency structures (the paper's Table 1, measured)</h2>\n", f);
	if (html_not_run(f, t, r->t1_note))
		return;
	fprintf(f, "<p>%" PRIu64 " items, window W = %" PRIu64 " items (~%.3g s), eps = 1/%u, block D = %" PRIu64
		   "; at most %" PRIu64 " distinct sources in any W + 1 items (mean %.0f).</p>\n<table><tr>",
		t->items, t->window, t->window_span_s, t->inv_eps, t->block_d, t->distinct_max, t->distinct_mean);
	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		html_cell(f, "th", heads[i]);
	fputs("</tr>\n", f);
	for (i = 0; i < T1_NSTRUCT; i++) {
		const struct t1_row *w = &t->row[i];

		fputs("<tr>", f);
		html_cell(f, "td", w->name ? w->name : "?");
		if (!w->ok) {
			fprintf(f, "<td colspan='9'>not built: ");
			html_text(f, t->note);
			fputs("</td></tr>\n", f);
			continue;
		}
		fprintf(f, "<td>%s</td><td>%.1f</td><td>%.1f</td><td>%.3f%%</td><td>%.3f%%</td><td>%.3f%%</td>"
			   "<td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n",
			format_bytes(w->bytes, a, sizeof(a)), w->bits_per_item, w->ns_per_item, 100 * w->mean_rel_err,
			100 * w->max_rel_err, an_pct(w->within_bound, w->in_window), w->missed, w->stale, w->verdict_diff);
	}
	fprintf(f, "</table>\n<p>ns/item: query + insert, each structure alone on the first %" PRIu64
		   " items. Errors are relative over the %" PRIu64 " items with r &le; W.</p>\n<table class='kv'>\n",
		t->timed_items, t->row[T1_EXACT].in_window);
	html_kv(f, "B = log2 C(N, W)", "%.0f bits (universe 2^%.0f)", t->b_bits, t->universe_log2);
	html_kv(f, "HM bound for W", "%.0f bits (%s)", t->paper_hm_bits, format_bytes((uint64_t)(t->paper_hm_bits / 8), a, sizeof(a)));
	html_kv(f, "OptimalSM bound for W", "%.0f bits", t->paper_block_bits);
	html_kv(f, "HM bound for the distinct count", "%.0f bits (%s); HM measured %.2fx that", t->paper_hm_distinct_bits,
		format_bytes((uint64_t)(t->paper_hm_distinct_bits / 8), a, sizeof(a)), an_hm_bound_ratio(t));
	fputs("</table>\n<p>", f);
	html_text(f, an_t1_smallest(t, buf, sizeof(buf)));
	fputs("</p>\n", f);
}

static void html_sizing(FILE *f, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	const char *noun = backend_of(r->rd->hdr.backend)->noun;
	char a[32];
	uint32_t rows;

	fprintf(f, "<h2>Sizing for a false-drop rate of at most %g</h2>\n", r->target);
	if (html_not_run(f, z, r->sizing_note))
		return;
	fprintf(f, "<p>Load: %.1f sampled sources per interval per %s copy (peak %.0f), ~%.0f sources per interval "
		   "in the full stream (peak).</p>\n<table><tr><th>rows</th><th>--width</th><th>memory</th>"
		   "<th>simulated false drops</th><th>rate</th><th>model</th></tr>\n",
		z->n_mean, noun, z->n_peak, z->n_peak * z->scale);
	for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
		const struct sizing_point *best = an_smallest_meeting(z, rows);

		if (!best)
			continue;
		fprintf(f, "<tr><td>%u</td><td>%" PRIu64 "</td><td>%s</td>", rows, best->width_cells,
			format_bytes(best->target_bytes, a, sizeof(a)));
		if (best->simulated)
			fprintf(f, "<td>%" PRIu64 " / %" PRIu64 "</td><td>%.4f%%</td><td>%.3g</td></tr>\n",
				best->false_drops, best->eligible, 100 * best->rate, best->model_rate);
		else
			fprintf(f, "<td>not simulated</td><td></td><td>%.3g</td></tr>\n", best->model_rate);
	}
	fputs("</table>\n", f);
}

int an_report_html(FILE *f, const struct an_report *r)
{
	char *text = NULL, rec[256];
	size_t len = 0;
	FILE *mem;

	/* The recording's header as text; the tables follow as HTML tables. */
	mem = open_memstream(&text, &len);
	if (!mem)
		return -ENOMEM;
	an_text_header(mem, r);
	if (r->pcap)
		pcap_report_text(mem, r);
	fclose(mem);

	fputs("<!doctype html>\n<html lang='en'><head><meta charset='utf-8'><title>xdp-pacer analysis: ", f);
	html_text(f, r->path);
	fputs("</title>\n<style>body{font:14px sans-serif;margin:24px;max-width:1100px;color:#111}"
	      "pre{background:#f6f6f6;padding:12px;white-space:pre-wrap;font-size:12px}"
	      "table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
	      "th{background:#f0f0f0}td:first-child{text-align:left}table.kv th{text-align:left;white-space:pre}"
	      "table.kv td{text-align:left}"
	      "h2{margin-top:28px;border-bottom:1px solid #ccc}.rec{font:bold 14px monospace;background:#eef6ee;padding:8px}"
	      "</style></head><body>\n<h1>xdp-pacer analysis</h1>\n<p>", f);
	html_text(f, r->path);
	fputs("</p>\n<p class='rec'>", f);
	html_text(f, an_recommendation(r, rec, sizeof(rec)));
	fputs("</p>\n<h2>Recording</h2>\n<pre>", f);
	html_text(f, text ? text : "");
	fputs("</pre>\n", f);
	free(text);
	html_audit(f, r);
	html_classes(f, r);
	html_table1(f, r);
	html_sizing(f, r);

	fputs("<h2>Recency distribution</h2>\n", f);
	if (r->t1) {
		fputs("<p>Time since each source-sampled packet's source was last seen: exactly, as HistoricalMembership "
		      "estimates it (recency in items mapped back to timestamps), and as the sketch estimated it when the "
		      "packet arrived (whole ticks; under <i>pace</i> the sketch measures time since the last <i>admitted</i> "
		      "packet, shown as the policy truth).</p>\n", f);
		an_plot_recency(f, r);
	} else {
		html_note(f, "Not available", r->t1_note ? r->t1_note : "");
	}
	fputs("<h2>False drops over time</h2>\n", f);
	if (r->audit && r->audit->nbins) {
		an_plot_timeline(f, r);
	} else {
		html_note(f, "Not available", r->audit_note ? r->audit_note : "no source-sampled packets");
	}
	fputs("<h2>Sizing</h2>\n", f);
	if (r->sizing && r->sizing->npts) {
		const char *noun = backend_of(r->rd->hdr.backend)->noun;

		fprintf(f, "<p>The source-sampled packets replayed through the datapath's %s code at other sizes, scaled to "
			   "the full stream (a 1-in-N source sample on a %s N times narrower has the same load).</p>\n",
			noun, noun);
		an_plot_sizing(f, r);
	} else {
		html_note(f, "Not available", r->sizing_note ? r->sizing_note : "");
	}
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
