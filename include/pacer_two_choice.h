/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The two-choice engine: probing, judging, picking, claiming, evicting and
 * sweeping for both tables, written once over a slot layout, shared
 * verbatim by the XDP program and userspace.  The recency table
 * (pacer_table.h: 16 entries of 32 bits a line) and the dense table
 * (pacer_dense.h: 24 entries of 21 bits a line) are each this engine
 * instantiated over their layout; the design (two candidate lines,
 * fingerprints, entries that expire instead of moving, one-sided or
 * evict-oldest when full, shared placement's claims, the sweep) is
 * described at the top of pacer_table.h.
 *
 * Instantiation.  BPF has no cheap indirect call, and each layout's masks,
 * lane constants and entry widths must fold into its code, so the engine
 * is a template resolved at compile time: a layout header defines the TC_*
 * parameters below and its layout primitives, includes this file, and gets
 * every engine function under its own prefix (TC(judge) is pacer_tbl_judge
 * after `#define TC_PREFIX pacer_tbl_`).  To find the body of
 * pacer_dense_pick, look here for TC(pick).
 *
 * A layout is a line of TC_WORDS (8) aligned 64-bit words, each holding
 * TC_LANES entries in lanes TC_LANE_BITS apart; an entry is a tick (mod
 * 2^TC_TICK_BITS) under a TC_FP_BITS fingerprint (0: never written).
 * Slot 8j + i of a line is lane j of its word i, so a line's answer for one
 * word, gathered as `bits << i` over the words, is its slot mask after
 * TC(gather).  The lane arithmetic: every lane value stays below its
 * lane's top bit (the guard), so subtractions never borrow across lanes.
 *
 * The layout defines (before including this file, which #undefs them):
 *   TC_PREFIX           function prefix (pacer_tbl_, pacer_dense_)
 *   TC_LINE             its line type, with `__u64 w[8]`
 *   TC_LANES            entries a word (2 or 3), TC_WAYS = 8 * TC_LANES a line
 *   TC_TICK_BITS, TC_FP_BITS  an entry's tick under its fingerprint; a lane
 *                       is as wide as an entry
 *   TC_FUTURE           ages from 2^TC_TICK_BITS - this up are "future": fresh
 *   TC_SWAP_TRIES       swaps of a word tried while only a neighbour moved
 *   TC_MATCH_FIRST      1: judge a line by its fingerprint matches first
 *                       (one full scan only on a collision), the free and
 *                       idle entries in a pass of their own, the second
 *                       line touched early, and a claim's re-check by
 *                       matches first; 0: one full scan a line, idle
 *                       entries of the chosen line alone.  Each table
 *                       keeps the judgement it was tuned with.
 * and (after including it: declared below) the functions TC(gather)(acc)
 * (a line's word bits to slot bits), TC(popcount_line)(mask) (set bits of
 * one line's slots), TC(get)(l, slot) (the entry, read once), TC(set)(l,
 * slot, e) (a plain store) and TC(locate)(l, slot, &shift) (the entry's
 * word and bit offset).
 */
#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"
#include "pacer_sketch.h" /* PACER_AGE_STALE, the age reported for "no entry" */
#include "pacer_rate.h"

#ifndef PACER_TWO_CHOICE_COMMON
#define PACER_TWO_CHOICE_COMMON
/*
 * Branch-free helpers on small unsigned values (< 2^32): BPF has no
 * conditional set, and a branch per entry would make the verifier walk
 * 2^32 paths through a scan.
 */
#ifdef __bpf__
/* Hides the value from clang, which would turn these idioms back into branches. */
#define PACER_OPAQUE(x) asm volatile("" : "+r"(x))
#else
#define PACER_OPAQUE(x) ((void)0)
#endif

PACER_INLINE __u64 pacer_lt(__u64 a, __u64 b)
{
	__u64 d = a - b;

	PACER_OPAQUE(d);
	return d >> 63;
}

PACER_INLINE __u64 pacer_nz(__u64 x)
{
	__u64 n = 0 - x;

	PACER_OPAQUE(n);
	return n >> 63;
}

PACER_INLINE __u64 pacer_max(__u64 a, __u64 b) { return a ^ ((a ^ b) & (0 - pacer_lt(a, b))); }

/* Outcome of one packet, for counters. */
enum pacer_tbl_event {
	PACER_TBL_EV_NONE = 0,
	PACER_TBL_EV_FULL,  /* no slot: dropped (one-sided) */
	PACER_TBL_EV_EVICT, /* a fresh entry was replaced (opposite) */
	PACER_TBL_EV_RACE,  /* shared: lost the entry to another CPU: dropped */
};

/*
 * The sweep (bpf/lib/sweep.h): a BPF timer walks every copy's lines in
 * chunks and clears each written entry it finds expired, so no expired
 * entry lives long enough for its tick to wrap and alias as fresh.  Each
 * table bounds the pace (PACER_TBL_SWEEP_TICKS, PACER_DENSE_SWEEP_TICKS);
 * the rounds are planned here.
 */
#define PACER_TBL_SWEEP_CHUNK 1024          /* lines a timer round sweeps, at most, when time allows */
#define PACER_TBL_SWEEP_MIN_NS 1000000ULL    /* rounds no closer than a jiffy-ish 1 ms */
#define PACER_TBL_SWEEP_MAX_NS 1000000000ULL /* nor further apart than 1 s */
#define PACER_TBL_SWEEP_MAX_CHUNK (1u << 23) /* bpf_loop's limit */

struct pacer_tbl_sweep {
	__u64 period_ns; /* between two rounds */
	__u32 chunk;     /* lines per round */
};

/*
 * Rounds of at most PACER_TBL_SWEEP_CHUNK lines, as far apart as visiting
 * every line within span_ticks allows within [MIN_NS, MAX_NS]; more lines
 * per round where 1 ms apart is not often enough.  lines: all copies'
 * lines together.
 */
PACER_INLINE void pacer_sweep_plan(__u64 lines, __u32 span_ticks, __u32 tick_shift,
				   struct pacer_tbl_sweep *p)
{
	__u64 span = (__u64)span_ticks << tick_shift, rounds, period, chunk;

	if (!lines)
		lines = 1;
	rounds = (lines + PACER_TBL_SWEEP_CHUNK - 1) / PACER_TBL_SWEEP_CHUNK;
	period = span / rounds;
	if (period < PACER_TBL_SWEEP_MIN_NS)
		period = PACER_TBL_SWEEP_MIN_NS;
	if (period > PACER_TBL_SWEEP_MAX_NS)
		period = PACER_TBL_SWEEP_MAX_NS;
	rounds = span / period;
	if (!rounds)
		rounds = 1;
	chunk = (lines + rounds - 1) / rounds;
	p->period_ns = period;
	p->chunk = chunk > PACER_TBL_SWEEP_MAX_CHUNK ? PACER_TBL_SWEEP_MAX_CHUNK : (__u32)chunk;
}

#define TC_CAT2(a, b) a##b
#define TC_CAT(a, b) TC_CAT2(a, b)
#define TC(name) TC_CAT(TC_PREFIX, name)
#endif /* PACER_TWO_CHOICE_COMMON */

#define TC_WORDS 8 /* 64-bit words a line: one 64-byte cache line */
#define TC_WAYS (TC_WORDS * TC_LANES)
#define TC_LANE_BITS (TC_TICK_BITS + TC_FP_BITS)
/* One bit at each lane's offset. */
#define TC_ONES (1ULL | 1ULL << TC_LANE_BITS | (1ULL << (2 * TC_LANE_BITS % 64)) * (TC_LANES > 2))
/* A slot mask covers both lines: TC_MASK_BITS wide, slots TC_SLOT_BITS bits. */
#if 2 * TC_WORDS * TC_LANES <= 32
#define TC_MASK __u32
#define TC_MASK_BITS 32
#define TC_SLOT_BITS 5
#else
#define TC_MASK __u64
#define TC_MASK_BITS 64
#define TC_SLOT_BITS 6
#endif
#define TC_NONE 0xffu /* pick's "no slot" */
#define TC_FP __u32
#define TC_TICK_MASK ((1ULL << TC_TICK_BITS) - 1)
#define TC_ENTRY_MASK ((1ULL << (TC_TICK_BITS + TC_FP_BITS)) - 1)
#define TC_TICKS (TC_TICK_MASK * TC_ONES)                     /* every lane's tick */
#define TC_FPS (((1ULL << TC_FP_BITS) - 1) * TC_ONES)         /* every lane's fingerprint, shifted down */
#define TC_FP_CARRY ((1ULL << TC_FP_BITS) * TC_ONES)           /* the bit above each fingerprint */
#define TC_GUARD ((1ULL << (TC_LANE_BITS - 1)) * TC_ONES)      /* each lane's top bit */
#define TC_LINE_SLOTS ((1ULL << TC_WAYS) - 1)                  /* one line's slot bits */
#define TC_WORD_SLOTS (((1ULL << (8 * TC_LANES)) - 1) / 0xff)  /* word 0's slots: 8j */

/* The layout's own primitives (see the top). */
PACER_INLINE __u64 TC(gather)(__u64 acc);
PACER_INLINE __u32 TC(popcount_line)(__u64 mask);
PACER_INLINE __u32 TC(get)(TC_LINE *const l[2], __u32 slot);
PACER_INLINE void TC(set)(TC_LINE *const l[2], __u32 slot, __u32 e);
PACER_INLINE __u64 *TC(locate)(TC_LINE *const l[2], __u32 slot, __u32 *shift);

/* x in every lane. */
PACER_INLINE __u64 TC(lanes)(__u64 x)
{
	return x * TC_ONES;
}

/* "Now" in every lane, taken TC_FUTURE ticks late, with the bit above the tick set. */
PACER_INLINE __u64 TC(lane_now)(__u64 tick)
{
	return TC(lanes)(((tick + TC_FUTURE) & TC_TICK_MASK) | (TC_TICK_MASK + 1));
}

/*
 * The ages of word w's entries taken TC_FUTURE ticks late (a "future" entry
 * lands below TC_FUTURE), each under its lane's guard bit, so that
 * subtracting a threshold leaves the guard set exactly when the age reaches
 * it; *fp gets their fingerprints, a lane each.
 */
PACER_INLINE __u64 TC(lane_ages)(__u64 w, __u64 now, __u64 *fp)
{
	*fp = (w >> TC_TICK_BITS) & TC_FPS;
	return ((now - (w & TC_TICKS)) & TC_TICKS) | TC_GUARD;
}

/* Lanes whose late age reaches th (th: TC(lanes) of an age + TC_FUTURE), as bit 0 of a lane. */
PACER_INLINE __u64 TC(ge)(__u64 a, __u64 th)
{
	return ((a - th) >> (TC_LANE_BITS - 1)) & TC_ONES;
}

/* Lanes whose fingerprint-wide value is zero. */
PACER_INLINE __u64 TC(zero)(__u64 f)
{
	return ((TC_FP_CARRY - f) >> TC_FP_BITS) & TC_ONES;
}

/* The OR of a word's lanes, as one entry. */
PACER_INLINE __u32 TC(fold)(__u64 x)
{
	__u64 r = 0;
	__u32 j;

	PACER_UNROLL
	for (j = 0; j < TC_LANES; j++)
		r |= x >> (j * TC_LANE_BITS);
	return (__u32)(r & TC_ENTRY_MASK);
}

PACER_INLINE __u32 TC(entry)(TC_FP fp, __u64 tick)
{
	return (__u32)((fp & ((1ULL << TC_FP_BITS) - 1)) << TC_TICK_BITS | (tick & TC_TICK_MASK));
}

/* Age of an entry in ticks (0 for a "future" entry). */
PACER_INLINE __u32 TC(age)(__u32 e, __u64 tick)
{
	__u64 a = (tick - e) & TC_TICK_MASK;

	return (__u32)(a & (0 - pacer_lt(a, TC_TICK_MASK + 1 - TC_FUTURE)));
}

PACER_INLINE int TC(fresh)(__u32 e, __u64 tick, __u32 thresh)
{
	return (e >> TC_TICK_BITS) && TC(age)(e, tick) < thresh;
}

/* Index of the lowest set bit of a non-zero mask, by halving (no branches). */
PACER_INLINE __u32 TC(first)(TC_MASK mask)
{
	__u64 x = mask, n = 0, z, w;

	PACER_UNROLL
	for (w = TC_MASK_BITS / 2; w; w >>= 1) {
		z = (1 - pacer_nz(x & ((1ULL << w) - 1))) * w; /* no set bit in the low w: skip them */
		n += z;
		x >>= z;
	}
	return (__u32)n & (TC_MASK_BITS - 1);
}

/*
 * What the two lines say about a key: masks with bit `slot` set, line 0's
 * slots first.
 */
struct TC(scan) {
	__u32 fp, thresh, sat; /* inputs: the key's fingerprint, the rate's ages (pacer_rate.h) */
	TC_MASK fresh_mask;    /* entries with the key's fingerprint younger than thresh */
	TC_MASK own_mask;      /* entries with the key's fingerprint from thresh up */
	TC_MASK held_mask;     /* entries with the key's fingerprint younger than sat */
	TC_MASK free_mask;     /* entries unwritten or from sat up */
	TC_MASK idle_mask;     /* TC_MATCH_FIRST: entries unwritten or from 2 * sat up (pacer_rate.h) */
};

PACER_INLINE void TC(scan_init)(struct TC(scan) *s, TC_FP fp, const struct pacer_rate *rate)
{
	s->fp = fp;
	s->thresh = rate->thresh;
	s->sat = rate->sat;
	s->fresh_mask = s->own_mask = s->held_mask = s->free_mask = s->idle_mask = 0;
}

/* One line's full scan into s: fresh, own, held and free entries. */
PACER_INLINE void TC(scan_line)(const TC_LINE *l, __u32 line, __u64 tick, struct TC(scan) *s)
{
	/*
	 * Ages are taken TC_FUTURE ticks late, so a "future" entry lands below
	 * TC_FUTURE and one comparison tells fresh (future, or under the
	 * threshold) from expired.
	 */
	__u64 now = TC(lane_now)(tick), fp = TC(lanes)(s->fp), conform = 0, expired = 0;
	__u64 unwritten = 0, match = 0;
	__u64 th0 = TC(lanes)(s->thresh + TC_FUTURE), th1 = TC(lanes)(s->sat + TC_FUTURE);
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 f, a = TC(lane_ages)(l->w[i], now, &f);

		conform |= TC(ge)(a, th0) << i;
		expired |= TC(ge)(a, th1) << i;
		unwritten |= TC(zero)(f) << i;
		match |= TC(zero)(f ^ fp) << i;
	}
	unwritten = TC(gather)(unwritten);
	conform = TC(gather)(conform) | unwritten;
	expired = TC(gather)(expired) | unwritten;
	match = TC(gather)(match);
	line *= TC_WAYS;
	s->fresh_mask |= (TC_MASK)(~conform & match) << line;
	s->own_mask |= (TC_MASK)(conform & match) << line;
	s->held_mask |= (TC_MASK)(~expired & match) << line;
	s->free_mask |= (TC_MASK)expired << line;
}

/* The entries of one line with fingerprint fp younger than sat (credit held), as slot bits. */
PACER_INLINE TC_MASK TC(held_line)(const TC_LINE *l, __u32 line, __u64 tick, TC_FP fp, __u32 sat)
{
	__u64 now = TC(lane_now)(tick), fpl = TC(lanes)(fp), held = 0;
	__u64 th1 = TC(lanes)(sat + TC_FUTURE);
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 f, a = TC(lane_ages)(l->w[i], now, &f);
		__u64 young = TC(ge)(a, th1) ^ TC_ONES;

		held |= (young & TC(zero)(f ^ fpl)) << i;
	}
	return (TC_MASK)TC(gather)(held) << (line * TC_WAYS);
}

