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
#include "class_compile.h"
#include "pacer_classify.h"

/* Delete bank's entries from a map keyed by tag (the address trie) or by bank (the VLAN hash). */
static int clear_bank_keys(int fd, size_t key_len, __u32 bank, int trie, char *err, size_t len)
{
	__u8 key[sizeof(struct pacer_cls_addr_key) + 8], next[sizeof(key)];
	void *prev = NULL;

	for (;;) {
		int mine;

		if (bpf_map_get_next_key(fd, prev, next)) {
			if (errno == ENOENT)
				return 0;
			snprintf(err, len, "cannot walk the classifier's %s: %s", trie ? "prefixes" : "VLAN ids",
				 strerror(errno));
			return -errno;
		}
		mine = trie ? ((const struct pacer_cls_addr_key *)next)->tag >> 2 == bank
			    : ((const struct pacer_cls_vlan_key *)next)->bank == bank;
		if (mine) {
			if (bpf_map_delete_elem(fd, next) && errno != ENOENT) {
				snprintf(err, len, "cannot clear the classifier's %s: %s",
					 trie ? "prefixes" : "VLAN ids", strerror(errno));
				return -errno;
			}
			prev = NULL; /* the walk starts again: the deleted key cannot lead on */
			continue;
		}
		memcpy(key, next, key_len);
		prev = key;
	}
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
	e = clear_bank_keys(m->cls_addrs_fd, sizeof(struct pacer_cls_addr_key), bank, 1, err, len);
	if (!e)
		e = put_prefixes(m->cls_addrs_fd, bank, 0, cc->src, cc->n_src, err, len);
	if (!e)
		e = put_prefixes(m->cls_addrs_fd, bank, 1, cc->dst, cc->n_dst, err, len);
	if (!e)
		e = clear_bank_keys(m->cls_vlan_fd, sizeof(struct pacer_cls_vlan_key), bank, 0, err, len);
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
	volatile __u32 *sel_p = &m->cfg->class_sel;
	__u32 sel = *sel_p, bank, dims = 0;
	struct pacer_cls_compiled *cc = NULL;
	int i, e;

	e = pacer_classes_check(c, n, m->backend, err, len);
	if (e)
		return e;
	/*
	 * The bank no packet reads: the other one while classes run; either
	 * while none do.  A packet reads class_sel once and looks its class
	 * up in that bank for microseconds; the next install writes that
	 * bank only after this one returned.
	 */
	bank = PACER_CLASS_SEL_COUNT(sel) ? !PACER_CLASS_SEL_BANK(sel) : 0;
	if (n) {
		cc = malloc(sizeof(*cc));
		if (!cc) {
			snprintf(err, len, "out of memory compiling the classes");
			return -ENOMEM;
		}
		e = pacer_cls_compile(c, n, cc, err, len);
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
	__atomic_store_n(sel_p, n ? PACER_CLASS_SEL_DIMS(bank, n, dims) : 0, __ATOMIC_RELEASE);
	return 0;
}

int pacer_classes_read(const struct pacer_class_maps *m, struct pacer_class *out, int *n)
{
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
	*n = (int)count;
	return 0;
}

/* ---- the lists ---- */

/* One trie entry: its key as the map holds it, the verdict. */
struct list_entry {
	uint32_t family, verdict;
	struct pacer_list6_key k; /* a pacer_list4_key is its first 8 bytes */
};

const char *pacer_prefix_str(const struct pacer_prefix *p, char *buf, size_t len)
{
	return format_prefix_bytes(p->family, p->len, p->addr, buf, len);
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
static int entry_of(const struct pacer_prefix *p, uint32_t verdict, struct list_entry *e)
{
	uint32_t bits = p->family == 4 ? 32 : 128, i;

	if ((p->family != 4 && p->family != 6) || p->len > bits)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->family = p->family;
	e->verdict = verdict;
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

static int list_fd(const struct pacer_class_maps *m, uint32_t family)
{
	return family == 4 ? m->list4_fd : m->list6_fd;
}

/* Every entry of both tries, sorted, into a fresh array (*out, *n).  0 or -errno. */
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
			if (bpf_map_lookup_elem(fd, &e->k, &e->verdict)) {
				if (errno == ENOENT) /* removed meanwhile */
					continue;
				free(v);
				return -errno;
			}
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

/* The wanted entries, sorted, merged, checked.  0 or -EINVAL / -ENOMEM with err. */
static int lists_want(const struct pacer_prefix *exempt, int ne, const struct pacer_prefix *deny,
		      int nd, struct list_entry **out, size_t *n, uint32_t *sel, char *err, size_t len)
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

		if (entry_of(p, is_exempt ? PACER_LIST_EXEMPT : PACER_LIST_DENY, &v[i])) {
			snprintf(err, len, "%s prefix %u of family %u: bad family or length",
				 is_exempt ? "exempt" : "deny", p->len, p->family);
			free(v);
			return -EINVAL;
		}
	}
	qsort(v, total, sizeof(*v), entry_cmp);
	*sel = 0;
	for (i = 0; i < total; i++) {
		if (k && !entry_cmp(&v[k - 1], &v[i])) {
			if (v[k - 1].verdict != v[i].verdict) {
				struct pacer_prefix p;

				prefix_of(&v[i], &p);
				snprintf(err, len, "%s is on both the exempt and the deny list",
					 pacer_prefix_str(&p, pb, sizeof(pb)));
				free(v);
				return -EINVAL;
			}
			continue;
		}
		v[k++] = v[i];
		per_family[v[i].family == 6]++;
		*sel |= v[i].family == 4 ? PACER_LIST_V4 : PACER_LIST_V6;
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

int pacer_lists_apply(const struct pacer_class_maps *m, const struct pacer_prefix *exempt, int ne,
		      const struct pacer_prefix *deny, int nd, char *err, size_t len)
{
	struct list_entry *want = NULL, *have = NULL;
	size_t nw = 0, nh = 0, i, done = 0;
	__u64 *bits = NULL;
	void *live;
	uint32_t sel = 0;
	int e;

	if (ne < 0 || nd < 0 || (ne && !exempt) || (nd && !deny)) {
		snprintf(err, len, "lists of %d exempt and %d deny prefixes: bad counts", ne, nd);
		return -EINVAL;
	}
	e = lists_want(exempt, ne, deny, nd, &want, &nw, &sel, err, len);
	if (e)
		return e;
	live = mmap(NULL, FILTER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, m->list_filter_fd, 0);
	if (live == MAP_FAILED) {
		e = -errno;
		snprintf(err, len, "cannot map the lists' filter: %s", strerror(-e));
		free(want);
		return e;
	}
	bits = calloc(2 * PACER_LIST_FILTER_WORDS, sizeof(*bits));
	e = bits ? lists_load(m, &have, &nh) : -ENOMEM;
	if (e) {
		snprintf(err, len, "cannot read the lists: %s", strerror(-e));
		goto out;
	}
	for (i = 0; i < nw; i++)
		pacer_list_filter_set(bits, want[i].family, want[i].k.prefixlen, want[i].k.addr);
	/* Additions and changes: a source on both the old and the new list stays on it. */
	for (i = 0; i < nw; i++) {
		struct list_entry *old = entry_find(have, nh, &want[i]);

		if (old && old->verdict == want[i].verdict)
			continue;
		if (bpf_map_update_elem(list_fd(m, want[i].family), &want[i].k, &want[i].verdict,
					BPF_ANY)) {
			struct pacer_prefix p;
			char pb[64];

			e = -errno;
			prefix_of(&want[i], &p);
			snprintf(err, len, "cannot add %s to the lists: %s",
				 pacer_prefix_str(&p, pb, sizeof(pb)), strerror(-e));
			done = i;
			goto undo;
		}
	}
	/* The new prefixes' bits before anything looks for them; the old ones' stay. */
	filter_store(live, bits, true);
	__atomic_store_n(&m->cfg->list_sel, sel, __ATOMIC_RELEASE);
	/* Removals last; a family with no prefixes left is already skipped. */
	for (i = 0; i < nh; i++) {
		if (!entry_find(want, nw, &have[i]))
			bpf_map_delete_elem(list_fd(m, have[i].family), &have[i].k);
	}
	filter_store(live, bits, false);
	e = 0;
	goto out;
undo:
	/* Put back what the additions changed: the old verdict, or no entry. */
	for (i = 0; i < done; i++) {
		struct list_entry *old = entry_find(have, nh, &want[i]);
		int fd = list_fd(m, want[i].family);

		if (old)
			bpf_map_update_elem(fd, &old->k, &old->verdict, BPF_ANY);
		else
			bpf_map_delete_elem(fd, &want[i].k);
	}
out:
	munmap(live, FILTER_BYTES);
	free(bits);
	free(want);
	free(have);
	return e;
}

int pacer_lists_read(const struct pacer_class_maps *m, struct pacer_prefix *out, uint32_t *verdict,
		     int max, int *n)
{
	struct list_entry *have = NULL;
	size_t nh = 0, i;
	int e = lists_load(m, &have, &nh);

	*n = 0;
	if (e)
		return e;
	if (nh > (size_t)(max > 0 ? max : 0)) {
		free(have);
		return -ENOSPC;
	}
	for (i = 0; i < nh; i++) {
		prefix_of(&have[i], &out[i]);
		verdict[i] = have[i].verdict;
	}
	*n = (int)nh;
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
