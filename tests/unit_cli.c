// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the CLI's pure helpers in user/lib: JSON string escaping,
 * the range and sampling texts, IPv4-mapped addresses, interface names and
 * pin paths, safe output files and lock files.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "json_writer.h"
#include "cli_values.h"
#include "pins.h"
#include "safe_file.h"

static char dir[] = "/tmp/unit_cli.XXXXXX";

static void make_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cleanup of %s failed\n", dir);
}

static void json_of(const char *in, char *out, size_t len)
{
	FILE *f = fmemopen(out, len, "w");

	ck_assert_ptr_nonnull(f);
	json_string(f, in);
	fputc(0, f);
	fclose(f);
}

START_TEST(test_json_string_escapes_everything_json_cannot_carry)
{
	char out[256];

	json_of("plain host-1.example", out, sizeof(out));
	ck_assert_str_eq(out, "\"plain host-1.example\"");
	json_of("q\"b\\s\n\t\x01\x1f\x7f", out, sizeof(out));
	ck_assert_str_eq(out, "\"q\\\"b\\\\s\\u000a\\u0009\\u0001\\u001f\\u007f\"");
	/* Valid UTF-8 (2, 3 and 4 bytes) passes unchanged. */
	json_of("h\xc3\xa9t\xe2\x82\xac\xf0\x9f\x98\x80", out, sizeof(out));
	ck_assert_str_eq(out, "\"h\xc3\xa9t\xe2\x82\xac\xf0\x9f\x98\x80\"");
	/* Stray continuation, lone lead byte, overlong, surrogate, > U+10FFFF, 0xff. */
	json_of("a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xff", out, sizeof(out));
	ck_assert_str_eq(out, "\"a\\ufffdb\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde\\ufffd\\ufffd\\ufffd\\ufffdf\\ufffd\"");
	/* A lead byte cut short by the end of the string. */
	json_of("x\xe2\x82", out, sizeof(out));
	ck_assert_str_eq(out, "\"x\\ufffd\\ufffd\"");
}
END_TEST

START_TEST(test_duration_range_prints_both_bounds)
{
	char b[64];

	/* load --interval 1ms --tick 16ms: tick 2^23 ns, range [4, 63] ticks. */
	ck_assert_str_eq(format_duration_range(4ULL << 23, 63ULL << 23, b, sizeof(b)),
			 "[33.554 ms, 528.482 ms]");
	ck_assert_str_eq(format_duration_range(4ULL << 29, 63ULL << 29, b, sizeof(b)),
			 "[2.147 s, 33.823 s]");
}
END_TEST

START_TEST(test_sampling_text_says_off)
{
	char b[64];

	ck_assert_str_eq(format_sampling(0, 0, b, sizeof(b)), "off");
	ck_assert_str_eq(format_sampling(1ULL << 30, 0, b, sizeof(b)), "sources 1/4, packets off");
	ck_assert_str_eq(format_sampling(0, 1ULL << 32, b, sizeof(b)), "sources off, packets 1/1");
	ck_assert_str_eq(format_sampling(sample_thresh_one_in(64), sample_thresh_one_in(1000), b, sizeof(b)),
			 "sources 1/64, packets 1/1000");
}
END_TEST

START_TEST(test_ipv4_mapped_address_is_the_ipv4_source)
{
	struct pacer_addr a, v4;
	char b[64];

	ck_assert_int_eq(parse_address("::ffff:1.2.3.4", &a), 0);
	ck_assert_int_eq(parse_address("1.2.3.4", &v4), 0);
	ck_assert_int_eq(pacer_addr_unmap_v4(&a), 1);
	ck_assert_int_eq(a.family, 4);
	ck_assert_mem_eq(&a, &v4, sizeof(a));
	ck_assert_str_eq(format_address(&a, b, sizeof(b)), "1.2.3.4");
	/* Not mapped: unchanged. */
	ck_assert_int_eq(parse_address("::1.2.3.4", &a), 0);
	ck_assert_int_eq(pacer_addr_unmap_v4(&a), 0);
	ck_assert_int_eq(a.family, 6);
	ck_assert_int_eq(parse_address("10.0.0.1", &a), 0);
	ck_assert_int_eq(pacer_addr_unmap_v4(&a), 0);
	ck_assert_int_eq(a.family, 4);
}
END_TEST

