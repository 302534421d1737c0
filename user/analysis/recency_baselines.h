/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The two baselines of Table 1 in Holland, Wirth, Zobel (ISAAC 2020), with
 * the same conventions as hm.h: the t-th insertion is position t, recency
 * r = t - last position, the item just inserted has recency 0.
 *
 * exact_recency (ExactCuckoo-style): key -> last position in an open
 * addressing table (linear probing, 16-byte slots, load <= 1/2).  Query
 * returns r exactly when r <= window, else -1.  Expired keys are deleted
 * lazily by a scan of 4 slots per insertion; they never affect answers.
 *
 * block_recency (OptimalSM-style): the window W is cut into blocks of D
 * items; (signature, block ID) pairs live in a HashSM table (see hm.h) with
 * block IDs mod 2A, A = ceil(W/D) + 1 active blocks, lazy expiry.  Query
 * returns the recency of the newest item of the key's block, r_hat:
 *   r <= W          ->  0 <= r - r_hat <= D - 1
 *   r >= W + D      ->  -1   (in fact already for r > W + D - 1)
 *   in between      ->  -1 or an estimate within the bound
 * The expiry scan covers the table within P = max(ceil(D/2), ceil(W/16))
 * insertions, so at most A*D + P entries coexist; the table is sized so.
 */
#ifndef PACER_RECENCY_BASELINES_H
#define PACER_RECENCY_BASELINES_H

#include <stddef.h>
#include <stdint.h>

struct exact_recency;

/* window >= 1.  NULL with errno EINVAL or ENOMEM. */
struct exact_recency *exact_recency_new(uint64_t window);
void exact_recency_free(struct exact_recency *e);
/* 0 or -ENOMEM (the table could not grow; the key is then not recorded). */
int exact_recency_insert(struct exact_recency *e, uint64_t key);
/* Exact recency if it is <= window, else -1 (also for unseen keys). */
int64_t exact_recency_query(const struct exact_recency *e, uint64_t key);
uint64_t exact_recency_items(const struct exact_recency *e);
size_t exact_recency_memory_bytes(const struct exact_recency *e);

struct block_recency;

/* window W >= 1, block width D >= 1 (D <= W is the useful range). */
struct block_recency *block_recency_new(uint64_t window, uint64_t block);
void block_recency_free(struct block_recency *b);
/* 0 or -ENOMEM (see hm_insert). */
int block_recency_insert(struct block_recency *b, uint64_t key);
int64_t block_recency_query(const struct block_recency *b, uint64_t key);
uint64_t block_recency_items(const struct block_recency *b);
size_t block_recency_memory_bytes(const struct block_recency *b);

#endif
