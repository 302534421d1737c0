// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exact ring of hm_ring.h. */
#include "hm_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hm_bits.h"
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HM_RING_HAVE_AVX2 1
#endif

/*
 * Signatures are kept as planes: the low 16 bits of each, which the search
 * compares (a quarter or half of the bytes), then the rest for the rare
 * candidates: bits 16-31 of signatures of at most 32 bits, or the whole of
 * wider ones.
 */
static unsigned planes(struct hm_ring *r, void ***plane, size_t *width)
{
	plane[0] = (void **)&r->key16;
	width[0] = sizeof(uint16_t);
	if (r->sig64) {
		plane[1] = (void **)&r->sig64;
		width[1] = sizeof(uint64_t);
	} else {
		plane[1] = (void **)&r->hi16;
		width[1] = sizeof(uint16_t);
	}
	return 2;
}

int hm_ring_init(struct hm_ring *r, uint64_t len, unsigned sig_bits)
{
	memset(r, 0, sizeof(*r));
	r->len = len;
	r->live = calloc(len / 64 + 1, sizeof(uint64_t));
	if (!r->live)
		return -ENOMEM;
	/* Non-NULL marks the width; grown on use. */
	r->key16 = malloc(sizeof(uint16_t));
	if (sig_bits > 32)
		r->sig64 = malloc(sizeof(uint64_t));
	else
		r->hi16 = malloc(sizeof(uint16_t));
	if (!r->key16 || (!r->sig64 && !r->hi16)) {
		hm_ring_free(r);
		return -ENOMEM;
	}
	r->cap = 1;
	return 0;
}

void hm_ring_free(struct hm_ring *r)
{
	free(r->live);
	free(r->key16);
	free(r->hi16);
	free(r->sig64);
	r->live = NULL;
	r->key16 = r->hi16 = NULL;
	r->sig64 = NULL;
}

/* Index of sig in [from, to) searched from the top down, or -1. */
static int64_t find_scalar(const struct hm_ring *r, uint64_t from, uint64_t to, uint64_t sig)
{
	uint16_t key = (uint16_t)sig, hi = (uint16_t)(sig >> 16);

	while (to > from) {
		to--;
		if (r->key16[to] == key && (r->sig64 ? r->sig64[to] == sig : r->hi16[to] == hi))
			return (int64_t)to;
	}
	return -1;
}

static int64_t find_plain(const struct hm_ring *r, uint64_t sig)
{
	return find_scalar(r, r->head, r->tail, sig);
}

#ifdef __SSE2__
/*
 * SSE2 (x86-64's baseline) rules out blocks of 32 low halves, then of 8; a
 * block with a candidate is checked in full and the search goes on below it.
 */
static int64_t find_sse2(const struct hm_ring *r, uint64_t sig)
{
	const uint16_t *a = r->key16;
	__m128i want = _mm_set1_epi16((short)(uint16_t)sig);
	uint64_t i = r->tail;
	int64_t hit;

	for (; i >= r->head + 32; i -= 32) {
		const __m128i *at = (const __m128i *)(a + i - 32);
		__m128i any = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi16(_mm_loadu_si128(at), want),
							_mm_cmpeq_epi16(_mm_loadu_si128(at + 1), want)),
					   _mm_or_si128(_mm_cmpeq_epi16(_mm_loadu_si128(at + 2), want),
							_mm_cmpeq_epi16(_mm_loadu_si128(at + 3), want)));

		if (_mm_movemask_epi8(any) && (hit = find_scalar(r, i - 32, i, sig)) >= 0)
			return hit;
	}
	for (; i >= r->head + 8; i -= 8)
		if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_loadu_si128((const __m128i *)(a + i - 8)), want)) &&
		    (hit = find_scalar(r, i - 8, i, sig)) >= 0)
			return hit;
	return find_scalar(r, r->head, i, sig);
}
#endif

