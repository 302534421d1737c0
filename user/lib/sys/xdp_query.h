/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading bpf_xdp_query()'s answer: which program is attached, and in which mode. */
#ifndef PACER_XDP_QUERY_H
#define PACER_XDP_QUERY_H

#include <stdint.h>
#include <bpf/libbpf.h>

/*
 * The id of the program attached as q describes it and its mode ("native",
 * "skb", "hw"); with programs in several modes (XDP_ATTACHED_MULTI), the
 * native one.  0, or -ENOENT when nothing is attached.
 */
int xdp_query_prog(const struct bpf_xdp_query_opts *q, uint32_t *prog_id, const char **mode);

#endif
