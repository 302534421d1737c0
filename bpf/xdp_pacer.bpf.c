// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer datapath: admit at most one packet per interval per source
 * prefix, judged by a recency sketch (see include/pacer_sketch.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_abi.h"

struct pacer_line;
static __noinline void rebase_line(struct pacer_line *l, __u64 tick);
#define PACER_LINE_REBASE rebase_line
#include "pacer_sketch.h"
#include "pacer_place.h"
#include "parsing.h"

/*
 * Sized by the loader (copies x lines per copy); these defaults are what
 * `ip link ... xdp obj` gets.  Mmapable: values start page-aligned, so each
 * line is one cache line (pacer_place.h).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, PACER_DEFAULT_COPIES * (PACER_DEFAULT_ROWS << PACER_DEFAULT_LINES_LOG2));
	__type(key, __u32);
	__type(value, struct pacer_line);
} pacer_sk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_counters);
} pacer_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PACER_DEFAULT_RINGBUF_BYTES);
} pacer_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_clock_state);
} pacer_clock SEC(".maps");

const volatile struct pacer_layout pacer_layout = {
	.magic = PACER_LAYOUT_MAGIC,
	.abi_version = PACER_ABI_VERSION,
	.rows = PACER_DEFAULT_ROWS,
	.kind = PACER_LAYOUT_ROWS,
	.placement = PACER_PLACEMENT_PERCPU,
	.clock = PACER_CLOCK_CACHED,
	.tick_shift = PACER_DEFAULT_TICK_SHIFT,
	.lines_log2 = PACER_DEFAULT_LINES_LOG2,
	.copies = PACER_DEFAULT_COPIES,
	.backend = PACER_BACKEND_SKETCH,
	.on_full = PACER_TBL_FULL_DROP,
};

struct pacer_config pacer_cfg = {
	.interval_ns = PACER_DEFAULT_INTERVAL_NS,
	.thresh_ticks = PACER_DEFAULT_THRESH,
	.policy = PACER_POLICY_PACE,
	.malformed = PACER_MALFORMED_PASS,
	.prefix4 = PACER_DEFAULT_PREFIX4,
	.prefix6 = PACER_DEFAULT_PREFIX6,
};

/* Refresh a few times per tick; finer than a jiffy would only repeat values. */
static __always_inline __u64 clock_period_ns(void)
{
	__u64 p = (1ULL << pacer_layout.tick_shift) / 4;

	return p < 1000000 ? 1000000 : p;
}

static int clock_refresh(void *map, __u32 *key, struct pacer_clock_state *c)
{
	c->now_ns = bpf_ktime_get_coarse_ns();
	bpf_timer_start(&c->timer, clock_period_ns(), 0);
	return 0;
}

/*
 * The first packet arms the timer (whoever loaded the program); until it
 * has fired, packets read the coarse clock themselves.  Arming can fail for
 * good: the kernel refuses timers in a map no user space holds (e.g. pins
 * made in a private bpffs that went away with its mount namespace).  Then
 * `armed` holds the coarse time before which nobody retries: packets pay
 * one coarse-clock helper call each, not a failing timer set-up.  now_ns is
 * written before `armed` says "running", so no CPU reads a stale one.
 */
#define CLOCK_ARM_RETRY_NS 1000000000ULL
#define CLOCK_RUNNING 1

static __noinline __u64 clock_arm(struct pacer_clock_state *c)
{
	__u64 now = bpf_ktime_get_coarse_ns();
	__u64 state = c->armed;
	long err;

	if (state > CLOCK_RUNNING && now < state)
		return now; /* failed recently */
	c->now_ns = now;
	if (__sync_val_compare_and_swap(&c->armed, state, CLOCK_RUNNING) != state)
		return now; /* another CPU is arming it */
	err = bpf_timer_init(&c->timer, &pacer_clock, 1 /* CLOCK_MONOTONIC */);
	if (err == -16 /* -EBUSY: initialised by an earlier, failed attempt */)
		err = 0;
	if (!err)
		err = bpf_timer_set_callback(&c->timer, clock_refresh);
	if (!err)
		err = bpf_timer_start(&c->timer, clock_period_ns(), 0);
	if (err)
		c->armed = now + CLOCK_ARM_RETRY_NS; /* > CLOCK_RUNNING: uptime is past 1 ns */
	return now;
}

static __always_inline __u64 clock_now(void)
{
	struct pacer_clock_state *c;
	__u32 zero = 0;

	if (pacer_layout.clock == PACER_CLOCK_PRECISE)
		return bpf_ktime_get_ns();
	if (pacer_layout.clock == PACER_CLOCK_COARSE)
		return bpf_ktime_get_coarse_ns();
	c = bpf_map_lookup_elem(&pacer_clock, &zero);
	if (!c)
		return bpf_ktime_get_coarse_ns();
	if (c->armed != CLOCK_RUNNING)
		return clock_arm(c);
	return c->now_ns;
}

/* First line of this CPU's copy of the sketch. */
static __always_inline __u32 sketch_base(void)
{
	__u32 lines = (__u32)pacer_total_lines(pacer_layout.kind, pacer_layout.rows,
					       pacer_layout.lines_log2);

	return pacer_copy_base(pacer_layout.placement, pacer_layout.copies,
			       bpf_get_smp_processor_id(), lines);
}

#include "budget_stage.h"

static __always_inline struct pacer_line *line_at(__u32 idx)
{
	return bpf_map_lookup_elem(&pacer_sk, &idx);
}

#include "table.h"

/*
 * Loaded without the CLI there was nobody to draw a key; draw it here.
 * Each word is set once by compare-and-swap and every CPU uses the winner,
 * so racing first packets still agree on the key.
 */
static __noinline void init_hash_key(__u64 *key, struct pacer_counters *st)
{
	int i;

	for (i = 0; i < 2; i++) {
		__u64 fresh, old;

		if (key[i])
			continue;
		fresh = ((__u64)bpf_get_prandom_u32() << 32 | bpf_get_prandom_u32()) | 1;
		old = __sync_val_compare_and_swap(&pacer_cfg.hash_key[i], 0, fresh);
		key[i] = old ? old : fresh;
		st->c[PACER_STAT_KEY_INIT]++;
	}
}

/*
 * Re-base a line that other CPUs may be writing (shared placement; per-CPU
 * lines take the same path, uncontended).  A plain read-modify-write of the
 * cells could overwrite a cell another CPU just wrote with "expired" and let
 * that source through again (the benchmark's referee caught one).  The rule
 * that makes it safe: a writer writes a cell only into a line whose epoch it
 * sees as current (otherwise it re-bases first), and the epoch is installed
 * last, after every other word has been re-based.  So:
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
static __always_inline int rebase_word_shared(__u64 *w, __u64 *last, __u16 stale, __u64 tick,
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

static __noinline void rebase_line(struct pacer_line *l, __u64 tick)
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
#pragma unroll
	for (i = 0; i < PACER_LINE_WORDS - 1; i++)
		if (rebase_word_shared(&w[i], last, stale, tick, expire_all) < 0)
			return;
	new = pacer_rebase_last_word(old, tick, expire_all);
	seen = __sync_val_compare_and_swap(last, old, new);
	if (seen != old && (__u16)(seen >> 48) == stale)
		__sync_val_compare_and_swap(last, seen, pacer_rebase_last_word(seen, tick, 0));
}

/* Map lookups for the key's lines; -1 if one is missing (map sized wrong). */
static __always_inline int lookup_lines(const __u32 idx[PACER_MAX_ROWS],
					struct pacer_line *line[PACER_MAX_ROWS], __u32 rows)
{
	__u32 base = sketch_base();
	int r;

	if (pacer_layout.kind == PACER_LAYOUT_BLOCKED) {
		struct pacer_line *l = line_at(base + idx[0]);

		if (!l)
			return -1;
#pragma unroll
		for (r = 0; r < PACER_MAX_ROWS; r++)
			line[r] = l;
		return 0;
	}
#pragma unroll
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows) {
			line[r] = line_at(base + idx[r]);
			if (!line[r])
				return -1;
		}
	}
	return 0;
}

