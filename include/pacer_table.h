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
 * bpf/lib/sweep.h) clears every expired entry long before that.  An age
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
#include "pacer_sketch.h" /* PACER_AGE_STALE, the age reported for "no entry" */
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

PACER_INLINE __u32 pacer_tbl_entry(__u16 fp, __u64 tick)
{
	return (__u32)fp << 16 | (__u16)tick;
}

/*
 * What the two lines say about a key: masks with bit `slot` set, slots
 * numbered 0..31, line 0's first.
 */
struct pacer_tbl_scan {
	__u32 fp, thresh, sat; /* inputs: the key's fingerprint, the rate's ages (pacer_rate.h) */
	__u32 fresh_mask;  /* entries with the key's fingerprint younger than thresh */
	__u32 own_mask;    /* entries with the key's fingerprint from thresh up */
	__u32 held_mask;   /* entries with the key's fingerprint younger than sat */
	__u32 free_mask;   /* entries unwritten or from sat up */
	__u32 idle_mask;   /* entries unwritten or from 2 * sat up (pacer_tbl_free_line) */
};

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

/*
 * Two entries at once: an aligned 8-byte word holds two 32-bit lanes, each
 * a 16-bit tick under a 16-bit fingerprint.  Every lane value stays below
 * 2^17 before the subtractions below, which therefore never borrow across
 * lanes; a lane's answer is its bit 16 or 31, moved to bit 0 of the lane.
 */
#define PACER_TBL_LANES 0x0000000100000001ULL
#define PACER_TBL_LO16 0x0000ffff0000ffffULL
#define PACER_TBL_BIT16 0x0001000000010000ULL
#define PACER_TBL_BIT31 0x8000000080000000ULL

/* Lanes whose 16-bit value is zero (bit 0 of each lane). */
PACER_INLINE __u64 pacer_tbl_zero(__u64 v)
{
	return ((PACER_TBL_BIT16 - v) >> 16) & PACER_TBL_LANES;
}

/* "Now" in both lanes, as pacer_tbl_lane_ages subtracts from it. */
PACER_INLINE __u64 pacer_tbl_lane_now(__u64 tick)
{
	return (((__u64)(__u16)tick + PACER_TBL_FUTURE) * PACER_TBL_LANES) | PACER_TBL_BIT16;
}

/*
 * The ages of word w's two entries, one per 32-bit lane, with bit 31 of each
 * lane set so that subtracting a threshold leaves bit 31 set exactly when
 * the age reaches it; *fp gets their fingerprints, a lane each.
 */
PACER_INLINE __u64 pacer_tbl_lane_ages(__u64 w, __u64 now, __u64 *fp)
{
	*fp = (w >> 16) & PACER_TBL_LO16;
	return ((now - (w & PACER_TBL_LO16)) & PACER_TBL_LO16) | PACER_TBL_BIT31;
}

