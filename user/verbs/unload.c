// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer unload: detach the pacer from an interface and remove its pins. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "common.h"
#include "opts.h"
#include "cli_values.h"
#include "writer_lock.h"
#include "xdp_chain.h"
#include "pin_keep.h"
#include "backend.h"
#include "pacer_ticks.h"

struct unload_opts {
	const char *ifname;
	uint64_t netns;
	bool keep_maps;
};

static const struct opt_spec unload_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct unload_opts, ifname) },
	{ .name = "netns", .type = OPT_U64, .arg = "INODE", .min = 1, .max = UINT64_MAX,
	  OPT_FIELD(struct unload_opts, netns),
	  .why = "expected the namespace's inode number, as 'status' prints it",
	  .help = "remove the pins of IFNAME in another network namespace, as\n"
		  "'status' lists them; refused while that namespace still exists\n"
		  "(unload from inside it instead)" },
	{ .name = "keep-maps", .type = OPT_BOOL, OPT_FIELD(struct unload_opts, keep_maps),
	  .help = "detach, and keep the pinned maps: the sources' state, the\n"
		  "lists with their added entries, the counters and settings;\n"
		  "the next 'xdp-pacer load IFNAME' resumes with them\n"
		  "(systemctl stop does this)" },
	{ 0 },
};

static const struct opt_verb unload_verb = {
	.name = "unload",
	.synopsis = "IFNAME [--keep-maps] [--netns INODE]",
	.intro = "Detach the xdp-pacer program from IFNAME, whether the CLI or 'ip link' attached it,\n"
		 "and remove the pins 'load' made for IFNAME in this network namespace\n"
		 "(" PACER_PIN_ROOT "/netns-INODE/IFNAME), saying what that discards; with\n"
		 "--keep-maps, keep them for the next load. Other XDP programs are left alone:\n"
		 "in libxdp's dispatcher, the limiter leaves it and its neighbours keep running.\n"
		 "If IFNAME no longer exists, its orphaned pins are removed (which frees the\n"
		 "program and its sketch).\n",
	.args = "an interface name",
	.opts = unload_specs,
};

static int detach(struct pacer_handle *h)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(h->ifindex);
	struct xdp_program *p = NULL;
	char eb[128];
	int err = (int)libxdp_get_error(mp);

	if (err || !mp) {
		pr_err("cannot read XDP state of %s: %s", h->ifname, err_str(err ? err : -ENOENT, eb, sizeof(eb)));
		return err ? err : -ENOENT;
	}
	if (xdp_multiprog__is_legacy(mp)) {
		err = xdp_multiprog__detach(mp);
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (xdp_program__id(p) == h->prog_id)
				break;
		err = p ? xdp_program__detach(p, h->ifindex, xdp_multiprog__attach_mode(mp), 0)
			: -ENOENT;
	}
	xdp_multiprog__close(mp);
	if (err)
		pr_err("cannot detach program id %u from %s: %s", h->prog_id, h->ifname,
		       err_str(err, eb, sizeof(eb)));
	return err;
}

/* What still runs on the interface: the neighbours libxdp's dispatcher kept. */
static void report_left(int ifindex, const char *ifname)
{
	char names[512] = "";
	struct xdp_chain c;
	int i;

	if (xdp_chain_read(ifindex, &c) || !c.nprogs)
		return;
	for (i = 0; i < c.nprogs; i++) {
		size_t used = strlen(names);

		snprintf(names + used, sizeof(names) - used, "%s%s (id %u)", i ? ", " : "",
			 c.progs[i].name, c.progs[i].id);
	}
	pr_info("  still attached to %s%s: %s", ifname,
		c.dispatcher ? " in libxdp's dispatcher" : "", names);
}

/*
 * About how many sources the state holds that were seen within the
 * interval (the backend's fresh entries, the sketch's over its rows), from
 * the mapped state map; 0 where it cannot be read.
 */
static uint64_t sources_held(const struct pin_keep *k, uint64_t *bytes)
{
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info), zero = 0;
	struct pacer_config cfg;
	uint64_t n = 0, tick;
	size_t len;
	void *mem;

	*bytes = 0;
	if (k->fd[PACER_MAP_SK] < 0 || bpf_obj_get_info_by_fd(k->fd[PACER_MAP_SK], &info, &ilen))
		return 0;
	*bytes = (uint64_t)info.max_entries * info.value_size;
	if (!k->layout_ok || info.value_size != PACER_LINE_BYTES || k->fd[PACER_MAP_DATA] < 0 ||
	    bpf_map_lookup_elem(k->fd[PACER_MAP_DATA], &zero, &cfg))
		return 0;
	len = (size_t)*bytes;
	mem = mmap(NULL, len, PROT_READ, MAP_SHARED, k->fd[PACER_MAP_SK], 0);
	if (mem == MAP_FAILED)
		return 0;
	tick = pacer_now_tick(pacer_layout_clock_now(&k->layout, k->fd[PACER_MAP_CLOCK]), k->layout.tick_shift);
	n = backend_fresh_sources(&k->layout, mem, info.max_entries, tick, cfg.thresh_ticks);
	munmap(mem, len);
	return n;
}

