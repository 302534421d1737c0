// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer unload: detach the pacer from an interface and remove its pins. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

struct unload_opts {
	const char *ifname;
	uint64_t netns;
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
	{ 0 },
};

static const struct opt_verb unload_verb = {
	.name = "unload",
	.synopsis = "IFNAME [--netns INODE]",
	.intro = "Detach the xdp-pacer program from IFNAME, whether the CLI or 'ip link' attached it,\n"
		 "and remove the pins 'load' made for IFNAME in this network namespace\n"
		 "(" PACER_PIN_ROOT "/netns-INODE/IFNAME). Other XDP programs are left alone.\n"
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

static int remove_dir_pins(const char *dir, const char *why)
{
	uint32_t id = pinned_prog_id(dir);
	int err = pacer_remove_pin_dir(dir);

	if (err) {
		pr_err("cannot remove pins in %s: %s", dir, strerror(-err));
		return 1;
	}
	if (id)
		pr_info("xdp-pacer: removed %spins in %s (program id %u)", why, dir, id);
	else
		pr_info("xdp-pacer: removed %spins in %s", why, dir);
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

/* The interface is gone: what is left of it is its pins. */
static int unload_orphan(const char *ifname, const char *dir, bool had_pins)
{
	if (!had_pins) {
		pr_err("no such interface '%s', and no pins for it in %s", ifname, dir);
		return 1;
	}
	pr_info("xdp-pacer: %s no longer exists; its pins were orphaned", ifname);
	return remove_dir_pins(dir, "orphaned ");
}

static int unload_locked(const char *ifname, const char *dir, bool had_pins)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct pacer_handle h;
	unsigned int ifindex = if_nametoindex(ifname);
	int err;

	if (!ifindex)
		return unload_orphan(ifname, dir, had_pins);
	if (!bpf_xdp_query((int)ifindex, 0, &q) && q.attach_mode != XDP_ATTACHED_NONE) {
		if (pacer_handle_open(ifname, &h))
			return 1; /* not ours, or unreadable: leave it alone */
		err = detach(&h);
		pacer_handle_close(&h);
		if (err)
			return 1;
		pr_info("xdp-pacer: detached program id %u from %s", h.prog_id, ifname);
	} else if (!had_pins) {
		pr_err("nothing to unload: no XDP program on %s and no pins in %s", ifname, dir);
		return 1;
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
		err = unload_locked(ifname, dir, !stat(dir, &st));
	pins_unlock(lock_fd);
	return err;
}
