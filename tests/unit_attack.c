// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Targeted collision attacks on the sketch, on the datapath's own code
 * (pacer_sketch.h through sketch_sim.c).  Victims are well-behaved sources
 * (one packet per interval + 3 ticks, never owed a drop) among a background
 * load that gives about 1 % false drops.  For every victim an attacker sends
 * 2 packets per row per interval (8 for 4 rows) from sources chosen:
 *
 *   known:  to collide with the victim's cell in every row, computed with
 *           the sketch's real hash key (what an exported key would allow);
 *   secret: the same search, with a key the attacker guessed (the real one
 *           is drawn at load and never exported);
 *   blind:  the victim's address neighbours (a guess that the hash is weak);
 *   random: random addresses, the baseline at the same packet budget;
 *   none:   no attacker packets.
 *
 * The victims' false-drop rate is measured in each case.  With the key
 * known the attack keeps victims dropped; without it, no better than random.
 * `unit_attack --report` prints the table (scripts/attack.sh runs it).
 */
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sketch_sim.h"

enum attack { ATTACK_NONE, ATTACK_RANDOM, ATTACK_BLIND, ATTACK_SECRET, ATTACK_KNOWN, ATTACK_MAX };
static const char *const attack_names[] = { "none", "random", "blind", "secret-key", "known-key" };

struct attack_cfg {
	uint32_t rows, lines_log2, tick_shift, interval_ticks;
	uint32_t n_bg, victims, per_row, rounds, trials;
};

struct attack_result {
	uint64_t victim_pkts, victim_drops, attack_pkts, hash_evals;
};

struct event {
	uint64_t t;
	uint64_t h;
	int32_t victim; /* index, or -1 for background and attacker packets */
};

/* Also used by --report, outside Check's test context where ck_assert cannot run. */
static void need(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "unit_attack: %s\n", what);
		abort();
	}
}

static uint64_t rng_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return pacer_mix64(*s);
}

/* IPv4 sources in packet byte order, as the datapath hashes them. */
static uint64_t v4_hash(const __u64 key[2], uint32_t host_order_addr)
{
	return pacer_hash_v4(key, __builtin_bswap32(host_order_addr));
}

static void slots_of(const struct attack_cfg *c, uint64_t h, uint32_t line[PACER_MAX_ROWS],
		     uint32_t cell[PACER_MAX_ROWS])
{
	pacer_slots(PACER_LAYOUT_ROWS, c->rows, c->lines_log2, h, line, cell);
}

/*
 * The first unused attacker address (from *next) whose row `row` lands on
 * the victim's cell under `key`: about lines x 62 tries on average.
 */
static uint32_t find_collider(const struct attack_cfg *c, const __u64 key[2], uint64_t victim_h,
			      uint32_t row, uint32_t *next, uint64_t *evals)
{
	uint32_t vl[PACER_MAX_ROWS], vc[PACER_MAX_ROWS], l[PACER_MAX_ROWS], k[PACER_MAX_ROWS];

	slots_of(c, victim_h, vl, vc);
	for (;;) {
		uint32_t a = (*next)++;

		(*evals)++;
		slots_of(c, v4_hash(key, a), l, k);
		if (l[row] == vl[row] && k[row] == vc[row])
			return a;
	}
}

/* Attacker addresses for one victim: rows x per_row of them. */
static void attacker_sources(const struct attack_cfg *c, enum attack mode, const __u64 real[2],
			     const __u64 guess[2], uint32_t victim_addr, uint32_t *next,
			     uint64_t *rng, uint64_t *evals, uint32_t *out)
{
	uint32_t r, j, n = 0;

	for (r = 0; r < c->rows; r++) {
		for (j = 0; j < c->per_row; j++, n++) {
			switch (mode) {
			case ATTACK_KNOWN:
				out[n] = find_collider(c, real, v4_hash(real, victim_addr), r, next, evals);
				break;
			case ATTACK_SECRET: /* same search, wrong key: the attacker cannot hash victim_addr */
				out[n] = find_collider(c, guess, v4_hash(guess, victim_addr), r, next, evals);
				break;
			case ATTACK_BLIND:
				out[n] = victim_addr + n + 1;
				break;
			default:
				out[n] = 0xc0000000u | (uint32_t)(rng_next(rng) & 0x3fffffff);
				break;
			}
		}
	}
}

