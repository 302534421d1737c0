/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dense table: the third backend (`load --backend dense`), shared
 * verbatim by the XDP program and userspace (simulation, tests, query).
 * The recency table's design (include/pacer_table.h) at 2.67 bytes an
 * entry, for ten million sources in about 30 MB: the same two-choice
 * engine (pacer_two_choice.h), instantiated here over a denser slot layout.
 *
 * Structure.  A line is one 64-byte cache line of 8 words; a word holds
 * three 21-bit entries at bits 0, 21 and 42 (bit 63 stays 0), 24 entries a
 * line.  An entry is the tick (mod 256) at which its key was last admitted
 * (pace) or seen (quiet) in its low 8 bits, under a 13-bit fingerprint
 * (0: never written).  A key has two candidate lines, chosen by
 * multiply-shift from the two halves of its hash, so the table may have any
 * number of lines (2..PACER_DENSE_MAX_LINES), and a fingerprint from the
 * whole hash multiplied by an odd constant.  No entry is ever moved:
 * entries expire, and an expired entry is a free slot.
 *
 * Rate.  As the table's: an entry's tick is the key's GCRA cell
 * (pacer_rate.h), with ages up to PACER_DENSE_MAX_SAT: bursts up to N = 31
 * fit, but as with the sketch's 8-bit cells no tick spaces N/T within the
 * 1 % the CLI asks (user/lib/backend/ticks.c), so it takes --interval alone.
 *
 * Time.  Ages are (now - tick) mod 256.  An age from 256 -
 * PACER_DENSE_FUTURE up is an entry written by a CPU whose clock is
 * slightly ahead: fresh (age 0), as pacer_cell_age() reads a cell.  An
 * entry left alone for 256 ticks would look fresh again (a false drop,
 * never a false pass): the sweep (bpf/lib/sweep.h, pacer_dense_sweep_line(),
 * pacer_dense_sweep_plan() below) clears every entry aged
 * PACER_DENSE_MAX_SAT or more long before it reaches 256 - FUTURE.
 *
 * Verdict.  The table's contract: a key is dropped if either line holds a
 * fresh entry with its fingerprint; otherwise it is admitted into its own
 * expired entry, else a free one (unwritten or expired, idle ones first) of
 * the line with more free entries; when neither line has one, one-sided
 * mode (PACER_TBL_FULL_DROP) drops and evict-oldest (PACER_TBL_FULL_EVICT)
 * replaces the oldest entry of the two lines.  Errors are one-sided in the
 * default mode: false drops from overflow and fingerprint collisions only.
 */
#ifndef PACER_DENSE_H
#define PACER_DENSE_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"
#include "pacer_rate.h"

#define PACER_DENSE_WORDS 8                       /* 64-bit words per line */
#define PACER_DENSE_LANES 3                       /* entries per word */
#define PACER_DENSE_WAYS (PACER_DENSE_WORDS * PACER_DENSE_LANES) /* entries per line: 24 */
#define PACER_DENSE_SLOTS (2 * PACER_DENSE_WAYS)
#define PACER_DENSE_MAX_LINES (1u << 24)
#define PACER_DENSE_MAX_SAT 64    /* the largest age a rate's cells need: N <= 31 */
#define PACER_DENSE_FUTURE 64     /* ages from 256 - this up are fresh */
#define PACER_DENSE_NONE 0xffu
#define PACER_DENSE_ENTRY_BITS 21
#define PACER_DENSE_ENTRY_MASK 0x1fffffULL
#define PACER_DENSE_FP_MAX 0x1fffu /* fingerprints are 1..8191 */

#if PACER_DENSE_MAX_SAT != PACER_MAX_THRESH
#error "pacer_rate_max_sat() gives the dense table PACER_MAX_THRESH"
#endif

struct pacer_dense_line {
	__u64 w[PACER_DENSE_WORDS];
};

/* Fingerprint: the top 13 bits of h times an odd constant (all of h's bits move them). */
PACER_INLINE __u32 pacer_dense_fp(__u64 h)
{
	__u32 fp = (__u32)((h * 0x9e3779b97f4a7c15ULL) >> 51);

	return fp ? fp : 1; /* 0 marks a never-written entry */
}

/*
 * The key's two lines among `lines` (2 or more), by multiply-shift of each
 * half of h: no division, any line count.  Two distinct lines always.
 */
PACER_INLINE void pacer_dense_lines(__u64 h, __u32 lines, __u32 idx[2])
{
	idx[0] = (__u32)(((__u64)(__u32)h * lines) >> 32);
	idx[1] = (__u32)(((h >> 32) * lines) >> 32);
	if (idx[1] == idx[0])
		idx[1] = idx[0] + 1 >= lines ? 0 : idx[0] + 1;
}

/*
 * The layout for the engine: three 21-bit lanes a word (bits 0, 21 and 42;
 * bit 63 stays 0), each an 8-bit tick under a 13-bit fingerprint; slot
 * 24L + 8j + i is lane j of word i of line L.
 */
#define TC_PREFIX pacer_dense_
#define TC_LINE struct pacer_dense_line
#define TC_LANES PACER_DENSE_LANES
#define TC_TICK_BITS 8
#define TC_FP_BITS 13
#define TC_FUTURE PACER_DENSE_FUTURE
#define TC_SWAP_TRIES 3
#define TC_MATCH_FIRST 0
#include "pacer_two_choice.h"

