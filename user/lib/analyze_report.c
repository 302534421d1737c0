// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "analyze_report.h"
#include "parse.h"

/* ---- small formatting helpers ---- */

static const char *dur(uint64_t ns, char *buf, size_t len)
{
	return format_duration(ns, buf, len);
}

static const char *bytes_str(uint64_t b, char *buf, size_t len)
{
	return format_bytes(b, buf, len);
}

/* "1/64", or a percentage when the threshold is not 2^32/N for a whole N. */
static const char *rate_str(uint64_t thresh, char *buf, size_t len)
{
	uint64_t n;

	if (!thresh) {
		snprintf(buf, len, "off");
		return buf;
	}
	n = (1ULL << 32) / thresh;
	if (n && (1ULL << 32) / n == thresh)
		snprintf(buf, len, "1/%" PRIu64, n);
	else
		snprintf(buf, len, "%.6g%%", 100.0 * (double)thresh / 4294967296.0);
	return buf;
}

static const char *wall_str(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000ULL);
	struct tm tm;

	if (!real_ns || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "unknown");
	return buf;
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

static uint64_t sketch_bytes(const struct pacer_file_header *h)
{
	return sizing_bytes(h->kind, h->rows, h->lines_log2, h->placement, h->ncpus);
}

static double span_s(const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;

	if (h->end_mono_ns > h->start_mono_ns)
		return (double)(h->end_mono_ns - h->start_mono_ns) / 1e9;
	return r->s->n ? (double)(r->s->last_ts - r->s->first_ts) / 1e9 : 0;
}

const char *an_recommendation(const struct an_report *r, char *buf, size_t len)
{
	const struct sizing_result *z = r->sizing;
	const struct sizing_point *b;
	char m[32];

	if (!z) {
		snprintf(buf, len, "no recommendation: %s", r->sizing_note ? r->sizing_note : "sizing not run");
		return buf;
	}
	if (z->best < 0) {
		snprintf(buf, len,
			 "no geometry the loader accepts meets a false-drop rate of %g on this traffic",
			 r->target);
		return buf;
	}
	b = &z->pts[z->best];
	snprintf(buf, len,
		 "xdp-pacer load IFNAME --rows %u --width %" PRIu64 " --layout %s --placement %s: %s of sketch%s",
		 b->rows, b->width_cells, pacer_file_layout_name(r->rd->hdr.kind),
		 pacer_file_placement_name(r->rd->hdr.placement),
		 bytes_str(b->target_bytes, m, sizeof(m)),
		 r->rd->hdr.placement == PACER_PLACEMENT_PERCPU ? " (all CPU copies)" : "");
	return buf;
}

/* ---- text ---- */

static void text_header(FILE *f, const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct an_stream *s = r->s;
	char a[32], b[32], c[32], d[64];
	int i;

	fprintf(f, "xdp-pacer analyze: %s (format %u.%u)\n", r->path, h->version_major, h->version_minor);
	fprintf(f, "  recording: %s on %s, started %s, %.1f s, %" PRIu64 " records (%" PRIu64
		   " source-sampled, %" PRIu64 " packet-sampled only), %" PRIu64 " sources\n",
		h->ifname[0] ? h->ifname : "?", h->hostname[0] ? h->hostname : "?",
		wall_str(h->start_real_ns, d, sizeof(d)), span_s(r), s->n, s->n_source_sampled,
		s->n_packet_only, (uint64_t)s->nsrc);
	fprintf(f, "  limiter: interval %s (threshold %u ticks of %s), policy %s, placement %s, %u rows x %" PRIu64
		   " cells (%s layout), %s, clock %s, prefixes /%u and /%u, %u CPUs\n",
		dur(h->interval_ns, a, sizeof(a)), h->thresh_ticks, dur(1ULL << h->tick_shift, b, sizeof(b)),
		pacer_file_policy_name(h->policy), pacer_file_placement_name(h->placement), h->rows,
		sizing_width_cells(h->kind, h->rows, h->lines_log2), pacer_file_layout_name(h->kind),
		bytes_str(sketch_bytes(h), c, sizeof(c)), pacer_file_clock_name(h->clock), h->prefix4,
		h->prefix6, h->ncpus);
	fprintf(f, "  sampling: sources %s, packets %s\n", rate_str(h->sample_src_thresh, a, sizeof(a)),
		rate_str(h->sample_pkt_thresh, b, sizeof(b)));
	if (h->flags & PACER_FILE_F_COMPLETE)
		fprintf(f, "  records lost by the datapath (ring buffer full): %" PRIu64 "%s\n", h->records_lost,
			h->records_lost ? "  <- streams of sampled sources have gaps: false drops may be overcounted" : "");
	for (i = 0; i < r->rd->n_warnings; i++)
		fprintf(f, "  warning: %s\n", r->rd->warnings[i].msg);
	if (s->out_of_order)
		fprintf(f, "  note: %" PRIu64 " records were out of timestamp order in the file (largest step back %s); sorted by time\n",
			s->out_of_order, dur(s->max_backstep_ns, a, sizeof(a)));
}

