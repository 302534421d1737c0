// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HashSM, the compact bucketized cuckoo table of hm_table.h.
 *
 * Bucket of a signature: primary b1 = sig mod nbuckets, quotient
 * q = sig / nbuckets (one multiply-high by a precomputed reciprocal and a
 * correction, no division), alternate b2 = b1 + 1 + (mix(q) reduced to
 * [0, nbuckets - 1)) mod nbuckets.  The slot stores q and whether it is in
 * b2, so sig = q * nbuckets + b1 is recoverable.
 *
 * Slot metadata (class, the quotient's low bits as a fingerprint where
 * room is left, the alternate bit) is packed apart from the quotients, so
 * a bucket's eight metadata fields are one unaligned load (when they fit
 * 57 bits) and occupied, empty or matching slots are found word-parallel
 * (bits_zero_fields); only candidates' quotients are read.  When
 * n = active + 1 (HistoricalMembership levels) an expired entry can only
 * hold the class now + 1, found the same way; otherwise the scan tests each
 * field.  Entries expire only when the clock moves, so the scan makes one
 * pass after each hashsm_set_now() that changes it and then rests.
 */
#include "hm_table.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "hm_bits.h"

#define HSM_WAYS_LOG2 3
#define HSM_WAYS (1u << HSM_WAYS_LOG2)
/* Grow before the load passes 0.95 (higher costs cuckoo walks); grow by 1/16 of the buckets. */
#define HSM_LOAD_NUM 95u
#define HSM_LOAD_DEN 100u
#define HSM_GROW_SHIFT 4
#define HSM_MAX_KICKS 500u
/* Overflow entries kept beside the table before growing it. */
#define HSM_STASH 2u

/*
 * The header is counted in the table's memory, which on repeat-heavy
 * streams is a few hundred entries: masks derived from the widths off the
 * hottest paths are recomputed (a shift or a multiply) rather than stored.
 */
struct hashsm {
	uint64_t *words;          /* metadata fields, then quotients (+1 spare word) */
	uint64_t *quots;
	uint64_t nbuckets, recip;  /* recip = floor((2^64 - 1) / nbuckets) */
	uint64_t items;
	uint64_t scan_next;
	uint64_t scan_left;       /* buckets the pass since the last tick has still to visit */
	uint64_t rng;
	/* Per-field masks over a bucket's metadata (bucket_fits): lowest bit, top bit, bits below it. */
	uint64_t bk_ones, bk_high, bk_low;
	uint64_t meta_mask, bucket_mask;  /* low_mask of a slot's and a bucket's metadata */
	hashsm_evict_fn evict;
	void *ctx;
	uint64_t stash_sig[HSM_STASH];
	uint32_t stash_cls[HSM_STASH];
	uint32_t n, active, now;
	uint32_t rehashes;
	uint16_t field_magic;     /* ceil(2^16 / meta_bits): field of a bit by multiply-shift */
	uint8_t lap_log2;         /* lap rounded down to a power of two */
	uint8_t meta_bits, quot_bits, sig_bits, stash_used;
	uint8_t cls_bits, fp_bits, cls_shift;  /* metadata: class << cls_shift | fingerprint << 1 | alt */
	bool in_rebuild, bucket_fits, one_expired;
};

static inline uint32_t cls_empty(const struct hashsm *s)
{
	return (uint32_t)low_mask(s->cls_bits);
}

/* Each field's class bits; each field's class equal to cls. */
static inline uint64_t bk_cls(const struct hashsm *s)
{
	return s->bk_ones * ((uint64_t)cls_empty(s) << s->cls_shift);
}

static inline uint64_t bk_class(const struct hashsm *s, uint32_t cls)
{
	return s->bk_ones * ((uint64_t)cls << s->cls_shift);
}

static inline uint64_t grow_at(const struct hashsm *s)
{
	return s->nbuckets * HSM_WAYS * HSM_LOAD_NUM / HSM_LOAD_DEN;
}

/* An expired entry of an n = active + 1 table holds class now + 1. */
static inline uint64_t bk_expired(const struct hashsm *s)
{
	return bk_class(s, s->now + 1 == s->n ? 0 : s->now + 1);
}

static uint64_t quotient_mix(uint64_t q)
{
	q ^= q >> 33;
	q *= 0xff51afd7ed558ccdULL;
	q ^= q >> 33;
	q *= 0xc4ceb9fe1a85ec53ULL;
	return q ^ (q >> 33);
}

