/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Putting a new program in the place of one attached to an interface, at once. */
#ifndef PACER_XDP_REPLACE_H
#define PACER_XDP_REPLACE_H

#include <stdint.h>

struct bpf_object;
struct bpf_program;

/*
 * Load prog (of obj: opened, configured, not loaded) and put it in the place
 * of the program old_prog_id on ifindex, atomically; after_load(obj, arg)
 * runs between the load and the swap (NULL: nothing).  Any failure before
 * the swap leaves the interface as it was.  0 with *new_fd and *new_id, or
 * -errno after saying why.
 */
int xdp_replace_program(int ifindex, uint32_t old_prog_id, struct bpf_object *obj,
			struct bpf_program *prog, int (*after_load)(struct bpf_object *obj, void *arg),
			void *arg, int *new_fd, uint32_t *new_id);

#endif
