/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dense table: the third backend (`load --backend dense`), shared
 * verbatim by the XDP program and userspace (simulation, tests, query).
 * The recency table's design (include/pacer_table.h) at 2.67 bytes an
 * entry, for ten million sources in about 30 MB.
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
 * 1 % the CLI asks (user/lib/ticks.c), so it takes --interval alone.
 *
 * Time.  Ages are (now - tick) mod 256.  An age from 256 -
 * PACER_DENSE_FUTURE up is an entry written by a CPU whose clock is
 * slightly ahead: fresh (age 0), as pacer_cell_age() reads a cell.  An
 * entry left alone for 256 ticks would look fresh again (a false drop,
 * never a false pass): the sweep (bpf/lib/sweep.h,
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
#include "pacer_table.h" /* branch-free helpers, enum pacer_tbl_event, the sweep's plan */

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

/* Lane constants: one bit, or one field, at each entry's offset (0, 21, 42). */
#define PACER_DENSE_ONES 0x0000040000200001ULL
#define PACER_DENSE_TICKS (0xffULL * PACER_DENSE_ONES)
#define PACER_DENSE_FPS (0x1fffULL * PACER_DENSE_ONES) /* after a shift by 8 */
#define PACER_DENSE_BIT13 ((1ULL << 13) * PACER_DENSE_ONES)
#define PACER_DENSE_GUARD ((1ULL << 20) * PACER_DENSE_ONES)

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

PACER_INLINE __u32 pacer_dense_entry(__u32 fp, __u64 tick)
{
	return (fp & PACER_DENSE_FP_MAX) << 8 | (__u8)tick;
}

/* Age of an entry in ticks (0 for a "future" entry, see the top). */
PACER_INLINE __u32 pacer_dense_age(__u32 e, __u64 tick)
{
	__u64 a = (__u8)((__u8)tick - (__u8)e);

	return (__u32)(a & (0 - pacer_lt(a, 256 - PACER_DENSE_FUTURE)));
}

/*
 * Slots number the 48 entries of a key's two lines, as the scan's masks
 * do: slot 24L + 8j + i is lane j (bits 21j..21j+20) of word i of line L.
 */
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
 * What the two lines say about a key: masks with bit `slot` set (line 0's
 * in bits 0..23, line 1's in 24..47).
 */
struct pacer_dense_scan {
	__u32 fp, thresh, sat; /* inputs: the key's fingerprint, the rate's ages (pacer_rate.h) */
	__u64 fresh_mask;      /* entries with the key's fingerprint younger than thresh */
	__u64 own_mask;        /* entries with the key's fingerprint from thresh up */
	__u64 held_mask;       /* entries with the key's fingerprint younger than sat */
	__u64 free_mask;       /* entries unwritten or from sat up */
};

/*
 * Three entries at once.  Each 21-bit lane's tick is subtracted from "now"
 * with bit 8 set, its fingerprint tested for zero below bit 13, and an age
 * compared by subtracting the threshold under bit 20: no subtraction ever
 * borrows across lanes.  A lane's answer is the bit at its offset.
 */

/* "Now" in every lane, taken PACER_DENSE_FUTURE ticks late, as pacer_dense_lane_ages subtracts from it. */
PACER_INLINE __u64 pacer_dense_lane_now(__u64 tick)
{
	return (((__u64)(__u8)(tick + PACER_DENSE_FUTURE)) | 0x100) * PACER_DENSE_ONES;
}

/*
 * The ages of word w's entries taken PACER_DENSE_FUTURE ticks late (a
 * "future" entry lands below FUTURE), each under its lane's bit 20; *fp gets
 * their fingerprints, a lane each.
 */
PACER_INLINE __u64 pacer_dense_lane_ages(__u64 w, __u64 now, __u64 *fp)
{
	*fp = (w >> 8) & PACER_DENSE_FPS;
	return ((now - (w & PACER_DENSE_TICKS)) & PACER_DENSE_TICKS) | PACER_DENSE_GUARD;
}

/* Lanes whose late age reaches th (th: an age + PACER_DENSE_FUTURE, below 2^20). */
PACER_INLINE __u64 pacer_dense_ge(__u64 a, __u64 th)
{
	return ((a - th * PACER_DENSE_ONES) >> 20) & PACER_DENSE_ONES;
}

/* Lanes whose 13-bit value is zero. */
PACER_INLINE __u64 pacer_dense_zero(__u64 f)
{
	return ((PACER_DENSE_BIT13 - f) >> 13) & PACER_DENSE_ONES;
}

/* Word i's lane bits, gathered as `bits << i` over a line, as 24 slot bits (8j + i). */
PACER_INLINE __u64 pacer_dense_gather(__u64 acc)
{
	return (acc & 0xff) | ((acc >> 13) & 0xff00) | ((acc >> 26) & 0xff0000);
}

PACER_INLINE void pacer_dense_scan_line(const struct pacer_dense_line *l, __u32 line, __u64 tick,
					struct pacer_dense_scan *s)
{
	__u64 now = pacer_dense_lane_now(tick);
	__u64 fp = (__u64)s->fp * PACER_DENSE_ONES, conform = 0, expired = 0, unwritten = 0;
	__u64 match = 0, th0 = s->thresh + PACER_DENSE_FUTURE, th1 = s->sat + PACER_DENSE_FUTURE;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 f, a = pacer_dense_lane_ages(l->w[i], now, &f);

		conform |= pacer_dense_ge(a, th0) << i;
		expired |= pacer_dense_ge(a, th1) << i;
		unwritten |= pacer_dense_zero(f) << i;
		match |= pacer_dense_zero(f ^ fp) << i;
	}
	unwritten = pacer_dense_gather(unwritten);
	conform = pacer_dense_gather(conform) | unwritten;
	expired = pacer_dense_gather(expired) | unwritten;
	match = pacer_dense_gather(match);
	line *= PACER_DENSE_WAYS;
	s->fresh_mask |= (~conform & match) << line;
	s->own_mask |= (conform & match) << line;
	s->held_mask |= (~expired & match) << line;
	s->free_mask |= expired << line;
}

/*
 * The entries of one line that are unwritten or free for twice sat, as slot
 * bits: only an admission into a free entry needs them.
 */
PACER_INLINE __u64 pacer_dense_idle_line(const struct pacer_dense_line *l, __u32 line, __u64 tick,
					 __u32 sat)
{
	__u64 now = pacer_dense_lane_now(tick), idle = 0, th2 = 2 * sat + PACER_DENSE_FUTURE;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 f, a = pacer_dense_lane_ages(l->w[i], now, &f);

		idle |= (pacer_dense_ge(a, th2) | pacer_dense_zero(f)) << i;
	}
	return pacer_dense_gather(idle) << (line * PACER_DENSE_WAYS);
}