/*
 * Shared placement: admit a key on at most one CPU.  Without this, two CPUs
 * that read the key's cells before either writes them both admit it (the
 * benchmark saw that: a source passed twice within a nanosecond).
 *
 * The deciding row r* is the first row with the largest age (the one that
 * made the key look old).  Every other row is written first, with plain
 * stores; r*'s cell last, by compare-and-swap of its 8-byte word, after
 * checking on that same word that the cell is still old.  A second CPU
 * evaluating the key meanwhile sees the other rows either untouched (so it
 * picks the same r* and one of the two swaps fails) or already fresh (r* is
 * then still its only old row, same swap).  If it reads r* after the swap,
 * the cell is fresh and it drops.  The loser drops: the key was admitted an
 * instant ago.  A swap can also fail because a colliding key wrote the same
 * word at that instant: a false drop, on the safe side.  One CPU alone
 * always wins, writing what pacer_key_update() writes: the sequential
 * semantics are unchanged.  Returns 0 if admitted, -1 if not.
 */
static __always_inline int admit_exclusive(struct pacer_line *const line[PACER_MAX_ROWS],
					   const __u32 cell[PACER_MAX_ROWS], __u32 rows, __u64 tick,
					   __u32 thresh, struct pacer_counters *st)
{
	__u32 rstar = 0, oldest = 0, r, c, shift, age;
	__u64 *word, w, fresh;
	struct pacer_line *l;

#pragma unroll
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows) {
			__u32 a = pacer_cell_age(line[r], cell[r], tick);

			if (a > oldest) {
				oldest = a;
				rstar = r;
			}
		}
	}
