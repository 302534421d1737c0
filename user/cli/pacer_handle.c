// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Finding the pacer attached to an interface, whoever attached it, and opening its maps. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "layout.h"
#include "classes_map.h"
#include "cli_log.h"
#include "pacer_budget.h"
#include "pacer_handle.h"
#include "pin_ops.h"
#include "prom.h"
#include "classes_cli.h"
#include "classes_map.h"
#include "time_now.h"
#include "xdp_query.h"
#include "xdp_chain.h"

int num_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}

static int find_prog_id(int ifindex, uint32_t *prog_id, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	return err ? err : xdp_query_prog(&q, prog_id, mode);
}

/*
 * Behind libxdp's dispatcher our program is a component, not the attached
 * one: its id into *prog_id, with its place in the chain into h (if given).
 */
static int resolve_dispatcher(int ifindex, uint32_t *prog_id, struct pacer_handle *h)
{
	struct xdp_chain c;
	int err = xdp_chain_read(ifindex, &c), i;

	if (err)
		return err;
	if (!c.dispatcher)
		return c.nprogs ? 0 : -ENOENT;
	i = xdp_chain_find(&c, PACER_PROG_NAME);
	if (i < 0)
		return -ENOENT;
	*prog_id = c.progs[i].id;
	if (h) {
		h->chained = true;
		h->dispatcher_id = c.dispatcher_id;
		h->run_prio = c.progs[i].priority;
		h->chain_actions = c.progs[i].chain_actions;
	}
	return 0;
}

/*
 * The pacer's program id on ifindex into *id (0: none there), or
 * -EPERM/-EACCES when a program is attached but this process may not open
 * it: then whether it is a pacer cannot be told.
 */
static int attached_pacer_lookup(int ifindex, uint32_t *id)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	const char *mode;
	int fd;

	*id = 0;
	if (find_prog_id(ifindex, id, &mode)) {
		*id = 0;
		return 0;
	}
	fd = bpf_prog_get_fd_by_id(*id);
	if (fd < 0) {
		*id = 0;
		return fd == -EPERM || fd == -EACCES ? fd : 0;
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		*id = 0;
	else if (!strcmp(info.name, "xdp_dispatcher") && resolve_dispatcher(ifindex, id, NULL))
		*id = 0;
	else if (strcmp(info.name, "xdp_dispatcher") && strcmp(info.name, PACER_PROG_NAME))
		*id = 0;
	close(fd);
	return 0;
}

uint32_t attached_pacer_id(int ifindex)
{
	uint32_t id;

	return attached_pacer_lookup(ifindex, &id) ? 0 : id;
}

#define PACER_MAX_PROG_MAPS 32

/* Whether pins for ifname remain in this namespace (their directory in path). */
static bool pins_remain(const char *ifname, char *path, size_t len)
{
	struct stat st;

	return !pin_dir(ifname, path, len) && !stat(path, &st);
}

/* The attached program's fd and info, looking behind libxdp's dispatcher. fd or negative errno. */
static int open_attached_prog(struct pacer_handle *h, struct bpf_prog_info *info)
{
	uint32_t info_len = sizeof(*info), inner = 0;
	char eb[128];
	int fd = bpf_prog_get_fd_by_id(h->prog_id), err;

	if (fd < 0) {
		pr_err("cannot open XDP program id %u on %s: %s", h->prog_id, h->ifname,
		       err_str(fd, eb, sizeof(eb)));
		return fd;
	}
	err = bpf_obj_get_info_by_fd(fd, info, &info_len);
	if (!err && !strcmp(info->name, "xdp_dispatcher")) {
		close(fd);
		err = resolve_dispatcher(h->ifindex, &inner, h);
		if (err || !inner) {
			pr_err("libxdp dispatcher on %s holds no %s program", h->ifname, PACER_PROG_NAME);
			return -ENOENT;
		}
		h->prog_id = inner;
		fd = bpf_prog_get_fd_by_id(inner);
		if (fd < 0)
			return fd;
		memset(info, 0, sizeof(*info));
		err = bpf_obj_get_info_by_fd(fd, info, &info_len);
	}
	h->prog_fd = fd;
	if (err)
		pr_err("cannot read program info on %s: %s", h->ifname, err_str(err, eb, sizeof(eb)));
	return err ? err : fd;
}

