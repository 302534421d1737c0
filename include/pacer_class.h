/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes and the exempt/deny lists: the layout both sides of the
 * datapath agree on.  Fixed-width __u types only (see pacer_abi.h).
 *
 * Order of decisions for an IP packet:
 *   1. the exempt/deny lists (longest source prefix wins): exempt passes,
 *      deny drops; neither is paced nor counted against the budget;
 *   2. with no classes configured: one implicit class (all IP traffic, the
 *      global limit, key = source masked to prefix4/prefix6): today's
 *      behaviour, and the compiled default an `ip link` attach runs;
 *   3. else the first class, in order, whose match fits decides: pass,
 *      drop, or pace under the class's own limit and key; a packet no class
 *      matches passes (counted).
 *
 * Classes live in the array map "pacer_classes" in two banks of
 * PACER_MAX_CLASSES entries.  `set` writes the bank not in use, then flips
 * pacer_config.class_sel (bank and count in one 32-bit store), so a packet
 * sees either the old list or the new one, never half of each.  Every
 * class's pacing state sits in the one sketch or table the program loaded:
 * its keys are hashed with the class's id, so classes never share a key,
 * and a class reloaded unchanged (same match, limit and key: same id)
 * keeps its sources' state.
 */
#ifndef PACER_CLASS_H
#define PACER_CLASS_H

#include <linux/types.h>

#define PACER_MAX_CLASSES 256
#define PACER_CLASS_BANKS 2
#define PACER_CLASS_NAME_LEN 16 /* with its NUL: [a-zA-Z0-9_-], 1..15 bytes */

/*
 * pacer_config.class_sel: count in bits 0-8, bank in bit 9, the bank's
 * compiled dimensions (pacer_cls.h's PACER_CLS_D_*) in bits 10-16; 0 is
 * "no classes".  Bits 17-31 are the install's generation, which the
 * datapath ignores: a userspace reader that finds class_sel unchanged
 * after reading a bank read one install's classes (pacer_classes_read).
 */
#define PACER_CLASS_SEL(bank, n) (((__u32)(bank) << 9) | ((__u32)(n) & 0x1ff))
#define PACER_CLASS_SEL_DIMS(bank, n, dims) (PACER_CLASS_SEL(bank, n) | ((__u32)(dims) & 0x7f) << 10)
#define PACER_CLASS_SEL_GEN(sel, gen) ((sel) | ((__u32)(gen) << 17))
#define PACER_CLASS_SEL_BANK(sel) (((sel) >> 9) & 1)
#define PACER_CLASS_SEL_COUNT(sel) ((sel) & 0x1ff)
#define PACER_CLASS_SEL_DIMS_OF(sel) (((sel) >> 10) & 0x7f)
#define PACER_CLASS_SEL_GEN_OF(sel) ((sel) >> 17)
_Static_assert(PACER_MAX_CLASSES <= 0x1ff, "a class count fits class_sel's 9 bits");

enum pacer_class_action {
	PACER_ACTION_PACE = 0, /* the class's limit decides */
	PACER_ACTION_PASS = 1,
	PACER_ACTION_DROP = 2,
	PACER_ACTION_MAX,
};

/* What a class's sources are keyed by (iptables hashlimit's modes). */
enum pacer_key_mode {
	PACER_KEY_SRC = 0,       /* source masked to the class's prefix4/prefix6 */
	PACER_KEY_SRC_DPORT = 1, /* ... and the destination port (0 for ICMP, fragments) */
	PACER_KEY_SRC_DST = 2,   /* ... and the full destination address */
	PACER_KEY_MAX,
};

/* Match terms (pacer_match.terms): every term set must hold. */
#define PACER_M_PROTO (1u << 0)  /* proto: TCP, UDP, ICMP or ICMPv6 */
#define PACER_M_DPORT (1u << 1)  /* dport_lo..dport_hi: needs TCP or UDP */
#define PACER_M_SPORT (1u << 2)  /* sport_lo..sport_hi: needs TCP or UDP */
#define PACER_M_SYN (1u << 3)    /* TCP SYN set, ACK clear: needs TCP */
#define PACER_M_SRC (1u << 4)    /* source within src/src_mask */
#define PACER_M_DST (1u << 5)    /* destination within dst/dst_mask */
#define PACER_M_VLAN (1u << 6)   /* outermost VLAN id equals vlan */
#define PACER_M_FAMILY (1u << 7) /* family (4 or 6): from src/dst or icmp/icmpv6 */
#define PACER_M_ALL 0xffu

/*
 * Addresses as struct pacer_src holds them (pacer_parse.h): an IPv4 address
 * in the low 32 bits of lo, network byte order in memory; masks likewise,
 * precomputed by userspace so a term is two ANDs and two compares.
 */
struct pacer_match {
	__u32 terms;
	__u8 proto;  /* IPPROTO_* */
	__u8 family; /* 4 or 6 */
	__u16 vlan;
	__u16 dport_lo, dport_hi; /* host byte order, inclusive */
	__u16 sport_lo, sport_hi;
	__u64 src_lo, src_hi, src_mask_lo, src_mask_hi;
	__u64 dst_lo, dst_hi, dst_mask_lo, dst_mask_hi;
};