static void text_examples(FILE *f, const struct an_report *r, enum audit_kind k, const char *what)
{
	const struct audit_result *au = r->audit;
	char src[64], a[32], b[32];
	uint32_t i;

	for (i = 0; i < au->n_examples[k] && i < 3; i++) {
		const struct audit_example *e = &au->examples[k][i];
		const struct an_source *so = &r->s->src[e->src];
		struct pacer_record rec = { .family = so->family, .prefix = so->prefix };
		char est[24];

		memcpy(rec.addr, so->addr, 16);
		if (e->est_age_ticks == PACER_AGE_NEVER)
			snprintf(est, sizeof(est), "none (stale line)");
		else
			snprintf(est, sizeof(est), "%u ticks", e->est_age_ticks);
		fprintf(f, "      e.g. %s at +%s from %s, cpu %u: truth %s%s; exact age%s %s%u ticks, sketch estimate %s, threshold %u\n",
			what, dur(e->ts_ns - r->s->first_ts, a, sizeof(a)),
			pacer_record_source(&rec, src, sizeof(src)), e->cpu, e->gap_known ? "" : ">= ",
			dur(e->gap_ns, b, sizeof(b)),
			r->rd->hdr.placement == PACER_PLACEMENT_PERCPU ? " on that CPU" : "",
			e->age_known ? "" : ">= ", e->true_age_ticks, est, e->thresh);
	}
}

static void text_audit(FILE *f, const struct an_report *r)
{
	const struct audit_result *au = r->audit;
	const struct pacer_file_header *h = &r->rd->hdr;
	int percpu = h->placement == PACER_PLACEMENT_PERCPU;
	char a[32], b[32];
	uint32_t c;

	fprintf(f, "\nAudit of the recorded verdicts (policy %s: truth = time since the source's previous %s)\n",
		pacer_file_policy_name(h->policy),
		h->policy == PACER_POLICY_QUIET ? "packet" : "admitted packet");
	if (!au) {
		fprintf(f, "  not run: %s\n", r->audit_note ? r->audit_note : "?");
		return;
	}
	fprintf(f, "  %" PRIu64 " packets of %" PRIu64 " source-sampled sources: %" PRIu64 " admitted, %" PRIu64 " dropped\n",
		au->judged_records, au->sources, au->passes, au->drops);
	fprintf(f, "  owed a pass (truth >= interval %s): %" PRIu64 "\n", dur(au->interval_ns, a, sizeof(a)),
		au->eligible);
	fprintf(f, "  false drops: %" PRIu64 " (%.4f%% of owed passes)\n", au->false_drops,
		100.0 * audit_false_drop_rate(au));
	fprintf(f, "    quantisation, by design: %" PRIu64 "  (gap in [interval, interval + 2 ticks): the datapath compares whole\n"
		   "      ticks of %s against threshold ceil(interval/tick) + 1 = %u, so an exact table would drop these too)\n",
		au->false_drops_quant, dur(1ULL << h->tick_shift, b, sizeof(b)), h->thresh_ticks);
	text_examples(f, r, AUDIT_FALSE_DROP_QUANTISATION, "quantisation drop");
	fprintf(f, "    collisions: %" PRIu64 " (%.4f%% of owed passes)  (an exact table would have passed them: other sources share the cells)\n",
		au->false_drops_collision, pct(au->false_drops_collision, au->eligible));
	text_examples(f, r, AUDIT_FALSE_DROP_COLLISION, "collision drop");
	if (!percpu) {
		fprintf(f, "  false passes: %" PRIu64 "  (shared placement: must be 0; only the documented race of two CPUs\n"
			   "    admitting one source at the same moment can cause one)\n", au->false_passes);
		text_examples(f, r, AUDIT_FALSE_PASS, "false pass");
	} else {
		fprintf(f, "  false passes against the global guarantee: %" PRIu64 "  (expected in per-CPU placement: each CPU has\n"
			   "    its own sketch, so a source spread over k CPUs can get up to k packets per interval;\n"
			   "    %" PRIu64 " sources were seen on more than one CPU, most admits of one source in one interval: %" PRIu64 ")\n",
			au->false_passes, au->sources_multi_cpu, au->max_admits_in_interval);
		fprintf(f, "    by CPU:");
		for (c = 0; c < au->ncpus; c++)
			if (au->packets_by_cpu[c])
				fprintf(f, " cpu%u %" PRIu64 " of %" PRIu64 " packets;", c, au->false_passes_by_cpu[c],
					au->packets_by_cpu[c]);
		fprintf(f, "\n");
		text_examples(f, r, AUDIT_FALSE_PASS, "false pass");
		fprintf(f, "  false passes against each CPU's own stream: %" PRIu64 "  (must be 0)\n", au->false_passes_local);
		text_examples(f, r, AUDIT_FALSE_PASS_LOCAL, "CPU-local false pass");
	}
	fprintf(f, "  not judged: %" PRIu64 " packets whose truth is unknown (no earlier packet of the source in the\n"
		   "    recording, and less than an interval since the start)", au->unknown);
	if (au->packet_only)
		fprintf(f, "; %" PRIu64 " packet-sampled-only records (incomplete streams)", au->packet_only);
	fprintf(f, "\n");
	if (au->est_older_than_truth)
		fprintf(f, "  sketch estimates older than the exact age: %" PRIu64 "  (the sketch errs the other way: only races%s can do this)\n",
			au->est_older_than_truth, percpu ? "" : " or lost records");
	if (au->other_thresh)
		fprintf(f, "  note: %" PRIu64 " packets ran under a threshold changed live (set --interval); judged against\n"
			   "    the largest interval that threshold serves\n", au->other_thresh);
	if (h->records_lost || !(h->flags & PACER_FILE_F_COMPLETE))
		fprintf(f, "  caution: %s: a missing admitted packet makes a correct drop look false\n",
			h->records_lost ? "records were lost" : "loss count unknown (incomplete file)");
}

