// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The class list compiled into the classifier's tables (class_compile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "class_compile.h"
#include "pacer_classify.h"

static void set_bit(struct pacer_cls_set *s, int i)
{
	s->w[i / 64] |= 1ULL << (i % 64);
}

/* ---- the pool: each distinct set once ---- */

#define POOL_SLOTS (2 * PACER_CLS_POOL) /* open addressing, at most half full */

struct pool_index {
	__u16 slot[POOL_SLOTS]; /* id + 1; 0 empty */
};

static __u32 set_hash(const struct pacer_cls_set *s)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;
	int i;

	for (i = 0; i < PACER_CLS_WORDS; i++) {
		h ^= s->w[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	return (__u32)h;
}

/* The pool id of s, added if new; -ENOSPC if the pool is full (it cannot be: see the bound below). */
static int pool_id(struct pacer_cls_compiled *cc, struct pool_index *ix, const struct pacer_cls_set *s)
{
	__u32 i = set_hash(s) % POOL_SLOTS;

	for (;; i = (i + 1) % POOL_SLOTS) {
		__u16 id = ix->slot[i];

		if (!id)
			break;
		if (!memcmp(&cc->pool[id - 1], s, sizeof(*s)))
			return id - 1;
	}
	if (cc->n_pool >= PACER_CLS_POOL)
		return -ENOSPC;
	cc->pool[cc->n_pool] = *s;
	ix->slot[i] = (__u16)(cc->n_pool + 1);
	return (int)cc->n_pool++;
}

/* ---- head ---- */

static int head_fits(const struct pacer_match *m, __u32 fam, __u32 proto, __u32 l4, __u32 syn)
{
	__u32 t = m->terms;

	if ((t & PACER_M_PROTO) && m->proto != proto)
		return 0;
	if ((t & (PACER_M_FAMILY | PACER_M_SRC | PACER_M_DST)) && m->family != fam)
		return 0;
	if ((t & (PACER_M_DPORT | PACER_M_SPORT | PACER_M_SYN)) && !l4)
		return 0;
	if ((t & PACER_M_SYN) && !syn)
		return 0;
	return 1;
}

static void compile_head(const struct pacer_class *c, int n, struct pacer_cls_compiled *cc)
{
	__u32 idx;
	int i;

	for (idx = 0; idx < PACER_CLS_HEAD_ENTRIES; idx++) {
		__u32 fam = idx >> 10 & 1 ? 6 : 4, proto = idx >> 2 & 0xff, l4 = idx >> 1 & 1, syn = idx & 1;

		/* An index no packet has (a SYN bit without TCP's header) stays empty. */
		if (syn && !(l4 && proto == PACER_IPPROTO_TCP))
			continue;
		for (i = 0; i < n; i++)
			if (head_fits(&c[i].m, fam, proto, l4, syn))
				set_bit(&cc->head[idx], i);
	}
}

/* ---- ports ---- */

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* One port dimension (term PACER_M_DPORT or _SPORT) into ids[65536]. */
static int compile_ports(const struct pacer_class *c, int n, __u32 term, __u16 *ids,
			 struct pacer_cls_compiled *cc, struct pool_index *ix)
{
	__u32 bounds[2 * PACER_MAX_CLASSES + 2];
	int nb = 0, b, i;

	bounds[nb++] = 0;
	for (i = 0; i < n; i++) {
		const struct pacer_match *m = &c[i].m;
		__u32 lo = term == PACER_M_DPORT ? m->dport_lo : m->sport_lo;
		__u32 hi = term == PACER_M_DPORT ? m->dport_hi : m->sport_hi;

		if (!(m->terms & term))
			continue;
		bounds[nb++] = lo;
		if (hi < 65535)
			bounds[nb++] = hi + 1;
	}
	qsort(bounds, (size_t)nb, sizeof(bounds[0]), cmp_u32);
	/* Each elementary interval [bounds[b], next bound): one set. */
	for (b = 0; b < nb; b++) {
		__u32 lo = bounds[b], hi = 65535, p;
		struct pacer_cls_set s;
		int id;

		if (b && bounds[b] == bounds[b - 1])
			continue;
		for (i = b + 1; i < nb; i++)
			if (bounds[i] != lo) {
				hi = bounds[i] - 1;
				break;
			}
		memset(&s, 0, sizeof(s));
		for (i = 0; i < n; i++) {
			const struct pacer_match *m = &c[i].m;
			__u32 clo = term == PACER_M_DPORT ? m->dport_lo : m->sport_lo;
			__u32 chi = term == PACER_M_DPORT ? m->dport_hi : m->sport_hi;

			if (!(m->terms & term) || (clo <= lo && lo <= chi))
				set_bit(&s, i);
		}
		id = pool_id(cc, ix, &s);
		if (id < 0)
			return id;
		for (p = lo; p <= hi; p++)
			ids[p] = (__u16)id;
	}
	return 0;
}

/* ---- addresses ---- */

/*
 * The prefix a class's address term holds, as trie bytes: the mask's bytes
 * in memory order must be ones, then zeros (class_conf.h builds them so).
 */
static int prefix_of(__u64 want_lo, __u64 want_hi, __u64 mask_lo, __u64 mask_hi, int v6,
		     struct pacer_cls_prefix *out)
{
	__u8 mask[16], want[16];
	int bytes = v6 ? 16 : 4, i, bit, len = 0, ended = 0;

	memcpy(mask, &mask_lo, 8);
	memcpy(mask + 8, &mask_hi, 8);
	memcpy(want, &want_lo, 8);
	memcpy(want + 8, &want_hi, 8);
	memset(out, 0, sizeof(*out));
	for (i = 0; i < 16; i++) {
		for (bit = 7; bit >= 0; bit--) {
			int one = mask[i] >> bit & 1;

			if (one && (ended || i >= bytes))
				return -EINVAL;
			if (!one)
				ended = 1;
			else
				len++;
		}
		out->addr[i] = want[i] & mask[i];
	}
	out->v6 = (__u8)v6;
	out->len = (__u8)len;
	return 0;
}

/* Whether prefix outer holds prefix inner (same family). */
static int prefix_holds(const struct pacer_cls_prefix *outer, const struct pacer_cls_prefix *inner)
{
	int i;

	if (outer->len > inner->len)
		return 0;
	for (i = 0; i < outer->len; i++) {
		int bo = outer->addr[i / 8] >> (7 - i % 8) & 1, bi = inner->addr[i / 8] >> (7 - i % 8) & 1;

		if (bo != bi)
			return 0;
	}
	return 1;
}

static int same_prefix(const struct pacer_cls_prefix *a, const struct pacer_cls_prefix *b)
{
	return a->v6 == b->v6 && a->len == b->len && !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* One address dimension (term PACER_M_SRC or _DST): its prefixes with their sets. */
static int compile_addrs(const struct pacer_class *c, int n, __u32 term, struct pacer_cls_prefix *pre,
			 int *n_pre, __u32 *dims, struct pacer_cls_compiled *cc, struct pool_index *ix,
			 char *err, size_t errlen)
{
	struct pacer_cls_prefix cls[PACER_MAX_CLASSES];
	int fam, i, j, np = 0;

	for (i = 0; i < n; i++) {
		const struct pacer_match *m = &c[i].m;
		int e;

		if (!(m->terms & term))
			continue;
		e = term == PACER_M_SRC
			    ? prefix_of(m->src_lo, m->src_hi, m->src_mask_lo, m->src_mask_hi, m->family == 6, &cls[i])
			    : prefix_of(m->dst_lo, m->dst_hi, m->dst_mask_lo, m->dst_mask_hi, m->family == 6, &cls[i]);
		if (e) {
			snprintf(err, errlen, "class '%.*s': its %s mask is not a prefix", PACER_CLASS_NAME_LEN - 1,
				 c[i].name, term == PACER_M_SRC ? "source" : "destination");
			return e;
		}
	}
	for (fam = 0; fam < 2; fam++) {
		int first = np, used = 0;

		for (i = 0; i < n; i++)
			used |= (c[i].m.terms & term) && (c[i].m.family == 6) == fam;
		if (!used)
			continue;
		*dims |= term == PACER_M_SRC ? (fam ? PACER_CLS_D_SRC6 : PACER_CLS_D_SRC4)
					     : (fam ? PACER_CLS_D_DST6 : PACER_CLS_D_DST4);
		/* /0 first, so every address of the family finds an entry; then each class's prefix once. */
		memset(&pre[np], 0, sizeof(pre[np]));
		pre[np++].v6 = (__u8)fam;
		for (i = 0; i < n; i++) {
			if (!(c[i].m.terms & term) || (c[i].m.family == 6) != fam)
				continue;
			for (j = first; j < np && !same_prefix(&pre[j], &cls[i]); j++)
				;
			if (j == np)
				pre[np++] = cls[i];
		}
		for (j = first; j < np; j++) {
			struct pacer_cls_set s;
			int id;

			memset(&s, 0, sizeof(s));
			for (i = 0; i < n; i++) {
				const struct pacer_match *m = &c[i].m;

				if (!(m->terms & term) ||
				    ((m->family == 6) == fam && prefix_holds(&cls[i], &pre[j])))
					set_bit(&s, i);
			}
			id = pool_id(cc, ix, &s);
			if (id < 0)
				return id;
			pre[j].set = (__u16)id;
		}
	}
	*n_pre = np;
	return 0;
}

/* ---- VLAN ---- */

static int compile_vlans(const struct pacer_class *c, int n, struct pacer_cls_compiled *cc,
			 struct pool_index *ix)
{
	struct pacer_cls_set s;
	int i, j, id;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < n; i++)
		if (!(c[i].m.terms & PACER_M_VLAN))
			set_bit(&s, i);
	/* The default set first: the pool is empty, so it gets PACER_CLS_VLAN_DEFAULT. */
	id = pool_id(cc, ix, &s);
	if (id != PACER_CLS_VLAN_DEFAULT)
		return id < 0 ? id : -EPROTO;
	for (i = 0; i < n; i++) {
		__u16 v = c[i].m.vlan;

		if (!(c[i].m.terms & PACER_M_VLAN))
			continue;
		cc->bank.dims |= PACER_CLS_D_VLAN;
		for (j = 0; j < cc->n_vlan && cc->vlan[j].vlan != v; j++)
			;
		if (j < cc->n_vlan)
			continue;
		memset(&s, 0, sizeof(s));
		for (j = 0; j < n; j++)
			if (!(c[j].m.terms & PACER_M_VLAN) || c[j].m.vlan == v)
				set_bit(&s, j);
		id = pool_id(cc, ix, &s);
		if (id < 0)
			return id;
		cc->vlan[cc->n_vlan].vlan = v;
		cc->vlan[cc->n_vlan++].set = (__u16)id;
	}
	return 0;
}

/*
 * The pool's bound: each port dimension has at most 2n + 1 elementary
 * intervals, each address dimension n + 1 prefixes per family, VLAN n + 1
 * sets: 2(2n + 1) + 4(n + 1) + n + 1 = 9n + 7 <= PACER_CLS_POOL for
 * n <= PACER_MAX_CLASSES.
 */
_Static_assert(9 * PACER_MAX_CLASSES + 7 <= PACER_CLS_POOL, "the pool holds any list's sets");

int pacer_cls_compile(const struct pacer_class *c, int n, struct pacer_cls_compiled *out, char *err,
		      size_t errlen)
{
	struct pool_index *ix;
	int i, e = 0;

	if (n < 1 || n > PACER_MAX_CLASSES) {
		snprintf(err, errlen, "%d classes: from 1 to %d compile", n, PACER_MAX_CLASSES);
		return -EINVAL;
	}
	ix = calloc(1, sizeof(*ix));
	if (!ix) {
		snprintf(err, errlen, "out of memory compiling the classes");
		return -ENOMEM;
	}
	memset(out, 0, sizeof(*out));
	out->bank.words = (__u32)(n + 63) / 64;
	e = compile_vlans(c, n, out, ix); /* first: its default set is pool id 0 */
	compile_head(c, n, out);
	for (i = 0; i < n; i++) {
		if (c[i].m.terms & PACER_M_DPORT)
			out->bank.dims |= PACER_CLS_D_DPORT;
		if (c[i].m.terms & PACER_M_SPORT)
			out->bank.dims |= PACER_CLS_D_SPORT;
	}
	if (!e && (out->bank.dims & PACER_CLS_D_DPORT))
		e = compile_ports(c, n, PACER_M_DPORT, out->dport, out, ix);
	if (!e && (out->bank.dims & PACER_CLS_D_SPORT))
		e = compile_ports(c, n, PACER_M_SPORT, out->sport, out, ix);
	if (!e)
		e = compile_addrs(c, n, PACER_M_SRC, out->src, &out->n_src, &out->bank.dims, out, ix, err,
				  errlen);
	if (!e)
		e = compile_addrs(c, n, PACER_M_DST, out->dst, &out->n_dst, &out->bank.dims, out, ix, err,
				  errlen);
	if (e == -ENOSPC)
		snprintf(err, errlen, "the classifier's pool of %u sets is full", PACER_CLS_POOL);
	free(ix);
	return e;
}

/* ---- the lookup, as the datapath does it ---- */

/* The longest of pre's prefixes of the family that holds addr: its set id, or -1. */
static int longest_match(const struct pacer_cls_prefix *pre, int n, int v6, const struct pacer_src *addr)
{
	struct pacer_cls_prefix a;
	int i, best = -1, best_len = -1;

	memset(&a, 0, sizeof(a));
	memcpy(a.addr, &addr->lo, 8);
	memcpy(a.addr + 8, &addr->hi, 8);
	a.len = v6 ? 128 : 32;
	for (i = 0; i < n; i++)
		if (pre[i].v6 == v6 && pre[i].len > best_len && prefix_holds(&pre[i], &a)) {
			best = pre[i].set;
			best_len = pre[i].len;
		}
	return best;
}

int pacer_cls_lookup(const struct pacer_cls_compiled *cc, const struct pacer_pkt *p)
{
	struct pacer_cls_set s = cc->head[pacer_cls_head_index(p)];
	__u32 dims = cc->bank.dims;
	int v6 = p->kind == PACER_PKT_V6, i, id;

	if (dims & PACER_CLS_D_DPORT)
		pacer_cls_and(&s, &cc->pool[cc->dport[p->dport]]);
	if (dims & PACER_CLS_D_SPORT)
		pacer_cls_and(&s, &cc->pool[cc->sport[p->sport]]);
	if (dims & (v6 ? PACER_CLS_D_SRC6 : PACER_CLS_D_SRC4)) {
		id = longest_match(cc->src, cc->n_src, v6, &p->src);
		if (id < 0)
			return -1;
		pacer_cls_and(&s, &cc->pool[id]);
	}
	if (dims & (v6 ? PACER_CLS_D_DST6 : PACER_CLS_D_DST4)) {
		id = longest_match(cc->dst, cc->n_dst, v6, &p->dst);
		if (id < 0)
			return -1;
		pacer_cls_and(&s, &cc->pool[id]);
	}
	if (dims & PACER_CLS_D_VLAN) {
		id = PACER_CLS_VLAN_DEFAULT;
		for (i = 0; i < cc->n_vlan; i++)
			if (cc->vlan[i].vlan == p->vlan)
				id = cc->vlan[i].set;
		pacer_cls_and(&s, &cc->pool[id]);
	}
	return pacer_cls_first(&s, cc->bank.words);
}

int pacer_cls_walk(const struct pacer_class *c, int n, const struct pacer_pkt *p)
{
	int i;

	for (i = 0; i < n; i++)
		if (pacer_match_fits(&c[i].m, p))
			return i;
	return -1;
}