/* What the pins in dir hold that the operator made: what removing them discards, or keeping them keeps. */
static void describe_pins(const char *dir, char *buf, size_t len)
{
	struct pin_keep k;
	char mb[32];
	uint64_t bytes, held;

	pin_keep_from_dir(&k, dir);
	held = sources_held(&k, &bytes);
	snprintf(buf, len, "%llu added list entries (%llu IPv4, %llu IPv6), the state of about %llu sources seen within the interval (%s), the counters and the live settings",
		 (unsigned long long)(k.added4 + k.added6), (unsigned long long)k.added4,
		 (unsigned long long)k.added6, (unsigned long long)held,
		 format_bytes(bytes, mb, sizeof(mb)));
	pin_keep_close(&k);
}

static int remove_dir_pins(const char *dir, const char *why)
{
	uint32_t id = pinned_prog_id(dir);
	char what[320];
	int err;

	describe_pins(dir, what, sizeof(what));
	err = pacer_remove_pin_dir(dir);
	if (err) {
		pr_err("cannot remove pins in %s: %s", dir, strerror(-err));
		return 1;
	}
	if (id)
		pr_info("xdp-pacer: removed %spins in %s (program id %u), discarding %s", why, dir, id, what);
	else
		pr_info("xdp-pacer: removed %spins in %s, discarding %s", why, dir, what);
	return 0;
}

/* Pins of another namespace: only once nothing holds that namespace any more. */
static int unload_foreign(const char *ifname, uint64_t netns)
{
	char dir[256];
	struct stat st;

	if (pin_if_dir(PACER_PIN_ROOT, netns, ifname, dir, sizeof(dir)) || stat(dir, &st)) {
		pr_err("no pins for %s of network namespace %llu", ifname, (unsigned long long)netns);
		return 1;
	}
	if (netns_alive(netns)) {
		pr_err("network namespace %llu still exists: run 'xdp-pacer unload %s' inside it (e.g. with nsenter --net=...)",
		       (unsigned long long)netns, ifname);
		return 1;
	}
	return remove_dir_pins(dir, "orphaned ");
}

/* The interface is gone: what is left of it is its pins (kept for its return with --keep-maps). */
static int unload_orphan(const char *ifname, const char *dir, bool had_pins, bool keep_maps)
{
	if (!had_pins) {
		pr_err("no such interface '%s', and no pins for it in %s", ifname, dir);
		return 1;
	}
	if (keep_maps) {
		pr_info("xdp-pacer: %s no longer exists; its pins stay in %s for a load when it is back",
			ifname, dir);
		return 0;
	}
	pr_info("xdp-pacer: %s no longer exists; its pins were orphaned", ifname);
	return remove_dir_pins(dir, "orphaned ");
}

static int unload_locked(const char *ifname, const char *dir, bool had_pins, bool keep_maps)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct pacer_handle h;
	unsigned int ifindex = if_nametoindex(ifname);
	int err;

	if (!ifindex)
		return unload_orphan(ifname, dir, had_pins, keep_maps);
	if (!bpf_xdp_query((int)ifindex, 0, &q) && q.attach_mode != XDP_ATTACHED_NONE) {
		if (pacer_handle_open(ifname, &h))
			return 1; /* not ours, or unreadable: leave it alone */
		err = detach(&h);
		pacer_handle_close(&h);
		if (err)
			return 1;
		pr_info("xdp-pacer: detached program id %u from %s", h.prog_id, ifname);
		report_left((int)ifindex, ifname);
	} else if (!had_pins) {
		pr_err("nothing to unload: no XDP program on %s and no pins in %s", ifname, dir);
		return 1;
	} else if (keep_maps) {
		pr_info("xdp-pacer: no XDP program on %s; its pins stay in %s", ifname, dir);
		return 0;
	}
	if (had_pins && keep_maps) {
		char what[320];

		describe_pins(dir, what, sizeof(what));
		pr_info("  kept in %s: %s; 'xdp-pacer load %s' resumes with them, 'xdp-pacer unload %s' removes them",
			dir, what, ifname, ifname);
		return 0;
	}
	return had_pins ? remove_dir_pins(dir, "") : 0;
}

int cmd_unload(int argc, char **argv)
{
	struct unload_opts o = { 0 };
	const char *ifname;
	uint64_t netns, self = 0;
	char dir[256];
	struct stat st;
	int err, lock_fd;

	err = parse_verb_opts(&unload_verb, argc, argv, &o);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	ifname = o.ifname;
	netns = o.netns;
	if (netns_self(&self) || pin_dir(ifname, dir, sizeof(dir))) {
		pr_err("cannot find this process's network namespace (is /proc mounted?)");
		return 1;
	}
	lock_fd = pins_lock();
	if (lock_fd < 0)
		pr_debug("no pin lock (%s): unloading without it", strerror(-lock_fd));
	if (netns && netns != self)
		err = unload_foreign(ifname, netns);
	else
		err = unload_locked(ifname, dir, !stat(dir, &st), o.keep_maps);
	pins_unlock(lock_fd);
	return err;
}