/*
 * Which structure is smallest on this stream, and why: HistoricalMembership
 * holds one entry per distinct source of the window (its tables grow with
 * them), the oracle and the block baseline are sized for W.
 */
static const char *t1_smallest(const struct t1_result *t, char *buf, size_t len)
{
	int i, best = -1;

	for (i = 0; i < T1_NSTRUCT; i++)
		if (t->row[i].ok && (best < 0 || t->row[i].bytes < t->row[best].bytes))
			best = i;
	if (best < 0)
		return "no structure was built";
	snprintf(buf, len,
		 "smallest here: %s.  The window holds at most %" PRIu64 " distinct sources (mean %.0f) of W = %" PRIu64
		 " items: HistoricalMembership stores one entry per distinct source (%.1f bits each), the exact oracle and "
		 "the block baseline keep slots for every item of W (%.1f and %.1f bits per item)%s",
		 t->row[best].name, t->distinct_max, t->distinct_mean, t->window,
		 t->distinct_max ? (double)t->row[T1_HM].bytes * 8 / (double)t->distinct_max : 0,
		 t->row[T1_EXACT].bits_per_item, t->row[T1_BLOCK].bits_per_item,
		 t->distinct_max * 2 < t->window ? "; with many repeats per window that favours HistoricalMembership"
						  : "; with every source distinct all three hold W entries and the "
						    "oracle's wide timestamps cost most");
	return buf;
}

static double hm_bound_ratio(const struct t1_result *t)
{
	return t->paper_hm_distinct_bits > 0 ? (double)t->row[T1_HM].bytes * 8 / t->paper_hm_distinct_bits : 0;
}

static void text_table1(FILE *f, const struct an_report *r)
{
	const struct t1_result *t = r->t1;
	char a[32], b[32], rec[512];
	int i;

	fprintf(f, "\nRecency structures on the same stream (the paper's Table 1, measured)\n");
	if (!t) {
		fprintf(f, "  not run: %s\n", r->t1_note ? r->t1_note : "?");
		return;
	}
	fprintf(f, "  %" PRIu64 " items (source-sampled packets), window W = %" PRIu64 " items (~%.3g s of traffic), eps = 1/%u, D = %" PRIu64 "\n",
		t->items, t->window, t->window_span_s, t->inv_eps, t->block_d);
	fprintf(f, "  %-22s %10s %9s %8s %10s %10s %8s %7s %7s %8s\n", "structure", "memory", "bits/W", "ns/item",
		"mean err", "max err", "in bound", "missed", "stale", "verdicts");
	for (i = 0; i < T1_NSTRUCT; i++) {
		const struct t1_row *w = &t->row[i];

		if (!w->ok) {
			fprintf(f, "  %-22s (not built: %s)\n", w->name ? w->name : "?", t->note);
			continue;
		}
		fprintf(f, "  %-22s %10s %9.1f %8.1f %9.3f%% %9.3f%% %7.3f%% %7" PRIu64 " %7" PRIu64 " %8" PRIu64 "\n",
			w->name, bytes_str(w->bytes, a, sizeof(a)), w->bits_per_item, w->ns_per_item,
			100 * w->mean_rel_err, 100 * w->max_rel_err, pct(w->within_bound, w->in_window), w->missed,
			w->stale, w->verdict_diff);
		if (w->insert_failures)
			fprintf(f, "  %-22s %" PRIu64 " insertions failed (out of memory): items lost\n", "",
				w->insert_failures);
	}
	fprintf(f, "  ns/item: query + insert, each structure alone on the first %" PRIu64 " items\n", t->timed_items);
	fprintf(f, "  errors are relative, |estimate - r| / r, over the %" PRIu64 " items with r <= W; \"in bound\": within\n"
		   "  r/(1+eps) <= estimate <= r for HistoricalMembership, within D - 1 for the block baseline, exact for\n"
		   "  the oracle.  \"verdicts\": gap mapped to time on the other side of the interval than the exact gap\n",
		t->row[T1_EXACT].in_window);
	fprintf(f, "  paper bounds (bits, leading terms, universe 2^%.0f): B = log2 C(N, W) = %.0f (%.1f bits/item);\n"
		   "    HistoricalMembership (1+eps)(B + W log2(1/eps)) = %.0f (%s);  OptimalSM (1+D/W)(B + W log2(W/D)) = %.0f (%s)\n",
		t->universe_log2, t->b_bits, t->b_bits / (double)t->window, t->paper_hm_bits,
		bytes_str((uint64_t)(t->paper_hm_bits / 8), a, sizeof(a)), t->paper_block_bits,
		bytes_str((uint64_t)(t->paper_block_bits / 8), b, sizeof(b)));
	fprintf(f, "  for the stream's own distinct count (at most %" PRIu64 " sources in any W + 1 items): HistoricalMembership\n"
		   "    bound %.0f bits (%s); measured %.2fx that\n",
		t->distinct_max, t->paper_hm_distinct_bits, bytes_str((uint64_t)(t->paper_hm_distinct_bits / 8), a, sizeof(a)),
		hm_bound_ratio(t));
	fprintf(f, "  %s\n", t1_smallest(t, rec, sizeof(rec)));
}

