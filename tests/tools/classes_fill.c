// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark's class and list rows (scripts/bench.py): fill a loaded
 * pacer's pinned maps through user/lib/policy/classes_map.c, or a probe's map.
 *
 *   classes_fill PINDIR [--classes N [--first]] [--exempt N]
 *     N classes of which the benchmark's traffic (UDP to port 9) fits only
 *     the last (--first: only the first): N - 1 "udp dport 1000+i", and
 *     "udp" paced under the loaded global limit and key, so the pacing is
 *     the classless program's and the difference is the classification;
 *     N exempt /32 prefixes, none a benchmark source.
 *   classes_fill --probe-lpm MAP --exempt N | --probe-hash MAP --exempt N
 *   classes_fill --probe-filter MAP --exempt N
 *     the same prefixes into a probe's LPM trie, or its hash of (address,
 *     length) keys, or its copy of the datapath's bitmap (MAP) and the LPM
 *     trie beside it, probe_lpm4 (bpf/bench_lists.bpf.c).
 *
 * The prefixes: half random addresses in 128.0.0.0/2 (where the spoofed
 * flood draws its sources: 5000 of 2^30 addresses), half in 10.80.0.0/12
 * (beside the structured sources' 10.64.0.0/12).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "classes_map.h"
#include "pacer_classify.h"

static int usage(void)
{
	fprintf(stderr, "usage: classes_fill PINDIR [--classes N [--first]] [--exempt N]\n"
			"       classes_fill --probe-lpm MAP --exempt N | --probe-hash MAP --exempt N\n"
			"       classes_fill --probe-filter MAP --exempt N\n");
	return 2;
}

static uint64_t rnd(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return pacer_mix64(*s);
}

/* Prefix i of the benchmark's exempt list. */
static void prefix_i(int i, uint64_t *seed, struct pacer_prefix *p)
{
	uint32_t a = (uint32_t)rnd(seed);

	a = i % 2 ? (0x80000000u | (a & 0x3fffffffu)) : (0x0a500000u | (a & 0x000fffffu));
	memset(p, 0, sizeof(*p));
	p->family = 4;
	p->len = 32;
	a = htonl(a);
	memcpy(p->addr, &a, 4);
}

static int open_pin(const char *dir, const char *name)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		fprintf(stderr, "classes_fill: cannot open %s: %s\n", path, strerror(errno));
	return fd;
}

struct hash_key {
	uint32_t addr; /* network byte order, masked to len */
	uint32_t len;
};

/* The prefixes' bits in a probe's bitmap (pacer_list_filter_set, as the CLI sets the datapath's). */
static int fill_probe_filter(const char *map, int n)
{
	uint64_t seed = 0x6c697374ULL;
	__u64 *words = calloc(2 * PACER_LIST_FILTER_WORDS, sizeof(*words));
	int fd = bpf_obj_get(map), i, rc = 0;
	uint32_t w;

	if (fd < 0 || !words) {
		fprintf(stderr, "classes_fill: cannot open %s: %s\n", map, strerror(errno));
		free(words);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct pacer_prefix p;

		prefix_i(i, &seed, &p);
		pacer_list_filter_set(words, 4, p.len, p.addr);
	}
	for (w = 0; w < 2 * PACER_LIST_FILTER_WORDS && !rc; w++)
		if (words[w] && bpf_map_update_elem(fd, &w, &words[w], BPF_ANY)) {
			fprintf(stderr, "classes_fill: %s: %s\n", map, strerror(errno));
			rc = 1;
		}
	free(words);
	close(fd);
	return rc;
}

