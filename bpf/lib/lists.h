/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exempt/deny lists (include/pacer_class.h): one longest-prefix-match
 * trie per family, keyed by source prefix, valued enum pacer_list_verdict.
 * pacer_cfg.list_sel says which tries hold prefixes, so an empty list
 * costs no lookup.
 */
#ifndef PACER_BPF_LISTS_H
#define PACER_BPF_LISTS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "config.h"
#include "pacer_parse.h"

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PACER_LIST_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pacer_list4_key);
	__type(value, __u32);
} pacer_list4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PACER_LIST_MAX_ENTRIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pacer_list6_key);
	__type(value, __u32);
} pacer_list6 SEC(".maps");

/* The lists' verdict for src (kind PACER_PKT_V4 or _V6): 0 when on neither, or its family's list is empty. */
static __always_inline __u32 list_verdict(int kind, const struct pacer_src *src)
{
	__u32 sel = pacer_cfg.list_sel, *v;

	if (kind == PACER_PKT_V4) {
		struct pacer_list4_key k4;

		if (!(sel & PACER_LIST_V4))
			return 0;
		k4.prefixlen = 32;
		__builtin_memcpy(k4.addr, &src->lo, 4);
		v = bpf_map_lookup_elem(&pacer_list4, &k4);
	} else {
		struct pacer_list6_key k6;

		if (!(sel & PACER_LIST_V6))
			return 0;
		k6.prefixlen = 128;
		__builtin_memcpy(k6.addr, &src->lo, 8);
		__builtin_memcpy(k6.addr + 8, &src->hi, 8);
		v = bpf_map_lookup_elem(&pacer_list6, &k6);
	}
	return v ? *v : 0;
}

#endif /* PACER_BPF_LISTS_H */