/*
 * The entries of one line with fingerprint fp, as slot bits, and in *sel
 * the OR of them: the entry itself when there is one, the usual case.
 * Cheaper than a scan: a single match is then judged by its age alone.
 */
PACER_INLINE TC_MASK TC(match_line)(const TC_LINE *l, __u32 line, TC_FP fp, __u32 *sel)
{
	__u64 fpl = TC(lanes)(fp), match = 0, or = 0;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 w = l->w[i], z = TC(zero)(((w >> TC_TICK_BITS) & TC_FPS) ^ fpl);

		match |= z << i;
		or |= w & (z * TC_ENTRY_MASK); /* the matching lanes, whole */
	}
	*sel = TC(fold)(or);
	return (TC_MASK)TC(gather)(match) << (line * TC_WAYS);
}

/*
 * One line's part of the scan's fresh, own and held masks (and, without
 * TC_MATCH_FIRST, its free mask).  By matches first, a single entry with
 * the key's fingerprint is judged by its age alone; several (fingerprint
 * collisions) take the full scan of the line, its free entries left to
 * TC(free_line).
 */
PACER_INLINE void TC(judge_line)(const TC_LINE *l, __u32 line, __u64 tick, struct TC(scan) *s)
{
#if TC_MATCH_FIRST
	__u32 sel, a;
	TC_MASK m = TC(match_line)(l, line, (TC_FP)s->fp, &sel), free = s->free_mask, fresh, held;

	if (m & (m - 1)) {
		TC(scan_line)(l, line, tick, s);
		s->free_mask = free;
		return;
	}
	a = TC(age)(sel, tick);
	fresh = m & (0 - (TC_MASK)pacer_lt(a, s->thresh));
	held = m & (0 - (TC_MASK)pacer_lt(a, s->sat));
	s->fresh_mask |= fresh;
	s->own_mask |= m ^ fresh;
	s->held_mask |= held;
#else
	TC(scan_line)(l, line, tick, s);
#endif
}

