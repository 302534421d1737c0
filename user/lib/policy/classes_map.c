// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Traffic classes and the exempt/deny lists on a loaded pacer's maps (classes_map.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "class_conf.h"
#include "classes_map.h"
#include "time_now.h"
#include "class_compile.h"
#include "pacer_classify.h"

/*
 * The grace period: a map-in-map update returns only after synchronize_rcu()
 * (kernel/bpf/syscall.c, maybe_wait_bpf_programs(), since 4.x), and XDP
 * programs run inside RCU read-side sections (NAPI's softirq, the generic
 * hook's rcu_read_lock, BPF_PROG_TEST_RUN's), so every run that began
 * before the update has ended when it returns, however short the grace
 * period (tens of microseconds when the kernel expedites it): that, not
 * the wait's length, is what tests/grace_check.h checks.  The two maps are
 * this process's own, made on first use and kept for its lifetime.
 */
static int grace_outer_fd = -1, grace_inner_fd = -1;

int pacer_wait_packets_in_flight(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	__u32 zero = 0;

	if (grace_inner_fd < 0) {
		grace_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pacer_grace_in", 4, 4, 1, NULL);
		if (grace_inner_fd < 0)
			return -errno;
	}
	if (grace_outer_fd < 0) {
		o.inner_map_fd = grace_inner_fd;
		grace_outer_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "pacer_grace", 4, 4, 1, &o);
		if (grace_outer_fd < 0)
			return -errno;
	}
	if (bpf_map_update_elem(grace_outer_fd, &zero, &grace_inner_fd, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Delete bank's entries from a map keyed by tag (the address trie) or by
 * bank (the VLAN hash), which holds at most max_entries: one walk collects
 * them, then they go (deleting while walking would restart the walk at
 * each key deleted).
 */
static int clear_bank_keys(int fd, size_t key_len, __u32 max_entries, __u32 bank, int trie, char *err,
			   size_t len)
{
	const char *what = trie ? "prefixes" : "VLAN ids";
	__u8 *keys = malloc((size_t)max_entries * key_len), cur[64], next[64];
	void *prev = NULL;
	__u32 n = 0, i;
	int e = 0;

	_Static_assert(sizeof(struct pacer_cls_addr_key) <= sizeof(cur) &&
			       sizeof(struct pacer_cls_vlan_key) <= sizeof(cur), "a key fits cur");
	if (!keys) {
		snprintf(err, len, "out of memory clearing the classifier's %s", what);
		return -ENOMEM;
	}
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(cur, next, key_len);
		prev = cur;
		if (n < max_entries && (trie ? ((const struct pacer_cls_addr_key *)cur)->tag >> 2 == bank
					     : ((const struct pacer_cls_vlan_key *)cur)->bank == bank))
			memcpy(keys + (size_t)n++ * key_len, cur, key_len);
	}
	if (errno != ENOENT) {
		snprintf(err, len, "cannot walk the classifier's %s: %s", what, strerror(errno));
		e = -errno;
	}
	for (i = 0; !e && i < n; i++)
		if (bpf_map_delete_elem(fd, keys + (size_t)i * key_len) && errno != ENOENT) {
			snprintf(err, len, "cannot clear the classifier's %s: %s", what, strerror(errno));
			e = -errno;
		}
	free(keys);
	return e;
}

static int put_prefixes(int fd, __u32 bank, int dst, const struct pacer_cls_prefix *p, int n, char *err,
			size_t len)
{
	int i;

	for (i = 0; i < n; i++) {
		struct pacer_cls_addr_key k;
		__u32 id = p[i].set;

		memset(&k, 0, sizeof(k));
		k.tag = pacer_cls_tag(bank, dst, p[i].v6);
		k.prefixlen = PACER_CLS_TAG_BITS + p[i].len;
		memcpy(k.addr, p[i].addr, sizeof(k.addr));
		if (bpf_map_update_elem(fd, &k, &id, BPF_ANY)) {
			snprintf(err, len, "cannot write the classifier's prefixes: %s", strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * Array entries first..first + n - 1 from vals (each len bytes): one batch
 * where the kernel takes it, else entry by entry.  0, or -1 with errno.
 */
static int put_run(int fd, __u32 first, const void *vals, size_t len, __u32 n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = 0, .flags = 0);
	__u32 keys[PACER_CLS_POOL > PACER_CLS_PORT_ENTRIES ? PACER_CLS_POOL : PACER_CLS_PORT_ENTRIES];
	__u32 i, count = n;

	if (!n)
		return 0;
	if (n > sizeof(keys) / sizeof(keys[0])) {
		errno = E2BIG;
		return -1;
	}
	for (i = 0; i < n; i++)
		keys[i] = first + i;
	if (!bpf_map_update_batch(fd, keys, vals, &count, &opts) && count == n)
		return 0;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &keys[i], (const char *)vals + (size_t)i * len, BPF_ANY))
			return -1;
	return 0;
}

/* The compiled list into bank's part of the classifier's maps (pacer_cls.h). */
static int write_compiled(const struct pacer_class_maps *m, __u32 bank, const struct pacer_cls_compiled *cc,
			  char *err, size_t len)
{
	__u32 i, k;
	int e;

	if (put_run(m->cls_sets_fd, pacer_cls_head_slot(bank, 0), cc->head, sizeof(cc->head[0]),
		    PACER_CLS_HEAD_ENTRIES) ||
	    put_run(m->cls_sets_fd, pacer_cls_pool_slot(bank, 0), cc->pool, sizeof(cc->pool[0]), cc->n_pool)) {
		snprintf(err, len, "cannot write the classifier's sets: %s", strerror(errno));
		return -errno;
	}
	for (k = 0; k < 2; k++) {
		if (!(cc->bank.dims & (k ? PACER_CLS_D_SPORT : PACER_CLS_D_DPORT)))
			continue;
		/* 65536 ids are PACER_CLS_PORT_ENTRIES chunks, in order. */
		if (put_run(m->cls_ports_fd, pacer_cls_port_slot(bank, k, 0), k ? cc->sport : cc->dport,
			    sizeof(struct pacer_cls_port_chunk), PACER_CLS_PORT_ENTRIES)) {
			snprintf(err, len, "cannot write the classifier's ports: %s", strerror(errno));
			return -errno;
		}
	}
	e = clear_bank_keys(m->cls_addrs_fd, sizeof(struct pacer_cls_addr_key), PACER_CLS_ADDRS, bank, 1,
			    err, len);
	if (!e)
		e = put_prefixes(m->cls_addrs_fd, bank, 0, cc->src, cc->n_src, err, len);
	if (!e)
		e = put_prefixes(m->cls_addrs_fd, bank, 1, cc->dst, cc->n_dst, err, len);
	if (!e)
		e = clear_bank_keys(m->cls_vlan_fd, sizeof(struct pacer_cls_vlan_key), PACER_CLS_VLANS, bank, 0,
				    err, len);
	for (i = 0; !e && i < (__u32)cc->n_vlan; i++) {
		struct pacer_cls_vlan_key vk = { .bank = bank, .vlan = cc->vlan[i].vlan };
		__u32 id = cc->vlan[i].set;

		if (bpf_map_update_elem(m->cls_vlan_fd, &vk, &id, BPF_ANY)) {
			snprintf(err, len, "cannot write the classifier's VLAN ids: %s", strerror(errno));
			e = -errno;
		}
	}
	return e;
}

int pacer_classes_install(const struct pacer_class_maps *m, const struct pacer_class *c, int n,
			  char *err, size_t len)
{
	__u32 *sel_p = &m->cfg->class_sel;
	__u32 sel = __atomic_load_n(sel_p, __ATOMIC_ACQUIRE), bank, gen, dims = 0;
	struct pacer_cls_compiled *cc = NULL;
	int i, e;

	e = pacer_classes_check(c, n, m->backend, err, len);
	if (e)
		return e;
	/*
	 * The bank no packet reads: the other one while classes run; either
	 * while none do.  A packet reads class_sel once and walks the bank it
	 * names; one that read it before the flip that retired this bank (by
	 * this writer or the one before) may still be walking it, so the bank
	 * is written only after a grace period: every such packet is done.
	 * Writers hold the writer lock, so no other install flips meanwhile.
	 */
	bank = PACER_CLASS_SEL_COUNT(sel) ? !PACER_CLASS_SEL_BANK(sel) : 0;
	gen = (PACER_CLASS_SEL_GEN_OF(sel) + 1) & 0x7fff;
	if (n) {
		cc = malloc(sizeof(*cc));
		if (!cc) {
			snprintf(err, len, "out of memory compiling the classes");
			return -ENOMEM;
		}
		e = pacer_cls_compile(c, n, cc, err, len);
		if (!e) {
			e = pacer_wait_packets_in_flight();
			if (e)
				snprintf(err, len, "cannot wait for the packets in flight (a map-in-map update): %s",
					 strerror(-e));
		}
		if (!e)
			e = write_compiled(m, bank, cc, err, len);
		dims = cc->bank.dims;
		free(cc);
		if (e)
			return e;
	}
	for (i = 0; i < n; i++) {
		__u32 idx = bank * PACER_MAX_CLASSES + (__u32)i;

		if (bpf_map_update_elem(m->classes_fd, &idx, &c[i], BPF_ANY)) {
			e = -errno;
			snprintf(err, len, "cannot write class '%.*s': %s", PACER_CLASS_NAME_LEN - 1,
				 c[i].name, strerror(errno));
			return e;
		}
	}
	__atomic_store_n(sel_p, PACER_CLASS_SEL_GEN(n ? PACER_CLASS_SEL_DIMS(bank, n, dims) : 0, gen),
			 __ATOMIC_RELEASE);
	return 0;
}

int pacer_classes_read(const struct pacer_class_maps *m, struct pacer_class *out, int *n)
{
	int tries;

	/*
	 * A reader does not hold the writer lock: it reads the bank class_sel
	 * names and keeps what it read only if class_sel (with its
	 * generation) did not change meanwhile; a bank is rewritten only
	 * after a flip away from it.
	 */
	for (tries = 0; tries < 1000; tries++) {
		__u32 sel = __atomic_load_n(&m->cfg->class_sel, __ATOMIC_ACQUIRE);
		__u32 count = PACER_CLASS_SEL_COUNT(sel), bank = PACER_CLASS_SEL_BANK(sel), i;

		*n = 0;
		if (count > PACER_MAX_CLASSES)
			return -EPROTO;
		for (i = 0; i < count; i++) {
			__u32 idx = bank * PACER_MAX_CLASSES + i;

			if (bpf_map_lookup_elem(m->classes_fd, &idx, &out[i]))
				return -errno;
		}
		if (__atomic_load_n(&m->cfg->class_sel, __ATOMIC_ACQUIRE) == sel) {
			*n = (int)count;
			return 0;
		}
	}
	return -EAGAIN;
}

/* ---- the lists ---- */

/* One trie entry: its key as the map holds it, its value. */
struct list_entry {
	uint32_t family;
	struct pacer_list6_key k; /* a pacer_list4_key is its first 8 bytes */
	struct pacer_list_value v;
};

const char *pacer_prefix_str(const struct pacer_prefix *p, char *buf, size_t len)
{
	return format_prefix_bytes(p->family, p->len, p->addr, buf, len);
}

uint64_t pacer_list_clock_ns(void)
{
	return mono_ns();
}

bool pacer_list_expired(const struct pacer_list_value *v, uint64_t now_ns)
{
	return v->expires_ns && v->expires_ns <= now_ns;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct list_entry *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->k.prefixlen != y->k.prefixlen)
		return x->k.prefixlen < y->k.prefixlen ? -1 : 1;
	return memcmp(x->k.addr, y->k.addr, sizeof(x->k.addr));
}

/* The entry for prefix p (host bits cleared); -EINVAL for a bad family or length. */
static int entry_of(const struct pacer_prefix *p, uint32_t verdict, uint8_t origin,
		    struct list_entry *e)
{
	uint32_t bits = p->family == 4 ? 32 : 128, i;

	if ((p->family != 4 && p->family != 6) || p->len > bits)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->family = p->family;
	e->v.verdict = verdict;
	e->v.origin = origin;
	e->v.prefixlen = (uint8_t)p->len;
	e->k.prefixlen = p->len;
	for (i = 0; i < bits / 8; i++) {
		uint32_t keep = p->len >= (i + 1) * 8 ? 8 : p->len > i * 8 ? p->len - i * 8 : 0;

		e->k.addr[i] = (uint8_t)(p->addr[i] & (uint8_t)(0xff00u >> keep));
	}
	return 0;
}

static void prefix_of(const struct list_entry *e, struct pacer_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = e->family;
	p->len = e->k.prefixlen;
	memcpy(p->addr, e->k.addr, e->family == 4 ? 4 : 16);
}

static const char *entry_str(const struct list_entry *e, char *buf, size_t len)
{
	struct pacer_prefix p;

	prefix_of(e, &p);
	return pacer_prefix_str(&p, buf, len);
}

static int list_fd(const struct pacer_class_maps *m, uint32_t family)
{
	return family == 4 ? m->list4_fd : m->list6_fd;
}

static const char *verdict_list(uint32_t verdict)
{
	return verdict == PACER_LIST_EXEMPT ? "exempt" : verdict == PACER_LIST_DENY ? "deny" : "unknown";
}

/* Every entry of both tries, expired ones too, sorted, into a fresh array (*out, *n).  0 or -errno. */
static int lists_load(const struct pacer_class_maps *m, struct list_entry **out, size_t *n)
{
	size_t cap = 256, count = 0;
	struct list_entry *v = malloc(cap * sizeof(*v));
	uint32_t fam;

	if (!v)
		return -ENOMEM;
	for (fam = 4; fam <= 6; fam += 2) {
		struct pacer_list6_key cur, next;
		int fd = list_fd(m, fam);
		void *prev = NULL;

		while (!bpf_map_get_next_key(fd, prev, &next)) {
			struct list_entry *e;

			if (count == cap) {
				struct list_entry *w = realloc(v, 2 * cap * sizeof(*v));

				if (!w) {
					free(v);
					return -ENOMEM;
				}
				v = w;
				cap *= 2;
			}
			e = &v[count];
			memset(e, 0, sizeof(*e));
			e->family = fam;
			memcpy(&e->k, &next, fam == 4 ? sizeof(struct pacer_list4_key) : sizeof(next));
			cur = next;
			prev = &cur;
			/* The exact key: the longest prefix holding it is itself. */
			if (bpf_map_lookup_elem(fd, &e->k, &e->v)) {
				if (errno == ENOENT) /* removed meanwhile */
					continue;
				free(v);
				return -errno;
			}
			if (e->v.prefixlen != e->k.prefixlen) /* removed meanwhile: a shorter one answered */
				continue;
			count++;
		}
		if (errno != ENOENT) {
			free(v);
			return -errno;
		}
	}
	qsort(v, count, sizeof(*v), entry_cmp);
	*out = v;
	*n = count;
	return 0;
}

static struct list_entry *entry_find(struct list_entry *v, size_t n, const struct list_entry *k)
{
	return bsearch(k, v, n, sizeof(*v), entry_cmp);
}

/*
 * The entry the trie holds for e's exact prefix into *found: 1 if there is
 * one, 0 if not, -errno.  A trie lookup answers with the longest prefix
 * holding the key; the value's own length tells whether that is e's.
 */
static int entry_lookup(const struct pacer_class_maps *m, const struct list_entry *e,
			struct pacer_list_value *found)
{
	if (bpf_map_lookup_elem(list_fd(m, e->family), &e->k, found))
		return errno == ENOENT ? 0 : -errno;
	return found->prefixlen == e->k.prefixlen;
}

/* Prefixes into entries of one verdict and origin, sorted, duplicates merged.  0, -EINVAL or -ENOMEM. */
static int entries_of(const struct pacer_prefix *p, size_t n, uint32_t verdict, uint8_t origin,
		      struct list_entry **out, size_t *count, char *err, size_t len)
{
	struct list_entry *v = calloc(n ? n : 1, sizeof(*v));
	size_t i, k = 0;

	if (!v) {
		snprintf(err, len, "out of memory for %zu prefixes", n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (entry_of(&p[i], verdict, origin, &v[i])) {
			snprintf(err, len, "%s prefix %u of family %u: bad family or length",
				 verdict_list(verdict), p[i].len, p[i].family);
			free(v);
			return -EINVAL;
		}
	}
	qsort(v, n, sizeof(*v), entry_cmp);
	for (i = 0; i < n; i++)
		if (!k || entry_cmp(&v[k - 1], &v[i]))
			v[k++] = v[i];
	*out = v;
	*count = k;
	return 0;
}

/* The wanted entries, sorted, merged, checked.  0 or -EINVAL / -ENOMEM with err. */
static int lists_want(const struct pacer_prefix *exempt, int ne, const struct pacer_prefix *deny,
		      int nd, struct list_entry **out, size_t *n, char *err, size_t len)
{
	size_t total = (size_t)(ne > 0 ? ne : 0) + (size_t)(nd > 0 ? nd : 0), i, k = 0;
	struct list_entry *v = calloc(total ? total : 1, sizeof(*v));
	size_t per_family[2] = { 0, 0 };
	char pb[64];

	if (!v)
		return -ENOMEM;
	for (i = 0; i < total; i++) {
		bool is_exempt = i < (size_t)ne;
		const struct pacer_prefix *p = is_exempt ? &exempt[i] : &deny[i - (size_t)ne];

		if (entry_of(p, is_exempt ? PACER_LIST_EXEMPT : PACER_LIST_DENY, PACER_LIST_CONF, &v[i])) {
			snprintf(err, len, "%s prefix %u of family %u: bad family or length",
				 is_exempt ? "exempt" : "deny", p->len, p->family);
			free(v);
			return -EINVAL;
		}
	}
	qsort(v, total, sizeof(*v), entry_cmp);
	for (i = 0; i < total; i++) {
		if (k && !entry_cmp(&v[k - 1], &v[i])) {
			if (v[k - 1].v.verdict != v[i].v.verdict) {
				snprintf(err, len, "%s is on both the exempt and the deny list",
					 entry_str(&v[i], pb, sizeof(pb)));
				free(v);
				return -EINVAL;
			}
			continue;
		}
		v[k++] = v[i];
		per_family[v[i].family == 6]++;
	}
	for (i = 0; i < 2; i++) {
		if (per_family[i] > PACER_LIST_MAX_ENTRIES) {
			snprintf(err, len, "%zu IPv%d prefixes: at most %d", per_family[i], i ? 6 : 4,
				 PACER_LIST_MAX_ENTRIES);
			free(v);
			return -EINVAL;
		}
	}
	*out = v;
	*n = k;
	return 0;
}

#define FILTER_BYTES (2 * PACER_LIST_FILTER_WORDS * sizeof(__u64))

/* Write words into the live filter where they differ; with or_in, only add bits. */
static void filter_store(volatile __u64 *live, const __u64 *words, bool or_in)
{
	uint32_t i;

	for (i = 0; i < 2 * PACER_LIST_FILTER_WORDS; i++) {
		__u64 cur = live[i], next = or_in ? cur | words[i] : words[i];

		if (next != cur)
			__atomic_store_n(&live[i], next, __ATOMIC_RELEASE);
	}
}

/* The lists' live filter, mapped: the address, or NULL with err set. */
static volatile __u64 *filter_map(const struct pacer_class_maps *m, int *e, char *err, size_t len)
{
	void *live = mmap(NULL, FILTER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m->list_filter_fd, 0);

	if (live != MAP_FAILED)
		return live;
	*e = -errno;
	snprintf(err, len, "cannot map the lists' filter: %s", strerror(-*e));
	return NULL;
}

static void filter_unmap(volatile __u64 *live)
{
	if (live)
		munmap((void *)live, FILTER_BYTES);
}

/* Add e's bits to words, and its family to *sel. */
static void filter_add(__u64 *words, uint32_t *sel, const struct list_entry *e)
{
	pacer_list_filter_set(words, e->family, e->k.prefixlen, e->k.addr);
	*sel |= e->family == 4 ? PACER_LIST_V4 : PACER_LIST_V6;
}

/*
 * After removals: the filter and list_sel exactly what the entries left
 * (keep[i] true, or keep NULL: all of v) need.  A source whose bit goes
 * now has no entry left that holds it.  0 or -ENOMEM.
 */
static int filter_settle(const struct pacer_class_maps *m, volatile __u64 *live,
			 const struct list_entry *v, size_t n, const bool *keep)
{
	__u64 *bits = calloc(2 * PACER_LIST_FILTER_WORDS, sizeof(*bits));
	uint32_t sel = 0;
	size_t i;

	if (!bits)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!keep || keep[i])
			filter_add(bits, &sel, &v[i]);
	__atomic_store_n(&m->cfg->list_sel, sel, __ATOMIC_RELEASE);
	filter_store(live, bits, false);
	free(bits);
	return 0;
}

/*
 * Why the order of writes keeps every packet on the old or the new list
 * (docs/design.md, Live changes): a packet's verdict is the longest
 * prefix holding its source.  Additions and changes go longest prefix
 * first, so any prefix the packet finds changed is the new list's longest
 * for it; removals go shortest first, so any old prefix it finds is the
 * old list's longest.  v is sorted shortest first.
 */
static int entries_write(const struct pacer_class_maps *m, const struct list_entry *v, size_t n,
			 const bool *pick, size_t *failed)
{
	size_t i;

	for (i = n; i-- > 0;) {
		if (pick && !pick[i])
			continue;
		if (bpf_map_update_elem(list_fd(m, v[i].family), &v[i].k, &v[i].v, BPF_ANY)) {
			*failed = i;
			return -errno;
		}
	}
	return 0;
}

static void entries_delete(const struct pacer_class_maps *m, const struct list_entry *v, size_t n,
			   const bool *pick)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!pick || pick[i])
			bpf_map_delete_elem(list_fd(m, v[i].family), &v[i].k);
}