/* The smallest geometry with this many rows that meets the target, or NULL. */
static const struct sizing_point *smallest_meeting(const struct sizing_result *z, uint32_t rows)
{
	const struct sizing_point *best = NULL;
	size_t i;

	for (i = 0; i < z->npts; i++)
		if (z->pts[i].rows == rows && z->pts[i].meets &&
		    (!best || z->pts[i].target_bytes < best->target_bytes))
			best = &z->pts[i];
	return best;
}

static void text_sizing(FILE *f, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	const struct pacer_file_header *h = &r->rd->hdr;
	char a[32], rec[256];
	uint32_t rows;

	fprintf(f, "\nSizing for a false-drop rate of at most %g (collision drops per packet owed a pass)\n", r->target);
	if (!z) {
		fprintf(f, "  not run: %s\n", r->sizing_note ? r->sizing_note : "?");
		return;
	}
	fprintf(f, "  load: %.1f sampled sources per interval per sketch copy (peak %.0f); sampling 1 in %.4g sources,\n"
		   "    so the sample on a sketch %.4g times narrower stands for the full stream: ~%.0f sources per interval (peak)\n",
		z->n_mean, z->n_peak, z->scale, z->scale, z->n_peak * z->scale);
	if (z->current.simulated)
		fprintf(f, "  recorded geometry (%u rows x %" PRIu64 " cells) simulated: %" PRIu64 " false drops of %" PRIu64
			   " owed passes (%.4f%%); model %.3g; audit measured %.4f%%\n",
			h->rows, sizing_width_cells(h->kind, h->rows, h->lines_log2), z->current.false_drops,
			z->current.eligible, 100 * z->current.rate, z->current.model_rate,
			r->audit ? pct(r->audit->false_drops_collision, r->audit->eligible) : 0.0);
	else
		fprintf(f, "  recorded geometry not simulated (narrower than one line at this sampling rate, or too large)\n");
	fprintf(f, "  smallest width meeting the target, per row count (simulated; '*' = the model extrapolates past 0 observed):\n");
	for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
		const struct sizing_point *best = smallest_meeting(z, rows);

		if (!best)
			continue;
		if (best->simulated)
			fprintf(f, "    rows %u: --width %-10" PRIu64 " %10s  simulated %" PRIu64 "/%" PRIu64 " (%.4f%%, 95%% bound %.3g), model %.3g%s\n",
				rows, best->width_cells, bytes_str(best->target_bytes, a, sizeof(a)),
				best->false_drops, best->eligible, 100 * best->rate, best->rate_upper95,
				best->model_rate, best->rate_upper95 > r->target ? " *" : "");
		else
			fprintf(f, "    rows %u: --width %-10" PRIu64 " %10s  model %.3g * (narrower widths already showed 0 false drops)\n",
				rows, best->width_cells, bytes_str(best->target_bytes, a, sizeof(a)),
				best->model_rate);
	}
	fprintf(f, "  recommended: %s\n", an_recommendation(r, rec, sizeof(rec)));
	if (z->best >= 0 && z->best_by_model) {
		const struct sizing_point *b = &z->pts[z->best];
		uint64_t seen = 0;
		int over = 1;
		size_t i;

		for (i = 0; i < z->npts; i++) {
			const struct sizing_point *p = &z->pts[i];

			if (p->rows != b->rows || !p->simulated)
				continue;
			/* The largest sample behind a zero at this row count. */
			if (!p->false_drops && p->eligible > seen)
				seen = p->eligible;
			if (p->false_drops && p->model_rate < p->rate)
				over = 0;
		}
		fprintf(f, "    (0 false drops in %" PRIu64 " owed passes cannot show a rate below %.2g (95%%), so the model\n"
			   "     P = (1 - e^(-n/w))^d decides the last step%s)\n",
			seen, seen ? 3.0 / (double)seen : 1.0,
			over ? "; at narrower widths it predicted more drops than simulated" :
			       "; CAUTION: at narrower widths it predicted fewer drops than simulated");
	}
	if (z->best >= 0 && h->kind == PACER_LAYOUT_ROWS)
		fprintf(f, "    (in the rows layout each row is one cache line per packet: fewer rows cost more memory but less time)\n");
}

int an_report_text(FILE *f, const struct an_report *r)
{
	text_header(f, r);
	if (r->pcap)
		pcap_report_text(f, r);
	text_audit(f, r);
	text_table1(f, r);
	text_sizing(f, r);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

/* JSON has no NaN or infinity. */
static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.9g", v);
	else
		fputs("null", f);
}

static void json_point(FILE *f, const struct sizing_point *p)
{
	fprintf(f, "{\"rows\":%u,\"width_cells\":%" PRIu64 ",\"lines_log2\":%u,\"sim_lines_log2\":%u,\"bytes\":%" PRIu64
		   ",\"simulated\":%s,\"packets\":%" PRIu64 ",\"owed_passes\":%" PRIu64 ",\"false_drops\":%" PRIu64 ",\"rate\":",
		p->rows, p->width_cells, p->target_lines_log2, p->sim_lines_log2, p->target_bytes,
		p->simulated ? "true" : "false", p->packets, p->eligible, p->false_drops);
	json_num(f, p->rate);
	fputs(",\"rate_upper95\":", f);
	json_num(f, p->rate_upper95);
	fputs(",\"model_rate\":", f);
	json_num(f, p->model_rate);
	fprintf(f, ",\"meets_target\":%s}", p->meets ? "true" : "false");
}

