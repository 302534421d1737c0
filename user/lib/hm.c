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
 * 5. Lazy promotion deadline.  Every insertion scans a fixed share of every
 *    level (also when nothing was inserted there, as the paper says): level
 *    l's scan covers all its buckets within lap_l = max(1, 2^(l-1))
 *    insertions, i.e. ceil(buckets / lap_l) buckets per insertion, O(k).
 *    Entries relocated by a cuckoo kick are checked on the spot (the paper's
 *    "encounters an item with a lapsed class"), and a rehash checks all, so
 *    every entry is examined at least once per lap.  Consequences: an
 *    expired entry is promoted before the next tick of its level (d = 0
 *    always, so the circular IDs never alias and it lands in the
 *    contemporary class of l+1), and the entries a level can hold at once,
 *    counting pending ones, are at most
 *        level 0:            k + 2   (whole level scanned per insertion)
 *        0 < l < L:          (k+1) 2^l + 2^(l-1)
 *        top L > 0:          (J+1) 2^L + 2^(L-1)
 *        single level L = 0: W + 2
 *    (while the newest class of level l has only its first half arrived,
 *    the class that just expired may still be pending; once the second
 *    half can arrive, lap_l <= 2^(l-1) has removed it).  Tables are sized
 *    for these bounds, not for the paper's 2^l (k+1); the unit test checks
 *    them.
 *
 * 6. Repeated keys.  A key may have copies at several levels.  Putting a key
 *    into a level where it already is overwrites the class, since the
 *    incoming copy is always the newer one: copies are created only at
 *    level 0 and move up one level at a time, so a lower copy is always
 *    newer (overwriting on collision keeps at most one copy per level and
 *    preserves that order).  Queries stop at the lowest level holding the
 *    key, hence see the newest copy; an older copy is overwritten when the
 *    newer one is promoted into its level, or falls off the top.  Every
 *    stored copy stands for a distinct position, so the bounds in (5) cover
 *    stale copies too.
 *
 * 7. Hash tables.  The paper puts backyard cuckoo hashing on the upper
 *    levels and a dynamic perfect hash on the lower ones.  All levels here
 *    use one compact bucketized cuckoo table (hashsm below): primary bucket
 *    sig mod nbuckets, the quotient sig / nbuckets stored with one bit
 *    saying "in the alternate bucket", alternate bucket = primary + 1 +
 *    (mix(quotient) reduced to [0, nbuckets - 1)), so signatures are
 *    invertible for promotion.  A kick walk longer than 500 steps leaves its last entry in
 *    a 4-entry stash (examined by every lookup and every scan call, so the
 *    deadline of (5) holds there too); only a full stash makes the table
 *    grow by 25% and rehash.  Entries never live long at a level, so the
 *    stash drains by itself; without it the small lower levels (a few dozen
 *    slots at load 0.92) grew every few million insertions.  The table is
 *    not succinct in the (1 + o(1)) sense: a slot spends about
 *    log2(N / m) + 3 bits on the signature (quotient and alternate bit;
 *    B(N, m) / m is log2(N / m) + 1.44), plus the class field, at a load of
 *    at most 0.92 of a worst-case occupancy; measured bits per item are
 *    reported beside the paper's bound.  The key mix is fixed, not keyed:
 *    crafted keys can fill the stash and force growth (memory), but cannot
 *    make an answer wrong.
 */
#include "hm.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define HSM_WAYS 4u
/* Slots per proven-max entry: load at most 23/25 = 0.92 of the slots. */
#define HSM_LOAD_NUM 23u
#define HSM_LOAD_DEN 25u
#define HSM_MAX_KICKS 500u
/* Overflow entries kept beside the table before growing it. */
#define HSM_STASH 4u
#define LN2 0.69314718055994530942

