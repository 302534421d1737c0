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
 * Time.  Ages are (now - tick) mod 2^16.  Modular age is never larger than
 * the true age, so wrap-around can only make an entry look fresh (an
 * entry idle a multiple of 2^16 ticks, 36 minutes at the default tick, for
 * fewer than thresh ticks): the safe side, as with the sketch's cells.  An
 * age from 2^16 - PACER_TBL_FUTURE up is an entry written by a CPU whose
 * clock is slightly ahead: fresh (age 0), as pacer_cell_age() does.  No
 * epoch and no re-base: 16 bits of tick leave the aliasing window at
 * thresh / 2^16 <= 0.1 % of idle entries.
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

#ifndef PACER_INLINE
#define PACER_INLINE static inline __attribute__((always_inline))
#endif

#define PACER_TBL_WAYS 16           /* entries per line */
#define PACER_TBL_SLOTS (2 * PACER_TBL_WAYS)
#define PACER_TBL_MAX_LINES_LOG2 24 /* line bits of the two indexes are disjoint */
#define PACER_TBL_FUTURE 1024       /* ages from 2^16 - this up are fresh */
#define PACER_TBL_NONE 0xffu

struct pacer_tbl_line {
	__u32 e[PACER_TBL_WAYS];
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

/* Age of an entry in ticks (0 for a "future" entry, see the top). */
PACER_INLINE __u32 pacer_tbl_age(__u32 e, __u64 tick)
{
	__u16 a = (__u16)((__u16)tick - (__u16)e);

	return a >= (__u16)(0x10000 - PACER_TBL_FUTURE) ? 0 : a;
}

PACER_INLINE int pacer_tbl_fresh(__u32 e, __u64 tick, __u32 thresh)
{
	return (e >> 16) && pacer_tbl_age(e, tick) < thresh;
}

/*
 * What the two lines say about a key.  Slots are numbered 0..31, line 0's
 * first.  Masks have bit `slot` set.
 */
struct pacer_tbl_scan {
	__u32 fp, thresh;  /* inputs: the key's fingerprint, the threshold in ticks */
	__u32 fresh_mask;  /* fresh entries with the key's fingerprint */
	__u32 own_mask;    /* expired entries with the key's fingerprint */
	__u32 free[2];     /* per line: ((idle ticks + 1) << 5 | slot) of the free entry
			      idle longest (unwritten counts as 2^16), 0 if none */
	__u32 nfree[2];
	__u32 oldest;      /* ((age + 1) << 5 | slot) of the oldest written entry, 0 if none */
	__u32 age;         /* the key's age: of its youngest matching entry */
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
PACER_INLINE __u64 pacer_min(__u64 a, __u64 b) { return b ^ ((a ^ b) & (0 - pacer_lt(a, b))); }

PACER_INLINE void pacer_tbl_scan_line(const struct pacer_tbl_line *l, __u32 line, __u64 tick,
				      struct pacer_tbl_scan *s)
{
	__u64 fp = s->fp, thresh = s->thresh, fresh_mask = 0, own_mask = 0, best_free = 0, oldest = s->oldest, nfree = 0;
	__u64 age = s->age;
	__u32 i;

