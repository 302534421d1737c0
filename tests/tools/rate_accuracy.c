// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rate_accuracy: --rate N/T (and --interval) on load's default geometry and
 * default tick, through the datapath's code (sketch_sim, table_sim), against
 * the exact per-source GCRA in nanoseconds on the same stream.
 *
 *   rate_accuracy [SOURCES PPS SECONDS ZIPF_S]   (100000 200000 10 1.0)
 *
 * Poisson arrivals, sources drawn from Zipf(ZIPF_S).  One JSON object per
 * line and scenario: packets; admissions of the exact GCRA (greedy, on
 * every packet), of the same GCRA in whole ticks (what the cells compute
 * without collisions) and of the structure; admissions of the structure
 * that break the exact GCRA (must be 0).
 *
 * Then the rates of a flood: one source sending 2000 packets/s for 3 s (as
 * `gen --sources 1 --pps 2000`) on each backend, at load's default tick, or
 * load's refusal: {"flood": ..., "admitted", "exact", ...} per line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "layout.h"
#include "ticks.h"
#include "pacer_rate.h"
#include "sketch_sim.h"
#include "two_choice_sim.h"

struct scenario {
	const char *name;
	int table;
	uint32_t n;
	uint64_t period_ns;
};

static const struct scenario scenarios[] = {
	{ "sketch --interval 100ms", 0, 1, 100000000ULL },
	{ "table --interval 100ms", 1, 1, 100000000ULL },
	{ "table --rate 10/1s", 1, 10, 1000000000ULL },
	{ "table --rate 50/30s", 1, 50, 30000000000ULL },
};

static const struct scenario floods[] = {
	{ "sketch --rate 50/1s", 0, 50, 1000000000ULL },
	{ "sketch --rate 10/1s", 0, 10, 1000000000ULL },
	{ "sketch --rate 5/100ms", 0, 5, 100000000ULL },
	{ "table --rate 50/1s", 1, 50, 1000000000ULL },
	{ "table --rate 1000/1s", 1, 1000, 1000000000ULL },
	{ "table --rate 10/1s", 1, 10, 1000000000ULL },
	{ "table --rate 5/100ms", 1, 5, 100000000ULL },
	{ "table --rate 80/1s", 1, 80, 1000000000ULL },
};

/* One source at 2000 packets/s for 3 s through the backend at load's tick, or load's refusal. */
static int flood(const struct scenario *c, const __u64 key[2])
{
	uint32_t backend = c->table ? PACER_BACKEND_TABLE : PACER_BACKEND_SKETCH;
	uint32_t shift = pacer_default_rate_tick_shift(c->n, c->period_ns, backend);
	unsigned __int128 n = c->n, per = c->period_ns, tat = 0;
	uint64_t t, exact = 0, got = 0, h = pacer_hash_v4(key, 0x0a000001u);
	struct sketch_sim sk;
	struct two_choice_sim tb;
	struct pacer_rate r;
	char err[512], *q;

	if (rate_fit(c->n, c->period_ns, shift, backend, &r, err, sizeof(err))) {
		for (q = err; *q; q++)
			if (*q == '"')
				*q = '\'';
		printf("{\"flood\":\"%s\",\"refused\":\"%s\"}\n", c->name, err);
		return 0;
	}
	if (c->table ? table_sim_init(&tb, 16, shift, r.thresh, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key)
		     : sketch_sim_init(&sk, 4, PACER_LAYOUT_ROWS, 14, shift, r.thresh, PACER_POLICY_PACE, key))
		return 1;
	tb.burst = sk.burst = r.burst;
	for (t = 1000000000000ULL; t < 1003000000000ULL; t += 500000) {
		if (!exact || n * t + (n - 1) * per >= tat) {
			tat = (exact && tat > n * t ? tat : n * t) + per;
			exact++;
		}
		got += !(c->table ? table_sim_packet(&tb, h, t, NULL) : sketch_sim_packet(&sk, h, t, NULL));
	}
	printf("{\"flood\":\"%s\",\"tick_ns\":%llu,\"burst_at_once\":%u,\"spacing_ns\":%llu,"
	       "\"admitted\":%llu,\"exact\":%llu}\n",
	       c->name, 1ULL << shift, pacer_rate_credits(r.sat, &r),
	       (unsigned long long)pacer_rate_spacing(&r) << shift, (unsigned long long)got,
	       (unsigned long long)exact);
	if (c->table)
		table_sim_free(&tb);
	else
		sketch_sim_free(&sk);
	return 0;
}

static uint64_t rs = 0x243f6a8885a308d3ULL;

static double u01(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return ((double)((rs * 0x2545f4914f6cdd1dULL) >> 11) + 0.5) / 9007199254740992.0;
}

struct src {
	unsigned __int128 tat, tat_admitted; /* N * TAT: the exact greedy GCRA; the structure's admissions */
	int64_t v;                           /* tick GCRA: virtual last admission */
	uint8_t seen, admitted_any, tick_any;
};

