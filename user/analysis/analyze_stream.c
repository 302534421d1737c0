// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_stream.h"
#include "pacer_hash.h"

#define MAP_EMPTY UINT64_MAX

int an_map_init(struct an_map *m, uint64_t expect)
{
	uint64_t cap = 16, i;

	while (cap < expect * 2)
		cap <<= 1;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		m->keys = m->vals = NULL;
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		m->keys[i] = MAP_EMPTY;
	m->cap = cap;
	m->n = 0;
	return 0;
}

void an_map_free(struct an_map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->n = 0;
}

static uint64_t slot_of(const struct an_map *m, uint64_t key)
{
	return pacer_mix64(key) & (m->cap - 1);
}

uint64_t *an_map_find(const struct an_map *m, uint64_t key)
{
	uint64_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == MAP_EMPTY)
			return NULL;
	}
}

static int map_grow(struct an_map *m)
{
	struct an_map bigger;
	uint64_t i;
	int ins;

	if (an_map_init(&bigger, m->cap))
		return -ENOMEM;
	for (i = 0; i < m->cap; i++)
		if (m->keys[i] != MAP_EMPTY)
			*an_map_get(&bigger, m->keys[i], m->vals[i], &ins) = m->vals[i];
	an_map_free(m);
	*m = bigger;
	return 0;
}

uint64_t *an_map_get(struct an_map *m, uint64_t key, uint64_t init, int *inserted)
{
	uint64_t i;

	*inserted = 0;
	if ((m->n + 1) * 2 > m->cap && map_grow(m))
		return NULL;
	for (i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == MAP_EMPTY) {
			m->keys[i] = key;
			m->vals[i] = init;
			m->n++;
			*inserted = 1;
			return &m->vals[i];
		}
	}
}

int an_stream_init(struct an_stream *s, const struct pacer_file_header *hdr)
{
	memset(s, 0, sizeof(*s));
	s->hdr = *hdr;
	return an_map_init(&s->src_index, 1024);
}

void an_stream_free(struct an_stream *s)
{
	free(s->rec);
	free(s->src);
	an_map_free(&s->src_index);
	memset(s, 0, sizeof(*s));
}

/*
 * Source identity = family, prefix and masked address.  The index maps a
 * 64-bit digest of it to the source id; distinct sources whose digests
 * collide are told apart by probing digest+1, digest+2, ... (rare).
 */
static uint64_t source_digest(const struct pacer_record *r, uint64_t key_extra)
{
	uint64_t lo, hi;

	memcpy(&lo, r->addr, 8);
	memcpy(&hi, r->addr + 8, 8);
	/* Halved: probing upward from it can never reach the map's empty marker. */
	return pacer_mix64(pacer_mix64(pacer_mix64(lo ^ ((uint64_t)r->family << 56 | (uint64_t)r->prefix << 48 |
							 (uint64_t)r->class_slot << 40)) ^ hi) ^ key_extra) >> 1;
}