START_TEST(test_ifname_rules_and_pin_paths)
{
	char name[128], b[128];
	uint64_t ino;

	memset(name, 'a', 100);
	name[100] = 0;
	ck_assert(!ifname_valid(name));
	name[16] = 0;
	ck_assert(!ifname_valid(name));
	name[15] = 0;
	ck_assert(ifname_valid(name));
	ck_assert(ifname_valid("eth0"));
	ck_assert(ifname_valid("veth-a.100"));
	ck_assert(!ifname_valid(""));
	ck_assert(!ifname_valid("."));
	ck_assert(!ifname_valid(".."));
	ck_assert(!ifname_valid("a/b"));
	ck_assert(!ifname_valid("eth0:1"));
	ck_assert(!ifname_valid("a b"));

	ck_assert_int_eq(pin_if_dir("/r", 4026531840ULL, "eth0", b, sizeof(b)), 0);
	ck_assert_str_eq(b, "/r/netns-4026531840/eth0");
	ck_assert_int_eq(pin_if_dir("/r", 1, "../x", b, sizeof(b)), -EINVAL);
	ck_assert_int_eq(pin_if_dir("/r", 1, "eth0", b, 10), -ENAMETOOLONG);
	ck_assert_int_eq(pin_netns_dir("/r", 7, b, sizeof(b)), 0);
	ck_assert_str_eq(b, "/r/netns-7");
	ck_assert_int_eq(pin_netns_parse("netns-4026531840", &ino), 0);
	ck_assert_uint_eq(ino, 4026531840ULL);
	ck_assert_int_eq(pin_netns_parse("eth0", &ino), -EINVAL);
	ck_assert_int_eq(pin_netns_parse("netns-", &ino), -EINVAL);
	ck_assert_int_eq(pin_netns_parse("netns-12x", &ino), -EINVAL);
}
END_TEST

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void assert_text(const char *path, const char *want)
{
	char b[64] = "";
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(b, sizeof(b), f));
	fclose(f);
	ck_assert_str_eq(b, want);
}

/* Entries in dir other than the ones named. */
static int extra_entries(const char *keep1, const char *keep2)
{
	char cmd[256], line[256];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A %s", dir);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, keep1) && strcmp(line, keep2))
			n++;
	}
	pclose(p);
	return n;
}

