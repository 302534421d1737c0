/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recency sketch's arithmetic, shared verbatim by the XDP program and by
 * userspace (CLI query, offline simulation, unit and property tests), so the
 * code that decides a packet's fate is the code the tests check.
 *
 * Time.  The datapath clock is cut into ticks of 2^tick_shift ns.  A cell
 * keeps only the low 8 bits of the tick it was last written at, so its age is
 * (now - cell) mod 256.  Modular age is never larger than the true age, so a
 * wrapped cell can only look *more* recent: wrap-around errs on the same side
 * as collisions.  To keep that from turning into spurious drops, every line
 * carries an epoch (tick >> 6, 64 ticks): before a write into a line whose
 * epoch is not the current one, cells older than PACER_MAX_THRESH ticks are
 * re-based to exactly PACER_MAX_THRESH ticks old ("expired" under any
 * threshold).  After that no cell in the line is older than 64 ticks at the
 * re-base, so until the line's epoch is two behind (>= 64 more ticks) every
 * age is below 64 + 2 * 64 = 192 < 256 and modular arithmetic is exact; once
 * the epoch is two or more behind, every cell is at least 64 ticks old and the
 * whole line reads as expired without looking at the cells.
 *
 * The epoch field is 15 bits of epoch and a "written" flag (the top bit).
 * Maps start zeroed, and a zero line is not "written at tick 0": it has
 * never been written, and reads as expired whatever the clock says (right
 * after boot, fewer than 64 ticks have passed and a zero line would
 * otherwise be current, every source in it "seen at boot").
 *
 * Verdict.  A source is dropped when its age, the largest over its rows of
 * the cell ages (the minimum of the timestamps), is below thresh_ticks =
 * ceil(interval / tick) + 1.  The extra tick absorbs quantisation: with
 * whole-tick ages a, the true gap exceeds (a - 1) ticks, so a >= thresh means
 * the true gap is at least the interval.
 */
#ifndef PACER_SKETCH_H
#define PACER_SKETCH_H

#include <linux/types.h>
#include "pacer_abi.h"
#include "pacer_compiler.h"
#include "pacer_hash.h"
#include "pacer_ticks.h"

/* Lines are also read and swapped as 8-byte words, byte i at bits 8i. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "xdp-pacer's line words assume a little-endian machine"
#endif

#define PACER_AGE_STALE 0x100u  /* line too old to hold any recent cell */
#define PACER_EPOCH_MASK 0x7fffu     /* the epoch's bits in a line's epoch field */
#define PACER_EPOCH_WRITTEN 0x8000u  /* set in every line the sketch has written */
/* How far behind a never-written line is: stale, and never "ahead". */
#define PACER_BEHIND_NEVER ((PACER_EPOCH_MASK + 1) / 2)

/*
 * Where row `row` of a key with hash h lives.
 * rows layout: row r is its own array of 2^lines_log2 lines.  Every row takes
 *   its own 32 bits of hash (h itself for rows 0-1, then one further mix of h
 *   per two rows): the low bits pick the line, the top 8 the cell.  Rows are
 *   independent: a collision in one row says nothing about the others.
 *   lines_log2 <= 24 leaves the 8 cell bits disjoint from the line bits.
 * blocked layout: one line for the key, chosen by h; row r owns a segment of
 *   PACER_LINE_CELLS / rows cells in it, the cell picked by 16 bits of a
 *   second hash.  One cache line per packet, at the cost that keys sharing a
 *   line compete in all rows at once.
 */
#define PACER_ROWS_MAX_LINES_LOG2 24

PACER_INLINE __u32 pacer_seg_cells(__u32 rows)
{
	return PACER_LINE_CELLS / rows;
}

PACER_INLINE void pacer_slot_rows(__u64 word, __u32 row, __u32 lines_log2,
				  __u32 *line, __u32 *cell)
{
	__u32 bits = (__u32)(word >> (32 * (row & 1)));

	*line = (row << lines_log2) | (bits & ((1u << lines_log2) - 1));
	*cell = ((bits >> 24) * PACER_LINE_CELLS) >> 8;
}

PACER_INLINE __u32 pacer_seg_cell(__u64 seg_hash, __u32 row, __u32 rows)
{
	__u32 seg = pacer_seg_cells(rows);
	__u32 bits = (__u32)(seg_hash >> (16 * (row & 3))) & 0xffff;

	return row * seg + ((bits * seg) >> 16);
}

PACER_INLINE __u32 pacer_line_blocked(__u64 h, __u32 lines_log2)
{
	return (__u32)(h & ((1ULL << lines_log2) - 1));
}

