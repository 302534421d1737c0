/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A bounded-memory heavy-hitter summary (Space-Saving, Metwally, Agrawal
 * and El Abbadi 2005) over fixed-size keys, for `top`: k counters, each a
 * key with its count and its error.  A key already counted is incremented;
 * a new key, when all k counters are taken, replaces the key with the
 * smallest count m and starts at m + 1 with error m.
 *
 * Guarantees, for a stream of N increments (all from the summary's
 * definition, checked by tests/unit_heavy.c against an exact count):
 *  - a counted key's true count f lies in [count - err, count];
 *  - err <= min <= N / k, where min is the smallest counter;
 *  - every key with f > N / k is counted (more generally, every key with
 *    f > min).
 * So the j-th largest count is exact to within N / k, and with k at least
 * 1/eps the summary finds every key above a share eps of the stream.
 *
 * Memory is fixed at init: k entries, a hash index of 2k heads, a
 * min-heap of k positions and hh_top's k-entry scratch.  An update is
 * O(1) expected for the hash and O(log k) for the heap.
 */
#ifndef PACER_HEAVY_HITTERS_H
#define PACER_HEAVY_HITTERS_H

#include <stddef.h>
#include <stdint.h>

#define HH_KEY_BYTES 20

/* A key: opaque bytes (top: the masked address, family, prefix and class). */
struct hh_key {
	uint8_t b[HH_KEY_BYTES];
};

struct hh_entry {
	struct hh_key key;
	uint64_t count; /* an upper bound of the key's increments since it was last placed */
	uint64_t err;   /* count - err is a lower bound */
};

struct hh_summary {
	struct hh_entry *e;  /* k entries; the first used are taken */
	int32_t *next;       /* hash chain per entry */
	int32_t *head;       /* nbuckets heads, -1 empty */
	uint32_t *heap;      /* entry indexes, a min-heap by count */
	uint32_t *pos;       /* entry -> its heap position */
	struct hh_entry *sorted; /* hh_top's scratch: no allocation after init */
	uint32_t k, used, nbuckets;
	uint64_t n;          /* increments seen (N) */
};

/* 0, or -EINVAL (k is 0 or above 2^24), -ENOMEM. */
int hh_init(struct hh_summary *s, uint32_t k);
void hh_free(struct hh_summary *s);
/* Forget every key; the memory stays. */
void hh_reset(struct hh_summary *s);
/* Count one occurrence of key (weight w >= 1: w occurrences at once). */
void hh_add(struct hh_summary *s, const struct hh_key *key, uint64_t w);
/* The smallest counter when all k are taken (an upper bound of any uncounted key's count), else 0. */
uint64_t hh_min(const struct hh_summary *s);
/* The counted entry of key, or NULL. */
const struct hh_entry *hh_find(const struct hh_summary *s, const struct hh_key *key);
/*
 * The n largest counts, largest first (ties by key bytes, so the order is
 * deterministic), copied into out (at most the number counted): how many.
 */
uint32_t hh_top(const struct hh_summary *s, struct hh_entry *out, uint32_t n);

#endif /* PACER_HEAVY_HITTERS_H */
