/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exempt/deny lists (include/pacer_class.h): one longest-prefix-match
 * trie per family, keyed by source prefix, valued struct pacer_list_value
 * (a verdict, and an expiry the lookup compares with the clock).
 * pacer_cfg.list_sel says which tries hold prefixes, so an empty list
 * costs no lookup; the filter in front of them (pacer_class.h) lets most
 * sources off the lists skip the trie's walk.
 */
#ifndef PACER_BPF_LISTS_H
#define PACER_BPF_LISTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "config.h"
#include "pacer_classify.h"

/* One family's trie: allocated per entry, up to the per-family limit. */
#define PACER_LIST_TRIE(name, key_type)                     \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);        \
		__uint(max_entries, PACER_LIST_MAX_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);       \
		__type(key, key_type);                      \
		__type(value, struct pacer_list_value);     \
	} name SEC(".maps")

PACER_LIST_TRIE(pacer_list4, struct pacer_list4_key);
PACER_LIST_TRIE(pacer_list6, struct pacer_list6_key);

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * PACER_LIST_FILTER_WORDS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} pacer_list_filter SEC(".maps");

/* Whether src's filter bit is set: it may be on a list. */
static __always_inline int list_filter_hit(int kind, const struct pacer_src *src)
{
	__u32 bit = pacer_list_filter_bit(kind, src), w = bit >> 6;
	__u64 *word = bpf_map_lookup_elem(&pacer_list_filter, &w);

	return word && ((*word >> (bit & 63)) & 1);
}

/*
 * Whether a found entry decides: it has not expired.  *now is read once,
 * and only for an entry with a timeout.  An entry with an expiry the
 * coarse clock has passed reads as absent: the caller asks again below its
 * prefix length (pacer_class.h, PACER_LIST_LOOKUPS).
 */
static __always_inline int list_entry_live(const struct pacer_list_value *v, __u64 *now)
{
	if (!v->expires_ns)
		return 1;
	if (!*now)
		*now = bpf_ktime_get_coarse_ns();
	return v->expires_ns > *now;
}

/*
 * The verdict of the longest live entry holding key in trie (a trie key:
 * its prefix length first, the caller's full length), 0 if none: each
 * expired entry found sends the lookup below its own prefix length, at
 * most PACER_LIST_LOOKUPS times.
 */
static __always_inline __u32 list_walk(void *trie, void *key, __u64 *now)
{
	const struct pacer_list_value *v;
	__u32 *prefixlen = key;
	int i;

	for (i = 0; i < PACER_LIST_LOOKUPS; i++) {
		v = bpf_map_lookup_elem(trie, key);
		if (!v)
			return 0;
		if (list_entry_live(v, now))
			return v->verdict;
		if (!v->prefixlen)
			return 0;
		*prefixlen = v->prefixlen - 1u;
	}
	return 0;
}

/* The lists' verdict for src (kind PACER_PKT_V4 or _V6): 0 when on neither, or its family's list is empty. */
static __always_inline __u32 list_verdict(int kind, const struct pacer_src *src)
{
	__u32 sel = pacer_cfg.list_sel;
	__u64 now = 0;

	if (kind == PACER_PKT_V4) {
		struct pacer_list4_key k4;

		if (!(sel & PACER_LIST_V4) || !list_filter_hit(kind, src))
			return 0;
		k4.prefixlen = 32;
		__builtin_memcpy(k4.addr, &src->lo, 4);
		return list_walk(&pacer_list4, &k4, &now);
	} else {
		struct pacer_list6_key k6;

		if (!(sel & PACER_LIST_V6) || !list_filter_hit(kind, src))
			return 0;
		k6.prefixlen = 128;
		__builtin_memcpy(k6.addr, &src->lo, 8);
		__builtin_memcpy(k6.addr + 8, &src->hi, 8);
		return list_walk(&pacer_list6, &k6, &now);
	}
}

#endif /* PACER_BPF_LISTS_H */