/*
 * A match's terms but the address compares (pacer_match_quick_fits()).
 * The datapath finds a packet's class through the compiled classifier
 * (pacer_cls.h); the ordered walk over these is the reference it is
 * tested against.
 */
struct pacer_match_quick {
	__u32 terms;
	__u8 proto;
	__u8 family;
	__u16 vlan;
	__u16 dport_lo, dport_hi;
	__u16 sport_lo, sport_hi;
};

struct pacer_class {
	struct pacer_match m;
	__u32 action;       /* enum pacer_class_action */
	__u32 key_mode;     /* enum pacer_key_mode */
	__u32 prefix4;      /* the key's source prefix: 0..32 */
	__u32 prefix6;      /* 0..128 */
	__u32 policy;       /* enum pacer_policy */
	__u32 thresh_ticks; /* the limit, as pacer_config's (pacer_rate.h) */
	__u32 burst_ticks;
	__u32 rate_n;
	__u64 interval_ns;
	__u32 id;        /* mixed into the key's hash: a changed class starts afresh */
	__u32 stat_slot; /* its row of pacer_class_stats: stable while its name is */
	__u32 mode;      /* enum pacer_mode: GLOBAL (0) follows pacer_config.mode */
	__u32 pad;
	char name[PACER_CLASS_NAME_LEN];
};

/* Per-class counters (per-CPU array "pacer_class_stats", PACER_MAX_CLASSES rows). */
enum pacer_class_stat {
	PACER_CSTAT_SEEN,           /* packets the class matched */
	PACER_CSTAT_PASSED,         /* ... passed (paced and admitted, or action pass) */
	PACER_CSTAT_DROPPED,        /* ... dropped by the class's limit or its action drop */
	PACER_CSTAT_DROPPED_BUDGET, /* ... admitted by the class, dropped by the global budget */
	PACER_CSTAT_OBSERVED,       /* ... would be dropped (as DROPPED), passed: observe mode */
	PACER_CSTAT_OBSERVED_BUDGET, /* ... would be dropped_budget, passed: observe mode */
	PACER_CSTAT_MAX,
};

struct pacer_class_counters {
	__u64 c[PACER_CSTAT_MAX];
};

/*
 * The exempt/deny lists: LPM tries "pacer_list4" and "pacer_list6" keyed by
 * source prefix, valued struct pacer_list_value.  pacer_config.list_sel has
 * PACER_LIST_V4/_V6 set while the family's trie holds any prefix, so an
 * empty list costs no lookup.
 */
#define PACER_LIST_MAX_ENTRIES 262144 /* per family; the tries allocate per entry */
#define PACER_LIST_V4 (1u << 0)
#define PACER_LIST_V6 (1u << 1)

enum pacer_list_verdict {
	PACER_LIST_EXEMPT = 1, /* always pass */
	PACER_LIST_DENY = 2,   /* always drop */
	/* new verdicts (modes) take the next values; the datapath treats unknown ones as absent */
};

/* Who put an entry on a list: a reload replaces the configuration's and keeps the others. */
enum pacer_list_origin {
	PACER_LIST_CONF = 0,  /* the configuration: load/set --exempt/--deny or --config */
	PACER_LIST_ADDED = 1, /* `xdp-pacer deny|exempt add`, with or without a timeout */
	PACER_LIST_ORIGIN_MAX,
};

/*
 * Expired entries: the datapath treats an entry whose expires_ns has passed
 * as absent and asks the trie again below its prefix length, at most
 * PACER_LIST_LOOKUPS times in all (expired entries nested deeper than that
 * over one source read as "on no list" until a writer collects them).
 */
#define PACER_LIST_LOOKUPS 4
#define PACER_LIST_TIMEOUT_MAX_S 0xffffffffu

/* A trie entry's value. */
struct pacer_list_value {
	__u32 verdict;    /* enum pacer_list_verdict */
	__u8 origin;      /* enum pacer_list_origin */
	__u8 prefixlen;   /* the entry's own: an expired entry's lookup falls back below it */
	__u16 flags;      /* 0; room for per-entry modes */
	__u32 timeout_s;  /* as added (0: none), for `list` */
	__u32 pad;
	__u64 expires_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_coarse_ns) deadline; 0: never */
};

/*
 * In front of the tries, a bitmap per family ("pacer_list_filter", an
 * array of __u64 words: IPv4's PACER_LIST_FILTER_WORDS, then IPv6's): a
 * source whose bit is clear is on neither list, and the trie is not
 * walked (under a flood of sources off the lists, most packets).  The bit
 * of an IPv4 source is its top PACER_LIST_FILTER_LOG2 bits; of an IPv6
 * source, a hash of its top 32 bits (pacer_classify.h).  A bit is set for
 * every value a listed prefix covers; a set bit only means "walk the trie".
 */
#define PACER_LIST_FILTER_LOG2 20
#define PACER_LIST_FILTER_WORDS (1u << (PACER_LIST_FILTER_LOG2 - 6)) /* per family */
#define PACER_LIST_FILTER_V6_BITS 32 /* the IPv6 prefix length the filter hashes */

struct pacer_list4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct pacer_list6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

#endif /* PACER_CLASS_H */
