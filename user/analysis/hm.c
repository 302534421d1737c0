// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HistoricalMembership: first implementation of Holland, Wirth, Zobel,
 * "Recency Queries with Succinct Representation" (ISAAC 2020).
 *
 * Notation: k = 1/eps, t = insertions so far, positions p = 1..t,
 * r = t - p.  Level l has classes of width 2^l; its clock is
 * C_l(t) = floor(t / 2^l) and its stored class IDs live mod n_l.
 *
 * 1. Class alignment.  The paper never fixes which positions share a class,
 *    and its pseudo-code makes the class an item lands in depend on *when*
 *    a lazy promotion happens.  Here the class of position p at level l is
 *        b_0(p) = p,   b_{l+1}(p) = floor((b_l(p) + k + 1) / 2),
 *    i.e. b_l(p) = floor((p + (k+1)(2^l - 1)) / 2^l).  An item is due at
 *    level l+1 exactly when C_l = b_l + k + 1 (it leaves the k+1 active
 *    classes of level l), and at that moment C_{l+1} = b_{l+1}: it enters
 *    the contemporary class of l+1.  Level-l classes are merged in pairs
 *    (b_l + k + 1 = 2j, 2j+1) into level-(l+1) class j.
 *
 * 2. External class-ID assignment (Section 4, Algorithm 2 line 10).  For an
 *    expired item with ID e at level l, d = (e_l - e - (k+1)) mod n_l as in
 *    the paper, but the paper's e* = e_{l+1} + d/2 is wrong twice: class IDs
 *    grow with time, so older classes are *behind* e_{l+1} (minus, not
 *    plus), and halving d ignores the pairing parity, so the same item gets
 *    different classes depending on the promotion time.  Using
 *    C_l - d = b_l + k + 1, the exact offset is
 *        delta = C_{l+1} - b_{l+1} = floor(C_l/2) - floor((C_l - d)/2)
 *              = floor((d + 1 - (C_l mod 2)) / 2),
 *        e* = e_{l+1} - delta mod n_{l+1}.
 *    The paper's d/2 equals delta only when C_l is odd.  With the scan
 *    deadline of (5) an expired entry is always promoted with d = 0, where
 *    delta = 0 and both versions give e* = e_{l+1}; the exact formula is
 *    kept (and d = 0 asserted) so that the code states what a slower scan
 *    would need instead of silently relying on it.
 *
 * 3. Estimate (eq. 5, Algorithm 1).  The sign in the text, (e - e_l), is a
 *    typo; Algorithm 1's (e_l - e*) is right.  Eq. 5's offset
 *    sum_{i<l} (k 2^i + (t mod 2^i)) does not match any alignment we could
 *    derive; with the alignment of (1), writing j = (e_l - e) mod n_l and
 *    tau = t mod 2^l, the positions of class C_l - j give exactly
 *        r in [r_hat, r_hat + 2^l - 1],  r_hat = 2^l j + k(2^l - 1) + tau,
 *    and r_hat >= k(2^l - 1), hence 0 <= r - r_hat <= (2^l-1) <= r_hat / k:
 *    Lemma 5 in the form r_hat <= r <= (1+eps) r_hat, with r_hat = r at
 *    level 0.  r_hat is the recency of the class's front item.  The formula
 *    holds for any j below n_l, so an expired-but-not-yet-promoted entry is
 *    answered from its current level (a finer class than after promotion).
 *
 * 4. Levels and the top.  L = floor(log2(W/k)) - 1, or 0 when W/k < 4 (then
 *    the single level is exact, width 1).  Algorithm 1 (line 7) and eq. 3
 *    disagree on the excess E; we size the top directly: it keeps the fewest
 *    classes such that no item with r <= W is deleted,
 *        J + 1 = ceil((W + 1 - k(2^L - 1)) / 2^L) = k + floor(E/2^L) + 1
 *    with E from eq. 3, so n_L = 2(J + 1) is eq. 4 with a floor.  Other
 *    levels keep k+1 active classes, n_l = 2(k+1) (the paper's range
 *    "{0..2(k+1)}" is read as half-open).  Entries leaving the top are
 *    deleted.  A query returns -1 when r_hat > W; since r <= r_hat + 2^L - 1
 *    this gives slack 2^L - 1 (<= eps W / 2 - 1), the paper's D_L = 2^L.
 *    Algorithm 1 also initialises level L twice and Algorithm 2 inserts
 *    promotions into Lambda_l instead of Lambda_{l+1}; both read as typos.
 *
 * 5. Lazy promotion deadline.  After each tick of level l (the only moment
 *    its entries expire) its scan makes one pass over all its buckets within
 *    lap_l = max(1, 2^(l-1)) insertions, a share per insertion (the paper
 *    scans also when nothing was inserted at a level; between the pass and
 *    the next tick there is nothing to find).  Entries relocated by a cuckoo kick are checked on the
 *    spot (the paper's "encounters an item with a lapsed class"), and a
 *    rehash checks all, so every entry is examined at least once per lap.
 *    Consequences: an expired entry is promoted before the next tick of its
 *    level, so it is promoted with d = 0 into the contemporary class of
 *    l+1, and no stored class is ever older than `active` ticks: the
 *    circular field needs only n_l = active + 1 values (the paper's 2(k+1)
 *    would allow a slower scan), and an expired entry always holds the one
 *    class now + 1, which the scan finds a word at a time.  The entries a
 *    level can hold at once, counting pending ones, are at most
 *        level 0:            k + 2   (whole level scanned per insertion)
 *        0 < l < L:          (k+1) 2^l + 2^(l-1)
 *        top L > 0:          (J+1) 2^L + 2^(L-1)
 *        single level L = 0: W + 2
 *    (while the newest class of level l has only its first half arrived,
 *    the class that just expired may still be pending; once the second
 *    half can arrive, lap_l <= 2^(l-1) has removed it); the unit test
 *    checks them.
 *
 * 6. One copy per key.  Inserting a key first removes its previous copy
 *    (the lookup a query does anyway, stopping at the level that holds it),
 *    so a key is stored once, at the level of its latest position, and
 *    promotions never meet a copy of themselves.  A level therefore holds
 *    at most the distinct keys of its span, and the whole structure at most
 *    the distinct keys of the window plus the pending ones: on a
 *    repeat-heavy stream far fewer than W.  Tables start small and grow
 *    (hm_table.h) to what their level holds, so memory follows the
 *    stream's distinct count, not W.
 *
 * 7. Hash tables.  The paper puts backyard cuckoo hashing on the upper
 *    levels and a dynamic perfect hash on the lower ones.  All levels here
 *    above the ring (note 8) use one compact bucketized cuckoo table each
 *    (hm_table.c, 8-slot buckets): the signature's remainder modulo the
 *    bucket count is its bucket and only the quotient is stored, so a slot
 *    spends about log2(N / m) + 4 bits on the signature (B(N, m) / m is
 *    log2(N / m) + 1.44) plus the class field, at a load of up to 0.95;
 *    measured bits are reported beside the paper's bound.  The key mix is fixed, not keyed: crafted keys can fill the
 *    stash and force growth (memory), but cannot make an answer wrong.
 *    Signatures: a bijective 64-bit mix of the key (hm_new), its top bits
 *    (hm_new_sig, Corollary 12), or a bijective mix within key_bits bits
 *    when keys come from a universe of 2^key_bits (hm_new_keys: exact, and
 *    the stored quotients shrink with the universe).
 *
 * 8. The lower levels as one exact ring.  Section 5 lets the lower half of
 *    the levels, O((1/eps + 1) sqrt(W)) entries, use any table.  Here
 *    levels 0 .. base-1 (base = ceil(L/2), or 0 for a single level) are
 *    one ring of the last R = A_base = (k+1)(2^base - 1) signatures, slot
 *    p mod R, each with a live bit that the key's next occurrence clears.
 *    With the alignment of (1), b_base(p) = floor((p + A_base) / 2^base),
 *    so the position leaving the ring at t = p + R has b_base(p) =
 *    floor(t / 2^base) = C_base(t): it enters level base in its
 *    contemporary class, exactly where the promotion from level base-1
 *    would have put it, and the levels above are unchanged.  Answers for
 *    r < R are exact (hm_exact_span()).  A lookup compares four signatures
 *    per SSE2 instruction: for a few hundred positions this is cheaper than
 *    a probe and a promotion in each of `base` tables, and the ring (4
 *    bytes per position for universes up to 2^32) costs less than their
 *    tables and bookkeeping.
 */
#include "hm.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include "hm_bits.h"
#include "hm_ring.h"

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
	uint64_t ring_pos;      /* ring slot of position t: t mod ring.len */
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
	/* The lower half of the levels, as the paper splits them (Section 5). */
	base = (top + 1) / 2;
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

/* Exact recency of the position in ring slot q: positions t - len + 1 .. t sit at t mod len. */
static int64_t ring_recency(const struct hm *h, uint64_t q)
{
	return (int64_t)(h->ring_pos >= q ? h->ring_pos - q : h->ring_pos + h->ring.len - q);
}

/* The previous copy of sig, if any: its recency, then it goes (note 6). */
static int64_t hm_take(struct hm *h, uint64_t sig)
{
	int64_t slot = hm_ring_find(&h->ring, sig);
	unsigned l;

	if (slot >= 0) {
		hm_ring_kill(&h->ring, (uint64_t)slot);
		return ring_recency(h, (uint64_t)slot);
	}
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

	if (!h->ring.len)
		return hashsm_add(first->table, sig, first->now);
	h->ring_pos = h->ring_pos + 1 == h->ring.len ? 0 : h->ring_pos + 1;
	if (hm_ring_replace(&h->ring, h->ring_pos, sig, &old))
		return hashsm_add(first->table, old, first->now);
	return 0;
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
	int64_t slot;
	unsigned l;

	if (!key_fits(h, key))
		return -1;
	slot = hm_ring_find(&h->ring, sig);
	if (slot >= 0)
		return ring_recency(h, (uint64_t)slot);
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
	uint64_t sum = h->ring.live_count;
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

size_t hm_memory_bytes(const struct hm *h)
{
	size_t bytes = sizeof(*h) + (h->top - h->base + 1) * sizeof(h->level[0]) + hm_ring_bytes(&h->ring);
	unsigned l;

	for (l = h->base; l <= h->top; l++)
		bytes += hashsm_memory_bytes(level_of(h, l)->table);
	return bytes;
}

size_t hm_fixed_bytes(const struct hm *h)
{
	size_t bytes = sizeof(*h) + (h->top - h->base + 1) * sizeof(h->level[0]) + hm_ring_bytes(&h->ring);
	unsigned l;

	for (l = h->base; l <= h->top; l++)
		bytes += hashsm_header_bytes(level_of(h, l)->table);
	return bytes;
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
