/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recency table: the second backend (`load --backend table`), shared
 * verbatim by the XDP program and userspace (simulation, tests, query).
 *
 * Structure.  Buckets are 64-byte lines of 16 entries; a key has two
 * candidate lines (cuckoo-filter style, chosen by disjoint bits of its hash)
 * and a 16-bit fingerprint.  An entry is 32 bits: the low 16 bits of the
 * tick at which its key was last admitted (pace) or seen (quiet), and the
 * fingerprint in the high 16 (0: never written).  A whole entry is one
 * aligned 32-bit word, so shared placement claims it with one
 * compare-and-swap.  No entry is ever moved (no cuckoo kicks): entries
 * expire instead, and an expired entry is a free slot.
 *
 * Rate.  With --rate N/T an entry's tick is the key's GCRA cell
 * (pacer_rate.h): the key is admitted at an age of thresh or more, but its
 * entry is only free for other keys from an age of sat up (a full burst);
 * between the two it holds the key's spent credit.  With N = 1 the two are
 * one threshold.  Of several entries with the key's fingerprint (only from
 * fingerprint collisions or a race) the youngest decides: the estimate errs
 * towards "more limited", as the sketch's minimum does.
 *
 * Time.  Ages are (now - tick) mod 2^16.  Modular age is never larger than
 * the true age, so an entry left alone for a multiple of 2^16 ticks would
 * look fresh again: the datapath's sweep (pacer_tbl_sweep_plan() below,
 * pacer_tbl_sweep_line(), bpf/lib/sweep.h) clears every expired entry long before that.  An age
 * from 2^16 - PACER_TBL_FUTURE up is an entry written by a CPU whose clock
 * is slightly ahead: fresh (age 0), as pacer_cell_age() does.
 *
 * Verdict.  A key is recent (dropped) if either line holds a fresh entry
 * with its fingerprint.  Otherwise it is admitted if an entry can be
 * (re)written: its own expired entry, else a free one (never written or
 * expired) in the line with more free entries.  When neither line has one:
 *  - one-sided (PACER_TBL_FULL_DROP, default): drop.  Entries are only
 *    replaced once expired, so a key's fresh entry is never lost: like the
 *    sketch, no key is ever admitted more often than its policy allows; all
 *    errors are false drops (overflow, or another key's fresh entry with the
 *    same fingerprint in one of the two lines).
 *  - opposite (PACER_TBL_FULL_EVICT): the oldest entry of the two lines is
 *    replaced.  No false drop beyond fingerprint collisions; an evicted key
 *    that sends again within the interval passes again (a false pass).
 */
#ifndef PACER_TABLE_H
#define PACER_TABLE_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"
#include "pacer_rate.h"

#define PACER_TBL_WAYS 16           /* entries per line */
#define PACER_TBL_SLOTS (2 * PACER_TBL_WAYS)
#define PACER_TBL_MAX_LINES_LOG2 24 /* line bits of the two indexes are disjoint */
#define PACER_TBL_FUTURE 1024       /* ages from 2^16 - this up are fresh */
#define PACER_TBL_NONE 0xffu

struct pacer_tbl_line {
	union {
		__u32 e[PACER_TBL_WAYS];
		__u64 w[PACER_TBL_WAYS / 2]; /* scanned two entries at a time */
	};
};

/* Hash bits: line 1 from bits 0-23, line 2 from 24-47, fingerprint 48-63. */
PACER_INLINE __u16 pacer_tbl_fp(__u64 h)
{
	__u16 fp = (__u16)(h >> 48);

	return fp ? fp : 1; /* 0 marks a never-written entry */
}

PACER_INLINE void pacer_tbl_lines(__u64 h, __u32 lines_log2, __u32 idx[2])
{
	__u32 mask = (1u << lines_log2) - 1;

	idx[0] = (__u32)h & mask;
	idx[1] = (__u32)(h >> 24) & mask;
	if (idx[1] == idx[0])
		idx[1] ^= 1 & mask; /* two distinct lines whenever there are two */
}

