// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The streaming JSON writer (user/lib/out/json_writer.c): commas, nesting, escaping, misuse. */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_writer.h"

static char *buf;
static size_t buf_len;
static FILE *out;
static struct json_writer w;

static void open_out(void)
{
	buf = NULL;
	out = open_memstream(&buf, &buf_len);
	ck_assert_ptr_nonnull(out);
	jsonw_init(&w, out);
}

/* What was written, and jsonw_finish's verdict. */
static const char *written(int *finish)
{
	*finish = jsonw_finish(&w);
	fclose(out);
	return buf;
}

static void close_out(void)
{
	free(buf);
}

START_TEST(test_compact_document_has_commas_and_nesting_right)
{
	int err;

	open_out();
	jsonw_start_object(&w);
	jsonw_string_field(&w, "name", "eth0");
	jsonw_uint_field(&w, "big", UINT64_MAX);
	jsonw_int_field(&w, "neg", -7);
	jsonw_float_field(&w, "ratio", 0.125);
	jsonw_float_field_fmt(&w, "s", "%.3f", 2.0);
	jsonw_bool_field(&w, "ok", true);
	jsonw_null_field(&w, "none");
	jsonw_name(&w, "rows");
	jsonw_start_array(&w);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "a", 1);
	jsonw_end_object(&w);
	jsonw_start_object(&w);
	jsonw_end_object(&w);
	jsonw_start_array(&w);
	jsonw_uint(&w, 1);
	jsonw_uint(&w, 2);
	jsonw_end_array(&w);
	jsonw_end_array(&w);
	jsonw_start_array_field(&w, "empty");
	jsonw_end_array(&w);
	jsonw_start_object_field(&w, "obj");
	jsonw_end_object(&w);
	jsonw_end_object(&w);
	ck_assert_str_eq(written(&err),
			 "{\"name\":\"eth0\",\"big\":18446744073709551615,\"neg\":-7,\"ratio\":0.125,\"s\":2.000,"
			 "\"ok\":true,\"none\":null,\"rows\":[{\"a\":1},{},[1,2]],\"empty\":[],\"obj\":{}}\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

struct sample {
	uint32_t small;
	double ratio;
	uint64_t big;
	int flag, other_flag;
};

static const struct jsonw_member sample_members[] = {
	JSONW_U64(struct sample, big, "big"),
	JSONW_U32(struct sample, small, "small"),
	JSONW_DOUBLE(struct sample, ratio, "ratio"),
	JSONW_INT_BOOL(struct sample, flag, "flag"),
	JSONW_INT_BOOL(struct sample, other_flag, "other"),
};

/* Members are read at their offsets with their own widths, in the table's order. */
START_TEST(test_member_tables_write_each_member)
{
	struct sample v = { .small = 4000000000u, .ratio = NAN, .big = UINT64_MAX, .flag = 7, .other_flag = 0 };
	int err;

	open_out();
	jsonw_start_object(&w);
	JSONW_MEMBERS(&w, &v, sample_members);
	v.ratio = 0.5;
	jsonw_start_object_field(&w, "again");
	jsonw_members(&w, &v, sample_members + 2, 1);
	jsonw_end_object(&w);
	jsonw_end_object(&w);
	ck_assert_str_eq(written(&err), "{\"big\":18446744073709551615,\"small\":4000000000,\"ratio\":null,"
					"\"flag\":true,\"other\":false,\"again\":{\"ratio\":0.5}}\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

START_TEST(test_each_top_level_value_is_one_line)
{
	int err;

	open_out();
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "n", 1);
	jsonw_end_object(&w);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "n", 2);
	jsonw_end_object(&w);
	ck_assert_str_eq(written(&err), "{\"n\":1}\n{\"n\":2}\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

START_TEST(test_names_and_strings_are_escaped)
{
	int err;

	open_out();
	jsonw_start_object(&w);
	jsonw_string_field(&w, "a\"b\\", "q\"b\\s\n\t\x01\x1f\x7f");
	jsonw_string_field(&w, "utf8", "h\xc3\xa9t\xe2\x82\xac\xf0\x9f\x98\x80");
	jsonw_string_field(&w, "bad", "a\x80" "b\xc3" "c\xc0\xaf" "d\xed\xa0\x80" "e\xff");
	jsonw_end_object(&w);
	ck_assert_str_eq(written(&err),
			 "{\"a\\\"b\\\\\":\"q\\\"b\\\\s\\u000a\\u0009\\u0001\\u001f\\u007f\","
			 "\"utf8\":\"h\xc3\xa9t\xe2\x82\xac\xf0\x9f\x98\x80\","
			 "\"bad\":\"a\\ufffdb\\ufffdc\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffde\\ufffd\"}\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

START_TEST(test_non_finite_numbers_become_null)
{
	int err;

	open_out();
	jsonw_start_array(&w);
	jsonw_float(&w, NAN);
	jsonw_float(&w, INFINITY);
	jsonw_float_fmt(&w, "%.1f", -INFINITY);
	jsonw_float(&w, 1e-300);
	jsonw_end_array(&w);
	ck_assert_str_eq(written(&err), "[null,null,null,1e-300]\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

START_TEST(test_pretty_indents_one_tab_per_level)
{
	int err;

	open_out();
	jsonw_pretty(&w, true);
	jsonw_start_object(&w);
	jsonw_uint_field(&w, "a", 1);
	jsonw_name(&w, "b");
	jsonw_start_array(&w);
	jsonw_bool(&w, false);
	jsonw_start_object(&w);
	jsonw_end_object(&w);
	jsonw_end_array(&w);
	jsonw_end_object(&w);
	ck_assert_str_eq(written(&err), "{\n\t\"a\": 1,\n\t\"b\": [\n\t\tfalse,\n\t\t{}\n\t]\n}\n");
	ck_assert_int_eq(err, 0);
	close_out();
}
END_TEST

/* Each misuse alone: the writer must report it, not write silently wrong JSON. */
START_TEST(test_misuse_is_reported)
{
	int err;

	switch (_i) {
	case 0: /* unclosed */
		open_out();
		jsonw_start_object(&w);
		break;
	case 1: /* a value in an object without a name */
		open_out();
		jsonw_start_object(&w);
		jsonw_uint(&w, 1);
		jsonw_end_object(&w);
		break;
	case 2: /* a name outside an object */
		open_out();
		jsonw_start_array(&w);
		jsonw_name(&w, "x");
		jsonw_uint(&w, 1);
		jsonw_end_array(&w);
		break;
	case 3: /* closing the wrong container */
		open_out();
		jsonw_start_object(&w);
		jsonw_end_array(&w);
		jsonw_end_object(&w);
		break;
	case 4: /* a name without its value */
		open_out();
		jsonw_start_object(&w);
		jsonw_name(&w, "x");
		jsonw_end_object(&w);
		break;
	case 5: /* two names in a row */
		open_out();
		jsonw_start_object(&w);
		jsonw_name(&w, "x");
		jsonw_uint_field(&w, "y", 1);
		jsonw_end_object(&w);
		break;
	default: /* closing more than was opened */
		open_out();
		jsonw_start_array(&w);
		jsonw_end_array(&w);
		jsonw_end_array(&w);
		break;
	}
	written(&err);
	ck_assert_int_eq(err, -EINVAL);
	close_out();
}
END_TEST

START_TEST(test_nesting_deeper_than_the_limit_is_reported)
{
	int i, err;

	open_out();
	for (i = 0; i <= JSONW_MAX_DEPTH; i++)
		jsonw_start_array(&w);
	written(&err);
	ck_assert_int_eq(err, -EINVAL);
	close_out();
}
END_TEST

START_TEST(test_write_error_is_reported)
{
	FILE *full = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(full);
	setvbuf(full, NULL, _IONBF, 0);
	jsonw_init(&w, full);
	jsonw_start_object(&w);
	jsonw_end_object(&w);
	ck_assert_int_eq(jsonw_finish(&w), -EIO);
	fclose(full);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json_writer");
	TCase *tc = tcase_create("json_writer");

	tcase_add_test(tc, test_compact_document_has_commas_and_nesting_right);
	tcase_add_test(tc, test_member_tables_write_each_member);
	tcase_add_test(tc, test_each_top_level_value_is_one_line);
	tcase_add_test(tc, test_names_and_strings_are_escaped);
	tcase_add_test(tc, test_non_finite_numbers_become_null);
	tcase_add_test(tc, test_pretty_indents_one_tab_per_level);
	tcase_add_loop_test(tc, test_misuse_is_reported, 0, 7);
	tcase_add_test(tc, test_nesting_deeper_than_the_limit_is_reported);
	tcase_add_test(tc, test_write_error_is_reported);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