/* sig = quot * nbuckets + bucket. */
static inline uint64_t hsm_split(const struct hashsm *s, uint64_t sig, uint64_t *bucket)
{
	uint64_t q = (uint64_t)(((unsigned __int128)sig * s->recip) >> 64), r = sig - q * s->nbuckets;

	while (r >= s->nbuckets) {
		q++;
		r -= s->nbuckets;
	}
	*bucket = r;
	return q;
}

static inline uint64_t alt_offset(const struct hashsm *s, uint64_t quot)
{
	uint64_t span = s->nbuckets - 1;

	/* Multiplicative hash of the quotient, reduced by multiply-shift. */
	if (span <= UINT32_MAX)
		return 1 + ((((quot * 0x9e3779b97f4a7c15ULL) >> 32) * span) >> 32);
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

/* The metadata field holding bit `bit` (< 64) of a bucket's fields, without a division. */
static inline unsigned field_of(const struct hashsm *s, int bit)
{
	return ((unsigned)bit * s->field_magic) >> 16;
}

static inline uint32_t slot_meta(const struct hashsm *s, uint64_t slot)
{
	return (uint32_t)bits_get57m(s->words, slot * s->meta_bits, s->meta_mask);
}

/* The metadata fields of a bucket's slots, when they fit one load. */
static inline uint64_t bucket_metas(const struct hashsm *s, uint64_t bucket)
{
	return bits_get57m(s->words, bucket * HSM_WAYS * s->meta_bits, s->bucket_mask);
}

/* The stored high part of a slot's quotient (its low fp_bits are in the metadata). */
static inline uint64_t slot_qhigh(const struct hashsm *s, uint64_t slot)
{
	if (!s->quot_bits)
		return 0;
	if (s->quot_bits <= 57)
		return bits_get57m(s->quots, slot * s->quot_bits, low_mask(s->quot_bits));
	return bits_get(s->quots, slot * s->quot_bits, s->quot_bits);
}

static inline uint64_t slot_quot(const struct hashsm *s, uint64_t slot)
{
	return slot_qhigh(s, slot) << s->fp_bits | ((slot_meta(s, slot) >> 1) & low_mask(s->fp_bits));
}

static inline uint32_t meta_cls(const struct hashsm *s, uint32_t meta)
{
	return meta >> s->cls_shift;
}

static inline void slot_write(struct hashsm *s, uint64_t slot, uint64_t quot, unsigned alt,
			      uint32_t cls)
{
	bits_put57m(s->words, slot * s->meta_bits, s->meta_mask,
		    (uint64_t)cls << s->cls_shift | (quot & low_mask(s->fp_bits)) << 1 | alt);
	if (s->quot_bits > 57)
		bits_put(s->quots, slot * s->quot_bits, s->quot_bits, quot >> s->fp_bits);
	else if (s->quot_bits)
		bits_put57m(s->quots, slot * s->quot_bits, low_mask(s->quot_bits), quot >> s->fp_bits);
}

static inline void slot_clear(struct hashsm *s, uint64_t slot)
{
	bits_put57m(s->words, slot * s->meta_bits, s->meta_mask, (uint64_t)cls_empty(s) << s->cls_shift);
}

static inline bool cls_expired(const struct hashsm *s, uint32_t cls)
{
	uint32_t age = s->now >= cls ? s->now - cls : s->now + s->n - cls;

	return age >= s->active;
}

static uint64_t slot_sig(const struct hashsm *s, uint64_t slot)
{
	uint64_t quot = slot_quot(s, slot), bucket = slot / HSM_WAYS;

	if (slot_meta(s, slot) & 1)
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

/* Allocate an empty table of nbuckets buckets (s->words is replaced, not freed). */
static int hsm_geometry(struct hashsm *s, uint64_t nbuckets)
{
	uint64_t slots, meta_words, quot_words;

	if (nbuckets > (UINT64_MAX >> 8) / HSM_WAYS)
		return -ENOMEM;
	slots = nbuckets * HSM_WAYS;
	s->nbuckets = nbuckets;
	s->recip = UINT64_MAX / nbuckets;
	unsigned total = bit_length(low_mask(s->sig_bits) / nbuckets);
	/* Room in a one-load bucket of metadata moves the quotient's low bits there. */
	unsigned room = 57 / HSM_WAYS > s->cls_bits + 1u ? 57 / HSM_WAYS - s->cls_bits - 1u : 0;

	s->fp_bits = (uint8_t)(total < room ? total : room);
	s->quot_bits = (uint8_t)(total - s->fp_bits);
	s->cls_shift = (uint8_t)(1 + s->fp_bits);
	s->meta_bits = (uint8_t)(s->cls_bits + s->cls_shift);
	s->field_magic = (uint16_t)((65536 + s->meta_bits - 1) / s->meta_bits);
	meta_words = div_ceil(slots * s->meta_bits, 64) + 1;
	quot_words = div_ceil(slots * s->quot_bits, 64) + 1;
	if (meta_words + quot_words > SIZE_MAX / sizeof(uint64_t))
		return -ENOMEM;
	s->words = malloc((meta_words + quot_words) * sizeof(uint64_t));
	if (!s->words)
		return -ENOMEM;
	s->quots = s->words + meta_words;
	/* All-ones class fields mark every slot empty. */
	memset(s->words, 0xff, meta_words * sizeof(uint64_t));
	memset(s->quots, 0, quot_words * sizeof(uint64_t));
	/* A scan chunk: as many whole buckets of metadata as fit in 64 bits. */
	/* One load reads a bucket's metadata when its fields fit 57 bits. */
	s->bucket_fits = HSM_WAYS * s->meta_bits <= 57;
	s->meta_mask = low_mask(s->meta_bits);
	s->bucket_mask = low_mask(HSM_WAYS * s->meta_bits);
	s->bk_ones = s->bucket_fits ? bits_broadcast(1, s->meta_bits, HSM_WAYS) : 0;
	s->bk_high = s->bk_ones << (s->meta_bits - 1);
	s->bk_low = s->bk_high - s->bk_ones;
	/* n = active + 1: an expired entry can only hold class now + 1 (see hashsm_set_now). */
	s->one_expired = s->bucket_fits && s->n == s->active + 1;
	return 0;
}

struct hashsm *hashsm_new(uint64_t max_items, unsigned sig_bits, uint32_t n, uint32_t active,
			  uint64_t lap, hashsm_evict_fn evict, void *ctx)
{
	struct hashsm *s;
	uint64_t slots;

	if (!sig_bits || sig_bits > 64 || !n || !active || active > n || !lap || !max_items ||
	    max_items > (UINT64_MAX >> 8) || n >= (1u << 30)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sig_bits = (uint8_t)sig_bits;
	s->n = n;
	s->active = active;
	s->lap_log2 = (uint8_t)(bit_length(lap) - 1);
	s->evict = evict;
	s->ctx = ctx;
	/* Class values 0..n-1 plus the all-ones empty marker, then the alternate bit. */
	s->cls_bits = (uint8_t)bit_length(n);
	s->rng = (0x853c49e6748fea9bULL ^ (max_items * 0x9e3779b97f4a7c15ULL)) | 1;
	slots = div_ceil(max_items * HSM_LOAD_DEN, HSM_LOAD_NUM);
	if (hsm_geometry(s, div_ceil(slots, HSM_WAYS))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	hashsm_set_now(s, 0);
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
	/* Entries expire only when the clock moves: one full pass after each tick finds them. */
	if (now != s->now)
		s->scan_left = s->nbuckets;
	s->now = now;
}

/* Fields of one bucket's metadata (bucket_fits): the top bit of each empty one. */
static inline uint64_t bucket_empties(const struct hashsm *s, uint64_t metas)
{
	return bits_zero_fields(~metas & bk_cls(s), s->bk_low, s->bk_high);
}

/* Slot of (quot, alt) in bucket, or -1. */
static inline int64_t bucket_find(const struct hashsm *s, uint64_t bucket, uint64_t quot,
				  unsigned alt)
{
	uint64_t slot = bucket * HSM_WAYS, metas, cand, want;
	unsigned w;

	if (!s->bucket_fits) {
		for (w = 0; w < HSM_WAYS; w++) {
			uint32_t m = slot_meta(s, slot + w);

			if (meta_cls(s, m) != cls_empty(s) && (m & 1) == alt && slot_quot(s, slot + w) == quot)
				return (int64_t)(slot + w);
		}
		return -1;
	}
	/* Candidates: occupied slots whose alternate bit and fingerprint match; then the stored quotient. */
	metas = bucket_metas(s, bucket);
	want = (quot & low_mask(s->fp_bits)) << 1 | alt;
	cand = bits_zero_fields((metas ^ s->bk_ones * want) & (s->bk_ones * low_mask(s->cls_shift)), s->bk_low,
				s->bk_high) &
	       ~bucket_empties(s, metas);
	while (cand) {
		w = field_of(s, __builtin_ctzll(cand));
		if (slot_qhigh(s, slot + w) == quot >> s->fp_bits)
			return (int64_t)(slot + w);
		cand &= cand - 1;
	}
	return -1;
}

static int64_t hsm_find(const struct hashsm *s, uint64_t sig)
{
	uint64_t b1, quot = hsm_split(s, sig, &b1);
	int64_t slot = bucket_find(s, b1, quot, 0);

	if (slot >= 0 || s->nbuckets == 1)
		return slot;
	return bucket_find(s, other_bucket(s, b1, alt_offset(s, quot)), quot, 1);
}

static int hsm_stash_find(const struct hashsm *s, uint64_t sig)
{
	unsigned i;

	for (i = 0; i < s->stash_used; i++)
		if (s->stash_sig[i] == sig)
			return (int)i;
	return -1;
}

static void hsm_stash_remove(struct hashsm *s, unsigned i)
{
	s->stash_used--;
	s->stash_sig[i] = s->stash_sig[s->stash_used];
	s->stash_cls[i] = s->stash_cls[s->stash_used];
	s->items--;
}

int64_t hashsm_get(const struct hashsm *s, uint64_t sig)
{
	int64_t slot = hsm_find(s, sig);
	int i;

	if (slot >= 0)
		return meta_cls(s, slot_meta(s, (uint64_t)slot));
	i = s->stash_used ? hsm_stash_find(s, sig) : -1;
	return i < 0 ? -1 : (int64_t)s->stash_cls[i];
}

int64_t hashsm_take(struct hashsm *s, uint64_t sig)
{
	int64_t slot = hsm_find(s, sig), cls;
	int i;

	if (slot >= 0) {
		cls = meta_cls(s, slot_meta(s, (uint64_t)slot));
		slot_clear(s, (uint64_t)slot);
		s->items--;
		return cls;
	}
	i = s->stash_used ? hsm_stash_find(s, sig) : -1;
	if (i < 0)
		return -1;
	cls = s->stash_cls[i];
	hsm_stash_remove(s, (unsigned)i);
	return cls;
}

/* Remove an expired entry and hand it on. */
static int hsm_evict_slot(struct hashsm *s, uint64_t slot)
{
	uint64_t sig;
	uint32_t cls;

	s->items--;
	if (!s->evict) {
		slot_clear(s, slot);
		return 0;
	}
	sig = slot_sig(s, slot);
	cls = meta_cls(s, slot_meta(s, slot));
	slot_clear(s, slot);
	return s->evict(s->ctx, sig, cls);
}

/*
 * Put (quot, alt, cls) into an empty slot of bucket, or into one holding an
 * expired entry (evicted first).  1 if placed (rc gets the eviction's
 * result), 0 if the bucket is full of active entries.
 */
static int hsm_settle(struct hashsm *s, uint64_t bucket, uint64_t quot, unsigned alt,
		      uint32_t cls, int *rc)
{
	uint64_t slot = bucket * HSM_WAYS, metas = 0, empties;
	unsigned w;

	if (s->bucket_fits) {
		metas = bucket_metas(s, bucket);
		empties = bucket_empties(s, metas);
		if (empties) {
			slot_write(s, slot + field_of(s, __builtin_ctzll(empties)), quot, alt, cls);
			s->items++;
			return 1;
		}
	} else {
		for (w = 0; w < HSM_WAYS; w++) {
			if (meta_cls(s, slot_meta(s, slot + w)) == cls_empty(s)) {
				slot_write(s, slot + w, quot, alt, cls);
				s->items++;
				return 1;
			}
		}
	}
	if (s->one_expired) {
		uint64_t hits = bits_zero_fields((metas & bk_cls(s)) ^ bk_expired(s), s->bk_low, s->bk_high);

		if (!hits)
			return 0;
		w = field_of(s, __builtin_ctzll(hits));
		*rc = hsm_evict_slot(s, slot + w);
		slot_write(s, slot + w, quot, alt, cls);
		s->items++;
		return 1;
	}
	for (w = 0; w < HSM_WAYS; w++) {
		uint32_t c = (s->bucket_fits ? (uint32_t)(metas >> (w * s->meta_bits)) & (uint32_t)low_mask(s->meta_bits)
					     : slot_meta(s, slot + w)) >> s->cls_shift;

		if (cls_expired(s, c)) {
			*rc = hsm_evict_slot(s, slot + w);
			slot_write(s, slot + w, quot, alt, cls);
			s->items++;
			return 1;
		}
	}
	return 0;
}

static int hsm_grow(struct hashsm *s, uint64_t sig, uint32_t cls);

/* Random-walk cuckoo from a full pair of buckets; the homeless entry ends in the stash. */
static int hsm_kick(struct hashsm *s, uint64_t sig, uint32_t cls, uint64_t quot, uint64_t b1,
		    uint64_t b2)
{
	uint64_t bucket = next_random(s) & 1 ? b2 : b1;
	unsigned kicks;
	int rc = 0;

	for (kicks = 0; kicks < HSM_MAX_KICKS; kicks++) {
		uint64_t slot = bucket * HSM_WAYS + (next_random(s) >> (64 - HSM_WAYS_LOG2));
		uint64_t vsig = slot_sig(s, slot), vquot, vb1, vb2, vnext;
		uint32_t vcls = meta_cls(s, slot_meta(s, slot));

		slot_write(s, slot, quot, bucket != b1, cls);
		/* A moved entry may skip a scan lap: examine it now. */
		if (cls_expired(s, vcls))
			return s->evict ? s->evict(s->ctx, vsig, vcls) : 0;
		vquot = hsm_split(s, vsig, &vb1);
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
	if (s->in_rebuild)
		return -EAGAIN;
	if (s->stash_used < HSM_STASH) {
		s->stash_sig[s->stash_used] = sig;
		s->stash_cls[s->stash_used] = cls;
		s->stash_used++;
		s->items++;
		return 0;
	}
	return hsm_grow(s, sig, cls);
}

/* Place a signature known to be absent. */
static int hsm_place(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	uint64_t b1, quot = hsm_split(s, sig, &b1), b2;
	int rc = 0;

	if (hsm_settle(s, b1, quot, 0, cls, &rc))
		return rc;
	if (s->nbuckets == 1)
		return s->in_rebuild ? -EAGAIN : hsm_grow(s, sig, cls);
	b2 = other_bucket(s, b1, alt_offset(s, quot));
	if (hsm_settle(s, b2, quot, 1, cls, &rc))
		return rc;
	return hsm_kick(s, sig, cls, quot, b1, b2);
}

struct hsm_entry {
	uint64_t sig;
	uint32_t cls;
};

/* Active entries (plus the homeless one) to keep, expired ones to evict after a rebuild. */
static int hsm_collect(const struct hashsm *s, struct hsm_entry *keep, uint64_t *nkeep,
		       struct hsm_entry *gone, uint64_t *ngone)
{
	uint64_t slot, nslots = s->nbuckets * HSM_WAYS;
	unsigned i;

	for (slot = 0; slot < nslots; slot++) {
		uint32_t c = meta_cls(s, slot_meta(s, slot));
		struct hsm_entry e;

		if (c == cls_empty(s))
			continue;
		e.sig = slot_sig(s, slot);
		e.cls = c;
		if (cls_expired(s, c))
			gone[(*ngone)++] = e;
		else
			keep[(*nkeep)++] = e;
	}
	for (i = 0; i < s->stash_used; i++) {
		struct hsm_entry e = { s->stash_sig[i], s->stash_cls[i] };

		if (cls_expired(s, e.cls))
			gone[(*ngone)++] = e;
		else
			keep[(*nkeep)++] = e;
	}
	return 0;
}

/*
 * Grow by 1/16 (more if the entries do not fit): rebuild with every active
 * entry plus the homeless one; expired entries found on the way are evicted
 * after the rebuild.  On failure the homeless entry is lost, the rest intact.
 */
static int hsm_grow(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	struct hsm_entry *keep, *gone;
	uint64_t nkeep = 0, ngone = 0, i, nbuckets = s->nbuckets;
	struct hashsm fresh;
	int rc = 0;

	keep = malloc((s->items + 1) * sizeof(*keep));
	gone = malloc((s->items + 1) * sizeof(*gone));
	if (!keep || !gone) {
		free(keep);
		free(gone);
		return -ENOMEM;
	}
	hsm_collect(s, keep, &nkeep, gone, &ngone);
	keep[nkeep].sig = sig;
	keep[nkeep].cls = cls;
	nkeep++;
	for (;;) {
		nbuckets += nbuckets >> HSM_GROW_SHIFT ? nbuckets >> HSM_GROW_SHIFT : 1;
		fresh = *s;
		fresh.items = 0;
		fresh.stash_used = 0;
		fresh.scan_next = 0;
		fresh.scan_left = 0;  /* every expired entry is evicted below */
		fresh.in_rebuild = true;
		if (hsm_geometry(&fresh, nbuckets)) {
			rc = -ENOMEM;
			break;
		}
		for (i = 0; i < nkeep; i++)
			if (hsm_place(&fresh, keep[i].sig, keep[i].cls))
				break;
		if (i == nkeep && fresh.items <= grow_at(&fresh)) {
			free(s->words);
			fresh.in_rebuild = false;
			fresh.rehashes++;
			*s = fresh;
			break;
		}
		free(fresh.words);
	}
	for (i = 0; rc == 0 && i < ngone; i++) {
		int r = s->evict ? s->evict(s->ctx, gone[i].sig, gone[i].cls) : 0;

		rc = rc ? rc : r;
	}
	free(keep);
	free(gone);
	return rc;
}

int hashsm_add(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	if (s->items + 1 > grow_at(s))
		return hsm_grow(s, sig, cls);
	return hsm_place(s, sig, cls);
}

int hashsm_put(struct hashsm *s, uint64_t sig, uint32_t cls)
{
	int64_t slot = hsm_find(s, sig);
	int i;

	if (slot >= 0) {
		bits_put(s->words, (uint64_t)slot * s->meta_bits + s->cls_shift, s->cls_bits, cls);
		return 0;
	}
	i = s->stash_used ? hsm_stash_find(s, sig) : -1;
	if (i >= 0) {
		s->stash_cls[i] = cls;
		return 0;
	}
	return hashsm_add(s, sig, cls);
}

static int hsm_scan_stash(struct hashsm *s)
{
	unsigned j = 0;
	int rc = 0;

	while (j < s->stash_used) {
		uint64_t sig = s->stash_sig[j];
		uint32_t cls = s->stash_cls[j];

		if (cls_expired(s, cls)) {
			int r;

			hsm_stash_remove(s, j);
			r = s->evict ? s->evict(s->ctx, sig, cls) : 0;
			rc = rc ? rc : r;
		} else {
			j++;
		}
	}
	return rc;
}

/* Expired entries among the count buckets from first: one field at a time. */
static int hsm_scan_fields(struct hashsm *s, uint64_t first, uint64_t count)
{
	uint64_t slot, end = (first + count) * HSM_WAYS;
	int rc = 0;

	for (slot = first * HSM_WAYS; slot < end; slot++) {
		uint32_t c = meta_cls(s, slot_meta(s, slot));

		if (c != cls_empty(s) && cls_expired(s, c)) {
			int r = hsm_evict_slot(s, slot);

			rc = rc ? rc : r;
		}
	}
	return rc;
}

/* n = active + 1: every expired entry holds class now + 1; find them a bucket at a time. */
static int hsm_scan_swar(struct hashsm *s, uint64_t first, uint64_t count)
{
	uint64_t b, end = first + count;
	int rc = 0;

	for (b = first; b < end; b++) {
		uint64_t hits = bits_zero_fields((bucket_metas(s, b) & bk_cls(s)) ^ bk_expired(s), s->bk_low,
						 s->bk_high);

		while (hits) {
			int r = hsm_evict_slot(s, b * HSM_WAYS + field_of(s, __builtin_ctzll(hits)));

			rc = rc ? rc : r;
			hits &= hits - 1;
		}
	}
	return rc;
}

int hashsm_scan(struct hashsm *s)
{
	uint64_t per_call = (s->nbuckets + low_mask(s->lap_log2)) >> s->lap_log2;
	uint64_t left = per_call < s->scan_left ? per_call : s->scan_left;
	int rc, r;

	if (!s->scan_left)
		return 0;
	s->scan_left -= left;
	rc = s->stash_used ? hsm_scan_stash(s) : 0;

	while (left) {
		uint64_t count = s->nbuckets - s->scan_next < left ? s->nbuckets - s->scan_next : left;

		if (s->one_expired)
			r = hsm_scan_swar(s, s->scan_next, count);
		else
			r = hsm_scan_fields(s, s->scan_next, count);
		rc = rc ? rc : r;
		left -= count;
		s->scan_next += count;
		if (s->scan_next == s->nbuckets)
			s->scan_next = 0;
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

size_t hashsm_header_bytes(const struct hashsm *s)
{
	return sizeof(*s) + 2 * sizeof(uint64_t);
}

size_t hashsm_memory_bytes(const struct hashsm *s)
{
	uint64_t slots = s->nbuckets * HSM_WAYS;

	return sizeof(*s) + (div_ceil(slots * s->meta_bits, 64) + div_ceil(slots * s->quot_bits, 64) + 2) *
				    sizeof(uint64_t);
}
