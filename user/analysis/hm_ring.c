// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exact ring of hm_ring.h. */
#include "hm_ring.h"

#include <errno.h>
#include <stdlib.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HM_RING_HAVE_AVX2 1
#endif

/* Slots are allocated in groups of four (one SSE2 compare); padding is never live. */
static uint64_t padded(uint64_t len)
{
	return (len + 3) & ~3ULL;
}

int hm_ring_init(struct hm_ring *r, uint64_t len, unsigned sig_bits)
{
	uint64_t slots = padded(len);

	r->len = len;
	r->live_count = 0;
	r->sig32 = NULL;
	r->sig64 = NULL;
	r->live = calloc(slots / 64 + 1, sizeof(uint64_t));
	if (sig_bits <= 32)
		r->sig32 = calloc(slots ? slots : 1, sizeof(uint32_t));
	else
		r->sig64 = calloc(slots ? slots : 1, sizeof(uint64_t));
	if (!r->live || (!r->sig32 && !r->sig64)) {
		hm_ring_free(r);
		return -ENOMEM;
	}
	return 0;
}

void hm_ring_free(struct hm_ring *r)
{
	free(r->live);
	free(r->sig32);
	free(r->sig64);
	r->live = NULL;
	r->sig32 = NULL;
	r->sig64 = NULL;
}

static bool is_live(const struct hm_ring *r, uint64_t slot)
{
	return r->live[slot >> 6] >> (slot & 63) & 1;
}

/* The first live slot among the four from base whose bits are set in match. */
static int64_t live_in(const struct hm_ring *r, uint64_t base, unsigned match)
{
	while (match) {
		uint64_t slot = base + (unsigned)__builtin_ctz(match);

		if (is_live(r, slot))
			return (int64_t)slot;
		match &= match - 1;
	}
	return -1;
}

/* Bit j set when slot i + j holds sig (live or not). */
static inline unsigned match4(const struct hm_ring *r, uint64_t i, uint32_t sig)
{
	return (r->sig32[i] == sig) | (r->sig32[i + 1] == sig) << 1 | (r->sig32[i + 2] == sig) << 2 |
	       (r->sig32[i + 3] == sig) << 3;
}

/* The live slot holding sig among slots [from, to) (multiples of four), or -1. */
static int64_t find32_scalar(const struct hm_ring *r, uint64_t from, uint64_t to, uint32_t sig)
{
	int64_t hit;

	for (; from < to; from += 4) {
		unsigned match = match4(r, from, sig);

		if (match && (hit = live_in(r, from, match)) >= 0)
			return hit;
	}
	return -1;
}

static int64_t find32_plain(const struct hm_ring *r, uint32_t sig)
{
	return find32_scalar(r, 0, padded(r->len), sig);
}

/* SSE2 (x86-64's baseline) only rules out blocks of sixteen; a block with a match is read again. */
static int64_t find32(const struct hm_ring *r, uint32_t sig)
{
	uint64_t i = 0, slots = padded(r->len);
#ifdef __SSE2__
	__m128i want = _mm_set1_epi32((int)sig);
	int64_t hit;

	for (; i + 16 <= slots; i += 16) {
		const __m128i *at = (const __m128i *)(r->sig32 + i);
		__m128i any = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi32(_mm_loadu_si128(at), want),
							_mm_cmpeq_epi32(_mm_loadu_si128(at + 1), want)),
					   _mm_or_si128(_mm_cmpeq_epi32(_mm_loadu_si128(at + 2), want),
							_mm_cmpeq_epi32(_mm_loadu_si128(at + 3), want)));

		if (_mm_movemask_epi8(any) && (hit = find32_scalar(r, i, i + 16, sig)) >= 0)
			return hit;
	}
#endif
	return find32_scalar(r, i, slots, sig);
}

#ifdef HM_RING_HAVE_AVX2
/* The same, thirty-two at a time with AVX2, chosen at run time (the build targets plain x86-64). */
__attribute__((target("avx2"))) static int64_t find32_avx2(const struct hm_ring *r, uint32_t sig)
{
	__m256i want = _mm256_set1_epi32((int)sig);
	uint64_t i, slots = padded(r->len);
	int64_t hit;

	for (i = 0; i + 32 <= slots; i += 32) {
		const __m256i *at = (const __m256i *)(r->sig32 + i);
		__m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi32(_mm256_loadu_si256(at), want),
							      _mm256_cmpeq_epi32(_mm256_loadu_si256(at + 1), want)),
					      _mm256_or_si256(_mm256_cmpeq_epi32(_mm256_loadu_si256(at + 2), want),
							      _mm256_cmpeq_epi32(_mm256_loadu_si256(at + 3), want)));

		if (!_mm256_testz_si256(any, any) && (hit = find32_scalar(r, i, i + 32, sig)) >= 0)
			return hit;
	}
	return find32_scalar(r, i, slots, sig);
}
#endif

static int64_t find64(const struct hm_ring *r, uint64_t sig)
{
	uint64_t i;

	for (i = 0; i < r->len; i++)
		if (r->sig64[i] == sig && is_live(r, i))
			return (int64_t)i;
	return -1;
}

static int64_t (*find32_fn)(const struct hm_ring *r, uint32_t sig);

int hm_ring_use(enum hm_ring_impl impl)
{
	switch (impl) {
	case HM_RING_AUTO:
#ifdef HM_RING_HAVE_AVX2
		if (__builtin_cpu_supports("avx2")) {
			find32_fn = find32_avx2;
			return 0;
		}
#endif
		find32_fn = find32;
		return 0;
	case HM_RING_SCALAR:
		find32_fn = find32_plain;
		return 0;
	case HM_RING_SSE2:
#ifdef __SSE2__
		find32_fn = find32;
		return 0;
#else
		return -ENOTSUP;
#endif
	case HM_RING_AVX2:
#ifdef HM_RING_HAVE_AVX2
		if (__builtin_cpu_supports("avx2")) {
			find32_fn = find32_avx2;
			return 0;
		}
#endif
		return -ENOTSUP;
	}
	return -EINVAL;
}

int64_t hm_ring_find(const struct hm_ring *r, uint64_t sig)
{
	if (!r->live_count)
		return -1;
	if (!r->sig32)
		return find64(r, sig);
	if (!find32_fn)
		hm_ring_use(HM_RING_AUTO);
	return find32_fn(r, (uint32_t)sig);
}

void hm_ring_kill(struct hm_ring *r, uint64_t slot)
{
	r->live[slot >> 6] &= ~(1ULL << (slot & 63));
	r->live_count--;
}

bool hm_ring_replace(struct hm_ring *r, uint64_t slot, uint64_t sig, uint64_t *old)
{
	bool was = is_live(r, slot);

	if (was)
		*old = r->sig32 ? r->sig32[slot] : r->sig64[slot];
	else
		r->live[slot >> 6] |= 1ULL << (slot & 63);
	r->live_count += !was;
	if (r->sig32)
		r->sig32[slot] = (uint32_t)sig;
	else
		r->sig64[slot] = sig;
	return was;
}

size_t hm_ring_bytes(const struct hm_ring *r)
{
	uint64_t slots = padded(r->len);

	return (slots / 64 + 1) * sizeof(uint64_t) + (slots ? slots : 1) * (r->sig32 ? 4 : 8);
}