PACER_INLINE void pacer_tbl_scan_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
				      struct pacer_tbl_scan *s)
{
	/*
	 * Ages are taken PACER_TBL_FUTURE ticks late, so a "future" entry
	 * (an age from 2^16 - PACER_TBL_FUTURE up) lands below PACER_TBL_FUTURE
	 * and one comparison tells fresh (future, or under the threshold) from
	 * expired.
	 */
	__u64 now = pacer_tbl_lane_now(tick);
	__u64 fp = (__u64)s->fp * PACER_TBL_LANES, conform = 0, expired = 0, unwritten = 0;
	__u64 match = 0;
	__u64 th0 = (s->thresh + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u64 th1 = (s->sat + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 f, a = pacer_tbl_lane_ages(l->w[i], now, &f);

		conform |= (((a - th0) >> 31) & PACER_TBL_LANES) << i;
		expired |= (((a - th1) >> 31) & PACER_TBL_LANES) << i;
		unwritten |= pacer_tbl_zero(f) << i;
		match |= pacer_tbl_zero(f ^ fp) << i;
	}
	/* Word i's lanes land on bits i and 32 + i: slot i and slot 8 + i of the line. */
	unwritten = (unwritten | unwritten >> 24) & 0xffff;
	conform = ((conform | conform >> 24) & 0xffff) | unwritten;
	expired = ((expired | expired >> 24) & 0xffff) | unwritten;
	match = (match | match >> 24) & 0xffff;
	line *= PACER_TBL_WAYS;
	s->fresh_mask |= (__u32)(~conform & match) << line;
	s->own_mask |= (__u32)(conform & match) << line;
	s->held_mask |= (__u32)(~expired & match) << line;
	s->free_mask |= (__u32)expired << line;
}

PACER_INLINE void pacer_tbl_scan_init(struct pacer_tbl_scan *s, __u16 fp,
				      const struct pacer_rate *rate)
{
	s->fp = fp;
	s->thresh = rate->thresh;
	s->sat = rate->sat;
	s->fresh_mask = s->own_mask = s->held_mask = s->free_mask = s->idle_mask = 0;
}

/*
 * The entries of one line with fingerprint fp younger than sat (credit
 * held), as slot bits: what shared placement's check after a claim needs,
 * at about half the scan's work per word.
 */
PACER_INLINE __u32 pacer_tbl_held_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
				       __u16 fp, __u32 sat)
{
	__u64 now = pacer_tbl_lane_now(tick), fpl = (__u64)fp * PACER_TBL_LANES, held = 0;
	__u64 th1 = (sat + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 f, a = pacer_tbl_lane_ages(l->w[i], now, &f);
		/* Bit 0 of a lane: its age is below sat (bit 31 borrowed). */
		__u64 young = (((a - th1) >> 31) & PACER_TBL_LANES) ^ PACER_TBL_LANES;

		held |= (young & pacer_tbl_zero(f ^ fpl)) << i;
	}
	return (__u32)((held | held >> 24) & 0xffff) << (line * PACER_TBL_WAYS);
}

/* Index of the lowest set bit of a non-zero mask, by halving (no branches). */
PACER_INLINE __u32 pacer_tbl_first(__u32 mask)
{
	__u64 x = mask, n = 0, z, w;

	PACER_UNROLL
	for (w = 16; w; w >>= 1) {
		z = (1 - pacer_nz(x & ((1ULL << w) - 1))) * w; /* no set bit in the low w: skip them */
		n += z;
		x >>= z;
	}
	return (__u32)n & (PACER_TBL_SLOTS - 1);
}

PACER_INLINE __u32 pacer_tbl_popcount16(__u32 x)
{
	x = x - ((x >> 1) & 0x5555);
	x = (x & 0x3333) + ((x >> 2) & 0x3333);
	x = (x + (x >> 4)) & 0x0f0f;
	return (x + (x >> 8)) & 0x1f;
}

/* Age of an entry in ticks (0 for a "future" entry, see the top). */
PACER_INLINE __u32 pacer_tbl_age(__u32 e, __u64 tick)
{
	__u64 a = (__u16)((__u16)tick - (__u16)e);

	return (__u32)(a & (0 - pacer_lt(a, 0x10000 - PACER_TBL_FUTURE)));
}

PACER_INLINE int pacer_tbl_fresh(__u32 e, __u64 tick, __u32 thresh)
{
	return (e >> 16) && pacer_tbl_age(e, tick) < thresh;
}

/*
 * The entries of one line with fingerprint fp, as slot bits, and in *sel
 * the OR of them: the entry itself when there is one, the usual case.  A
 * third of the scan's work per word: the datapath's judgement reads the
 * ages of these entries alone (pacer_tbl_judge_line), and shared
 * placement's check after a claim looks further only when the key has
 * another entry.
 */
PACER_INLINE __u32 pacer_tbl_match_line(const struct pacer_tbl_line *l, __u32 line, __u16 fp,
					__u32 *sel)
{
	__u64 fpl = (__u64)fp * PACER_TBL_LANES, match = 0, or = 0;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 w = l->w[i], z = pacer_tbl_zero(((w >> 16) & PACER_TBL_LO16) ^ fpl);

		match |= z << i;
		or |= w & ((z << 32) - z); /* the matching lanes, whole */
	}
	*sel = (__u32)(or | or >> 32);
	return (__u32)((match | match >> 24) & 0xffff) << (line * PACER_TBL_WAYS);
}