PACER_INLINE void pacer_dense_scan_init(struct pacer_dense_scan *s, __u32 fp,
					const struct pacer_rate *rate)
{
	s->fp = fp;
	s->thresh = rate->thresh;
	s->sat = rate->sat;
	s->fresh_mask = s->own_mask = s->held_mask = s->free_mask = 0;
}

PACER_INLINE void pacer_dense_scan(struct pacer_dense_line *const l[2], __u32 fp, __u64 tick,
				   const struct pacer_rate *rate, struct pacer_dense_scan *s)
{
	pacer_dense_scan_init(s, fp, rate);
	pacer_dense_scan_line(l[0], 0, tick, s);
	pacer_dense_scan_line(l[1], 1, tick, s);
}

/* The entries of one line with fingerprint fp younger than sat (credit held), as slot bits. */
PACER_INLINE __u64 pacer_dense_held_line(const struct pacer_dense_line *l, __u32 line, __u64 tick,
					 __u32 fp, __u32 sat)
{
	__u64 now = pacer_dense_lane_now(tick), fpl = (__u64)fp * PACER_DENSE_ONES, held = 0;
	__u64 th1 = sat + PACER_DENSE_FUTURE;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 f, a = pacer_dense_lane_ages(l->w[i], now, &f);
		__u64 young = pacer_dense_ge(a, th1) ^ PACER_DENSE_ONES;

		held |= (young & pacer_dense_zero(f ^ fpl)) << i;
	}
	return pacer_dense_gather(held) << (line * PACER_DENSE_WAYS);
}