/* The program is ours by name, with no more maps than a pacer build has. */
static int check_prog(const struct pacer_handle *h, const struct bpf_prog_info *info)
{
	if (strcmp(info->name, PACER_PROG_NAME)) {
		pr_err("%s has XDP program id %u '%s' attached, not %s", h->ifname, h->prog_id,
		       info->name, PACER_PROG_NAME);
		return -ENOENT;
	}
	if (info->nr_map_ids > PACER_MAX_PROG_MAPS) {
		pr_err("program id %u uses %u maps; not an xdp-pacer build this CLI knows",
		       h->prog_id, info->nr_map_ids);
		return -EINVAL;
	}
	return 0;
}

/*
 * Open the maps of program prog_fd into fd[] by name (pins.h's slots): a map
 * of no slot, or a second one for a slot, is closed again, and fd[] keeps -1
 * where none opened.  0, -E2BIG for more maps than a pacer build has, or
 * -errno.
 */
int pacer_prog_maps(int prog_fd, int fd[PACER_MAP_MAX])
{
	uint32_t map_ids[PACER_MAX_PROG_MAPS], info_len, i;
	struct bpf_prog_info info = {};

	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	if (info.nr_map_ids > PACER_MAX_PROG_MAPS)
		return -E2BIG;
	i = info.nr_map_ids;
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = i;
	info.map_ids = (uint64_t)(unsigned long)map_ids;
	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	for (i = 0; i < info.nr_map_ids; i++) {
		struct bpf_map_info m = {};
		uint32_t ml = sizeof(m);
		int mfd = bpf_map_get_fd_by_id(map_ids[i]), slot;

		if (mfd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(mfd, &m, &ml) || (slot = pacer_map_slot(m.name)) < 0 ||
		    fd[slot] >= 0) {
			close(mfd);
			continue;
		}
		fd[slot] = mfd;
	}
	return 0;
}

/* Every map there, with the value size this CLI reads: reads copy that many bytes. */
static int check_maps(const struct pacer_handle *h)
{
	uint32_t i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		struct bpf_map_info m = {};
		uint32_t ml = sizeof(m);

		if (h->map_fd[i] < 0 && pacer_maps[i].optional)
			continue;
		if (h->map_fd[i] < 0) {
			pr_err("program id %u on %s has no '%s' map: not an xdp-pacer build this CLI knows",
			       h->prog_id, h->ifname, pacer_maps[i].map_name);
			return -ENOENT;
		}
		if (bpf_obj_get_info_by_fd(h->map_fd[i], &m, &ml) ||
		    (pacer_maps[i].value_size && m.value_size != pacer_maps[i].value_size)) {
			pr_err("program id %u on %s: map '%s' has values of %u bytes, this CLI expects %u (ABI mismatch)",
			       h->prog_id, h->ifname, m.name, m.value_size, pacer_maps[i].value_size);
			return -EPROTO;
		}
	}
	return 0;
}

/* The fixed layout, checked against this CLI's ABI, and the live configuration mapped. */
static int read_layout_and_config(struct pacer_handle *h)
{
	uint32_t zero = 0;
	int err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_RODATA], &zero, &h->layout);

	if (err || !layout_readable(&h->layout)) {
		pr_err("program id %u on %s: layout ABI mismatch (want version %d)", h->prog_id,
		       h->ifname, PACER_ABI_VERSION);
		return -EPROTO;
	}
	h->cfg_map_len = (size_t)sysconf(_SC_PAGESIZE);
	h->cfg = mmap(NULL, h->cfg_map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      h->map_fd[PACER_MAP_DATA], 0);
	if (h->cfg == MAP_FAILED) {
		err = -errno;
		h->cfg = NULL;
		pr_err("cannot map the live configuration of program id %u: %s", h->prog_id,
		       strerror(-err));
		return err;
	}
	return 0;
}

/* The interface and the program attached to it, or why not (naming leftover pins). */
static int find_attached(struct pacer_handle *h)
{
	char path[256];
	int err = ifname_to_index(h->ifname, &h->ifindex);

	if (err) {
		if (pins_remain(h->ifname, path, sizeof(path)))
			pr_err("pins for %s remain in %s (orphaned: the interface is gone); remove them with 'xdp-pacer unload %s'",
			       h->ifname, path, h->ifname);
		return err;
	}
	if (!find_prog_id(h->ifindex, &h->prog_id, &h->mode))
		return 0;
	if (pins_remain(h->ifname, path, sizeof(path)))
		pr_err("no XDP program is attached to %s; a stopped limiter's pins are kept in %s ('xdp-pacer load %s' resumes it, 'xdp-pacer unload %s' removes them)",
		       h->ifname, path, h->ifname, h->ifname);
	else
		pr_err("no XDP program is attached to %s", h->ifname);
	return -ENOENT;
}