/* Word i's lane bits, gathered as `bits << i` (bits i, 21 + i, 42 + i), as 24 slot bits (8j + i). */
PACER_INLINE __u64 pacer_dense_gather(__u64 acc)
{
	return (acc & 0xff) | ((acc >> 13) & 0xff00) | ((acc >> 26) & 0xff0000);
}

PACER_INLINE __u32 pacer_dense_popcount_line(__u64 x)
{
	x = x - ((x >> 1) & 0x555555);
	x = (x & 0x333333) + ((x >> 2) & 0x333333);
	x = (x + (x >> 4)) & 0x0f0f0f;
	return (__u32)((x + (x >> 8) + (x >> 16)) & 0x3f);
}

/* The line of a slot: 0 for slots 0..23, 1 for 24..47. */
PACER_INLINE __u32 pacer_dense_line_of(__u32 slot)
{
	return (__u32)(1 - pacer_lt(slot, PACER_DENSE_WAYS));
}

/* The slot's index within its line (0..23). */
PACER_INLINE __u32 pacer_dense_way_of(__u32 slot)
{
	__u32 s = slot - PACER_DENSE_WAYS * pacer_dense_line_of(slot);

	PACER_OPAQUE(s);
	return s & 31;
}

/* The bit offset of a way's entry in its word: 0, 21 or 42. */
PACER_INLINE __u32 pacer_dense_shift_of(__u32 way)
{
	return ((way >> 3) & 3) * PACER_DENSE_ENTRY_BITS; /* ways 0..23: lanes 0..2 */
}

PACER_INLINE __u64 *pacer_dense_word(struct pacer_dense_line *const l[2], __u32 slot)
{
	struct pacer_dense_line *line = pacer_dense_line_of(slot) ? l[1] : l[0];

	return &line->w[pacer_dense_way_of(slot) & (PACER_DENSE_WORDS - 1)];
}

PACER_INLINE __u64 *pacer_dense_locate(struct pacer_dense_line *const l[2], __u32 slot,
				       __u32 *shift)
{
	*shift = pacer_dense_shift_of(pacer_dense_way_of(slot));
	return pacer_dense_word(l, slot);
}

/* The entry in a slot, read once. */
PACER_INLINE __u32 pacer_dense_get(struct pacer_dense_line *const l[2], __u32 slot)
{
	__u64 w = *(volatile __u64 *)pacer_dense_word(l, slot);

	return (__u32)((w >> pacer_dense_shift_of(pacer_dense_way_of(slot))) &
		       PACER_DENSE_ENTRY_MASK);
}

/* Word w with the entry at shift replaced by e (plain stores: per-CPU placement, tests). */
PACER_INLINE __u64 pacer_dense_word_with(__u64 w, __u32 shift, __u32 e)
{
	return (w & ~(PACER_DENSE_ENTRY_MASK << shift)) | ((__u64)e << shift);
}

PACER_INLINE void pacer_dense_set(struct pacer_dense_line *const l[2], __u32 slot, __u32 e)
{
	__u64 *w = pacer_dense_word(l, slot);

	*w = pacer_dense_word_with(*w, pacer_dense_shift_of(pacer_dense_way_of(slot)), e);
}

/*
 * The sweep (bpf/lib/sweep.h) clears every written entry aged
 * PACER_DENSE_MAX_SAT or more (no rate the table holds needs it) and visits
 * each line within PACER_DENSE_SWEEP_TICKS: an entry is written at an age
 * below MAX_SAT, expires within MAX_SAT ticks, and is cleared within
 * SWEEP_TICKS of that, far below 256 - FUTURE where it would read as fresh;
 * the sweep plans for half the room, the other half is slack for the
 * timer's latency.  Unlike the table's 16-bit ticks, 8-bit ticks leave few
 * ticks of room: a large table on a fine tick needs more lines a round
 * than PACER_DENSE_SWEEP_MAX_CHUNK (about a MiB a millisecond, a good share
 * of a CPU), and load refuses it (pacer_dense_sweep_plan() < 0).
 */
#define PACER_DENSE_SWEEP_TICKS ((256 - PACER_DENSE_FUTURE - PACER_DENSE_MAX_SAT) / 2)
#define PACER_DENSE_SWEEP_MAX_CHUNK 16384

/*
 * The table's plan (pacer_sweep_plan()) at the dense table's pace; -1 when
 * it cannot keep that pace: a round would need more than
 * PACER_DENSE_SWEEP_MAX_CHUNK lines, or rounds 1 ms apart cannot visit
 * every line within PACER_DENSE_SWEEP_TICKS at all (a tick so fine that
 * the span is under a round).  The plan is filled in either way.
 */
PACER_INLINE int pacer_dense_sweep_plan(__u64 lines, __u32 tick_shift, struct pacer_tbl_sweep *p)
{
	__u64 span = (__u64)PACER_DENSE_SWEEP_TICKS << tick_shift, rounds;

	pacer_sweep_plan(lines, PACER_DENSE_SWEEP_TICKS, tick_shift, p);
	rounds = ((lines ? lines : 1) + p->chunk - 1) / p->chunk;
	return p->chunk > PACER_DENSE_SWEEP_MAX_CHUNK || rounds * p->period_ns > span ? -1 : 0;
}

#endif /* PACER_DENSE_H */
