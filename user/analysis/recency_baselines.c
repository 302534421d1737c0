// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Baselines for HistoricalMembership: an exact recency oracle and the
 * fixed-block sliding dictionary.  See recency_baselines.h for guarantees.
 */
#include "recency_baselines.h"

#include <errno.h>
#include <stdlib.h>

#include "hm.h"

/* ---- exact oracle ---------------------------------------------------------- */

/* Slots examined by the expiry scan per insertion; see exact_recency_insert. */
#define EXACT_SCAN_SLOTS 4u

struct exact_slot {
	uint64_t key;
	uint64_t pos;        /* position of the last occurrence; 0 = empty slot */
};

struct exact_recency {
	struct exact_slot *slots;
	uint64_t mask;
	uint64_t items;
	uint64_t t;
	uint64_t window;
	uint64_t scan_next;
};

static uint64_t exact_home(const struct exact_recency *e, uint64_t key)
{
	return hm_mix64(key) & e->mask;
}

struct exact_recency *exact_recency_new(uint64_t window)
{
	struct exact_recency *e;

	if (!window || window > (UINT64_MAX >> 2)) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->window = window;
	e->mask = 15;
	e->slots = calloc(e->mask + 1, sizeof(*e->slots));
	if (!e->slots) {
		free(e);
		return NULL;
	}
	return e;
}

void exact_recency_free(struct exact_recency *e)
{
	if (!e)
		return;
	free(e->slots);
	free(e);
}

