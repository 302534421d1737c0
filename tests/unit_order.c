// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The order of the datapath's stages, on the code it runs (pacer_verdict.h
 * and pacer_table.h through the simulators' *_sim_staged()): pacing judges,
 * a later stage (the global budget) admits or refuses what pacing admitted,
 * and only a packet both admitted is written.  For both backends, both
 * placements (shared: the exclusive admission, one CPU here) and both
 * policies, over random streams, with a later stage that refuses about half
 * of what pacing admits:
 *
 *   - a refused packet leaves the per-source state as it was, byte for byte;
 *   - pace and quiet: no source has two admitted packets less than the
 *     interval apart;
 *   - quiet: every packet an exact last-seen table would drop is dropped by
 *     pacing, the table being fed the packets pacing judged for good
 *     (admitted, or dropped by pacing): a refused packet never reached the
 *     per-source state, so it does not restart its source's interval (the
 *     table: unless the source found no free entry within the interval, as
 *     in unit_table);
 *   - with state to spare (no collisions), pacing drops no packet an exact
 *     limiter owes (a gap of the interval and two ticks), so a pacer that
 *     drops everything fails.
 *
 * Small states force collisions, a full table and clock jumps.
 */
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sketch_sim.h"
#include "two_choice_sim.h"
#include "lib_rng.h"

#define NO_TIME UINT64_MAX
#define TICK_SHIFT 16          /* 65.5 us */
#define INTERVAL_NS 1000000ULL /* 1 ms: 17 ticks */
#define PACKETS 150000

/* One backend behind one interface. */
struct staged {
	uint32_t backend;
	struct sketch_sim sk;
	struct two_choice_sim tb;
};

static void staged_init(struct staged *p, uint32_t backend, uint32_t placement, uint32_t policy,
			int roomy, uint64_t seed)
{
	__u64 key[2] = { pacer_mix64(seed) | 1, pacer_mix64(seed + 1) | 1 };
	uint32_t thresh = pacer_thresh_ticks(INTERVAL_NS, TICK_SHIFT);

	memset(p, 0, sizeof(*p));
	p->backend = backend;
	if (backend == PACER_BACKEND_TABLE) {
		ck_assert_int_eq(table_sim_init(&p->tb, roomy ? 12 : 4, TICK_SHIFT, thresh, policy,
						PACER_TBL_FULL_DROP, key), 0);
		p->tb.placement = placement;
	} else {
		ck_assert_int_eq(sketch_sim_init(&p->sk, roomy ? 4 : 2, PACER_LAYOUT_ROWS,
						 roomy ? 12 : 4, TICK_SHIFT, thresh, policy, key), 0);
		p->sk.placement = placement;
	}
}

static void staged_free(struct staged *p)
{
	if (p->backend == PACER_BACKEND_TABLE)
		table_sim_free(&p->tb);
	else
		sketch_sim_free(&p->sk);
}

static void *staged_state(const struct staged *p, size_t *len)
{
	if (p->backend == PACER_BACKEND_TABLE) {
		*len = table_bytes(p->tb.lines_log2);
		return p->tb.tl;
	}
	*len = sketch_sim_bytes(&p->sk);
	return p->sk.lines;
}

static uint64_t staged_hash(const struct staged *p, uint32_t src)
{
	const __u64 *key = p->backend == PACER_BACKEND_TABLE ? p->tb.key : p->sk.key;

	return pacer_hash_v4(key, __builtin_bswap32(0x0a000000u + src));
}

static int staged_packet(struct staged *p, uint64_t h, uint64_t t, int later_admits)
{
	if (p->backend == PACER_BACKEND_TABLE)
		return table_sim_staged(&p->tb, h, t, later_admits, NULL);
	return sketch_sim_staged(&p->sk, h, t, later_admits, NULL);
}

static int within(uint64_t last, uint64_t t, uint64_t span)
{
	return last != NO_TIME && t - last < span;
}

