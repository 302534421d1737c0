// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The datapath's parser; first, so the kernel's in6_addr is the one it sees. */
#include "pacer_parse.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_pcap.h"
#include "pacer_sketch.h"
#include "pacer_defaults.h"
#include "cli_values.h"
#include "ticks.h"
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

uint64_t pcap_skipped(const struct pcap_summary *m)
{
	return m->skipped_linktype + m->skipped_no_interface + m->skipped_corrupt;
}

/* Append one clause to buf ("; " between clauses). */
__attribute__((format(printf, 3, 4)))
static void clause(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

void pcap_problems(const struct pcap_summary *m, char *buf, size_t len)
{
	buf[0] = 0;
	if (m->corrupt)
		clause(buf, len, "corrupt (%s): reading stopped there", m->corruption);
	if (m->truncated)
		clause(buf, len, "cut short (%s)", m->truncation);
	if (m->skipped_linktype)
		clause(buf, len,
		       "%" PRIu64 " frames skipped on interfaces of link type %s, which cannot be keyed (the datapath sees Ethernet: capture on the interface itself, not on -i any)",
		       m->skipped_linktype, m->skipped_linktypes);
	if (m->skipped_no_interface)
		clause(buf, len, "%" PRIu64 " frames skipped naming an interface no block describes (corrupt)",
		       m->skipped_no_interface);
	if (m->skipped_corrupt)
		clause(buf, len, "%" PRIu64 " corrupt packet blocks skipped (%s)", m->skipped_corrupt,
		       m->first_skip);
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
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	err[0] = 0;
	ret = pcap_read_frames(path, &info, add_frame, &c, err, errlen);
	if (ret && err[0])
		return ret; /* the reader said why */
	snprintf(sum->linktype, sizeof(sum->linktype), "%s", info.linktype);
	sum->snaplen = info.snaplen;
	sum->pcapng = info.pcapng;
	sum->truncated = info.truncated;
	snprintf(sum->truncation, sizeof(sum->truncation), "%s", info.truncation);
	sum->corrupt = info.corrupt;
	snprintf(sum->corruption, sizeof(sum->corruption), "%s", info.corruption);
	sum->skipped_linktype = info.skipped_linktype;
	snprintf(sum->skipped_linktypes, sizeof(sum->skipped_linktypes), "%s", info.skipped_linktypes);
	sum->skipped_no_interface = info.skipped_no_interface;
	sum->skipped_corrupt = info.skipped_corrupt;
	snprintf(sum->first_skip, sizeof(sum->first_skip), "%s", info.first_skip);
	if (!ret && !info.ethernet && !info.pcapng) {
		snprintf(err, errlen,
			 "link type %s is not Ethernet: capture on the interface itself (tcpdump -i IFNAME), not on -i any",
			 info.linktype);
		return -EINVAL;
	}
	if (!ret && !sum->ipv4 && !sum->ipv6 &&
	    (sum->corrupt || sum->truncated || pcap_skipped(sum))) {
		char why[768];

		pcap_problems(sum, why, sizeof(why));
		snprintf(err, errlen, "no frame could be keyed (%" PRIu64 " whole Ethernet frames read): %s",
			 sum->frames, why);
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
	s->hdr.flags = sum->truncated || sum->corrupt ? 0 : PACER_FILE_F_COMPLETE;
	return 0;
}
