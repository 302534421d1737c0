// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* PLACEHOLDER until the dispatcher path lands: a program attached on its own only. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "cli_log.h"
#include "xdp_chain.h"
#include "xdp_replace.h"

int xdp_replace_program(int ifindex, uint32_t old_prog_id, struct bpf_object *obj,
			struct bpf_program *prog, int (*after_load)(struct bpf_object *obj, void *arg),
			void *arg, int *new_fd, uint32_t *new_id)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	struct xdp_chain c;
	char eb[128];
	int old_fd, err, flags;

	err = xdp_chain_read(ifindex, &c);
	if (err)
		return err;
	if (c.dispatcher) {
		pr_err("replacing a program in libxdp's dispatcher is not built yet");
		return -EOPNOTSUPP;
	}
	err = bpf_object__load(obj);
	if (err)
		return err;
	if (after_load) {
		err = after_load(obj, arg);
		if (err)
			return err;
	}
	old_fd = bpf_prog_get_fd_by_id(old_prog_id);
	if (old_fd < 0)
		return old_fd;
	opts.old_prog_fd = old_fd;
	flags = XDP_FLAGS_REPLACE | (c.mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	err = bpf_xdp_attach(ifindex, bpf_program__fd(prog), flags, &opts);
	close(old_fd);
	if (err) {
		pr_err("cannot swap the program: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	*new_fd = bpf_program__fd(prog);
	bpf_obj_get_info_by_fd(*new_fd, &info, &len);
	*new_id = info.id;
	return 0;
}