#pragma unroll
	for (r = 0; r < PACER_MAX_ROWS; r++) {
		if (r < rows && r != rstar)
			st->c[PACER_STAT_LINE_REFRESH] += pacer_cell_touch(line[r], cell[r], tick);
	}
	rstar &= PACER_MAX_ROWS - 1;
	l = line[rstar];
	c = cell[rstar];
	/* Same re-base rule as pacer_cell_touch(), so the swap sees a current line. */
	if (!pacer_line_current(pacer_line_behind(l->epoch, tick))) {
		rebase_line(l, tick);
		st->c[PACER_STAT_LINE_REFRESH]++;
	}
	word = (__u64 *)&l->bytes[c & (PACER_LINE_BYTES - 8)];
	shift = (c & 7) * 8;
	w = *(volatile __u64 *)word;
	age = (__u8)((__u8)tick - (__u8)(w >> shift));
	/* Refreshed since we looked (or written a tick ahead of us): admitted elsewhere. */
	if (age < thresh || age >= PACER_AGE_FUTURE)
		return -1;
	fresh = (w & ~(0xffULL << shift)) | ((__u64)(__u8)tick << shift);
	return __sync_val_compare_and_swap(word, w, fresh) == w ? 0 : -1;
}

/* The sketch's verdict for a key with hash h: 1 to drop, -1 if a line is missing. */
static __always_inline int sketch_verdict(__u64 h, __u64 tick, __u32 thresh, __u32 *age,
					  struct pacer_counters *st)
{
	struct pacer_line *line[PACER_MAX_ROWS];
	__u32 idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS];
	__u32 rows = pacer_layout.rows;
	int drop;

	pacer_slots(pacer_layout.kind, rows, pacer_layout.lines_log2, h, idx, cell);
	if (lookup_lines(idx, line, rows) < 0)
		return -1;
	*age = pacer_key_age(line, cell, rows, tick);
	drop = pacer_is_recent(*age, thresh);
	if (!drop && pacer_layout.placement == PACER_PLACEMENT_SHARED) {
		/* Another CPU may be admitting the same source right now: only one wins. */
		if (admit_exclusive(line, cell, rows, tick, thresh, st) < 0)
			drop = 1;
	} else if (pacer_should_update(pacer_cfg.policy, drop)) {
		st->c[PACER_STAT_LINE_REFRESH] += pacer_key_update(line, cell, rows, tick);
	}
	return drop;
}

static __always_inline void record(__u64 h, const struct pacer_src *src, int kind, __u32 prefix,
				   __u64 now_ns, __u32 age, __u32 thresh, int drop,
				   struct pacer_counters *st)
{
	struct pacer_record *rec;
	__u8 flags = 0;

