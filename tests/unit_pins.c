// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Removing a pin directory (user/lib/sys/pins.c) on a scratch tree shaped like the pin root. */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pins.h"

static char root[] = "/tmp/unit_pins.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(root));
}

static void teardown(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		fprintf(stderr, "cleanup of %s failed\n", root);
	snprintf(root, sizeof(root), "/tmp/unit_pins.XXXXXX");
}

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
}

/* An interface's pin directory with every pin `load` makes. */
static void make_pins(const char *ifname, char *dir, size_t len)
{
	char ns[256];
	int i;

	ck_assert_int_eq(pin_netns_dir(root, 5, ns, sizeof(ns)), 0);
	mkdir(ns, 0700);
	ck_assert_int_eq(pin_if_dir(root, 5, ifname, dir, len), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	for (i = 0; i < PACER_MAP_MAX; i++)
		touch(dir, pacer_maps[i].pin_name);
	touch(dir, "prog");
}

START_TEST(test_last_interface_takes_its_namespace_directory)
{
	char dir[256], ns[256];

	make_pins("eth0", dir, sizeof(dir));
	ck_assert_int_eq(pacer_remove_pin_dir(dir), 0);
	ck_assert(!exists(dir));
	pin_netns_dir(root, 5, ns, sizeof(ns));
	ck_assert(!exists(ns));
	ck_assert(exists(root));
}
END_TEST

START_TEST(test_other_interfaces_keep_the_namespace_directory)
{
	char a[256], b[256], path[300];

	make_pins("eth0", a, sizeof(a));
	make_pins("eth1", b, sizeof(b));
	ck_assert_int_eq(pacer_remove_pin_dir(a), 0);
	ck_assert(!exists(a));
	snprintf(path, sizeof(path), "%s/%s", b, pacer_maps[PACER_MAP_SK].pin_name);
	ck_assert(exists(path));
}
END_TEST

START_TEST(test_missing_pins_are_not_an_error)
{
	char dir[256], path[300];

	make_pins("eth0", dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/prog", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", dir, pacer_maps[PACER_MAP_STATS].pin_name);
	unlink(path);
	ck_assert_int_eq(pacer_remove_pin_dir(dir), 0);
	ck_assert(!exists(dir));
	ck_assert_int_eq(pacer_remove_pin_dir(dir), 0); /* again: nothing left to do */
}
END_TEST

/* A file that is not a pin is not ours to delete: the directory stays and the caller hears why. */
START_TEST(test_a_foreign_file_is_left_and_reported)
{
	char dir[256], path[300];

	make_pins("eth0", dir, sizeof(dir));
	touch(dir, "notes.txt");
	ck_assert_int_eq(pacer_remove_pin_dir(dir), -ENOTEMPTY);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	ck_assert(exists(path));
	snprintf(path, sizeof(path), "%s/%s", dir, pacer_maps[PACER_MAP_SK].pin_name);
	ck_assert(!exists(path));
}
END_TEST

START_TEST(test_map_and_pin_names_are_distinct)
{
	int i, j;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		ck_assert_ptr_nonnull(pacer_maps[i].pin_name);
		ck_assert_ptr_null(strchr(pacer_maps[i].pin_name, '/'));
		ck_assert_str_ne(pacer_maps[i].pin_name, "prog");
		ck_assert_ptr_nonnull(pacer_maps[i].map_name);
		/* Only the ring buffer has no values to check the size of. */
		ck_assert(!pacer_maps[i].value_size == (i == PACER_MAP_EVENTS));
		for (j = 0; j < i; j++) {
			ck_assert_str_ne(pacer_maps[i].pin_name, pacer_maps[j].pin_name);
			ck_assert_str_ne(pacer_maps[i].map_name, pacer_maps[j].map_name);
			/* The kernel keeps a map name's first 15 bytes: those must differ too. */
			ck_assert(strncmp(pacer_maps[i].map_name, pacer_maps[j].map_name, 15));
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pins");
	TCase *tc = tcase_create("pins");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_last_interface_takes_its_namespace_directory);
	tcase_add_test(tc, test_other_interfaces_keep_the_namespace_directory);
	tcase_add_test(tc, test_missing_pins_are_not_an_error);
	tcase_add_test(tc, test_a_foreign_file_is_left_and_reported);
	tcase_add_test(tc, test_map_and_pin_names_are_distinct);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
