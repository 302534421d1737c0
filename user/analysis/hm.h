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
 * Storage: the lower levels (0 .. base-1: the lower half, and more while
 * that is at most 8192 positions) are one exact ring of the last
 * (k+1)(2^base - 1) positions storing only the live signatures (hm_ring.h;
 * recencies below that are exact); each upper level is a HashSM table (hm_table.h).  A key is stored
 * once (inserting it removes its previous copy), so a level holds at most
 * the distinct keys of its span; tables start small and grow with what
 * they hold, so memory follows the stream's distinct keys, not W.
 * hm_memory_bytes() is every byte malloc'd.
 *
 * Not thread-safe.  An insertion searches the ring, makes at most one
 * promotion per upper level and, after a level's clock ticks, scans a
 * share of it for expired entries (a bucket's class fields at a time); a
 * query searches the ring and probes at most 2 buckets per upper level,
 * stopping where the key is.
 */
#ifndef PACER_HM_H
#define PACER_HM_H

#include <stddef.h>
#include <stdint.h>
#include "hm_table.h"

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

/*
 * As hm_new for keys below 2^key_bits (1..64): signatures are a bijective
 * mix within key_bits bits, so answers stay exact while each slot stores
 * about key_bits - log2(buckets) bits of quotient.  Larger keys: hm_insert
 * returns -EINVAL, hm_query -1.
 */
struct hm *hm_new_keys(uint64_t window, uint32_t inv_eps, unsigned key_bits);

void hm_free(struct hm *h);

/*
 * Record the next item.  0, or -ENOMEM if a table could not grow; the
 * structure stays usable but one stored item may have been lost.
 */
int hm_insert(struct hm *h, uint64_t key);

/*
 * hm_query then hm_insert in one pass over the levels (the lookup that
 * answers the query also removes the previous copy).  *recency (if not
 * NULL) gets what hm_query would have answered before the insertion.
 */
int hm_query_insert(struct hm *h, uint64_t key, int64_t *recency);

/* Estimated recency of key in items (see the guarantee above), or -1. */
int64_t hm_query(const struct hm *h, uint64_t key);

uint64_t hm_window(const struct hm *h);
uint32_t hm_inv_eps(const struct hm *h);
uint64_t hm_time(const struct hm *h);         /* insertions so far (t) */
uint64_t hm_slack(const struct hm *h);        /* 2^L - 1 */
unsigned hm_top_level(const struct hm *h);    /* L; levels are 0..L */
uint64_t hm_items(const struct hm *h);        /* entries stored: ring and levels */
/* Recencies below this are answered exactly (the ring of the lower levels). */
uint64_t hm_exact_span(const struct hm *h);
/* Entries of one level (0 for the levels the ring holds, below the first table level). */
uint64_t hm_level_items(const struct hm *h, unsigned level);
uint64_t hm_level_bound(const struct hm *h, unsigned level);  /* proven max entries */
uint64_t hm_level_slots(const struct hm *h, unsigned level);
uint64_t hm_rehashes(const struct hm *h);     /* table growths so far */
size_t hm_memory_bytes(const struct hm *h);
/* The part of it that does not grow with the entries: headers and the ring. */
size_t hm_fixed_bytes(const struct hm *h);
double hm_bits_per_item(const struct hm *h);  /* memory bits / W */

/*
 * log2 of binomial(N, m) with N = 2^log2_universe (N need not be a power of
 * two; fractional log2 accepted).  O(m) time.  NAN if N < m.
 */
double hm_log2_binomial(double log2_universe, uint64_t m);

/* The paper's space bound (1+eps)(B + W log2(1/eps)) in bits, B = log2 C(N, W). */
double hm_paper_bound_bits(uint64_t window, uint32_t inv_eps, double log2_universe);

/* Bijective 64-bit mix used to turn keys into signatures. */
uint64_t hm_mix64(uint64_t x);
/* Bijective mix of the low `bits` bits (x must be below 2^bits). */
uint64_t hm_mix_bits(uint64_t x, unsigned bits);

#endif
