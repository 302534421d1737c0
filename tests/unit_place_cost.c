// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of --placement auto's cost rule (user/lib/backend/place_cost.c): per-CPU
 * where one CPU receives or the receiving CPUs' copies fit in 1/32 of the
 * last-level cache, shared otherwise or where the cache is unknown; per-CPU
 * only where it is also exact; the sysfs cache reader on a tree made here.
 */
#include <check.h>
#include "check_run.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pacer_abi.h"
#include "place_cost.h"

#define MiB (1ULL << 20)

static struct place_cost_verdict judge(uint64_t copy, uint32_t cpus, uint64_t cache)
{
	struct place_cost c = { .copy_bytes = copy, .receiving_cpus = cpus, .cache_bytes = cache,
				.cache_level = 3 };
	struct place_cost_verdict v;

	place_cost_judge(&c, &v);
	ck_assert_msg(!strchr(v.text, ';'), "a ';' in: %s", v.text);
	/* The reason alone, for load's line where shared wins on exactness: the text's tail. */
	ck_assert_msg(v.reason[0] && strlen(v.text) > strlen(v.reason) &&
			      !strcmp(v.text + strlen(v.text) - strlen(v.reason), v.reason) &&
			      !strncmp(v.text, v.percpu_cheaper ? "by cost: per-CPU is cheaper: " : "by cost: shared is cheaper: ",
				       strlen(v.text) - strlen(v.reason)),
		      "reason '%s' is not the tail of '%s'", v.reason, v.text);
	return v;
}

static void assert_has(const struct place_cost_verdict *v, const char *what)
{
	ck_assert_msg(strstr(v->text, what), "'%s' not in: %s", what, v->text);
}

START_TEST(test_one_cpu_is_percpu)
{
	/* one copy is touched either way, however small the cache or unknown */
	const uint64_t caches[] = { 0, 1 * MiB, 300 * MiB };
	size_t i;

	for (i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		struct place_cost_verdict v = judge(4 * MiB, 1, caches[i]);

		ck_assert(v.percpu_cheaper);
		assert_has(&v, "by cost: per-CPU is cheaper: one receiving CPU");
	}
}
END_TEST

START_TEST(test_fit_boundary)
{
	/* 300 MiB / 32 = 9.4 MiB: 2 copies of 4 MiB fit, 3 do not */
	struct place_cost_verdict v = judge(4 * MiB, 2, 300 * MiB);

	ck_assert(v.percpu_cheaper);
	assert_has(&v, "by cost: per-CPU is cheaper: the 2 receiving CPUs' copies (2 x 4.0 MiB = "
		       "8.0 MiB) fit in 1/32 of the 300.0 MiB L3 cache (9.4 MiB)");
	v = judge(4 * MiB, 3, 300 * MiB);
	ck_assert(!v.percpu_cheaper);
	assert_has(&v, "by cost: shared is cheaper: the 3 receiving CPUs' copies (3 x 4.0 MiB = "
		       "12.0 MiB) exceed 1/32 of the 300.0 MiB L3 cache (9.4 MiB)");
	/* exactly 1/32 fits */
	ck_assert(judge(1 * MiB, 8, 256 * MiB).percpu_cheaper);
	ck_assert(!judge(1 * MiB + 64, 8, 256 * MiB).percpu_cheaper);
}
END_TEST

START_TEST(test_issue_machine)
{
	/* the 16-CPU machine's 300 MiB L3, 4 MiB copies: per-CPU up to K = 2, shared at 4, 8 and 15 */
	ck_assert(judge(4 * MiB, 2, 300 * MiB).percpu_cheaper);
	ck_assert(!judge(4 * MiB, 4, 300 * MiB).percpu_cheaper);
	ck_assert(!judge(4 * MiB, 8, 300 * MiB).percpu_cheaper);
	ck_assert(!judge(4 * MiB, 15, 300 * MiB).percpu_cheaper);
	/* small copies stay per-CPU on many CPUs */
	ck_assert(judge(512 * 1024, 15, 300 * MiB).percpu_cheaper);
}
END_TEST

