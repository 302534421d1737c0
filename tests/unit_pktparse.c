// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The datapath's header parser (include/pacer_parse.h) as userspace runs
 * it (analyze --pcap): every kind of frame at every alignment of its
 * buffer.  The Makefile also builds this test with UBSan
 * ($(BUILD)/tests/san/), where a misaligned typed load of a header field
 * fails it.
 */
#include "pacer_parse.h"
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#define FRAME_MAX 128

struct frame {
	uint8_t b[FRAME_MAX];
	size_t len;
};

/* Ethernet header, then tags VLAN tags, then proto. */
static size_t put_eth(uint8_t *b, int tags, uint16_t proto)
{
	size_t o = 12;
	int i;

	memset(b, 0, FRAME_MAX);
	for (i = 0; i < tags; i++) {
		b[o] = i ? 0x81 : 0x88; /* 802.1ad outside, 802.1Q inside */
		b[o + 1] = i ? 0x00 : 0xa8;
		b[o + 3] = (uint8_t)(i + 1); /* VLAN id */
		o += 4;
	}
	b[o] = (uint8_t)(proto >> 8);
	b[o + 1] = (uint8_t)proto;
	return o + 2;
}

static struct frame v4(int tags, int ihl)
{
	struct frame f;
	size_t ip = put_eth(f.b, tags, ETH_P_IP);

	f.b[ip] = (uint8_t)(0x40 | ihl);
	f.b[ip + 3] = (uint8_t)(ihl * 4 + 8); /* total length */
	memcpy(f.b + ip + 12, "\xc0\x00\x02\x07", 4); /* 192.0.2.7 */
	f.len = ip + (size_t)ihl * 4 + 8;
	return f;
}

static struct frame v6(int tags)
{
	struct frame f;
	size_t ip = put_eth(f.b, tags, ETH_P_IPV6);
	int i;

	f.b[ip] = 0x60;
	for (i = 0; i < 16; i++)
		f.b[ip + 8 + i] = (uint8_t)(0x20 + i);
	f.len = ip + 40;
	return f;
}

/* Parse f copied to every offset 0..7 of an 8-aligned buffer; the kind, the same at each. */
static int parse_everywhere(const struct frame *f, size_t len, struct pacer_src *src)
{
	static uint8_t buf[FRAME_MAX + 8] __attribute__((aligned(8)));
	int kind = -1, k;
	size_t off;

	for (off = 0; off < 8; off++) {
		struct pacer_src s = { 0 };

		memset(buf, 0xee, sizeof(buf));
		memcpy(buf + off, f->b, len);
		k = pacer_parse(buf + off, buf + off + len, &s);
		if (off)
			ck_assert_int_eq(k, kind);
		ck_assert(!off || !memcmp(&s, src, sizeof(s)));
		kind = k;
		*src = s;
	}
	return kind;
}

START_TEST(test_ipv4_at_every_alignment)
{
	static const int tags[] = { 0, 1, 2 };
	struct pacer_src src;
	size_t i;

	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		struct frame f = v4(tags[i], 5), g = v4(tags[i], 7);

		ck_assert_int_eq(parse_everywhere(&f, f.len, &src), PACER_PKT_V4);
		ck_assert_uint_eq(src.lo, htonl(0xc0000207));
		ck_assert_uint_eq(src.hi, 0);
		ck_assert_int_eq(parse_everywhere(&g, g.len, &src), PACER_PKT_V4);
		ck_assert_uint_eq(src.lo, htonl(0xc0000207));
		/* options cut off, header cut off: malformed */
		ck_assert_int_eq(parse_everywhere(&g, g.len - 12, &src), PACER_PKT_MALFORMED);
		ck_assert_int_eq(parse_everywhere(&f, f.len - 9, &src), PACER_PKT_MALFORMED);
	}
}
END_TEST

START_TEST(test_ipv6_at_every_alignment)
{
	static const uint8_t want[16] = { 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
					  0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f };
	struct pacer_src src;
	int tags;

	for (tags = 0; tags <= 2; tags++) {
		struct frame f = v6(tags);

		ck_assert_int_eq(parse_everywhere(&f, f.len, &src), PACER_PKT_V6);
		ck_assert_mem_eq(&src.lo, want, 8);
		ck_assert_mem_eq(&src.hi, want + 8, 8);
		ck_assert_int_eq(parse_everywhere(&f, f.len - 1, &src), PACER_PKT_MALFORMED);
	}
}
END_TEST

START_TEST(test_bad_headers_at_every_alignment)
{
	struct pacer_src src;
	struct frame f = v4(0, 5), g = v6(1), h = v4(3, 5), arp;

	f.b[14] = 0x65; /* version 6 in an IPv4 header */
	ck_assert_int_eq(parse_everywhere(&f, f.len, &src), PACER_PKT_MALFORMED);
	f.b[14] = 0x44; /* IHL 4 */
	ck_assert_int_eq(parse_everywhere(&f, f.len, &src), PACER_PKT_MALFORMED);
	f.b[14] = 0x45;
	f.b[17] = 19; /* total length shorter than the header */
	ck_assert_int_eq(parse_everywhere(&f, f.len, &src), PACER_PKT_MALFORMED);
	g.b[18] = 0x40; /* version 4 in an IPv6 header */
	ck_assert_int_eq(parse_everywhere(&g, g.len, &src), PACER_PKT_MALFORMED);
	ck_assert_int_eq(parse_everywhere(&h, h.len, &src), PACER_PKT_MALFORMED); /* 3 tags */
	ck_assert_int_eq(parse_everywhere(&g, 16, &src), PACER_PKT_MALFORMED); /* tag cut */
	ck_assert_int_eq(parse_everywhere(&g, 13, &src), PACER_PKT_MALFORMED); /* no EtherType */
	arp.len = put_eth(arp.b, 1, 0x0806) + 28;
	ck_assert_int_eq(parse_everywhere(&arp, arp.len, &src), PACER_PKT_NONIP);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pktparse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ipv4_at_every_alignment);
	tcase_add_test(tc, test_ipv6_at_every_alignment);
	tcase_add_test(tc, test_bad_headers_at_every_alignment);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
