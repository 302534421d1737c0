/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Zipf(s) over n sources as the generator draws it: a slot table (gen_abi.h). */
#ifndef PACER_ZIPF_H
#define PACER_ZIPF_H

#include <stdint.h>
#include "gen_abi.h"

struct zipf {
	uint32_t n;
	double s, norm; /* P(source k) = (k + 1)^-s / norm */
	struct gen_zipf_slot *slots; /* 2^GEN_ZIPF_SLOTS_LOG2 of them */
};

/* Build the table for Zipf(s) over n sources: 0 or -ENOMEM.  Free with zipf_free(). */
int zipf_build(struct zipf *z, uint32_t n, double s);
void zipf_free(struct zipf *z);

/* The probability of source k. */
double zipf_p(const struct zipf *z, uint32_t k);

/*
 * Expected distinct sources in m draws from the table as the program uses
 * it: slot j gives each of its span sources 1/(2^16 span); a source shared
 * by neighbouring slots sums their shares.
 */
double zipf_expected_distinct(const struct zipf *z, double m);

#endif
