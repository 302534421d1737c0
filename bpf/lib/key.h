/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A packet's key: its source masked to the configured prefix, hashed with the secret key. */
#ifndef PACER_BPF_KEY_H
#define PACER_BPF_KEY_H

#include "config.h"
#include "pacer_parse.h"
#include "pacer_sketch.h"

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

/* Draw the key's missing words (init_hash_key) into pacer_cfg; its frame is its own. */
static __noinline void hash_key_draw(struct pacer_counters *st)
{
	__u64 key[2] = { pacer_cfg.hash_key[0], pacer_cfg.hash_key[1] };

	init_hash_key(key, st);
}

/* Mask src (PACER_PKT_V4 or _V6) to its prefix, which *prefix gets; returns its hash. */
static __always_inline __u64 source_hash(int kind, struct pacer_src *src, __u32 *prefix,
					 struct pacer_counters *st)
{
	/*
	 * The words are read where the hash uses them, not copied to the
	 * stack first: the program's frame stays small (6.1's stack limit
	 * across calls).  Once drawn, they do not change.
	 */
	const __u64 *key = (const __u64 *)pacer_cfg.hash_key;

	if (!key[0] || !key[1])
		hash_key_draw(st);
	if (kind == PACER_PKT_V4) {
		*prefix = pacer_cfg.prefix4;
		src->lo &= pacer_mask4(*prefix);
		st->c[PACER_STAT_IPV4]++;
		return pacer_hash_v4(key, (__u32)src->lo);
	}
	*prefix = pacer_cfg.prefix6;
	src->lo &= pacer_mask6_lo(*prefix);
	src->hi &= pacer_mask6_hi(*prefix);
	st->c[PACER_STAT_IPV6]++;
	return pacer_hash_v6(key, src->lo, src->hi);
}

#endif /* PACER_BPF_KEY_H */
