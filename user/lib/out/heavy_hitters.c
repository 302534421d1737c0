// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Space-Saving heavy hitters: a hash index over k counters and a min-heap by count (heavy_hitters.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "heavy_hitters.h"

#define HH_MAX_K (1u << 24)

static uint32_t key_hash(const struct hh_key *k)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	size_t i;

	for (i = 0; i < HH_KEY_BYTES; i++)
		h = (h ^ k->b[i]) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (uint32_t)(h >> 32);
}

int hh_init(struct hh_summary *s, uint32_t k)
{
	memset(s, 0, sizeof(*s));
	if (!k || k > HH_MAX_K)
		return -EINVAL;
	s->k = k;
	s->nbuckets = 2;
	while (s->nbuckets < 2 * k)
		s->nbuckets <<= 1;
	s->e = calloc(k, sizeof(*s->e));
	s->next = calloc(k, sizeof(*s->next));
	s->head = calloc(s->nbuckets, sizeof(*s->head));
	s->heap = calloc(k, sizeof(*s->heap));
	s->pos = calloc(k, sizeof(*s->pos));
	s->sorted = calloc(k, sizeof(*s->sorted));
	if (!s->e || !s->next || !s->head || !s->heap || !s->pos || !s->sorted) {
		hh_free(s);
		return -ENOMEM;
	}
	hh_reset(s);
	return 0;
}

void hh_free(struct hh_summary *s)
{
	free(s->e);
	free(s->next);
	free(s->head);
	free(s->heap);
	free(s->pos);
	free(s->sorted);
	memset(s, 0, sizeof(*s));
}

void hh_reset(struct hh_summary *s)
{
	uint32_t i;

	for (i = 0; i < s->nbuckets; i++)
		s->head[i] = -1;
	s->used = 0;
	s->n = 0;
}

static int32_t find_index(const struct hh_summary *s, const struct hh_key *key)
{
	int32_t i = s->head[key_hash(key) & (s->nbuckets - 1)];

	while (i >= 0 && memcmp(s->e[i].key.b, key->b, HH_KEY_BYTES))
		i = s->next[i];
	return i;
}

static void unlink_index(struct hh_summary *s, uint32_t idx)
{
	int32_t *p = &s->head[key_hash(&s->e[idx].key) & (s->nbuckets - 1)];

	while (*p >= 0 && (uint32_t)*p != idx)
		p = &s->next[*p];
	if (*p >= 0)
		*p = s->next[idx];
}

static void link_index(struct hh_summary *s, uint32_t idx)
{
	int32_t *h = &s->head[key_hash(&s->e[idx].key) & (s->nbuckets - 1)];

	s->next[idx] = *h;
	*h = (int32_t)idx;
}

static void heap_swap(struct hh_summary *s, uint32_t a, uint32_t b)
{
	uint32_t t = s->heap[a];

	s->heap[a] = s->heap[b];
	s->heap[b] = t;
	s->pos[s->heap[a]] = a;
	s->pos[s->heap[b]] = b;
}

/* A count only grows: the entry at heap position p moves towards the leaves. */
static void sift_down(struct hh_summary *s, uint32_t p)
{
	for (;;) {
		uint32_t l = 2 * p + 1, r = l + 1, m = p;

		if (l < s->used && s->e[s->heap[l]].count < s->e[s->heap[m]].count)
			m = l;
		if (r < s->used && s->e[s->heap[r]].count < s->e[s->heap[m]].count)
			m = r;
		if (m == p)
			return;
		heap_swap(s, p, m);
		p = m;
	}
}

static void sift_up(struct hh_summary *s, uint32_t p)
{
	while (p) {
		uint32_t parent = (p - 1) / 2;

		if (s->e[s->heap[parent]].count <= s->e[s->heap[p]].count)
			return;
		heap_swap(s, p, parent);
		p = parent;
	}
}

void hh_add(struct hh_summary *s, const struct hh_key *key, uint64_t w)
{
	int32_t i;
	uint32_t idx;

	if (!w)
		return;
	s->n += w;
	i = find_index(s, key);
	if (i >= 0) {
		s->e[i].count += w;
		sift_down(s, s->pos[i]);
		return;
	}
	if (s->used < s->k) {
		idx = s->used++;
		s->e[idx].key = *key;
		s->e[idx].count = w;
		s->e[idx].err = 0;
		link_index(s, idx);
		s->heap[idx] = idx;
		s->pos[idx] = idx;
		sift_up(s, idx);
		return;
	}
	/* Full: the smallest counter takes the new key, which inherits its count as error. */
	idx = s->heap[0];
	unlink_index(s, idx);
	s->e[idx].key = *key;
	s->e[idx].err = s->e[idx].count;
	s->e[idx].count += w;
	link_index(s, idx);
	sift_down(s, 0);
}

uint64_t hh_min(const struct hh_summary *s)
{
	return s->used < s->k ? 0 : s->e[s->heap[0]].count;
}

const struct hh_entry *hh_find(const struct hh_summary *s, const struct hh_key *key)
{
	int32_t i = find_index(s, key);

	return i >= 0 ? &s->e[i] : NULL;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct hh_entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return memcmp(x->key.b, y->key.b, HH_KEY_BYTES);
}

uint32_t hh_top(const struct hh_summary *s, struct hh_entry *out, uint32_t n)
{
	uint32_t m = s->used < n ? s->used : n;

	if (!m)
		return 0;
	memcpy(s->sorted, s->e, (size_t)s->used * sizeof(*s->sorted));
	qsort(s->sorted, s->used, sizeof(*s->sorted), by_count_desc);
	memcpy(out, s->sorted, (size_t)m * sizeof(*out));
	return m;
}
