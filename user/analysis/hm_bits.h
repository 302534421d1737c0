/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Packed bit arrays: fields of 1..64 bits at any bit offset of a uint64_t
 * array (a field may straddle two words), and the word-parallel (SWAR)
 * search for fields holding one value.
 */
#ifndef PACER_HM_BITS_H
#define PACER_HM_BITS_H

#include <stdint.h>
#include <string.h>

static inline uint64_t low_mask(unsigned width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

static inline unsigned bit_length(uint64_t v)
{
	return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static inline uint64_t div_ceil(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Set bits of x, without the library call a baseline x86-64 build makes of __builtin_popcountll. */
static inline unsigned bits_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
}

static inline uint64_t bits_get(const uint64_t *words, uint64_t off, unsigned width)
{
	uint64_t idx = off >> 6, v;
	unsigned sh = off & 63;

	v = words[idx] >> sh;
	if (sh + width > 64)
		v |= words[idx + 1] << (64 - sh);
	return v & low_mask(width);
}

static inline void bits_put(uint64_t *words, uint64_t off, unsigned width, uint64_t v)
{
	uint64_t idx = off >> 6, mask = low_mask(width);
	unsigned sh = off & 63;

	v &= mask;
	words[idx] = (words[idx] & ~(mask << sh)) | (v << sh);
	if (sh + width > 64) {
		unsigned done = 64 - sh;

		words[idx + 1] = (words[idx + 1] & ~(mask >> done)) | (v >> done);
	}
}

/*
 * A field of at most 57 bits (mask = low_mask(width)) by one unaligned
 * load: the array must have at least 8 readable bytes from the field's
 * first byte (callers pad a word).
 */
static inline uint64_t bits_get57m(const uint64_t *words, uint64_t off, uint64_t mask)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)words + (off >> 3), sizeof(v));
	return (v >> (off & 7)) & mask;
}


/* Store a field of at most 57 bits by one unaligned load and store (same padding and mask). */
static inline void bits_put57m(uint64_t *words, uint64_t off, uint64_t mask, uint64_t v)
{
	uint8_t *at = (uint8_t *)words + (off >> 3);
	unsigned sh = off & 7;
	uint64_t w;

	memcpy(&w, at, sizeof(w));
	w = (w & ~(mask << sh)) | ((v & mask) << sh);
	memcpy(at, &w, sizeof(w));
}

/* v copied into each of `count` fields of `width` bits (count * width <= 64). */
static inline uint64_t bits_broadcast(uint64_t v, unsigned width, unsigned count)
{
	uint64_t out = 0;
	unsigned i;

	for (i = 0; i < count; i++)
		out |= v << (i * width);
	return out;
}

/*
 * The top bit of every field of x that is zero, and nothing else: exact
 * per field (the additions cannot carry across fields).  high has the top
 * bit of each field set, low the bits below it.
 */
static inline uint64_t bits_zero_fields(uint64_t x, uint64_t low, uint64_t high)
{
	return ~(((x & low) + low) | x | low) & high;
}

#endif
