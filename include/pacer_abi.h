/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Types shared by the XDP datapath and userspace: the layout of every map
 * value the CLI reads or writes.  Fixed-width __u types only, so the same
 * bytes mean the same thing on both sides.
 */
#ifndef PACER_ABI_H
#define PACER_ABI_H

#include <linux/types.h>
#include <linux/bpf.h>
#include "pacer_class.h"

#define PACER_ABI_VERSION 7
#define PACER_LAYOUT_MAGIC 0x70616365u /* "pace" */

/* Per-CPU counters; PACER_STAT_MAX must stay last. */
enum pacer_stat {
	PACER_STAT_SEEN,              /* every frame the program ran on */
	PACER_STAT_PASSED,            /* IP frames admitted by pacing, or by a class whose action is pass */
	PACER_STAT_DROPPED_RECENT,    /* IP frames whose source was seen < interval ago */
	PACER_STAT_NONIP_PASSED,      /* not IPv4/IPv6: always passed */
	PACER_STAT_MALFORMED_PASSED,  /* truncated/invalid headers, verdict pass */
	PACER_STAT_MALFORMED_DROPPED, /* truncated/invalid headers, verdict drop */
	PACER_STAT_IPV4,              /* well-formed IPv4 frames */
	PACER_STAT_IPV6,              /* well-formed IPv6 frames */
	PACER_STAT_LINE_REFRESH,      /* sketch lines re-based to a new epoch */
	PACER_STAT_RECORDED,          /* sample records written to the ring buffer */
	PACER_STAT_RECORD_LOST,       /* sample records lost: ring buffer full */
	PACER_STAT_KEY_INIT,          /* hash key words generated in the datapath */
	PACER_STAT_MAP_ERROR,         /* sketch line lookup failed: dropped (fail closed) */
	PACER_STAT_DROPPED_BUDGET,    /* admitted by pacing, dropped by the global budget */
	PACER_STAT_BUDGET_NO_BUCKET,  /* ... of which: bucket ring full (after a live change) */
	PACER_STAT_BUDGET_RETURNING,  /* budget admissions of returning sources (reserve on) */
	PACER_STAT_TABLE_FULL,        /* table: no free entry in either line: dropped (one-sided) */
	PACER_STAT_TABLE_EVICT,       /* table: a fresh entry replaced (opposite mode) */
	PACER_STAT_TABLE_RACE,        /* table, shared: lost an entry to another CPU: dropped */
	PACER_STAT_EXEMPT_PASSED,     /* source on the exempt list: passed (pacer_class.h) */
	PACER_STAT_DENY_DROPPED,      /* source on the deny list: dropped */
	PACER_STAT_UNCLASSIFIED,      /* classes configured, none matched: passed */
	PACER_STAT_CLASS_DROPPED,     /* dropped by a class whose action is drop */
	/*
	 * Observe mode (enum pacer_mode): judged to drop as above, passed.
	 * One per drop verdict, each beside the enforced count it shadows.
	 */
	PACER_STAT_OBSERVED_RECENT,    /* would be dropped_recent */
	PACER_STAT_OBSERVED_BUDGET,    /* would be dropped_budget */
	PACER_STAT_OBSERVED_CLASS,     /* would be dropped_class */
	PACER_STAT_OBSERVED_DENY,      /* would be deny_dropped */
	PACER_STAT_OBSERVED_MALFORMED, /* would be malformed_dropped */
	/* The tables' sweep (bpf/lib/sweep.h), counted by its timer, not per frame: */
	PACER_STAT_SWEEP_ROUNDS,      /* rounds run */
	PACER_STAT_SWEEP_LINES,       /* lines they visited */
	PACER_STAT_SWEEP_CLEARED,     /* expired entries they cleared */
	PACER_STAT_MAX,
};

enum pacer_policy {
	PACER_POLICY_PACE = 0,  /* update only on admit: one packet per interval */
	PACER_POLICY_QUIET = 1, /* update on every packet: pass after a quiet interval */
	PACER_POLICY_MAX,
};

/*
 * Observe or enforce a drop verdict (live).  Every stage judges and writes
 * its state alike in both; only the final action differs: observe counts
 * the verdict as would-drop (PACER_STAT_OBSERVED_*) and passes the packet
 * (XDP_PASS: in a libxdp chain it goes on to the next program).  The
 * global mode is pacer_config.mode (0 reads as enforce); a class's and
 * the deny list's own mode, when set, overrides it (0: follow the global
 * one).  A map error still drops (fail closed): it is no verdict.
 */
enum pacer_mode {
	PACER_MODE_GLOBAL = 0,  /* a class or the deny list: as pacer_config.mode */
	PACER_MODE_ENFORCE = 1,
	PACER_MODE_OBSERVE = 2,
	PACER_MODE_MAX,
};

