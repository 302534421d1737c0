/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sets of exempt/deny prefixes (classes_map.h's struct pacer_prefix)
 * compared, as `set` reports whether a reload changed a list: pure, no
 * kernel calls (tests/unit_classify.c).
 */
#ifndef PACER_PREFIX_SETS_H
#define PACER_PREFIX_SETS_H

#include <stdbool.h>
#include <stddef.h>
#include "classes_map.h"

/*
 * Whether a[0..na) and b[0..nb) hold the same prefixes, in any order and
 * counting a prefix given twice once (host bits beyond len ignored).
 * Sorts both in place.
 */
bool pacer_prefix_sets_same(struct pacer_prefix *a, size_t na, struct pacer_prefix *b, size_t nb);

#endif