/* Victims 10.v.v.1: each alone in its /24, so its blind neighbours are nobody else. */
static uint32_t victim_addr(uint32_t v)
{
	return 0x0a000001u + (v << 8);
}

static int cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	return x->t < y->t ? -1 : x->t > y->t;
}

/* One trial: a fresh real key, victims, their attackers and the background. */
static void run_trial(const struct attack_cfg *c, enum attack mode, uint64_t seed,
		      struct attack_result *res)
{
	uint64_t rng = seed, q = 1ULL << c->tick_shift, interval = (uint64_t)c->interval_ticks * q;
	uint64_t period = interval + 3 * q, t0 = 1ULL << 36, round;
	uint32_t natt = c->rows * c->per_row, next = 0x0b000000u, v, i;
	__u64 real[2] = { rng_next(&rng) | 1, rng_next(&rng) | 1 };
	__u64 guess[2] = { rng_next(&rng) | 1, rng_next(&rng) | 1 };
	uint32_t *att = malloc((size_t)c->victims * natt * sizeof(*att));
	uint64_t nev = (uint64_t)c->rounds * (c->n_bg + c->victims * (1 + natt)), n = 0;
	struct event *ev = malloc(nev * sizeof(*ev));
	struct sketch_sim s;

	need(att && ev, "out of memory");
	need(!sketch_sim_init(&s, c->rows, PACER_LAYOUT_ROWS, c->lines_log2, c->tick_shift,
			      pacer_thresh_ticks(interval, c->tick_shift), PACER_POLICY_PACE, real),
	     "sketch_sim_init failed");
	for (v = 0; v < c->victims; v++)
		attacker_sources(c, mode, real, guess, victim_addr(v), &next, &rng, &res->hash_evals,
				 &att[v * natt]);
	for (round = 0; round < c->rounds; round++) {
		uint64_t base = t0 + round * period;

		/*
		 * Background: n_bg sources, each once per period at a random moment
		 * in it (strictly periodic, every collision would repeat each round).
		 */
		for (i = 0; i < c->n_bg; i++)
			ev[n++] = (struct event){ base + rng_next(&rng) % period,
						  v4_hash(real, 0x14000000u + i), -1 };
		for (v = 0; v < c->victims; v++) {
			uint64_t phase = (uint64_t)v * period / c->victims;

			ev[n++] = (struct event){ base + phase, v4_hash(real, victim_addr(v)), (int32_t)v };
			if (mode == ATTACK_NONE)
				continue;
			/* The row's j-th source at j/per_row of the period, after the victim's packet. */
			for (i = 0; i < natt; i++)
				ev[n++] = (struct event){ base + phase + 1 + (i % c->per_row) * period / c->per_row,
							  v4_hash(real, att[v * natt + i]), -1 };
		}
	}
	qsort(ev, n, sizeof(*ev), cmp_event);
	for (i = 0; i < n; i++) {
		int drop = sketch_sim_packet(&s, ev[i].h, ev[i].t, NULL);

		if (ev[i].victim < 0)
			continue;
		if (ev[i].t < t0 + 2 * period) /* warm-up: the attack and the load build up */
			continue;
		res->victim_pkts++;
		res->victim_drops += (uint64_t)drop;
	}
	res->attack_pkts += mode == ATTACK_NONE ? 0 : (uint64_t)c->rounds * c->victims * natt;
	sketch_sim_free(&s);
	free(ev);
	free(att);
}

static void run_attack(const struct attack_cfg *c, enum attack mode, struct attack_result *res)
{
	uint32_t t;

	memset(res, 0, sizeof(*res));
	/* Same seeds for every mode: the same keys, background and victims. */
	for (t = 0; t < c->trials; t++)
		run_trial(c, mode, 1000003ULL * (t + 1), res);
}

