// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hm_bench: time per item (query + insert) of HistoricalMembership and the
 * exact oracle on a synthetic key stream, median of runs.
 *
 *   hm_bench spoofed|zipf ITEMS WINDOW INV_EPS [SOURCES ZIPF_S] [RUNS]
 *
 * Keys are 32-bit (HM stores 32-bit signatures, hm_new_keys).  Prints ns per
 * item for each run's fresh structure, the medians, and HM's memory.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hm.h"
#include "recency_baselines.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static double uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void zipf_keys(uint64_t *keys, uint64_t n, uint32_t sources, double s)
{
	double *cdf = malloc(sources * sizeof(*cdf)), sum = 0;
	uint64_t i;

	for (i = 0; i < sources; i++)
		cdf[i] = sum += pow((double)i + 1.0, -s);
	for (i = 0; i < n; i++) {
		double u = uniform01() * sum;
		uint32_t lo = 0, hi = sources - 1;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		keys[i] = 0x0a000000u + lo;
	}
	free(cdf);
}

static double time_hm(const uint64_t *keys, uint64_t n, uint64_t w, uint32_t k, size_t *bytes)
{
	struct hm *h = hm_new_keys(w, k, 32);
	volatile int64_t sink = 0;
	double t0 = now_s(), dt;
	uint64_t i;

	for (i = 0; i < n; i++) {
		int64_t r;

		hm_query_insert(h, keys[i], &r);
		sink += r;
	}
	dt = now_s() - t0;
	*bytes = hm_memory_bytes(h);
	hm_free(h);
	return dt * 1e9 / (double)n;
}

static double time_exact(const uint64_t *keys, uint64_t n, uint64_t w)
{
	struct exact_recency *e = exact_recency_new(w);
	volatile int64_t sink = 0;
	double t0 = now_s(), dt;
	uint64_t i;

	for (i = 0; i < n; i++) {
		sink += exact_recency_query(e, keys[i]);
		exact_recency_insert(e, keys[i]);
	}
	dt = now_s() - t0;
	exact_recency_free(e);
	return dt * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	uint64_t n, w, i, *keys;
	unsigned runs = 5, r, argi = 5;
	double hm_ns[64], ex_ns[64];
	uint32_t k;
	size_t bytes = 0;

	if (argc < 5 || (strcmp(argv[1], "spoofed") && strcmp(argv[1], "zipf"))) {
		fprintf(stderr, "usage: %s spoofed|zipf ITEMS WINDOW INV_EPS [SOURCES ZIPF_S] [RUNS]\n", argv[0]);
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	w = strtoull(argv[3], NULL, 10);
	k = (uint32_t)strtoul(argv[4], NULL, 10);
	keys = malloc(n * sizeof(*keys));
	if (!n || !w || !k || !keys)
		return 2;
	if (!strcmp(argv[1], "zipf")) {
		if (argc < 7)
			return 2;
		zipf_keys(keys, n, (uint32_t)strtoul(argv[5], NULL, 10), strtod(argv[6], NULL));
		argi = 7;
	} else {
		for (i = 0; i < n; i++)
			keys[i] = 0x0a000000u + i;
	}
	if (argc > (int)argi)
		runs = (unsigned)strtoul(argv[argi], NULL, 10);
	if (!runs || runs > 64)
		return 2;
	for (r = 0; r < runs; r++) {
		hm_ns[r] = time_hm(keys, n, w, k, &bytes);
		ex_ns[r] = time_exact(keys, n, w);
		printf("run %u: hm %.1f ns/item, exact %.1f ns/item\n", r, hm_ns[r], ex_ns[r]);
	}
	qsort(hm_ns, runs, sizeof(double), cmp_double);
	qsort(ex_ns, runs, sizeof(double), cmp_double);
	printf("median: hm %.1f ns/item, exact %.1f ns/item, ratio %.1f; hm memory %zu bytes\n",
	       hm_ns[runs / 2], ex_ns[runs / 2], hm_ns[runs / 2] / ex_ns[runs / 2], bytes);
	free(keys);
	return 0;
}
