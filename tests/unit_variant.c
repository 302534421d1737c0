// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the program variant a configuration needs
 * (user/lib/policy/variant.c) and of the stages a change may turn on
 * (user/lib/opts/change_stages.c): what the CLI makes the running program
 * carry before a change and settles to after it.
 */
#include <check.h>
#include "check_run.h"
#include <string.h>
#include "pacer_class.h"
#include "change_stages.h"
#include "variant.h"

/* What the CLI swaps in for a configuration: the stages it uses, no more. */
START_TEST(test_the_variant_a_configuration_needs)
{
	struct pacer_config cfg = { 0 };
	struct pacer_class c[2] = { { .mode = PACER_MODE_GLOBAL }, { .mode = PACER_MODE_OBSERVE } };

	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), 0);
	cfg.list_sel = PACER_LIST_V4;
	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), PACER_F_LISTS);
	cfg.deny_mode = PACER_MODE_OBSERVE;
	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), PACER_F_LISTS | PACER_F_OBSERVE);
	cfg.list_sel = 0; /* the deny list's own mode means nothing without a list */
	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), 0);
	ck_assert_uint_eq(variant_needed(&cfg, 1000, NULL, 0), PACER_F_BUDGET);
	cfg.sample_pkt_thresh = 1;
	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), PACER_F_SAMPLING);
	cfg.sample_pkt_thresh = 0;
	cfg.class_sel = PACER_CLASS_SEL(1, 1);
	ck_assert_uint_eq(variant_needed(&cfg, 0, c, 1), PACER_F_CLASSES);
	cfg.class_sel = PACER_CLASS_SEL(1, 2);
	ck_assert_uint_eq(variant_needed(&cfg, 0, c, 2), PACER_F_CLASSES | PACER_F_OBSERVE);
	cfg.class_sel = 0; /* classes read but not selected: none run */
	ck_assert_uint_eq(variant_needed(&cfg, 0, c, 2), 0);
	cfg.mode = PACER_MODE_OBSERVE;
	ck_assert_uint_eq(variant_needed(&cfg, 0, NULL, 0), PACER_F_OBSERVE);
}
END_TEST

/* A change's stages: a superset of what it turns on, never a stage it only turns off. */
START_TEST(test_the_stages_a_change_may_turn_on)
{
	struct live_opts l;
	struct budget_opts b;
	static struct class_conf cc;
	struct conf_prefix p = { .family = 4, .len = 32 };

	memset(&l, 0, sizeof(l));
	memset(&b, 0, sizeof(b));
	class_conf_init(&cc, NULL);
	ck_assert_uint_eq(change_stages(&l, &b, &cc), 0);
	ck_assert_uint_eq(change_stages(NULL, NULL, NULL), 0);
	l.mode_set = true;
	l.mode.mode = PACER_MODE_ENFORCE;
	ck_assert_uint_eq(change_stages(&l, NULL, NULL), 0);
	l.mode.mode = PACER_MODE_OBSERVE;
	ck_assert_uint_eq(change_stages(&l, NULL, NULL), PACER_F_OBSERVE);
	memset(&l, 0, sizeof(l));
	l.deny_mode_set = true;
	l.deny_mode = PACER_MODE_OBSERVE;
	ck_assert_uint_eq(change_stages(&l, NULL, NULL), PACER_F_OBSERVE);
	memset(&l, 0, sizeof(l));
	l.sample_pkt_set = true; /* 0: sampling switched off */
	ck_assert_uint_eq(change_stages(&l, NULL, NULL), 0);
	l.sample_pkt = 1;
	ck_assert_uint_eq(change_stages(&l, NULL, NULL), PACER_F_SAMPLING);
	b.set_budget = true;
	b.off = true;
	ck_assert_uint_eq(change_stages(NULL, &b, NULL), 0);
	b.off = false;
	ck_assert_uint_eq(change_stages(NULL, &b, NULL), PACER_F_BUDGET);
	memset(&b, 0, sizeof(b));
	b.set_reserve = true; /* may be all the running budget needs changed: the budget's stage */
	ck_assert_uint_eq(change_stages(NULL, &b, NULL), PACER_F_BUDGET);
	cc.classes_given = true; /* --class none */
	ck_assert_uint_eq(change_stages(NULL, NULL, &cc), 0);
	cc.n = 2;
	ck_assert_uint_eq(change_stages(NULL, NULL, &cc), PACER_F_CLASSES);
	cc.cls[1].c.mode = PACER_MODE_OBSERVE;
	ck_assert_uint_eq(change_stages(NULL, NULL, &cc), PACER_F_CLASSES | PACER_F_OBSERVE);
	cc.n = 0;
	cc.exempt.given = true; /* --exempt none */
	ck_assert_uint_eq(change_stages(NULL, NULL, &cc), 0);
	cc.deny.given = true;
	cc.deny.n = 1;
	cc.deny.p = &p;
	ck_assert_uint_eq(change_stages(NULL, NULL, &cc), PACER_F_LISTS);
	cc.deny.p = NULL;
	cc.deny.n = 0;
	class_conf_free(&cc);
}
END_TEST

START_TEST(test_the_stages_in_words)
{
	char buf[96];

	ck_assert_str_eq(variant_describe(0, buf, sizeof(buf)), "none");
	ck_assert_str_eq(variant_describe(PACER_F_LISTS | PACER_F_BUDGET, buf, sizeof(buf)),
			 "lists, budget");
	ck_assert_str_eq(variant_describe(PACER_VARIANT_ALL, buf, sizeof(buf)),
			 "classes, lists, budget, sampling, observe");
	ck_assert_str_eq(variant_feature_name(PACER_F_OBSERVE), "observe");
	ck_assert_ptr_null(variant_feature_name(PACER_F_LISTS | PACER_F_BUDGET));
	ck_assert_ptr_null(variant_feature_name(1u << PACER_F_COUNT));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("program variants");
	TCase *t = tcase_create("stages");

	tcase_add_test(t, test_the_variant_a_configuration_needs);
	tcase_add_test(t, test_the_stages_a_change_may_turn_on);
	tcase_add_test(t, test_the_stages_in_words);
	suite_add_tcase(s, t);
	return run_suite(s);
}