static double rate(const struct attack_result *r)
{
	return r->victim_pkts ? (double)r->victim_drops / (double)r->victim_pkts : 0;
}

/* 4 rows x 256 lines (62 cells each): 64 KiB; 10 000 background sources: ~1 % false drops. */
static const struct attack_cfg test_cfg = {
	.rows = 4, .lines_log2 = 8, .tick_shift = 20, .interval_ticks = 30,
	.n_bg = 10000, .victims = 100, .per_row = 3, .rounds = 12, .trials = 24,
};

START_TEST(test_known_key_keeps_victims_dropped)
{
	struct attack_result r;

	run_attack(&test_cfg, ATTACK_KNOWN, &r);
	printf("known-key: %llu victim packets, false drops %.2f %%\n",
	       (unsigned long long)r.victim_pkts, 100 * rate(&r));
	ck_assert_uint_gt(r.victim_pkts, 20000);
	ck_assert_double_gt(rate(&r), 0.95);
}
END_TEST

START_TEST(test_secret_key_attacks_no_better_than_random)
{
	struct attack_result none, rnd, blind, secret;

	run_attack(&test_cfg, ATTACK_NONE, &none);
	run_attack(&test_cfg, ATTACK_RANDOM, &rnd);
	run_attack(&test_cfg, ATTACK_BLIND, &blind);
	run_attack(&test_cfg, ATTACK_SECRET, &secret);
	printf("victim false drops: none %.2f %%, random %.2f %%, blind %.2f %%, secret-key %.2f %%\n",
	       100 * rate(&none), 100 * rate(&rnd), 100 * rate(&blind), 100 * rate(&secret));
	/* Non-vacuous: the background load does cause false drops. */
	ck_assert_double_gt(rate(&none), 0.002);
	/*
	 * A victim colliding with fixed, periodic sources is dropped round
	 * after round, so the independent samples are the 2 400 victims, not
	 * their packets: at 1.5 % the standard error of a difference of two
	 * cases is about 0.35 points; 1.2 points is over 3 sigma.  The
	 * attacker's budget adds load in every case alike, so the baseline is
	 * random sources at that budget, not no attack.
	 */
	ck_assert_double_lt(rate(&blind), rate(&rnd) + 0.012);
	ck_assert_double_lt(rate(&secret), rate(&rnd) + 0.012);
}
END_TEST

/* The table scripts/attack.sh prints: a bigger run of every case. */
static int report(void)
{
	struct attack_cfg c = test_cfg;
	struct attack_result r;
	int m;

	c.victims = 200;
	c.trials = 30;
	printf("Targeted collisions (simulated datapath, pace): %u rows x %u cells (%llu KiB), interval %u ticks,\n"
	       "%u background sources per %u-tick period, %u victims x %u trials (fresh key each) sending once per period;\n"
	       "attacker budget per victim: %u packets per period (%u per row)\n",
	       c.rows, (1u << c.lines_log2) * 64, (unsigned long long)(c.rows << c.lines_log2) * 64 / 1024,
	       c.interval_ticks, c.n_bg, c.interval_ticks + 3, c.victims, c.trials,
	       c.rows * c.per_row, c.per_row);
	printf("| attack | victim packets | victim false drops | attacker packets | hash evaluations |\n"
	       "|---|---:|---:|---:|---:|\n");
	for (m = 0; m < ATTACK_MAX; m++) {
		run_attack(&c, (enum attack)m, &r);
		printf("| %s | %llu | %.2f %% | %llu | %llu |\n", attack_names[m],
		       (unsigned long long)r.victim_pkts, 100 * rate(&r),
		       (unsigned long long)r.attack_pkts, (unsigned long long)r.hash_evals);
	}
	return 0;
}

int main(int argc, char **argv)
{
	Suite *s;
	TCase *tc;

	if (argc > 1 && !strcmp(argv[1], "--report"))
		return report();
	s = suite_create("targeted collisions");
	tc = tcase_create("attacks");
	tcase_set_timeout(tc, 120);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_known_key_keeps_victims_dropped);
	tcase_add_test(tc, test_secret_key_attacks_no_better_than_random);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
