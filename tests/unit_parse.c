// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Parsing of operator input (user/lib/words/cli_values.c): durations, integers, addresses. */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdint.h>
#include "cli_values.h"

START_TEST(test_parse_duration)
{
	uint64_t v;

	ck_assert_int_eq(parse_duration_ns("1s", &v), 0);
	ck_assert_uint_eq(v, 1000000000ULL);
	ck_assert_int_eq(parse_duration_ns("250ms", &v), 0);
	ck_assert_uint_eq(v, 250000000ULL);
	ck_assert_int_eq(parse_duration_ns("10us", &v), 0);
	ck_assert_uint_eq(v, 10000ULL);
	ck_assert_int_eq(parse_duration_ns("7ns", &v), 0);
	ck_assert_uint_eq(v, 7ULL);
	ck_assert_int_eq(parse_duration_ns("1.5s", &v), 0);
	ck_assert_uint_eq(v, 1500000000ULL);
	ck_assert_int_eq(parse_duration_ns("0.001ms", &v), 0);
	ck_assert_uint_eq(v, 1000ULL);
	ck_assert_int_eq(parse_duration_ns("1", &v), -EINVAL);     /* no unit */
	ck_assert_int_eq(parse_duration_ns("1 s", &v), -EINVAL);
	ck_assert_int_eq(parse_duration_ns("s", &v), -EINVAL);
	ck_assert_int_eq(parse_duration_ns("-1s", &v), -EINVAL);
	ck_assert_int_eq(parse_duration_ns("1.5ns", &v), -EINVAL); /* sub-ns */
	ck_assert_int_eq(parse_duration_ns("1h", &v), -EINVAL);
	ck_assert_int_eq(parse_duration_ns("99999999999999999999s", &v), -ERANGE);
	ck_assert_int_eq(parse_duration_ns("20000000000s", &v), -ERANGE);
	ck_assert_int_eq(parse_duration_ns("", &v), -EINVAL);
}
END_TEST

