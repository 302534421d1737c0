// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which sources are being limited, from sampled drops; and the line cap (drop_events.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "drop_events.h"

#define DE_MAX_CAP (1u << 24)

static uint32_t bucket_of(const struct de_tracker *t, const struct hh_key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < HH_KEY_BYTES; i++)
		h = (h ^ k->b[i]) * 0x100000001b3ULL;
	h ^= h >> 31;
	return (uint32_t)h & (t->nbuckets - 1);
}

int de_init(struct de_tracker *t, uint32_t cap, uint64_t hold_ns, uint32_t min_drops)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	if (!cap || cap > DE_MAX_CAP || !hold_ns || !min_drops)
		return -EINVAL;
	t->cap = cap;
	t->hold_ns = hold_ns;
	t->min_drops = min_drops;
	t->nbuckets = 2;
	while (t->nbuckets < 2 * cap)
		t->nbuckets <<= 1;
	t->s = calloc(cap, sizeof(*t->s));
	t->head = malloc((size_t)t->nbuckets * sizeof(*t->head));
	if (!t->s || !t->head) {
		de_free(t);
		return -ENOMEM;
	}
	for (i = 0; i < t->nbuckets; i++)
		t->head[i] = -1;
	for (i = 0; i < cap; i++)
		t->s[i].hnext = i + 1 < cap ? (int32_t)i + 1 : -1;
	t->free = 0;
	t->oldest = t->newest = -1;
	return 0;
}

void de_free(struct de_tracker *t)
{
	free(t->s);
	free(t->head);
	memset(t, 0, sizeof(*t));
}

static int32_t find(const struct de_tracker *t, const struct hh_key *k)
{
	int32_t i = t->head[bucket_of(t, k)];

	while (i >= 0 && memcmp(t->s[i].key.b, k->b, HH_KEY_BYTES))
		i = t->s[i].hnext;
	return i;
}

static void list_unlink(struct de_tracker *t, int32_t i)
{
	struct de_source *s = &t->s[i];

	if (s->prev >= 0)
		t->s[s->prev].next = s->next;
	else
		t->oldest = s->next;
	if (s->next >= 0)
		t->s[s->next].prev = s->prev;
	else
		t->newest = s->prev;
}

/*
 * Into the list by its last drop, walking back from the newest: records
 * arrive nearly in time order (other CPUs' a little late), so the walk is
 * short, and the oldest is always the first to expire.
 */
static void list_insert(struct de_tracker *t, int32_t i)
{
	int32_t after = t->newest;

	while (after >= 0 && t->s[after].last_ns > t->s[i].last_ns)
		after = t->s[after].prev;
	t->s[i].prev = after;
	t->s[i].next = after >= 0 ? t->s[after].next : t->oldest;
	if (t->s[i].next >= 0)
		t->s[t->s[i].next].prev = i;
	else
		t->newest = i;
	if (after >= 0)
		t->s[after].next = i;
	else
		t->oldest = i;
}

/* The start of s, at its drop stamped ts_ns (the one that made it limited). */
static void start_event(const struct de_source *s, uint64_t ts_ns, struct de_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->kind = DE_START;
	ev->key = s->key;
	ev->first_ns = s->first_ns;
	ev->last_ns = s->last_ns;
	ev->at_ns = ts_ns;
	ev->sampled = s->sampled;
}

bool de_drop(struct de_tracker *t, const struct hh_key *key, uint64_t ts_ns, struct de_event *ev)
{
	int32_t i = find(t, key);
	uint32_t b;

	if (i >= 0) {
		struct de_source *s = &t->s[i];

		s->sampled++;
		if (ts_ns > s->last_ns) {
			s->last_ns = ts_ns;
			list_unlink(t, i);
			list_insert(t, i);
		}
		if (s->started || s->sampled < t->min_drops)
			return false;
		s->started = 1;
		start_event(s, ts_ns, ev);
		return true;
	}
	if (t->free < 0) {
		t->untracked++;
		return false;
	}
	i = t->free;
	t->free = t->s[i].hnext;
	b = bucket_of(t, key);
	t->s[i].key = *key;
	t->s[i].first_ns = t->s[i].last_ns = ts_ns;
	t->s[i].sampled = 1;
	t->s[i].started = t->min_drops <= 1;
	t->s[i].hnext = t->head[b];
	t->head[b] = i;
	list_insert(t, i);
	t->used++;
	if (!t->s[i].started)
		return false;
	start_event(&t->s[i], ts_ns, ev);
	return true;
}

static void remove_source(struct de_tracker *t, int32_t i, struct de_event *ev)
{
	struct de_source *s = &t->s[i];
	int32_t *p = &t->head[bucket_of(t, &s->key)];

	memset(ev, 0, sizeof(*ev));
	ev->kind = DE_STOP;
	ev->key = s->key;
	ev->first_ns = s->first_ns;
	ev->last_ns = s->last_ns;
	ev->at_ns = s->last_ns + t->hold_ns;
	ev->sampled = s->sampled;
	while (*p >= 0 && *p != i)
		p = &t->s[*p].hnext;
	if (*p == i)
		*p = s->hnext;
	list_unlink(t, i);
	s->hnext = t->free;
	t->free = i;
	t->used--;
}

bool de_expire(struct de_tracker *t, uint64_t now_ns, struct de_event *ev)
{
	int32_t i;

	while ((i = t->oldest) >= 0 && now_ns >= t->s[i].last_ns + t->hold_ns) {
		int started = t->s[i].started;

		remove_source(t, i, ev);
		if (started)
			return true;
	}
	return false;
}

bool de_flush(struct de_tracker *t, struct de_event *ev)
{
	int32_t i;

	while ((i = t->oldest) >= 0) {
		int started = t->s[i].started;

		remove_source(t, i, ev);
		if (started)
			return true;
	}
	return false;
}

int de_rate_init(struct de_rate *r, uint32_t per_sec)
{
	memset(r, 0, sizeof(*r));
	if (!per_sec)
		return -EINVAL;
	r->stamp = calloc(per_sec, sizeof(*r->stamp));
	if (!r->stamp)
		return -ENOMEM;
	r->per_sec = per_sec;
	return 0;
}

void de_rate_free(struct de_rate *r)
{
	free(r->stamp);
	memset(r, 0, sizeof(*r));
}

bool de_rate_take(struct de_rate *r, uint64_t now_ns, enum de_kind kind)
{
	/* Full ring: the oldest of the last per_sec lines must be a second old. */
	if (r->n == r->per_sec && now_ns - r->stamp[r->pos] < 1000000000ULL) {
		r->refused[kind]++;
		return false;
	}
	r->stamp[r->pos] = now_ns;
	r->pos = r->pos + 1 == r->per_sec ? 0 : r->pos + 1;
	if (r->n < r->per_sec)
		r->n++;
	return true;
}
