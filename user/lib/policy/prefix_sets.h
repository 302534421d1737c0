/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A source prefix of the exempt/deny lists (struct pacer_prefix, as
 * classes_map.h writes them into the maps), and sets of them compared, as
 * `set` reports whether a reload changed a list: pure, no kernel calls
 * (tests/unit_classify.c).
 */
#ifndef PACER_PREFIX_SETS_H
#define PACER_PREFIX_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A source prefix of the exempt or deny list: addr in network byte order (4 or 16 bytes used). */
struct pacer_prefix {
	uint32_t family; /* 4 or 6 */
	uint32_t len;    /* 0..32 or 0..128 */
	uint8_t addr[16];
};

/*
 * Whether a[0..na) and b[0..nb) hold the same prefixes, in any order and
 * counting a prefix given twice once (host bits beyond len ignored).
 * Sorts both in place.
 */
bool pacer_prefix_sets_same(struct pacer_prefix *a, size_t na, struct pacer_prefix *b, size_t nb);

#endif