START_TEST(test_parse_duration_max)
{
	uint64_t v = 7;

	ck_assert_int_eq(parse_duration_max("1099511627776ns", 1ULL << 40, &v), 0);
	ck_assert_uint_eq(v, 1ULL << 40);
	ck_assert_int_eq(parse_duration_max("1099511627777ns", 1ULL << 40, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("10000000000s", 1ULL << 40, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("4611686018427387904ns", 1ULL << 40, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("0s", 1ULL << 40, &v), -EINVAL);
	ck_assert_int_eq(parse_duration_max("1x", 1ULL << 40, &v), -EINVAL);
	ck_assert_int_eq(parse_duration_max("99999999999999999999s", UINT64_MAX, &v), -ERANGE);
	ck_assert_uint_eq(v, 1ULL << 40); /* untouched by failures */
	/*
	 * A fraction that carries the value past 2^64 ns is out of range, not
	 * wrapped: 18446744073.9s once read as 190 ms (found by tests/fuzz.sh).
	 */
	ck_assert_int_eq(parse_duration_max("18446744073.9s", UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("18446744073.9s", 1ULL << 40, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("18446744073.709551615s", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(parse_duration_max("18446744073.709551616s", UINT64_MAX, &v), -ERANGE);
	ck_assert_int_eq(parse_duration_max("18446744073709551.9ms", UINT64_MAX, &v), -ERANGE);
	/* The largest count of ns is one, its next is not. */
	ck_assert_int_eq(parse_duration_max("18446744073709551615ns", UINT64_MAX, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(parse_duration_max("18446744073709551616ns", UINT64_MAX, &v), -ERANGE);
	ck_assert_uint_eq(v, UINT64_MAX); /* untouched by failures */
}
END_TEST

START_TEST(test_parse_numbers_and_addresses)
{
	struct pacer_addr a;
	uint64_t v;

	ck_assert_int_eq(parse_u64_range("8", 1, 8, &v), 0);
	ck_assert_int_eq(parse_u64_range("9", 1, 8, &v), -ERANGE);
	ck_assert_int_eq(parse_u64_range("0", 1, 8, &v), -ERANGE);
	ck_assert_int_eq(parse_u64_range("4x", 1, 8, &v), -EINVAL);
	ck_assert_int_eq(parse_u64_range("-4", 0, 8, &v), -EINVAL);
	ck_assert_int_eq(parse_u64_range("", 0, 8, &v), -EINVAL);
	ck_assert_int_eq(parse_one_in("1/1000", &v), 0);
	ck_assert_uint_eq(v, 1000);
	ck_assert_int_eq(parse_one_in("1/0", &v), -ERANGE);
	ck_assert_uint_eq(sample_thresh_one_in(1), 1ULL << 32);
	ck_assert_uint_eq(sample_thresh_one_in(2), 1ULL << 31);
	ck_assert_int_eq(parse_address("10.1.2.3", &a), 0);
	ck_assert_int_eq(a.family, 4);
	ck_assert_int_eq(parse_address("fd00::1", &a), 0);
	ck_assert_int_eq(a.family, 6);
	ck_assert_int_eq(parse_address("10.1.2", &a), -EINVAL);
	ck_assert_int_eq(parse_address("fd00:::1", &a), -EINVAL);
}
END_TEST

/* List timeouts as nftables writes them, and back. */
START_TEST(test_parse_timeout)
{
	static const struct {
		const char *in;
		int ret;
		uint32_t secs;
	} cases[] = {
		{ "30s", 0, 30 }, { "5m", 0, 300 }, { "1h", 0, 3600 }, { "1d", 0, 86400 },
		{ "1h30m", 0, 5400 }, { "2d3h4m5s", 0, 183845 }, { "90", 0, 90 }, { "90m", 0, 5400 },
		{ "49710d6h28m15s", 0, 4294967295u }, { "49710d6h28m16s", -ERANGE, 0 },
		{ "0", -EINVAL, 0 }, { "0s", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "1x", -EINVAL, 0 },
		{ "30m1h", -EINVAL, 0 }, { "1h1h", -EINVAL, 0 }, { "h", -EINVAL, 0 }, { "-1s", -EINVAL, 0 },
		{ "1.5h", -EINVAL, 0 }, { "1h 30m", -EINVAL, 0 }, { "99999999999s", -ERANGE, 0 },
	};
	char buf[32];
	uint32_t v;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = 0;
		ck_assert_msg(parse_timeout_s(cases[i].in, &v) == cases[i].ret, "'%s'", cases[i].in);
		if (!cases[i].ret)
			ck_assert_msg(v == cases[i].secs, "'%s': %u", cases[i].in, v);
	}
	ck_assert_str_eq(format_timeout_s(5400, buf, sizeof(buf)), "1h30m");
	ck_assert_str_eq(format_timeout_s(183845, buf, sizeof(buf)), "2d3h4m5s");
	ck_assert_str_eq(format_timeout_s(3599, buf, sizeof(buf)), "59m59s");
	ck_assert_str_eq(format_timeout_s(0, buf, sizeof(buf)), "0s");
	ck_assert_str_eq(format_timeout_s(86400, buf, sizeof(buf)), "1d");
	ck_assert_int_eq(parse_timeout_s(format_timeout_s(4294967295u, buf, sizeof(buf)), &v), 0);
	ck_assert_uint_eq(v, 4294967295u);
}
END_TEST

START_TEST(test_parse_mac)
{
	uint8_t m[6];

	ck_assert_int_eq(parse_mac("02:00:0a:ff:00:01", m), 0);
	ck_assert_mem_eq(m, "\x02\x00\x0a\xff\x00\x01", 6);
	ck_assert_int_eq(parse_mac("02:00:0a:ff:00", m), -EINVAL);
	ck_assert_int_eq(parse_mac("02:00:0a:ff:00:01:07", m), -EINVAL);
	ck_assert_int_eq(parse_mac("zz:00:0a:ff:00:01", m), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("operator input");

	tcase_add_test(tc, test_parse_duration);
	tcase_add_test(tc, test_parse_duration_max);
	tcase_add_test(tc, test_parse_numbers_and_addresses);
	tcase_add_test(tc, test_parse_mac);
	tcase_add_test(tc, test_parse_timeout);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
