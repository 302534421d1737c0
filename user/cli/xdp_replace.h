/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Swapping the XDP program on an interface for a new one atomically, whether
 * it is attached on its own or runs in libxdp's dispatcher: the mechanism
 * behind a restart or upgrade that loses nothing (docs/design.md,
 * Replacing the program in place).
 */
#ifndef XDP_REPLACE_H
#define XDP_REPLACE_H

#include <stdint.h>

struct bpf_object;
struct bpf_program;

/*
 * Put prog (of obj: opened and configured, not loaded) in place of the
 * program old_prog_id on ifindex, atomically, loading obj here:
 *
 * - old_prog_id attached on its own (netlink, native or skb mode, or a
 *   bpf_link): obj is loaded as XDP and swapped in with XDP_FLAGS_REPLACE
 *   (a link's update, for a link) against old_prog_id, in the same mode.
 * - old_prog_id in libxdp's dispatcher: a new dispatcher with prog in the
 *   old one's slot, beside the same neighbours in the same order with the
 *   same priorities and chain-call actions, is built, linked and pinned as
 *   libxdp would (under libxdp's lock), swapped for the old dispatcher with
 *   XDP_FLAGS_REPLACE, then the old dispatcher's pins are removed.  The
 *   old and the new program never run in one chain.
 *
 * after_load(obj, arg), when given, runs once obj is loaded and before
 * the swap (the caller fills maps the new program must have from its first
 * packet); its error is a failure before the swap.
 *
 * A failure before the swap (the verifier refuses prog, no dispatcher
 * object, a dispatcher version not understood, the interface changed
 * meanwhile) leaves the interface, its programs and libxdp's pins as they
 * were; obj may then be loaded (close it).  0 with *new_fd (prog's fd,
 * owned by obj) and *new_id; or -errno, having said why (pr_err).
 */
int xdp_replace_program(int ifindex, uint32_t old_prog_id, struct bpf_object *obj,
			struct bpf_program *prog, int (*after_load)(struct bpf_object *obj, void *arg),
			void *arg, int *new_fd, uint32_t *new_id);

/*
 * Tests only (tests/tools/xdp_replace_check): when set, called with the
 * interface just before the swap, once everything else is in place, to
 * change what is attached as another loader racing the replacement would.
 */
extern void (*xdp_replace_before_swap)(int ifindex);

#endif