int an_report_json(FILE *f, const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct an_stream *s = r->s;
	char buf[256];
	uint32_t c;
	int i;

	fputs("{\"file\":", f);
	json_string(f, r->path);
	fprintf(f, ",\"format\":\"%u.%u\",\"recording\":{\"ifname\":", h->version_major, h->version_minor);
	json_string(f, h->ifname);
	fputs(",\"hostname\":", f);
	json_string(f, h->hostname);
	fprintf(f, ",\"start_real_ns\":%" PRIu64 ",\"start_mono_ns\":%" PRIu64 ",\"end_mono_ns\":%" PRIu64
		   ",\"duration_s\":",
		h->start_real_ns, h->start_mono_ns, h->end_mono_ns);
	json_num(f, span_s(r));
	fprintf(f, ",\"complete\":%s,\"records\":%" PRIu64 ",\"source_sampled\":%" PRIu64 ",\"packet_only\":%" PRIu64
		   ",\"sources\":%u,\"records_lost\":%" PRIu64 ",\"out_of_order\":%" PRIu64 "}",
		h->flags & PACER_FILE_F_COMPLETE ? "true" : "false", s->n, s->n_source_sampled, s->n_packet_only,
		s->nsrc, h->records_lost, s->out_of_order);
	fprintf(f, ",\"limiter\":{\"interval_ns\":%" PRIu64 ",\"thresh_ticks\":%u,\"tick_ns\":%" PRIu64
		   ",\"policy\":\"%s\",\"placement\":\"%s\",\"layout\":\"%s\",\"rows\":%u,\"width_cells\":%" PRIu64
		   ",\"lines_log2\":%u,\"sketch_bytes\":%" PRIu64 ",\"clock\":\"%s\",\"prefix4\":%u,\"prefix6\":%u,\"ncpus\":%u"
		   ",\"sample_src_thresh\":%" PRIu64 ",\"sample_pkt_thresh\":%" PRIu64 "}",
		h->interval_ns, h->thresh_ticks, (uint64_t)1 << h->tick_shift, pacer_file_policy_name(h->policy),
		pacer_file_placement_name(h->placement), pacer_file_layout_name(h->kind), h->rows,
		sizing_width_cells(h->kind, h->rows, h->lines_log2), h->lines_log2, sketch_bytes(h),
		pacer_file_clock_name(h->clock), h->prefix4, h->prefix6, h->ncpus, h->sample_src_thresh,
		h->sample_pkt_thresh);
	if (r->pcap) {
		fputs(",\"capture\":", f);
		pcap_report_json(f, r);
	}
	fputs(",\"warnings\":[", f);
	for (i = 0; i < r->rd->n_warnings; i++) {
		fprintf(f, "%s{\"problem\":\"%s\",\"offset\":%" PRIu64 ",\"message\":", i ? "," : "",
			pacer_file_problem_name(r->rd->warnings[i].problem), r->rd->warnings[i].offset);
		json_string(f, r->rd->warnings[i].msg);
		fputc('}', f);
	}
	fputc(']', f);

	fputs(",\"audit\":", f);
	if (r->audit) {
		const struct audit_result *au = r->audit;

		fprintf(f, "{\"packets\":%" PRIu64 ",\"sources\":%" PRIu64 ",\"passes\":%" PRIu64 ",\"drops\":%" PRIu64
			   ",\"owed_passes\":%" PRIu64 ",\"unknown\":%" PRIu64 ",\"false_drops\":%" PRIu64
			   ",\"false_drops_quantisation\":%" PRIu64 ",\"false_drops_collision\":%" PRIu64
			   ",\"false_drop_rate\":",
			au->judged_records, au->sources, au->passes, au->drops, au->eligible, au->unknown,
			au->false_drops, au->false_drops_quant, au->false_drops_collision);
		json_num(f, audit_false_drop_rate(au));
		fprintf(f, ",\"false_passes\":%" PRIu64 ",\"false_passes_cpu_local\":%" PRIu64
			   ",\"estimates_older_than_truth\":%" PRIu64 ",\"sources_on_several_cpus\":%" PRIu64
			   ",\"max_admits_in_one_interval\":%" PRIu64 ",\"packet_only_not_judged\":%" PRIu64 ",\"by_cpu\":[",
			au->false_passes, au->false_passes_local, au->est_older_than_truth, au->sources_multi_cpu,
			au->max_admits_in_interval, au->packet_only);
		for (c = 0, i = 0; c < au->ncpus; c++) {
			if (!au->packets_by_cpu[c])
				continue;
			fprintf(f, "%s{\"cpu\":%u,\"packets\":%" PRIu64 ",\"false_passes\":%" PRIu64 ",\"false_drops\":%" PRIu64 "}",
				i++ ? "," : "", c, au->packets_by_cpu[c], au->false_passes_by_cpu[c],
				au->false_drops_by_cpu[c]);
		}
		fprintf(f, "],\"bin_ns\":%" PRIu64 ",\"timeline\":[", au->bin_ns);
		for (c = 0; c < au->nbins; c++)
			fprintf(f, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", c ? "," : "",
				au->bins[c].packets, au->bins[c].drops, au->bins[c].false_drops_collision,
				au->bins[c].false_drops_quant, au->bins[c].false_passes);
		fputs("],\"timeline_columns\":[\"packets\",\"drops\",\"false_drops_collision\",\"false_drops_quantisation\",\"false_passes\"]}", f);
	} else {
		fputs("null", f);
	}

	fputs(",\"table1\":", f);
	if (r->t1) {
		const struct t1_result *t = r->t1;

		fprintf(f, "{\"items\":%" PRIu64 ",\"timed_items\":%" PRIu64 ",\"window\":%" PRIu64 ",\"inv_eps\":%u,\"block_d\":%" PRIu64
			   ",\"window_span_s\":",
			t->items, t->timed_items, t->window, t->inv_eps, t->block_d);
		json_num(f, t->window_span_s);
		fputs(",\"bound_bits\":{\"B\":", f);
		json_num(f, t->b_bits);
		fputs(",\"historical_membership\":", f);
		json_num(f, t->paper_hm_bits);
		fputs(",\"optimal_sm\":", f);
		json_num(f, t->paper_block_bits);
		fputs(",\"historical_membership_distinct\":", f);
		json_num(f, t->paper_hm_distinct_bits);
		fprintf(f, "},\"key_bits\":%u,\"distinct_max\":%" PRIu64 ",\"distinct_mean\":", t->key_bits,
			t->distinct_max);
		json_num(f, t->distinct_mean);
		fputs(",\"structures\":[", f);
		for (i = 0; i < T1_NSTRUCT; i++) {
			const struct t1_row *w = &t->row[i];

			fprintf(f, "%s{\"name\":", i ? "," : "");
			json_string(f, w->name ? w->name : "?");
			fprintf(f, ",\"built\":%s,\"bytes\":%" PRIu64 ",\"bits_per_item\":", w->ok ? "true" : "false", w->bytes);
			json_num(f, w->bits_per_item);
			fputs(",\"ns_per_item\":", f);
			json_num(f, w->ns_per_item);
			fputs(",\"mean_rel_err\":", f);
			json_num(f, w->mean_rel_err);
			fputs(",\"max_rel_err\":", f);
			json_num(f, w->max_rel_err);
			fprintf(f, ",\"max_abs_err\":%" PRIu64 ",\"in_window\":%" PRIu64 ",\"within_bound\":%" PRIu64
				   ",\"missed\":%" PRIu64 ",\"stale\":%" PRIu64 ",\"verdicts_differ\":%" PRIu64
				   ",\"insert_failures\":%" PRIu64 "}",
				w->max_abs_err, w->in_window, w->within_bound, w->missed, w->stale, w->verdict_diff,
				w->insert_failures);
		}
		fputs("]}", f);
	} else {
		fputs("null", f);
	}

	fputs(",\"sizing\":", f);
	if (r->sizing) {
		const struct sizing_result *z = r->sizing;
		size_t k;

		fputs("{\"target\":", f);
		json_num(f, r->target);
		fputs(",\"scale\":", f);
		json_num(f, z->scale);
		fputs(",\"sampled_sources_per_interval_mean\":", f);
		json_num(f, z->n_mean);
		fputs(",\"sampled_sources_per_interval_peak\":", f);
		json_num(f, z->n_peak);
		fputs(",\"current\":", f);
		if (z->current.simulated)
			json_point(f, &z->current);
		else
			fputs("null", f);
		fputs(",\"recommended\":", f);
		if (z->best >= 0) {
			json_point(f, &z->pts[z->best]);
		} else {
			fputs("null", f);
		}
		fprintf(f, ",\"recommended_by_model\":%s,\"recommendation\":", z->best >= 0 && z->best_by_model ? "true" : "false");
		json_string(f, an_recommendation(r, buf, sizeof(buf)));
		fputs(",\"points\":[", f);
		for (k = 0; k < z->npts; k++) {
			if (k)
				fputc(',', f);
			json_point(f, &z->pts[k]);
		}
		fputs("]}", f);
	} else {
		fputs("null", f);
	}
	fputs(",\"notes\":{\"audit\":", f);
	json_string(f, r->audit_note ? r->audit_note : "");
	fputs(",\"table1\":", f);
	json_string(f, r->t1_note ? r->t1_note : "");
	fputs(",\"sizing\":", f);
	json_string(f, r->sizing_note ? r->sizing_note : "");
	fputs("}}\n", f);
	return ferror(f) ? -EIO : 0;
}

