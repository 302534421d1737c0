// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verifier's log read into `load`'s one-line cause (user/lib/sys/verifier_log.c). */
#include <check.h>
#include "check_run.h"
#include <string.h>
#include "verifier_log.h"

/* What Linux 6.1 wrote when the program was too complex for it. */
static const char too_complex[] =
	"BPF program is too large. Processed 1000001 insn\n"
	"verification time 11874325 usec\n"
	"stack depth 104+0\n"
	"processed 1000001 insns (limit 1000000) max_states_per_insn 80 total_states 58389 "
	"peak_states 4555 mark_read 31\n";

static const char rejected[] =
	"math between map_value pointer and register with unbounded min value is not allowed\n"
	"processed 3874 insns (limit 1000000) max_states_per_insn 4 total_states 68 peak_states 67 "
	"mark_read 28\n";

static const char loaded[] =
	"verification time 80123 usec\n"
	"stack depth 96+64\n"
	"processed 61291 insns (limit 1000000) max_states_per_insn 9 total_states 3121 "
	"peak_states 1590 mark_read 44\n";

START_TEST(test_too_complex_names_the_kernel_and_the_count)
{
	char out[256];

	ck_assert_int_eq(verifier_log_cause(too_complex, "6.1.0-56-amd64", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "the kernel's verifier gave up: program too complex for Linux "
			      "6.1.0-56-amd64 (1000001 instructions processed, limit 1000000)");
}
END_TEST

/* Only the message, the count line lost (a log cut short): still the cause. */
START_TEST(test_too_complex_without_statistics)
{
	char out[256];

	ck_assert_int_eq(verifier_log_cause("BPF program is too large. Processed 1000001 insn\n",
					    "6.1.0-56-amd64", out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "the kernel's verifier gave up: program too complex for Linux "
			      "6.1.0-56-amd64");
}
END_TEST

START_TEST(test_rejection_gives_the_verifier_message)
{
	char out[256];

	ck_assert_int_eq(verifier_log_cause(rejected, "6.1.0-56-amd64", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "the kernel's verifier (Linux 6.1.0-56-amd64) rejected the program: "
			      "math between map_value pointer and register with unbounded min value "
			      "is not allowed");
}
END_TEST

/* A log with statistics only (the program loaded; the failure was elsewhere): no cause. */
START_TEST(test_success_log_or_none_gives_no_cause)
{
	char out[64] = "untouched";

	ck_assert_int_eq(verifier_log_cause(loaded, "6.18.0", out, sizeof(out)), -1);
	ck_assert_int_eq(verifier_log_cause("", "6.18.0", out, sizeof(out)), -1);
	ck_assert_int_eq(verifier_log_cause(NULL, "6.18.0", out, sizeof(out)), -1);
	ck_assert_str_eq(out, "untouched");
}
END_TEST

START_TEST(test_processed_reads_the_statistics_line)
{
	uint64_t n = 1, limit = 1;

	ck_assert_int_eq(verifier_log_processed(loaded, &n, &limit), 0);
	ck_assert_uint_eq(n, 61291);
	ck_assert_uint_eq(limit, 1000000);
	ck_assert_int_eq(verifier_log_processed(too_complex, &n, &limit), 0);
	ck_assert_uint_eq(n, 1000001);
	ck_assert_int_eq(verifier_log_processed("processed foo insns\n", &n, &limit), -1);
	ck_assert_int_eq(verifier_log_processed(NULL, &n, &limit), -1);
}
END_TEST

/* Control bytes in a message are replaced, and a long one is cut to the buffer. */
START_TEST(test_message_is_one_clean_line)
{
	char out[80];

	ck_assert_int_eq(verifier_log_cause("bad\x1b[2Jthing\nprocessed 5 insns (limit 1000000)\n",
					    "6.1", out, sizeof(out)),
			 0);
	ck_assert_str_eq(out, "the kernel's verifier (Linux 6.1) rejected the program: bad?[2Jthing");
	ck_assert_int_eq(verifier_log_cause(rejected, "6.1", out, sizeof(out)), 0);
	ck_assert_uint_eq(strlen(out), sizeof(out) - 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("verifier_log");
	TCase *tc = tcase_create("verifier_log");

	tcase_add_test(tc, test_too_complex_names_the_kernel_and_the_count);
	tcase_add_test(tc, test_too_complex_without_statistics);
	tcase_add_test(tc, test_rejection_gives_the_verifier_message);
	tcase_add_test(tc, test_success_log_or_none_gives_no_cause);
	tcase_add_test(tc, test_processed_reads_the_statistics_line);
	tcase_add_test(tc, test_message_is_one_clean_line);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