/*
 * One line's free entries (unwritten or from sat up) into s->free_mask and
 * idle ones (unwritten or from twice sat up, pacer_rate.h) into
 * s->idle_mask: what an admission into a free entry needs (TC_MATCH_FIRST).
 */
PACER_INLINE void TC(free_line)(const TC_LINE *l, __u32 line, __u64 tick, struct TC(scan) *s)
{
	__u64 now = TC(lane_now)(tick), free = 0, idle = 0;
	__u64 th1 = TC(lanes)(s->sat + TC_FUTURE), th2 = TC(lanes)(2 * s->sat + TC_FUTURE);
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 f, a = TC(lane_ages)(l->w[i], now, &f), u = TC(zero)(f);

		free |= (TC(ge)(a, th1) | u) << i;
		idle |= (TC(ge)(a, th2) | u) << i;
	}
	line *= TC_WAYS;
	s->free_mask |= (TC_MASK)TC(gather)(free) << line;
	s->idle_mask |= (TC_MASK)TC(gather)(idle) << line;
}

/* The entries of one line that are unwritten or free for twice sat, as slot bits. */
PACER_INLINE TC_MASK TC(idle_line)(const TC_LINE *l, __u32 line, __u64 tick, __u32 sat)
{
	__u64 now = TC(lane_now)(tick), idle = 0, th2 = TC(lanes)(2 * sat + TC_FUTURE);
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 f, a = TC(lane_ages)(l->w[i], now, &f);

		idle |= (TC(ge)(a, th2) | TC(zero)(f)) << i;
	}
	return (TC_MASK)TC(gather)(idle) << (line * TC_WAYS);
}

