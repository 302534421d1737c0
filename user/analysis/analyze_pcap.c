// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The datapath's parser and classifier; first, so the kernel's in6_addr is the one they see. */
#include "pacer_parse.h"
#include "pacer_pkt.h"
#include "pacer_classify.h"
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
#include "class_conf.h"
#include "class_compile.h"
#include "pacer_rate.h"

/* Frames go the classes' way: there are classes, or lists. */
static int classified(const struct pcap_params *p)
{
	return p->n_classes || p->n_exempt || p->n_deny;
}

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
	if (classified(p)) {
		/* The table runs classes whose limits span more ticks than a sketch's cells hold. */
		h->backend = PACER_BACKEND_TABLE;
		h->rows = 1;
		h->lines_log2 = 20;
		h->tick_shift = p->tick_shift;
		h->thresh_ticks = p->interval_ns ? pacer_thresh_ticks(p->interval_ns, p->tick_shift) : 0;
		pacer_file_header_set_classes(h, p->classes, p->n_classes);
	}
}

/*
 * The exempt and deny lists as the datapath's tries answer: the longest
 * prefix holding the source decides.  Per family, the prefixes sorted by
 * length (longest first) then address, searched length by length.
 */
struct list_entry {
	uint64_t hi, lo;  /* the masked address as a 128-bit number (IPv4 in lo) */
	uint8_t len, verdict;
};

struct lists {
	struct list_entry *e[2]; /* IPv4, IPv6 */
	size_t n[2];
};

static void addr_words(uint8_t family, const uint8_t *a, uint64_t *hi, uint64_t *lo)
{
	int i;

	*hi = *lo = 0;
	if (family == 4) {
		for (i = 0; i < 4; i++)
			*lo = *lo << 8 | a[i];
		return;
	}
	for (i = 0; i < 8; i++)
		*hi = *hi << 8 | a[i];
	for (i = 8; i < 16; i++)
		*lo = *lo << 8 | a[i];
}

static void mask_words(uint8_t family, uint8_t len, uint64_t *hi, uint64_t *lo)
{
	unsigned l = len;

	if (family == 4) {
		*hi = 0;
		*lo = l ? (0xffffffffULL << (32 - l)) & 0xffffffffULL : 0;
		return;
	}
	*hi = l >= 64 ? ~0ULL : l ? ~0ULL << (64 - l) : 0;
	*lo = l >= 128 ? ~0ULL : l > 64 ? ~0ULL << (128 - l) : 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct list_entry *x = a, *y = b;

	if (x->len != y->len)
		return x->len > y->len ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int lists_add(struct lists *l, const struct conf_prefix *p, size_t n, uint8_t verdict)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int f = p[i].family == 4 ? 0 : 1;
		struct list_entry *e = &l->e[f][l->n[f]++];
		uint64_t mhi, mlo;

		addr_words(p[i].family, p[i].addr, &e->hi, &e->lo);
		mask_words(p[i].family, p[i].len, &mhi, &mlo);
		e->hi &= mhi;
		e->lo &= mlo;
		e->len = p[i].len;
		e->verdict = verdict;
	}
	return 0;
}

static int lists_init(struct lists *l, const struct pcap_params *p)
{
	size_t n = p->n_exempt + p->n_deny, f;

	memset(l, 0, sizeof(*l));
	for (f = 0; f < 2; f++) {
		l->e[f] = malloc((n ? n : 1) * sizeof(*l->e[f]));
		if (!l->e[f])
			return -ENOMEM;
	}
	lists_add(l, p->exempt, p->n_exempt, PACER_LIST_EXEMPT);
	lists_add(l, p->deny, p->n_deny, PACER_LIST_DENY);
	for (f = 0; f < 2; f++)
		qsort(l->e[f], l->n[f], sizeof(*l->e[f]), cmp_entry);
	return 0;
}

static void lists_free(struct lists *l)
{
	free(l->e[0]);
	free(l->e[1]);
}

