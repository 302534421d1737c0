/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A pinned map's contents carried into a map of this release's definition
 * (a release that appended fields to its values or grew it): what a load
 * keeps of a map whose definition changed (user/cli/pin_keep.c).  Arrays
 * and per-CPU arrays index by index, hash maps and LPM tries key by key;
 * each value (each CPU's) keeps its first bytes, the rest zero.
 */
#ifndef PACER_MAP_CARRY_H
#define PACER_MAP_CARRY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Copy from_fd's entries into to_fd (the same type and key size): 0, or
 * -EOPNOTSUPP (another type, key size or a type it does not carry) or the
 * errno of a failed update.
 */
int map_carry(int from_fd, int to_fd);

/*
 * Key 0 of the array map fd, whatever its value size (a release's value
 * may be longer or shorter than this one's): its first bytes, up to len,
 * into out, the rest of out left as it is; its value size into
 * *value_size.  0 or -errno.
 */
int map_read_first(int fd, void *out, size_t len, uint32_t *value_size);

#endif