/* The whole scan of both lines, every mask: query and the tests' reference. */
PACER_INLINE void TC(scan)(TC_LINE *const l[2], TC_FP fp, __u64 tick,
			   const struct pacer_rate *rate, struct TC(scan) *s)
{
	TC(scan_init)(s, fp, rate);
	TC(scan_line)(l[0], 0, tick, s);
	TC(scan_line)(l[1], 1, tick, s);
	TC(free_line)(l[0], 0, tick, s);
	TC(free_line)(l[1], 1, tick, s);
}

/*
 * (a << TC_SLOT_BITS | slot) of the oldest written entry of one line, a its
 * age taken TC_FUTURE ticks late as in the scan (a "future" entry is
 * youngest); unwritten entries count as a = 0.  Lanes as the scan: only
 * the lane maxima are scalar.
 */
PACER_INLINE __u64 TC(oldest_line)(const TC_LINE *l, __u32 line, __u64 tick)
{
	__u64 now = TC(lane_now)(tick), best = 0;
	__u32 i, j;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 w = l->w[i], f = (w >> TC_TICK_BITS) & TC_FPS;
		__u64 written = ((f + TC_FPS) >> TC_FP_BITS) & TC_ONES; /* f != 0 per lane */
		__u64 a = (now - (w & TC_TICKS)) & TC_TICKS & (written * TC_TICK_MASK);
		__u64 slot = line * TC_WAYS + i; /* lane j of word i is slot 8j + i */

		PACER_UNROLL
		for (j = 0; j < TC_LANES; j++)
			best = pacer_max(best, ((a >> (j * TC_LANE_BITS)) & TC_TICK_MASK) << TC_SLOT_BITS |
						       (slot + 8 * j));
	}
	return best;
}

