// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the generator's pure logic in the library: the frame
 * builder (layout, checksums, the per-frame checksum completion the
 * generator's program does) and the Zipf slot table.
 */
#include <check.h>
#include "check_run.h"
#include <math.h>
#include <string.h>
#include "frame.h"
#include "zipf.h"

static struct frame_spec spec(const char *src, const char *dst)
{
	struct frame_spec s = { .dmac = { 2, 0, 0, 0, 0, 1 }, .smac = { 2, 0, 0, 0, 0, 2 },
				.sport = 40000, .dport = 9, .payload = 6, .fill = 'p', .csum = true };

	ck_assert_int_eq(parse_address(src, &s.src), 0);
	ck_assert_int_eq(parse_address(dst, &s.dst), 0);
	return s;
}

START_TEST(test_ipv4_frame_layout_and_header_checksum)
{
	struct frame_spec s = spec("10.1.2.3", "10.255.0.1");
	uint8_t b[128];
	size_t l3, len = frame_build(b, sizeof(b), &s, &l3);

	ck_assert_uint_eq(len, 14 + 20 + 8 + 6);
	ck_assert_uint_eq(l3, 14);
	ck_assert_uint_eq(b[12] << 8 | b[13], 0x0800);
	ck_assert_uint_eq(b[l3], 0x45);
	ck_assert_uint_eq(b[l3 + 2] << 8 | b[l3 + 3], 34); /* total length */
	ck_assert_uint_eq(b[l3 + 8], 64); /* TTL by default */
	ck_assert_uint_eq(b[l3 + 9], 17);
	ck_assert_mem_eq(b + l3 + 12, "\x0a\x01\x02\x03", 4);
	ck_assert_uint_eq(b[l3 + 20] << 8 | b[l3 + 21], 40000);
	ck_assert_uint_eq(b[l3 + 24] << 8 | b[l3 + 25], 14); /* UDP length */
	/* A header with a right checksum sums to all ones. */
	ck_assert_uint_eq(frame_fold(frame_sum_le16(b + l3, 20)), 0xffff);
	ck_assert_uint_eq(frame_build(b, len - 1, &s, NULL), 0);
	s.ttl = 1;
	ck_assert_uint_eq(frame_build(b, sizeof(b), &s, &l3), len);
	ck_assert_uint_eq(b[l3 + 8], 1);
	ck_assert_uint_eq(frame_fold(frame_sum_le16(b + l3, 20)), 0xffff);
}
END_TEST

/* TTL and hop limit: 64 unless set (send_frames --ttl, the router test's expiring frame). */
START_TEST(test_ttl_default_and_set)
{
	struct frame_spec s = spec("10.1.2.3", "10.255.0.1");
	uint8_t b[128];
	size_t l3;

	frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(b[l3 + 8], 64);
	s.ttl = 1;
	frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(b[l3 + 8], 1);
	ck_assert_uint_eq(frame_fold(frame_sum_le16(b + l3, 20)), 0xffff);
	s = spec("fd00:1::5", "fd00:255::1");
	frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(b[l3 + 7], 64);
	s.ttl = 2;
	frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(b[l3 + 7], 2);
}
END_TEST

START_TEST(test_vlan_tags_and_ipv6_udp_checksum)
{
	struct frame_spec s = spec("fd00:1::5", "fd00:255::1");
	uint8_t b[128], ph[40] = { 0 };
	size_t l3, len;

	s.n_vlans = 2;
	s.vlan_tci[0] = 42;
	s.vlan_tci[1] = 7;
	len = frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(l3, 22);
	ck_assert_uint_eq(len, 22 + 40 + 8 + 6);
	ck_assert_uint_eq(b[12] << 8 | b[13], FRAME_ETH_P_8021AD);
	ck_assert_uint_eq(b[15], 42);
	ck_assert_uint_eq(b[16] << 8 | b[17], FRAME_ETH_P_8021Q);
	ck_assert_uint_eq(b[19], 7);
	ck_assert_uint_eq(b[20] << 8 | b[21], 0x86dd);
	ck_assert_uint_eq(b[l3 + 7], 64); /* hop limit by default */
	/* UDP checksum: pseudo-header + UDP sums to all ones. */
	memcpy(ph, b + l3 + 8, 32);
	ph[35] = 14;
	ph[39] = 17;
	ck_assert_uint_eq(frame_fold((uint64_t)frame_sum_le16(ph, 40) + frame_sum_le16(b + l3 + 40, 14)),
			  0xffff);
	s.ttl = 1;
	frame_build(b, sizeof(b), &s, &l3);
	ck_assert_uint_eq(b[l3 + 7], 1);
}
END_TEST

/* What bpf/gen.bpf.c does per frame: the base plus the source (and IPv6: the port). */
static uint16_t program_csum(uint32_t base, const uint8_t *src, size_t n, uint16_t sport_be)
{
	return (uint16_t)~frame_fold((uint64_t)base + frame_sum_le16(src, n) +
				     (n == 16 ? sport_be : 0));
}

START_TEST(test_generator_checksum_base_completes_to_the_real_checksum)
{
	int fam;

	for (fam = 4; fam <= 6; fam += 2) {
		struct frame_spec t = spec(fam == 4 ? "0.0.0.0" : "::", fam == 4 ? "10.255.0.1" : "fd00:255::1");
		struct frame_spec r = spec(fam == 4 ? "10.200.3.4" : "fd00:200:0:7::", fam == 4 ? "10.255.0.1" : "fd00:255::1");
		uint8_t tb[128], rb[128];
		size_t l3, len, n = fam == 4 ? 4 : 16, at = fam == 4 ? 10 : 46;
		uint16_t sport_be = (uint16_t)(40000 >> 8 | (40000 & 0xff) << 8), c;

		t.csum = false;
		t.sport = 0;
		len = frame_build(tb, sizeof(tb), &t, &l3);
		ck_assert_uint_eq(frame_build(rb, sizeof(rb), &r, NULL), len);
		c = program_csum(frame_csum_base(tb, len, l3, fam), r.src.bytes, n, sport_be);
		ck_assert_uint_eq(c, (uint16_t)(rb[l3 + at] | rb[l3 + at + 1] << 8));
	}
}
END_TEST

START_TEST(test_zipf_table_follows_the_distribution)
{
	struct zipf z = { 0 };
	uint32_t j, nslots = 1u << GEN_ZIPF_SLOTS_LOG2, head = 0;
	double sum = 0, d;

	ck_assert_int_eq(zipf_build(&z, 1000, 1.0), 0);
	for (j = 0; j < 1000; j++)
		sum += zipf_p(&z, j);
	ck_assert_double_eq_tol(sum, 1.0, 1e-9);
	/* Source 0 has P = 1/H(1000) ~ 0.1336: that share of the slots, to a slot. */
	for (j = 0; j < nslots && z.slots[j].first == 0; j++)
		head++;
	ck_assert_double_eq_tol((double)head / nslots, zipf_p(&z, 0), 2.0 / nslots);
	ck_assert_uint_eq(z.slots[nslots - 1].first + z.slots[nslots - 1].span, 1000);
	/* Few draws see about that many sources; very many see them all. */
	d = zipf_expected_distinct(&z, 1); /* 1 - sum p^2 / 2 + ...: the head repeats */
	ck_assert(d < 1.0 && d > 0.98);
	d = zipf_expected_distinct(&z, 1e9);
	ck_assert_double_eq_tol(d, 1000, 1e-6);
	zipf_free(&z);
	ck_assert_ptr_null(z.slots);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("generator logic");

	tcase_add_test(tc, test_ipv4_frame_layout_and_header_checksum);
	tcase_add_test(tc, test_ttl_default_and_set);
	tcase_add_test(tc, test_vlan_tags_and_ipv6_udp_checksum);
	tcase_add_test(tc, test_generator_checksum_base_completes_to_the_real_checksum);
	tcase_add_test(tc, test_zipf_table_follows_the_distribution);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