/* The verdict of the longest prefix holding the address, or 0. */
static uint32_t lists_lookup(const struct lists *l, uint8_t family, const uint8_t *addr)
{
	int f = family == 4 ? 0 : 1;
	const struct list_entry *e = l->e[f];
	size_t n = l->n[f], start = 0;
	uint64_t hi, lo;

	addr_words(family, addr, &hi, &lo);
	while (start < n) {
		uint8_t len = e[start].len;
		size_t end = start, a, b;
		struct list_entry want = { .len = len };
		uint64_t mhi, mlo;

		while (end < n && e[end].len == len)
			end++;
		mask_words(family, len, &mhi, &mlo);
		want.hi = hi & mhi;
		want.lo = lo & mlo;
		for (a = start, b = end; a < b;) {
			size_t m = a + (b - a) / 2;
			int c = cmp_entry(&e[m], &want);

			if (!c)
				return e[m].verdict;
			if (c < 0)
				a = m + 1;
			else
				b = m;
		}
		start = end;
	}
	return 0;
}

struct load_ctx {
	const struct pcap_params *p;
	struct an_stream *s;
	struct pcap_summary *sum;
	struct lists lists;
};

/* The bytes of an address struct pacer_src holds (network order in memory). */
static void src_bytes(const struct pacer_src *src, uint8_t *out)
{
	memcpy(out, &src->lo, 8);
	memcpy(out + 8, &src->hi, 8);
}

/*
 * A frame that gives no key, counted: non-IP, or malformed, or cut by the
 * snap length (it may have been whole on the wire: not called malformed).
 * 1 if kind is one of those.
 */
static int count_unkeyed(struct pcap_summary *sum, int kind, uint32_t caplen, uint32_t len)
{
	if (kind == PACER_PKT_NONIP) {
		sum->nonip++;
		return 1;
	}
	if (kind != PACER_PKT_MALFORMED)
		return 0;
	if (caplen < len)
		sum->snap_unkeyed++;
	else
		sum->malformed++;
	return 1;
}

/* With classes: the lists, then the first class that fits, as the datapath decides. */
static int add_classified(struct load_ctx *c, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
			  uint32_t len)
{
	struct pcap_summary *sum = c->sum;
	const struct pcap_params *p = c->p;
	struct pacer_record rec = { 0 };
	struct pacer_src masked;
	struct pacer_pkt pkt;
	const struct pacer_class *cl = NULL;
	uint8_t addr[16];
	uint64_t extra = 0;
	uint32_t prefix, slot;
	int i;
	static const __u64 no_key[2];
	int kind = pacer_parse_pkt((void *)data, (void *)(data + caplen), &pkt);

	if (count_unkeyed(sum, kind, caplen, len))
		return 0;
	if (kind == PACER_PKT_V4)
		sum->ipv4++;
	else
		sum->ipv6++;
	src_bytes(&pkt.src, addr);
	switch (lists_lookup(&c->lists, kind == PACER_PKT_V4 ? 4 : 6, addr)) {
	case PACER_LIST_EXEMPT:
		sum->exempt++;
		return 0;
	case PACER_LIST_DENY:
		sum->denied++;
		return 0;
	}
	if (!p->n_classes) {
		/* Lists without classes: the global limit paces the rest, keyed as without lists. */
		masked = pkt.src;
		pacer_src_key_hash(no_key, kind, &masked, p->prefix4, p->prefix6, &prefix);
		slot = 0;
		goto add;
	}
	i = pacer_cls_walk(p->classes, (int)p->n_classes, &pkt);
	cl = i >= 0 ? &p->classes[i] : NULL;
	if (!cl) {
		sum->unclassified++;
		return 0;
	}
	slot = cl->stat_slot + 1;
	sum->class_frames[slot]++;
	if (cl->action != PACER_ACTION_PACE) {
		if (cl->action == PACER_ACTION_DROP)
			sum->class_dropped[slot]++;
		else
			sum->class_admitted[slot]++;
		return 0;
	}
	/* The class's key: its hash is the datapath's business, its words are ours. */
	pacer_class_key_hash(no_key, cl, &pkt, &masked, &prefix);
	if (cl->key_mode == PACER_KEY_SRC_DPORT)
		extra = (uint64_t)pkt.dport + 1;
	else if (cl->key_mode == PACER_KEY_SRC_DST)
		extra = pacer_mix64(pacer_mix64(pkt.dst.lo ^ PACER_CLASS_SALT) ^ pkt.dst.hi) | 1;
add:
	src_bytes(&masked, rec.addr);
	rec.family = kind == PACER_PKT_V4 ? 4 : 6;
	rec.prefix = (uint8_t)prefix;
	rec.ts_ns = ts_ns;
	rec.flags = PACER_REC_SAMPLED_SOURCE;
	rec.class_slot = slot;
	return an_stream_add_key(c->s, &rec, extra);
}