/*
 * (2^TC_TICK_BITS - a) << TC_SLOT_BITS | slot of the youngest entry of one
 * line among the slots of mask (both lines' bits), a its age taken
 * TC_FUTURE ticks late (a "future" entry is youngest); 0 if the mask has
 * none in this line.  Lanes as the scan, no branch per entry.
 */
PACER_INLINE __u64 TC(youngest_line)(const TC_LINE *l, __u32 line, TC_MASK mask, __u64 tick)
{
	__u64 now = TC(lane_now)(tick), best = 0;
	__u64 m = (mask >> (line * TC_WAYS)) & TC_LINE_SLOTS;
	__u32 i, j;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 a = (now - (l->w[i] & TC_TICKS)) & TC_TICKS;
		__u64 slot = line * TC_WAYS + i;

		PACER_UNROLL
		for (j = 0; j < TC_LANES; j++)
			best = pacer_max(best, ((TC_TICK_MASK + 1 - ((a >> (j * TC_LANE_BITS)) &
								      TC_TICK_MASK))
						<< TC_SLOT_BITS | (slot + 8 * j)) *
						       ((m >> (i + 8 * j)) & 1));
	}
	return best;
}

#ifdef __bpf__
/*
 * In BPF, the eviction search, the youngest of a fingerprint's entries and
 * the idle entries are global functions: the verifier checks each once,
 * not once per path that reaches it.  Each checks its pointer itself.
 * They are off the common path (evictions, bursts and fingerprint
 * collisions, admissions into a free entry); the scans stay inline.
 */
__attribute__((noinline)) __u64 TC(oldest_line_global)(const TC_LINE *l, __u32 line, __u64 tick)
{
	return l ? TC(oldest_line)(l, line & 1, tick) : 0;
}

__attribute__((noinline)) __u64 TC(youngest_line_global)(const TC_LINE *l, __u32 line,
							 TC_MASK mask, __u64 tick)
{
	return l ? TC(youngest_line)(l, line & 1, mask, tick) : 0;
}
#define TC_OLDEST_LINE TC(oldest_line_global)
#define TC_YOUNGEST_LINE TC(youngest_line_global)
#if !TC_MATCH_FIRST
__attribute__((noinline)) TC_MASK TC(idle_line_global)(const TC_LINE *l, __u32 line, __u64 tick,
						       __u32 sat)
{
	return l ? TC(idle_line)(l, line & 1, tick, sat) : 0;
}
#define TC_IDLE_LINE TC(idle_line_global)
#endif
#else
#define TC_OLDEST_LINE TC(oldest_line)
#define TC_YOUNGEST_LINE TC(youngest_line)
#define TC_IDLE_LINE TC(idle_line)
#endif

PACER_INLINE __u32 TC(oldest)(TC_LINE *const l[2], __u64 tick)
{
	return (__u32)pacer_max(TC_OLDEST_LINE(l[0], 0, tick), TC_OLDEST_LINE(l[1], 1, tick)) &
	       (TC_MASK_BITS - 1);
}

/* The youngest entry among the slots of a non-zero mask; one bit (the usual case) needs no scan. */
PACER_INLINE __u32 TC(youngest)(TC_LINE *const l[2], TC_MASK mask, __u64 tick)
{
	if (!(mask & (mask - 1)))
		return TC(first)(mask);
	return (__u32)pacer_max(TC_YOUNGEST_LINE(l[0], 0, mask, tick),
				TC_YOUNGEST_LINE(l[1], 1, mask, tick)) &
	       (TC_MASK_BITS - 1);
}

