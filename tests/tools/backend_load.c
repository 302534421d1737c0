// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * backend_load: any backend's errors at a given number of sources and a
 * given memory, measured on the simulated datapath (sketch_sim, table_sim,
 * dense_sim: the datapath's own code) against an exact per-source oracle.
 * For the dense table's ten-million-source sizing, with the table and the
 * sketch at comparable bytes beside it.
 *
 *   backend_load dense|table|sketch paced|random SOURCES BYTES
 *                [drop|evict-oldest] [pace|quiet] [PERIOD] [ROUNDS]
 *
 * BYTES per copy: the dense table takes BYTES / 64 lines (any count); the
 * table and the sketch the largest power of two of 64-byte lines that fits
 * (the sketch: 4 rows).  Interval 1 s; the tick is the one `load` picks
 * for the backend (pacer_default_rate_tick_shift).
 *
 * paced: every source sends once per PERIOD intervals (default 1.1), the
 * sources evenly spread over the period, ROUNDS rounds (default 10), the
 * first 2 not counted: with PERIOD under 2 all SOURCES hold an entry at
 * once.  random: Poisson arrivals, each source at one packet per PERIOD
 * intervals on average, ROUNDS packets per source, the first quarter not
 * counted.
 *
 * A packet is owed a pass when the exact limiter comparing whole ticks
 * passes it: under pace, its source's last admission is at least the
 * threshold ago; under quiet, its last packet.  A drop of an owed packet
 * is a false drop; a pass of a packet whose source was admitted (pace) or
 * seen (quiet) less than the interval before is a false pass.  evict-oldest
 * replaces fresh entries when both lines are full: each eviction is at most
 * one false pass (the evicted source's next packet within its interval),
 * counted separately.  The dense table is swept as the datapath sweeps it
 * (every entry aged PACER_DENSE_MAX_SAT cleared at least every
 * PACER_DENSE_SWEEP_TICKS).
 *
 * Prints one line of JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pacer_names.h"
#include "cli_values.h"
#include "ticks.h"
#include "load_stream.h"
#include "sketch_sim.h"
#include "two_choice_sim.h"

#define NO_TIME UINT64_MAX
#define INTERVAL_NS LOAD_INTERVAL_NS
#define SKETCH_ROWS 4

struct sim {
	uint32_t backend;
	struct sketch_sim sk;
	struct two_choice_sim tb;
	struct two_choice_sim dn;
	uint64_t bytes;     /* per copy, as loaded */
	uint64_t entries;   /* sources it can hold at once (the sketch: cells) */
	const char *shape;
	char shape_buf[96];
};

static int usage(void)
{
	fprintf(stderr, "usage: backend_load dense|table|sketch paced|random SOURCES BYTES "
			"[drop|evict-oldest] [pace|quiet] [PERIOD] [ROUNDS]\n");
	return 2;
}

static uint32_t lines_log2_below(uint64_t lines)
{
	uint32_t lg = 0;

	while (2ULL << lg <= lines)
		lg++;
	return lg;
}

static int sim_init(struct sim *s, uint64_t bytes, uint32_t tick_shift, uint32_t thresh,
		    uint32_t policy, uint32_t on_full, const __u64 key[2])
{
	uint64_t lines = bytes / PACER_LINE_BYTES;
	uint32_t lg;

	switch (s->backend) {
	case PACER_BACKEND_DENSE:
		if (lines < 2 || lines > PACER_DENSE_MAX_LINES ||
		    dense_sim_init(&s->dn, (uint32_t)lines, tick_shift, thresh, policy, on_full, key))
			return -1;
		s->bytes = dense_bytes((uint32_t)lines);
		s->entries = lines * PACER_DENSE_WAYS;
		snprintf(s->shape_buf, sizeof(s->shape_buf), "%llu lines of %d entries",
			 (unsigned long long)lines, PACER_DENSE_WAYS);
		break;
	case PACER_BACKEND_TABLE:
		lg = lines_log2_below(lines);
		if (lg < 1 || lg > PACER_TBL_MAX_LINES_LOG2 ||
		    table_sim_init(&s->tb, lg, tick_shift, thresh, policy, on_full, key))
			return -1;
		s->bytes = table_bytes(lg);
		s->entries = (uint64_t)PACER_TBL_WAYS << lg;
		snprintf(s->shape_buf, sizeof(s->shape_buf), "2^%u lines of %d entries", lg,
			 PACER_TBL_WAYS);
		break;
	default:
		lg = lines_log2_below(lines / SKETCH_ROWS);
		if (sketch_sim_init(&s->sk, SKETCH_ROWS, PACER_LAYOUT_ROWS, lg, tick_shift, thresh,
				    policy, key))
			return -1;
		s->bytes = (uint64_t)SKETCH_ROWS * PACER_LINE_BYTES << lg;
		s->entries = (uint64_t)PACER_LINE_CELLS << lg;
		snprintf(s->shape_buf, sizeof(s->shape_buf), "%d rows x %llu cells", SKETCH_ROWS,
			 (unsigned long long)s->entries);
		break;
	}
	s->shape = s->shape_buf;
	return 0;
}

static int sim_packet(struct sim *s, uint64_t h, uint64_t now_ns)
{
	switch (s->backend) {
	case PACER_BACKEND_DENSE:
		return dense_sim_packet(&s->dn, h, now_ns, NULL);
	case PACER_BACKEND_TABLE:
		return table_sim_packet(&s->tb, h, now_ns, NULL);
	default:
		return sketch_sim_packet(&s->sk, h, now_ns, NULL);
	}
}

static uint64_t sim_evicted(const struct sim *s)
{
	return s->backend == PACER_BACKEND_DENSE ? s->dn.evicted
	       : s->backend == PACER_BACKEND_TABLE ? s->tb.evicted : 0;
}

static uint64_t sim_full(const struct sim *s)
{
	return s->backend == PACER_BACKEND_DENSE ? s->dn.full
	       : s->backend == PACER_BACKEND_TABLE ? s->tb.full : 0;
}

static void sim_free(struct sim *s)
{
	if (s->backend == PACER_BACKEND_DENSE)
		dense_sim_free(&s->dn);
	else if (s->backend == PACER_BACKEND_TABLE)
		table_sim_free(&s->tb);
	else
		sketch_sim_free(&s->sk);
}

int main(int argc, char **argv)
{
	uint64_t n, bytes, *last, *hash, t = 1ULL << 40, k, packets, warm, rounds = 10;
	uint64_t due = 0, false_drops = 0, false_passes = 0, admits = 0, ev0 = 0, full0 = 0;
	uint64_t t_start = 0, swept_tick = 0, counted = 0;
	uint32_t tick_shift, thresh, on_full = PACER_TBL_FULL_DROP, policy = PACER_POLICY_PACE;
	double period = 1.1;
	__u64 key[2] = { 0x243f6a8885a308d3ULL, 0x13198a2e03707345ULL };
	struct sim s = { 0 };
	struct pacer_rate rate;
	int paced;

	if (argc < 5 || parse_backend(argv[1], &s.backend) ||
	    (strcmp(argv[2], "paced") && strcmp(argv[2], "random")))
		return usage();
	paced = !strcmp(argv[2], "paced");
	n = strtoull(argv[3], NULL, 0);
	bytes = strtoull(argv[4], NULL, 0);
	if (argc > 5 && parse_on_full(argv[5], &on_full))
		return usage();
	if (argc > 6 && parse_policy(argv[6], &policy))
		return usage();
	if (argc > 7)
		period = strtod(argv[7], NULL);
	if (argc > 8)
		rounds = strtoull(argv[8], NULL, 0);
	if (!n || n > UINT32_MAX || !(period > 0.0) || rounds < 4 || rounds > 1000 ||
	    (s.backend == PACER_BACKEND_SKETCH && on_full != PACER_TBL_FULL_DROP)) {
		fprintf(stderr, "backend_load: SOURCES 1..2^32-1, PERIOD > 0, ROUNDS 4..1000; the sketch has no --on-full\n");
		return 2;
	}
	tick_shift = pacer_default_rate_tick_shift(1, INTERVAL_NS, s.backend);
	if (pacer_rate_ticks(1, INTERVAL_NS, tick_shift, pacer_rate_max_sat(s.backend), &rate)) {
		fprintf(stderr, "backend_load: a 1 s interval does not fit the %s's ticks of 2^%u ns\n",
			backend_name(s.backend), tick_shift);
		return 2;
	}
	thresh = rate.thresh;
	if (sim_init(&s, bytes, tick_shift, thresh, policy, on_full, key)) {
		fprintf(stderr, "backend_load: no %s geometry of %llu bytes\n", backend_name(s.backend),
			(unsigned long long)bytes);
		return 2;
	}
	last = malloc(n * sizeof(*last));
	hash = malloc(n * sizeof(*hash));
	if (!last || !hash)
		return 1;
	for (k = 0; k < n; k++) {
		last[k] = NO_TIME;
		hash[k] = pacer_hash_v4(key, (uint32_t)k);
	}
	packets = rounds * n;
	warm = paced ? 2 * n : packets / 4;
	for (k = 0; k < packets; k++) {
		uint64_t src, when, tick;
		int drop, owed, counting = k >= warm;

		load_packet(paced, k, n, period, &t, &src, &when);
		tick = when >> tick_shift;
		/* The datapath's sweep: every line within PACER_DENSE_SWEEP_TICKS. */
		if (s.backend == PACER_BACKEND_DENSE && tick - swept_tick >= PACER_DENSE_SWEEP_TICKS / 2) {
			dense_sim_sweep(&s.dn, when);
			swept_tick = tick;
		}
		if (k == warm) {
			ev0 = sim_evicted(&s);
			full0 = sim_full(&s);
			t_start = when;
		}
		/* Owed a pass: the exact limiter, in whole ticks, passes it. */
		owed = last[src] == NO_TIME || tick - (last[src] >> tick_shift) >= thresh;
		drop = sim_packet(&s, hash[src], when);
		if (counting) {
			counted++;
			due += (uint64_t)owed;
			false_drops += (uint64_t)(owed && drop);
			admits += (uint64_t)!drop;
			false_passes += (uint64_t)(!drop && last[src] != NO_TIME &&
						   when - last[src] < INTERVAL_NS);
		}
		/* The oracle follows the simulated stream: admissions (pace) or every packet (quiet). */
		if (pacer_should_update(policy, drop))
			last[src] = when;
		if (paced && k + 1 == packets)
			t = when;
	}
	printf("{\"backend\":\"%s\",\"shape\":\"%s\",\"arrivals\":\"%s\",\"policy\":\"%s\","
	       "\"on_full\":\"%s\",\"period\":%.3f,\"sources\":%llu,\"bytes\":%llu,"
	       "\"bytes_per_source\":%.3f,\"entries\":%llu,\"tick_ns\":%llu,\"thresh_ticks\":%u,"
	       "\"packets\":%llu,\"owed\":%llu,\"false_drops\":%llu,\"false_drop_rate\":%.6f,"
	       "\"false_passes\":%llu,\"admissions\":%llu,\"fresh_evictions\":%llu,"
	       "\"full\":%llu,\"seconds_simulated\":%.1f}\n",
	       backend_name(s.backend), s.shape, argv[2], policy_name(policy), on_full_name(on_full),
	       period, (unsigned long long)n, (unsigned long long)s.bytes,
	       (double)s.bytes / (double)n, (unsigned long long)s.entries,
	       (unsigned long long)(1ULL << tick_shift), thresh, (unsigned long long)counted,
	       (unsigned long long)due, (unsigned long long)false_drops,
	       (double)false_drops / (double)(due ? due : 1), (unsigned long long)false_passes,
	       (unsigned long long)admits, (unsigned long long)(sim_evicted(&s) - ev0),
	       (unsigned long long)(sim_full(&s) - full0), (double)(t - t_start) / 1e9);
	sim_free(&s);
	free(last);
	free(hash);
	return 0;
}
