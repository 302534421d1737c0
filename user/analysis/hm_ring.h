/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exact bottom of HistoricalMembership: the signatures of the last len
 * positions in a ring (slot = position mod len), each with a live bit
 * (cleared when the key occurs again, so a key is live at most once).
 * Searched linearly, four signatures per SSE2 compare: for the few hundred
 * positions of the lower levels this is cheaper than a lookup and a
 * promotion per level, and it answers their recencies exactly.
 */
#ifndef PACER_HM_RING_H
#define PACER_HM_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hm_ring {
	uint64_t len;        /* positions held (0: no ring) */
	uint64_t live_count;
	uint64_t *live;      /* one bit per slot */
	uint32_t *sig32;     /* signatures of at most 32 bits ... */
	uint64_t *sig64;     /* ... or wider */
};

/* 0 or -ENOMEM. */
int hm_ring_init(struct hm_ring *r, uint64_t len, unsigned sig_bits);
void hm_ring_free(struct hm_ring *r);
/* The live slot holding sig, or -1. */
int64_t hm_ring_find(const struct hm_ring *r, uint64_t sig);
void hm_ring_kill(struct hm_ring *r, uint64_t slot);
/* Store sig live at slot; true (and *old) if the slot held a live signature. */
bool hm_ring_replace(struct hm_ring *r, uint64_t slot, uint64_t sig, uint64_t *old);
size_t hm_ring_bytes(const struct hm_ring *r);

/* Search routines for 32-bit signatures; HM_RING_AUTO picks the widest the CPU has. */
enum hm_ring_impl { HM_RING_AUTO, HM_RING_SCALAR, HM_RING_SSE2, HM_RING_AVX2 };
/* For tests: force one (process-wide).  0, or -ENOTSUP if this CPU or build lacks it. */
int hm_ring_use(enum hm_ring_impl impl);

#endif