/* Total lines in the map for one CPU's (or the shared) copy. */
PACER_INLINE __u64 pacer_total_lines(__u32 kind, __u32 rows, __u32 lines_log2)
{
	return kind == PACER_LAYOUT_ROWS ? (__u64)rows << lines_log2 : 1ULL << lines_log2;
}

/* The epoch field a line re-based at this tick carries. */
PACER_INLINE __u16 pacer_epoch(__u64 tick)
{
	return (__u16)((tick >> PACER_EPOCH_SHIFT) & PACER_EPOCH_MASK) | PACER_EPOCH_WRITTEN;
}

/* Epochs from a line's epoch field to now, modulo 2^15; PACER_BEHIND_NEVER if never written. */
PACER_INLINE __u16 pacer_line_behind(__u16 line_epoch, __u64 tick)
{
	if (!(line_epoch & PACER_EPOCH_WRITTEN))
		return PACER_BEHIND_NEVER;
	return (__u16)(pacer_epoch(tick) - line_epoch) & PACER_EPOCH_MASK;
}

/*
 * Cell indexes are below PACER_LINE_CELLS by construction; masking to the
 * 64-byte line is what lets the BPF verifier see the access is in bounds
 * (it cannot follow the division in pacer_seg_cells()).
 */
#define PACER_CELL(l, c) ((l)->bytes[(c) & (PACER_LINE_BYTES - 1)])

/*
 * Shared sketch, several CPUs: one CPU's clock reading can be older than
 * what another has already written: for the instant the clock moves, or
 * because a CPU was held up (an interrupt, a preempted vCPU) between reading
 * the clock and touching the sketch.  From the lagging CPU, a cell just
 * written by the leading one has a modular age near 255, and its line is an
 * epoch or more "ahead" (behind = 0xffff, 0xfffe, ...).  Neither occurs on
 * one CPU: while a line is less than two epochs behind every age is below
 * 192 (see the top of this file).  So an age from 192 up is a cell from a
 * moment ago (age 0), and a line up to PACER_EPOCH_AHEAD_MAX epochs ahead
 * is current: read as old, the first would admit a source just admitted;
 * re-based, the second would be moved back in time with its newer cells
 * expired, and every CPU would then read it as stale.  The lagging packet's
 * own verdict is exact while its lag is under 64 ticks (2.1 s at the
 * default tick; cells written further ahead alias).  The price of the
 * exception: a line idle for 2^15 - 16 to 2^15 - 1 epochs (19.5 hours at the
 * default tick) reads as current instead of stale until it is written:
 * false drops at worst, the safe side.
 */
#define PACER_AGE_FUTURE 192
#define PACER_EPOCH_AHEAD_MAX 16

/* Is a line whose epoch is `behind` ours current (the same or a little ahead)? */
PACER_INLINE int pacer_line_current(__u16 behind)
{
	return behind == 0 || behind > (__u16)(PACER_EPOCH_MASK - PACER_EPOCH_AHEAD_MAX);
}

/* Age of one cell in ticks, or PACER_AGE_STALE if its line is too old to tell. */
PACER_INLINE __u32 pacer_cell_age(const struct pacer_line *l, __u32 cell, __u64 tick)
{
	__u16 behind = pacer_line_behind(l->epoch, tick);
	__u8 age;

	if (behind >= 2 && !pacer_line_current(behind))
		return PACER_AGE_STALE;
	age = (__u8)((__u8)tick - PACER_CELL(l, cell));
	return age >= PACER_AGE_FUTURE ? 0 : age;
}

/*
 * Re-base one 8-byte word of a line (cells are bytes; the word is a
 * little-endian load, as on BPF and x86): cells older than PACER_MAX_THRESH
 * become exactly that old, "future" cells (see pacer_cell_age) are fresh and
 * kept; with expire_all (the line was two or more epochs behind) every cell
 * expires.  ncells: 8, or 6 for the last word, whose top 16 bits (the epoch)
 * are returned unchanged.  Word-wise so the BPF side can install the result
 * with one compare-and-swap.
 */
#if PACER_MAX_THRESH != 64 || PACER_AGE_FUTURE != 192
#error "pacer_rebase_word's bit test assumes the age window [64, 192)"
#endif
PACER_INLINE __u64 pacer_rebase_word(__u64 w, __u32 ncells, __u64 tick, int expire_all)
{
	const __u64 ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	__u64 now = (__u64)(__u8)tick * ones;
	__u64 expired = (__u64)(__u8)(tick - PACER_MAX_THRESH) * ones;
	__u64 cells = ncells >= 8 ? ~0ULL : (1ULL << (8 * ncells)) - 1;
	__u64 age, pick;

	/*
	 * Branch-free, all eight bytes at once (the verifier then sees one path,
	 * not 2^8): age = now - cell per byte, without borrows across bytes.
	 * An age in [64, 192) (PACER_MAX_THRESH up to PACER_AGE_FUTURE) has its
	 * top two bits 01 or 10, i.e. bit 7 != bit 6.
	 */
	age = ((now | high) - (w & ~high)) ^ ((now ^ ~w) & high);
	pick = ((age >> 7) ^ (age >> 6)) & ones;
	pick = expire_all ? ~0ULL : pick * 0xff;
	pick &= cells;
	return (w & ~pick) | (expired & pick);
}