static int fill_probe(const char *map, int lpm, int n)
{
	uint64_t seed = 0x6c697374ULL;
	uint32_t v = PACER_LIST_EXEMPT;
	int fd = bpf_obj_get(map), i;

	if (fd < 0) {
		fprintf(stderr, "classes_fill: cannot open %s: %s\n", map, strerror(errno));
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct pacer_prefix p;
		struct pacer_list4_key lk;
		struct hash_key hk;
		int err;

		prefix_i(i, &seed, &p);
		if (lpm) {
			lk.prefixlen = p.len;
			memcpy(lk.addr, p.addr, 4);
			err = bpf_map_update_elem(fd, &lk, &v, BPF_ANY);
		} else {
			memcpy(&hk.addr, p.addr, 4);
			hk.len = p.len;
			err = bpf_map_update_elem(fd, &hk, &v, BPF_ANY);
		}
		if (err) {
			fprintf(stderr, "classes_fill: %s: %s\n", map, strerror(errno));
			return 1;
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct pacer_class_maps m;
	struct pacer_class c[PACER_MAX_CLASSES];
	struct pacer_prefix *ex;
	char err[256];
	uint64_t seed = 0x6c697374ULL;
	int n_classes = 0, n_exempt = 0, i, cfg_fd, rc = 1;
	const char *dir = NULL, *probe = NULL;
	int probe_lpm = 0, first = 0;
	void *cfg;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--classes") && i + 1 < argc)
			n_classes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--first"))
			first = 1;
		else if (!strcmp(argv[i], "--exempt") && i + 1 < argc)
			n_exempt = atoi(argv[++i]);
		else if ((!strcmp(argv[i], "--probe-lpm") || !strcmp(argv[i], "--probe-hash") ||
			  !strcmp(argv[i], "--probe-filter")) &&
			 i + 1 < argc) {
			probe_lpm = !strcmp(argv[i], "--probe-lpm") ? 1
				    : !strcmp(argv[i], "--probe-filter") ? 2 : 0;
			probe = argv[++i];
		} else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			return usage();
	}
	if (n_classes < 0 || n_classes > PACER_MAX_CLASSES || n_exempt < 0 ||
	    n_exempt > PACER_LIST_MAX_ENTRIES || (!dir == !probe))
		return usage();
	if (probe && probe_lpm == 2) {
		char lpm[512];
		const char *slash = strrchr(probe, '/');

		snprintf(lpm, sizeof(lpm), "%.*sprobe_lpm4", slash ? (int)(slash - probe + 1) : 0, probe);
		return fill_probe_filter(probe, n_exempt) || fill_probe(lpm, 1, n_exempt);
	}
	if (probe)
		return fill_probe(probe, probe_lpm, n_exempt);

	memset(&m, 0, sizeof(m));
	m.classes_fd = open_pin(dir, "classes");
	m.class_stats_fd = open_pin(dir, "class_stats");
	m.list4_fd = open_pin(dir, "list4");
	m.list6_fd = open_pin(dir, "list6");
	m.list_filter_fd = open_pin(dir, "list_filter");
	m.cls_sets_fd = open_pin(dir, "cls_sets");
	m.cls_ports_fd = open_pin(dir, "cls_ports");
	m.cls_addrs_fd = open_pin(dir, "cls_addrs");
	m.cls_vlan_fd = open_pin(dir, "cls_vlan");
	cfg_fd = open_pin(dir, "config");
	if (m.classes_fd < 0 || m.class_stats_fd < 0 || m.list4_fd < 0 || m.list6_fd < 0 ||
	    m.list_filter_fd < 0 || m.cls_sets_fd < 0 || m.cls_ports_fd < 0 || m.cls_addrs_fd < 0 ||
	    m.cls_vlan_fd < 0 || cfg_fd < 0)
		return 1;
	cfg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, cfg_fd, 0);
	if (cfg == MAP_FAILED) {
		fprintf(stderr, "classes_fill: cannot map the configuration: %s\n", strerror(errno));
		return 1;
	}
	m.cfg = cfg;
	m.ncpus = 1;
	{
		struct pacer_layout lay;
		uint32_t zero = 0;
		int lay_fd = open_pin(dir, "layout");

		if (lay_fd < 0 || bpf_map_lookup_elem(lay_fd, &zero, &lay))
			return 1;
		m.backend = lay.backend;
	}
	for (i = 0; i < n_classes; i++) {
		struct pacer_class *k = &c[i];

		memset(k, 0, sizeof(*k));
		snprintf(k->name, sizeof(k->name), "c%d", i);
		k->m.terms = PACER_M_PROTO;
		k->m.proto = PACER_IPPROTO_UDP;
		if (first ? i > 0 : i < n_classes - 1) {
			k->m.terms |= PACER_M_DPORT;
			k->m.dport_lo = k->m.dport_hi = (uint16_t)(1000 + i);
		}
		k->action = PACER_ACTION_PACE;
		k->key_mode = PACER_KEY_SRC;
		k->prefix4 = m.cfg->prefix4;
		k->prefix6 = m.cfg->prefix6;
		k->policy = m.cfg->policy;
		k->thresh_ticks = m.cfg->thresh_ticks;
		k->burst_ticks = m.cfg->burst_ticks;
		k->rate_n = m.cfg->rate_n;
		k->interval_ns = m.cfg->interval_ns;
		k->id = (uint32_t)i + 1;
		k->stat_slot = (uint32_t)i;
	}
	if (n_classes && pacer_classes_install(&m, c, n_classes, err, sizeof(err))) {
		fprintf(stderr, "classes_fill: %s\n", err);
		goto out;
	}
	ex = calloc((size_t)n_exempt + 1, sizeof(*ex));
	if (!ex)
		goto out;
	for (i = 0; i < n_exempt; i++)
		prefix_i(i, &seed, &ex[i]);
	if (n_exempt && pacer_lists_apply(&m, ex, n_exempt, NULL, 0, err, sizeof(err))) {
		fprintf(stderr, "classes_fill: %s\n", err);
		free(ex);
		goto out;
	}
	free(ex);
	rc = 0;
out:
	munmap(cfg, (size_t)sysconf(_SC_PAGESIZE));
	return rc;
}