#ifdef HM_RING_HAVE_AVX2
/* The same, 64 then 16 at a time with AVX2, chosen at run time (the build targets plain x86-64). */
__attribute__((target("avx2"))) static int64_t find_avx2(const struct hm_ring *r, uint64_t sig)
{
	const uint16_t *a = r->key16;
	__m256i want = _mm256_set1_epi16((short)(uint16_t)sig);
	uint64_t i = r->tail;
	int64_t hit;

	for (; i >= r->head + 64; i -= 64) {
		const __m256i *at = (const __m256i *)(a + i - 64);
		__m256i any = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi16(_mm256_loadu_si256(at), want),
							      _mm256_cmpeq_epi16(_mm256_loadu_si256(at + 1), want)),
					      _mm256_or_si256(_mm256_cmpeq_epi16(_mm256_loadu_si256(at + 2), want),
							      _mm256_cmpeq_epi16(_mm256_loadu_si256(at + 3), want)));

		if (!_mm256_testz_si256(any, any) && (hit = find_scalar(r, i - 64, i, sig)) >= 0)
			return hit;
	}
	for (; i >= r->head + 16; i -= 16) {
		__m256i eq = _mm256_cmpeq_epi16(_mm256_loadu_si256((const __m256i *)(a + i - 16)), want);

		if (!_mm256_testz_si256(eq, eq) && (hit = find_scalar(r, i - 16, i, sig)) >= 0)
			return hit;
	}
	return find_scalar(r, r->head, i, sig);
}
#endif

static int64_t (*find_fn)(const struct hm_ring *r, uint64_t sig);

int hm_ring_use(enum hm_ring_impl impl)
{
	switch (impl) {
	case HM_RING_AUTO:
#ifdef HM_RING_HAVE_AVX2
		if (__builtin_cpu_supports("avx2")) {
			find_fn = find_avx2;
			return 0;
		}
#endif
#ifdef __SSE2__
		find_fn = find_sse2;
#else
		find_fn = find_plain;
#endif
		return 0;
	case HM_RING_SCALAR:
		find_fn = find_plain;
		return 0;
	case HM_RING_SSE2:
#ifdef __SSE2__
		find_fn = find_sse2;
		return 0;
#else
		return -ENOTSUP;
#endif
	case HM_RING_AVX2:
#ifdef HM_RING_HAVE_AVX2
		if (__builtin_cpu_supports("avx2")) {
			find_fn = find_avx2;
			return 0;
		}
#endif
		return -ENOTSUP;
	}
	return -EINVAL;
}

static int64_t find(const struct hm_ring *r, uint64_t sig)
{
	if (r->head == r->tail)
		return -1;
	if (!find_fn)
		hm_ring_use(HM_RING_AUTO);
	return find_fn(r, sig);
}

/*
 * The recency of the live entry at array index idx.  The k-th signature
 * from the top of the array is the k-th live bit back from the newest slot,
 * and the k-th from the bottom the k-th forward from the oldest: count
 * from the nearer end, a bitmap word at a time.
 */
static uint64_t entry_recency(const struct hm_ring *r, uint64_t idx)
{
	bool back = r->tail - 1 - idx <= idx - r->head;
	uint64_t j = back ? r->tail - 1 - idx : idx - r->head, slot = 0;
	/* Back: slots now .. 0, then len-1 .. now+1; forward: now+1 .. len-1, then 0 .. now. */
	uint64_t from[2], to[2];
	unsigned s;

	from[0] = back ? r->now : r->now + 1;
	to[0] = back ? 0 : r->len - 1;
	from[1] = back ? r->len - 1 : 0;
	to[1] = back ? r->now + 1 : r->now;
	for (s = 0; s < 2; s++) {
		uint64_t lo = back ? to[s] : from[s], hi = back ? from[s] : to[s], w, bits, c;

		if (lo > hi || hi >= r->len)
			continue;
		for (w = back ? hi >> 6 : lo >> 6;; w = back ? w - 1 : w + 1) {
			bits = r->live[w];
			if (w == hi >> 6)
				bits &= low_mask((hi & 63) + 1);
			if (w == lo >> 6)
				bits &= ~low_mask(lo & 63);
			c = bits_popcount(bits);
			if (j < c) {
				/* The (j+1)-th set bit from the top (back) or the bottom (forward). */
				for (; j; j--)
					bits &= back ? ~(1ULL << (63 - __builtin_clzll(bits))) : bits - 1;
				slot = w * 64 + (back ? 63 - (uint64_t)__builtin_clzll(bits) : (uint64_t)__builtin_ctzll(bits));
				return r->now >= slot ? r->now - slot : r->now + r->len - slot;
			}
			j -= c;
			if (w == (back ? lo : hi) >> 6)
				break;
		}
	}
	return 0;  /* unreachable: the array and the bitmap hold the same entries */
}

