/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The packet stream the load tools replay (backend_load, table_load): n
 * sources, paced (each once per `period` intervals, evenly spread) or
 * random (Poisson arrivals, each source at one packet per `period`
 * intervals on average), from a fixed seed so runs repeat exactly.
 */
#ifndef PACER_LOAD_STREAM_H
#define PACER_LOAD_STREAM_H

#include <math.h>
#include <stdint.h>
#include "pacer_hash.h"

#define LOAD_INTERVAL_NS 1000000000ULL

static uint64_t load_rng = 0x9e3779b97f4a7c15ULL;

static inline uint64_t load_rnd(void)
{
	load_rng += 0x9e3779b97f4a7c15ULL;
	return pacer_mix64(load_rng);
}

/*
 * Packet k of the stream: its source into *src and its time into *when;
 * *t is the stream's clock (its start for paced, the last arrival for
 * random).
 */
static inline void load_packet(int paced, uint64_t k, uint64_t n, double period, uint64_t *t,
			       uint64_t *src, uint64_t *when)
{
	if (paced) {
		*src = k % n;
		*when = *t + (uint64_t)((double)(k / n) * period * LOAD_INTERVAL_NS +
					(double)*src * period * LOAD_INTERVAL_NS / (double)n);
	} else {
		double u = ((double)(load_rnd() >> 11) + 0.5) / 9007199254740992.0;

		*src = load_rnd() % n;
		*t += (uint64_t)(-log(u) * period * (double)LOAD_INTERVAL_NS / (double)n);
		*when = *t;
	}
}

#endif