/* Index of the lowest set bit of a non-zero mask, by halving (no branches). */
PACER_INLINE __u32 pacer_dense_first(__u64 mask)
{
	__u64 x = mask, n = 0, z, w;

	PACER_UNROLL
	for (w = 32; w; w >>= 1) {
		z = (1 - pacer_nz(x & ((1ULL << w) - 1))) * w; /* no set bit in the low w: skip them */
		n += z;
		x >>= z;
	}
	return (__u32)n & 63;
}

PACER_INLINE __u32 pacer_dense_popcount24(__u64 x)
{
	x = x - ((x >> 1) & 0x555555);
	x = (x & 0x333333) + ((x >> 2) & 0x333333);
	x = (x + (x >> 4)) & 0x0f0f0f;
	return (__u32)((x + (x >> 8) + (x >> 16)) & 0x3f);
}

/*
 * (a << 6 | slot) of the oldest written entry of one line, a its age taken
 * PACER_DENSE_FUTURE ticks late as in the scan (a "future" entry is
 * youngest); unwritten entries count as a = 0.
 */
PACER_INLINE __u64 pacer_dense_oldest_line(const struct pacer_dense_line *l, __u32 line,
					   __u64 tick)
{
	__u64 now = pacer_dense_lane_now(tick), best = 0;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 w = l->w[i], f = (w >> 8) & PACER_DENSE_FPS;
		__u64 written = ((f + PACER_DENSE_FPS) >> 13) & PACER_DENSE_ONES; /* f != 0 per lane */
		__u64 a = (now - (w & PACER_DENSE_TICKS)) & PACER_DENSE_TICKS & (written * 0xff);
		__u64 slot = line * PACER_DENSE_WAYS + i; /* lane j of word i is slot 8j + i */

		best = pacer_max(best, (a & 0xff) << 6 | slot);
		best = pacer_max(best, ((a >> 21) & 0xff) << 6 | (slot + 8));
		best = pacer_max(best, (a >> 42) << 6 | (slot + 16));
	}
	return best;
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

/* Written entries of one line aged sat or more (not "future"), as bits 0..23. */
PACER_INLINE __u64 pacer_dense_expired_line(const struct pacer_dense_line *l, __u64 tick,
					    __u32 sat)
{
	__u64 now = pacer_dense_lane_now(tick), expired = 0, th1 = sat + PACER_DENSE_FUTURE;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 f, a = pacer_dense_lane_ages(l->w[i], now, &f);

		expired |= (pacer_dense_ge(a, th1) & ~pacer_dense_zero(f)) << i;
	}
	return pacer_dense_gather(expired);
}

/* One entry, as pacer_dense_expired_line judges it. */
PACER_INLINE int pacer_dense_expired(__u32 e, __u64 tick, __u32 sat)
{
	return (e >> 8) && pacer_dense_age(e, tick) >= sat;
}

/* Word w (three entries) with its expired entries cleared: what the sweep swaps in for w. */
PACER_INLINE __u64 pacer_dense_swept_word(__u64 w, __u64 tick, __u32 sat)
{
	__u64 f, a = pacer_dense_lane_ages(w, pacer_dense_lane_now(tick), &f);
	__u64 gone = pacer_dense_ge(a, sat + PACER_DENSE_FUTURE) & ~pacer_dense_zero(f);

	return w & ~(gone * PACER_DENSE_ENTRY_MASK);
}

/* Entries (three a word) written in before and empty in after: what a sweep's swap cleared. */
PACER_INLINE __u32 pacer_dense_word_cleared(__u64 before, __u64 after)
{
	__u32 k, n = 0;

	for (k = 0; k < PACER_DENSE_LANES; k++)
		n += ((before >> (PACER_DENSE_ENTRY_BITS * k)) & PACER_DENSE_ENTRY_MASK) &&
		     !((after >> (PACER_DENSE_ENTRY_BITS * k)) & PACER_DENSE_ENTRY_MASK);
	return n;
}