/*
 * The layout for the engine: two 32-bit lanes a word, each a 16-bit tick
 * under a 16-bit fingerprint; slots 0..31, line 0's first.
 */
#define TC_PREFIX pacer_tbl_
#define TC_LINE struct pacer_tbl_line
#define TC_LANES 2
#define TC_TICK_BITS 16
#define TC_FP_BITS 16
#define TC_FUTURE PACER_TBL_FUTURE
#define TC_SWAP_TRIES 2
#define TC_MATCH_FIRST 1
#include "pacer_two_choice.h"

/* Word i's lane bits, gathered as `bits << i` (bits i and 32 + i), as 16 slot bits (8h + i). */
PACER_INLINE __u64 pacer_tbl_gather(__u64 acc)
{
	return (acc | acc >> 24) & 0xffff;
}

PACER_INLINE __u32 pacer_tbl_popcount_line(__u64 mask)
{
	__u32 x = (__u32)mask;

	x = x - ((x >> 1) & 0x5555);
	x = (x & 0x3333) + ((x >> 2) & 0x3333);
	x = (x + (x >> 4)) & 0x0f0f;
	return (x + (x >> 8)) & 0x1f;
}

/*
 * The entry behind a slot number: slot 8h + i of a line is lane h of its
 * word i (entry 2i + h), the order the scan produces its masks in.  Masks
 * keep the BPF verifier's bounds.
 */
PACER_INLINE __u32 pacer_tbl_entry_of(__u32 slot)
{
	/*
	 * The bits are disjoint; clang knows the result is below 16 and drops
	 * the mask, but Linux 6.1's verifier loses the bounds of an OR: keep
	 * the mask, applied after the compiler stops looking.
	 */
	__u32 e = (slot & 7) << 1 | (slot >> 3 & 1);

	PACER_OPAQUE(e);
	return e & (PACER_TBL_WAYS - 1);
}

PACER_INLINE __u32 *pacer_tbl_slot(struct pacer_tbl_line *const l[2], __u32 slot)
{
	struct pacer_tbl_line *line = slot < PACER_TBL_WAYS ? l[0] : l[1];

	return &line->e[pacer_tbl_entry_of(slot)];
}

/* The entry in a slot, read once: a whole entry is one aligned 32-bit word. */
PACER_INLINE __u32 pacer_tbl_get(struct pacer_tbl_line *const l[2], __u32 slot)
{
	return *(volatile __u32 *)pacer_tbl_slot(l, slot);
}

PACER_INLINE void pacer_tbl_set(struct pacer_tbl_line *const l[2], __u32 slot, __u32 e)
{
	*pacer_tbl_slot(l, slot) = e;
}

/* The 64-bit word holding a slot's entry, and the entry's offset in it. */
PACER_INLINE __u64 *pacer_tbl_locate(struct pacer_tbl_line *const l[2], __u32 slot,
				     __u32 *shift)
{
	struct pacer_tbl_line *line = slot < PACER_TBL_WAYS ? l[0] : l[1];
	__u32 entry = pacer_tbl_entry_of(slot);

	*shift = (entry & 1) * 32;
	return &line->w[(entry >> 1) & (PACER_TBL_WAYS / 2 - 1)];
}

/*
 * The sweep's pace: an entry expires at age sat <= PACER_RATE_TBL_MAX_SAT
 * and its line is swept again within PACER_TBL_SWEEP_TICKS, so it is gone
 * before an age of 2^16 - PACER_TBL_FUTURE, where it would read as fresh;
 * the sweep plans for half the room left, the other half is slack for the
 * timer's latency.
 */
#define PACER_TBL_SWEEP_TICKS ((0x10000 - PACER_TBL_FUTURE - PACER_RATE_TBL_MAX_SAT) / 2)

/* The recency table's plan: every line within PACER_TBL_SWEEP_TICKS. */
PACER_INLINE void pacer_tbl_sweep_plan(__u64 lines, __u32 tick_shift, struct pacer_tbl_sweep *p)
{
	pacer_sweep_plan(lines, PACER_TBL_SWEEP_TICKS, tick_shift, p);
}

#endif /* PACER_TABLE_H */