#define PACER_LINE_WORDS (PACER_LINE_BYTES / 8)
#define PACER_LAST_WORD_CELLS (PACER_LINE_CELLS - 8 * (PACER_LINE_WORDS - 1))

/* The last word with its cells re-based and the epoch set. */
PACER_INLINE __u64 pacer_rebase_last_word(__u64 w, __u64 tick, int expire_all)
{
	w = pacer_rebase_word(w, PACER_LAST_WORD_CELLS, tick, expire_all);
	return (w & 0x0000ffffffffffffULL) | ((__u64)pacer_epoch(tick) << 48);
}

/*
 * Bring a line to the current epoch before writing into it (see the top of
 * this file).  Runs at most once per line per epoch, and is safe while other
 * CPUs write the line (shared placement; per-CPU lines take the same path,
 * uncontended).  A plain read-modify-write of the cells could overwrite a
 * cell another CPU just wrote with "expired" and let that source through
 * again.  The rule that makes it safe: a writer writes a cell only into a
 * line whose epoch it sees as current (otherwise it re-bases first), and the
 * epoch is installed last, after every other word has been re-based.  So:
 *  - each of the first seven words is read, then the epoch is read again: if
 *    an epoch has been installed since, another CPU finished this re-base
 *    and writers may already have written fresh cells here: stop;
 *  - otherwise the word is swapped from the value read.  A failed swap means
 *    a writer got in after the read: re-base that word by age alone, which
 *    keeps every fresh cell, or leave it (an un-re-based cell can only alias
 *    as recent: a false drop, never a false pass);
 *  - the last word (6 cells and the epoch) is swapped last, installing the
 *    epoch.  Its cells can only have changed meanwhile by a CPU whose clock
 *    is still in the line's epoch, which rules out expire_all (two epochs is
 *    64 ticks of skew), so one retry by age alone finishes it.
 * Several CPUs can re-base one line at once: with the same stale epoch they
 * compute the same expiries, so their swaps agree.  x86's ordered loads and
 * the swaps' full barriers give the order the argument needs; the loads are
 * volatile so the compiler keeps it too.
 */
PACER_INLINE int pacer_rebase_word_shared(__u64 *w, __u64 *last, __u16 stale, __u64 tick,
					  int expire_all)
{
	__u64 old = *(volatile __u64 *)w, new, seen;

	if ((__u16)(*(volatile __u64 *)last >> 48) != stale)
		return -1; /* re-based by another CPU meanwhile */
	new = pacer_rebase_word(old, 8, tick, expire_all);
	if (new == old)
		return 0;
	seen = __sync_val_compare_and_swap(w, old, new);
	if (seen != old) {
		new = pacer_rebase_word(seen, 8, tick, 0); /* a cell in it is fresh now */
		if (new != seen)
			__sync_val_compare_and_swap(w, seen, new);
	}
	return 0;
}

/*
 * Out of line: one copy of the unrolled loop.  On BPF that copy is the
 * body of pacer_line_rebase_global() below, so a re-base is one call.
 */
#ifdef __bpf__
#define PACER_REBASE_FN PACER_INLINE
#else
#define PACER_REBASE_FN PACER_NOINLINE
#endif
PACER_REBASE_FN void pacer_line_rebase(struct pacer_line *l, __u64 tick)
{
	__u64 *w = (__u64 *)l->bytes, *last = &w[PACER_LINE_WORDS - 1], old, new, seen;
	__u16 stale, behind;
	int i, expire_all;

	old = *(volatile __u64 *)last;
	stale = (__u16)(old >> 48);
	behind = pacer_line_behind(stale, tick);
	if (pacer_line_current(behind))
		return; /* current, or re-based by a CPU ahead of us */
	expire_all = behind >= 2;
PACER_UNROLL
	for (i = 0; i < PACER_LINE_WORDS - 1; i++)
		if (pacer_rebase_word_shared(&w[i], last, stale, tick, expire_all) < 0)
			return;
	new = pacer_rebase_last_word(old, tick, expire_all);
	seen = __sync_val_compare_and_swap(last, old, new);
	if (seen != old && (__u16)(seen >> 48) == stale)
		__sync_val_compare_and_swap(last, seen, pacer_rebase_last_word(seen, tick, 0));
}

