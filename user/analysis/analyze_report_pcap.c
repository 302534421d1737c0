// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The capture's section of the report (analyze --pcap), in text and JSON. */
#include <inttypes.h>
#include <stdio.h>
#include "analyze_report.h"
#include "cli_values.h"
#include "json_writer.h"

/* The smallest geometry meeting the target in a sizing run, or NULL. */
static const struct sizing_point *best_point(const struct sizing_result *z)
{
	return z && z->best >= 0 ? &z->pts[z->best] : NULL;
}

void pcap_report_text(FILE *f, const struct an_report *r)
{
	const struct pcap_summary *m = r->pcap;
	const struct sizing_point *b = best_point(r->sizing_blocked);
	uint64_t keyed = m->ipv4 + m->ipv6;
	char a[32];

	fprintf(f, "\nCapture (%s, link type %s, snap length %u)\n", m->pcapng ? "pcapng" : "pcap",
		m->linktype, m->snaplen);
	fprintf(f, "  %" PRIu64 " frames: %" PRIu64 " IPv4, %" PRIu64 " IPv6 (keyed), %" PRIu64
		   " non-IP (the pacer passes them), %" PRIu64 " malformed (the --malformed verdict)\n",
		m->frames, m->ipv4, m->ipv6, m->nonip, m->malformed);
	if (m->snap_cut)
		fprintf(f, "  snap length: %" PRIu64 " frames captured shorter than on the wire; %" PRIu64
			   " of them cut inside their headers: not keyed, not counted as malformed\n",
			m->snap_cut, m->snap_unkeyed);
	if (m->truncated)
		fprintf(f, "  warning: the capture is cut short (%s): analysed the %" PRIu64 " whole frames before the cut\n",
			m->truncation, m->frames);
	if (m->corrupt)
		fprintf(f, "  warning: the capture is corrupt (%s): analysed the %" PRIu64 " frames before it\n",
			m->corruption, m->frames);
	if (m->skipped_linktype)
		fprintf(f, "  skipped: %" PRIu64 " frames on interfaces of link type %s (not Ethernet: they cannot be keyed as the datapath keys)\n",
			m->skipped_linktype, m->skipped_linktypes);
	if (m->skipped_no_interface)
		fprintf(f, "  skipped: %" PRIu64 " frames naming an interface no block describes (corrupt)\n",
			m->skipped_no_interface);
	if (m->skipped_corrupt)
		fprintf(f, "  skipped: %" PRIu64 " corrupt packet blocks (%s)\n", m->skipped_corrupt,
			m->first_skip);
	if (r->sizing)
		fprintf(f, "  sources per interval: %.1f on average, %.0f at the peak\n", r->sizing->n_mean,
			r->sizing->n_peak);
	fprintf(f, "  exact limiter (no collisions, the datapath's ticks): %" PRIu64 " admitted, %" PRIu64
		   " dropped (%.2f %%) of %" PRIu64 " keyed frames; %" PRIu64 " of the drops are tick rounding (gap >= interval)\n",
		m->admitted, m->dropped, keyed ? 100.0 * (double)m->dropped / (double)keyed : 0.0, keyed,
		m->dropped_quantisation);
	if (b)
		fprintf(f, "  blocked layout: smallest sketch meeting %g: --rows %u --width %" PRIu64 " --layout blocked (%s)\n",
			r->target, b->rows, b->width_cells, format_bytes(b->target_bytes, a, sizeof(a)));
	else if (r->sizing_blocked)
		fprintf(f, "  blocked layout: no geometry the loader accepts meets %g\n", r->target);
}

static const struct jsonw_member best_members[] = {
	JSONW_U32(struct sizing_point, rows, "rows"), JSONW_U64(struct sizing_point, width_cells, "width_cells"),
	JSONW_U64(struct sizing_point, target_bytes, "bytes"),
};

static void json_best(struct json_writer *w, const char *name, const struct sizing_point *b)
{
	jsonw_name(w, name);
	if (!b) {
		jsonw_null(w);
		return;
	}
	jsonw_start_object(w);
	JSONW_MEMBERS(w, b, best_members);
	jsonw_end_object(w);
}

#define SUM_U64(m) JSONW_U64(struct pcap_summary, m, #m)
static const struct jsonw_member summary_counts[] = {
	JSONW_U32(struct pcap_summary, snaplen, "snaplen"), SUM_U64(frames), SUM_U64(ipv4), SUM_U64(ipv6),
	SUM_U64(nonip), SUM_U64(malformed), SUM_U64(snap_cut), SUM_U64(snap_unkeyed), SUM_U64(admitted),
	SUM_U64(dropped), SUM_U64(dropped_quantisation), JSONW_INT_BOOL(struct pcap_summary, truncated, "truncated"),
	SUM_U64(skipped_linktype), SUM_U64(skipped_no_interface), SUM_U64(skipped_corrupt),
	SUM_U64(exempt), SUM_U64(denied), SUM_U64(unclassified),
};

void pcap_report_json(struct json_writer *w, const struct an_report *r)
{
	const struct pcap_summary *m = r->pcap;

	jsonw_start_object(w);
	jsonw_string_field(w, "format", m->pcapng ? "pcapng" : "pcap");
	jsonw_string_field(w, "linktype", m->linktype);
	JSONW_MEMBERS(w, m, summary_counts);
	if (m->truncated)
		jsonw_string_field(w, "truncation", m->truncation);
	else
		jsonw_null_field(w, "truncation");
	if (m->corrupt)
		jsonw_string_field(w, "corruption", m->corruption);
	else
		jsonw_null_field(w, "corruption");
	jsonw_string_field(w, "skipped_linktypes", m->skipped_linktypes);
	if (r->sizing) {
		jsonw_start_object_field(w, "sources_per_interval");
		jsonw_float_field_fmt(w, "mean", "%.3f", r->sizing->n_mean);
		jsonw_float_field_fmt(w, "peak", "%.0f", r->sizing->n_peak);
		jsonw_end_object(w);
	}
	json_best(w, "recommended_rows_layout", best_point(r->sizing));
	json_best(w, "recommended_blocked_layout", best_point(r->sizing_blocked));
	jsonw_end_object(w);
}
