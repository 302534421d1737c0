// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * map_carry(): a map's contents into a map of another definition, as a
 * load carries an earlier release's pinned map over to this release's
 * (user/cli/pin_keep.c): arrays index by index, per-CPU arrays CPU by
 * CPU, LPM tries (the lists) key by key; each value keeps its first bytes
 * and the new ones are zero; another type or key size is refused.  And
 * map_read_first(), one value read whatever its size.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "map_carry.h"

static int make(enum bpf_map_type type, uint32_t key, uint32_t value, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = type == BPF_MAP_TYPE_LPM_TRIE ? BPF_F_NO_PREALLOC : 0);
	int fd = bpf_map_create(type, "carry_test", key, value, n, &o);

	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(test_array_grows)
{
	int from = make(BPF_MAP_TYPE_ARRAY, 4, 8, 4), to = make(BPF_MAP_TYPE_ARRAY, 4, 16, 8);
	uint64_t v, w[2];
	uint32_t i;

	for (i = 0; i < 4; i++) {
		v = 0x1111111111111111ULL * (i + 1);
		ck_assert_int_eq(bpf_map_update_elem(from, &i, &v, BPF_ANY), 0);
	}
	/* Whatever the new map held is overwritten where the old one has an entry. */
	w[0] = w[1] = ~0ULL;
	for (i = 0; i < 8; i++)
		ck_assert_int_eq(bpf_map_update_elem(to, &i, w, BPF_ANY), 0);
	ck_assert_int_eq(map_carry(from, to), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(bpf_map_lookup_elem(to, &i, w), 0);
		ck_assert_uint_eq(w[0], 0x1111111111111111ULL * (i + 1));
		ck_assert_uint_eq(w[1], 0); /* the appended field */
	}
	i = 5; /* beyond the old map: untouched */
	ck_assert_int_eq(bpf_map_lookup_elem(to, &i, w), 0);
	ck_assert_uint_eq(w[0], ~0ULL);
	close(from);
	close(to);
}
END_TEST

START_TEST(test_percpu_counters)
{
	int ncpus = libbpf_num_possible_cpus(), c;
	int from = make(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1), to = make(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 24, 1);
	uint64_t *v = calloc((size_t)ncpus, 8), *w = calloc((size_t)ncpus * 3, 8);
	uint32_t zero = 0;

	ck_assert_int_gt(ncpus, 0);
	for (c = 0; c < ncpus; c++)
		v[c] = 1000 + (uint64_t)c;
	ck_assert_int_eq(bpf_map_update_elem(from, &zero, v, BPF_ANY), 0);
	ck_assert_int_eq(map_carry(from, to), 0);
	ck_assert_int_eq(bpf_map_lookup_elem(to, &zero, w), 0);
	for (c = 0; c < ncpus; c++) {
		ck_assert_uint_eq(w[3 * c], 1000 + (uint64_t)c); /* each CPU's counter, in place */
		ck_assert_uint_eq(w[3 * c + 1], 0);
		ck_assert_uint_eq(w[3 * c + 2], 0);
	}
	free(v);
	free(w);
	close(from);
	close(to);
}
END_TEST

struct lpm_key4 {
	uint32_t prefixlen;
	uint8_t addr[4];
};

START_TEST(test_lpm_entries)
{
	int from = make(BPF_MAP_TYPE_LPM_TRIE, sizeof(struct lpm_key4), 8, 16);
	int to = make(BPF_MAP_TYPE_LPM_TRIE, sizeof(struct lpm_key4), 12, 16);
	struct lpm_key4 k[3] = { { 24, { 10, 9, 0, 0 } }, { 32, { 10, 8, 0, 1 } }, { 16, { 192, 168, 0, 0 } } };
	uint8_t v[8], w[12];
	int i, n = 0;
	struct lpm_key4 cur, next;
	void *prev = NULL;

	for (i = 0; i < 3; i++) {
		memset(v, 0x10 + i, sizeof(v));
		ck_assert_int_eq(bpf_map_update_elem(from, &k[i], v, BPF_ANY), 0);
	}
	ck_assert_int_eq(map_carry(from, to), 0);
	for (i = 0; i < 3; i++) {
		uint8_t want[12];

		memset(want, 0x10 + i, 8);
		memset(want + 8, 0, 4);
		ck_assert_int_eq(bpf_map_lookup_elem(to, &k[i], w), 0);
		ck_assert_mem_eq(w, want, sizeof(want));
	}
	while (!bpf_map_get_next_key(to, prev, &next)) {
		cur = next;
		prev = &cur;
		n++;
	}
	ck_assert_int_eq(n, 3); /* nothing more, nothing less */
	close(from);
	close(to);
}
END_TEST

/* map_read_first(): an earlier release's value, shorter or longer than this one's, read as far as both go. */
START_TEST(test_read_first)
{
	int short_fd = make(BPF_MAP_TYPE_ARRAY, 4, 8, 1), long_fd = make(BPF_MAP_TYPE_ARRAY, 4, 24, 1);
	uint64_t v = 0x0102030405060708ULL, lv[3] = { 1, 2, 3 }, out[2];
	uint32_t zero = 0, size = 0;

	ck_assert_int_eq(bpf_map_update_elem(short_fd, &zero, &v, BPF_ANY), 0);
	ck_assert_int_eq(bpf_map_update_elem(long_fd, &zero, lv, BPF_ANY), 0);
	/* Shorter: its bytes, and the rest of out as it was. */
	out[0] = out[1] = ~0ULL;
	ck_assert_int_eq(map_read_first(short_fd, out, sizeof(out), &size), 0);
	ck_assert_uint_eq(size, 8);
	ck_assert_uint_eq(out[0], v);
	ck_assert_uint_eq(out[1], ~0ULL);
	/* Longer: as much as out holds. */
	ck_assert_int_eq(map_read_first(long_fd, out, sizeof(out), &size), 0);
	ck_assert_uint_eq(size, 24);
	ck_assert_uint_eq(out[0], 1);
	ck_assert_uint_eq(out[1], 2);
	ck_assert_int_lt(map_read_first(-1, out, sizeof(out), &size), 0);
	close(short_fd);
	close(long_fd);
}
END_TEST

START_TEST(test_refuses_another_type)
{
	int a = make(BPF_MAP_TYPE_ARRAY, 4, 8, 4), h = make(BPF_MAP_TYPE_HASH, 4, 8, 4);
	int k8 = make(BPF_MAP_TYPE_HASH, 8, 8, 4);

	ck_assert_int_eq(map_carry(a, h), -EOPNOTSUPP);
	ck_assert_int_eq(map_carry(h, k8), -EOPNOTSUPP); /* another key size */
	close(a);
	close(h);
	close(k8);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("map carry (bpf maps)");
	TCase *tc = tcase_create("carry");

	tcase_add_test(tc, test_array_grows);
	tcase_add_test(tc, test_percpu_counters);
	tcase_add_test(tc, test_lpm_entries);
	tcase_add_test(tc, test_refuses_another_type);
	tcase_add_test(tc, test_read_first);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