/*
 * One line's part of the scan's fresh, own and held masks (free_mask is
 * left alone: pacer_tbl_free_line's).  A single entry with the key's
 * fingerprint is judged by its age alone; several (fingerprint
 * collisions) take the full scan of the line.
 */
PACER_INLINE void pacer_tbl_judge_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
				       struct pacer_tbl_scan *s)
{
	__u32 sel, m = pacer_tbl_match_line(l, line, (__u16)s->fp, &sel), free = s->free_mask;
	__u32 a, fresh, held;

	if (m & (m - 1)) {
		pacer_tbl_scan_line(l, line, tick, s);
		s->free_mask = free;
		return;
	}
	a = pacer_tbl_age(sel, tick);
	fresh = m & (0 - (__u32)pacer_lt(a, s->thresh));
	held = m & (0 - (__u32)pacer_lt(a, s->sat));
	s->fresh_mask |= fresh;
	s->own_mask |= m ^ fresh;
	s->held_mask |= held;
}

/*
 * One line's free entries (unwritten or from sat up) into s->free_mask and
 * idle ones (unwritten or from twice sat up, pacer_rate.h) into
 * s->idle_mask: what an admission into a free entry needs, so the
 * judgement of a key with an entry leaves it out.
 */
PACER_INLINE void pacer_tbl_free_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
				      struct pacer_tbl_scan *s)
{
	__u64 now = pacer_tbl_lane_now(tick), free = 0, idle = 0;
	__u64 th1 = (s->sat + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u64 th2 = (2 * s->sat + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 f, a = pacer_tbl_lane_ages(l->w[i], now, &f), u = pacer_tbl_zero(f);

		free |= ((((a - th1) >> 31) & PACER_TBL_LANES) | u) << i;
		idle |= ((((a - th2) >> 31) & PACER_TBL_LANES) | u) << i;
	}
	line *= PACER_TBL_WAYS;
	s->free_mask |= (__u32)((free | free >> 24) & 0xffff) << line;
	s->idle_mask |= (__u32)((idle | idle >> 24) & 0xffff) << line;
}

/* The whole scan of both lines, every mask: query and the tests' reference. */
PACER_INLINE void pacer_tbl_scan(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				 const struct pacer_rate *rate, struct pacer_tbl_scan *s)
{
	pacer_tbl_scan_init(s, fp, rate);
	pacer_tbl_scan_line(l[0], 0, tick, s);
	pacer_tbl_scan_line(l[1], 1, tick, s);
	pacer_tbl_free_line(l[0], 0, tick, s);
	pacer_tbl_free_line(l[1], 1, tick, s);
}

/*
 * (a << 5 | slot) of the oldest written entry of one line, a its age taken
 * PACER_TBL_FUTURE ticks late as in the scan (a "future" entry is youngest);
 * unwritten entries count as a = 0.  Two entries per word in lanes, as the
 * scan: only the two lane maxima are scalar.
 */
PACER_INLINE __u64 pacer_tbl_oldest_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick)
{
	__u64 now = pacer_tbl_lane_now(tick), best = 0;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 w = l->w[i], f = (w >> 16) & PACER_TBL_LO16;
		__u64 written = ((f + PACER_TBL_LO16) >> 16) & PACER_TBL_LANES; /* f != 0 per lane */
		__u64 a = (now - (w & PACER_TBL_LO16)) & PACER_TBL_LO16 & (written * 0xffff);
		__u64 slot = line * PACER_TBL_WAYS + i; /* lane h of word i is slot 8h + i */

		best = pacer_max(best, (a & 0xffff) << 5 | slot);
		best = pacer_max(best, (a >> 32) << 5 | (slot + 8));
	}
	return best;
}

/*
 * The sweep (bpf/lib/sweep.h): a BPF timer walks every copy's lines in
 * chunks and clears each written entry it finds expired (an age from sat
 * up), so no expired entry lives long enough for its 16-bit tick to wrap
 * and alias as fresh.  An entry expires at age sat <= PACER_RATE_TBL_MAX_SAT
 * and its line is swept again within PACER_TBL_SWEEP_TICKS, so it is gone
 * before an age of 2^16 - PACER_TBL_FUTURE, where it would read as fresh;
 * the sweep plans for half the room left, the other half is slack for the
 * timer's latency.
 */
