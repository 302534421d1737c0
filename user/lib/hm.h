/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HistoricalMembership (Holland, Wirth, Zobel, "Recency Queries with Succinct
 * Representation", ISAAC 2020): approximate recency of 64-bit item signatures
 * over a sliding window of the last W items, with relative error eps = 1/k.
 *
 * Time is counted in items: the t-th insertion is at position t (t >= 1), and
 * the recency of x after it is r = t - (last position of x), so the item just
 * inserted has recency 0.  With L the top level (hm_top_level()) and
 * slack = 2^L - 1 (hm_slack(), at most eps*W/2 - 1; 0 when L = 0):
 *
 *   r <= W          ->  0 <= r - r_hat <= r_hat / k   (so r_hat <= r <= (1+eps) r_hat,
 *                       and r = 0 gives r_hat = 0 exactly)
 *   r >  W + slack  ->  -1 (as is any never-seen key)
 *   in between      ->  -1 or an estimate obeying the bound above
 *
 * This holds deterministically for exact signatures (hm_new); with reduced
 * signatures (hm_new_sig) two keys sharing a signature are one item.
 *
 * Storage (all levels): a bucketized cuckoo table (2 candidate buckets of 4
 * slots) holding, per slot and bit-packed, the quotient sig / nbuckets
 * (bits: length of (2^sig_bits - 1) / nbuckets), one bit saying whether the
 * slot is in the item's alternate bucket, and the circular class ID
 * (bit length of the class field n_l; all-ones marks an empty slot).  The
 * remainder sig mod nbuckets is the primary bucket, so the signature is
 * recoverable for promotion.  Each level is sized for a proven worst-case
 * occupancy ((k+1.5)*2^l, top (J+1.5)*2^L, see hm.c) at a load of at most
 * 0.92, plus a 4-entry stash for failed cuckoo walks; only if the stash is
 * full does the level grow by 25% and rehash (hm_rehashes()).
 * hm_memory_bytes() is every byte malloc'd: the structs (stashes included)
 * plus the packed slot arrays.
 *
 * Not thread-safe.  An insertion reads O(L/eps) slots (each level's share
 * of the expiry scan) plus amortized O(L) promotions; a query probes at
 * most 2 buckets per level, O(L).
 */
#ifndef PACER_HM_H
#define PACER_HM_H

#include <stddef.h>
#include <stdint.h>

struct hm;

/*
 * window W >= 1 items, inv_eps = 1/eps >= 1.  Signatures are a bijective mix
 * of the 64-bit key (exact).  NULL with errno EINVAL or ENOMEM.
 */
struct hm *hm_new(uint64_t window, uint32_t inv_eps);

/*
 * As hm_new, keeping only sig_bits (1..64) bits of the mixed key: the
 * approximate-membership reduction of the paper's Corollary 12 (universe
 * N = 2^sig_bits, false matches with probability about W / 2^sig_bits).
 */
struct hm *hm_new_sig(uint64_t window, uint32_t inv_eps, unsigned sig_bits);

void hm_free(struct hm *h);

/*
 * Record the next item.  0, or -ENOMEM if a table could not grow; the
 * structure stays usable but one stored item may have been lost.
 */
int hm_insert(struct hm *h, uint64_t key);

/* Estimated recency of key in items (see the guarantee above), or -1. */
int64_t hm_query(const struct hm *h, uint64_t key);

uint64_t hm_window(const struct hm *h);
uint32_t hm_inv_eps(const struct hm *h);
uint64_t hm_time(const struct hm *h);         /* insertions so far (t) */
uint64_t hm_slack(const struct hm *h);        /* 2^L - 1 */
unsigned hm_top_level(const struct hm *h);    /* L; levels are 0..L */
uint64_t hm_items(const struct hm *h);        /* entries stored, all levels */
uint64_t hm_level_items(const struct hm *h, unsigned level);
uint64_t hm_level_bound(const struct hm *h, unsigned level);  /* proven max entries */
uint64_t hm_level_slots(const struct hm *h, unsigned level);
uint64_t hm_rehashes(const struct hm *h);     /* emergency growths so far */
size_t hm_memory_bytes(const struct hm *h);
double hm_bits_per_item(const struct hm *h);  /* memory bits / W */

/*
 * log2 of binomial(N, m) with N = 2^log2_universe (N need not be a power of
 * two; fractional log2 accepted).  O(m) time.  NAN if N < m.
 */
double hm_log2_binomial(double log2_universe, uint64_t m);

/* The paper's space bound (1+eps)(B + W log2(1/eps)) in bits, B = log2 C(N, W). */
double hm_paper_bound_bits(uint64_t window, uint32_t inv_eps, double log2_universe);

/*
 * HashSM: the sliding dictionary each level is made of (also used by the
 * fixed-block baseline).  Stores (signature, class ID) with class IDs on a
 * circular field of n values; an entry is active while (now - class) mod n
 * < active and expired after.  Expired entries met while inserting, while
 * relocating (cuckoo kicks) or by the incremental scan are handed to the
 * evict callback (NULL drops them).  The scan visits every bucket (and
 * the whole stash) within `lap` calls of hashsm_scan(); sizing max_items
 * for the entries that can coexist, expired-but-unscanned ones included,
 * is the caller's job.
 */
struct hashsm;
typedef int (*hashsm_evict_fn)(void *ctx, uint64_t sig, uint32_t cls);

struct hashsm *hashsm_new(uint64_t max_items, unsigned sig_bits, uint32_t n, uint32_t active,
			  uint64_t lap, hashsm_evict_fn evict, void *ctx);
void hashsm_free(struct hashsm *s);
void hashsm_set_now(struct hashsm *s, uint32_t now);
/* Insert or overwrite (the caller guarantees the new class is the newer). */
int hashsm_put(struct hashsm *s, uint64_t sig, uint32_t cls);
/* Class stored for sig (active or expired), or -1. */
int64_t hashsm_get(const struct hashsm *s, uint64_t sig);
/* One insertion's share of the expiry scan. */
int hashsm_scan(struct hashsm *s);
uint64_t hashsm_items(const struct hashsm *s);
uint64_t hashsm_slots(const struct hashsm *s);
uint64_t hashsm_rehashes(const struct hashsm *s);
size_t hashsm_memory_bytes(const struct hashsm *s);

/* Bijective 64-bit mix used to turn keys into signatures. */
uint64_t hm_mix64(uint64_t x);

#endif