START_TEST(test_safe_out_replaces_links_and_leaves_no_partial_file)
{
	char target[128], victim[128], why[256];
	struct safe_out o;
	struct stat st;

	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(target, sizeof(target), "%s/report.html", dir);
	write_text(victim, "precious\n");
	ck_assert_int_eq(symlink(victim, target), 0);

	ck_assert_int_eq(safe_out_open(&o, target, NULL, SAFE_FILE_MODE, why, sizeof(why)), 0);
	ck_assert_ptr_null(strstr(o.tmp_path, "XXXXXX"));
	ck_assert_int_eq(fstat(fileno(o.f), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	fputs("new\n", o.f);
	/* Nothing under the target's name until committed. */
	assert_text(target, "precious\n");
	ck_assert_int_eq(safe_out_commit(&o, why, sizeof(why)), 0);
	ck_assert_int_eq(lstat(target, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	assert_text(target, "new\n");
	assert_text(victim, "precious\n");

	/* Discarded: neither the target changes nor a temporary stays. */
	ck_assert_int_eq(safe_out_open(&o, target, NULL, SAFE_FILE_MODE, why, sizeof(why)), 0);
	fputs("partial", o.f);
	safe_out_discard(&o);
	assert_text(target, "new\n");
	ck_assert_int_eq(extra_entries("victim", "report.html"), 0);

	/* A target that is not a regular file is refused (a root writing to /dev/...). */
	snprintf(target, sizeof(target), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(target, 0600), 0);
	ck_assert_int_eq(safe_out_open(&o, target, NULL, SAFE_FILE_MODE, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "not a regular file"));
	unlink(target);
}
END_TEST

START_TEST(test_safe_out_fixed_temporary_is_exclusive)
{
	char target[128], tmp[140], victim[128], why[256];
	struct safe_out o;

	snprintf(victim, sizeof(victim), "%s/victim2", dir);
	snprintf(target, sizeof(target), "%s/rec.xpr", dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", target);
	write_text(victim, "precious\n");
	ck_assert_int_eq(symlink(victim, tmp), 0);
	ck_assert_int_eq(safe_out_open(&o, target, ".tmp", SAFE_FILE_MODE, why, sizeof(why)), -EEXIST);
	ck_assert_ptr_nonnull(strstr(why, "rec.xpr.tmp"));
	assert_text(victim, "precious\n");
	/* A dangling link is no better. */
	unlink(victim);
	ck_assert_int_eq(safe_out_open(&o, target, ".tmp", SAFE_FILE_MODE, why, sizeof(why)), -EEXIST);
	ck_assert_int_eq(access(victim, F_OK), -1);
	unlink(tmp);
}
END_TEST

START_TEST(test_lock_file_is_exclusive_and_removed)
{
	char path[128];
	int a, b;

	snprintf(path, sizeof(path), "%s/x.lock", dir);
	a = lock_file_acquire(path, 1);
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(lock_file_acquire(path, 1), -EBUSY);
	lock_file_release(a, path);
	ck_assert_int_eq(access(path, F_OK), -1);
	b = lock_file_acquire(path, 1);
	ck_assert_int_ge(b, 0);
	lock_file_release(b, path);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* A link planted at the lock's name is not followed. */
	ck_assert_int_eq(symlink("/etc/passwd", path), 0);
	ck_assert_int_lt(lock_file_acquire(path, 1), 0);
	unlink(path);
}
END_TEST

/*
 * The race the removal invites: B opened the file before A removed it and
 * got its flock after.  B must notice its lock is on a dead inode and take
 * the live one instead, so B and a newcomer C never both hold the lock.
 */
START_TEST(test_lock_file_taker_racing_removal_retries)
{
	char path[128];
	int a, stale, c;

	snprintf(path, sizeof(path), "%s/race.lock", dir);
	a = lock_file_acquire(path, 1);
	ck_assert_int_ge(a, 0);
	stale = open(path, O_RDWR); /* B's open, before A releases */
	ck_assert_int_ge(stale, 0);
	lock_file_release(a, path);
	c = lock_file_acquire(path, 1); /* C creates a fresh file */
	ck_assert_int_ge(c, 0);
	/* B's flock on the old inode succeeds, but the name is C's: B must not count it. */
	ck_assert_int_eq(flock(stale, LOCK_EX | LOCK_NB), 0);
	ck_assert_int_eq(lock_file_acquire(path, 1), -EBUSY);
	close(stale);
	lock_file_release(c, path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("helpers");

	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_add_test(tc, test_json_string_escapes_everything_json_cannot_carry);
	tcase_add_test(tc, test_duration_range_prints_both_bounds);
	tcase_add_test(tc, test_sampling_text_says_off);
	tcase_add_test(tc, test_ipv4_mapped_address_is_the_ipv4_source);
	tcase_add_test(tc, test_ifname_rules_and_pin_paths);
	tcase_add_test(tc, test_safe_out_replaces_links_and_leaves_no_partial_file);
	tcase_add_test(tc, test_safe_out_fixed_temporary_is_exclusive);
	tcase_add_test(tc, test_lock_file_is_exclusive_and_removed);
	tcase_add_test(tc, test_lock_file_taker_racing_removal_retries);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