/* Whether a drop verdict under own (a class's or the deny list's mode) and global is observed. */
#define PACER_MODE_OBSERVES(own, global) \
	(((own) ? (own) : (global)) == PACER_MODE_OBSERVE)

enum pacer_verdict_cfg {
	PACER_MALFORMED_PASS = 0,
	PACER_MALFORMED_DROP = 1,
};

enum pacer_placement {
	PACER_PLACEMENT_PERCPU = 0,
	PACER_PLACEMENT_SHARED = 1,
};

enum pacer_layout_kind {
	PACER_LAYOUT_ROWS = 0,    /* each row its own array: d cache lines per key */
	PACER_LAYOUT_BLOCKED = 1, /* all d cells of a key in one cache line */
};

/* What remembers the sources (fixed at load). */
enum pacer_backend {
	PACER_BACKEND_SKETCH = 0,
	PACER_BACKEND_TABLE = 1,
	PACER_BACKEND_DENSE = 2, /* the dense table: 21-bit entries, any line count (pacer_dense.h) */
	PACER_BACKEND_MAX,
};

enum pacer_on_full {
	PACER_TBL_FULL_DROP = 0,  /* table, one-sided: no slot -> drop */
	PACER_TBL_FULL_EVICT = 1, /* table, opposite: no slot -> replace the oldest */
	PACER_TBL_FULL_MAX,
};

enum pacer_clock {
	PACER_CLOCK_COARSE = 0,  /* bpf_ktime_get_coarse_ns on every packet */
	PACER_CLOCK_PRECISE = 1, /* bpf_ktime_get_ns on every packet */
	PACER_CLOCK_CACHED = 2,  /* coarse time refreshed by a BPF timer: no helper per packet */
};

/*
 * The datapath's timers, one per element of pacer_clock.  The cached clock:
 * a BPF timer stores the coarse time here a few times per tick; packets read
 * it.  The table's sweep (bpf/lib/sweep.h): a timer that clears expired
 * entries a chunk of lines at a time.  The guarantees hold in this clock; it can lag real
 * time by a refresh period plus timer latency (see docs/design.md, "Clock").
 */
struct pacer_clock_state {
	struct bpf_timer timer;
	union {
		__u64 now_ns;    /* the cached clock (element 0 of pacer_clock) */
		__u64 next_line; /* the table's sweep (element 1): where its next round starts */
	};
	__u64 armed;  /* 0: not yet; 1: timer running; else: arming failed, retry after this coarse time */
};

/*
 * Sketch storage: lines of 64 bytes, one cache line each.  A line holds 62
 * one-byte cells and a 16-bit epoch in its last two bytes.  A cell stores the low 8 bits of the
 * tick (2^tick_shift ns) at which it was last updated; the epoch says when
 * the line was last re-based, which is what keeps a wrapped cell from
 * aliasing as recent (see pacer_sketch.h).
 */
#define PACER_LINE_BYTES 64
#define PACER_LINE_CELLS 62
#define PACER_MAX_ROWS 8
/* --width, cells per row: a power of two in this range. */
#define PACER_MIN_WIDTH 64
#define PACER_MAX_WIDTH (1u << 30)
#define PACER_EPOCH_SHIFT 6  /* an epoch is 64 ticks */
#define PACER_MAX_THRESH 64  /* threshold ticks; needs 2*epoch + thresh <= 256 */
#define PACER_MIN_THRESH 2

/*
 * Bounds on the tick and the interval, one definition for load, set, the
 * record file's header, analyze and the simulator: a tick of at most 2^40
 * ns (18.3 minutes), an interval of at most PACER_MAX_THRESH - 1 such ticks
 * (19.2 hours).  They keep every tick and threshold computation in 64 bits.
 */
#define PACER_TICK_SHIFT_MAX 40
#define PACER_TICK_MAX_NS (1ULL << PACER_TICK_SHIFT_MAX)
#define PACER_INTERVAL_MAX_NS ((PACER_MAX_THRESH - 1ULL) << PACER_TICK_SHIFT_MAX)

struct pacer_line {
	union {
		__u8 bytes[PACER_LINE_BYTES];
		struct {
			__u8 cell[PACER_LINE_CELLS];
			__u16 epoch;
		};
	};
};

/*
 * The program's variant (.rodata.variant, fixed at load): the optional
 * stages it carries.  The verifier reads the word as a constant and drops
 * the stages whose bit is clear, so a program pays only for what is on
 * (docs/design.md, Program variants).  A stage whose bit is clear is off
 * whatever the live settings say: the CLI swaps in a variant with the bit
 * before it turns the stage on, and one without it only after it turned
 * the stage off.  The compiled default, PACER_VARIANT_ALL, carries every
 * stage (what `ip link set dev X xdp obj` attaches); a program of a
 * release without the word reads as it.
 */