/* ---- SVG ---- */

void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

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

void svg_chart_write(FILE *f, const struct svg_chart *c)
{
	struct axis ax = { .log = c->logx }, ay = { .log = c->logy };
	size_t i, k;

	ax_range(&ax, c, 1);
	ay.log = c->logy;
	ax_range(&ay, c, 0);
	fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' viewBox='0 0 %.0f %.0f' role='img'>\n",
		SVG_W, SVG_H, SVG_W, SVG_H);
	fputs("<style>.grid{stroke:#ddd;stroke-width:1}.tx{font:11px sans-serif;text-anchor:middle;fill:#444}"
	      ".ty{font:11px sans-serif;text-anchor:end;fill:#444}.lab{font:12px sans-serif;fill:#222}"
	      ".ttl{font:bold 13px sans-serif;fill:#111}.mark{stroke:#888;stroke-dasharray:4 3}</style>\n", f);
	fprintf(f, "<text x='%.1f' y='18' class='ttl'>", M_LEFT);
	html_text(f, c->title ? c->title : "");
	fputs("</text>\n", f);
	ticks(f, &ax, 1);
	ticks(f, &ay, 0);
	fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#888'/>\n", M_LEFT, M_TOP,
		SVG_W - M_RIGHT - M_LEFT, SVG_H - M_BOTTOM - M_TOP);
	fprintf(f, "<text x='%.1f' y='%.1f' class='tx'>", (M_LEFT + SVG_W - M_RIGHT) / 2, SVG_H - 12);
	html_text(f, c->xlabel ? c->xlabel : "");
	fprintf(f, "</text>\n<text transform='translate(16 %.1f) rotate(-90)' class='tx'>", (M_TOP + SVG_H - M_BOTTOM) / 2);
	html_text(f, c->ylabel ? c->ylabel : "");
	fputs("</text>\n", f);
	if (c->vline && usable(&ax, c->vline) && c->vline >= ax.lo && c->vline <= ax.hi) {
		double x = ax_map(&ax, c->vline, M_LEFT, SVG_W - M_RIGHT);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='mark'/><text x='%.1f' y='%.1f' class='lab'>",
			x, M_TOP, x, SVG_H - M_BOTTOM, x + 3, M_TOP + 12);
		html_text(f, c->vline_label ? c->vline_label : "");
		fputs("</text>\n", f);
	}
	if (c->hline && usable(&ay, c->hline) && c->hline >= ay.lo && c->hline <= ay.hi) {
		double y = ax_map(&ay, c->hline, SVG_H - M_BOTTOM, M_TOP);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' class='mark'/><text x='%.1f' y='%.1f' class='lab'>",
			M_LEFT, y, SVG_W - M_RIGHT, y, M_LEFT + 4, y - 4);
		html_text(f, c->hline_label ? c->hline_label : "");
		fputs("</text>\n", f);
	}
	for (i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];
		int drawn = 0;

		fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2'%s points='", s->color,
			s->dashed ? " stroke-dasharray='6 4'" : "");
		for (k = 0; k < s->n; k++) {
			if (!usable(&ax, s->x[k]) || !usable(&ay, s->y[k]))
				continue;
			fprintf(f, "%s%.1f,%.1f", drawn++ ? " " : "", ax_map(&ax, s->x[k], M_LEFT, SVG_W - M_RIGHT),
				ax_map(&ay, s->y[k], SVG_H - M_BOTTOM, M_TOP));
		}
		fputs("'/>\n", f);
		if (s->n <= 64) {
			for (k = 0; k < s->n; k++)
				if (usable(&ax, s->x[k]) && usable(&ay, s->y[k]))
					fprintf(f, "<circle cx='%.1f' cy='%.1f' r='2.5' fill='%s'/>\n",
						ax_map(&ax, s->x[k], M_LEFT, SVG_W - M_RIGHT),
						ax_map(&ay, s->y[k], SVG_H - M_BOTTOM, M_TOP), s->color);
		}
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s' stroke-width='3'%s/><text x='%.1f' y='%.1f' class='lab'>",
			SVG_W - M_RIGHT + 10, M_TOP + 10 + 18.0 * (double)i, SVG_W - M_RIGHT + 30,
			M_TOP + 10 + 18.0 * (double)i, s->color, s->dashed ? " stroke-dasharray='6 4'" : "",
			SVG_W - M_RIGHT + 35, M_TOP + 14 + 18.0 * (double)i);
		html_text(f, s->name ? s->name : "");
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}

