// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading bpf_xdp_query()'s answer (user/lib/sys/xdp_query.c) for every attach mode. */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <linux/if_link.h>
#include "xdp_query.h"

START_TEST(test_each_mode_names_its_program)
{
	static const struct {
		uint8_t attach_mode;
		uint32_t prog_id, drv_prog_id, skb_prog_id;
		uint32_t want_id;
		const char *want_mode;
	} cases[] = {
		{ XDP_ATTACHED_DRV, 11, 11, 0, 11, "native" },
		{ XDP_ATTACHED_SKB, 12, 0, 12, 12, "skb" },
		{ XDP_ATTACHED_HW, 13, 0, 0, 13, "hw" },
		/* Several modes at once: the kernel leaves prog_id 0; native wins. */
		{ XDP_ATTACHED_MULTI, 0, 21, 22, 21, "native" },
		{ XDP_ATTACHED_MULTI, 0, 0, 22, 22, "skb" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q, .attach_mode = cases[i].attach_mode,
			    .prog_id = cases[i].prog_id, .drv_prog_id = cases[i].drv_prog_id,
			    .skb_prog_id = cases[i].skb_prog_id);
		const char *mode = NULL;
		uint32_t id = 0;

		ck_assert_int_eq(xdp_query_prog(&q, &id, &mode), 0);
		ck_assert_uint_eq(id, cases[i].want_id);
		ck_assert_str_eq(mode, cases[i].want_mode);
	}
}
END_TEST

START_TEST(test_nothing_attached_is_enoent)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q, .attach_mode = XDP_ATTACHED_NONE);
	const char *mode = "untouched";
	uint32_t id = 7;

	ck_assert_int_eq(xdp_query_prog(&q, &id, &mode), -ENOENT);
	ck_assert_uint_eq(id, 7);
	ck_assert_str_eq(mode, "untouched");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xdp_query");
	TCase *tc = tcase_create("xdp_query");

	tcase_add_test(tc, test_each_mode_names_its_program);
	tcase_add_test(tc, test_nothing_attached_is_enoent);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
