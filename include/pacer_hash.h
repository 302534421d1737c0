/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The source key every backend and the sampler use: prefix masks and the
 * keyed hashes of a masked source, with the further hash words derived
 * from one.  Shared verbatim by the XDP program and userspace.
 */
#ifndef PACER_HASH_H
#define PACER_HASH_H

#include <linux/types.h>
#include "pacer_compiler.h"

/* murmur3's 64-bit finaliser: a bijection with full avalanche. */
PACER_INLINE __u64 pacer_mix64(__u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * Keyed hashes of a masked source.  Address words are the packet bytes
 * loaded little-endian (as both BPF and x86 do).  The two families use the
 * key words in opposite order so that an attacker cannot pick an IPv6
 * source that collides with a given IPv4 one without knowing the key.
 */
PACER_INLINE __u64 pacer_hash_v4(const __u64 key[2], __u32 addr)
{
	return pacer_mix64(pacer_mix64((__u64)addr ^ key[0]) ^ key[1]);
}

PACER_INLINE __u64 pacer_hash_v6(const __u64 key[2], __u64 lo, __u64 hi)
{
	return pacer_mix64(pacer_mix64(lo ^ key[1]) ^ hi ^ key[0]);
}

/* Prefix masks in packet byte order (the address words are little-endian loads). */
PACER_INLINE __u32 pacer_mask4(__u32 prefix)
{
	if (prefix == 0)
		return 0;
	if (prefix >= 32)
		return 0xffffffffu;
	return __builtin_bswap32(0xffffffffu << (32 - prefix));
}

PACER_INLINE __u64 pacer_mask64(__u32 prefix)
{
	if (prefix == 0)
		return 0;
	if (prefix >= 64)
		return ~0ULL;
	return __builtin_bswap64(~0ULL << (64 - prefix));
}

/* Masks for the low (first 8 bytes) and high word of an IPv6 address. */
PACER_INLINE __u64 pacer_mask6_lo(__u32 prefix)
{
	return pacer_mask64(prefix);
}

PACER_INLINE __u64 pacer_mask6_hi(__u32 prefix)
{
	return prefix <= 64 ? 0 : pacer_mask64(prefix - 64);
}

#define PACER_HASH_SALT_A 0x2545f4914f6cdd1dULL
#define PACER_HASH_SALT_B 0x5851f42d4c957f2dULL
#define PACER_HASH_SALT_C 0x9e3779b97f4a7c15ULL
#define PACER_SAMPLE_SALT 0xda942042e4dd58b5ULL

/* The further 64-bit hash words derived from h (word 0 is h itself). */
PACER_INLINE __u64 pacer_hash_word(__u64 h, __u32 word)
{
	/* No lookup table: it would land in the BPF object's .rodata. */
	__u64 salt = word == 1 ? PACER_HASH_SALT_A : word == 2 ? PACER_HASH_SALT_B : PACER_HASH_SALT_C;

	return word ? pacer_mix64(h ^ salt) : h;
}

#endif /* PACER_HASH_H */
