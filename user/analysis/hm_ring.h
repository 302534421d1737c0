/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exact bottom of HistoricalMembership: the last len positions, of
 * which only the live ones (not seen again since) are stored.  A bitmap of
 * len bits marks the live positions (slot = position mod len); the live
 * signatures sit in one array in position order, so the k-th live bit and
 * the k-th signature are the same entry.  Memory is len bits plus one
 * signature per live position: on a repeat-heavy stream most positions
 * are dead, and a ring of every position would spend a signature on each.
 *
 * Searched linearly from the newest signature, with SSE2 or AVX2 compares
 * of the signatures' low 16 bits when the CPU has them: for the few thousand positions of the lower levels
 * this is cheaper than a lookup and a promotion per level, and it answers
 * their recencies exactly.
 */
#ifndef PACER_HM_RING_H
#define PACER_HM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hm_ring {
	uint64_t len;        /* positions held (0: no ring) */
	uint64_t now;        /* slot of the newest position */
	uint64_t *live;      /* one bit per slot */
	/* Live signatures, oldest first, in [head, tail) of cap entries. */
	uint16_t *key16;     /* the low 16 bits of every signature (what the search reads) */
	uint16_t *hi16;      /* bits 16-31 of signatures of at most 32 bits ... */
	uint64_t *sig64;     /* ... or the whole of wider ones */
	uint64_t head, tail, cap;
};

/* 0 or -ENOMEM. */
int hm_ring_init(struct hm_ring *r, uint64_t len, unsigned sig_bits);
void hm_ring_free(struct hm_ring *r);
/* Exact recency (0: the newest position) of the live copy of sig, or -1. */
int64_t hm_ring_recency(const struct hm_ring *r, uint64_t sig);
/* The same, and the copy is no longer live. */
int64_t hm_ring_take(struct hm_ring *r, uint64_t sig);
/*
 * The next position, holding sig live; *pushed_out tells whether the
 * position it pushes out was live (then *old is its signature).  0, or
 * -ENOMEM if the array could not grow: the ring moved on but sig is not
 * stored (a later query misses it).
 */
int hm_ring_push(struct hm_ring *r, uint64_t sig, uint64_t *old, bool *pushed_out);
uint64_t hm_ring_live(const struct hm_ring *r);
size_t hm_ring_bytes(const struct hm_ring *r);
/* The part of it that does not grow with the live entries. */
size_t hm_ring_fixed_bytes(const struct hm_ring *r);

/* Search routines; HM_RING_AUTO picks the widest the CPU has. */
enum hm_ring_impl { HM_RING_AUTO, HM_RING_SCALAR, HM_RING_SSE2, HM_RING_AVX2 };
/* For tests: force one (process-wide).  0, or -ENOTSUP if this CPU or build lacks it. */
int hm_ring_use(enum hm_ring_impl impl);

#endif
