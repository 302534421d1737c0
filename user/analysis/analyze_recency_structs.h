/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One interface over the three recency structures of Table 1, so the runner
 * treats them alike.  Keys are 64-bit; query returns the paper's recency
 * r(x, t) in items (0: x was the last item inserted), or -1 for absent.
 */
#ifndef PACER_ANALYZE_RECENCY_STRUCTS_H
#define PACER_ANALYZE_RECENCY_STRUCTS_H

#include <stdint.h>

/* The structures measured: the exact oracle, HistoricalMembership, the fixed-block baseline. */
enum t1_kind { T1_EXACT, T1_HM, T1_BLOCK, T1_NSTRUCT };

struct t1_struct {
	enum t1_kind kind;
	void *impl;
	uint64_t block_d;
};

const char *t1_struct_name(enum t1_kind kind);
/*
 * Keys are below 2^key_bits (64: any); HistoricalMembership stores
 * signatures of that width.  0, -ENOMEM or -EINVAL.
 */
int t1_struct_init(struct t1_struct *s, enum t1_kind kind, uint64_t window, uint32_t inv_eps,
		   uint64_t block_d, unsigned key_bits);
/*
 * The recency of key before this item (-1: absent) into *recency,
 * then record the item.  0, or -ENOMEM when a table could not grow (an
 * item may have been lost).
 */
int t1_struct_query_insert(struct t1_struct *s, uint64_t key, int64_t *recency);
/* Memory the structure accounts for, in bytes. */
uint64_t t1_struct_bytes(const struct t1_struct *s);
/* Items past W it may still report (0 for the exact oracle). */
uint64_t t1_struct_slack(const struct t1_struct *s);
void t1_struct_free(struct t1_struct *s);

#endif
