/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HashSM: the sliding dictionary each HistoricalMembership level is made of
 * (also used by the fixed-block baseline).  Stores (signature, class ID)
 * with class IDs on a circular field of n values; an entry is active while
 * (now - class) mod n < active and expired after.  Expired entries met while
 * inserting, while relocating (cuckoo kicks), while growing or by the
 * incremental scan are handed to the evict callback (NULL drops them).  The
 * scan visits every bucket (and the whole stash) within `lap` calls of
 * hashsm_scan() after each change of the clock (hashsm_set_now).
 *
 * Storage: a bucketized cuckoo table (2 candidate buckets of 8 slots).  A
 * slot is a (class ID, alternate-bucket bit) field of bit_length(n) + 1
 * bits, all-ones class meaning empty, in one packed array, and the quotient
 * sig / nbuckets in another; the remainder is the primary bucket, so the
 * signature is recovered for promotion.  The table starts sized for
 * max_items and grows by 1/16 whenever it would pass a load of 0.95, so its
 * size follows what it holds; a cuckoo walk that fails leaves its entry in
 * a 2-entry stash, and only a full stash forces growth below that load.
 */
#ifndef PACER_HM_TABLE_H
#define PACER_HM_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct hashsm;
typedef int (*hashsm_evict_fn)(void *ctx, uint64_t sig, uint32_t cls);

/* NULL with errno EINVAL or ENOMEM. */
struct hashsm *hashsm_new(uint64_t max_items, unsigned sig_bits, uint32_t n, uint32_t active,
			  uint64_t lap, hashsm_evict_fn evict, void *ctx);
void hashsm_free(struct hashsm *s);
void hashsm_set_now(struct hashsm *s, uint32_t now);
/* Insert or overwrite (the caller guarantees the new class is the newer). */
int hashsm_put(struct hashsm *s, uint64_t sig, uint32_t cls);
/* Insert a signature the caller knows is absent (no lookup). */
int hashsm_add(struct hashsm *s, uint64_t sig, uint32_t cls);
/* Class stored for sig (active or expired), or -1. */
int64_t hashsm_get(const struct hashsm *s, uint64_t sig);
/* Remove sig; its class (active or expired), or -1 if absent. */
int64_t hashsm_take(struct hashsm *s, uint64_t sig);
/* One insertion's share of the expiry scan. */
int hashsm_scan(struct hashsm *s);
uint64_t hashsm_items(const struct hashsm *s);
uint64_t hashsm_slots(const struct hashsm *s);
uint64_t hashsm_rehashes(const struct hashsm *s);
size_t hashsm_memory_bytes(const struct hashsm *s);
/* The part of it whatever the size: the header and the padding words. */
size_t hashsm_header_bytes(const struct hashsm *s);

#endif