#define PACER_TBL_SWEEP_TICKS ((0x10000 - PACER_TBL_FUTURE - PACER_RATE_TBL_MAX_SAT) / 2)
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

/* The recency table's plan: every line within PACER_TBL_SWEEP_TICKS. */
PACER_INLINE void pacer_tbl_sweep_plan(__u64 lines, __u32 tick_shift, struct pacer_tbl_sweep *p)
{
	pacer_sweep_plan(lines, PACER_TBL_SWEEP_TICKS, tick_shift, p);
}

/* Written entries of one line expired at tick (an age from sat up, not "future"), as bits 0..15. */
PACER_INLINE __u32 pacer_tbl_expired_line(const struct pacer_tbl_line *l, __u64 tick, __u32 sat)
{
	__u64 now = pacer_tbl_lane_now(tick), expired = 0;
	__u64 th1 = (sat + PACER_TBL_FUTURE) * PACER_TBL_LANES;
	__u32 i;

	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_WAYS / 2; i++) {
		__u64 f, a = pacer_tbl_lane_ages(l->w[i], now, &f);

		expired |= ((((a - th1) >> 31) & PACER_TBL_LANES) & ~pacer_tbl_zero(f)) << i;
	}
	return (__u32)((expired | expired >> 24) & 0xffff);
}

/* One entry, as pacer_tbl_expired_line judges it. */
PACER_INLINE int pacer_tbl_expired(__u32 e, __u64 tick, __u32 sat)
{
	return (e >> 16) && pacer_tbl_age(e, tick) >= sat;
}

/*
 * Word w (two entries) with its expired entries cleared: what the sweep
 * swaps in for w (64-bit: clang 14 emits 32-bit atomics only for -mcpu=v3).
 */
PACER_INLINE __u64 pacer_tbl_swept_word(__u64 w, __u64 tick, __u32 sat)
{
	__u64 keep = 0xffffffffffffffffULL;

	if (pacer_tbl_expired((__u32)w, tick, sat))
		keep &= 0xffffffff00000000ULL;
	if (pacer_tbl_expired((__u32)(w >> 32), tick, sat))
		keep &= 0x00000000ffffffffULL;
	return w & keep;
}

/* Entries (two a word) written in before and empty in after: what a sweep's swap cleared. */
PACER_INLINE __u32 pacer_tbl_word_cleared(__u64 before, __u64 after)
{
	return ((__u32)before && !(__u32)after) + ((before >> 32) && !(after >> 32));
}

#ifdef __bpf__
/*
 * In BPF, the eviction search is a global function: the verifier checks it
 * once, not once per path that reaches it.  It checks its pointer itself.
 * It is off the common path (evictions); the scans stay inline.
 */
__attribute__((noinline)) __u64 pacer_tbl_oldest_line_global(const struct pacer_tbl_line *l,
							     __u32 line, __u64 tick)
{
	return l ? pacer_tbl_oldest_line(l, line & 1, tick) : 0;
}

#define PACER_TBL_OLDEST_LINE pacer_tbl_oldest_line_global
#else
#define PACER_TBL_OLDEST_LINE pacer_tbl_oldest_line
#endif

PACER_INLINE __u32 pacer_tbl_oldest(struct pacer_tbl_line *const l[2], __u64 tick)
{
	return (__u32)pacer_max(PACER_TBL_OLDEST_LINE(l[0], 0, tick),
				PACER_TBL_OLDEST_LINE(l[1], 1, tick)) & (PACER_TBL_SLOTS - 1);
}

PACER_INLINE __u32 *pacer_tbl_slot(struct pacer_tbl_line *const l[2], __u32 slot);

/*
 * The youngest entry among the slots of a non-zero mask; one bit (the
 * usual case) needs no scan.  Cold path: fingerprint collisions.
 */