START_TEST(test_unknown_cache_is_shared)
{
	struct place_cost_verdict v = judge(64 * 1024, 2, 0);

	ck_assert(!v.percpu_cheaper);
	assert_has(&v, "by cost: shared is cheaper: the cache size is unknown");
}
END_TEST

START_TEST(test_no_overflow)
{
	/* 2^31 copies of 2^33 bytes: 2^64 would wrap to 0 and "fit" */
	ck_assert(!judge(1ULL << 33, 1U << 31, 1ULL << 62).percpu_cheaper);
}
END_TEST

START_TEST(test_auto_needs_exact_and_cheaper)
{
	struct place_cost_verdict cheap = judge(4 * MiB, 1, 300 * MiB);
	struct place_cost_verdict dear = judge(4 * MiB, 15, 300 * MiB);

	ck_assert_uint_eq(place_auto(true, &cheap), PACER_PLACEMENT_PERCPU);
	ck_assert_uint_eq(place_auto(false, &cheap), PACER_PLACEMENT_SHARED);
	ck_assert_uint_eq(place_auto(true, &dear), PACER_PLACEMENT_SHARED);
	ck_assert_uint_eq(place_auto(false, &dear), PACER_PLACEMENT_SHARED);
}
END_TEST

START_TEST(test_receiving_cpus)
{
	ck_assert_uint_eq(place_receiving_cpus(4, 16), 4);
	ck_assert_uint_eq(place_receiving_cpus(64, 16), 16);
	ck_assert_uint_eq(place_receiving_cpus(0, 16), 16); /* queues unknown: every CPU */
	ck_assert_uint_eq(place_receiving_cpus(0, -1), 1);
}
END_TEST

static char tree[64];

static void put(const char *index, const char *name, const char *value)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tree, index);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/%s", tree, index, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void cache(const char *index, const char *level, const char *type, const char *size)
{
	put(index, "level", level);
	put(index, "type", type);
	put(index, "size", size);
}

static void make_tree(void)
{
	snprintf(tree, sizeof(tree), "/tmp/unit_place_cost.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
}

static void remove_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tree);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_sysfs_highest_level)
{
	uint32_t level = 99;

	make_tree();
	cache("index0", "1", "Data", "48K");
	cache("index1", "1", "Instruction", "64K");
	cache("index2", "2", "Unified", "2048K");
	cache("index3", "3", "Unified", "307200K");
	ck_assert_uint_eq(place_cache_bytes(tree, &level), 300 * MiB);
	ck_assert_uint_eq(level, 3);
	remove_tree();
}
END_TEST

START_TEST(test_sysfs_no_l3_and_bad_sizes)
{
	uint32_t level = 99;

	make_tree();
	cache("index0", "1", "Data", "32K");
	cache("index1", "2", "Unified", "1M");
	cache("index2", "3", "Instruction", "64M"); /* not a data cache */
	cache("index3", "4", "Unified", "lots");    /* unreadable size */
	ck_assert_uint_eq(place_cache_bytes(tree, &level), 1 * MiB);
	ck_assert_uint_eq(level, 2);
	remove_tree();
	ck_assert_uint_eq(place_cache_bytes("/nonexistent/cache", &level), 0);
	ck_assert_uint_eq(level, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("place_cost");
	TCase *tc = tcase_create("rule");

	tcase_add_test(tc, test_one_cpu_is_percpu);
	tcase_add_test(tc, test_fit_boundary);
	tcase_add_test(tc, test_issue_machine);
	tcase_add_test(tc, test_unknown_cache_is_shared);
	tcase_add_test(tc, test_no_overflow);
	tcase_add_test(tc, test_auto_needs_exact_and_cheaper);
	tcase_add_test(tc, test_receiving_cpus);
	tcase_add_test(tc, test_sysfs_highest_level);
	tcase_add_test(tc, test_sysfs_no_l3_and_bad_sizes);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
