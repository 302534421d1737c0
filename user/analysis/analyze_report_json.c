// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* `analyze --json`: one object with the recording, the limiter, and each analysis (null: not run). */
#include <errno.h>
#include <stdbool.h>
#include "analyze_report_fmt.h"
#include "pacer_ticks.h"

#define SP_U32(m, key) JSONW_U32(struct sizing_point, m, key)
#define SP_U64(m, key) JSONW_U64(struct sizing_point, m, key)
#define SP_DBL(m, key) JSONW_DOUBLE(struct sizing_point, m, key)
static const struct jsonw_member point_members[] = {
	SP_U32(rows, "rows"), SP_U64(width_cells, "width_cells"), SP_U32(target_lines_log2, "lines_log2"),
	SP_U32(sim_lines_log2, "sim_lines_log2"), SP_U64(target_bytes, "bytes"),
	JSONW_INT_BOOL(struct sizing_point, simulated, "simulated"), SP_U64(packets, "packets"),
	SP_U64(eligible, "owed_passes"), SP_U64(false_drops, "false_drops"),
	SP_U64(evictions, "evictions"), SP_DBL(rate, "rate"),
	SP_DBL(rate_upper95, "rate_upper95"), SP_DBL(model_rate, "model_rate"),
	JSONW_INT_BOOL(struct sizing_point, meets, "meets_target"),
};

static void json_point(struct json_writer *w, const struct sizing_point *p)
{
	jsonw_start_object(w);
	JSONW_MEMBERS(w, p, point_members);
	/* Any line count (the dense table): the counts lines_log2 only bounds. */
	if (p->sim_lines) {
		jsonw_uint_field(w, "lines", p->target_lines);
		jsonw_uint_field(w, "sim_lines", p->sim_lines);
	}
	jsonw_end_object(w);
}

/* name: an object left open for the result, or null when it did not run (false). */
static bool json_start_or_null(struct json_writer *w, const char *name, const void *result)
{
	if (result)
		jsonw_start_object_field(w, name);
	else
		jsonw_null_field(w, name);
	return result;
}

static void json_point_or_null(struct json_writer *w, const char *name, const struct sizing_point *p)
{
	jsonw_name(w, name);
	if (p)
		json_point(w, p);
	else
		jsonw_null(w);
}

#define HDR_U32(m) JSONW_U32(struct pacer_file_header, m, #m)
#define HDR_U64(m) JSONW_U64(struct pacer_file_header, m, #m)
static const struct jsonw_member recording_times[] = {
	HDR_U64(start_real_ns), HDR_U64(start_mono_ns), HDR_U64(end_mono_ns),
};
static const struct jsonw_member recording_counts[] = {
	JSONW_U64(struct an_stream, n, "records"), JSONW_U64(struct an_stream, n_source_sampled, "source_sampled"),
	JSONW_U64(struct an_stream, n_packet_only, "packet_only"), JSONW_U32(struct an_stream, nsrc, "sources"),
};
static const struct jsonw_member limiter_interval[] = {
	HDR_U64(interval_ns), HDR_U32(thresh_ticks), HDR_U32(rate_n), HDR_U32(burst_ticks),
};
static const struct jsonw_member limiter_tail[] = {
	HDR_U32(prefix4), HDR_U32(prefix6), HDR_U32(ncpus), HDR_U64(sample_src_thresh), HDR_U64(sample_pkt_thresh),
};

static void json_recording(struct json_writer *w, const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct an_stream *s = r->s;

	jsonw_start_object_field(w, "recording");
	jsonw_string_field(w, "ifname", h->ifname);
	jsonw_string_field(w, "hostname", h->hostname);
	JSONW_MEMBERS(w, h, recording_times);
	jsonw_float_field(w, "duration_s", an_span_s(r));
	jsonw_bool_field(w, "complete", h->flags & PACER_FILE_F_COMPLETE);
	JSONW_MEMBERS(w, s, recording_counts);
	jsonw_uint_field(w, "records_lost", h->records_lost);
	jsonw_uint_field(w, "out_of_order", s->out_of_order);
	jsonw_end_object(w);
}