PACER_INLINE __u32 pacer_tbl_youngest(struct pacer_tbl_line *const l[2], __u32 mask, __u64 tick)
{
	__u64 best = 0;
	__u32 i;

	if (!(mask & (mask - 1)))
		return pacer_tbl_first(mask);
	PACER_NO_UNROLL
	for (i = 0; i < PACER_TBL_SLOTS; i++) {
		__u64 key = (0x10000ULL - pacer_tbl_age(*pacer_tbl_slot(l, i), tick)) << 5 | i;

		best = pacer_max(best, key * ((mask >> i) & 1));
	}
	return (__u32)best & (PACER_TBL_SLOTS - 1);
}

/*
 * The slot an admission writes, or PACER_TBL_NONE (one-sided mode with both
 * lines full: drop).  The key's own entry first (with a burst, the youngest
 * of them, whose credit the admission spends); else the line with
 * more free entries, in it an idle one first (spares keys whose entry has
 * just expired and that are about to return); when both lines are full, the
 * oldest entry in opposite mode (*evicted set).
 */
PACER_INLINE __u32 pacer_tbl_pick(struct pacer_tbl_line *const l[2], const struct pacer_tbl_scan *s,
				  __u64 tick, __u32 burst, __u32 on_full, int *evicted)
{
	__u32 f0, f1, line_mask, idle;

	*evicted = 0;
	if (s->own_mask)
		return burst ? pacer_tbl_youngest(l, s->own_mask, tick) : pacer_tbl_first(s->own_mask);
	if (s->free_mask) {
		f0 = pacer_tbl_popcount16(s->free_mask & 0xffff);
		f1 = pacer_tbl_popcount16(s->free_mask >> 16);
		line_mask = f1 > f0 ? 0xffff0000u : 0x0000ffffu;
		idle = s->idle_mask & line_mask;
		return pacer_tbl_first(idle ? idle : s->free_mask & line_mask);
	}
	if (on_full != PACER_TBL_FULL_EVICT)
		return PACER_TBL_NONE;
	*evicted = 1;
	return pacer_tbl_oldest(l, tick);
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

/* The key's age: its youngest entry's (a fresh one if any), else none. */
PACER_INLINE __u32 pacer_tbl_key_age(struct pacer_tbl_line *const l[2],
				     const struct pacer_tbl_scan *s, __u64 tick)
{
	__u32 mask = s->fresh_mask ? s->fresh_mask : s->own_mask;

	return mask ? pacer_tbl_age(*pacer_tbl_slot(l, pacer_tbl_youngest(l, mask, tick)), tick)
		    : PACER_AGE_STALE;
}

/* Outcome of one packet, for counters. */
enum pacer_tbl_event {
	PACER_TBL_EV_NONE = 0,
	PACER_TBL_EV_FULL,  /* no slot: dropped (one-sided) */
	PACER_TBL_EV_EVICT, /* a fresh entry was replaced (opposite) */
	PACER_TBL_EV_RACE,  /* shared: lost the entry to another CPU: dropped */
};

/*
 * Shared placement: entries are claimed by compare-and-swap of the whole
 * entry, from the value the choice was made on.  Two CPUs admitting
 * the same key pick the same entry from the same view and one swap fails;
 * if their views differed (another key wrote meanwhile) they may pick
 * different entries, so after its swap each re-reads both lines and drops
 * if the key has a second entry holding credit (younger than sat; for
 * N = 1, a fresh one): the later of two swaps always sees the earlier one
 * (the swaps are full barriers), so at most one admits.  The swap is from
 * the value the verdict was made on, and it must still give the same new
 * age: two CPUs spending the same credit of a burst cannot both win.
 * A loser drops (PACER_TBL_EV_RACE); a failed swap can also be another key
 * taking the entry: a false drop, the safe side.
 */

/*
 * Swap one 32-bit entry from `old` to `new`: a 64-bit swap of its aligned
 * word (clang 14 emits 32-bit atomics only for -mcpu=v3), retried once when
 * only the neighbouring entry moved.  0 on success.
 */
PACER_INLINE int pacer_tbl_entry_swap(struct pacer_tbl_line *const l[2], __u32 slot, __u32 old,
				      __u32 new)
{
	struct pacer_tbl_line *line = slot < PACER_TBL_WAYS ? l[0] : l[1];
	__u32 entry = pacer_tbl_entry_of(slot), shift = (entry & 1) * 32;
	__u64 *w = &line->w[(entry >> 1) & (PACER_TBL_WAYS / 2 - 1)], cur, want, seen;
	int i;

	for (i = 0; i < 2; i++) {
		cur = *(volatile __u64 *)w;
		if ((__u32)(cur >> shift) != old)
			return -1;
		want = (cur & ~(0xffffffffULL << shift)) | ((__u64)new << shift);
		seen = __sync_val_compare_and_swap(w, cur, want);
		if (seen == cur)
			return 0;
	}
	return -1;
}

/*
 * The key's entries younger than sat (credit held) but the one in slot, as
 * slot bits.  Usually the key has no other entry, and one look at the
 * fingerprints says so; the ages are read only when it has.
 */
PACER_INLINE __u32 pacer_tbl_held_elsewhere(struct pacer_tbl_line *const l[2], __u32 slot,
					    __u16 fp, __u64 tick, __u32 sat)
{
	__u32 sel, others = (pacer_tbl_match_line(l[0], 0, fp, &sel) |
			     pacer_tbl_match_line(l[1], 1, fp, &sel)) & ~(1u << slot);

	if (!others)
		return 0;
	return (pacer_tbl_held_line(l[0], 0, tick, fp, sat) |
		pacer_tbl_held_line(l[1], 1, tick, fp, sat)) & ~(1u << slot);
}

PACER_INLINE int pacer_tbl_claim_shared(struct pacer_tbl_line *const l[2], __u32 slot, __u16 fp,
					__u64 tick, const struct pacer_rate *rate, __u32 nage,
					int evict)
{
	__u32 old = *(volatile __u32 *)pacer_tbl_slot(l, slot), a = pacer_tbl_age(old, tick);

	/* Another key's entry (or none) counts as a full burst once it is free. */
	if ((old >> 16) != fp && (a >= rate->sat || !(old >> 16)))
		a = rate->sat;
	if (!evict && (a < rate->thresh || pacer_rate_next_age(a, rate) != nage))
		return -1; /* taken since we looked */
	if (pacer_tbl_entry_swap(l, slot, old, pacer_tbl_entry(fp, tick - nage)))
		return -1;
	/* Another entry of the key holding credit: admitted elsewhere meanwhile. */
	return pacer_tbl_held_elsewhere(l, slot, fp, tick, rate->sat) ? -1 : 0;
}

/*
 * quiet: every packet counts, so a fresh entry is refreshed to now (the max
 * of old and now, as the sketch's cells).  Shared: by swap; a failed one
 * means another CPU just wrote it.
 */
PACER_INLINE void pacer_tbl_refresh(struct pacer_tbl_line *const l[2], __u32 slot, __u16 fp,
				    __u64 tick, int shared)
{
	__u32 old = *(volatile __u32 *)pacer_tbl_slot(l, slot);

	if ((__u16)(old >> 16) != fp || pacer_tbl_age(old, tick) == 0)
		return;
	if (shared)
		pacer_tbl_entry_swap(l, slot, old, pacer_tbl_entry(fp, tick));
	else
		*pacer_tbl_slot(l, slot) = pacer_tbl_entry(fp, tick);
}

/*
 * A load of the line's first word that the compiler keeps and nothing
 * waits for: the second line's cache miss then overlaps the scan of the
 * first instead of following it.
 */
PACER_INLINE void pacer_tbl_touch(const struct pacer_tbl_line *l)
{
	__u64 w = *(const volatile __u64 *)&l->w[0];

	PACER_OPAQUE(w);
	(void)w;
}

/*
 * Pacing's judgement of one packet, before the global budget: 1 to drop,
 * 0 if pacing admits it, with *slot the entry pacer_tbl_commit() is to
 * write once every later stage admitted the packet too (a packet a later
 * stage refuses writes nothing, so a flood the budget refuses takes no
 * entries).  Writes only under quiet, for a dropped packet: the key's
 * fresh entry is refreshed.  *age gets the key's age before the packet
 * (PACER_AGE_STALE: no entry), if want_age (only recording reads it),
 * *event what to count.
 */
PACER_INLINE int pacer_tbl_judge(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				 const struct pacer_rate *rate, __u32 policy, __u32 on_full,
				 __u32 placement, int want_age, __u32 *age, __u32 *event,
				 __u32 *slot)
{
	struct pacer_tbl_scan s;
	int evicted;

	/*
	 * A fresh entry in the first line drops the packet whatever the second
	 * holds: its scan is skipped, unless the key's age (the youngest of
	 * both lines) is wanted.
	 */
	pacer_tbl_scan_init(&s, fp, rate);
	pacer_tbl_touch(l[1]);
	pacer_tbl_judge_line(l[0], 0, tick, &s);
	if (!s.fresh_mask || want_age)
		pacer_tbl_judge_line(l[1], 1, tick, &s);
	*age = want_age ? pacer_tbl_key_age(l, &s, tick) : PACER_AGE_STALE;
	*event = PACER_TBL_EV_NONE;
	if (s.fresh_mask) {
		if (policy == PACER_POLICY_QUIET)
			pacer_tbl_refresh(l, pacer_tbl_first(s.fresh_mask), fp, tick,
					  placement == PACER_PLACEMENT_SHARED);
		return 1;
	}
	if (!s.own_mask) {
		pacer_tbl_free_line(l[0], 0, tick, &s);
		pacer_tbl_free_line(l[1], 1, tick, &s);
	}
	*slot = pacer_tbl_pick(l, &s, tick, rate->burst, on_full, &evicted);
	if (*slot == PACER_TBL_NONE) {
		*event = PACER_TBL_EV_FULL;
		return 1;
	}
	if (evicted)
		*event = PACER_TBL_EV_EVICT;
	return 0;
}

/*
 * Write the admission pacer_tbl_judge() allowed into its slot, at tick (the
 * admission's time: the judgement's, or later if the budget's clock was
 * ahead).  The entry is read again: if it is still the key's own (a second
 * packet of a burst) its credit is spent, otherwise the key starts with a
 * full burst.  Per-CPU placement has one writer per line, so the slot is
 * still the judgement's choice; shared placement claims it as described
 * above, re-checking the entry and both lines.  0 if admitted, 1 to drop
 * (lost to another CPU: *event PACER_TBL_EV_RACE).
 */
PACER_INLINE int pacer_tbl_commit(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				  const struct pacer_rate *rate, __u32 placement, __u32 slot,
				  __u32 *event)
{
	__u32 e = *(volatile __u32 *)pacer_tbl_slot(l, slot), nage;

	/* An entry of the key that still holds credit spends it; any other starts a full burst. */
	nage = pacer_rate_next_age((e >> 16) == fp && pacer_tbl_age(e, tick) < rate->sat
				   ? pacer_tbl_age(e, tick) : rate->sat, rate);
	if (placement != PACER_PLACEMENT_SHARED) {
		*pacer_tbl_slot(l, slot) = pacer_tbl_entry(fp, tick - nage);
		return 0;
	}
	if (pacer_tbl_claim_shared(l, slot, fp, tick, rate, nage,
				   *event == PACER_TBL_EV_EVICT) < 0) {
		*event = PACER_TBL_EV_RACE;
		return 1;
	}
	return 0;
}

/*
 * One packet with no stage after pacing: judge, then commit at once.
 * Returns 1 to drop; *age and *event as pacer_tbl_judge() says.
 */
PACER_INLINE int pacer_tbl_verdict(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				   const struct pacer_rate *rate, __u32 policy, __u32 on_full,
				   __u32 placement, int want_age, __u32 *age, __u32 *event)
{
	__u32 slot = 0;

	if (pacer_tbl_judge(l, fp, tick, rate, policy, on_full, placement, want_age, age, event,
			    &slot))
		return 1;
	return pacer_tbl_commit(l, fp, tick, rate, placement, slot, event);
}

#endif /* PACER_TABLE_H */