uint64_t hm_mix64(uint64_t x)
{
	/* splitmix64's finalizer after a fixed offset: a bijection on 64 bits. */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t quotient_mix(uint64_t q)
{
	/* Independent of hm_mix64 so the two buckets are not correlated. */
	q ^= q >> 33;
	q *= 0xff51afd7ed558ccdULL;
	q ^= q >> 33;
	q *= 0xc4ceb9fe1a85ec53ULL;
	return q ^ (q >> 33);
}

static unsigned bit_length(uint64_t v)
{
	unsigned n = 0;

	while (v) {
		n++;
		v >>= 1;
	}
	return n;
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* ---- packed bit array ---------------------------------------------------- */

static inline uint64_t low_mask(unsigned width)
{
	return width >= 64 ? ~0ULL : (1ULL << width) - 1;
}

static inline uint64_t bits_get(const uint64_t *words, uint64_t off, unsigned width)
{
	uint64_t idx = off >> 6, v;
	unsigned sh = off & 63;

	if (!width)
		return 0;
	v = words[idx] >> sh;
	if (sh + width > 64)
		v |= words[idx + 1] << (64 - sh);
	return v & low_mask(width);
}

static inline void bits_put(uint64_t *words, uint64_t off, unsigned width, uint64_t v)
{
	uint64_t idx = off >> 6, mask = low_mask(width);
	unsigned sh = off & 63;

	if (!width)
		return;
	v &= mask;
	words[idx] = (words[idx] & ~(mask << sh)) | (v << sh);
	if (sh + width > 64) {
		unsigned done = 64 - sh;

		words[idx + 1] = (words[idx + 1] & ~(mask >> done)) | (v >> done);
	}
}

/* ---- HashSM: one sliding dictionary ------------------------------------- */

struct hsm_entry {
	uint64_t sig;
	uint32_t cls;
};

struct hashsm {
	uint64_t *words;
	uint64_t nwords;
	uint64_t nbuckets;
	uint64_t lap;            /* scan covers all buckets within this many calls */
	uint64_t scan_next;      /* next bucket the scan visits */
	uint64_t scan_per_call;
	uint64_t items;
	uint64_t rehashes;
	uint64_t max_sig;
	uint64_t rng;
	hashsm_evict_fn evict;
	void *ctx;
	uint32_t n, active, now;
	uint32_t cls_empty;
	unsigned sig_bits, quot_bits, cls_bits, entry_bits;
	bool in_rebuild;         /* placement failure returns -EAGAIN, no growth */
	unsigned stash_used;
	struct hsm_entry stash[HSM_STASH];
};

static inline uint64_t slot_off(const struct hashsm *s, uint64_t slot)
{
	return slot * s->entry_bits;
}

static inline uint32_t slot_cls(const struct hashsm *s, uint64_t slot)
{
	return (uint32_t)bits_get(s->words, slot_off(s, slot), s->cls_bits);
}

static inline unsigned slot_alt(const struct hashsm *s, uint64_t slot)
{
	return (unsigned)bits_get(s->words, slot_off(s, slot) + s->cls_bits, 1);
}

static inline uint64_t slot_quot(const struct hashsm *s, uint64_t slot)
{
	return bits_get(s->words, slot_off(s, slot) + s->cls_bits + 1, s->quot_bits);
}

static inline void slot_write(struct hashsm *s, uint64_t slot, uint64_t quot, unsigned alt,
			      uint32_t cls)
{
	uint64_t off = slot_off(s, slot);

	bits_put(s->words, off, s->cls_bits, cls);
	bits_put(s->words, off + s->cls_bits, 1, alt);
	bits_put(s->words, off + s->cls_bits + 1, s->quot_bits, quot);
}

static inline void slot_clear(struct hashsm *s, uint64_t slot)
{
	bits_put(s->words, slot_off(s, slot), s->cls_bits, s->cls_empty);
}

static inline bool cls_expired(const struct hashsm *s, uint32_t cls)
{
	uint32_t age = s->now >= cls ? s->now - cls : s->now + s->n - cls;

	return age >= s->active;
}

static inline uint64_t alt_offset(const struct hashsm *s, uint64_t quot)
{
	uint64_t span = s->nbuckets - 1;

	if (!span)
		return 0;
	/* Multiply-shift range reduction: no division on the lookup path. */
	if (span <= UINT32_MAX)
		return 1 + (((quotient_mix(quot) >> 32) * span) >> 32);
	return 1 + quotient_mix(quot) % span;
}

static inline uint64_t other_bucket(const struct hashsm *s, uint64_t bucket, uint64_t off)
{
	return bucket + off >= s->nbuckets ? bucket + off - s->nbuckets : bucket + off;
}

static inline uint64_t back_bucket(const struct hashsm *s, uint64_t bucket, uint64_t off)
{
	return bucket >= off ? bucket - off : bucket + s->nbuckets - off;
}

static uint64_t slot_sig(const struct hashsm *s, uint64_t slot)
{
	uint64_t quot = slot_quot(s, slot), bucket = slot / HSM_WAYS;

	if (slot_alt(s, slot))
		bucket = back_bucket(s, bucket, alt_offset(s, quot));
	return quot * s->nbuckets + bucket;
}

static uint64_t next_random(struct hashsm *s)
{
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dULL;
}

static int hsm_geometry(struct hashsm *s, uint64_t nbuckets)
{
	uint64_t nbits;

	s->nbuckets = nbuckets;
	s->quot_bits = bit_length(s->max_sig / nbuckets);
	s->entry_bits = s->cls_bits + 1 + s->quot_bits;
	if (nbuckets > UINT64_MAX / HSM_WAYS / s->entry_bits)
		return -ENOMEM;
	nbits = nbuckets * HSM_WAYS * s->entry_bits;
	s->nwords = div_ceil(nbits, 64);
	s->scan_per_call = div_ceil(nbuckets, s->lap);
	if (s->nwords > SIZE_MAX / sizeof(uint64_t))
		return -ENOMEM;
	s->words = malloc(s->nwords * sizeof(uint64_t));
	if (!s->words)
		return -ENOMEM;
	/* All-ones class fields mark every slot empty. */
	memset(s->words, 0xff, s->nwords * sizeof(uint64_t));
	return 0;
}

struct hashsm *hashsm_new(uint64_t max_items, unsigned sig_bits, uint32_t n, uint32_t active,
			  uint64_t lap, hashsm_evict_fn evict, void *ctx)
{
	struct hashsm *s;
	uint64_t slots;

	if (!sig_bits || sig_bits > 64 || !n || !active || active > n || !lap || !max_items ||
	    max_items > UINT64_MAX / HSM_LOAD_DEN || n == UINT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sig_bits = sig_bits;
	s->max_sig = low_mask(sig_bits);
	s->n = n;
	s->active = active;
	s->lap = lap;
	s->evict = evict;
	s->ctx = ctx;
	s->cls_bits = bit_length(n);          /* values 0..n-1 plus the empty marker */
	s->cls_empty = (uint32_t)low_mask(s->cls_bits);
	s->rng = (0x853c49e6748fea9bULL ^ (max_items * 0x9e3779b97f4a7c15ULL)) | 1;
	slots = div_ceil(max_items * HSM_LOAD_DEN, HSM_LOAD_NUM);
	if (hsm_geometry(s, div_ceil(slots, HSM_WAYS))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void hashsm_free(struct hashsm *s)
{
	if (!s)
		return;
	free(s->words);
	free(s);
}

void hashsm_set_now(struct hashsm *s, uint32_t now)
{
	s->now = now;
}

static int64_t hsm_find(const struct hashsm *s, uint64_t sig)
{
	uint64_t quot = sig / s->nbuckets, b1 = sig % s->nbuckets, b2;
	unsigned w;

	for (w = 0; w < HSM_WAYS; w++) {
		uint64_t slot = b1 * HSM_WAYS + w;

		if (slot_cls(s, slot) != s->cls_empty && !slot_alt(s, slot) &&
		    slot_quot(s, slot) == quot)
			return (int64_t)slot;
	}
	if (s->nbuckets == 1)
		return -1;
	b2 = other_bucket(s, b1, alt_offset(s, quot));
	for (w = 0; w < HSM_WAYS; w++) {
		uint64_t slot = b2 * HSM_WAYS + w;

		if (slot_cls(s, slot) != s->cls_empty && slot_alt(s, slot) &&
		    slot_quot(s, slot) == quot)
			return (int64_t)slot;
	}
	return -1;
}

static int hsm_stash_find(const struct hashsm *s, uint64_t sig)
{
	unsigned i;

	for (i = 0; i < s->stash_used; i++)
		if (s->stash[i].sig == sig)
			return (int)i;
	return -1;
}

static void hsm_stash_remove(struct hashsm *s, unsigned i)
{
	s->stash[i] = s->stash[--s->stash_used];
	s->items--;
}

int64_t hashsm_get(const struct hashsm *s, uint64_t sig)
{
	int64_t slot = hsm_find(s, sig);
	int i;

	if (slot >= 0)
		return slot_cls(s, (uint64_t)slot);
	i = s->stash_used ? hsm_stash_find(s, sig) : -1;
	return i < 0 ? -1 : (int64_t)s->stash[i].cls;
}

/* Remove an expired entry and hand it on. */
static int hsm_evict_slot(struct hashsm *s, uint64_t slot)
{
	uint64_t sig = slot_sig(s, slot);
	uint32_t cls = slot_cls(s, slot);

	slot_clear(s, slot);
	s->items--;
	return s->evict ? s->evict(s->ctx, sig, cls) : 0;
}

/*
 * Put (quot, alt, cls) into an empty slot of bucket, or into one holding an
 * expired entry (evicted first).  1 if placed (rc gets the eviction's
 * result), 0 if the bucket is full of active entries.
 */
static int hsm_settle(struct hashsm *s, uint64_t bucket, uint64_t quot, unsigned alt,
		      uint32_t cls, int *rc)
{
	unsigned w;

	for (w = 0; w < HSM_WAYS; w++) {
		uint64_t slot = bucket * HSM_WAYS + w;

		if (slot_cls(s, slot) == s->cls_empty) {
			slot_write(s, slot, quot, alt, cls);
			s->items++;
			return 1;
		}
	}
	for (w = 0; w < HSM_WAYS; w++) {
		uint64_t slot = bucket * HSM_WAYS + w;

		if (cls_expired(s, slot_cls(s, slot))) {
			*rc = hsm_evict_slot(s, slot);
			slot_write(s, slot, quot, alt, cls);
			s->items++;
			return 1;
		}
	}
	return 0;
}

static int hsm_grow(struct hashsm *s, uint64_t sig, uint32_t cls);

/* Place a signature known to be absent. */
static int hsm_place(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	uint64_t quot = sig / s->nbuckets, b1 = sig % s->nbuckets;
	uint64_t b2 = other_bucket(s, b1, alt_offset(s, quot)), bucket;
	unsigned kicks;
	int rc = 0;

	if (hsm_settle(s, b1, quot, 0, cls, &rc) || (b2 != b1 && hsm_settle(s, b2, quot, 1, cls, &rc)))
		return rc;
	if (b1 == b2)
		goto full;
	/* Random-walk cuckoo: the new entry (then each victim) takes a random slot. */
	bucket = next_random(s) & 1 ? b2 : b1;
	for (kicks = 0; kicks < HSM_MAX_KICKS; kicks++) {
		uint64_t slot = bucket * HSM_WAYS + next_random(s) % HSM_WAYS;
		uint64_t vsig = slot_sig(s, slot), vquot, vb1, vb2, vnext;
		uint32_t vcls = slot_cls(s, slot);

		slot_write(s, slot, quot, bucket != b1, cls);
		/* A moved entry may skip a scan lap: examine it now. */
		if (cls_expired(s, vcls))
			return s->evict ? s->evict(s->ctx, vsig, vcls) : 0;
		vquot = vsig / s->nbuckets;
		vb1 = vsig % s->nbuckets;
		vb2 = other_bucket(s, vb1, alt_offset(s, vquot));
		vnext = bucket == vb1 ? vb2 : vb1;
		if (hsm_settle(s, vnext, vquot, vnext != vb1, vcls, &rc))
			return rc;
		sig = vsig;
		cls = vcls;
		quot = vquot;
		b1 = vb1;
		b2 = vb2;
		bucket = vnext;
	}
full:
	if (s->in_rebuild)
		return -EAGAIN;
	if (s->stash_used < HSM_STASH) {
		s->stash[s->stash_used].sig = sig;
		s->stash[s->stash_used].cls = cls;
		s->stash_used++;
		s->items++;
		return 0;
	}
	return hsm_grow(s, sig, cls);
}

/*
 * Emergency growth by 25%: rebuild with every active entry plus the homeless
 * one; expired entries found on the way are evicted after the rebuild.
 */
static int hsm_grow(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	struct hsm_entry *keep, *gone;
	uint64_t nkeep = 0, ngone = 0, slot, nslots = s->nbuckets * HSM_WAYS, i;
	uint64_t nbuckets = s->nbuckets;
	struct hashsm fresh;
	int rc = 0;

	keep = malloc((s->items + 1) * sizeof(*keep));
	gone = malloc((s->items + 1) * sizeof(*gone));
	if (!keep || !gone) {
		free(keep);
		free(gone);
		return -ENOMEM;
	}
	for (slot = 0; slot < nslots; slot++) {
		uint32_t c = slot_cls(s, slot);
		struct hsm_entry e;

		if (c == s->cls_empty)
			continue;
		e.sig = slot_sig(s, slot);
		e.cls = c;
		if (cls_expired(s, c))
			gone[ngone++] = e;
		else
			keep[nkeep++] = e;
	}
	for (i = 0; i < s->stash_used; i++) {
		if (cls_expired(s, s->stash[i].cls))
			gone[ngone++] = s->stash[i];
		else
			keep[nkeep++] = s->stash[i];
	}
	keep[nkeep].sig = sig;
	keep[nkeep].cls = cls;
	nkeep++;
	for (;;) {
		nbuckets += nbuckets / 4 ? nbuckets / 4 : 1;
		fresh = *s;
		fresh.items = 0;
		fresh.stash_used = 0;
		fresh.scan_next = 0;
		fresh.in_rebuild = true;
		if (hsm_geometry(&fresh, nbuckets)) {
			rc = -ENOMEM;
			break;
		}
		for (i = 0; i < nkeep; i++)
			if (hsm_place(&fresh, keep[i].sig, keep[i].cls))
				break;
		if (i == nkeep) {
			free(s->words);
			fresh.in_rebuild = false;
			fresh.rehashes++;
			*s = fresh;
			break;
		}
		free(fresh.words);
	}
	/* On failure the homeless entry is lost; the old table is intact otherwise. */
	if (rc == 0) {
		for (i = 0; i < ngone; i++) {
			int r = s->evict ? s->evict(s->ctx, gone[i].sig, gone[i].cls) : 0;

			rc = rc ? rc : r;
		}
	}
	free(keep);
	free(gone);
	return rc;
}

int hashsm_put(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	int64_t slot = hsm_find(s, sig);
	int i;

	if (slot >= 0) {
		bits_put(s->words, slot_off(s, (uint64_t)slot), s->cls_bits, cls);
		return 0;
	}
	i = s->stash_used ? hsm_stash_find(s, sig) : -1;
	if (i >= 0) {
		s->stash[i].cls = cls;
		return 0;
	}
	return hsm_place(s, sig, cls);
}

int hashsm_scan(struct hashsm *s)
{
	uint64_t i;
	int rc = 0;
	unsigned j = 0;

	/* The stash is examined in full on every call. */
	while (j < s->stash_used) {
		struct hsm_entry e = s->stash[j];

		if (cls_expired(s, e.cls)) {
			int r;

			hsm_stash_remove(s, j);
			r = s->evict ? s->evict(s->ctx, e.sig, e.cls) : 0;
			rc = rc ? rc : r;
		} else {
			j++;
		}
	}
	for (i = 0; i < s->scan_per_call; i++) {
		uint64_t bucket = s->scan_next;
		unsigned w;

		for (w = 0; w < HSM_WAYS; w++) {
			uint64_t slot = bucket * HSM_WAYS + w;
			uint32_t c = slot_cls(s, slot);

			if (c != s->cls_empty && cls_expired(s, c)) {
				int r = hsm_evict_slot(s, slot);

				rc = rc ? rc : r;
			}
		}
		s->scan_next = bucket + 1 == s->nbuckets ? 0 : bucket + 1;
	}
	return rc;
}

uint64_t hashsm_items(const struct hashsm *s)
{
	return s->items;
}

uint64_t hashsm_slots(const struct hashsm *s)
{
	return s->nbuckets * HSM_WAYS;
}

uint64_t hashsm_rehashes(const struct hashsm *s)
{
	return s->rehashes;
}

size_t hashsm_memory_bytes(const struct hashsm *s)
{
	return sizeof(*s) + s->nwords * sizeof(uint64_t);
}

/* ---- HistoricalMembership ------------------------------------------------ */

struct hm_level {
	struct hashsm *table;
	struct hm *owner;
	uint64_t bound;      /* proven maximum of coexisting entries */
	uint32_t n;          /* circular field of class IDs */
	uint32_t active;     /* classes kept: k+1, or J+1 at the top */
	uint32_t now;        /* contemporary class ID e_l */
	unsigned index;
};

struct hm {
	uint64_t window;
	uint64_t t;
	uint32_t k;
	unsigned top;
	unsigned sig_bits;
	struct hm_level level[];
};

static uint64_t signature(const struct hm *h, uint64_t key)
{
	uint64_t sig = hm_mix64(key);

	return h->sig_bits == 64 ? sig : sig >> (64 - h->sig_bits);
}

/* Evict callback: promote an expired entry of level l into level l+1. */
static int hm_promote(void *ctx, uint64_t sig, uint32_t cls)
{
	struct hm_level *lv = ctx, *next;
	struct hm *h = lv->owner;
	uint32_t age, d, parity, delta, e_star;

	if (lv->index == h->top)
		return 0;
	next = lv + 1;
	age = lv->now >= cls ? lv->now - cls : lv->now + lv->n - cls;
	d = age - lv->active;
	parity = (uint32_t)(h->t >> lv->index) & 1;
	delta = (d + 1 - parity) / 2;
	/* The scan deadline makes d = 0; anything else would alias the IDs. */
	assert(d == 0 && delta < next->active);
	e_star = next->now >= delta ? next->now - delta : next->now + next->n - delta;
	return hashsm_put(next->table, sig, e_star);
}

struct hm *hm_new_sig(uint64_t window, uint32_t inv_eps, unsigned sig_bits)
{
	uint64_t per_level = window / (inv_eps ? inv_eps : 1), width, top_active;
	unsigned top, l;
	struct hm *h;

	if (!window || !inv_eps || !sig_bits || sig_bits > 64 || window > (UINT64_MAX >> 2) ||
	    inv_eps > (UINT32_MAX - 4) / 2) {
		errno = EINVAL;
		return NULL;
	}
	top = per_level >= 4 ? bit_length(per_level) - 2 : 0;
	width = 1ULL << top;
	top_active = div_ceil(window + 1 - (uint64_t)inv_eps * (width - 1), width);
	if (top_active > (UINT32_MAX - 2) / 2) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h) + (top + 1) * sizeof(h->level[0]));
	if (!h)
		return NULL;
	h->window = window;
	h->k = inv_eps;
	h->top = top;
	h->sig_bits = sig_bits;
	for (l = 0; l <= top; l++) {
		struct hm_level *lv = &h->level[l];
		uint64_t lap = l ? 1ULL << (l - 1) : 1;

		lv->owner = h;
		lv->index = l;
		if (l == top) {
			lv->active = (uint32_t)top_active;
			lv->bound = top ? top_active * width + width / 2 : window + 2;
		} else {
			lv->active = inv_eps + 1;
			lv->bound = l ? (uint64_t)(inv_eps + 1) * (1ULL << l) + (1ULL << (l - 1))
				      : (uint64_t)inv_eps + 2;
		}
		lv->n = 2 * lv->active;
		lv->table = hashsm_new(lv->bound, sig_bits, lv->n, lv->active, lap, hm_promote, lv);
		if (!lv->table) {
			hm_free(h);
			errno = ENOMEM;
			return NULL;
		}
	}
	return h;
}

struct hm *hm_new(uint64_t window, uint32_t inv_eps)
{
	return hm_new_sig(window, inv_eps, 64);
}

void hm_free(struct hm *h)
{
	unsigned l;

	if (!h)
		return;
	for (l = 0; l <= h->top; l++)
		hashsm_free(h->level[l].table);
	free(h);
}

int hm_insert(struct hm *h, uint64_t key)
{
	unsigned l;
	int rc, r;

	h->t++;
	/* Algorithm 2 lines 3-5: level l's clock ticks when 2^l divides t. */
	for (l = 0; l <= h->top && !(h->t & low_mask(l)); l++) {
		struct hm_level *lv = &h->level[l];

		lv->now = lv->now + 1 == lv->n ? 0 : lv->now + 1;
		hashsm_set_now(lv->table, lv->now);
	}
	rc = hashsm_put(h->level[0].table, signature(h, key), h->level[0].now);
	/* Bottom-up, so promotions made by one level's scan are seen by the next. */
	for (l = 0; l <= h->top; l++) {
		r = hashsm_scan(h->level[l].table);
		rc = rc ? rc : r;
	}
	return rc;
}

int64_t hm_query(const struct hm *h, uint64_t key)
{
	uint64_t sig = signature(h, key);
	unsigned l;

	for (l = 0; l <= h->top; l++) {
		const struct hm_level *lv = &h->level[l];
		int64_t cls = hashsm_get(lv->table, sig);
		uint64_t age, estimate;

		if (cls < 0)
			continue;
		age = lv->now >= cls ? lv->now - (uint64_t)cls : lv->now + lv->n - (uint64_t)cls;
		estimate = (age << l) + (uint64_t)h->k * low_mask(l) + (h->t & low_mask(l));
		return estimate > h->window ? -1 : (int64_t)estimate;
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
	uint64_t sum = 0;
	unsigned l;

	for (l = 0; l <= h->top; l++)
		sum += hashsm_items(h->level[l].table);
	return sum;
}

uint64_t hm_level_items(const struct hm *h, unsigned level)
{
	return level <= h->top ? hashsm_items(h->level[level].table) : 0;
}

uint64_t hm_level_bound(const struct hm *h, unsigned level)
{
	return level <= h->top ? h->level[level].bound : 0;
}

uint64_t hm_level_slots(const struct hm *h, unsigned level)
{
	return level <= h->top ? hashsm_slots(h->level[level].table) : 0;
}

uint64_t hm_rehashes(const struct hm *h)
{
	uint64_t sum = 0;
	unsigned l;

	for (l = 0; l <= h->top; l++)
		sum += hashsm_rehashes(h->level[l].table);
	return sum;
}

size_t hm_memory_bytes(const struct hm *h)
{
	size_t bytes = sizeof(*h) + (h->top + 1) * sizeof(h->level[0]);
	unsigned l;

	for (l = 0; l <= h->top; l++)
		bytes += hashsm_memory_bytes(h->level[l].table);
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
