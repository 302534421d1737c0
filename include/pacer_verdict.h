/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sketch's verdict for one packet, given its lines, shared by the XDP
 * program and the userspace simulator (sketch_sim.c), so the property and
 * race tests run the code that decides in the datapath.  Shared placement
 * admits through pacer_admit_exclusive(); the compare-and-swap builtins it
 * uses build for BPF and for the host alike.
 */
#ifndef PACER_VERDICT_H
#define PACER_VERDICT_H

#include "pacer_sketch.h"
#include "pacer_rate.h"

/*
 * Shared: raise a cell to age nage by compare-and-swap of its word.  With a
 * rate, writers at one tick write different ages (one per credit spent), so
 * a plain store of an older one could undo a younger one and hand out a
 * credit twice.  -1 when other writers kept winning (the caller drops).
 */
#define PACER_RAISE_TRIES 4
PACER_INLINE int pacer_cell_raise_shared(struct pacer_line *l, __u32 cell, __u64 tick, __u32 nage)
{
	__u64 *word = (__u64 *)&l->bytes[cell & (PACER_LINE_BYTES - 8)], w, want;
	__u32 shift = (cell & 7) * 8, i;
	__u8 age;

	for (i = 0; i < PACER_RAISE_TRIES; i++) {
		w = *(volatile __u64 *)word;
		age = (__u8)((__u8)tick - (__u8)(w >> shift));
		if (age <= nage || age >= PACER_AGE_FUTURE)
			return 0; /* as young already, or written a tick ahead of us */
		want = (w & ~(0xffULL << shift)) | ((__u64)(__u8)(tick - nage) << shift);
		if (__sync_val_compare_and_swap(word, w, want) == w)
			return 0;
	}
	return -1;
}

/*
 * Shared placement: admit a key on at most one CPU.  Without this, two CPUs
 * that read the key's cells before either writes them both admit it.
 *
 * The deciding row r* is the first row with the largest age (the one that
 * made the key look old).  Every other row is written first (a max by
 * compare-and-swap, pacer_cell_raise_shared()); r*'s cell last, by compare-and-swap of its 8-byte word, after
 * checking on that same word that the cell is still old.  A second CPU
 * evaluating the key meanwhile sees the other rows either untouched (so it
 * picks the same r* and one of the two swaps fails) or already fresh (r* is
 * then still its only old row, same swap).  If it reads r* after the swap,
 * the cell is fresh and it drops.  The loser drops: the key was admitted an
 * instant ago.  A swap can also fail because a colliding key wrote the same
 * word at that instant: a false drop, on the safe side.  One CPU alone
 * always wins, writing what pacer_key_update() writes: the sequential
 * semantics are unchanged.  With a rate (N > 1) every row gets the age
 * a' the key's estimate gives (pacer_rate.h), and r*'s swap goes through
 * only if its cell still gives that same a': a CPU that admitted the key
 * meanwhile moved the cell, so of two CPUs spending the same credit one
 * wins.  Returns 0 if admitted, -1 if not; adds the lines it re-based to
 * *rebased.
 */
PACER_INLINE int pacer_admit_exclusive(struct pacer_line *const line[PACER_MAX_ROWS],
				       const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
				       const struct pacer_rate *rate, __u32 *rebased)
{
	__u32 rstar = 0, oldest = 0, r, c, shift, age, nage;
	__u64 *word, w, fresh;
	struct pacer_line *l;

PACER_UNROLL
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows) {
			__u32 a = pacer_cell_age(line[r], cell[r], tick);

			if (a > oldest) {
				oldest = a;
				rstar = r;
			}
		}
	}
	nage = pacer_rate_next_age(oldest, rate);
PACER_UNROLL
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows && r != rstar) {
			l = line[r];
			if (!pacer_line_current(pacer_line_behind(l->epoch, tick))) {
				PACER_LINE_REBASE(l, tick);
				(*rebased)++;
			}
			if (pacer_cell_raise_shared(l, cell[r], tick, nage) < 0)
				return -1;
		}
	}
	rstar &= PACER_MAX_ROWS - 1;
	l = line[rstar];
	c = cell[rstar];
	/* Same re-base rule as pacer_cell_touch(), so the swap sees a current line. */
	if (!pacer_line_current(pacer_line_behind(l->epoch, tick))) {
		PACER_LINE_REBASE(l, tick);
		(*rebased)++;
	}
	word = (__u64 *)&l->bytes[c & (PACER_LINE_BYTES - 8)];
	shift = (c & 7) * 8;
	w = *(volatile __u64 *)word;
	age = (__u8)((__u8)tick - (__u8)(w >> shift));
	/* Refreshed since we looked (or written a tick ahead of us): admitted elsewhere. */
	if (age < rate->thresh || age >= PACER_AGE_FUTURE || pacer_rate_next_age(age, rate) != nage)
		return -1;
	fresh = (w & ~(0xffULL << shift)) | ((__u64)(__u8)(tick - nage) << shift);
	return __sync_val_compare_and_swap(word, w, fresh) == w ? 0 : -1;
}