static void json_setting_names(struct json_writer *w, const struct pacer_file_header *h)
{
	jsonw_string_field(w, "policy", policy_name(h->policy));
	jsonw_string_field(w, "placement", placement_name(h->placement));
	jsonw_string_field(w, "layout", layout_name(h->kind));
	jsonw_string_field(w, "backend", backend_name(h->backend));
	jsonw_string_field(w, "on_full", on_full_name(h->on_full));
}

static void json_limiter(struct json_writer *w, const struct pacer_file_header *h)
{
	jsonw_start_object_field(w, "limiter");
	JSONW_MEMBERS(w, h, limiter_interval);
	jsonw_uint_field(w, "tick_ns", pacer_tick_ns(h->tick_shift));
	json_setting_names(w, h);
	jsonw_uint_field(w, "rows", h->rows);
	jsonw_uint_field(w, "width_cells", sizing_header_width(h));
	jsonw_uint_field(w, "lines_log2", h->lines_log2);
	if (h->lines)
		jsonw_uint_field(w, "lines", h->lines);
	jsonw_uint_field(w, "sketch_bytes", an_sketch_bytes(h));
	jsonw_string_field(w, "clock", clock_name(h->clock));
	JSONW_MEMBERS(w, h, limiter_tail);
	jsonw_end_object(w);
}