/*
 * The slot an admission writes, or TC_NONE (one-sided mode with both lines
 * full: drop).  The key's own entry first (with a burst, the youngest of
 * them, whose credit the admission spends); else the line with more free
 * entries, in it an idle one first (spares keys whose entry has just
 * expired and that are about to return); when both lines are full, the
 * oldest entry in evict-oldest mode (*evicted set).
 */
PACER_INLINE __u32 TC(pick)(TC_LINE *const l[2], const struct TC(scan) *s, __u64 tick,
			    __u32 burst, __u32 on_full, int *evicted)
{
	__u32 f0, f1;
	TC_MASK line_mask, idle;

	*evicted = 0;
	if (s->own_mask)
		return burst ? TC(youngest)(l, s->own_mask, tick) : TC(first)(s->own_mask);
	if (s->free_mask) {
		f0 = TC(popcount_line)(s->free_mask & TC_LINE_SLOTS);
		f1 = TC(popcount_line)(s->free_mask >> TC_WAYS);
		line_mask = f1 > f0 ? (TC_MASK)TC_LINE_SLOTS << TC_WAYS : (TC_MASK)TC_LINE_SLOTS;
#if TC_MATCH_FIRST
		idle = s->idle_mask & line_mask;
#else
		idle = f1 > f0 ? TC_IDLE_LINE(l[1], 1, tick, s->sat) : TC_IDLE_LINE(l[0], 0, tick, s->sat);
#endif
		return TC(first)(idle ? idle : s->free_mask & line_mask);
	}
	if (on_full != PACER_TBL_FULL_EVICT)
		return TC_NONE;
	*evicted = 1;
	return TC(oldest)(l, tick);
}

/* The key's age: its youngest entry's (a fresh one if any), else PACER_AGE_STALE. */
PACER_INLINE __u32 TC(key_age)(TC_LINE *const l[2], const struct TC(scan) *s, __u64 tick)
{
	TC_MASK mask = s->fresh_mask ? s->fresh_mask : s->own_mask;

	return mask ? TC(age)(TC(get)(l, TC(youngest)(l, mask, tick)), tick) : PACER_AGE_STALE;
}

/*
 * Shared placement: an entry is claimed by a compare-and-swap of its
 * aligned 64-bit word (clang 14 emits 32-bit atomics only for -mcpu=v3),
 * from the value the choice was made on; the word's other entries may move
 * meanwhile (other keys), so a swap that failed only because a neighbour
 * moved is retried, TC_SWAP_TRIES times in all.  Two CPUs admitting the
 * same key pick the same entry from the same view and one swap fails; if
 * their views differed (another key wrote meanwhile) they may pick
 * different entries, so after its swap each re-reads both lines and drops
 * if the key has a second entry holding credit (younger than sat; for
 * N = 1, a fresh one): the later of two swaps always sees the earlier one
 * (the swaps are full barriers), so at most one admits.  The swap is from
 * the value the verdict was made on, and it must still give the same new
 * age: two CPUs spending the same credit of a burst cannot both win.  A
 * loser drops (PACER_TBL_EV_RACE); a failed swap can also be another key
 * taking the entry: a false drop, the safe side.
 */

/* Swap the entry in slot from old to new; 0 on success. */
PACER_INLINE int TC(entry_swap)(TC_LINE *const l[2], __u32 slot, __u32 old, __u32 new)
{
	__u32 shift;
	__u64 *w = TC(locate)(l, slot, &shift), cur, want;
	int i;

	for (i = 0; i < TC_SWAP_TRIES; i++) {
		cur = *(volatile __u64 *)w;
		if (((cur >> shift) & TC_ENTRY_MASK) != old)
			return -1;
		want = (cur & ~(TC_ENTRY_MASK << shift)) | ((__u64)new << shift);
		if (__sync_val_compare_and_swap(w, cur, want) == cur)
			return 0;
	}
	return -1;
}

/*
 * The key's entries younger than sat (credit held) but the one in slot, as
 * slot bits.  By matches first, one look at the fingerprints usually says
 * the key has no other entry, and the ages are read only when it has.
 */
PACER_INLINE TC_MASK TC(held_elsewhere)(TC_LINE *const l[2], __u32 slot, TC_FP fp, __u64 tick,
					__u32 sat)
{
	TC_MASK others = ~((TC_MASK)1 << (slot & (TC_MASK_BITS - 1)));
#if TC_MATCH_FIRST
	__u32 sel;

	if (!((TC(match_line)(l[0], 0, fp, &sel) | TC(match_line)(l[1], 1, fp, &sel)) & others))
		return 0;
#endif
	return (TC(held_line)(l[0], 0, tick, fp, sat) | TC(held_line)(l[1], 1, tick, fp, sat)) &
	       others;
}