#ifdef __bpf__
/*
 * Out of line, and global: the verifier checks the unrolled loop once, not
 * once per row and path that re-bases a line (static subprograms are
 * checked again at every call).  It checks its pointer itself.
 */
__attribute__((noinline)) int pacer_line_rebase_global(struct pacer_line *l, __u64 tick)
{
	if (l)
		pacer_line_rebase(l, tick);
	return 0;
}
#define PACER_LINE_REBASE pacer_line_rebase_global
#else
#define PACER_LINE_REBASE pacer_line_rebase
#endif

/*
 * Raise a cell to age nage (now - nage; 0 for "now"); returns 1 if the line
 * had to be re-based.
 */
PACER_INLINE int pacer_cell_touch(struct pacer_line *l, __u32 cell, __u64 tick, __u32 nage)
{
	int rebased = 0;
	__u8 age;

	/* A line already re-based into a later epoch by a CPU ahead of us is current. */
	if (!pacer_line_current(pacer_line_behind(l->epoch, tick))) {
		PACER_LINE_REBASE(l, tick);
		rebased = 1;
	}
	/*
	 * max(cell, now - nage): a younger cell (or one a tick ahead, written
	 * by a CPU whose clock moved first) stays.  Not storing also keeps the
	 * line clean, which matters in a shared sketch: a store, even of the
	 * same value, takes the line away from every other CPU's cache.
	 */
	age = (__u8)((__u8)tick - PACER_CELL(l, cell));
	if (age > nage && age < PACER_AGE_FUTURE)
		PACER_CELL(l, cell) = (__u8)(tick - nage);
	return rebased;
}

/*
 * Where each row of a key lives.  Fills line_idx[] and cell[] for rows
 * 0..rows-1.  Loops run a fixed PACER_MAX_ROWS times so the BPF compiler
 * unrolls them and every array index is a constant.
 */
PACER_INLINE void pacer_slots(__u32 kind, __u32 rows, __u32 lines_log2, __u64 h,
			      __u32 line_idx[PACER_MAX_ROWS], __u32 cell[PACER_MAX_ROWS])
{
	__u32 r;

	if (kind == PACER_LAYOUT_BLOCKED) {
		__u64 seg_lo = pacer_hash_word(h, 1);
		__u64 seg_hi = rows > 4 ? pacer_hash_word(h, 2) : 0;
		__u32 line = pacer_line_blocked(h, lines_log2);

PACER_UNROLL
		for (r = 0; r < PACER_MAX_ROWS; r++) {
			if (r < rows) {
				line_idx[r] = line;
				cell[r] = pacer_seg_cell(r < 4 ? seg_lo : seg_hi, r, rows);
			}
		}
		return;
	}
	{
		__u64 w1 = rows > 2 ? pacer_hash_word(h, 1) : 0;
		__u64 w2 = rows > 4 ? pacer_hash_word(h, 2) : 0;
		__u64 w3 = rows > 6 ? pacer_hash_word(h, 3) : 0;

PACER_UNROLL
		for (r = 0; r < PACER_MAX_ROWS; r++) {
			if (r < rows)
				pacer_slot_rows(r < 2 ? h : r < 4 ? w1 : r < 6 ? w2 : w3, r, lines_log2,
						&line_idx[r], &cell[r]);
		}
	}
}

/*
 * A key's age: the oldest of its rows' ages, i.e. the minimum over rows of
 * the last-write time.  PACER_AGE_STALE when some row remembers nothing.
 */
PACER_INLINE __u32 pacer_key_age(struct pacer_line *const line[PACER_MAX_ROWS],
				 const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick)
{
	__u32 age = 0, r;

PACER_UNROLL
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows) {
			__u32 a = pacer_cell_age(line[r], cell[r], tick);

			age = a > age ? a : age;
		}
	}
	return age;
}

/* Raise every cell of the key to age nage (the max of old and new); returns lines re-based. */
PACER_INLINE __u32 pacer_key_update(struct pacer_line *const line[PACER_MAX_ROWS],
				    const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
				    __u32 nage)
{
	__u32 rebased = 0, r;

PACER_UNROLL
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows)
			rebased += pacer_cell_touch(line[r], cell[r], tick, nage);
	}
	return rebased;
}

/* Drop iff the key was seen fewer than thresh ticks ago. */
PACER_INLINE int pacer_is_recent(__u32 age, __u32 thresh)
{
	return age < thresh;
}

/* Should this packet update the sketch? pace: only when admitted. */
PACER_INLINE int pacer_should_update(__u32 policy, int drop)
{
	return !drop || policy == PACER_POLICY_QUIET;
}

#endif /* PACER_SKETCH_H */