/*
 * (256 - a) << 6 | slot of the youngest entry of one line among the slots
 * of mask (both lines' bits; this line's from bit 24 * line), a its age
 * taken PACER_DENSE_FUTURE ticks late (a "future" entry is youngest); 0 if
 * the mask has none in this line.  Lanes as the scan, no branch per entry.
 */
PACER_INLINE __u64 pacer_dense_youngest_line(const struct pacer_dense_line *l, __u32 line,
					     __u64 mask, __u64 tick)
{
	__u64 now = pacer_dense_lane_now(tick), best = 0, m = (mask >> (line * PACER_DENSE_WAYS)) & 0xffffff;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_DENSE_WORDS; i++) {
		__u64 a = (now - (l->w[i] & PACER_DENSE_TICKS)) & PACER_DENSE_TICKS;
		__u64 slot = line * PACER_DENSE_WAYS + i;

		best = pacer_max(best, ((256 - (a & 0xff)) << 6 | slot) * ((m >> i) & 1));
		best = pacer_max(best, ((256 - ((a >> 21) & 0xff)) << 6 | (slot + 8)) * ((m >> (i + 8)) & 1));
		best = pacer_max(best, ((256 - (a >> 42)) << 6 | (slot + 16)) * ((m >> (i + 16)) & 1));
	}
	return best;
}

#ifdef __bpf__
/*
 * In BPF, the eviction search, the idle entries and the youngest of a
 * fingerprint's entries are global functions, as the table's
 * (pacer_table.h): checked once, off the common path (evictions,
 * admissions into a free entry, bursts and fingerprint collisions).
 */
__attribute__((noinline)) __u64 pacer_dense_youngest_line_global(const struct pacer_dense_line *l,
								 __u32 line, __u64 mask, __u64 tick)
{
	return l ? pacer_dense_youngest_line(l, line & 1, mask, tick) : 0;
}

__attribute__((noinline)) __u64 pacer_dense_oldest_line_global(const struct pacer_dense_line *l,
							       __u32 line, __u64 tick)
{
	return l ? pacer_dense_oldest_line(l, line & 1, tick) : 0;
}

__attribute__((noinline)) __u64 pacer_dense_idle_line_global(const struct pacer_dense_line *l,
							     __u32 line, __u64 tick, __u32 sat)
{
	return l ? pacer_dense_idle_line(l, line & 1, tick, sat) : 0;
}
#define PACER_DENSE_OLDEST_LINE pacer_dense_oldest_line_global
#define PACER_DENSE_IDLE_LINE pacer_dense_idle_line_global
#define PACER_DENSE_YOUNGEST_LINE pacer_dense_youngest_line_global
#else
#define PACER_DENSE_OLDEST_LINE pacer_dense_oldest_line
#define PACER_DENSE_IDLE_LINE pacer_dense_idle_line
#define PACER_DENSE_YOUNGEST_LINE pacer_dense_youngest_line
#endif

PACER_INLINE __u32 pacer_dense_oldest(struct pacer_dense_line *const l[2], __u64 tick)
{
	return (__u32)pacer_max(PACER_DENSE_OLDEST_LINE(l[0], 0, tick),
				PACER_DENSE_OLDEST_LINE(l[1], 1, tick)) & 63;
}

/* The youngest entry among the slots of a non-zero mask; one bit (the usual case) needs no scan. */
PACER_INLINE __u32 pacer_dense_youngest(struct pacer_dense_line *const l[2], __u64 mask,
					__u64 tick)
{
	if (!(mask & (mask - 1)))
		return pacer_dense_first(mask);
	return (__u32)pacer_max(PACER_DENSE_YOUNGEST_LINE(l[0], 0, mask, tick),
				PACER_DENSE_YOUNGEST_LINE(l[1], 1, mask, tick)) & 63;
}

/*
 * The slot an admission writes, or PACER_DENSE_NONE (one-sided mode with
 * both lines full: drop), as pacer_tbl_pick(): the key's own entry, else
 * an idle or free entry of the line with more free entries, else the
 * oldest (evict-oldest, *evicted set).
 */