PACER_INLINE int TC(claim_shared)(TC_LINE *const l[2], __u32 slot, TC_FP fp, __u64 tick,
				  const struct pacer_rate *rate, __u32 nage, int evict)
{
	__u32 old = TC(get)(l, slot), a = TC(age)(old, tick);

	/* Another key's entry (or none) counts as a full burst once it is free. */
	if ((old >> TC_TICK_BITS) != fp && (a >= rate->sat || !(old >> TC_TICK_BITS)))
		a = rate->sat;
	if (!evict && (a < rate->thresh || pacer_rate_next_age(a, rate) != nage))
		return -1; /* taken since we looked */
	if (TC(entry_swap)(l, slot, old, TC(entry)(fp, tick - nage)))
		return -1;
	/* Another entry of the key holding credit: admitted elsewhere meanwhile. */
	return TC(held_elsewhere)(l, slot, fp, tick, rate->sat) ? -1 : 0;
}

/*
 * quiet: every packet counts, so a fresh entry is refreshed to now (the max
 * of old and now, as the sketch's cells).  Shared: by swap; a failed one
 * means another CPU just wrote it.
 */
PACER_INLINE void TC(refresh)(TC_LINE *const l[2], __u32 slot, TC_FP fp, __u64 tick, int shared)
{
	__u32 old = TC(get)(l, slot);

	if ((old >> TC_TICK_BITS) != fp || TC(age)(old, tick) == 0)
		return;
	if (shared)
		TC(entry_swap)(l, slot, old, TC(entry)(fp, tick));
	else
		TC(set)(l, slot, TC(entry)(fp, tick));
}

/*
 * A load of the line's first word that the compiler keeps and nothing
 * waits for: the second line's cache miss then overlaps the judgement of
 * the first instead of following it.
 */
PACER_INLINE void TC(touch)(const TC_LINE *l)
{
	__u64 w = *(const volatile __u64 *)&l->w[0];

	PACER_OPAQUE(w);
	(void)w;
}

/*
 * Pacing's judgement of one packet, before the global budget: 1 to drop,
 * 0 if pacing admits it, with *slot the entry TC(commit) is to write once
 * every later stage admitted the packet too (a packet a later stage
 * refuses writes nothing, so a flood the budget refuses takes no entries).
 * Writes only under quiet, for a dropped packet: the key's fresh entry is
 * refreshed.  *age gets the key's age before the packet (PACER_AGE_STALE:
 * no entry), if want_age (only recording reads it), *event what to count.
 */
PACER_INLINE int TC(judge)(TC_LINE *const l[2], TC_FP fp, __u64 tick,
			   const struct pacer_rate *rate, __u32 policy, __u32 on_full,
			   __u32 placement, int want_age, __u32 *age, __u32 *event, __u32 *slot)
{
	struct TC(scan) s;
	int evicted;

	/*
	 * A fresh entry in the first line drops the packet whatever the second
	 * holds: its judgement is skipped, unless the key's age (the youngest
	 * of both lines) is wanted.
	 */
	TC(scan_init)(&s, fp, rate);
#if TC_MATCH_FIRST
	TC(touch)(l[1]);
#endif
	TC(judge_line)(l[0], 0, tick, &s);
	if (!s.fresh_mask || want_age)
		TC(judge_line)(l[1], 1, tick, &s);
	*age = want_age ? TC(key_age)(l, &s, tick) : PACER_AGE_STALE;
	*event = PACER_TBL_EV_NONE;
	if (s.fresh_mask) {
		if (policy == PACER_POLICY_QUIET)
			TC(refresh)(l, TC(first)(s.fresh_mask), fp, tick,
				    placement == PACER_PLACEMENT_SHARED);
		return 1;
	}
#if TC_MATCH_FIRST
	if (!s.own_mask) {
		TC(free_line)(l[0], 0, tick, &s);
		TC(free_line)(l[1], 1, tick, &s);
	}
#endif
	*slot = TC(pick)(l, &s, tick, rate->burst, on_full, &evicted);
	if (*slot == TC_NONE) {
		*event = PACER_TBL_EV_FULL;
		return 1;
	}
	if (evicted)
		*event = PACER_TBL_EV_EVICT;
	return 0;
}

/*
 * Write the admission TC(judge) allowed into its slot, at tick (the
 * admission's time: the judgement's, or later if the budget's clock was
 * ahead).  The entry is read again: if it is still the key's own (a second
 * packet of a burst) its credit is spent, otherwise the key starts with a
 * full burst.  Per-CPU placement has one writer per line, so the slot is
 * still the judgement's choice; shared placement claims it as described
 * above, re-checking the entry and both lines.  0 if admitted, 1 to drop
 * (lost to another CPU: *event PACER_TBL_EV_RACE).
 */
PACER_INLINE int TC(commit)(TC_LINE *const l[2], TC_FP fp, __u64 tick,
			    const struct pacer_rate *rate, __u32 placement, __u32 slot,
			    __u32 *event)
{
	__u32 e = TC(get)(l, slot), a = TC(age)(e, tick), nage;

	/* An entry of the key that still holds credit spends it; any other starts a full burst. */
	nage = pacer_rate_next_age((e >> TC_TICK_BITS) == fp && a < rate->sat ? a : rate->sat,
				   rate);
	if (placement != PACER_PLACEMENT_SHARED) {
		TC(set)(l, slot, TC(entry)(fp, tick - nage));
		return 0;
	}
	if (TC(claim_shared)(l, slot, fp, tick, rate, nage, *event == PACER_TBL_EV_EVICT) < 0) {
		*event = PACER_TBL_EV_RACE;
		return 1;
	}
	return 0;
}

