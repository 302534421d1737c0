/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tests' random numbers: a splitmix64 sequence (a Weyl step, then the
 * project's 64-bit mix, pacer_hash.h), so a test's seed fixes every draw
 * on any host and a failure can be replayed.
 */
#ifndef PACER_TEST_LIB_RNG_H
#define PACER_TEST_LIB_RNG_H

#include <stdint.h>
#include "pacer_hash.h"

struct rng {
	uint64_t s;
};

static inline uint64_t rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return pacer_mix64(r->s);
}

#endif /* PACER_TEST_LIB_RNG_H */