PACER_INLINE __u32 pacer_dense_pick(struct pacer_dense_line *const l[2],
				    const struct pacer_dense_scan *s, __u64 tick, __u32 burst,
				    __u32 on_full, int *evicted)
{
	__u32 f0 = pacer_dense_popcount24(s->free_mask & 0xffffff);
	__u32 f1 = pacer_dense_popcount24(s->free_mask >> PACER_DENSE_WAYS);
	__u64 line_mask = f1 > f0 ? 0xffffffULL << PACER_DENSE_WAYS : 0xffffffULL, idle;

	*evicted = 0;
	if (s->own_mask)
		return burst ? pacer_dense_youngest(l, s->own_mask, tick)
			     : pacer_dense_first(s->own_mask);
	if (s->free_mask) {
		idle = f1 > f0 ? PACER_DENSE_IDLE_LINE(l[1], 1, tick, s->sat)
			       : PACER_DENSE_IDLE_LINE(l[0], 0, tick, s->sat);
		return pacer_dense_first(idle ? idle : s->free_mask & line_mask);
	}
	if (on_full != PACER_TBL_FULL_EVICT)
		return PACER_DENSE_NONE;
	*evicted = 1;
	return pacer_dense_oldest(l, tick);
}

/* The key's age: its youngest entry's (a fresh one if any), else PACER_AGE_STALE. */
PACER_INLINE __u32 pacer_dense_key_age(struct pacer_dense_line *const l[2],
				       const struct pacer_dense_scan *s, __u64 tick)
{
	__u64 mask = s->fresh_mask ? s->fresh_mask : s->own_mask;

	return mask ? pacer_dense_age(pacer_dense_get(l, pacer_dense_youngest(l, mask, tick)), tick)
		    : PACER_AGE_STALE;
}

/*
 * Shared placement, as the table's (pacer_table.h): an entry is claimed by
 * a compare-and-swap of its whole word from the value the choice was made
 * on; the word's two other entries may move meanwhile (other keys), so a
 * swap that failed only because a neighbour moved is retried, twice at
 * most.  After the swap both lines are read again, and a second entry of
 * the key holding credit means another CPU admitted it meanwhile: drop.
 */
#define PACER_DENSE_SWAP_TRIES 3

/* Swap the entry in slot from old to new; 0 on success. */
PACER_INLINE int pacer_dense_entry_swap(struct pacer_dense_line *const l[2], __u32 slot, __u32 old,
					__u32 new)
{
	__u64 *w = pacer_dense_word(l, slot), cur, want;
	__u32 shift = pacer_dense_shift_of(pacer_dense_way_of(slot));
	int i;

	for (i = 0; i < PACER_DENSE_SWAP_TRIES; i++) {
		cur = *(volatile __u64 *)w;
		if (((cur >> shift) & PACER_DENSE_ENTRY_MASK) != old)
			return -1;
		want = pacer_dense_word_with(cur, shift, new);
		if (__sync_val_compare_and_swap(w, cur, want) == cur)
			return 0;
	}
	return -1;
}

PACER_INLINE int pacer_dense_claim_shared(struct pacer_dense_line *const l[2], __u32 slot,
					  __u32 fp, __u64 tick, const struct pacer_rate *rate,
					  __u32 nage, int evict)
{
	__u32 old = pacer_dense_get(l, slot), a = pacer_dense_age(old, tick);
	__u64 held;

	/* Another key's entry (or none) counts as a full burst once it is free. */
	if ((old >> 8) != fp && (a >= rate->sat || !(old >> 8)))
		a = rate->sat;
	if (!evict && (a < rate->thresh || pacer_rate_next_age(a, rate) != nage))
		return -1; /* taken since we looked */
	if (pacer_dense_entry_swap(l, slot, old, pacer_dense_entry(fp, tick - nage)))
		return -1;
	/* Another entry of the key holding credit: admitted elsewhere meanwhile. */
	held = pacer_dense_held_line(l[0], 0, tick, fp, rate->sat) |
	       pacer_dense_held_line(l[1], 1, tick, fp, rate->sat);
	return held & ~(1ULL << (slot & 63)) ? -1 : 0;
}