int main(int argc, char **argv)
{
	uint32_t nsrc = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 0) : 100000;
	double pps = argc > 2 ? strtod(argv[2], NULL) : 200000;
	double secs = argc > 3 ? strtod(argv[3], NULL) : 10;
	double zs = argc > 4 ? strtod(argv[4], NULL) : 1.0;
	double *cdf = malloc(nsrc * sizeof(double)), acc = 0;
	struct src *st = calloc(nsrc, sizeof(*st));
	__u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543211ULL };
	size_t sc;
	uint32_t k;

	if (!cdf || !st || !nsrc)
		return 1;
	for (k = 0; k < nsrc; k++)
		cdf[k] = acc += pow(k + 1.0, -zs);
	for (sc = 0; sc < sizeof(scenarios) / sizeof(scenarios[0]); sc++) {
		const struct scenario *c = &scenarios[sc];
		uint32_t shift = pacer_default_rate_tick_shift(c->n, c->period_ns,
							       c->table ? PACER_BACKEND_TABLE : PACER_BACKEND_SKETCH);
		uint64_t packets = 0, exact = 0, ticks = 0, got = 0, nonconform = 0;
		unsigned __int128 n = c->n, per = c->period_ns;
		struct sketch_sim sk;
		struct two_choice_sim tb;
		struct pacer_rate r;
		double t = 1e9;

		if (pacer_rate_ticks(c->n, c->period_ns, shift, pacer_rate_max_sat(c->table), &r))
			return 1;
		if (c->table) {
			if (table_sim_init(&tb, 16, shift, 8, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, key))
				return 1;
			tb.thresh = r.thresh;
			tb.burst = r.burst;
		} else {
			if (sketch_sim_init(&sk, 4, PACER_LAYOUT_ROWS, 14, shift, 8, PACER_POLICY_PACE, key))
				return 1;
			sk.thresh = r.thresh;
			sk.burst = r.burst;
		}
		memset(st, 0, nsrc * sizeof(*st));
		rs = 0x243f6a8885a308d3ULL;
		while (t < 1e9 + secs * 1e9) {
			double x = u01() * acc;
			uint32_t lo = 0, hi = nsrc - 1;
			uint64_t now, h;
			int64_t tick;
			struct src *s;
			int drop;

			t += -log(u01()) / pps * 1e9;
			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;

				if (cdf[mid] < x)
					lo = mid + 1;
				else
					hi = mid;
			}
			s = &st[lo];
			now = (uint64_t)t;
			tick = (int64_t)(now >> shift);
			packets++;
			/* The exact greedy GCRA on every packet. */
			if (!s->seen || n * now + (n - 1) * per >= s->tat) {
				s->tat = (s->seen && s->tat > n * now ? s->tat : n * now) + per;
				s->seen = 1;
				exact++;
			}
			/* The same in whole ticks, unbounded. */
			{
				uint32_t a = !s->tick_any || tick - s->v >= r.sat ? r.sat : (uint32_t)(tick - s->v);

				if (a >= r.thresh) {
					s->v = tick - pacer_rate_next_age(a, &r);
					s->tick_any = 1;
					ticks++;
				}
			}
			h = pacer_hash_v4(key, 0x0a000000u + lo);
			drop = c->table ? table_sim_packet(&tb, h, now, NULL) : sketch_sim_packet(&sk, h, now, NULL);
			if (drop)
				continue;
			got++;
			if (s->admitted_any && n * now + (n - 1) * per < s->tat_admitted)
				nonconform++;
			s->tat_admitted = (s->admitted_any && s->tat_admitted > n * now ? s->tat_admitted : n * now) + per;
			s->admitted_any = 1;
		}
		printf("{\"scenario\":\"%s\",\"tick_ns\":%llu,\"emit_ticks\":%u,\"burst_ticks\":%u,"
		       "\"burst_at_once\":%u,\"sources\":%u,\"pps\":%.0f,\"seconds\":%.1f,\"zipf_s\":%.2f,"
		       "\"packets\":%llu,\"exact\":%llu,\"tick_exact\":%llu,\"admitted\":%llu,"
		       "\"nonconforming\":%llu}\n",
		       c->name, 1ULL << shift, r.emit, r.burst, pacer_rate_credits(r.sat, &r), nsrc, pps,
		       secs, zs, (unsigned long long)packets, (unsigned long long)exact,
		       (unsigned long long)ticks, (unsigned long long)got,
		       (unsigned long long)nonconform);
		if (c->table)
			table_sim_free(&tb);
		else
			sketch_sim_free(&sk);
	}
	free(cdf);
	free(st);
	for (sc = 0; sc < sizeof(floods) / sizeof(floods[0]); sc++)
		if (flood(&floods[sc], key))
			return 1;
	return 0;
}
