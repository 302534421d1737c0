// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The compiled classifier (include/pacer_cls.h, user/lib/policy/class_compile.c)
 * against the ordered walk: on random class lists of 1 to
 * PACER_MAX_CLASSES classes with every term, and random packets drawn
 * near the lists' edges (port bounds and their neighbours, addresses
 * inside and just outside each prefix, both families, fragments without
 * ports, SYN and SYN-ACK, VLAN ids and none), the first class the tables
 * give is the walk's, for every packet.  Also: the lowest-bit helper the
 * datapath uses instead of a count-trailing-zeros instruction, and the
 * refusal of a mask that is not a prefix.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "class_compile.h"
#include "pacer_classify.h"
#include "pacer_hash.h"
#include "lib_classgen.h"

static struct pacer_cls_compiled *cc;

START_TEST(test_compiled_is_the_walk)
{
	static struct pacer_class c[PACER_MAX_CLASSES];
	char err[128];
	long packets = 0, matched = 0;
	int list, k, i;

	cc = malloc(sizeof(*cc));
	ck_assert_ptr_nonnull(cc);
	for (list = 0; list < 400; list++) {
		int n = list < 100 ? 1 + (int)classgen_below(8) : 1 + (int)classgen_below(PACER_MAX_CLASSES);

		if (list % 50 == 0)
			n = PACER_MAX_CLASSES; /* the limit, now and then */
		for (i = 0; i < n; i++)
			classgen_class(&c[i], i);
		ck_assert_int_eq(pacer_cls_compile(c, n, cc, err, sizeof(err)), 0);
		for (k = 0; k < 2000; k++) {
			struct pacer_pkt p;
			int want, got;

			classgen_pkt(&p);
			want = pacer_cls_walk(c, n, &p);
			got = pacer_cls_lookup(cc, &p);
			if (want != got) {
				fprintf(stderr, "list %d (%d classes), packet %d: walk %d, compiled %d\n", list, n, k,
					want, got);
				ck_abort_msg("the compiled classifier disagrees with the walk");
			}
			packets++;
			matched += want >= 0;
		}
	}
	/* The draw must exercise both outcomes, or the agreement says little. */
	ck_assert_int_gt(matched, packets / 10);
	ck_assert_int_lt(matched, packets - packets / 10);
	free(cc);
}
END_TEST

/* Hand-written lists whose order decides: an earlier, wider class wins; a later, narrower one too when first. */
START_TEST(test_first_match_order)
{
	struct pacer_class c[3];
	struct pacer_pkt p;
	char err[128];

	cc = malloc(sizeof(*cc));
	ck_assert_ptr_nonnull(cc);
	memset(c, 0, sizeof(c));
	/* 0: UDP dport 53; 1: UDP any; 2: everything. */
	c[0].m.terms = PACER_M_PROTO | PACER_M_DPORT;
	c[0].m.proto = PACER_IPPROTO_UDP;
	c[0].m.dport_lo = c[0].m.dport_hi = 53;
	c[1].m.terms = PACER_M_PROTO;
	c[1].m.proto = PACER_IPPROTO_UDP;
	ck_assert_int_eq(pacer_cls_compile(c, 3, cc, err, sizeof(err)), 0);
	memset(&p, 0, sizeof(p));
	p.kind = PACER_PKT_V4;
	p.proto = PACER_IPPROTO_UDP;
	p.l4 = 1;
	p.dport = 53;
	p.vlan = PACER_VLAN_NONE;
	ck_assert_int_eq(pacer_cls_lookup(cc, &p), 0);
	p.dport = 54;
	ck_assert_int_eq(pacer_cls_lookup(cc, &p), 1);
	p.l4 = 0; /* a non-first fragment: no ports, so not class 0 */
	p.dport = 0;
	ck_assert_int_eq(pacer_cls_lookup(cc, &p), 1);
	p.proto = PACER_IPPROTO_TCP;
	ck_assert_int_eq(pacer_cls_lookup(cc, &p), 2);
	free(cc);
}
END_TEST

START_TEST(test_lowest_bit)
{
	struct pacer_cls_set s;
	int b, w;

	for (b = 0; b < 64; b++) {
		ck_assert_uint_eq(pacer_cls_lowest_bit(1ULL << b), (unsigned)b);
		ck_assert_uint_eq(pacer_cls_lowest_bit(~0ULL << b), (unsigned)b);
	}
	for (w = 0; w < PACER_CLS_WORDS; w++) {
		memset(&s, 0, sizeof(s));
		s.w[w] = 1ULL << 63 | 1ULL << 5;
		ck_assert_int_eq(pacer_cls_first(&s, PACER_CLS_WORDS), w * 64 + 5);
		/* Words beyond the bank's count are not read. */
		ck_assert_int_eq(pacer_cls_first(&s, (__u32)w), -1);
	}
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pacer_cls_first(&s, PACER_CLS_WORDS), -1);
}
END_TEST

START_TEST(test_refuses_a_mask_not_a_prefix)
{
	struct pacer_class c;
	char err[128] = "";

	cc = malloc(sizeof(*cc));
	ck_assert_ptr_nonnull(cc);
	memset(&c, 0, sizeof(c));
	strcpy(c.name, "holes");
	c.m.terms = PACER_M_SRC;
	c.m.family = 4;
	c.m.src_mask_lo = 0xff00ffu; /* 255.0.255.0 in memory order on this host: not a prefix */
	ck_assert_int_eq(pacer_cls_compile(&c, 1, cc, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "'holes'") && strstr(err, "source mask"), "%s", err);
	ck_assert_int_eq(pacer_cls_compile(&c, 0, cc, err, sizeof(err)), -EINVAL);
	free(cc);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("classcompile");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_first_match_order);
	tcase_add_test(tc, test_lowest_bit);
	tcase_add_test(tc, test_refuses_a_mask_not_a_prefix);
	suite_add_tcase(s, tc);
	tc = tcase_create("property");
	tcase_set_timeout(tc, 300);
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_add_test(tc, test_compiled_is_the_walk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