/* _i: backend, placement, policy, roomy (bits 0-3) */
START_TEST(test_later_refusals_keep_the_guarantees)
{
	uint32_t backend = _i & 1 ? PACER_BACKEND_TABLE : PACER_BACKEND_SKETCH;
	uint32_t placement = _i >> 1 & 1 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	uint32_t policy = _i >> 2 & 1 ? PACER_POLICY_QUIET : PACER_POLICY_PACE;
	int roomy = _i >> 3 & 1;
	uint32_t nsrc = roomy ? 50 : 2000, src, i;
	uint64_t *last_admit = malloc(nsrc * sizeof(uint64_t));
	uint64_t *last_judged = malloc(nsrc * sizeof(uint64_t));
	uint64_t *last_full = malloc(nsrc * sizeof(uint64_t));
	uint64_t *hash = malloc(nsrc * sizeof(uint64_t));
	uint64_t t = 1ULL << 40, owe_span = INTERVAL_NS + (2ULL << TICK_SHIFT), full_before;
	unsigned long n[3] = { 0 }, untouched_broken = 0, too_close = 0, quiet_broken = 0;
	unsigned long owed = 0, owed_dropped = 0;
	struct rng r = { 0x5eed0000u + (uint64_t)_i };
	struct staged p;
	size_t len;
	void *state, *before;
	int v;

	ck_assert(last_admit && last_judged && last_full && hash);
	staged_init(&p, backend, placement, policy, roomy, (uint64_t)_i);
	state = staged_state(&p, &len);
	before = malloc(len);
	ck_assert_ptr_nonnull(before);
	for (src = 0; src < nsrc; src++) {
		last_admit[src] = last_judged[src] = last_full[src] = NO_TIME;
		hash[src] = staged_hash(&p, src);
	}
	for (i = 0; i < PACKETS; i++) {
		int later_admits = (int)(rnd(&r) & 1);

		src = (uint32_t)(rnd(&r) % nsrc);
		/* each source about once per interval on average; small states also jump ahead */
		t += rnd(&r) % (2 * INTERVAL_NS / nsrc + 1);
		if (!roomy && i % 20000 == 19999)
			t += rnd(&r) % (1ULL << (TICK_SHIFT + 17));
		/* the whole state compared: every packet of a small one, every 64th of a roomy one */
		int compare = !roomy || i % 64 == 0;

		full_before = p.tb.full;
		if (compare)
			memcpy(before, state, len);
		v = staged_packet(&p, hash[src], t, later_admits);
		n[v]++;
		if (p.tb.full != full_before)
			last_full[src] = t;
		if (compare && v == SIM_REFUSED_LATER && memcmp(before, state, len))
			untouched_broken++;
		if (v == SIM_ADMITTED && within(last_admit[src], t, INTERVAL_NS))
			too_close++;
		if (policy == PACER_POLICY_QUIET && v != SIM_PACED &&
		    within(last_judged[src], t, INTERVAL_NS) &&
		    !(backend == PACER_BACKEND_TABLE && within(last_full[src], t, INTERVAL_NS)))
			quiet_broken++;
		if (!within(policy == PACER_POLICY_QUIET ? last_judged[src] : last_admit[src], t,
			    owe_span)) {
			owed++;
			owed_dropped += v == SIM_PACED;
		}
		if (v == SIM_ADMITTED)
			last_admit[src] = t;
		if (v != SIM_REFUSED_LATER)
			last_judged[src] = t;
	}
	printf("  %s, %s, %s, %s: %lu admitted, %lu dropped by pacing, %lu refused later; "
	       "%lu owed, %lu of them dropped by pacing; table full %llu\n",
	       backend == PACER_BACKEND_TABLE ? "table" : "sketch",
	       placement == PACER_PLACEMENT_SHARED ? "shared" : "per-CPU",
	       policy == PACER_POLICY_QUIET ? "quiet" : "pace", roomy ? "roomy" : "small",
	       n[SIM_ADMITTED], n[SIM_PACED], n[SIM_REFUSED_LATER], owed, owed_dropped,
	       (unsigned long long)p.tb.full);
	ck_assert_msg(untouched_broken == 0, "%lu refused packets changed the state",
		      untouched_broken);
	ck_assert_msg(too_close == 0, "%lu admissions closer than the interval", too_close);
	ck_assert_msg(quiet_broken == 0, "%lu packets within a quiet source's interval got past pacing",
		      quiet_broken);
	/* the stream exercised every outcome */
	ck_assert_uint_gt(n[SIM_ADMITTED], 1000);
	ck_assert_uint_gt(n[SIM_PACED], 1000);
	ck_assert_uint_gt(n[SIM_REFUSED_LATER], 1000);
	if (roomy)
		ck_assert_msg(owed_dropped == 0, "%lu of %lu owed packets dropped by pacing",
			      owed_dropped, owed);
	free(before);
	free(last_admit);
	free(last_judged);
	free(last_full);
	free(hash);
	staged_free(&p);
}
END_TEST

/*
 * A source refused by the later stage is judged next time as if the refused
 * packet never came: it passes pacing again at once, under either policy;
 * once admitted, it waits the interval.
 */
START_TEST(test_refused_source_passes_pacing_again)
{
	uint32_t backend = _i & 1 ? PACER_BACKEND_TABLE : PACER_BACKEND_SKETCH;
	uint32_t placement = _i >> 1 & 1 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	uint32_t policy = _i >> 2 & 1 ? PACER_POLICY_QUIET : PACER_POLICY_PACE;
	uint64_t t = 1ULL << 40, h;
	struct staged p;

	staged_init(&p, backend, placement, policy, 1, 7);
	h = staged_hash(&p, 1);
	ck_assert_int_eq(staged_packet(&p, h, t, 0), SIM_REFUSED_LATER);
	ck_assert_int_eq(staged_packet(&p, h, t + 1000, 0), SIM_REFUSED_LATER);
	ck_assert_int_eq(staged_packet(&p, h, t + 2000, 1), SIM_ADMITTED);
	ck_assert_int_eq(staged_packet(&p, h, t + 3000, 1), SIM_PACED);
	ck_assert_int_eq(staged_packet(&p, h, t + 2000 + INTERVAL_NS + (2ULL << TICK_SHIFT), 1),
			 SIM_ADMITTED);
	staged_free(&p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("order of the stages");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_later_refusals_keep_the_guarantees, 0, 16);
	tcase_add_loop_test(tc, test_refused_source_passes_pacing_again, 0, 8);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