static void json_warnings(struct json_writer *w, const struct pacer_file_reader *rd)
{
	int i;

	jsonw_start_array_field(w, "warnings");
	for (i = 0; i < rd->n_warnings; i++) {
		jsonw_start_object(w);
		jsonw_string_field(w, "problem", pacer_file_problem_name(rd->warnings[i].problem));
		jsonw_uint_field(w, "offset", rd->warnings[i].offset);
		jsonw_string_field(w, "message", rd->warnings[i].msg);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void json_audit_by_cpu(struct json_writer *w, const struct audit_result *au)
{
	uint32_t c;

	jsonw_start_array_field(w, "by_cpu");
	for (c = 0; c < au->ncpus; c++) {
		if (!au->packets_by_cpu[c])
			continue;
		jsonw_start_object(w);
		jsonw_uint_field(w, "cpu", c);
		jsonw_uint_field(w, "packets", au->packets_by_cpu[c]);
		jsonw_uint_field(w, "false_passes", au->false_passes_by_cpu[c]);
		jsonw_uint_field(w, "false_drops", au->false_drops_by_cpu[c]);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

static void json_audit_timeline(struct json_writer *w, const struct audit_result *au)
{
	static const char *const columns[] = { "packets", "drops", "false_drops_collision",
					       "false_drops_quantisation", "false_passes" };
	uint32_t c;

	jsonw_uint_field(w, "bin_ns", au->bin_ns);
	jsonw_start_array_field(w, "timeline");
	for (c = 0; c < au->nbins; c++) {
		jsonw_start_array(w);
		jsonw_uint(w, au->bins[c].packets);
		jsonw_uint(w, au->bins[c].drops);
		jsonw_uint(w, au->bins[c].false_drops_collision);
		jsonw_uint(w, au->bins[c].false_drops_quant);
		jsonw_uint(w, au->bins[c].false_passes);
		jsonw_end_array(w);
	}
	jsonw_end_array(w);
	jsonw_start_array_field(w, "timeline_columns");
	for (c = 0; c < sizeof(columns) / sizeof(columns[0]); c++)
		jsonw_string(w, columns[c]);
	jsonw_end_array(w);
}

#define AU_U64(m, key) JSONW_U64(struct audit_result, m, key)
static const struct jsonw_member audit_counts[] = {
	AU_U64(judged_records, "packets"), AU_U64(sources, "sources"), AU_U64(passes, "passes"),
	AU_U64(drops, "drops"), AU_U64(observed_drops, "observed_drops"),
	AU_U64(exact_passes, "exact_gcra_passes"),
	AU_U64(eligible, "owed_passes"), AU_U64(unknown, "unknown"),
	AU_U64(false_drops, "false_drops"), AU_U64(false_drops_quant, "false_drops_quantisation"),
	AU_U64(false_drops_collision, "false_drops_collision"),
};
static const struct jsonw_member audit_passes[] = {
	AU_U64(false_passes, "false_passes"), AU_U64(false_passes_local, "false_passes_cpu_local"),
	AU_U64(est_older_than_truth, "estimates_older_than_truth"),
	AU_U64(sources_multi_cpu, "sources_on_several_cpus"),
	AU_U64(max_admits_in_interval, "max_admits_in_one_interval"), AU_U64(packet_only, "packet_only_not_judged"),
	AU_U64(after_class_change, "after_class_change_not_judged"),
};

static void json_audit(struct json_writer *w, const struct audit_result *au)
{
	if (!json_start_or_null(w, "audit", au))
		return;
	JSONW_MEMBERS(w, au, audit_counts);
	jsonw_float_field(w, "false_drop_rate", audit_false_drop_rate(au));
	JSONW_MEMBERS(w, au, audit_passes);
	json_audit_by_cpu(w, au);
	json_audit_timeline(w, au);
	jsonw_end_object(w);
}

/* Per class: its limit, and its audit as the "audit" object holds it. */
static void json_classes(struct json_writer *w, const struct an_report *r)
{
	uint32_t i;

	if (!r->n_classes)
		return;
	jsonw_start_array_field(w, "classes");
	for (i = 0; i < r->n_classes; i++) {
		const struct an_class_audit *ca = &r->classes[i];
		const struct audit_result *au = ca->audit;

		jsonw_start_object(w);
		if (ca->c)
			jsonw_string_field(w, "name", ca->c->name);
		else
			jsonw_null_field(w, "name");
		jsonw_uint_field(w, "class_slot", ca->slot);
		jsonw_string_field(w, "action", pacer_file_action_name(au->action));
		jsonw_string_field(w, "key", pacer_file_key_name(au->key_mode));
		if (au->action == PACER_ACTION_PACE) {
			jsonw_string_field(w, "policy", policy_name(au->policy));
			jsonw_uint_field(w, "rate_n", au->rate_n);
			jsonw_uint_field(w, "interval_ns", au->interval_ns);
			jsonw_uint_field(w, "thresh_ticks", ca->c ? ca->c->thresh_ticks : r->rd->hdr.thresh_ticks);
			jsonw_uint_field(w, "burst_ticks", ca->c ? ca->c->burst_ticks : r->rd->hdr.burst_ticks);
		}
		if (r->pcap) {
			jsonw_uint_field(w, "frames", r->pcap->class_frames[ca->slot]);
			jsonw_uint_field(w, "admitted", r->pcap->class_admitted[ca->slot]);
			jsonw_uint_field(w, "dropped", r->pcap->class_dropped[ca->slot]);
		}
		jsonw_bool_field(w, "false_passes_checked", !au->key_merged);
		jsonw_float_field(w, "sources_per_interval_mean", au->keys_per_interval_mean);
		jsonw_uint_field(w, "sources_per_interval_peak", au->keys_per_interval_peak);
		jsonw_string_field(w, "key_note", an_class_key_note(au));
		json_audit(w, au);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	if (r->audit)
		jsonw_uint_field(w, "unknown_class_packets", r->audit->unknown_class);
	jsonw_float_field(w, "classes_sources_at_once_peak", an_class_keys_peak(r));
}

#define ROW_U64(m) JSONW_U64(struct t1_row, m, #m)
#define ROW_DBL(m) JSONW_DOUBLE(struct t1_row, m, #m)
static const struct jsonw_member t1_row_members[] = {
	JSONW_INT_BOOL(struct t1_row, ok, "built"), ROW_U64(bytes), ROW_DBL(bits_per_item), ROW_DBL(ns_per_item),
	ROW_DBL(mean_rel_err), ROW_DBL(max_rel_err), ROW_U64(max_abs_err), ROW_U64(in_window),
	ROW_U64(within_bound), ROW_U64(missed), ROW_U64(stale), JSONW_U64(struct t1_row, verdict_diff, "verdicts_differ"),
	ROW_U64(insert_failures),
};

static void json_t1_row(struct json_writer *w, const struct t1_row *row)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "name", row->name ? row->name : "?");
	JSONW_MEMBERS(w, row, t1_row_members);
	jsonw_end_object(w);
}

#define T1_U64(m) JSONW_U64(struct t1_result, m, #m)
#define T1_DBL(m, key) JSONW_DOUBLE(struct t1_result, m, key)
static const struct jsonw_member t1_window[] = {
	T1_U64(items), T1_U64(timed_items), T1_U64(window), JSONW_U32(struct t1_result, inv_eps, "inv_eps"),
	T1_U64(block_d), T1_DBL(window_span_s, "window_span_s"),
};
static const struct jsonw_member t1_bounds[] = {
	T1_DBL(b_bits, "B"), T1_DBL(paper_hm_bits, "historical_membership"), T1_DBL(paper_block_bits, "optimal_sm"),
	T1_DBL(paper_hm_distinct_bits, "historical_membership_distinct"),
};
static const struct jsonw_member t1_distinct[] = {
	JSONW_U32(struct t1_result, key_bits, "key_bits"), T1_U64(distinct_max),
	T1_DBL(distinct_mean, "distinct_mean"),
};

static void json_table1(struct json_writer *w, const struct t1_result *t)
{
	int i;

	if (!json_start_or_null(w, "table1", t))
		return;
	JSONW_MEMBERS(w, t, t1_window);
	jsonw_start_object_field(w, "bound_bits");
	JSONW_MEMBERS(w, t, t1_bounds);
	jsonw_end_object(w);
	JSONW_MEMBERS(w, t, t1_distinct);
	jsonw_start_array_field(w, "structures");
	for (i = 0; i < T1_NSTRUCT; i++)
		json_t1_row(w, &t->row[i]);
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void json_sizing(struct json_writer *w, const struct an_report *r)
{
	const struct sizing_result *z = r->sizing;
	char buf[256];
	size_t k;

	if (!json_start_or_null(w, "sizing", z))
		return;
	jsonw_float_field(w, "target", r->target);
	jsonw_float_field(w, "scale", z->scale);
	jsonw_float_field(w, "sampled_sources_per_interval_mean", z->n_mean);
	jsonw_float_field(w, "sampled_sources_per_interval_peak", z->n_peak);
	json_point_or_null(w, "current", z->current.simulated ? &z->current : NULL);
	json_point_or_null(w, "recommended", z->best >= 0 ? &z->pts[z->best] : NULL);
	jsonw_bool_field(w, "recommended_by_model", z->best >= 0 && z->best_by_model);
	jsonw_string_field(w, "recommendation", an_recommendation(r, buf, sizeof(buf)));
	jsonw_start_array_field(w, "points");
	for (k = 0; k < z->npts; k++)
		json_point(w, &z->pts[k]);
	jsonw_end_array(w);
	jsonw_end_object(w);
}

static void json_notes(struct json_writer *w, const struct an_report *r)
{
	jsonw_start_object_field(w, "notes");
	jsonw_string_field(w, "audit", r->audit_note ? r->audit_note : "");
	jsonw_string_field(w, "table1", r->t1_note ? r->t1_note : "");
	jsonw_string_field(w, "sizing", r->sizing_note ? r->sizing_note : "");
	jsonw_end_object(w);
}

int an_report_json(FILE *f, const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	struct json_writer w;
	char format[16];

	jsonw_init(&w, f);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "file", r->path);
	snprintf(format, sizeof(format), "%u.%u", h->version_major, h->version_minor);
	jsonw_string_field(&w, "format", format);
	if (h->writer[0] && !r->pcap)
		jsonw_string_field(&w, "writer", h->writer);
	json_recording(&w, r);
	json_limiter(&w, h);
	if (r->pcap) {
		jsonw_name(&w, "capture");
		pcap_report_json(&w, r);
	}
	json_warnings(&w, r->rd);
	json_audit(&w, r->audit);
	json_classes(&w, r);
	json_table1(&w, r->t1);
	json_sizing(&w, r);
	json_notes(&w, r);
	jsonw_end_object(&w);
	return jsonw_finish(&w);
}
