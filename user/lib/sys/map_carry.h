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

/*
 * Copy from_fd's entries into to_fd (the same type and key size): 0, or
 * -EOPNOTSUPP (another type, key size or a type it does not carry) or the
 * errno of a failed update.
 */
int map_carry(int from_fd, int to_fd);

#endif