int pacer_lists_apply(const struct pacer_class_maps *m, const struct pacer_prefix *exempt, int ne,
		      const struct pacer_prefix *deny, int nd, char *err, size_t len)
{
	struct list_entry *want = NULL, *have = NULL;
	bool *change = NULL, *drop = NULL;
	size_t nw = 0, nh = 0, i, failed = 0;
	volatile __u64 *live = NULL;
	__u64 *bits = NULL;
	uint64_t now = pacer_list_clock_ns();
	uint32_t sel = 0;
	int e;

	if (ne < 0 || nd < 0 || (ne && !exempt) || (nd && !deny)) {
		snprintf(err, len, "lists of %d exempt and %d deny prefixes: bad counts", ne, nd);
		return -EINVAL;
	}
	e = lists_want(exempt, ne, deny, nd, &want, &nw, err, len);
	if (e)
		return e;
	live = filter_map(m, &e, err, len);
	if (!live)
		goto out;
	bits = calloc(2 * PACER_LIST_FILTER_WORDS, sizeof(*bits));
	e = bits ? lists_load(m, &have, &nh) : -ENOMEM;
	change = calloc(nw ? nw : 1, sizeof(*change));
	drop = calloc(nh ? nh : 1, sizeof(*drop));
	if (!e && (!change || !drop))
		e = -ENOMEM;
	if (e) {
		snprintf(err, len, "cannot read the lists: %s", strerror(-e));
		goto out;
	}
	for (i = 0; i < nw; i++) {
		struct list_entry *old = entry_find(have, nh, &want[i]);

		change[i] = !old || memcmp(&old->v, &want[i].v, sizeof(old->v));
		filter_add(bits, &sel, &want[i]);
	}
	/*
	 * What goes: the configuration's entries the new one lacks, and
	 * expired ones.  Entries `add` made stay, unless the configuration
	 * now names their prefix (it then owns it).
	 */
	for (i = 0; i < nh; i++) {
		bool wanted = entry_find(want, nw, &have[i]) != NULL;

		drop[i] = !wanted && (have[i].v.origin == PACER_LIST_CONF ||
				      pacer_list_expired(&have[i].v, now));
		if (!wanted && !drop[i])
			filter_add(bits, &sel, &have[i]);
	}
	/* The new prefixes' bits before anything looks for them; the old ones' stay. */
	filter_store(live, bits, true);
	e = entries_write(m, want, nw, change, &failed);
	if (e) {
		char pb[64];

		snprintf(err, len, "cannot add %s to the lists: %s",
			 entry_str(&want[failed], pb, sizeof(pb)), strerror(-e));
		goto undo;
	}
	__atomic_store_n(&m->cfg->list_sel, sel | __atomic_load_n(&m->cfg->list_sel, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	/* Removals last; then the filter and list_sel what is left needs. */
	entries_delete(m, have, nh, drop);
	__atomic_store_n(&m->cfg->list_sel, sel, __ATOMIC_RELEASE);
	filter_store(live, bits, false);
	e = 0;
	goto out;
undo:
	/* Put back what the additions changed (written longest first: those after failed). */
	for (i = failed + 1; i < nw; i++) {
		struct list_entry *old;

		if (!change[i])
			continue;
		old = entry_find(have, nh, &want[i]);
		if (old)
			bpf_map_update_elem(list_fd(m, want[i].family), &old->k, &old->v, BPF_ANY);
		else
			bpf_map_delete_elem(list_fd(m, want[i].family), &want[i].k);
	}
out:
	filter_unmap(live);
	free(bits);
	free(want);
	free(have);
	free(change);
	free(drop);
	return e;
}

/* Collect expired entries (all of them, any order: they read as absent already). */
static int collect_expired(const struct pacer_class_maps *m, volatile __u64 *live, size_t *collected)
{
	struct list_entry *have = NULL;
	uint64_t now = pacer_list_clock_ns();
	size_t nh = 0, i, k = 0;
	int e = lists_load(m, &have, &nh);

	*collected = 0;
	if (e)
		return e;
	for (i = 0; i < nh; i++) {
		if (pacer_list_expired(&have[i].v, now)) {
			if (!bpf_map_delete_elem(list_fd(m, have[i].family), &have[i].k))
				(*collected)++;
			continue;
		}
		have[k++] = have[i];
	}
	e = *collected ? filter_settle(m, live, have, k, NULL) : 0;
	free(have);
	return e;
}

int pacer_lists_collect(const struct pacer_class_maps *m, size_t *collected)
{
	char err[128];
	volatile __u64 *live;
	int e = 0;

	*collected = 0;
	live = filter_map(m, &e, err, sizeof(err));
	if (!live)
		return e;
	e = collect_expired(m, live, collected);
	filter_unmap(live);
	return e;
}

int pacer_lists_add(const struct pacer_class_maps *m, uint32_t verdict,
		    const struct pacer_prefix *p, size_t n, uint32_t timeout_s,
		    struct pacer_list_change *r, char *err, size_t len)
{
	struct list_entry *want = NULL;
	struct pacer_list_value *old = NULL;
	volatile __u64 *live = NULL;
	bool *write = NULL, *had = NULL;
	size_t nw = 0, i, failed = 0, collected = 0;
	uint64_t now = pacer_list_clock_ns();
	__u64 *bits = NULL;
	uint32_t sel = 0;
	char pb[64];
	int e, found;

	memset(r, 0, sizeof(*r));
	if (verdict != PACER_LIST_EXEMPT && verdict != PACER_LIST_DENY) {
		snprintf(err, len, "unknown list verdict %u", verdict);
		return -EINVAL;
	}
	e = entries_of(p, n, verdict, PACER_LIST_ADDED, &want, &nw, err, len);
	if (e)
		return e;
	write = calloc(nw ? nw : 1, sizeof(*write));
	had = calloc(nw ? nw : 1, sizeof(*had));
	old = calloc(nw ? nw : 1, sizeof(*old));
	bits = calloc(2 * PACER_LIST_FILTER_WORDS, sizeof(*bits));
	if (!write || !had || !old || !bits) {
		e = -ENOMEM;
		snprintf(err, len, "out of memory for %zu prefixes", nw);
		goto out;
	}
	/* Every prefix checked against what the lists hold before anything changes. */
	for (i = 0; i < nw; i++) {
		struct list_entry *w = &want[i];

		w->v.timeout_s = timeout_s;
		w->v.expires_ns = timeout_s ? now + (uint64_t)timeout_s * 1000000000ULL : 0;
		found = entry_lookup(m, w, &old[i]);
		if (found < 0) {
			e = found;
			snprintf(err, len, "cannot read the lists: %s", strerror(-e));
			goto out;
		}
		had[i] = found;
		if (!found || pacer_list_expired(&old[i], now)) {
			write[i] = true;
			r->added++;
			continue;
		}
		if (old[i].verdict != verdict) {
			e = -EEXIST;
			snprintf(err, len, "%s is on the %s list%s: delete it there first",
				 entry_str(w, pb, sizeof(pb)), verdict_list(old[i].verdict),
				 old[i].origin == PACER_LIST_CONF ? " (from the configuration)" : "");
			goto out;
		}
		if (old[i].origin == PACER_LIST_CONF) {
			r->kept_conf++; /* the configuration owns it, without a timeout */
			continue;
		}
		write[i] = true;
		r->refreshed++;
		if (old[i].timeout_s && !timeout_s)
			r->untimed++; /* the last add decides: without --timeout, no timeout */
	}
	live = filter_map(m, &e, err, len);
	if (!live)
		goto out;
	for (i = 0; i < nw; i++)
		if (write[i])
			filter_add(bits, &sel, &want[i]);
	filter_store(live, bits, true);
	e = entries_write(m, want, nw, write, &failed);
	if (e == -ENOSPC || e == -E2BIG) {
		/* A full trie: collect what expired, then try again from where it stopped. */
		if (!collect_expired(m, live, &collected) && collected) {
			filter_store(live, bits, true);
			e = entries_write(m, want, failed + 1, write, &failed);
		}
		r->collected = collected;
	}
	if (e) {
		if (e == -ENOSPC || e == -E2BIG)
			snprintf(err, len, "cannot add %s to the %s list: the lists are full (%d prefixes per family, after collecting %zu expired)",
				 entry_str(&want[failed], pb, sizeof(pb)), verdict_list(verdict),
				 PACER_LIST_MAX_ENTRIES, collected);
		else
			snprintf(err, len, "cannot add %s to the %s list: %s",
				 entry_str(&want[failed], pb, sizeof(pb)), verdict_list(verdict), strerror(-e));
		/* Put back what this call wrote: the entries after the failed one. */
		for (i = failed + 1; i < nw; i++) {
			if (!write[i])
				continue;
			if (had[i])
				bpf_map_update_elem(list_fd(m, want[i].family), &want[i].k, &old[i], BPF_ANY);
			else
				bpf_map_delete_elem(list_fd(m, want[i].family), &want[i].k);
		}
		memset(r, 0, sizeof(*r));
		goto out;
	}
	__atomic_fetch_or(&m->cfg->list_sel, sel, __ATOMIC_RELEASE);
out:
	filter_unmap(live);
	free(want);
	free(write);
	free(had);
	free(old);
	free(bits);
	return e;
}

int pacer_lists_del(const struct pacer_class_maps *m, uint32_t verdict,
		    const struct pacer_prefix *p, size_t n, bool missing_ok,
		    struct pacer_list_change *r, char *err, size_t len)
{
	struct list_entry *want = NULL;
	bool *drop = NULL;
	uint64_t now = pacer_list_clock_ns();
	size_t nw = 0, i;
	char pb[64];
	int e, found;

	memset(r, 0, sizeof(*r));
	e = entries_of(p, n, verdict, PACER_LIST_ADDED, &want, &nw, err, len);
	if (e)
		return e;
	drop = calloc(nw ? nw : 1, sizeof(*drop));
	if (!drop) {
		free(want);
		snprintf(err, len, "out of memory for %zu prefixes", nw);
		return -ENOMEM;
	}
	for (i = 0; i < nw; i++) {
		struct pacer_list_value cur;

		found = entry_lookup(m, &want[i], &cur);
		if (found < 0) {
			e = found;
			snprintf(err, len, "cannot read the lists: %s", strerror(-e));
			goto out;
		}
		if (found && pacer_list_expired(&cur, now)) {
			drop[i] = true; /* gone for packets already: collected, counted missing */
			found = 0;
		}
		if (!found) {
			r->missing++;
			if (missing_ok)
				continue;
			e = -ENOENT;
			snprintf(err, len, "%s is not on the %s list%s", entry_str(&want[i], pb, sizeof(pb)),
				 verdict_list(verdict), drop[i] ? " (its timeout expired)" : "");
			goto out;
		}
		if (cur.verdict != verdict) {
			e = -EEXIST;
			snprintf(err, len, "%s is on the %s list, not the %s list",
				 entry_str(&want[i], pb, sizeof(pb)), verdict_list(cur.verdict),
				 verdict_list(verdict));
			goto out;
		}
		if (cur.origin == PACER_LIST_CONF) {
			e = -EPERM;
			snprintf(err, len, "%s is on the %s list by the configuration: remove it there (the file, or set --%s) and reload",
				 entry_str(&want[i], pb, sizeof(pb)), verdict_list(verdict), verdict_list(verdict));
			goto out;
		}
		drop[i] = true;
		r->removed++;
	}
	/* Shortest first (see entries_write); the filter keeps their bits until a flush or a reload. */
	entries_delete(m, want, nw, drop);
out:
	if (e)
		memset(r, 0, sizeof(*r));
	free(want);
	free(drop);
	return e;
}

int pacer_lists_flush(const struct pacer_class_maps *m, uint32_t verdict,
		      struct pacer_list_change *r, char *err, size_t len)
{
	struct list_entry *have = NULL;
	volatile __u64 *live;
	uint64_t now = pacer_list_clock_ns();
	size_t nh = 0, i;
	bool *drop = NULL;
	int e = 0;

	memset(r, 0, sizeof(*r));
	live = filter_map(m, &e, err, len);
	if (!live)
		return e;
	e = lists_load(m, &have, &nh);
	drop = e ? NULL : calloc(nh ? nh : 1, sizeof(*drop));
	if (!e && !drop)
		e = -ENOMEM;
	if (e) {
		snprintf(err, len, "cannot read the lists: %s", strerror(-e));
		goto out;
	}
	for (i = 0; i < nh; i++) {
		bool expired = pacer_list_expired(&have[i].v, now);

		drop[i] = expired || (have[i].v.verdict == verdict && have[i].v.origin == PACER_LIST_ADDED);
		if (drop[i] && !expired)
			r->removed++;
		else if (drop[i])
			r->collected++;
		else
			drop[i] = false;
	}
	entries_delete(m, have, nh, drop);
	for (i = 0; i < nh; i++)
		drop[i] = !drop[i];
	e = filter_settle(m, live, have, nh, drop);
	if (e)
		snprintf(err, len, "out of memory for the lists' filter");
out:
	filter_unmap(live);
	free(have);
	free(drop);
	return e;
}

int pacer_lists_dump(const struct pacer_class_maps *m, struct pacer_list_entry **out, size_t *n)
{
	struct list_entry *have = NULL;
	struct pacer_list_entry *v;
	size_t nh = 0, i;
	int e = lists_load(m, &have, &nh);

	*out = NULL;
	*n = 0;
	if (e)
		return e;
	v = calloc(nh ? nh : 1, sizeof(*v));
	if (!v) {
		free(have);
		return -ENOMEM;
	}
	for (i = 0; i < nh; i++) {
		prefix_of(&have[i], &v[i].p);
		v[i].v = have[i].v;
	}
	free(have);
	*out = v;
	*n = nh;
	return 0;
}

void pacer_lists_count(const struct pacer_list_entry *v, size_t n, uint64_t now_ns,
		       struct pacer_list_counts *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		uint32_t l = v[i].v.verdict == PACER_LIST_EXEMPT ? 0 : 1;

		if (pacer_list_expired(&v[i].v, now_ns)) {
			c->expired++;
			continue;
		}
		if (v[i].v.verdict != PACER_LIST_EXEMPT && v[i].v.verdict != PACER_LIST_DENY)
			continue;
		c->n[l][v[i].v.origin == PACER_LIST_CONF ? 0 : 1]++;
		if (v[i].v.expires_ns)
			c->timed[l]++;
	}
}

int pacer_lists_read(const struct pacer_class_maps *m, unsigned origins, struct pacer_prefix *out,
		     uint32_t *verdict, int max, int *n)
{
	struct list_entry *have = NULL;
	uint64_t now = pacer_list_clock_ns();
	size_t nh = 0, i;
	int e = lists_load(m, &have, &nh), k = 0;

	*n = 0;
	if (e)
		return e;
	for (i = 0; i < nh; i++) {
		if (pacer_list_expired(&have[i].v, now) || !(origins & (1u << have[i].v.origin)))
			continue;
		if (k >= max) {
			free(have);
			return -ENOSPC;
		}
		prefix_of(&have[i], &out[k]);
		verdict[k++] = have[i].v.verdict;
	}
	*n = k;
	free(have);
	return 0;
}

/* ---- per-class counters ---- */

int pacer_class_counters_read(const struct pacer_class_maps *m, uint32_t slot,
			      uint64_t out[PACER_CSTAT_MAX])
{
	struct pacer_class_counters *v;
	int i, j;

	memset(out, 0, sizeof(uint64_t) * PACER_CSTAT_MAX);
	if (slot >= PACER_MAX_CLASSES || m->ncpus < 1)
		return -EINVAL;
	v = calloc((size_t)m->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(m->class_stats_fd, &slot, v)) {
		i = -errno;
		free(v);
		return i;
	}
	for (i = 0; i < m->ncpus; i++)
		for (j = 0; j < PACER_CSTAT_MAX; j++)
			out[j] += v[i].c[j];
	free(v);
	return 0;
}

int pacer_class_counters_reset(const struct pacer_class_maps *m, uint32_t slot)
{
	struct pacer_class_counters *v;
	int e = 0;

	if (slot >= PACER_MAX_CLASSES || m->ncpus < 1)
		return -EINVAL;
	v = calloc((size_t)m->ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_update_elem(m->class_stats_fd, &slot, v, BPF_ANY))
		e = -errno;
	free(v);
	return e;
}

void pacer_class_maps_set_fds(struct pacer_class_maps *m, const int fd[PACER_MAP_MAX])
{
	m->classes_fd = fd[PACER_MAP_CLASSES];
	m->class_stats_fd = fd[PACER_MAP_CLASS_STATS];
	m->list4_fd = fd[PACER_MAP_LIST4];
	m->list6_fd = fd[PACER_MAP_LIST6];
	m->list_filter_fd = fd[PACER_MAP_LIST_FILTER];
	m->cls_sets_fd = fd[PACER_MAP_CLS_SETS];
	m->cls_ports_fd = fd[PACER_MAP_CLS_PORTS];
	m->cls_addrs_fd = fd[PACER_MAP_CLS_ADDRS];
	m->cls_vlan_fd = fd[PACER_MAP_CLS_VLAN];
}