int pacer_handle_open(const char *ifname, struct pacer_handle *h)
{
	struct bpf_prog_info info = {};
	char path[256], eb[128];
	uint32_t i;
	int err;

	memset(h, 0, sizeof(*h));
	h->prog_fd = -1;
	for (i = 0; i < PACER_MAP_MAX; i++)
		h->map_fd[i] = -1;
	h->ncpus = num_cpus();
	snprintf(h->ifname, sizeof(h->ifname), "%s", ifname);
	err = find_attached(h);
	if (err)
		return err;
	err = open_attached_prog(h, &info);
	if (err < 0)
		goto fail;
	err = check_prog(h, &info);
	if (!err) {
		err = pacer_prog_maps(h->prog_fd, h->map_fd);
		if (err)
			pr_err("cannot list maps of program id %u: %s", h->prog_id,
			       err_str(err, eb, sizeof(eb)));
	}
	if (!err)
		err = check_maps(h);
	if (!err)
		err = read_layout_and_config(h);
	if (err)
		goto fail;
	/* Pins of an earlier load that another loader replaced are not this program's. */
	if (!pin_dir(ifname, path, sizeof(path)) && pinned_prog_id(path) == h->prog_id)
		h->pinned = true;
	return 0;
fail:
	pacer_handle_close(h);
	return err;
}

void pacer_handle_close(struct pacer_handle *h)
{
	int i;

	if (h->cfg)
		munmap(h->cfg, h->cfg_map_len);
	h->cfg = NULL;
	for (i = 0; i < PACER_MAP_MAX; i++) {
		if (h->map_fd[i] >= 0)
			close(h->map_fd[i]);
		h->map_fd[i] = -1;
	}
	if (h->prog_fd >= 0)
		close(h->prog_fd);
	h->prog_fd = -1;
}

static uint32_t map_id_of(int fd)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

bool pacer_handle_follow(struct pacer_handle *h)
{
	uint32_t id = attached_pacer_id(h->ifindex), was = h->prog_id;
	struct pacer_handle n;
	bool same;

	if (id == h->prog_id)
		return true;
	if (id && !pacer_handle_open(h->ifname, &n)) {
		same = map_id_of(n.map_fd[PACER_MAP_EVENTS]) == map_id_of(h->map_fd[PACER_MAP_EVENTS]) &&
		       map_id_of(n.map_fd[PACER_MAP_DATA]) == map_id_of(h->map_fd[PACER_MAP_DATA]) &&
		       !memcmp(&n.layout, &h->layout, sizeof(n.layout));
		if (same) {
			pr_err("the limiter on %s was replaced in place (program id %u, now %u) and kept its maps: going on with it",
			       h->ifname, was, n.prog_id);
			pacer_handle_close(h);
			*h = n;
			return true;
		}
		pr_err("the limiter on %s was replaced (program id %u, now %u) by one with other maps (its state made afresh, or another geometry): stopping",
		       h->ifname, was, n.prog_id);
		pacer_handle_close(&n);
		return false;
	}
	pr_err("the pacer on %s went away (program id %u is no longer attached: unloaded, or the interface deleted); stopping",
	       h->ifname, was);
	return false;
}

int pacer_read_counters(const struct pacer_handle *h, uint64_t out[PACER_STAT_MAX])
{
	struct pacer_counters *pc;
	uint32_t zero = 0;
	int cpu, i, err;

	pc = calloc((size_t)h->ncpus, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_STATS], &zero, pc);
	if (err) {
		free(pc);
		return err;
	}
	memset(out, 0, sizeof(uint64_t) * PACER_STAT_MAX);
	for (cpu = 0; cpu < h->ncpus; cpu++)
		for (i = 0; i < PACER_STAT_MAX; i++)
			out[i] += pc[cpu].c[i];
	free(pc);
	return 0;
}