/*
 * Pacing's judgement of one packet, before the global budget: 1 to drop
 * (the key is recent), 0 if pacing admits it, to be written by
 * pacer_sketch_commit() only once every later stage admitted it too; a
 * packet a later stage refuses leaves the cells as they were.  Writes only
 * under quiet, for a dropped packet: cells already younger than the
 * threshold are refreshed, so a flood of new keys writes nothing here.
 * *age gets the key's age; *rebased counts the lines re-based.
 */
PACER_INLINE int pacer_sketch_judge(struct pacer_line *const line[PACER_MAX_ROWS],
				    const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
				    const struct pacer_rate *rate, __u32 policy, __u32 *age,
				    __u32 *rebased)
{
	*age = pacer_key_age(line, cell, rows, tick);
	if (!pacer_is_recent(*age, rate->thresh))
		return 0;
	/* quiet: a dropped packet leaves no credit (age 0), as --interval's quiet does. */
	if (policy == PACER_POLICY_QUIET)
		*rebased += pacer_key_update(line, cell, rows, tick, 0);
	return 1;
}

/*
 * Write an admission that pacer_sketch_judge() allowed and every later
 * stage admitted, at tick (the admission's time: the judgement's, or later
 * if the budget's clock was ahead; a later tick only makes the cells
 * younger).  The key's age is read again at that tick, so per-CPU the write
 * is what a judgement at tick would write.  Shared: pacer_admit_exclusive(),
 * which checks on the cells themselves that no other CPU admitted the key
 * since the judgement.  0 if admitted, 1 to drop (lost to another CPU).
 */
PACER_INLINE int pacer_sketch_commit(struct pacer_line *const line[PACER_MAX_ROWS],
				     const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
				     const struct pacer_rate *rate, __u32 placement,
				     __u32 *rebased)
{
	if (placement == PACER_PLACEMENT_SHARED)
		return pacer_admit_exclusive(line, cell, rows, tick, rate, rebased) < 0;
	*rebased += pacer_key_update(line, cell, rows, tick,
				     pacer_rate_next_age(pacer_key_age(line, cell, rows, tick), rate));
	return 0;
}

/*
 * pacer_sketch_commit() right after pacer_sketch_judge() admitted the key
 * at the same tick with age, no stage between: per-CPU, nothing wrote the
 * key's cells since the judgement read them, so they are raised from the
 * judged age without being read again (one read of the cells per packet);
 * shared placement re-checks on the cells as pacer_sketch_commit() does.
 * 0 admitted, 1 to drop.
 */
PACER_INLINE int pacer_sketch_commit_judged(struct pacer_line *const line[PACER_MAX_ROWS],
					    const __u32 cell[PACER_MAX_ROWS], __u32 rows,
					    __u64 tick, const struct pacer_rate *rate,
					    __u32 placement, __u32 age, __u32 *rebased)
{
	if (placement == PACER_PLACEMENT_SHARED)
		return pacer_admit_exclusive(line, cell, rows, tick, rate, rebased) < 0;
	*rebased += pacer_key_update(line, cell, rows, tick, pacer_rate_next_age(age, rate));
	return 0;
}

/*
 * One packet with no stage after pacing: judge, then commit at once.
 * 1 to drop, 0 to admit; *age gets the key's age; *rebased counts the
 * lines re-based.
 */
PACER_INLINE int pacer_sketch_packet(struct pacer_line *const line[PACER_MAX_ROWS],
				     const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
				     const struct pacer_rate *rate, __u32 policy, __u32 placement,
				     __u32 *age, __u32 *rebased)
{
	if (pacer_sketch_judge(line, cell, rows, tick, rate, policy, age, rebased))
		return 1;
	return pacer_sketch_commit_judged(line, cell, rows, tick, rate, placement, *age, rebased);
}

#endif /* PACER_VERDICT_H */