static int intern_source(struct an_stream *s, const struct pacer_record *r, uint64_t key_extra,
			 uint32_t *id)
{
	uint64_t d = source_digest(r, key_extra), *v;
	int inserted;

	for (;; d++) {
		v = an_map_get(&s->src_index, d, s->nsrc, &inserted);
		if (!v)
			return -ENOMEM;
		if (!inserted) {
			const struct an_source *o = &s->src[*v];

			if (o->family == r->family && o->prefix == r->prefix &&
			    o->class_slot == r->class_slot && o->key_extra == key_extra &&
			    !memcmp(o->addr, r->addr, 16)) {
				*id = (uint32_t)*v;
				return 0;
			}
			continue;
		}
		if (s->nsrc == UINT32_MAX)
			return -EFBIG;
		if (s->nsrc == s->src_cap) {
			uint32_t cap = s->src_cap ? s->src_cap * 2 : 1024;
			struct an_source *n = realloc(s->src, (size_t)cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			s->src = n;
			s->src_cap = cap;
		}
		memset(&s->src[s->nsrc], 0, sizeof(s->src[0]));
		memcpy(s->src[s->nsrc].addr, r->addr, 16);
		s->src[s->nsrc].family = r->family;
		s->src[s->nsrc].prefix = r->prefix;
		s->src[s->nsrc].class_slot = (uint8_t)r->class_slot; /* the reader bounds it */
		s->src[s->nsrc].key_extra = key_extra;
		s->src[s->nsrc].first_cpu = r->cpu;
		*id = s->nsrc++;
		return 0;
	}
}

/* The rest of a class's key a record carries, or 0. */
static uint64_t record_key_extra(struct an_stream *s, const struct pacer_record *r)
{
	const struct pacer_class *c = pacer_file_class_of(&s->hdr, r->class_slot);
	uint64_t lo, hi;
	uint32_t v4;

	if (!c || c->key_mode == PACER_KEY_SRC)
		return 0;
	if (!(r->flags & PACER_REC_KEY)) {
		s->class_unkeyed[r->class_slot]++; /* the reader bounds the slot */
		return 0;
	}
	s->class_keyed[r->class_slot]++;
	if (c->key_mode == PACER_KEY_SRC_DPORT)
		return (uint64_t)r->key_dport + 1;
	if (r->family == 4) {
		memcpy(&v4, r->key_dst, 4);
		return (uint64_t)v4 << 1 | 1;
	}
	memcpy(&lo, r->key_dst, 8);
	memcpy(&hi, r->key_dst + 8, 8);
	return pacer_mix64(pacer_mix64(lo ^ 0x6a09e667f3bcc909ULL) ^ hi) | 1;
}

int an_stream_add(struct an_stream *s, const struct pacer_record *r)
{
	return an_stream_add_key(s, r, record_key_extra(s, r));
}

int an_stream_add_key(struct an_stream *s, const struct pacer_record *r, uint64_t key_extra)
{
	struct an_record *a;
	struct an_source *src;
	uint32_t id;
	int err;

	if (s->n >= UINT32_MAX)
		return -EFBIG;
	if (s->n == s->cap) {
		uint64_t cap = s->cap ? s->cap * 2 : 4096;
		struct an_record *n = realloc(s->rec, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->rec = n;
		s->cap = cap;
	}
	err = intern_source(s, r, key_extra, &id);
	if (err)
		return err;
	src = &s->src[id];
	if (!src->packets)
		src->ncpus_seen = 1;
	else if (src->first_cpu != r->cpu)
		src->ncpus_seen = 2;
	src->packets++;
	a = &s->rec[s->n];
	a->ts_ns = r->ts_ns;
	a->src = id;
	a->est_age_ticks = r->est_age_ticks;
	a->seq = (uint32_t)s->n;
	a->cpu = (uint16_t)r->cpu;
	a->verdict = r->verdict;
	a->flags = r->flags;
	a->thresh = (uint16_t)r->thresh_ticks; /* the reader bounds it (pacer_file_max_thresh) */
	a->class_slot = (uint8_t)r->class_slot;
	if (s->n && r->ts_ns < s->rec[s->n - 1].ts_ns) {
		uint64_t back = s->rec[s->n - 1].ts_ns - r->ts_ns;

		s->out_of_order++;
		if (back > s->max_backstep_ns)
			s->max_backstep_ns = back;
	}
	if (!s->n || r->ts_ns < s->first_ts)
		s->first_ts = r->ts_ns;
	if (!s->n || r->ts_ns > s->last_ts)
		s->last_ts = r->ts_ns;
	if (r->cpu > s->max_cpu)
		s->max_cpu = (uint16_t)r->cpu;
	if (r->flags & PACER_REC_SAMPLED_SOURCE)
		s->n_source_sampled++;
	else
		s->n_packet_only++;
	s->n++;
	return 0;
}

static int cmp_ts_seq(const void *a, const void *b)
{
	const struct an_record *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int an_stream_finish(struct an_stream *s)
{
	/*
	 * The ring buffer is ordered by reservation, and CPUs take their
	 * timestamp before reserving, so neighbours from different CPUs can be
	 * slightly out of order.  Sorting on (ts, file position) restores time
	 * order and keeps the datapath's own order among equal timestamps.
	 */
	if (s->out_of_order)
		qsort(s->rec, s->n, sizeof(*s->rec), cmp_ts_seq);
	return 0;
}

int an_stream_load(struct pacer_file_reader *rd, struct an_stream *s, struct pacer_file_error *err,
		   an_progress_fn progress, void *ctx)
{
	struct pacer_record r;
	int ret;

	ret = an_stream_init(s, &rd->hdr);
	if (ret)
		goto nomem;
	while ((ret = pacer_file_next(rd, &r, err)) == 1) {
		ret = an_stream_add(s, &r);
		if (ret == -EFBIG) {
			err->offset = pacer_file_record_offset(&rd->hdr, s->n);
			snprintf(err->msg, sizeof(err->msg),
				 "record %llu: more than 2^32 - 1 records or sources; analyse a shorter recording",
				 (unsigned long long)s->n);
			err->problem = PACER_FILE_IO;
			err->code = ret;
			an_stream_free(s);
			return ret;
		}
		if (ret)
			goto nomem;
		if (progress && !(s->n & 0xffff))
			progress(ctx, "reading", s->n, rd->n_records);
	}
	if (ret < 0) {
		an_stream_free(s);
		return ret;
	}
	if (progress)
		progress(ctx, "reading", s->n, rd->n_records);
	return an_stream_finish(s);
nomem:
	err->problem = PACER_FILE_IO;
	err->code = -ENOMEM;
	snprintf(err->msg, sizeof(err->msg), "out of memory after %llu records",
		 (unsigned long long)s->n);
	an_stream_free(s);
	return -ENOMEM;
}

double an_source_rate(const struct pacer_file_header *h)
{
	return (double)h->sample_src_thresh / 4294967296.0;
}

double an_packet_rate(const struct pacer_file_header *h)
{
	return (double)h->sample_pkt_thresh / 4294967296.0;
}
