// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * synth_record: write a recording of a synthetic source stream through the
 * recording writer, so `xdp-pacer analyze` can be measured on streams of a
 * known shape without a datapath.  Every record is a source-sampled pass.
 *
 *   synth_record OUT spoofed|zipf ITEMS RATE [SOURCES ZIPF_S]
 *
 * spoofed: every item a new IPv4 source; zipf: Zipf(ZIPF_S) over SOURCES
 * sources.  Items are RATE per second, evenly spaced; the header's interval
 * is 300 ms, so the default window is about 0.3 * RATE items.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pacer_file.h"

#define INTERVAL_NS 300000000ULL
#define START_NS 1000000000ULL

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static double uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

/* Cumulative Zipf(s) over n ranks, drawn by binary search. */
static double *zipf_cdf(uint32_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	uint32_t i;

	if (!cdf)
		return NULL;
	for (i = 0; i < n; i++)
		cdf[i] = sum += pow(i + 1.0, -s);
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static uint32_t zipf_draw(const double *cdf, uint32_t n)
{
	double u = uniform01();
	uint32_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void header(struct pacer_file_header *h)
{
	pacer_file_header_init(h);
	h->interval_ns = INTERVAL_NS;
	h->tick_shift = 25;
	/* The datapath's threshold: ceil(interval / tick) + 1. */
	h->thresh_ticks = (uint32_t)((INTERVAL_NS + (1ULL << 25) - 1) >> 25) + 1;
	h->rows = 4;
	h->lines_log2 = 14;
	h->kind = PACER_LAYOUT_ROWS;
	h->policy = PACER_POLICY_PACE;
	h->placement = PACER_PLACEMENT_SHARED;
	h->clock = PACER_CLOCK_CACHED;
	h->prefix4 = 32;
	h->prefix6 = 64;
	h->ncpus = 1;
	h->sample_src_thresh = 1ULL << 32;
	h->start_mono_ns = START_NS;
	snprintf(h->ifname, sizeof(h->ifname), "synth");
	snprintf(h->hostname, sizeof(h->hostname), "synth_record");
}

int main(int argc, char **argv)
{
	uint64_t items, rate, i, gap;
	uint32_t sources = 0;
	struct pacer_file_writer w;
	struct pacer_file_header h;
	struct pacer_file_error e;
	double *cdf = NULL;
	int zipf;

	if (argc < 5 || (strcmp(argv[2], "spoofed") && strcmp(argv[2], "zipf"))) {
		fprintf(stderr, "usage: %s OUT spoofed|zipf ITEMS RATE [SOURCES ZIPF_S]\n", argv[0]);
		return 2;
	}
	zipf = !strcmp(argv[2], "zipf");
	items = strtoull(argv[3], NULL, 10);
	rate = strtoull(argv[4], NULL, 10);
	if (zipf) {
		if (argc < 7 || !(sources = (uint32_t)strtoul(argv[5], NULL, 10))) {
			fprintf(stderr, "zipf needs SOURCES and ZIPF_S\n");
			return 2;
		}
		cdf = zipf_cdf(sources, strtod(argv[6], NULL));
		if (!cdf)
			return 1;
	}
	if (!items || !rate || items > (1ULL << 32)) {
		fprintf(stderr, "ITEMS (1..2^32) and RATE must be positive\n");
		return 2;
	}
	gap = 1000000000ULL / rate;
	header(&h);
	if (pacer_file_writer_open(&w, argv[1], PACER_FORMAT_BINARY, &h, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	for (i = 0; i < items; i++) {
		uint32_t src = zipf ? zipf_draw(cdf, sources) : (uint32_t)i;
		struct pacer_record r;

		memset(&r, 0, sizeof(r));
		r.ts_ns = START_NS + i * gap;
		r.family = 4;
		r.prefix = 32;
		r.addr[0] = 10;
		r.addr[1] = (uint8_t)(src >> 16);
		r.addr[2] = (uint8_t)(src >> 8);
		r.addr[3] = (uint8_t)src;
		r.verdict = PACER_REC_PASS;
		r.flags = PACER_REC_SAMPLED_SOURCE;
		r.est_age_ticks = PACER_AGE_NEVER;
		r.thresh_ticks = h.thresh_ticks;
		if (pacer_file_writer_append(&w, &r)) {
			pacer_file_writer_discard(&w);
			return 1;
		}
	}
	free(cdf);
	if (pacer_file_writer_finish(&w, START_NS + items * gap, 0, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 1;
	}
	return 0;
}
