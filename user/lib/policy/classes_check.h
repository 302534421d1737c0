/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Checking a class list before it reaches a pacer: pure, no kernel calls.
 * Below the maps' level (classes_map.h), whose install runs it first.
 */
#ifndef PACER_CLASSES_CHECK_H
#define PACER_CLASSES_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_class.h"

/*
 * Whether c[0..n) is a list the datapath can run: n <= PACER_MAX_CLASSES,
 * every match sound (pacer_match_problem), known action, key mode and
 * policy, prefixes in range, a pace class's limit within what the loaded
 * backend's cells hold, names valid and distinct, stat slots below
 * PACER_MAX_CLASSES and distinct.  0, or -EINVAL with the first problem,
 * naming the class, in err.
 */
int pacer_classes_check(const struct pacer_class *c, int n, uint32_t backend, char *err,
			size_t len);

#endif
