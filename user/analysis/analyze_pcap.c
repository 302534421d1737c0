// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The datapath's parser; first, so the kernel's in6_addr is the one it sees. */
#include "pacer_parse.h"
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_pcap.h"
#include "analyze_report.h"
#include "pacer_sketch.h"
#include "pacer_defaults.h"
#include "parse.h"
#include "pcap_read.h"

static void assumed_header(const struct pcap_params *p, struct pacer_file_header *h)
{
	pacer_file_header_init(h);
	h->interval_ns = p->interval_ns;
	h->tick_shift = pacer_default_tick_shift(p->interval_ns);
	h->thresh_ticks = pacer_thresh_ticks(p->interval_ns, h->tick_shift);
	h->rows = PACER_DEFAULT_ROWS;
	h->lines_log2 = PACER_DEFAULT_LINES_LOG2;
	h->kind = PACER_LAYOUT_ROWS;
	h->policy = p->policy;
	h->placement = PACER_PLACEMENT_SHARED; /* a capture has no CPUs: one sketch sees it all */
	h->clock = PACER_CLOCK_PRECISE;
	h->prefix4 = p->prefix4;
	h->prefix6 = p->prefix6;
	h->ncpus = 1;
	h->abi_version = PACER_ABI_VERSION;
	h->sample_src_thresh = 1ULL << 32;
	snprintf(h->ifname, sizeof(h->ifname), "capture");
}

struct load_ctx {
	const struct pcap_params *p;
	struct an_stream *s;
	struct pcap_summary *sum;
};

/* A frame as the datapath would key it, appended to the stream when it is IP. */
static int add_frame(void *ctx, uint64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	struct load_ctx *c = ctx;
	struct pcap_summary *sum = c->sum;
	struct pacer_src src = { 0 };
	struct pacer_record rec = { 0 };
	int kind = pacer_parse((void *)data, (void *)(data + caplen), &src);

	sum->frames++;
	if (caplen < len)
		sum->snap_cut++;
	if (kind == PACER_PKT_NONIP) {
		sum->nonip++;
		return 0;
	}
	if (kind == PACER_PKT_MALFORMED) {
		/* Cut by the snap length, it may have been whole on the wire: do not call it malformed. */
		if (caplen < len)
			sum->snap_unkeyed++;
		else
			sum->malformed++;
		return 0;
	}
	if (kind == PACER_PKT_V4) {
		src.lo &= pacer_mask4(c->p->prefix4);
		rec.family = 4;
		rec.prefix = (uint8_t)c->p->prefix4;
		sum->ipv4++;
	} else {
		src.lo &= pacer_mask6_lo(c->p->prefix6);
		src.hi &= pacer_mask6_hi(c->p->prefix6);
		rec.family = 6;
		rec.prefix = (uint8_t)c->p->prefix6;
		sum->ipv6++;
	}
	memcpy(rec.addr, &src.lo, 8);
	memcpy(rec.addr + 8, &src.hi, 8);
	rec.ts_ns = ts_ns;
	rec.flags = PACER_REC_SAMPLED_SOURCE;
	return an_stream_add(c->s, &rec);
}

/* The exact limiter over the time-ordered stream: verdicts, exact ages, thresholds. */
static int exact_verdicts(struct an_stream *s, struct pcap_summary *sum)
{
	uint64_t *last = malloc((size_t)(s->nsrc ? s->nsrc : 1) * sizeof(*last));
	uint64_t *last_ns = malloc((size_t)(s->nsrc ? s->nsrc : 1) * sizeof(*last_ns));
	uint32_t thresh = s->hdr.thresh_ticks;
	uint64_t i;

	if (!last || !last_ns) {
		free(last);
		free(last_ns);
		return -ENOMEM;
	}
	memset(last, 0xff, (size_t)s->nsrc * sizeof(*last));
	for (i = 0; i < s->n; i++) {
		struct an_record *r = &s->rec[i];
		uint64_t tick = an_tick(s, r->ts_ns), age = UINT64_MAX;
		int drop;

		if (last[r->src] != UINT64_MAX)
			age = tick - last[r->src];
		drop = age != UINT64_MAX && pacer_is_recent(age > UINT32_MAX ? UINT32_MAX : (uint32_t)age, thresh);
		r->verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
		r->est_age_ticks = age > PACER_AGE_NEVER - 1 ? PACER_AGE_NEVER : (uint32_t)age;
		r->thresh = (uint16_t)thresh;
		if (drop) {
			sum->dropped++;
			if (r->ts_ns - last_ns[r->src] >= s->hdr.interval_ns)
				sum->dropped_quantisation++;
		} else {
			sum->admitted++;
		}
		if (pacer_should_update(s->hdr.policy, drop)) {
			last[r->src] = tick;
			last_ns[r->src] = r->ts_ns;
		}
	}
	free(last);
	free(last_ns);
	return 0;
}

int pcap_load(const char *path, const struct pcap_params *p, struct an_stream *s,
	      struct pcap_summary *sum, char *err, size_t errlen)
{
	struct load_ctx c = { .p = p, .s = s, .sum = sum };
	struct pacer_file_header h;
	struct pcap_read_info info;
	int ret;

	memset(sum, 0, sizeof(*sum));
	assumed_header(p, &h);
	if (!h.thresh_ticks) {
		snprintf(err, errlen, "interval %" PRIu64 " ns cannot be represented", p->interval_ns);
		return -EINVAL;
	}
	ret = an_stream_init(s, &h);
	if (!ret)
		ret = pcap_read_frames(path, &info, add_frame, &c, err, errlen);
	if (ret == -EINVAL)
		return ret;
	snprintf(sum->linktype, sizeof(sum->linktype), "%s", info.linktype);
	sum->snaplen = info.snaplen;
	sum->pcapng = info.pcapng;
	sum->truncated = info.truncated;
	snprintf(sum->truncation, sizeof(sum->truncation), "%s", info.truncation);
	if (!ret && !info.ethernet) {
		snprintf(err, errlen,
			 "link type %s is not Ethernet: capture on the interface itself (tcpdump -i IFNAME), not on -i any",
			 info.linktype);
		return -EINVAL;
	}
	if (!ret)
		ret = an_stream_finish(s);
	if (!ret)
		ret = exact_verdicts(s, sum);
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (s->n) {
		s->hdr.start_mono_ns = s->hdr.start_real_ns = s->first_ts;
		s->hdr.end_mono_ns = s->last_ts;
		s->hdr.record_count = s->n;
	}
	s->hdr.flags = sum->truncated ? 0 : PACER_FILE_F_COMPLETE;
	return 0;
}

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