/* A frame as the datapath would key it, appended to the stream when it is IP. */
static int add_frame(void *ctx, uint64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	struct load_ctx *c = ctx;
	struct pcap_summary *sum = c->sum;
	struct pacer_src src = { 0 };
	struct pacer_record rec = { 0 };
	int kind;

	sum->frames++;
	if (caplen < len)
		sum->snap_cut++;
	if (classified(c->p))
		return add_classified(c, ts_ns, data, caplen, len);
	kind = pacer_parse((void *)data, (void *)(data + caplen), &src);
	if (count_unkeyed(sum, kind, caplen, len))
		return 0;
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

/*
 * With classes: each key under its own class's limit, in ticks as the
 * table runs it (pacer_rate.h): the key's virtual age saturates at
 * emit + burst, a packet conforms at an age of at least thresh, an
 * admission takes one emission off it; quiet restarts it on a drop.
 */
static int exact_class_verdicts(struct an_stream *s, struct pcap_summary *sum)
{
	int64_t *vtick = malloc((size_t)(s->nsrc ? s->nsrc : 1) * sizeof(*vtick));
	uint64_t *last_ns = malloc((size_t)(s->nsrc ? s->nsrc : 1) * sizeof(*last_ns));
	const int64_t never = INT64_MIN;
	struct pacer_class global = { .thresh_ticks = s->hdr.thresh_ticks, .rate_n = 1,
				      .policy = s->hdr.policy, .interval_ns = s->hdr.interval_ns };
	uint64_t i;

	if (!vtick || !last_ns) {
		free(vtick);
		free(last_ns);
		return -ENOMEM;
	}
	for (i = 0; i < s->nsrc; i++)
		vtick[i] = never;
	for (i = 0; i < s->n; i++) {
		struct an_record *r = &s->rec[i];
		const struct pacer_class *c = pacer_file_class_of(&s->hdr, r->class_slot);
		struct pacer_rate rate;
		int64_t tick;
		uint32_t age;
		int drop;

		if (!c)
			c = &global; /* lists without classes */
		rate = pacer_rate_of(c->thresh_ticks, c->rate_n > 1 ? c->burst_ticks : 0);
		tick = (int64_t)an_tick(s, r->ts_ns);
		age = vtick[r->src] == never || tick - vtick[r->src] >= (int64_t)rate.sat
			      ? rate.sat : (uint32_t)(tick - vtick[r->src]);
		drop = age < rate.thresh;

		r->verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
		r->est_age_ticks = vtick[r->src] == never ? PACER_AGE_NEVER : age;
		r->thresh = (uint16_t)rate.thresh;
		if (drop) {
			sum->dropped++;
			sum->class_dropped[r->class_slot]++;
			if (c->rate_n <= 1 && r->ts_ns - last_ns[r->src] >= c->interval_ns)
				sum->dropped_quantisation++;
		} else {
			sum->admitted++;
			sum->class_admitted[r->class_slot]++;
		}
		if (!drop) {
			vtick[r->src] = tick - (int64_t)pacer_rate_next_age(age, &rate);
			last_ns[r->src] = r->ts_ns;
		} else if (c->policy == PACER_POLICY_QUIET) {
			vtick[r->src] = tick;
			last_ns[r->src] = r->ts_ns;
		}
	}
	free(vtick);
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
	if (!h.thresh_ticks && !p->n_classes) {
		snprintf(err, errlen, "interval %" PRIu64 " ns cannot be represented", p->interval_ns);
		return -EINVAL;
	}
	ret = an_stream_init(s, &h);
	if (!ret && classified(p))
		ret = lists_init(&c.lists, p);
	if (ret) {
		lists_free(&c.lists);
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	s->exact_keys = classified(p);
	err[0] = 0;
	ret = pcap_read_frames(path, &info, add_frame, &c, err, errlen);
	lists_free(&c.lists);
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
		ret = classified(p) ? exact_class_verdicts(s, sum) : exact_verdicts(s, sum);
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
