// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * table_load: the recency table's errors at a given load, measured on the
 * simulated datapath (table_sim, the datapath's own code) against an exact
 * oracle, beside the model.  For sizing at scale (1M sources) where the
 * unit tests use small tables.
 *
 *   table_load paced|random SOURCES ENTRIES [drop|evict-oldest] [PERIOD] [TICK_SHIFT]
 *
 * Interval 1 s, the default tick unless TICK_SHIFT (log2 ns; finer ticks
 * shorten the time past the interval an entry stays fresh).  paced: every source sends once per PERIOD
 * intervals (1.1), evenly spread, 10 rounds, the first 2 not counted.
 * random: Poisson arrivals, each source at one packet per interval on
 * average, 10 packets per source, the first quarter not counted.
 * Prints false drops per packet owed a pass (its own entry would read
 * expired), false passes (two admissions of a source less than the
 * interval apart), fresh evictions per admission, and the models:
 * table_model() at the measured admissions per interval, and
 * table_model_fill() at SOURCES (strictly paced sources keep their entry).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pacer_names.h"
#include "cli_values.h"
#include "ticks.h"
#include "load_stream.h"
#include "two_choice_sim.h"

#define NO_TIME UINT64_MAX
#define INTERVAL_NS LOAD_INTERVAL_NS

int main(int argc, char **argv)
{
	uint64_t n, entries, *last, *hash, t = 1ULL << 40, k, packets, warm;
	uint64_t due = 0, false_drops = 0, false_passes = 0, admits = 0, ev0 = 0;
	uint64_t t_start = 0;
	uint32_t lg = 0, tick_shift = pacer_default_tick_shift(INTERVAL_NS), thresh, on_full = 0;
	double period = 1.1, overflow, collision, f_overflow, f_collision, per_interval;
	__u64 key[2] = { 0x243f6a8885a308d3ULL, 0x13198a2e03707345ULL };
	struct two_choice_sim s;
	struct pacer_rate rate;
	int paced;

	if (argc < 4 || (strcmp(argv[1], "paced") && strcmp(argv[1], "random"))) {
		fprintf(stderr, "usage: table_load paced|random SOURCES ENTRIES [drop|evict-oldest] [PERIOD] [TICK_SHIFT]\n");
		return 2;
	}
	paced = !strcmp(argv[1], "paced");
	n = strtoull(argv[2], NULL, 0);
	entries = strtoull(argv[3], NULL, 0);
	if (argc > 4 && parse_on_full(argv[4], &on_full)) {
		fprintf(stderr, "table_load: on-full '%s' is neither drop nor evict-oldest\n", argv[4]);
		return 2;
	}
	if (argc > 5)
		period = strtod(argv[5], NULL);
	if (argc > 6)
		tick_shift = (uint32_t)strtoul(argv[6], NULL, 0);
	while ((uint64_t)PACER_TBL_WAYS << lg < entries)
		lg++;
	if (!n || n > UINT32_MAX || (uint64_t)PACER_TBL_WAYS << lg != entries || lg < 1 ||
	    lg > PACER_TBL_MAX_LINES_LOG2 || period < 1.0 || tick_shift > 29) {
		fprintf(stderr, "table_load: SOURCES 1..2^32-1, ENTRIES a power of two 32..2^28, PERIOD >= 1, TICK_SHIFT <= 29\n");
		return 2;
	}
	/* The table's own bound (a rate's ages), not the sketch's 63 ticks. */
	if (pacer_rate_ticks(1, INTERVAL_NS, tick_shift, PACER_RATE_TBL_MAX_SAT, &rate)) {
		fprintf(stderr, "table_load: a 1 s interval needs more than %d ticks of 2^%u ns\n",
			PACER_RATE_TBL_MAX_SAT, tick_shift);
		return 2;
	}
	thresh = rate.thresh;
	if (table_sim_init(&s, lg, tick_shift, thresh, PACER_POLICY_PACE, on_full, key))
		return 1;
	last = malloc(n * sizeof(*last));
	hash = malloc(n * sizeof(*hash));
	if (!last || !hash)
		return 1;
	for (k = 0; k < n; k++) {
		last[k] = NO_TIME;
		hash[k] = pacer_hash_v4(key, (uint32_t)k);
	}
	packets = 10 * n;
	warm = paced ? 2 * n : packets / 4;
	for (k = 0; k < packets; k++) {
		uint64_t src, when;
		int drop, owed, counting = k >= warm;

		load_packet(paced, k, n, paced ? period : 1.0, &t, &src, &when); /* random: one a second a source */
		if (k == warm) {
			ev0 = s.evicted;
			t_start = when;
		}
		/* Owed a pass: its own entry, had it kept it, would read expired in whole ticks. */
		owed = last[src] == NO_TIME ||
		       !pacer_tbl_fresh(pacer_tbl_entry(1, last[src] >> tick_shift), when >> tick_shift,
					thresh);
		drop = table_sim_packet(&s, hash[src], when, NULL);
		if (counting) {
			due += (uint64_t)owed;
			false_drops += (uint64_t)(owed && drop);
			admits += (uint64_t)!drop;
			false_passes += (uint64_t)(!drop && last[src] != NO_TIME &&
						   when - last[src] < INTERVAL_NS);
		}
		if (!drop)
			last[src] = when;
		if (paced && k + 1 == packets)
			t = when;
	}
	per_interval = (double)admits / ((double)(t - t_start) / (double)INTERVAL_NS);
	table_model(lg, per_interval, &overflow, &collision);
	table_model_fill(lg, (double)n, &f_overflow, &f_collision);
	printf("%s, %llu sources, %llu entries (%.2f B/source), on full %s: %.0f admissions per "
	       "interval (%.3f per entry)\n",
	       argv[1], (unsigned long long)n, (unsigned long long)entries,
	       (double)table_bytes(lg) / (double)n, on_full_name(on_full), per_interval,
	       per_interval / (double)entries);
	printf("  false drops %.4f %% of %llu owed passes; false passes %llu; fresh evictions %.4f %% "
	       "of admissions\n",
	       100.0 * (double)false_drops / (double)(due ? due : 1), (unsigned long long)due,
	       (unsigned long long)false_passes,
	       100.0 * (double)(s.evicted - ev0) / (double)(admits ? admits : 1));
	printf("  model (steady state at the admissions per interval): overflow %.4f %%, collisions "
	       "%.4f %%; fill model at SOURCES: overflow %.4f %%, collisions %.4f %%\n",
	       100 * overflow, 100 * collision, 100 * f_overflow, 100 * f_collision);
	table_sim_free(&s);
	free(last);
	free(hash);
	return 0;
}