	/* Not unrolled: sixteen copies in flight would spill past BPF's 512-byte stack. */
#ifdef __clang__
#pragma clang loop unroll(disable)
#endif
	for (i = 0; i < PACER_TBL_WAYS; i++) {
		__u64 e = l->e[i], slot = line * PACER_TBL_WAYS + i;
		__u64 a = (__u16)((__u16)tick - (__u16)e);
		__u64 written = pacer_nz(e >> 16), match = 1 - pacer_nz((e >> 16) ^ fp);
		__u64 fresh, idle;

		a &= 0 - pacer_lt(a, 0x10000 - PACER_TBL_FUTURE); /* a "future" entry: age 0 */
		fresh = written & pacer_lt(a, thresh);
		fresh_mask |= (match & fresh) << slot;
		own_mask |= (match & (1 - fresh)) << slot;
		nfree += 1 - fresh;
		idle = written * a + (1 - written) * 0x10000;
		best_free = pacer_max(best_free, (1 - fresh) * ((idle + 1) << 5 | slot));
		oldest = pacer_max(oldest, written * ((a + 1) << 5 | slot));
		age = pacer_min(age, match * a + (1 - match) * PACER_AGE_STALE);
	}
	s->fresh_mask |= (__u32)fresh_mask;
	s->own_mask |= (__u32)own_mask;
	s->free[line & 1] = (__u32)best_free;
	s->nfree[line & 1] = (__u32)nfree;
	s->oldest = (__u32)oldest;
	s->age = (__u32)age;
}

/* The BPF side swaps in an out-of-line copy: one stack frame for the unrolled scan. */
#ifndef PACER_TBL_SCAN_LINE
#define PACER_TBL_SCAN_LINE pacer_tbl_scan_line
#endif

PACER_INLINE void pacer_tbl_scan(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				 __u32 thresh, struct pacer_tbl_scan *s)
{
	s->fp = fp;
	s->thresh = thresh;
	s->fresh_mask = s->own_mask = 0;
	s->oldest = 0;
	s->age = PACER_AGE_STALE;
	PACER_TBL_SCAN_LINE(l[0], 0, tick, s);
	PACER_TBL_SCAN_LINE(l[1], 1, tick, s);
}

/* Lowest set bit's index of a non-zero mask (a short loop: one exit per bit). */
PACER_INLINE __u32 pacer_tbl_first(__u32 mask)
{
	__u32 i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < PACER_TBL_SLOTS - 1; i++)
		if (mask >> i & 1)
			return i;
	return PACER_TBL_SLOTS - 1;
}

/*
 * The slot an admission writes, or PACER_TBL_NONE (one-sided mode with both
 * lines full: drop).  *evicted is set when a fresh entry is replaced.
 */
PACER_INLINE __u32 pacer_tbl_pick(const struct pacer_tbl_scan *s, __u32 on_full, int *evicted)
{
	*evicted = 0;
	if (s->own_mask)
		return pacer_tbl_first(s->own_mask);
	if (s->nfree[0] || s->nfree[1])
		return (s->nfree[1] > s->nfree[0] ? s->free[1] : s->free[0]) & (PACER_TBL_SLOTS - 1);
	if (on_full != PACER_TBL_FULL_EVICT)
		return PACER_TBL_NONE;
	*evicted = 1;
	return s->oldest & (PACER_TBL_SLOTS - 1);
}

/* The entry behind a slot number; masks keep the BPF verifier's bounds. */
PACER_INLINE __u32 *pacer_tbl_slot(struct pacer_tbl_line *const l[2], __u32 slot)
{
	struct pacer_tbl_line *line = slot < PACER_TBL_WAYS ? l[0] : l[1];

	return &line->e[slot & (PACER_TBL_WAYS - 1)];
}

/* Outcome of one packet, for counters. */
enum pacer_tbl_event {
	PACER_TBL_EV_NONE = 0,
	PACER_TBL_EV_FULL,  /* no slot: dropped (one-sided) */
	PACER_TBL_EV_EVICT, /* a fresh entry was replaced (opposite) */
};

/*
 * One packet, single writer (per-CPU copies, userspace): returns 1 to drop.
 * *age gets the key's age before the packet (PACER_AGE_STALE: no entry).
 */
PACER_INLINE int pacer_tbl_packet(struct pacer_tbl_line *const l[2], __u16 fp, __u64 tick,
				  __u32 thresh, __u32 policy, __u32 on_full, __u32 *age,
				  __u32 *event)
{
	struct pacer_tbl_scan s;
	__u32 slot;
	int evicted;

	pacer_tbl_scan(l, fp, tick, thresh, &s);
	*age = s.age;
	*event = PACER_TBL_EV_NONE;
	if (s.fresh_mask) {
		__u32 *e = pacer_tbl_slot(l, pacer_tbl_first(s.fresh_mask));

		/* quiet: every packet counts; max(old, now), as the sketch's cells. */
		if (policy == PACER_POLICY_QUIET && pacer_tbl_age(*e, tick) != 0)
			*e = pacer_tbl_entry(fp, tick);
		return 1;
	}
	slot = pacer_tbl_pick(&s, on_full, &evicted);
	if (slot == PACER_TBL_NONE) {
		*event = PACER_TBL_EV_FULL;
		return 1;
	}
	if (evicted)
		*event = PACER_TBL_EV_EVICT;
	*pacer_tbl_slot(l, slot) = pacer_tbl_entry(fp, tick);
	return 0;
}

#endif /* PACER_TABLE_H */
