// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dense table's fill model (dense_model_fill(): strictly paced
 * sources, each keeping its entry) against the simulated datapath
 * (two_choice_sim.c, pacer_dense.h verbatim, swept as the datapath sweeps),
 * at line counts that are not powers of two: what `model --backend dense
 * --arrivals paced` and sizing's documentation rest on.
 */
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "two_choice_sim.h"

/*
 * n sources, each once per period (20 ticks + 3: over the interval, so an
 * exact limiter passes every packet), 10 rounds, the first 2 not counted:
 * every drop is a false drop.  Returns the drops per packet; *evicted: fresh
 * evictions per packet.
 */
static double paced_run(uint32_t lines, uint32_t n, uint32_t on_full, double *evicted)
{
	uint32_t tick_shift = 20, round, src, thresh = 21;
	uint64_t q = 1ULL << tick_shift, period = 23 * q, t = 1ULL << 36;
	uint64_t drops = 0, total = 0, ev0 = 0, swept = 0;
	__u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	struct two_choice_sim s;

	ck_assert_int_eq(dense_sim_init(&s, lines, tick_shift, thresh, PACER_POLICY_PACE, on_full, key), 0);
	for (round = 0; round < 10; round++) {
		if (round == 2)
			ev0 = s.evicted;
		for (src = 0; src < n; src++) {
			uint64_t now = t + (uint64_t)src * period / n;
			int drop;

			if ((now >> tick_shift) - swept >= PACER_DENSE_SWEEP_TICKS / 2) {
				dense_sim_sweep(&s, now);
				swept = now >> tick_shift;
			}
			drop = dense_sim_packet(&s, pacer_mix64(src + 1), now, NULL);
			if (round >= 2) {
				drops += (uint64_t)drop;
				total++;
			}
		}
		t += period;
	}
	*evicted = (double)(s.evicted - ev0) / (double)total;
	dense_sim_free(&s);
	return (double)drops / (double)total;
}

START_TEST(test_fill_model_follows_paced_simulation)
{
	static const struct {
		uint32_t lines;
		double load; /* sources (each once per period) per entry */
	} cases[] = { { 1000, 0.85 }, { 1000, 0.95 }, { 1000, 1.02 }, { 3001, 0.90 } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t n = (uint32_t)(cases[i].load * cases[i].lines * PACER_DENSE_WAYS);
		double overflow, collision, ev, one_sided, opposite, steady_o, steady_c;

		dense_model_fill(cases[i].lines, n, &overflow, &collision);
		dense_model(cases[i].lines, n, &steady_o, &steady_c);
		one_sided = paced_run(cases[i].lines, n, PACER_TBL_FULL_DROP, &ev);
		opposite = paced_run(cases[i].lines, n, PACER_TBL_FULL_EVICT, &ev);
		printf("dense %u lines, load %.2f: one-sided false drops %.5f (fill model %.5f + %.5f); "
		       "opposite evictions %.5f, false drops %.5f\n",
		       cases[i].lines, cases[i].load, one_sided, overflow, collision, ev, opposite);
		/* The fill is the lower regime: never above the steady state's overflow. */
		ck_assert_double_le(overflow, steady_o + 1e-9);
		/* Pace thins the crowded lines (a dropped key does not write): at or below, not far below. */
		ck_assert_double_lt(one_sided, 1.3 * (overflow + collision) + 0.002);
		ck_assert_double_gt(one_sided, 0.25 * (overflow + collision) - 0.001);
		/* Opposite mode drops on fingerprint collisions only. */
		ck_assert_double_lt(opposite, 3 * collision + 0.001);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dense model");
	TCase *tc = tcase_create("fill");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fill_model_follows_paced_simulation);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