static int exact_grow(struct exact_recency *e)
{
	uint64_t old_mask = e->mask, i;
	struct exact_slot *old = e->slots, *fresh;

	if (old_mask >= (SIZE_MAX / sizeof(*fresh)) / 2)
		return -ENOMEM;
	fresh = calloc(2 * (old_mask + 1), sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	e->slots = fresh;
	e->mask = 2 * old_mask + 1;
	e->scan_next = 0;
	for (i = 0; i <= old_mask; i++) {
		uint64_t j;

		if (!old[i].pos)
			continue;
		for (j = exact_home(e, old[i].key); e->slots[j].pos; j = (j + 1) & e->mask)
			;
		e->slots[j] = old[i];
	}
	free(old);
	return 0;
}

/* Backward-shift deletion: later members of the probe run move into the hole. */
static void exact_delete(struct exact_recency *e, uint64_t hole)
{
	uint64_t j = hole;

	for (;;) {
		uint64_t home;

		j = (j + 1) & e->mask;
		if (!e->slots[j].pos)
			break;
		home = exact_home(e, e->slots[j].key);
		if (((j - home) & e->mask) >= ((j - hole) & e->mask)) {
			e->slots[hole] = e->slots[j];
			hole = j;
		}
	}
	e->slots[hole].pos = 0;
	e->items--;
}

int exact_recency_insert(struct exact_recency *e, uint64_t key)
{
	uint64_t j, budget = EXACT_SCAN_SLOTS;

	e->t++;
	for (j = exact_home(e, key); e->slots[j].pos; j = (j + 1) & e->mask)
		if (e->slots[j].key == key)
			break;
	if (!e->slots[j].pos) {
		if ((e->items + 1) * 2 > e->mask + 1) {
			int rc = exact_grow(e);

			if (rc)
				return rc;
			for (j = exact_home(e, key); e->slots[j].pos; j = (j + 1) & e->mask)
				;
		}
		e->slots[j].key = key;
		e->items++;
	}
	e->slots[j].pos = e->t;
	/*
	 * Only this scan deletes, and a deletion only pulls entries from ahead of
	 * the cursor into the re-examined slot, so each entry is examined once
	 * per (slots / 4) insertions; 4 (not ExactCuckoo's 2) keeps expired
	 * entries below a quarter of the slots, so the table stops growing.
	 */
	while (budget) {
		struct exact_slot *slot = &e->slots[e->scan_next];

		if (slot->pos && e->t - slot->pos > e->window) {
			exact_delete(e, e->scan_next);
			continue;
		}
		e->scan_next = (e->scan_next + 1) & e->mask;
		budget--;
	}
	return 0;
}

int64_t exact_recency_query(const struct exact_recency *e, uint64_t key)
{
	uint64_t j;

	for (j = exact_home(e, key); e->slots[j].pos; j = (j + 1) & e->mask)
		if (e->slots[j].key == key)
			return e->t - e->slots[j].pos > e->window ? -1
								  : (int64_t)(e->t - e->slots[j].pos);
	return -1;
}

uint64_t exact_recency_items(const struct exact_recency *e)
{
	return e->items;
}

size_t exact_recency_memory_bytes(const struct exact_recency *e)
{
	return sizeof(*e) + (e->mask + 1) * sizeof(*e->slots);
}

/* ---- fixed-block sliding dictionary -------------------------------------- */

struct block_recency {
	struct hashsm *table;
	uint64_t window;
	uint64_t block;
	uint64_t t;
	uint32_t n;          /* 2A block IDs */
	uint32_t active;     /* A = ceil(W/D) + 1 */
	uint32_t now;        /* contemporary block ID: floor(t/D) mod n */
};

struct block_recency *block_recency_new(uint64_t window, uint64_t block)
{
	struct block_recency *b;
	uint64_t active, lap;

	if (!window || !block || window > (UINT64_MAX >> 2) || block > (UINT64_MAX >> 2)) {
		errno = EINVAL;
		return NULL;
	}
	active = (window + block - 1) / block + 1;
	if (active > (UINT32_MAX - 2) / 2 || active > (UINT64_MAX >> 4) / block) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->window = window;
	b->block = block;
	b->active = (uint32_t)active;
	b->n = 2 * b->active;
	lap = (block + 1) / 2;
	if (lap < (window + 15) / 16)
		lap = (window + 15) / 16;
	/*
	 * An entry of block c is still stored at most lap - 1 insertions after c
	 * expires, when its oldest position has recency A*D + lap - 1: at most
	 * A*D + lap entries.  lap <= A*D keeps expired IDs below 2A (no alias).
	 */
	b->table = hashsm_new(active * block + lap, 64, b->n, b->active, lap, NULL, NULL);
	if (!b->table) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

void block_recency_free(struct block_recency *b)
{
	if (!b)
		return;
	hashsm_free(b->table);
	free(b);
}

int block_recency_insert(struct block_recency *b, uint64_t key)
{
	int rc, r;

	b->t++;
	if (b->t % b->block == 0) {
		b->now = b->now + 1 == b->n ? 0 : b->now + 1;
		hashsm_set_now(b->table, b->now);
	}
	rc = hashsm_put(b->table, hm_mix64(key), b->now);
	r = hashsm_scan(b->table);
	return rc ? rc : r;
}

int64_t block_recency_query(const struct block_recency *b, uint64_t key)
{
	int64_t cls = hashsm_get(b->table, hm_mix64(key));
	uint64_t age, estimate;

	if (cls < 0)
		return -1;
	age = b->now >= cls ? b->now - (uint64_t)cls : b->now + b->n - (uint64_t)cls;
	/*
	 * Block floor(t/D) - age holds positions whose recency lies in
	 * [age*D + tau - D + 1, age*D + tau] (tau = t mod D), clipped at 0 for
	 * the contemporary block; report the front (smallest) one.
	 */
	estimate = age ? age * b->block + b->t % b->block - (b->block - 1) : 0;
	return estimate > b->window ? -1 : (int64_t)estimate;
}

uint64_t block_recency_items(const struct block_recency *b)
{
	return hashsm_items(b->table);
}

size_t block_recency_memory_bytes(const struct block_recency *b)
{
	return sizeof(*b) + hashsm_memory_bytes(b->table);
}
