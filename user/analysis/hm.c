// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HistoricalMembership (Holland, Wirth, Zobel, "Recency Queries with
 * Succinct Representation", ISAAC 2020).  How this code reads the paper
 * (class alignment, the corrected class-ID assignment and estimate, the
 * top level, the scan deadline, one copy per key, the tables, the ring)
 * is in docs/analysis.md, "HistoricalMembership: how this implementation reads
 * the paper"; "note N" below refers to its numbered notes.
 */
#include "hm.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include "hm_bits.h"
#include "hm_ring.h"

/* The ring takes levels above the lower half while it holds at most this many positions. */
#define HM_RING_MAX_POSITIONS 8192u
/* A level's table starts sized for this many entries (or its bound) and grows. */
#define HM_INITIAL_ITEMS 32u
#define LN2 0.69314718055994530942

enum hm_sig_kind { HM_SIG_MIX64, HM_SIG_TOP_BITS, HM_SIG_NARROW };

uint64_t hm_mix64(uint64_t x)
{
	/* splitmix64's finalizer after a fixed offset: a bijection on 64 bits. */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

uint64_t hm_mix_bits(uint64_t x, unsigned bits)
{
	/* Odd multipliers and right xorshifts, each a bijection modulo 2^bits. */
	uint64_t mask = low_mask(bits);
	unsigned sh = (bits + 1) / 2;

	x = (x * 0xbf58476d1ce4e5b9ULL) & mask;
	x ^= x >> sh;
	x = (x * 0x94d049bb133111ebULL) & mask;
	return x ^ (x >> sh);
}

/* A table level; its class IDs live on a circular field of active + 1 values. */
struct hm_level {
	struct hashsm *table;
	uint32_t active;     /* classes kept: k+1, or J+1 at the top */
	uint32_t now;        /* contemporary class ID e_l */
};

struct hm {
	uint64_t window;
	uint64_t t;
	uint32_t k;
	unsigned top;
	unsigned sig_bits;
	enum hm_sig_kind sig_kind;
	unsigned base;          /* levels below it are the ring (note 8) */
	uint32_t top_active;
	struct hm_ring ring;
	struct hm_level level[];  /* levels base..top only: the ring has no clocks */
};

static inline struct hm_level *level_of(const struct hm *h, unsigned l)
{
	return (struct hm_level *)&h->level[l - h->base];
}

static uint64_t signature(const struct hm *h, uint64_t key)
{
	switch (h->sig_kind) {
	case HM_SIG_NARROW:
		return hm_mix_bits(key, h->sig_bits);
	case HM_SIG_TOP_BITS:
		return hm_mix64(key) >> (64 - h->sig_bits);
	default:
		return hm_mix64(key);
	}
}

static bool key_fits(const struct hm *h, uint64_t key)
{
	return h->sig_kind != HM_SIG_NARROW || key <= low_mask(h->sig_bits);
}

/* Evict callback: promote an expired entry of level l into level l+1. */
static int hm_promote(void *ctx, uint64_t sig, uint32_t cls)
{
	struct hm_level *lv = ctx;

	/* The scan deadline promotes every entry at age exactly `active` (d = 0). */
	assert((lv->now >= cls ? lv->now - cls : lv->now + lv->active + 1 - cls) == lv->active);
	(void)cls;
	/* One copy per key: the next level cannot hold sig, so no lookup. */
	return hashsm_add(lv[1].table, sig, lv[1].now);
}

static int hm_level_init(struct hm *h, unsigned l, uint64_t top_active)
{
	struct hm_level *lv = level_of(h, l);
	uint64_t lap = l ? 1ULL << (l - 1) : 1, bound = hm_level_bound(h, l);
	bool top = l == h->top;

	lv->active = top ? (uint32_t)top_active : h->k + 1;
	/* Entries leaving the top are deleted (no callback). */
	lv->table = hashsm_new(bound < HM_INITIAL_ITEMS ? bound : HM_INITIAL_ITEMS,
			       h->sig_bits, lv->active + 1, lv->active, lap, top ? NULL : hm_promote, lv);
	return lv->table ? 0 : -ENOMEM;
}

static struct hm *hm_create(uint64_t window, uint32_t inv_eps, unsigned sig_bits,
			    enum hm_sig_kind kind)
{
	uint64_t per_level = window / (inv_eps ? inv_eps : 1), width, top_active;
	unsigned top, base, l;
	struct hm *h;

	if (!window || !inv_eps || !sig_bits || sig_bits > 64 || window > (UINT64_MAX >> 2) ||
	    inv_eps > (UINT32_MAX - 4) / 2) {
		errno = EINVAL;
		return NULL;
	}
	top = per_level >= 4 ? bit_length(per_level) - 2 : 0;
	width = 1ULL << top;
	top_active = div_ceil(window + 1 - (uint64_t)inv_eps * (width - 1), width);
	if (top_active > (1u << 29)) {
		errno = EINVAL;
		return NULL;
	}
	/*
	 * The lower half of the levels (Section 5), and more while the ring
	 * stays short to search (note 8): a live ring entry is a bare signature,
	 * cheaper than a table slot and a table header on repeat-heavy streams.
	 */
	base = (top + 1) / 2;
	while (base + 1 <= top && (uint64_t)(inv_eps + 1) * ((1ULL << (base + 1)) - 1) <= HM_RING_MAX_POSITIONS)
		base++;
	h = calloc(1, sizeof(*h) + (top - base + 1) * sizeof(h->level[0]));
	if (!h)
		return NULL;
	h->window = window;
	h->k = inv_eps;
	h->top = top;
	h->top_active = (uint32_t)top_active;
	h->sig_bits = sig_bits;
	h->sig_kind = kind;
	h->base = base;
	if (hm_ring_init(&h->ring, (uint64_t)(inv_eps + 1) * ((1ULL << h->base) - 1), sig_bits)) {
		free(h);
		errno = ENOMEM;
		return NULL;
	}
	for (l = h->base; l <= top; l++) {
		if (hm_level_init(h, l, top_active)) {
			hm_free(h);
			errno = ENOMEM;
			return NULL;
		}
	}
	return h;
}

struct hm *hm_new_sig(uint64_t window, uint32_t inv_eps, unsigned sig_bits)
{
	return hm_create(window, inv_eps, sig_bits, sig_bits == 64 ? HM_SIG_MIX64 : HM_SIG_TOP_BITS);
}

struct hm *hm_new_keys(uint64_t window, uint32_t inv_eps, unsigned key_bits)
{
	return hm_create(window, inv_eps, key_bits, key_bits == 64 ? HM_SIG_MIX64 : HM_SIG_NARROW);
}

struct hm *hm_new(uint64_t window, uint32_t inv_eps)
{
	return hm_create(window, inv_eps, 64, HM_SIG_MIX64);
}

void hm_free(struct hm *h)
{
	unsigned l;

	if (!h)
		return;
	for (l = h->base; l <= h->top; l++)
		hashsm_free(level_of(h, l)->table);
	hm_ring_free(&h->ring);
	free(h);
}

/* Eq. 5 with the alignment of note 3: the recency of class cls's front item, or -1 past W. */
static int64_t hm_estimate(const struct hm *h, unsigned l, uint32_t cls)
{
	const struct hm_level *lv = level_of(h, l);
	uint64_t age = lv->now >= cls ? lv->now - cls : lv->now + lv->active + 1 - cls;
	uint64_t estimate = (age << l) + (uint64_t)h->k * low_mask(l) + (h->t & low_mask(l));

	return estimate > h->window ? -1 : (int64_t)estimate;
}

/* The previous copy of sig, if any: its recency, then it goes (note 6). */
static int64_t hm_take(struct hm *h, uint64_t sig)
{
	int64_t r = hm_ring_take(&h->ring, sig);
	unsigned l;

	if (r >= 0)
		return r;
	for (l = h->base; l <= h->top; l++) {
		int64_t cls = hashsm_take(level_of(h, l)->table, sig);

		if (cls >= 0)
			return hm_estimate(h, l, (uint32_t)cls);
	}
	return -1;
}

/*
 * Position t enters the ring; the position leaving it (t - len) enters the
 * first table level in its contemporary class, b_base(p) = C_base(t) (note 8).
 */
static int hm_enter(struct hm *h, uint64_t sig)
{
	struct hm_level *first = level_of(h, h->base);
	uint64_t old;
	bool out;
	int rc, r;

	if (!h->ring.len)
		return hashsm_add(first->table, sig, first->now);
	rc = hm_ring_push(&h->ring, sig, &old, &out);
	r = out ? hashsm_add(first->table, old, first->now) : 0;
	return rc ? rc : r;
}

int hm_query_insert(struct hm *h, uint64_t key, int64_t *recency)
{
	uint64_t sig = signature(h, key);
	int64_t before;
	unsigned l;
	int rc, r;

	if (!key_fits(h, key))
		return -EINVAL;
	before = hm_take(h, sig);
	if (recency)
		*recency = before;
	h->t++;
	/* Algorithm 2 lines 3-5: level l's clock ticks when 2^l divides t. */
	for (l = h->base; l <= h->top && !(h->t & low_mask(l)); l++) {
		struct hm_level *lv = level_of(h, l);

		lv->now = lv->now == lv->active ? 0 : lv->now + 1;
		hashsm_set_now(lv->table, lv->now);
	}
	rc = hm_enter(h, sig);
	/* Bottom-up, so promotions made by one level's scan are seen by the next. */
	for (l = h->base; l <= h->top; l++) {
		r = hashsm_scan(level_of(h, l)->table);
		rc = rc ? rc : r;
	}
	return rc;
}

int hm_insert(struct hm *h, uint64_t key)
{
	return hm_query_insert(h, key, NULL);
}

int64_t hm_query(const struct hm *h, uint64_t key)
{
	uint64_t sig = signature(h, key);
	int64_t r;
	unsigned l;

	if (!key_fits(h, key))
		return -1;
	r = hm_ring_recency(&h->ring, sig);
	if (r >= 0)
		return r;
	for (l = h->base; l <= h->top; l++) {
		int64_t cls = hashsm_get(level_of(h, l)->table, sig);

		if (cls >= 0)
			return hm_estimate(h, l, (uint32_t)cls);
	}
	return -1;
}

uint64_t hm_window(const struct hm *h)
{
	return h->window;
}

uint32_t hm_inv_eps(const struct hm *h)
{
	return h->k;
}

uint64_t hm_time(const struct hm *h)
{
	return h->t;
}

uint64_t hm_slack(const struct hm *h)
{
	return low_mask(h->top);
}

unsigned hm_top_level(const struct hm *h)
{
	return h->top;
}

uint64_t hm_items(const struct hm *h)
{
	uint64_t sum = hm_ring_live(&h->ring);
	unsigned l;

	for (l = h->base; l <= h->top; l++)
		sum += hashsm_items(level_of(h, l)->table);
	return sum;
}

uint64_t hm_exact_span(const struct hm *h)
{
	return h->ring.len;
}

uint64_t hm_level_items(const struct hm *h, unsigned level)
{
	return level >= h->base && level <= h->top ? hashsm_items(level_of(h, level)->table) : 0;
}

uint64_t hm_level_bound(const struct hm *h, unsigned level)
{
	uint64_t width = 1ULL << level;

	if (level > h->top)
		return 0;
	if (!level)
		return h->top ? (uint64_t)h->k + 2 : h->window + 2;
	return (uint64_t)(level == h->top ? h->top_active : h->k + 1) * width + width / 2;
}

uint64_t hm_level_slots(const struct hm *h, unsigned level)
{
	return level >= h->base && level <= h->top ? hashsm_slots(level_of(h, level)->table) : 0;
}

uint64_t hm_rehashes(const struct hm *h)
{
	uint64_t sum = 0;
	unsigned l;

	for (l = h->base; l <= h->top; l++)
		sum += hashsm_rehashes(level_of(h, l)->table);
	return sum;
}

/* Every byte malloc'd, or (fixed) the part that does not grow with the entries. */
static size_t hm_bytes(const struct hm *h, bool fixed)
{
	size_t bytes = sizeof(*h) + (h->top - h->base + 1) * sizeof(h->level[0]) +
		       (fixed ? hm_ring_fixed_bytes(&h->ring) : hm_ring_bytes(&h->ring));
	unsigned l;

	for (l = h->base; l <= h->top; l++) {
		const struct hashsm *t = level_of(h, l)->table;

		bytes += fixed ? hashsm_header_bytes(t) : hashsm_memory_bytes(t);
	}
	return bytes;
}

size_t hm_memory_bytes(const struct hm *h)
{
	return hm_bytes(h, false);
}

size_t hm_fixed_bytes(const struct hm *h)
{
	return hm_bytes(h, true);
}

double hm_bits_per_item(const struct hm *h)
{
	return (double)hm_memory_bytes(h) * 8.0 / (double)h->window;
}

double hm_log2_binomial(double log2_universe, uint64_t m)
{
	/* Sum of log1p terms: lgamma(N) differences lose everything at N = 2^64. */
	double universe = exp2(log2_universe), sum_ln = 0.0;
	uint64_t i;

	if (!(universe >= (double)m))
		return NAN;
	for (i = 1; i < m; i++)
		sum_ln += log1p(-(double)i / universe);
	return (double)m * log2_universe + (sum_ln - lgamma((double)m + 1.0)) / LN2;
}

double hm_paper_bound_bits(uint64_t window, uint32_t inv_eps, double log2_universe)
{
	double eps = 1.0 / (double)inv_eps;

	return (1.0 + eps) * (hm_log2_binomial(log2_universe, window) +
			      (double)window * log2((double)inv_eps));
}