/* ---- HTML ---- */

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
				      "#8c564b", "#e377c2", "#17becf" };

static void plot_recency(FILE *f, const struct an_report *r)
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
	snprintf(lab, sizeof(lab), "interval %s", dur(r->rd->hdr.interval_ns, d, sizeof(d)));
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

static void plot_timeline(FILE *f, const struct an_report *r)
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
	snprintf(xl, sizeof(xl), "seconds since the first record (bins of %s)", dur(au->bin_ns, d, sizeof(d)));
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

static void plot_sizing(FILE *f, const struct an_report *r)
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

/* A paragraph saying why a section is missing. */
static void html_note(FILE *f, const char *what, const char *why)
{
	fprintf(f, "<p>%s: ", what);
	html_text(f, why);
	fputs("</p>\n", f);
}

static void html_cell(FILE *f, const char *tag, const char *text)
{
	fprintf(f, "<%s>", tag);
	html_text(f, text);
	fprintf(f, "</%s>", tag);
}

/* A two-column row: label, then printf-formatted value. */
static void html_kv(FILE *f, const char *label, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("<tr>", f);
	html_cell(f, "th", label);
	html_cell(f, "td", buf);
	fputs("</tr>\n", f);
}

static void html_audit(FILE *f, const struct an_report *r)
{
	const struct audit_result *au = r->audit;
	char a[32];

	fputs("<h2>Audit of the recorded verdicts</h2>\n", f);
	if (!au) {
		html_note(f, "Not run", r->audit_note ? r->audit_note : "?");
		return;
	}
	fputs("<table class='kv'>\n", f);
	html_kv(f, "packets judged", "%" PRIu64 " of %" PRIu64 " source-sampled sources", au->judged_records, au->sources);
	html_kv(f, "admitted / dropped", "%" PRIu64 " / %" PRIu64, au->passes, au->drops);
	html_kv(f, "owed a pass", "%" PRIu64 " (truth >= interval %s)", au->eligible, dur(au->interval_ns, a, sizeof(a)));
	html_kv(f, "false drops", "%" PRIu64 " (%.4f%% of owed passes)", au->false_drops, 100.0 * audit_false_drop_rate(au));
	html_kv(f, "  quantisation (by design)", "%" PRIu64, au->false_drops_quant);
	html_kv(f, "  collisions", "%" PRIu64 " (%.4f%% of owed passes)", au->false_drops_collision,
		pct(au->false_drops_collision, au->eligible));
	html_kv(f, "false passes", "%" PRIu64 "%s", au->false_passes,
		r->rd->hdr.placement == PACER_PLACEMENT_PERCPU ? " (per-CPU placement: expected)" : " (must be 0)");
	html_kv(f, "not judged", "%" PRIu64 " (truth unknown)", au->unknown);
	if (au->est_older_than_truth)
		html_kv(f, "estimates older than truth", "%" PRIu64, au->est_older_than_truth);
	fputs("</table>\n", f);
}