uint64_t pacer_map_bytes(const struct pacer_handle *h)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		struct bpf_map_info m = {};
		uint32_t ml = sizeof(m);
		uint64_t v;

		if (bpf_obj_get_info_by_fd(h->map_fd[i], &m, &ml))
			continue;
		if (m.type == BPF_MAP_TYPE_RINGBUF) {
			total += m.max_entries;
			continue;
		}
		/* The lists' tries allocate an entry as it is added: their capacity is no memory. */
		if (m.map_flags & BPF_F_NO_PREALLOC)
			continue;
		v = (uint64_t)((m.value_size + 7) & ~7u) * m.max_entries;
		if (m.type == BPF_MAP_TYPE_PERCPU_ARRAY || m.type == BPF_MAP_TYPE_PERCPU_HASH)
			v *= (uint64_t)h->ncpus;
		total += v;
	}
	return total;
}

uint64_t pacer_layout_clock_now(const struct pacer_layout *lay, int clock_fd)
{
	struct pacer_clock_state cs = {};
	uint32_t zero = 0;

	/* The cached clock is what the datapath compares against: use it once armed. */
	if (lay->clock == PACER_CLOCK_CACHED && clock_fd >= 0 &&
	    !bpf_map_lookup_elem(clock_fd, &zero, &cs) && cs.armed == 1 && cs.now_ns)
		return cs.now_ns;
	return clock_now_ns(lay->clock == PACER_CLOCK_PRECISE ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE);
}

uint64_t pacer_clock_now(const struct pacer_handle *h)
{
	return pacer_layout_clock_now(&h->layout, h->map_fd[PACER_MAP_CLOCK]);
}

int pacer_for_each(int (*fn)(struct pacer_handle *h, void *ctx), void *ctx)
{
	struct if_nameindex *ifs, *i;
	struct pacer_handle h;
	int found = 0, ret = 0;

	ifs = if_nameindex();
	if (!ifs) {
		pr_err("cannot list interfaces: %s", strerror(errno));
		return -errno;
	}
	for (i = ifs; i->if_index && !ret; i++) {
		uint32_t id;
		int err = attached_pacer_lookup((int)i->if_index, &id);

		if (err) {
			/* Not "nothing attached": that would be a false all-clear. */
			pr_err("cannot tell whether the XDP program on %s is xdp-pacer: %s (reading BPF programs needs root, or CAP_SYS_ADMIN / CAP_BPF)",
			       i->if_name, strerror(-err));
			ret = err;
			break;
		}
		if (!id)
			continue;
		if (pacer_handle_open(i->if_name, &h))
			continue;
		ret = fn(&h, ctx);
		pacer_handle_close(&h);
		found++;
	}
	if_freenameindex(ifs);
	return ret ? ret : found;
}

int pacer_prom_fill(const struct pacer_handle *h, struct prom_pacer *out)
{
	uint32_t zero = 0;

	snprintf(out->ifname, sizeof(out->ifname), "%s", h->ifname);
	out->prog_id = h->prog_id;
	out->cfg = *h->cfg;
	out->layout = h->layout;
	out->map_bytes = pacer_map_bytes(h);
	struct pacer_class_maps m;
	int err;

	if (bpf_map_lookup_elem(h->map_fd[PACER_MAP_BUDGET_CFG], &zero, &out->budget))
		return -errno;
	pacer_class_maps_of(h, &m);
	err = classes_fill(&m, out->classes, &out->nclasses);
	if (!err) {
		struct pacer_list_entry *v = NULL;
		struct pacer_list_counts c;
		size_t nv = 0;

		err = pacer_lists_dump(&m, &v, &nv);
		if (!err) {
			pacer_lists_count(v, nv, pacer_list_clock_ns(), &c);
			memcpy(out->list_entries, c.n, sizeof(out->list_entries));
			memcpy(out->list_timed, c.timed, sizeof(out->list_timed));
		}
		free(v);
	}
	return err ? err : pacer_read_counters(h, out->counters);
}

int ifname_to_index(const char *ifname, int *ifindex)
{
	unsigned int idx;

	if (strlen(ifname) >= IF_NAMESIZE) {
		pr_err("interface name '%s' is longer than %d characters", ifname, IF_NAMESIZE - 1);
		return -EINVAL;
	}
	idx = if_nametoindex(ifname);
	if (!idx) {
		pr_err("no such interface '%s'", ifname);
		return -ENODEV;
	}
	*ifindex = (int)idx;
	return 0;
}

void pacer_class_maps_of(const struct pacer_handle *h, struct pacer_class_maps *m)
{
	pacer_class_maps_set_fds(m, h->map_fd);
	m->cfg = h->cfg;
	m->backend = h->layout.backend;
	m->ncpus = h->ncpus;
}