enum pacer_feature {
	PACER_F_CLASSES = 1u << 0,  /* traffic classes (pacer_config.class_sel) */
	PACER_F_LISTS = 1u << 1,    /* the exempt and deny lists (list_sel) */
	PACER_F_BUDGET = 1u << 2,   /* the global budget (pacer_budget_cfg.limit) */
	PACER_F_SAMPLING = 1u << 3, /* sampled records (sample_src/pkt_thresh) */
	PACER_F_OBSERVE = 1u << 4,  /* observe mode: global, the deny list's or a class's */
	PACER_F_COUNT = 5,
};
#define PACER_VARIANT_ALL ((1u << PACER_F_COUNT) - 1)

/*
 * Fixed at load (.rodata): changing any of it changes what the sketch bytes
 * mean, so it takes a reload.
 */
struct pacer_layout {
	__u32 magic;          /* PACER_LAYOUT_MAGIC */
	__u32 abi_version;    /* PACER_ABI_VERSION */
	__u32 rows;           /* d, 1..PACER_MAX_ROWS */
	__u32 kind;           /* enum pacer_layout_kind */
	__u32 placement;      /* enum pacer_placement */
	__u32 clock;          /* enum pacer_clock */
	__u32 tick_shift;     /* a tick is 2^tick_shift ns */
	__u32 lines_log2;     /* rows: lines per row; blocked: lines in total */
	__u32 copies;         /* copies of the state in the map: possible CPUs (percpu) or 1 */
	__u32 backend;        /* enum pacer_backend */
	__u32 on_full;        /* table, dense: enum pacer_on_full */
	__u32 lines;          /* dense: lines per copy, any count (lines_log2: its ceiling's log2); else 0 */
};

/*
 * Changeable while attached (.data): the datapath reads it on every packet.
 * interval_ns and rate_n are what the operator asked for (--interval L is
 * rate 1 per L; --rate N/T is rate_n N per interval_ns T); thresh_ticks and
 * burst_ticks are the ticks the datapath compares against (pacer_rate.h).
 */
struct pacer_config {
	__u64 interval_ns;        /* T of --rate N/T; L of --interval L */
	__u64 hash_key[2];        /* zero words are generated by the datapath */
	__u64 sample_src_thresh;  /* record sources whose sample hash < this; 0 off, 2^32 all */
	__u64 sample_pkt_thresh;  /* also record packets whose random u32 < this */
	__u32 thresh_ticks;
	__u32 policy;             /* enum pacer_policy */
	__u32 malformed;          /* enum pacer_verdict_cfg */
	__u32 prefix4;            /* 0..32 */
	__u32 prefix6;            /* 0..128 */
	__u32 burst_ticks;        /* GCRA burst tolerance in ticks; 0 with N = 1 */
	__u32 rate_n;             /* N of --rate N/T; 1 for --interval (0 reads as 1) */
	__u32 class_sel;          /* PACER_CLASS_SEL(bank, count); 0: no classes (pacer_class.h) */
	__u32 list_sel;           /* PACER_LIST_V4 | PACER_LIST_V6: which lists hold prefixes */
	__u32 mode;               /* enum pacer_mode: ENFORCE (0 reads as it) or OBSERVE */
	__u32 deny_mode;          /* enum pacer_mode of the deny list; GLOBAL: as mode */
	__u32 pad;
};

struct pacer_counters {
	__u64 c[PACER_STAT_MAX];
};

/* A sampled packet, as written to the ring buffer. */
#define PACER_REC_PASS 0
#define PACER_REC_DROP 1
#define PACER_REC_SAMPLED_SOURCE 0x1 /* flags: chosen by source hash */
#define PACER_REC_SAMPLED_PACKET 0x2 /* flags: chosen by packet sampling */
#define PACER_REC_KEY 0x4            /* flags: key_dport and key_dst hold the deciding class's key */
#define PACER_REC_OBSERVED 0x8       /* flags: verdict drop, passed in observe mode (file minor 3) */
#define PACER_AGE_NEVER 0xffffffffu  /* est_age_ticks: no recent cell */

struct pacer_record {
	__u64 ts_ns;          /* datapath clock (see layout.clock) */
	__u8 addr[16];        /* masked source; IPv4 in the first 4 bytes */
	__u8 family;          /* 4 or 6 */
	__u8 prefix;          /* prefix length the key was masked to */
	__u8 verdict;         /* PACER_REC_PASS / PACER_REC_DROP */
	__u8 flags;
	__u32 est_age_ticks;  /* sketch estimate of age, in ticks */
	__u32 cpu;
	__u32 thresh_ticks;   /* threshold in force for this packet */
	__u32 class_slot;     /* the deciding class's stat_slot + 1; 0: no classes */
	__u16 key_dport;      /* PACER_KEY_SRC_DPORT: the key's destination port (host order); else 0 */
	__u16 pad;            /* 0 */
	__u8 key_dst[16];     /* PACER_KEY_SRC_DST: the key's destination as struct pacer_src holds
			       * it (IPv4 in the first 4 bytes); else zero */
};

#endif /* PACER_ABI_H */
