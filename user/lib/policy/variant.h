/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which of the datapath's optional stages (enum pacer_feature, pacer_abi.h)
 * a configuration uses: the program variant it needs.  Pure: computed from
 * the live configuration, the budget's limit and the running classes, as a
 * handle or a skeleton's images hold them.
 */
#ifndef PACER_VARIANT_H
#define PACER_VARIANT_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pacer_class.h"

/* The stages cfg, a budget limit of budget_limit and the classes c[0..n) use. */
uint32_t variant_needed(const struct pacer_config *cfg, uint64_t budget_limit,
			const struct pacer_class *c, int n);

/* A stage's name ("classes", "lists", "budget", "sampling", "observe"), or NULL. */
const char *variant_feature_name(uint32_t bit);

/* The stages of bits, comma-separated ("lists, budget"), or "none": buf. */
const char *variant_describe(uint32_t bits, char *buf, size_t len);

#endif