	if (pacer_cfg.sample_src_thresh &&
	    (pacer_mix64(h ^ PACER_SAMPLE_SALT) >> 32) < pacer_cfg.sample_src_thresh)
		flags |= PACER_REC_SAMPLED_SOURCE;
	if (pacer_cfg.sample_pkt_thresh && bpf_get_prandom_u32() < pacer_cfg.sample_pkt_thresh)
		flags |= PACER_REC_SAMPLED_PACKET;
	if (!flags)
		return;

	rec = bpf_ringbuf_reserve(&pacer_events, sizeof(*rec), 0);
	if (!rec) {
		st->c[PACER_STAT_RECORD_LOST]++;
		return;
	}
	rec->ts_ns = now_ns;
	__builtin_memcpy(&rec->addr[0], &src->lo, 8);
	__builtin_memcpy(&rec->addr[8], &src->hi, 8);
	rec->family = kind == PACER_PKT_V4 ? 4 : 6;
	rec->prefix = prefix;
	rec->verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
	rec->flags = flags;
	rec->est_age_ticks = age >= PACER_AGE_STALE ? PACER_AGE_NEVER : age;
	rec->cpu = bpf_get_smp_processor_id();
	rec->thresh_ticks = thresh;
	bpf_ringbuf_submit(rec, 0);
	st->c[PACER_STAT_RECORDED]++;
}

SEC("xdp")
int xdp_pacer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct pacer_counters *st;
	struct pacer_src src;
	__u64 key[2], h, now_ns, tick;
	__u32 zero = 0, prefix, thresh, age;
	int kind, drop, budget_drop;

	st = bpf_map_lookup_elem(&pacer_stats, &zero);
	if (!st)
		return XDP_PASS;
	st->c[PACER_STAT_SEEN]++;

	kind = pacer_parse(data, data_end, &src);
	if (kind == PACER_PKT_NONIP) {
		st->c[PACER_STAT_NONIP_PASSED]++;
		return XDP_PASS;
	}
	if (kind == PACER_PKT_MALFORMED) {
		if (pacer_cfg.malformed == PACER_MALFORMED_DROP) {
			st->c[PACER_STAT_MALFORMED_DROPPED]++;
			return XDP_DROP;
		}
		st->c[PACER_STAT_MALFORMED_PASSED]++;
		return XDP_PASS;
	}

	key[0] = pacer_cfg.hash_key[0];
	key[1] = pacer_cfg.hash_key[1];
	if (!key[0] || !key[1])
		init_hash_key(key, st);

	if (kind == PACER_PKT_V4) {
		prefix = pacer_cfg.prefix4;
		src.lo &= pacer_mask4(prefix);
		h = pacer_hash_v4(key, (__u32)src.lo);
		st->c[PACER_STAT_IPV4]++;
	} else {
		prefix = pacer_cfg.prefix6;
		src.lo &= pacer_mask6_lo(prefix);
		src.hi &= pacer_mask6_hi(prefix);
		h = pacer_hash_v6(key, src.lo, src.hi);
		st->c[PACER_STAT_IPV6]++;
	}

	now_ns = clock_now();
	tick = pacer_now_tick(now_ns, pacer_layout.tick_shift);
	thresh = pacer_cfg.thresh_ticks;
	/* A corrupt threshold must not open the gate: use the strictest. */
	if (thresh < PACER_MIN_THRESH || thresh > PACER_MAX_THRESH)
		thresh = PACER_MAX_THRESH;

	if (pacer_layout.backend == PACER_BACKEND_TABLE)
		drop = table_verdict(h, tick, thresh, &age, st);
	else
		drop = sketch_verdict(h, tick, thresh, &age, st);
	if (drop < 0) {
		st->c[PACER_STAT_MAP_ERROR]++;
		return XDP_DROP;
	}

	/* After pacing: the global budget (counts its own drops; sets the admission time). */
	budget_drop = !drop && budget_stage(h, &now_ns, st);
	if (pacer_cfg.sample_src_thresh | pacer_cfg.sample_pkt_thresh)
		record(h, &src, kind, prefix, now_ns, age, thresh, drop | budget_drop, st);
	if (budget_drop)
		return XDP_DROP;

	if (drop) {
		st->c[PACER_STAT_DROPPED_RECENT]++;
		return XDP_DROP;
	}
	st->c[PACER_STAT_PASSED]++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