int64_t hm_ring_recency(const struct hm_ring *r, uint64_t sig)
{
	int64_t idx = find(r, sig);

	return idx < 0 ? -1 : (int64_t)entry_recency(r, (uint64_t)idx);
}

int64_t hm_ring_take(struct hm_ring *r, uint64_t sig)
{
	int64_t idx = find(r, sig);
	uint64_t i, d, slot;
	bool down;
	void **plane[2];
	size_t w[2];
	unsigned p, np = planes(r, plane, w);

	if (idx < 0)
		return -1;
	i = (uint64_t)idx;
	d = entry_recency(r, i);
	slot = r->now >= d ? r->now - d : r->now + r->len - d;
	r->live[slot >> 6] &= ~(1ULL << (slot & 63));
	/* Close the gap from the shorter side. */
	down = i - r->head < r->tail - 1 - i;
	for (p = 0; p < np; p++) {
		uint8_t *a = *plane[p];

		if (down)
			memmove(a + (r->head + 1) * w[p], a + r->head * w[p], (i - r->head) * w[p]);
		else
			memmove(a + i * w[p], a + (i + 1) * w[p], (r->tail - 1 - i) * w[p]);
	}
	if (down)
		r->head++;
	else
		r->tail--;
	return (int64_t)d;
}

/*
 * Room for one more signature at the tail: slide down (at most once per
 * cap/32 pushes, so about 128 bytes moved per push), or grow by 1/32: the
 * array stays within about 1/16 of its peak.  At most len + len/4 + 8.
 */
static int make_room(struct hm_ring *r)
{
	uint64_t most = r->len + r->len / 4 + 8, cap;
	void **plane[2];
	size_t w[2];
	unsigned p, np = planes(r, plane, w);

	if (r->tail < r->cap)
		return 0;
	if (r->head && (r->head > r->cap / 32 || r->cap >= most)) {
		for (p = 0; p < np; p++)
			memmove(*plane[p], (uint8_t *)*plane[p] + r->head * w[p], (r->tail - r->head) * w[p]);
		r->tail -= r->head;
		r->head = 0;
		return 0;
	}
	cap = r->cap + r->cap / 32 + 4;
	cap = cap < most ? cap : most;
	/* A plane grown before another fails is only larger than cap says. */
	for (p = 0; p < np; p++) {
		void *grown = realloc(*plane[p], cap * w[p]);

		if (!grown)
			return -ENOMEM;
		*plane[p] = grown;
	}
	r->cap = cap;
	return 0;
}

int hm_ring_push(struct hm_ring *r, uint64_t sig, uint64_t *old, bool *pushed_out)
{
	uint64_t slot = r->now + 1 == r->len ? 0 : r->now + 1;

	r->now = slot;
	/* The position leaving held this slot; if live, it is the oldest live one. */
	*pushed_out = r->live[slot >> 6] >> (slot & 63) & 1;
	if (*pushed_out) {
		*old = r->sig64 ? r->sig64[r->head] : (uint32_t)r->hi16[r->head] << 16 | r->key16[r->head];
		r->head++;
		r->live[slot >> 6] &= ~(1ULL << (slot & 63));
	}
	if (make_room(r))
		return -ENOMEM;
	r->live[slot >> 6] |= 1ULL << (slot & 63);
	r->key16[r->tail] = (uint16_t)sig;
	if (r->sig64)
		r->sig64[r->tail++] = sig;
	else
		r->hi16[r->tail++] = (uint16_t)(sig >> 16);
	return 0;
}

uint64_t hm_ring_live(const struct hm_ring *r)
{
	return r->tail - r->head;
}

size_t hm_ring_fixed_bytes(const struct hm_ring *r)
{
	return (r->len / 64 + 1) * sizeof(uint64_t);
}

size_t hm_ring_bytes(const struct hm_ring *r)
{
	size_t rest = r->sig64 ? sizeof(uint64_t) : sizeof(uint16_t);

	return hm_ring_fixed_bytes(r) + r->cap * (sizeof(uint16_t) + rest);
}
