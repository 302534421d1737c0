// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The Space-Saving summary (user/lib/out/heavy_hitters.c) against an exact
 * count: after every stream, for every counted key, count - err <= f <=
 * count and err <= min <= N / k; every key with f > min is counted; the
 * heap's minimum is the smallest counter; top is sorted.  Streams: few
 * keys (exact), Zipf, heavy keys in a flood of distinct ones (top's case),
 * adversarial (each key once, then one heavy key late), weighted adds.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "heavy_hitters.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static struct hh_key key_of(uint32_t id)
{
	struct hh_key k;

	memset(&k, 0, sizeof(k));
	memcpy(k.b, &id, sizeof(id));
	k.b[16] = 4;
	return k;
}

static uint32_t id_of(const struct hh_key *k)
{
	uint32_t id;

	memcpy(&id, k->b, sizeof(id));
	return id;
}

/* Exact counts over ids below cap. */
struct oracle {
	uint64_t *f;
	uint32_t cap;
};

static void check_bounds(const struct hh_summary *s, const struct oracle *o, const char *what)
{
	struct hh_entry *top = calloc(s->k, sizeof(*top));
	uint64_t min = hh_min(s), sum = 0;
	uint32_t n, i, id;

	ck_assert_ptr_nonnull(top);
	n = hh_top(s, top, s->k);
	ck_assert_uint_eq(n, s->used);
	for (i = 0; i < n; i++) {
		id = id_of(&top[i].key);
		ck_assert_msg(id < o->cap, "%s: unknown key %u", what, id);
		ck_assert_msg(top[i].count >= o->f[id] && top[i].count - top[i].err <= o->f[id],
			      "%s: key %u count %llu err %llu, true %llu", what, id,
			      (unsigned long long)top[i].count, (unsigned long long)top[i].err,
			      (unsigned long long)o->f[id]);
		ck_assert_msg(top[i].err <= min || n < s->k, "%s: err %llu above min %llu", what,
			      (unsigned long long)top[i].err, (unsigned long long)min);
		if (i)
			ck_assert_uint_ge(top[i - 1].count, top[i].count);
		if (n == s->k)
			ck_assert_uint_ge(top[i].count, min);
		sum += top[i].count;
	}
	/* The counters hold exactly N. */
	ck_assert_uint_eq(sum, s->n);
	ck_assert_msg(min * s->k <= s->n, "%s: min %llu above N/k", what, (unsigned long long)min);
	for (id = 0; id < o->cap; id++) {
		if (o->f[id] > min) {
			struct hh_key k = key_of(id);
			const struct hh_entry *e = hh_find(s, &k);

			ck_assert_msg(e, "%s: key %u with %llu > min %llu not counted", what, id,
				      (unsigned long long)o->f[id], (unsigned long long)min);
		}
	}
	free(top);
}

static void feed(struct hh_summary *s, struct oracle *o, uint32_t id, uint64_t w)
{
	struct hh_key k = key_of(id);

	hh_add(s, &k, w);
	o->f[id] += w;
}

START_TEST(exact_below_k)
{
	struct hh_summary s;
	struct oracle o = { calloc(100, sizeof(uint64_t)), 100 };
	uint32_t i;

	ck_assert_int_eq(hh_init(&s, 128), 0);
	rng_state = 1;
	for (i = 0; i < 10000; i++)
		feed(&s, &o, (uint32_t)(rnd() % 100), 1);
	check_bounds(&s, &o, "few keys");
	for (i = 0; i < 100; i++) {
		struct hh_key k = key_of(i);
		const struct hh_entry *e = hh_find(&s, &k);

		if (o.f[i]) {
			ck_assert_ptr_nonnull(e);
			ck_assert_uint_eq(e->count, o.f[i]);
			ck_assert_uint_eq(e->err, 0);
		}
	}
	ck_assert_uint_eq(hh_min(&s), 0);
	hh_reset(&s);
	ck_assert_uint_eq(s.used, 0);
	ck_assert_uint_eq(s.n, 0);
	hh_free(&s);
	free(o.f);
}
END_TEST

START_TEST(zipf_stream)
{
	const uint32_t nkeys = 50000;
	struct hh_summary s;
	struct oracle o = { calloc(nkeys, sizeof(uint64_t)), nkeys };
	double *cdf = malloc(nkeys * sizeof(double)), z = 0;
	uint32_t i;

	ck_assert_ptr_nonnull(cdf);
	for (i = 0; i < nkeys; i++)
		cdf[i] = (z += 1.0 / (i + 1));
	ck_assert_int_eq(hh_init(&s, 256), 0);
	rng_state = 7;
	for (i = 0; i < 300000; i++) {
		double u = (double)(rnd() >> 11) / 9007199254740992.0 * z;
		uint32_t lo = 0, hi = nkeys - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		feed(&s, &o, lo, 1);
		if (i % 50000 == 49999)
			check_bounds(&s, &o, "zipf");
	}
	hh_free(&s);
	free(cdf);
	free(o.f);
}
END_TEST

/* top's case: 20 heavy keys, each 2 % of the stream, inside a flood of keys seen about once. */
START_TEST(heavy_in_flood)
{
	const uint32_t nkeys = 2000000;
	struct hh_summary s;
	struct oracle o = { calloc(nkeys, sizeof(uint64_t)), nkeys };
	struct hh_entry top[20];
	uint32_t i, n;

	ck_assert_ptr_nonnull(o.f);
	ck_assert_int_eq(hh_init(&s, 1024), 0);
	rng_state = 11;
	for (i = 0; i < 1000000; i++) {
		uint64_t r = rnd();

		if (r % 100 < 40)
			feed(&s, &o, (uint32_t)((r >> 32) % 20), 1);
		else
			feed(&s, &o, 20 + (uint32_t)((r >> 32) % (nkeys - 20)), 1);
	}
	check_bounds(&s, &o, "flood");
	n = hh_top(&s, top, 20);
	ck_assert_uint_eq(n, 20);
	for (i = 0; i < n; i++) {
		uint32_t id = id_of(&top[i].key);

		ck_assert_msg(id < 20, "rank %u is flood key %u", i, id);
		/* N / k = 977 against ~20 000 each: within 5 %. */
		ck_assert_msg(top[i].count <= o.f[id] + s.n / s.k, "rank %u over by more than N/k", i);
		ck_assert_msg((double)top[i].err <= 0.05 * (double)o.f[id], "rank %u err %llu", i,
			      (unsigned long long)top[i].err);
	}
	hh_free(&s);
	free(o.f);
}
END_TEST

/* Every key once fills and churns the summary; a key that turns heavy late is still found. */
START_TEST(late_heavy)
{
	const uint32_t nkeys = 100001;
	struct hh_summary s;
	struct oracle o = { calloc(nkeys, sizeof(uint64_t)), nkeys };
	struct hh_entry top[1];
	uint32_t i;

	ck_assert_int_eq(hh_init(&s, 64), 0);
	for (i = 0; i < 100000; i++)
		feed(&s, &o, i, 1);
	check_bounds(&s, &o, "churn");
	for (i = 0; i < 5000; i++)
		feed(&s, &o, 100000, 1);
	check_bounds(&s, &o, "late");
	ck_assert_uint_eq(hh_top(&s, top, 1), 1);
	ck_assert_uint_eq(id_of(&top[0].key), 100000);
	hh_free(&s);
	free(o.f);
}
END_TEST

START_TEST(weighted_and_limits)
{
	struct hh_summary s;
	struct oracle o = { calloc(1000, sizeof(uint64_t)), 1000 };
	uint32_t i;

	ck_assert_int_eq(hh_init(&s, 0), -EINVAL);
	ck_assert_int_eq(hh_init(&s, (1u << 24) + 1), -EINVAL);
	ck_assert_int_eq(hh_init(&s, 1), 0);
	feed(&s, &o, 1, 5);
	feed(&s, &o, 2, 0); /* a zero weight counts nothing */
	ck_assert_uint_eq(s.n, 5);
	feed(&s, &o, 3, 2);
	check_bounds(&s, &o, "k=1");
	ck_assert_uint_eq(hh_min(&s), 7);
	hh_free(&s);
	memset(o.f, 0, 1000 * sizeof(uint64_t));
	ck_assert_int_eq(hh_init(&s, 16), 0);
	rng_state = 3;
	for (i = 0; i < 20000; i++)
		feed(&s, &o, (uint32_t)(rnd() % 1000), 1 + rnd() % 9);
	check_bounds(&s, &o, "weighted");
	hh_free(&s);
	free(o.f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("heavy_hitters");
	TCase *tc = tcase_create("space_saving");

	tcase_add_test(tc, exact_below_k);
	tcase_add_test(tc, zipf_stream);
	tcase_add_test(tc, heavy_in_flood);
	tcase_add_test(tc, late_heavy);
	tcase_add_test(tc, weighted_and_limits);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