/*
 * One packet with no stage after pacing: judge, then commit at once.
 * Returns 1 to drop; *age and *event as TC(judge) says.
 */
PACER_INLINE int TC(verdict)(TC_LINE *const l[2], TC_FP fp, __u64 tick,
			     const struct pacer_rate *rate, __u32 policy, __u32 on_full,
			     __u32 placement, int want_age, __u32 *age, __u32 *event)
{
	__u32 slot = 0;

	if (TC(judge)(l, fp, tick, rate, policy, on_full, placement, want_age, age, event, &slot))
		return 1;
	return TC(commit)(l, fp, tick, rate, placement, slot, event);
}

/* The sweep's part: written entries of one line aged sat or more (not "future"), as slot bits. */
PACER_INLINE TC_MASK TC(expired_line)(const TC_LINE *l, __u64 tick, __u32 sat)
{
	__u64 now = TC(lane_now)(tick), expired = 0, th1 = TC(lanes)(sat + TC_FUTURE);
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < TC_WORDS; i++) {
		__u64 f, a = TC(lane_ages)(l->w[i], now, &f);

		expired |= (TC(ge)(a, th1) & ~TC(zero)(f)) << i;
	}
	return (TC_MASK)TC(gather)(expired);
}

/* One entry, as TC(expired_line) judges it. */
PACER_INLINE int TC(expired)(__u32 e, __u64 tick, __u32 sat)
{
	return (e >> TC_TICK_BITS) && TC(age)(e, tick) >= sat;
}

/* Word w's expired entries (aged sat or more, written): bit 0 of each such lane. */
PACER_INLINE __u64 TC(swept_lanes)(__u64 w, __u64 tick, __u32 sat)
{
	__u64 f, a = TC(lane_ages)(w, TC(lane_now)(tick), &f);

	return TC(ge)(a, TC(lanes)(sat + TC_FUTURE)) & ~TC(zero)(f);
}

/* Word w with its expired entries cleared: what the sweep swaps in for w. */
PACER_INLINE __u64 TC(swept_word)(__u64 w, __u64 tick, __u32 sat)
{
	return w & ~(TC(swept_lanes)(w, tick, sat) * TC_ENTRY_MASK);
}

/* How many lanes of TC(swept_lanes) are set: arithmetic only, no branch for the verifier to split on. */
PACER_INLINE __u32 TC(lanes_set)(__u64 lanes)
{
	__u32 k, n = 0;

	PACER_UNROLL
	for (k = 0; k < TC_LANES; k++)
		n += (__u32)(lanes >> (TC_LANE_BITS * k)) & 1;
	return n;
}

/*
 * The sweep of one line at tick: each word with an entry expired (aged sat
 * or more) is swapped for itself without them, from the value judged, so
 * a CPU that rewrote an entry in between (either placement) makes the swap
 * fail and its value stays; a word whose neighbour moved is judged again,
 * once.  Clearing an expired entry changes no verdict: an expired entry
 * and an unwritten one both give a key its full burst and are both free
 * for other keys.  Returns the entries it cleared (the sweep's counter).
 */
PACER_INLINE __u32 TC(sweep_line)(TC_LINE *l, __u64 tick, __u32 sat)
{
	TC_MASK mask = TC(expired_line)(l, tick, sat);
	__u32 j, cleared = 0;

	if (!mask)
		return 0;
	for (j = 0; j < TC_WORDS; j++) {
		__u64 cur, gone;
		int k;

		if (!(mask >> j & TC_WORD_SLOTS))
			continue;
		for (k = 0; k < 2; k++) {
			cur = *(volatile __u64 *)&l->w[j];
			gone = TC(swept_lanes)(cur, tick, sat);
			if (!gone)
				break;
			if (__sync_val_compare_and_swap(&l->w[j], cur, cur & ~(gone * TC_ENTRY_MASK)) == cur) {
				cleared += TC(lanes_set)(gone);
				break;
			}
		}
	}
	return cleared;
}

#undef TC_PREFIX
#undef TC_LINE
#undef TC_LANES
#undef TC_TICK_BITS
#undef TC_FP_BITS
#undef TC_FUTURE
#undef TC_SWAP_TRIES
#undef TC_MATCH_FIRST
#undef TC_WORDS
#undef TC_WAYS
#undef TC_LANE_BITS
#undef TC_ONES
#undef TC_MASK
#undef TC_MASK_BITS
#undef TC_SLOT_BITS
#undef TC_NONE
#undef TC_FP
#undef TC_TICK_MASK
#undef TC_ENTRY_MASK
#undef TC_TICKS
#undef TC_FPS
#undef TC_FP_CARRY
#undef TC_GUARD
#undef TC_LINE_SLOTS
#undef TC_WORD_SLOTS
#undef TC_OLDEST_LINE
#undef TC_YOUNGEST_LINE
#undef TC_IDLE_LINE
