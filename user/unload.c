// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer unload: detach the pacer from an interface and remove its pins. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "common.h"

static const char usage_text[] =
	"Usage: xdp-pacer unload IFNAME\n\n"
	"Detach the xdp-pacer program from IFNAME, whether the CLI or 'ip link' attached it,\n"
	"and remove the pins under " PACER_PIN_ROOT "/IFNAME. Other XDP programs are left alone.\n";

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

int cmd_unload(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct pacer_handle h;
	const char *ifname;
	char dir[256];
	struct stat st;
	int ifindex, err, had_pins;

	err = parse_ifname_only(argc, argv, usage_text, &ifname);
	if (err)
		return err < 0 ? 0 : err;
	if (ifname_to_index(ifname, &ifindex))
		return 1;
	if (pin_dir(ifname, dir, sizeof(dir)))
		return 1;
	had_pins = !stat(dir, &st);

	if (!bpf_xdp_query(ifindex, 0, &q) && q.attach_mode != XDP_ATTACHED_NONE) {
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
	if (had_pins) {
		err = pacer_remove_pins(ifname);
		if (err) {
			pr_err("cannot remove pins in %s: %s", dir, strerror(-err));
			return 1;
		}
		pr_info("xdp-pacer: removed pins in %s", dir);
	}
	return 0;
}
