// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "zipf.h"

double zipf_p(const struct zipf *z, uint32_t k)
{
	return pow((double)k + 1, -z->s) / z->norm;
}

int zipf_build(struct zipf *z, uint32_t n, double s)
{
	const uint32_t nslots = 1u << GEN_ZIPF_SLOTS_LOG2;
	double cdf, lo, hi;
	uint32_t j, k;

	z->n = n;
	z->s = s;
	z->norm = 0;
	for (k = 0; k < n; k++)
		z->norm += pow((double)k + 1, -s);
	z->slots = calloc(nslots, sizeof(*z->slots));
	if (!z->slots)
		return -ENOMEM;
	/* Walk sources and slots together; cdf is P(source <= k). */
	k = 0;
	cdf = zipf_p(z, 0);
	for (j = 0; j < nslots; j++) {
		lo = (double)j / nslots;
		hi = (double)(j + 1) / nslots;
		while (k + 1 < n && cdf <= lo)
			cdf += zipf_p(z, ++k);
		z->slots[j].first = k;
		while (k + 1 < n && cdf < hi)
			cdf += zipf_p(z, ++k);
		z->slots[j].span = k - z->slots[j].first + 1;
	}
	return 0;
}

void zipf_free(struct zipf *z)
{
	free(z->slots);
	z->slots = NULL;
}

/* Expected share of m draws that hit a source of probability p at least once. */
static double seen(double m, double p)
{
	return 1.0 - exp(-m * p);
}

double zipf_expected_distinct(const struct zipf *z, double m)
{
	const double slot_p = 1.0 / (1u << GEN_ZIPF_SLOTS_LOG2);
	double total = 0, pending_p = 0;
	int64_t pending = -1;
	uint32_t j;

	for (j = 0; j < 1u << GEN_ZIPF_SLOTS_LOG2; j++) {
		uint32_t a = z->slots[j].first, b = a + z->slots[j].span - 1;
		double c = slot_p / z->slots[j].span;

		if (pending == (int64_t)a) {
			pending_p += c;
		} else {
			if (pending >= 0)
				total += seen(m, pending_p);
			pending = a;
			pending_p = c;
		}
		if (b > a) {
			total += seen(m, pending_p) + (double)(b - a - 1) * seen(m, c);
			pending = b;
			pending_p = c;
		}
	}
	if (pending >= 0)
		total += seen(m, pending_p);
	return total;
}
