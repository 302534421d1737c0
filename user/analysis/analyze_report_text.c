// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `analyze` as text: the default output. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include "analyze_report_fmt.h"
#include "backend.h"
#include "cli_values.h"
#include "pacer_ticks.h"

/* A section that did not run says why; true then. */
static bool text_not_run(FILE *f, const void *result, const char *note)
{
	if (!result)
		fprintf(f, "  not run: %s\n", note ? note : "?");
	return !result;
}

void an_text_header(FILE *f, const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct an_stream *s = r->s;
	char a[32], b[32], c[32], d[64];
	int i;

	fprintf(f, "xdp-pacer analyze: %s (format %u.%u%s%s)\n", r->path, h->version_major,
		h->version_minor, h->writer[0] && !r->pcap ? ", written by " : "",
		h->writer[0] && !r->pcap ? h->writer : "");
	fprintf(f, "  recording: %s on %s, started %s, %.1f s, %" PRIu64 " records (%" PRIu64
		   " source-sampled, %" PRIu64 " packet-sampled only), %" PRIu64 " sources\n",
		h->ifname[0] ? h->ifname : "?", h->hostname[0] ? h->hostname : "?",
		an_wall_str(h->start_real_ns, d, sizeof(d)), an_span_s(r), s->n, s->n_source_sampled,
		s->n_packet_only, (uint64_t)s->nsrc);
	if (h->rate_n > 1)
		fprintf(f, "  limiter: rate %u per %s (GCRA: threshold %u, burst tolerance %u ticks of %s)\n",
			h->rate_n, format_duration(h->interval_ns, a, sizeof(a)), h->thresh_ticks,
			h->burst_ticks, format_duration(pacer_tick_ns(h->tick_shift), b, sizeof(b)));
	fprintf(f, "  limiter: interval %s (threshold %u ticks of %s), policy %s, placement %s, %s, %s, clock %s, prefixes /%u and /%u, %u CPUs\n",
		format_duration(h->interval_ns / (h->rate_n > 1 ? h->rate_n : 1), a, sizeof(a)),
		h->thresh_ticks, format_duration(pacer_tick_ns(h->tick_shift), b, sizeof(b)),
		policy_name(h->policy), placement_name(h->placement), an_structure_str(h, d, sizeof(d)),
		format_bytes(an_sketch_bytes(h), c, sizeof(c)), clock_name(h->clock), h->prefix4,
		h->prefix6, h->ncpus);
	fprintf(f, "  sampling: sources %s, packets %s\n", an_rate_str(h->sample_src_thresh, a, sizeof(a)),
		an_rate_str(h->sample_pkt_thresh, b, sizeof(b)));
	if (h->flags & PACER_FILE_F_COMPLETE)
		fprintf(f, "  records lost by the datapath (ring buffer full): %" PRIu64 "%s\n", h->records_lost,
			h->records_lost ? "  <- streams of sampled sources have gaps: false drops may be overcounted" : "");
	for (i = 0; i < r->rd->n_warnings; i++)
		fprintf(f, "  warning: %s\n", r->rd->warnings[i].msg);
	if (s->out_of_order)
		fprintf(f, "  note: %" PRIu64 " records were out of timestamp order in the file (largest step back %s); sorted by time\n",
			s->out_of_order, format_duration(s->max_backstep_ns, a, sizeof(a)));
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
			what, format_duration(e->ts_ns - r->s->first_ts, a, sizeof(a)),
			pacer_record_source(&rec, src, sizeof(src)), e->cpu, e->gap_known ? "" : ">= ",
			format_duration(e->gap_ns, b, sizeof(b)),
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
		policy_name(h->policy),
		h->policy == PACER_POLICY_QUIET ? "packet" : "admitted packet");
	if (text_not_run(f, au, r->audit_note))
		return;
	fprintf(f, "  %" PRIu64 " packets of %" PRIu64 " source-sampled sources: %" PRIu64 " admitted, %" PRIu64 " dropped\n",
		au->judged_records, au->sources, au->passes, au->drops);
	if (au->observed_drops)
		fprintf(f, "  of the drops, %" PRIu64 " were observed (observe mode passed them); they are judged as drops\n",
			au->observed_drops);
	fprintf(f, "  the exact per-source GCRA would admit %" PRIu64 " of them (admitted: %.2f%% of that)\n",
		au->exact_passes, an_pct(au->passes, au->exact_passes));
	if (h->n_classes)
		fprintf(f, "  all classes together, each packet against its own class's limit (per class below)\n"
			   "  owed a pass (truth >= its class's limit): %" PRIu64 "\n", au->eligible);
	else
		fprintf(f, "  owed a pass (truth >= interval %s): %" PRIu64 "\n",
			format_duration(au->interval_ns, a, sizeof(a)), au->eligible);
	fprintf(f, "  false drops: %" PRIu64 " (%.4f%% of owed passes)\n", au->false_drops,
		100.0 * audit_false_drop_rate(au));
	if (h->n_classes)
		fprintf(f, "    quantisation, by design: %" PRIu64 "  (gap in [interval, interval + 2 ticks): the datapath compares whole\n"
			   "      ticks of %s against its class's threshold ceil(interval/tick) + 1, so an exact table would drop these too)\n",
			au->false_drops_quant, format_duration(pacer_tick_ns(h->tick_shift), b, sizeof(b)));
	else
		fprintf(f, "    quantisation, by design: %" PRIu64 "  (gap in [interval, interval + 2 ticks): the datapath compares whole\n"
			   "      ticks of %s against threshold ceil(interval/tick) + 1 = %u, so an exact table would drop these too)\n",
			au->false_drops_quant, format_duration(pacer_tick_ns(h->tick_shift), b, sizeof(b)), h->thresh_ticks);
	text_examples(f, r, AUDIT_FALSE_DROP_QUANTISATION, "quantisation drop");
	fprintf(f, "    collisions: %" PRIu64 " (%.4f%% of owed passes)  (an exact table would have passed them: other sources share the cells)\n",
		au->false_drops_collision, an_pct(au->false_drops_collision, au->eligible));
	text_examples(f, r, AUDIT_FALSE_DROP_COLLISION, "collision drop");
	if (!percpu) {
		fprintf(f, "  false passes: %" PRIu64 "  (shared placement, %s%s)\n", au->false_passes,
			an_false_pass_note(h),
			backend_of(h->backend)->evicts(h->on_full) ? ""
			: "; only the documented race of two CPUs\n    admitting one source at the same moment can cause one");
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

/* A capture's classes: what each class's limit would admit and drop, and who it holds. */
static void text_capture_classes(FILE *f, const struct an_report *r)
{
	const struct pcap_summary *m = r->pcap;
	char lim[512];
	uint32_t i;

	fprintf(f, "\nCapture per class (the datapath's classification; each class's limit applied by an exact limiter)\n");
	fprintf(f, "  exempt list: %" PRIu64 " frames passed; deny list: %" PRIu64 " frames dropped; no class matched: %" PRIu64 " frames passed\n",
		m->exempt, m->denied, m->unclassified);
	for (i = 0; i < r->n_classes; i++) {
		const struct an_class_audit *ca = &r->classes[i];
		const struct audit_result *au = ca->audit;

		fprintf(f, "  class %s: %s\n", ca->c ? ca->c->name : "(global limit)",
			an_class_limit_str(ca, lim, sizeof(lim)));
		if (au->action != PACER_ACTION_PACE) {
			fprintf(f, "    %" PRIu64 " frames, all %s\n", m->class_frames[ca->slot],
				au->action == PACER_ACTION_DROP ? "dropped" : "passed");
			continue;
		}
		fprintf(f, "    %" PRIu64 " frames of %" PRIu64 " keys: %" PRIu64 " admitted, %" PRIu64 " dropped (%.2f %%)\n",
			au->judged_records, au->sources, au->passes, au->drops,
			an_pct(au->drops, au->judged_records));
		if (au->observed_drops)
			fprintf(f, "    of the drops, %" PRIu64 " observed (passed in observe mode)\n",
				au->observed_drops);
		fprintf(f, "    keys per interval of its limit: mean %.1f, peak %" PRIu64 "\n",
			au->keys_per_interval_mean, au->keys_per_interval_peak);
	}
	an_class_sizing(r, lim, sizeof(lim));
	fprintf(f, "  %s\n", lim);
}

/* Each class against its own limit: a recording of a program with traffic classes. */
static void text_classes(FILE *f, const struct an_report *r)
{
	char lim[512], name[40];
	uint32_t i;

	if (!r->n_classes && r->pcap && (r->pcap->exempt || r->pcap->denied))
		fprintf(f, "\nCapture: exempt list: %" PRIu64 " frames passed; deny list: %" PRIu64 " frames dropped\n",
			r->pcap->exempt, r->pcap->denied);
	if (!r->n_classes)
		return;
	if (r->pcap) {
		text_capture_classes(f, r);
		return;
	}
	fprintf(f, "\nAudit per class (each packet judged against its own class's limit; classes never share a source)\n");
	for (i = 0; i < r->n_classes; i++) {
		const struct an_class_audit *ca = &r->classes[i];
		const struct audit_result *au = ca->audit;

		if (ca->c)
			snprintf(name, sizeof(name), "%s", ca->c->name);
		else
			snprintf(name, sizeof(name), "(global limit)");
		fprintf(f, "  class %s: %s\n", name, an_class_limit_str(ca, lim, sizeof(lim)));
		if (!au->judged_records) {
			fprintf(f, "    no source-sampled packets%s\n",
				au->packet_only ? " (only packet-sampled ones: incomplete streams)" : "");
			continue;
		}
		fprintf(f, "    %" PRIu64 " packets of %" PRIu64 " sources: %" PRIu64 " admitted, %" PRIu64 " dropped\n",
			au->judged_records, au->sources, au->passes, au->drops);
		if (au->action != PACER_ACTION_PACE) {
			fprintf(f, "    against its action: false passes %" PRIu64 ", false drops %" PRIu64 "\n",
				au->false_passes, au->false_drops);
			continue;
		}
		fprintf(f, "    owed a pass: %" PRIu64 "; false drops %" PRIu64 " (%.4f%%: quantisation %" PRIu64 ", collisions %" PRIu64 ")\n",
			au->eligible, au->false_drops, 100.0 * audit_false_drop_rate(au),
			au->false_drops_quant, au->false_drops_collision);
		if (au->key_merged)
			fprintf(f, "    false passes: not checked (%s)\n", an_class_key_note(au));
		else if (au->placement == PACER_PLACEMENT_PERCPU)
			fprintf(f, "    false passes: %" PRIu64 " against the global guarantee, %" PRIu64 " against each CPU's own stream (must be 0)\n",
				au->false_passes, au->false_passes_local);
		else
			fprintf(f, "    false passes: %" PRIu64 "\n", au->false_passes);
		fprintf(f, "    not judged: %" PRIu64 "%s\n", au->unknown,
			au->key_merged ? " (truth unknown, or not owed a pass by the merged stream)" : " (truth unknown)");
		fprintf(f, "    sources per interval of its limit: mean %.1f, peak %" PRIu64 "%s\n",
			au->keys_per_interval_mean, au->keys_per_interval_peak,
			an_source_rate(&r->rd->hdr) < 1 ? " (of the sampled sources)" : "");
		if (au->other_thresh)
			fprintf(f, "    note: %" PRIu64 " packets ran under a limit changed live\n", au->other_thresh);
	}
	an_class_sizing(r, lim, sizeof(lim));
	fprintf(f, "  %s\n", lim);
	if (r->audit && r->audit->unknown_class)
		fprintf(f, "  %" PRIu64 " packets of classes not in the recording's table (added live after it started): not judged\n",
			r->audit->unknown_class);
	if (r->audit && r->rd->hdr.classes_changed_ns)
		fprintf(f, "  the class list changed %.3f s into the recording ('set'): the %" PRIu64 " packets after that are not judged\n",
			(double)(r->rd->hdr.classes_changed_ns - r->rd->hdr.start_mono_ns) / 1e9,
			r->audit->after_class_change);
}

static void text_table1(FILE *f, const struct an_report *r)
{
	const struct t1_result *t = r->t1;
	char a[32], b[32], rec[512];
	int i;

	fprintf(f, "\nRecency structures on the same stream (the paper's Table 1, measured)\n");
	if (text_not_run(f, t, r->t1_note))
		return;
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
			w->name, format_bytes(w->bytes, a, sizeof(a)), w->bits_per_item, w->ns_per_item,
			100 * w->mean_rel_err, 100 * w->max_rel_err, an_pct(w->within_bound, w->in_window), w->missed,
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
		format_bytes((uint64_t)(t->paper_hm_bits / 8), a, sizeof(a)), t->paper_block_bits,
		format_bytes((uint64_t)(t->paper_block_bits / 8), b, sizeof(b)));
	fprintf(f, "  for the stream's own distinct count (at most %" PRIu64 " sources in any W + 1 items): HistoricalMembership\n"
		   "    bound %.0f bits (%s); measured %.2fx that\n",
		t->distinct_max, t->paper_hm_distinct_bits, format_bytes((uint64_t)(t->paper_hm_distinct_bits / 8), a, sizeof(a)),
		an_hm_bound_ratio(t));
	fprintf(f, "  %s\n", an_t1_smallest(t, rec, sizeof(rec)));
}


