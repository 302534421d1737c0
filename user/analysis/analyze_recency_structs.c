// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Adapter from the Table 1 runner to the structures: HistoricalMembership
 * (hm.h), the exact oracle and the fixed-block baseline (recency_baselines.h).
 * All three count recency as the paper does (0: the last item inserted).
 */
#include <errno.h>
#include <stdlib.h>
#include "analyze_recency_structs.h"
#include "hm.h"
#include "recency_baselines.h"

static const char *const names[T1_NSTRUCT] = {
	[T1_EXACT] = "exact oracle",
	[T1_HM] = "HistoricalMembership",
	[T1_BLOCK] = "fixed-block (OptimalSM)",
};

const char *t1_struct_name(enum t1_kind kind)
{
	return (unsigned)kind < T1_NSTRUCT ? names[kind] : "?";
}

int t1_struct_init(struct t1_struct *s, enum t1_kind kind, uint64_t window, uint32_t inv_eps,
		   uint64_t block_d, unsigned key_bits)
{
	s->kind = kind;
	s->block_d = block_d;
	switch (kind) {
	case T1_EXACT:
		s->impl = exact_recency_new(window);
		break;
	case T1_HM:
		s->impl = hm_new_keys(window, inv_eps, key_bits);
		break;
	case T1_BLOCK:
		s->impl = block_recency_new(window, block_d);
		break;
	default:
		s->impl = NULL;
		return -EINVAL;
	}
	return s->impl ? 0 : (errno ? -errno : -ENOMEM);
}

int t1_struct_query_insert(struct t1_struct *s, uint64_t key, int64_t *recency)
{
	switch (s->kind) {
	case T1_EXACT:
		*recency = exact_recency_query(s->impl, key);
		return exact_recency_insert(s->impl, key);
	case T1_HM:
		return hm_query_insert(s->impl, key, recency);
	case T1_BLOCK:
		*recency = block_recency_query(s->impl, key);
		return block_recency_insert(s->impl, key);
	default:
		*recency = -1;
		return -EINVAL;
	}
}

uint64_t t1_struct_bytes(const struct t1_struct *s)
{
	switch (s->kind) {
	case T1_EXACT:
		return exact_recency_memory_bytes(s->impl);
	case T1_HM:
		return hm_memory_bytes(s->impl);
	case T1_BLOCK:
		return block_recency_memory_bytes(s->impl);
	default:
		return 0;
	}
}

uint64_t t1_struct_slack(const struct t1_struct *s)
{
	switch (s->kind) {
	case T1_HM:
		return hm_slack(s->impl);
	case T1_BLOCK:
		/* Absent from r >= W + D on: it may answer up to W + D - 1. */
		return s->block_d ? s->block_d - 1 : 0;
	default:
		return 0; /* the oracle answers -1 past W */
	}
}

void t1_struct_free(struct t1_struct *s)
{
	switch (s->kind) {
	case T1_EXACT:
		exact_recency_free(s->impl);
		break;
	case T1_HM:
		hm_free(s->impl);
		break;
	case T1_BLOCK:
		block_recency_free(s->impl);
		break;
	default:
		break;
	}
	s->impl = NULL;
}