static void html_table1(FILE *f, const struct an_report *r)
{
	static const char *const heads[] = { "structure", "memory", "bits/W", "ns/item", "mean err", "max err",
					      "in bound", "missed", "stale", "verdicts" };
	const struct t1_result *t = r->t1;
	char a[32], buf[512];
	unsigned i;

	fputs("<h2>Recency structures (the paper's Table 1, measured)</h2>\n", f);
	if (!t) {
		html_note(f, "Not run", r->t1_note ? r->t1_note : "?");
		return;
	}
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
			bytes_str(w->bytes, a, sizeof(a)), w->bits_per_item, w->ns_per_item, 100 * w->mean_rel_err,
			100 * w->max_rel_err, pct(w->within_bound, w->in_window), w->missed, w->stale, w->verdict_diff);
	}
	fprintf(f, "</table>\n<p>ns/item: query + insert, each structure alone on the first %" PRIu64
		   " items. Errors are relative over the %" PRIu64 " items with r &le; W.</p>\n<table class='kv'>\n",
		t->timed_items, t->row[T1_EXACT].in_window);
	html_kv(f, "B = log2 C(N, W)", "%.0f bits (universe 2^%.0f)", t->b_bits, t->universe_log2);
	html_kv(f, "HM bound for W", "%.0f bits (%s)", t->paper_hm_bits, bytes_str((uint64_t)(t->paper_hm_bits / 8), a, sizeof(a)));
	html_kv(f, "OptimalSM bound for W", "%.0f bits", t->paper_block_bits);
	html_kv(f, "HM bound for the distinct count", "%.0f bits (%s); HM measured %.2fx that", t->paper_hm_distinct_bits,
		bytes_str((uint64_t)(t->paper_hm_distinct_bits / 8), a, sizeof(a)), hm_bound_ratio(t));
	fputs("</table>\n<p>", f);
	html_text(f, t1_smallest(t, buf, sizeof(buf)));
	fputs("</p>\n", f);
}

static void html_sizing(FILE *f, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	char a[32];
	uint32_t rows;

	fprintf(f, "<h2>Sizing for a false-drop rate of at most %g</h2>\n", r->target);
	if (!z) {
		html_note(f, "Not run", r->sizing_note ? r->sizing_note : "?");
		return;
	}
	fprintf(f, "<p>Load: %.1f sampled sources per interval per sketch copy (peak %.0f), ~%.0f sources per interval "
		   "in the full stream (peak).</p>\n<table><tr><th>rows</th><th>--width</th><th>memory</th>"
		   "<th>simulated false drops</th><th>rate</th><th>model</th></tr>\n",
		z->n_mean, z->n_peak, z->n_peak * z->scale);
	for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
		const struct sizing_point *best = smallest_meeting(z, rows);

		if (!best)
			continue;
		fprintf(f, "<tr><td>%u</td><td>%" PRIu64 "</td><td>%s</td>", rows, best->width_cells,
			bytes_str(best->target_bytes, a, sizeof(a)));
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
	text_header(mem, r);
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
	html_table1(f, r);
	html_sizing(f, r);

	fputs("<h2>Recency distribution</h2>\n", f);
	if (r->t1) {
		fputs("<p>Time since each source-sampled packet's source was last seen: exactly, as HistoricalMembership "
		      "estimates it (recency in items mapped back to timestamps), and as the sketch estimated it when the "
		      "packet arrived (whole ticks; under <i>pace</i> the sketch measures time since the last <i>admitted</i> "
		      "packet, shown as the policy truth).</p>\n", f);
		plot_recency(f, r);
	} else {
		html_note(f, "Not available", r->t1_note ? r->t1_note : "");
	}
	fputs("<h2>False drops over time</h2>\n", f);
	if (r->audit && r->audit->nbins) {
		plot_timeline(f, r);
	} else {
		html_note(f, "Not available", r->audit_note ? r->audit_note : "no source-sampled packets");
	}
	fputs("<h2>Sizing</h2>\n", f);
	if (r->sizing && r->sizing->npts) {
		fputs("<p>The source-sampled packets replayed through the datapath's sketch code at other widths, scaled to "
		      "the full stream (a 1-in-N source sample on a sketch N times narrower has the same load).</p>\n", f);
		plot_sizing(f, r);
	} else {
		html_note(f, "Not available", r->sizing_note ? r->sizing_note : "");
	}
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