/* "NAME'": the rest of the model's command for a backend sized by width alone. */
static const char *rec_model(const struct backend_desc *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s'", d->name);
	return buf;
}

static void text_sizing(FILE *f, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct backend_desc *d = backend_of(h->backend);
	int evict = d->evicts(h->on_full);
	char a[32], rec[256];
	uint32_t rows;

	if (evict)
		fprintf(f, "\nSizing for an error rate of at most %g (table, evict-oldest: collision drops plus evictions of\n"
			   "  a fresh entry, each at most one false pass, per packet owed a pass)\n", r->target);
	else
		fprintf(f, "\nSizing for a false-drop rate of at most %g (collision drops per packet owed a pass)\n", r->target);
	if (text_not_run(f, z, r->sizing_note))
		return;
	fprintf(f, "  load: %.1f sampled sources per interval per %s copy (peak %.0f); sampling 1 in %.4g sources,\n"
		   "    so the sample on a %s %.4g times narrower stands for the full stream: ~%.0f sources per interval (peak)\n",
		z->n_mean, d->noun, z->n_peak, z->scale, d->noun, z->scale, z->n_peak * z->scale);
	if (z->current.simulated)
		fprintf(f, "  recorded geometry (%s) simulated: %" PRIu64 " false drops%s of %" PRIu64
			   " owed passes (%.4f%%); model %.3g; audit measured %.4f%%\n",
			an_structure_str(h, rec, sizeof(rec)), z->current.false_drops,
			evict ? " and evictions" : "", z->current.eligible, 100 * z->current.rate,
			z->current.model_rate,
			r->audit ? an_pct(r->audit->false_drops_collision, r->audit->eligible) : 0.0);
	else
		fprintf(f, "  recorded geometry not simulated (narrower than one line at this sampling rate, or too large)\n");
	fprintf(f, "  smallest width meeting the target, per row count (simulated; '*' = the model extrapolates past 0 observed):\n");
	for (rows = 1; rows <= PACER_MAX_ROWS; rows++) {
		const struct sizing_point *best = an_smallest_meeting(z, rows);

		if (!best)
			continue;
		if (best->simulated && best->sim_lines)
			fprintf(f, "    %u lines: --width %-10" PRIu64 " %10s  simulated %" PRIu64 "/%" PRIu64 " (%.4f%%, 95%% bound %.3g), model %.3g%s\n",
				best->target_lines, best->width_cells,
				format_bytes(best->target_bytes, a, sizeof(a)), best->false_drops,
				best->eligible, 100 * best->rate, best->rate_upper95, best->model_rate,
				best->rate_upper95 > r->target ? " *" : "");
		else if (best->simulated)
			fprintf(f, "    rows %u: --width %-10" PRIu64 " %10s  simulated %" PRIu64 "/%" PRIu64 " (%.4f%%, 95%% bound %.3g), model %.3g%s\n",
				rows, best->width_cells, format_bytes(best->target_bytes, a, sizeof(a)),
				best->false_drops, best->eligible, 100 * best->rate, best->rate_upper95,
				best->model_rate, best->rate_upper95 > r->target ? " *" : "");
		else if (best->target_lines)
			fprintf(f, "    %u lines: --width %-10" PRIu64 " %10s  model %.3g * (narrower widths already showed 0 false drops)\n",
				best->target_lines, best->width_cells,
				format_bytes(best->target_bytes, a, sizeof(a)), best->model_rate);
		else
			fprintf(f, "    rows %u: --width %-10" PRIu64 " %10s  model %.3g * (narrower widths already showed 0 false drops)\n",
				rows, best->width_cells, format_bytes(best->target_bytes, a, sizeof(a)),
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
			   "     %s%s decides the last step%s)\n",
			seen, seen ? 3.0 / (double)seen : 1.0,
			d->sized_by_rows ? "P = (1 - e^(-n/w))^d" : "of 'xdp-pacer model --backend ", d->sized_by_rows ? "" : rec_model(d, a, sizeof(a)),
			over ? "; at narrower widths it predicted more drops than simulated" :
			       "; CAUTION: at narrower widths it predicted fewer drops than simulated");
	}
	if (z->best >= 0 && d->sized_by_rows && h->kind == PACER_LAYOUT_ROWS)
		fprintf(f, "    (in the rows layout each row is one cache line per packet: fewer rows cost more memory but less time)\n");
}

int an_report_text(FILE *f, const struct an_report *r)
{
	an_text_header(f, r);
	if (r->pcap)
		pcap_report_text(f, r);
	text_audit(f, r);
	text_classes(f, r);
	text_table1(f, r);
	text_sizing(f, r);
	return ferror(f) ? -EIO : 0;
}