/* quiet: a fresh entry is refreshed to now (shared: by swap; a failed one means another CPU wrote it). */
PACER_INLINE void pacer_dense_refresh(struct pacer_dense_line *const l[2], __u32 slot, __u32 fp,
				      __u64 tick, int shared)
{
	__u32 old = pacer_dense_get(l, slot);

	if ((old >> 8) != fp || pacer_dense_age(old, tick) == 0)
		return;
	if (shared)
		pacer_dense_entry_swap(l, slot, old, pacer_dense_entry(fp, tick));
	else
		pacer_dense_set(l, slot, pacer_dense_entry(fp, tick));
}

/*
 * Pacing's judgement of one packet, before the global budget, as
 * pacer_tbl_judge(): 1 to drop, 0 if pacing admits it with *slot the entry
 * pacer_dense_commit() is to write.  Writes only under quiet, for a dropped
 * packet.  *age (if want_age) and *event as the table's.
 */
PACER_INLINE int pacer_dense_judge(struct pacer_dense_line *const l[2], __u32 fp, __u64 tick,
				   const struct pacer_rate *rate, __u32 policy, __u32 on_full,
				   __u32 placement, int want_age, __u32 *age, __u32 *event,
				   __u32 *slot)
{
	struct pacer_dense_scan s;
	int evicted;

	/* A fresh entry in the first line drops the packet whatever the second holds. */
	pacer_dense_scan_init(&s, fp, rate);
	pacer_dense_scan_line(l[0], 0, tick, &s);
	if (!s.fresh_mask || want_age)
		pacer_dense_scan_line(l[1], 1, tick, &s);
	*age = want_age ? pacer_dense_key_age(l, &s, tick) : PACER_AGE_STALE;
	*event = PACER_TBL_EV_NONE;
	if (s.fresh_mask) {
		if (policy == PACER_POLICY_QUIET)
			pacer_dense_refresh(l, pacer_dense_first(s.fresh_mask), fp, tick,
					    placement == PACER_PLACEMENT_SHARED);
		return 1;
	}
	*slot = pacer_dense_pick(l, &s, tick, rate->burst, on_full, &evicted);
	if (*slot == PACER_DENSE_NONE) {
		*event = PACER_TBL_EV_FULL;
		return 1;
	}
	if (evicted)
		*event = PACER_TBL_EV_EVICT;
	return 0;
}

/*
 * Write the admission pacer_dense_judge() allowed into its slot at tick, as
 * pacer_tbl_commit(): 0 if admitted, 1 to drop (shared: lost to another
 * CPU, *event PACER_TBL_EV_RACE).
 */
PACER_INLINE int pacer_dense_commit(struct pacer_dense_line *const l[2], __u32 fp, __u64 tick,
				    const struct pacer_rate *rate, __u32 placement, __u32 slot,
				    __u32 *event)
{
	__u32 e = pacer_dense_get(l, slot), a = pacer_dense_age(e, tick), nage;

	/* An entry of the key that still holds credit spends it; any other starts a full burst. */
	nage = pacer_rate_next_age((e >> 8) == fp && a < rate->sat ? a : rate->sat, rate);
	if (placement != PACER_PLACEMENT_SHARED) {
		pacer_dense_set(l, slot, pacer_dense_entry(fp, tick - nage));
		return 0;
	}
	if (pacer_dense_claim_shared(l, slot, fp, tick, rate, nage,
				     *event == PACER_TBL_EV_EVICT) < 0) {
		*event = PACER_TBL_EV_RACE;
		return 1;
	}
	return 0;
}

/* One packet with no stage after pacing: judge, then commit at once. */
PACER_INLINE int pacer_dense_verdict(struct pacer_dense_line *const l[2], __u32 fp, __u64 tick,
				     const struct pacer_rate *rate, __u32 policy, __u32 on_full,
				     __u32 placement, int want_age, __u32 *age, __u32 *event)
{
	__u32 slot = 0;

	if (pacer_dense_judge(l, fp, tick, rate, policy, on_full, placement, want_age, age, event,
			      &slot))
		return 1;
	return pacer_dense_commit(l, fp, tick, rate, placement, slot, event);
}

#endif /* PACER_DENSE_H */
