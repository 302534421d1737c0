// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <linux/if_link.h>
#include "xdp_query.h"

int xdp_query_prog(const struct bpf_xdp_query_opts *q, uint32_t *prog_id, const char **mode)
{
	switch (q->attach_mode) {
	case XDP_ATTACHED_DRV:
		*prog_id = q->prog_id;
		*mode = "native";
		return 0;
	case XDP_ATTACHED_SKB:
		*prog_id = q->prog_id;
		*mode = "skb";
		return 0;
	case XDP_ATTACHED_HW:
		*prog_id = q->prog_id;
		*mode = "hw";
		return 0;
	case XDP_ATTACHED_MULTI:
		*prog_id = q->drv_prog_id ? q->drv_prog_id : q->skb_prog_id;
		*mode = q->drv_prog_id ? "native" : "skb";
		return 0;
	default:
		return -ENOENT;
	}
}
