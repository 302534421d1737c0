// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Classification as the datapath runs it (include/pacer_pkt.h,
 * include/pacer_classify.h): the full parse of crafted frames at every
 * alignment, every match term on both sides of its edge, the class key
 * and its hash, and the checks userspace runs on a class list
 * (user/lib/policy/classes_check.c).  Also built with UBSan (the parse reads
 * untrusted bytes).
 */
#include "pacer_classify.h"
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "classes_map.h"
#include "prefix_sets.h"

#define FRAME_MAX 192

struct frame {
	uint8_t b[FRAME_MAX];
	size_t len;
};

static const __u64 test_key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

/* Ethernet, an optional VLAN tag (id vlan, or none when vlan < 0), then proto. */
static size_t put_eth(uint8_t *b, int vlan, uint16_t proto)
{
	size_t o = 12;

	memset(b, 0, FRAME_MAX);
	if (vlan >= 0) {
		b[o] = 0x81;
		b[o + 2] = (uint8_t)(0xe0 | (vlan >> 8)); /* priority bits set: not part of the id */
		b[o + 3] = (uint8_t)vlan;
		o += 4;
	}
	b[o] = (uint8_t)(proto >> 8);
	b[o + 1] = (uint8_t)proto;
	return o + 2;
}

/* L4 header at l4: ports and flags (TCP) or ports (UDP); l4len bytes of it kept. */
static void put_l4(uint8_t *l4, uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags)
{
	l4[0] = (uint8_t)(sport >> 8);
	l4[1] = (uint8_t)sport;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
	if (proto == PACER_IPPROTO_TCP) {
		l4[12] = 0x50;
		l4[13] = flags;
	}
}

static size_t l4_len(uint8_t proto)
{
	return proto == PACER_IPPROTO_TCP ? 20 : 8;
}

/* IPv4 198.51.100.7 -> 192.0.2.1, frag_off as given (host order). */
static struct frame v4(int vlan, uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags,
		       uint16_t frag_off)
{
	struct frame f;
	size_t ip = put_eth(f.b, vlan, ETH_P_IP), l4 = ip + 20;

	f.b[ip] = 0x45;
	f.b[ip + 2] = 0;
	f.b[ip + 3] = (uint8_t)(20 + l4_len(proto));
	f.b[ip + 6] = (uint8_t)(frag_off >> 8);
	f.b[ip + 7] = (uint8_t)frag_off;
	f.b[ip + 9] = proto;
	memcpy(f.b + ip + 12, "\xc6\x33\x64\x07", 4);
	memcpy(f.b + ip + 16, "\xc0\x00\x02\x01", 4);
	put_l4(f.b + l4, proto, sport, dport, flags);
	f.len = l4 + l4_len(proto);
	return f;
}

/* The type of extension header i of n: the last is a fragment header when frag is set. */
static uint8_t ext_type(int i, int n, int frag)
{
	return frag && i == n - 1 ? PACER_IPPROTO_FRAGMENT : PACER_IPPROTO_DSTOPTS;
}

/*
 * IPv6 2001:db8::7 -> 2001:db8:1::1 with exts extension headers before L4
 * (destination options, 8 bytes each; the last one a fragment header with
 * frag_off when frag is set).
 */
static struct frame v6(int vlan, uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags,
		       int exts, int frag, uint16_t frag_off)
{
	struct frame f;
	size_t ip = put_eth(f.b, vlan, ETH_P_IPV6), o = ip + 40;
	int i;

	f.b[ip] = 0x60;
	memcpy(f.b + ip + 8, "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x07", 16);
	memcpy(f.b + ip + 24, "\x20\x01\x0d\xb8\0\x01\0\0\0\0\0\0\0\0\0\x01", 16);
	f.b[ip + 6] = exts ? ext_type(0, exts, frag) : proto;
	for (i = 0; i < exts; i++) {
		f.b[o] = i + 1 < exts ? ext_type(i + 1, exts, frag) : proto;
		if (ext_type(i, exts, frag) == PACER_IPPROTO_FRAGMENT) {
			f.b[o + 2] = (uint8_t)(frag_off >> 8);
			f.b[o + 3] = (uint8_t)frag_off;
		}
		o += 8;
	}
	put_l4(f.b + o, proto, sport, dport, flags);
	f.len = o + l4_len(proto);
	return f;
}

/* Parse f (its first len bytes) at every offset 0..7 of an 8-aligned buffer: the same everywhere. */
static int parse_everywhere(const struct frame *f, size_t len, struct pacer_pkt *p)
{
	static uint8_t buf[FRAME_MAX + 8] __attribute__((aligned(8)));
	int kind = -1, k;
	size_t off;

	for (off = 0; off < 8; off++) {
		struct pacer_pkt q;
		struct pacer_src s = { 0, 0 };

		memset(&q, 0x5a, sizeof(q));
		memset(buf, 0xee, sizeof(buf));
		memcpy(buf + off, f->b, len);
		k = pacer_parse_pkt(buf + off, buf + off + len, &q);
		/* The classless parser agrees on the kind and the source. */
		ck_assert_int_eq(pacer_parse(buf + off, buf + off + len, &s) == k ||
					 (k == PACER_PKT_MALFORMED), 1);
		if (k == PACER_PKT_V4 || k == PACER_PKT_V6)
			ck_assert(s.lo == q.src.lo && s.hi == q.src.hi);
		if (off) {
			ck_assert_int_eq(k, kind);
			ck_assert(k == PACER_PKT_MALFORMED || k == PACER_PKT_NONIP ||
				  !memcmp(&q, p, sizeof(q)));
		}
		kind = k;
		*p = q;
	}
	return kind;
}

START_TEST(test_parse_v4)
{
	struct pacer_pkt p;
	struct frame f = v4(-1, PACER_IPPROTO_TCP, 40000, 443, PACER_TCP_SYN, 0);

	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V4);
	ck_assert_uint_eq(p.kind, PACER_PKT_V4);
	ck_assert_uint_eq(p.src.lo, htonl(0xc6336407));
	ck_assert_uint_eq(p.dst.lo, htonl(0xc0000201));
	ck_assert_uint_eq(p.src.hi | p.dst.hi, 0);
	ck_assert_uint_eq(p.proto, PACER_IPPROTO_TCP);
	ck_assert_uint_eq(p.sport, 40000);
	ck_assert_uint_eq(p.dport, 443);
	ck_assert_uint_eq(p.tcp_flags, PACER_TCP_SYN);
	ck_assert_uint_eq(p.l4, 1);
	ck_assert_uint_eq(p.vlan, PACER_VLAN_NONE);

	f = v4(7, PACER_IPPROTO_UDP, 5353, 53, 0, 0);
	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V4);
	ck_assert_uint_eq(p.vlan, 7);
	ck_assert_uint_eq(p.dport, 53);
	ck_assert_uint_eq(p.tcp_flags, 0);
	/* UDP header cut short: malformed, not a packet without ports */
	ck_assert_int_eq(parse_everywhere(&f, f.len - 1, &p), PACER_PKT_MALFORMED);
	f = v4(-1, PACER_IPPROTO_TCP, 1, 2, PACER_TCP_SYN, 0x2000 /* MF, first fragment */);
	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V4);
	ck_assert_uint_eq(p.l4, 1);
	/* a first fragment too short for the TCP flags (RFC 1858): malformed */
	ck_assert_int_eq(parse_everywhere(&f, f.len - 6, &p), PACER_PKT_MALFORMED);
	/* a non-first fragment: protocol, no ports */
	f = v4(-1, PACER_IPPROTO_UDP, 5353, 53, 0, 0x0001);
	ck_assert_int_eq(parse_everywhere(&f, f.len - 8, &p), PACER_PKT_V4);
	ck_assert_uint_eq(p.proto, PACER_IPPROTO_UDP);
	ck_assert_uint_eq(p.l4, 0);
	ck_assert_uint_eq(p.dport, 0);
	f = v4(-1, PACER_IPPROTO_ICMP, 0x0800, 0, 0, 0);
	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V4);
	ck_assert_uint_eq(p.proto, PACER_IPPROTO_ICMP);
	ck_assert_uint_eq(p.l4, 0);
	ck_assert_uint_eq(p.sport | p.dport, 0);
}
END_TEST

START_TEST(test_parse_v6)
{
	static const uint8_t src[16] = "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x07";
	struct pacer_pkt p;
	struct frame f;
	int exts;

	for (exts = 0; exts <= PACER_IPV6_EXT_MAX; exts++) {
		f = v6(exts & 1 ? 9 : -1, PACER_IPPROTO_UDP, 1000, 53, 0, exts, 0, 0);
		ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V6);
		ck_assert_mem_eq(&p.src.lo, src, 8);
		ck_assert_mem_eq(&p.src.hi, src + 8, 8);
		ck_assert_uint_eq(p.proto, PACER_IPPROTO_UDP);
		ck_assert_uint_eq(p.l4, 1);
		ck_assert_uint_eq(p.dport, 53);
		ck_assert_uint_eq(p.vlan, exts & 1 ? 9 : PACER_VLAN_NONE);
		ck_assert_int_eq(parse_everywhere(&f, f.len - 1, &p), PACER_PKT_MALFORMED);
	}
	/* one extension header more than the walk takes: malformed, never unclassified */
	f = v6(-1, PACER_IPPROTO_UDP, 1000, 53, 0, PACER_IPV6_EXT_MAX + 1, 0, 0);
	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_MALFORMED);
	/* a first fragment has its ports; a later one has none */
	f = v6(-1, PACER_IPPROTO_TCP, 1000, 22, PACER_TCP_SYN | PACER_TCP_ACK, 2, 1, 0x0001 /* M */);
	ck_assert_int_eq(parse_everywhere(&f, f.len, &p), PACER_PKT_V6);
	ck_assert_uint_eq(p.l4, 1);
	ck_assert_uint_eq(p.tcp_flags, PACER_TCP_SYN | PACER_TCP_ACK);
	f = v6(-1, PACER_IPPROTO_TCP, 1000, 22, PACER_TCP_SYN, 2, 1, 0x0008 /* offset 1 */);
	ck_assert_int_eq(parse_everywhere(&f, f.len - 20, &p), PACER_PKT_V6);
	ck_assert_uint_eq(p.proto, PACER_IPPROTO_TCP);
	ck_assert_uint_eq(p.l4, 0);
	ck_assert_uint_eq(p.dport | p.tcp_flags, 0);
	f = v6(-1, PACER_IPPROTO_ICMPV6, 0, 0, 0, 0, 0, 0);
	ck_assert_int_eq(parse_everywhere(&f, 54 + 8, &p), PACER_PKT_V6);
	ck_assert_uint_eq(p.proto, PACER_IPPROTO_ICMPV6);
	ck_assert_uint_eq(p.l4, 0);
	/* an extension header cut short */
	f = v6(-1, PACER_IPPROTO_UDP, 1000, 53, 0, 2, 0, 0);
	ck_assert_int_eq(parse_everywhere(&f, 54 + 12, &p), PACER_PKT_MALFORMED);
}
END_TEST

/* A packet to match against, built field by field. */
static struct pacer_pkt pkt(int kind, uint8_t proto, uint16_t sport, uint16_t dport, uint8_t flags,
			    int l4, uint16_t vlan, const char *src, const char *dst)
{
	struct pacer_pkt p;
	uint8_t a[16];
	int fam = kind == PACER_PKT_V4 ? AF_INET : AF_INET6;

	memset(&p, 0, sizeof(p));
	p.kind = (uint8_t)kind;
	p.proto = proto;
	p.sport = sport;
	p.dport = dport;
	p.tcp_flags = flags;
	p.l4 = (uint8_t)l4;
	p.vlan = vlan;
	ck_assert_int_eq(inet_pton(fam, src, a), 1);
	pacer_src_of_bytes(pacer_family_of(kind), a, &p.src);
	ck_assert_int_eq(inet_pton(fam, dst, a), 1);
	pacer_src_of_bytes(pacer_family_of(kind), a, &p.dst);
	return p;
}

static void set_prefix(struct pacer_match *m, __u32 term, const char *addr, __u32 len)
{
	uint8_t a[16];
	__u32 fam = strchr(addr, ':') ? 6 : 4;

	ck_assert_int_eq(inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, a), 1);
	ck_assert_int_eq(pacer_match_set_prefix(m, term, fam, a, len), 0);
}

enum { M_TCP_SYN, M_UDP_53, M_DPORT_RANGE, M_SPORT, M_SRC4, M_DST6, M_VLAN, M_ICMP, M_ANY, M_COUNT };

static struct pacer_match match_of(int which)
{
	struct pacer_match m;

	memset(&m, 0, sizeof(m));
	switch (which) {
	case M_TCP_SYN:
		m.terms = PACER_M_PROTO | PACER_M_SYN;
		m.proto = PACER_IPPROTO_TCP;
		break;
	case M_UDP_53:
		m.terms = PACER_M_PROTO | PACER_M_DPORT;
		m.proto = PACER_IPPROTO_UDP;
		m.dport_lo = m.dport_hi = 53;
		break;
	case M_DPORT_RANGE:
		m.terms = PACER_M_PROTO | PACER_M_DPORT;
		m.proto = PACER_IPPROTO_TCP;
		m.dport_lo = 8000;
		m.dport_hi = 8099;
		break;
	case M_SPORT:
		m.terms = PACER_M_PROTO | PACER_M_SPORT;
		m.proto = PACER_IPPROTO_UDP;
		m.sport_lo = m.sport_hi = 123;
		break;
	case M_SRC4:
		set_prefix(&m, PACER_M_SRC, "198.51.100.0", 24);
		break;
	case M_DST6:
		set_prefix(&m, PACER_M_DST, "2001:db8:1::", 48);
		break;
	case M_VLAN:
		m.terms = PACER_M_VLAN;
		m.vlan = 7;
		break;
	case M_ICMP:
		m.terms = PACER_M_PROTO | PACER_M_FAMILY;
		m.proto = PACER_IPPROTO_ICMP;
		m.family = 4;
		break;
	case M_ANY:
		break;
	}
	ck_assert_ptr_null(pacer_match_problem(&m));
	return m;
}

START_TEST(test_match_terms)
{
	static const struct {
		int match;
		int kind;
		uint8_t proto;
		uint16_t sport, dport;
		uint8_t flags;
		int l4;
		uint16_t vlan;
		const char *src, *dst;
		int fits;
	} cases[] = {
		{ M_TCP_SYN, PACER_PKT_V4, 6, 1, 80, PACER_TCP_SYN, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 1 },
		{ M_TCP_SYN, PACER_PKT_V6, 6, 1, 80, PACER_TCP_SYN | PACER_TCP_FIN, 1, PACER_VLAN_NONE, "::1", "::2", 1 },
		{ M_TCP_SYN, PACER_PKT_V4, 6, 1, 80, PACER_TCP_SYN | PACER_TCP_ACK, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_TCP_SYN, PACER_PKT_V4, 6, 1, 80, PACER_TCP_ACK, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_TCP_SYN, PACER_PKT_V4, 17, 1, 80, PACER_TCP_SYN, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_TCP_SYN, PACER_PKT_V4, 6, 0, 0, 0, 0, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 }, /* fragment */
		{ M_UDP_53, PACER_PKT_V4, 17, 9, 53, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 1 },
		{ M_UDP_53, PACER_PKT_V4, 17, 9, 54, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_UDP_53, PACER_PKT_V4, 17, 9, 52, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_UDP_53, PACER_PKT_V4, 6, 9, 53, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_UDP_53, PACER_PKT_V4, 17, 0, 0, 0, 0, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 }, /* fragment */
		{ M_DPORT_RANGE, PACER_PKT_V4, 6, 9, 7999, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_DPORT_RANGE, PACER_PKT_V4, 6, 9, 8000, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 1 },
		{ M_DPORT_RANGE, PACER_PKT_V4, 6, 9, 8099, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 1 },
		{ M_DPORT_RANGE, PACER_PKT_V4, 6, 9, 8100, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_SPORT, PACER_PKT_V6, 17, 123, 9, 0, 1, PACER_VLAN_NONE, "::1", "::2", 1 },
		{ M_SPORT, PACER_PKT_V6, 17, 124, 9, 0, 1, PACER_VLAN_NONE, "::1", "::2", 0 },
		{ M_SRC4, PACER_PKT_V4, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "198.51.100.255", "10.0.0.2", 1 },
		{ M_SRC4, PACER_PKT_V4, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "198.51.101.0", "10.0.0.2", 0 },
		{ M_SRC4, PACER_PKT_V4, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "10.0.0.2", "198.51.100.1", 0 },
		{ M_SRC4, PACER_PKT_V6, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "c633:6400::", "::2", 0 }, /* same bits, other family */
		{ M_DST6, PACER_PKT_V6, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "::1", "2001:db8:1:ffff::9", 1 },
		{ M_DST6, PACER_PKT_V6, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "::1", "2001:db8:2::", 0 },
		{ M_DST6, PACER_PKT_V4, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "32.1.13.184", 0 },
		{ M_VLAN, PACER_PKT_V4, 17, 1, 2, 0, 1, 7, "10.0.0.1", "10.0.0.2", 1 },
		{ M_VLAN, PACER_PKT_V4, 17, 1, 2, 0, 1, 8, "10.0.0.1", "10.0.0.2", 0 },
		{ M_VLAN, PACER_PKT_V4, 17, 1, 2, 0, 1, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 0 },
		{ M_ICMP, PACER_PKT_V4, 1, 0, 0, 0, 0, PACER_VLAN_NONE, "10.0.0.1", "10.0.0.2", 1 },
		{ M_ICMP, PACER_PKT_V6, 1, 0, 0, 0, 0, PACER_VLAN_NONE, "::1", "::2", 0 },
		{ M_ICMP, PACER_PKT_V6, 58, 0, 0, 0, 0, PACER_VLAN_NONE, "::1", "::2", 0 },
		{ M_ANY, PACER_PKT_V6, 58, 0, 0, 0, 0, PACER_VLAN_NONE, "::1", "::2", 1 },
		{ M_ANY, PACER_PKT_V4, 6, 0, 0, 0, 0, 3, "10.0.0.1", "10.0.0.2", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pacer_match m = match_of(cases[i].match);
		struct pacer_pkt p = pkt(cases[i].kind, cases[i].proto, cases[i].sport, cases[i].dport,
					 cases[i].flags, cases[i].l4, cases[i].vlan, cases[i].src,
					 cases[i].dst);

		ck_assert_msg(pacer_match_fits(&m, &p) == cases[i].fits, "case %zu", i);
	}
}
END_TEST

START_TEST(test_match_problems)
{
	struct pacer_match m;
	uint8_t a[16] = { 192, 0, 2, 1 };

	memset(&m, 0, sizeof(m));
	m.terms = PACER_M_DPORT;
	m.dport_hi = 53;
	ck_assert_str_eq(pacer_match_problem(&m), "a port needs tcp or udp");
	m.terms |= PACER_M_PROTO;
	m.proto = PACER_IPPROTO_ICMP;
	ck_assert_str_eq(pacer_match_problem(&m), "a port needs tcp or udp");
	m.proto = PACER_IPPROTO_UDP;
	ck_assert_ptr_null(pacer_match_problem(&m));
	m.dport_lo = 54;
	ck_assert_str_eq(pacer_match_problem(&m), "dport range is empty");
	memset(&m, 0, sizeof(m));
	m.terms = PACER_M_SYN | PACER_M_PROTO;
	m.proto = PACER_IPPROTO_UDP;
	ck_assert_str_eq(pacer_match_problem(&m), "flags syn needs tcp");
	memset(&m, 0, sizeof(m));
	m.terms = 1u << 8;
	ck_assert_str_eq(pacer_match_problem(&m), "unknown match terms");
	memset(&m, 0, sizeof(m));
	m.terms = PACER_M_VLAN;
	m.vlan = 4096;
	ck_assert_str_eq(pacer_match_problem(&m), "vlan id is above 4095");
	/* prefixes: the host bits are cleared, the family fixed by the first */
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(pacer_match_set_prefix(&m, PACER_M_SRC, 4, a, 24), 0);
	ck_assert_uint_eq(m.src_lo, htonl(0xc0000200));
	ck_assert_uint_eq(m.src_mask_lo, htonl(0xffffff00));
	ck_assert_int_eq(pacer_match_set_prefix(&m, PACER_M_DST, 6, a, 24), -1);
	ck_assert_int_eq(pacer_match_set_prefix(&m, PACER_M_DST, 4, a, 33), -1);
	ck_assert_int_eq(pacer_match_set_prefix(&m, PACER_M_DST, 5, a, 8), -1);
	ck_assert_ptr_null(pacer_match_problem(&m));
	m.src_lo |= htonl(1);
	ck_assert_str_eq(pacer_match_problem(&m), "src has bits outside its prefix");
	memset(&m, 0, sizeof(m));
	m.terms = PACER_M_PROTO | PACER_M_FAMILY;
	m.proto = PACER_IPPROTO_ICMPV6;
	m.family = 4;
	ck_assert_str_eq(pacer_match_problem(&m), "icmp is IPv4's, icmpv6 IPv6's");
}
END_TEST

START_TEST(test_class_key)
{
	struct pacer_pkt p = pkt(PACER_PKT_V4, 17, 9, 53, 0, 1, PACER_VLAN_NONE, "198.51.100.7",
				 "192.0.2.1");
	struct pacer_pkt q = p, r = p;
	struct pacer_class c;
	struct pacer_src masked, s = p.src;
	__u32 prefix, pfx2;
	__u64 h, h0;

	/* the classless key is today's: pacer_hash_v4 of the masked source */
	h0 = pacer_src_key_hash(test_key, PACER_PKT_V4, &s, 24, 64, &prefix);
	ck_assert_uint_eq(prefix, 24);
	ck_assert_uint_eq(s.lo, htonl(0xc6336400));
	ck_assert_uint_eq(h0, pacer_hash_v4(test_key, htonl(0xc6336400)));

	memset(&c, 0, sizeof(c));
	c.prefix4 = 24;
	c.prefix6 = 64;
	c.id = 1;
	c.key_mode = PACER_KEY_SRC;
	h = pacer_class_key_hash(test_key, &c, &p, &masked, &prefix);
	ck_assert_uint_eq(masked.lo, htonl(0xc6336400));
	ck_assert_uint_ne(h, h0);
	/* a source in the same /24: same key; another port or destination: same key in mode src */
	q.src.lo = htonl(0xc63364fe);
	q.dport = 54;
	q.dst.lo = htonl(0xc0000202);
	ck_assert_uint_eq(pacer_class_key_hash(test_key, &c, &q, &masked, &pfx2), h);
	/* another class id: another key */
	c.id = 2;
	ck_assert_uint_ne(pacer_class_key_hash(test_key, &c, &p, &masked, &prefix), h);
	/* src+dport: the port splits the key, the destination does not */
	c.key_mode = PACER_KEY_SRC_DPORT;
	h = pacer_class_key_hash(test_key, &c, &p, &masked, &prefix);
	r = p;
	r.dst.lo = htonl(0xc0000202);
	ck_assert_uint_eq(pacer_class_key_hash(test_key, &c, &r, &masked, &prefix), h);
	r = p;
	r.dport = 54;
	ck_assert_uint_ne(pacer_class_key_hash(test_key, &c, &r, &masked, &prefix), h);
	/* src+dst: the destination splits the key, the port does not */
	c.key_mode = PACER_KEY_SRC_DST;
	h = pacer_class_key_hash(test_key, &c, &p, &masked, &prefix);
	ck_assert_uint_eq(pacer_class_key_hash(test_key, &c, &r, &masked, &prefix), h);
	r = p;
	r.dst.lo = htonl(0xc0000202);
	ck_assert_uint_ne(pacer_class_key_hash(test_key, &c, &r, &masked, &prefix), h);
	/* a class's own prefix */
	c.key_mode = PACER_KEY_SRC;
	c.prefix4 = 32;
	h = pacer_class_key_hash(test_key, &c, &p, &masked, &prefix);
	ck_assert_uint_eq(prefix, 32);
	ck_assert_uint_ne(pacer_class_key_hash(test_key, &c, &q, &masked, &prefix), h);
	/* IPv6 masks to prefix6 */
	p = pkt(PACER_PKT_V6, 17, 9, 53, 0, 1, PACER_VLAN_NONE, "2001:db8::1:2", "2001:db8::1");
	q = pkt(PACER_PKT_V6, 17, 9, 53, 0, 1, PACER_VLAN_NONE, "2001:db8::ffff:3", "2001:db8::1");
	ck_assert_uint_eq(pacer_class_key_hash(test_key, &c, &p, &masked, &prefix),
			  pacer_class_key_hash(test_key, &c, &q, &masked, &pfx2));
	ck_assert_uint_eq(prefix, 64);
	c.prefix6 = 128;
	ck_assert_uint_ne(pacer_class_key_hash(test_key, &c, &p, &masked, &prefix),
			  pacer_class_key_hash(test_key, &c, &q, &masked, &pfx2));
}
END_TEST

static struct pacer_class good_class(const char *name, __u32 slot)
{
	struct pacer_class c;

	memset(&c, 0, sizeof(c));
	c.m = match_of(M_UDP_53);
	c.action = PACER_ACTION_PACE;
	c.key_mode = PACER_KEY_SRC;
	c.prefix4 = 32;
	c.prefix6 = 64;
	c.policy = PACER_POLICY_PACE;
	c.thresh_ticks = 10;
	c.stat_slot = slot;
	snprintf(c.name, sizeof(c.name), "%s", name);
	return c;
}

START_TEST(test_classes_check)
{
	struct pacer_class c[PACER_MAX_CLASSES + 1];
	char err[160];
	int i;

	for (i = 0; i <= PACER_MAX_CLASSES; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		c[i] = good_class(name, (__u32)i);
	}
	ck_assert_int_eq(pacer_classes_check(c, PACER_MAX_CLASSES, PACER_BACKEND_SKETCH, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_classes_check(c, 0, PACER_BACKEND_SKETCH, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_classes_check(c, PACER_MAX_CLASSES + 1, PACER_BACKEND_SKETCH, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "257 classes: at most 256");
#define BAD(field_stmt, want)                                                              \
	do {                                                                               \
		struct pacer_class b[2] = { good_class("a", 0), good_class("dns", 1) };    \
		field_stmt;                                                                \
		ck_assert_int_eq(pacer_classes_check(b, 2, PACER_BACKEND_SKETCH, err, sizeof(err)), -EINVAL); \
		ck_assert_str_eq(err, want);                                               \
	} while (0)
	BAD(b[1].m.proto = PACER_IPPROTO_ICMP, "class 'dns': a port needs tcp or udp");
	BAD(b[1].action = PACER_ACTION_MAX, "class 'dns': unknown action");
	BAD(b[1].key_mode = PACER_KEY_MAX, "class 'dns': unknown key mode");
	BAD(b[1].prefix4 = 33, "class 'dns': key prefix out of range (IPv4 0..32, IPv6 0..128)");
	BAD(b[1].prefix6 = 129, "class 'dns': key prefix out of range (IPv4 0..32, IPv6 0..128)");
	BAD(b[1].policy = PACER_POLICY_MAX, "class 'dns': unknown policy");
	BAD(b[1].thresh_ticks = 1, "class 'dns': its limit is outside the range the loaded backend's cells hold");
	BAD(b[1].thresh_ticks = PACER_MAX_THRESH + 1, "class 'dns': its limit is outside the range the loaded backend's cells hold");
	BAD(b[1].stat_slot = 0, "class 'dns': its stat slot is an earlier class's");
	BAD(b[1].stat_slot = PACER_MAX_CLASSES, "class 'dns': stat slot out of range");
	BAD(memcpy(b[1].name, "a", 2), "class 'a': a class of this name comes earlier");
	BAD(memcpy(b[1].name, "a b", 4), "class 2: its name is not 1..15 of [a-zA-Z0-9_-]");
	BAD(b[1].name[0] = 0, "class 2: its name is not 1..15 of [a-zA-Z0-9_-]");
	BAD(memset(b[1].name, 'x', sizeof(b[1].name)), "class 2: its name is not 1..15 of [a-zA-Z0-9_-]");
#undef BAD
	/* a limit the table holds and the sketch does not; a pass class needs none */
	c[1].thresh_ticks = PACER_MAX_THRESH + 1;
	ck_assert_int_eq(pacer_classes_check(c, 2, PACER_BACKEND_TABLE, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_classes_check(c, 2, PACER_BACKEND_SKETCH, err, sizeof(err)), -EINVAL);
	c[1].action = PACER_ACTION_PASS;
	ck_assert_int_eq(pacer_classes_check(c, 2, PACER_BACKEND_SKETCH, err, sizeof(err)), 0);
}
END_TEST

static int filter_has(const __u64 *w, int kind, const char *addr)
{
	struct pacer_src s;
	uint8_t a[16];
	__u32 bit;

	ck_assert_int_eq(inet_pton(kind == PACER_PKT_V4 ? AF_INET : AF_INET6, addr, a), 1);
	pacer_src_of_bytes(kind == PACER_PKT_V4 ? 4 : 6, a, &s);
	bit = pacer_list_filter_bit(kind, &s);
	return (w[bit >> 6] >> (bit & 63)) & 1;
}

static void filter_add(__u64 *w, const char *addr, __u32 len)
{
	uint8_t a[16] = { 0 };
	__u32 fam = strchr(addr, ':') ? 6 : 4;

	ck_assert_int_eq(inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, a), 1);
	pacer_list_filter_set(w, fam, len, a);
}

static size_t filter_bits(const __u64 *w, int family)
{
	size_t n = 0, i;

	for (i = 0; i < PACER_LIST_FILTER_WORDS; i++)
		n += (size_t)__builtin_popcountll(w[(family == 6 ? PACER_LIST_FILTER_WORDS : 0) + i]);
	return n;
}

static struct pacer_prefix pfx(uint32_t family, const char *addr, uint32_t len)
{
	struct pacer_prefix p = { .family = family, .len = len };

	ck_assert_int_eq(inet_pton(family == 4 ? AF_INET : AF_INET6, addr, p.addr), 1);
	return p;
}

/* set's report of a list's change: the same prefixes in any order, a repeat counting once. */
START_TEST(test_prefix_sets_same)
{
	struct pacer_prefix a[3] = { pfx(4, "192.0.2.0", 24), pfx(6, "2001:db8::", 32), pfx(4, "10.0.0.0", 8) };
	struct pacer_prefix b[4] = { pfx(4, "10.0.0.0", 8), pfx(4, "192.0.2.0", 24), pfx(6, "2001:db8::", 32),
				     pfx(4, "10.0.0.0", 8) };
	struct pacer_prefix c[3] = { pfx(4, "192.0.2.0", 24), pfx(6, "2001:db8::", 32), pfx(4, "10.0.0.0", 16) };
	struct pacer_prefix d[2] = { pfx(4, "192.0.2.0", 24), pfx(6, "2001:db8::", 32) };
	struct pacer_prefix e[1] = { pfx(4, "192.0.2.77", 24) }, f[1] = { pfx(4, "192.0.2.0", 24) };

	ck_assert(pacer_prefix_sets_same(a, 3, b, 4));
	ck_assert(pacer_prefix_sets_same(b, 4, a, 3));
	ck_assert(!pacer_prefix_sets_same(a, 3, c, 3)); /* a length differs */
	ck_assert(!pacer_prefix_sets_same(a, 3, d, 2)); /* one fewer */
	ck_assert(!pacer_prefix_sets_same(d, 2, a, 3));
	ck_assert(pacer_prefix_sets_same(NULL, 0, NULL, 0));
	ck_assert(!pacer_prefix_sets_same(d, 2, NULL, 0));
	ck_assert(pacer_prefix_sets_same(e, 1, f, 1)); /* host bits do not count */
}
END_TEST

/*
 * The lists' filter: every address a prefix covers has its bit (no listed
 * source skips the trie), and a prefix sets only the bits it covers.
 */
START_TEST(test_list_filter)
{
	static __u64 w[2 * PACER_LIST_FILTER_WORDS];

	memset(w, 0, sizeof(w));
	filter_add(w, "192.0.2.7", 32);
	ck_assert(filter_has(w, PACER_PKT_V4, "192.0.2.7"));
	ck_assert(filter_has(w, PACER_PKT_V4, "192.0.15.255")); /* the same /20 */
	ck_assert(!filter_has(w, PACER_PKT_V4, "192.0.16.0"));
	ck_assert(!filter_has(w, PACER_PKT_V4, "10.0.2.7"));
	ck_assert_uint_eq(filter_bits(w, 4), 1);
	filter_add(w, "10.0.0.0", 8);
	ck_assert_uint_eq(filter_bits(w, 4), 1 + 4096);
	ck_assert(filter_has(w, PACER_PKT_V4, "10.255.255.255"));
	ck_assert(filter_has(w, PACER_PKT_V4, "10.0.0.0"));
	ck_assert(!filter_has(w, PACER_PKT_V4, "11.0.0.0"));
	ck_assert(!filter_has(w, PACER_PKT_V4, "9.255.255.255"));
	ck_assert_uint_eq(filter_bits(w, 6), 0);
	filter_add(w, "2001:db8:5:6::", 64);
	ck_assert(filter_has(w, PACER_PKT_V6, "2001:db8:ffff::1")); /* the same /32 */
	ck_assert(!filter_has(w, PACER_PKT_V6, "2001:db9::1") ||
		  !filter_has(w, PACER_PKT_V6, "2001:dba::1")); /* a hash: one may collide, not both */
	ck_assert_uint_eq(filter_bits(w, 6), 1);
	filter_add(w, "2001:db0::", 28); /* 16 values of the top 32 bits */
	ck_assert(filter_has(w, PACER_PKT_V6, "2001:db0::1"));
	ck_assert(filter_has(w, PACER_PKT_V6, "2001:dbf:ffff::1"));
	ck_assert_uint_le(filter_bits(w, 6), 17);
	ck_assert_uint_ge(filter_bits(w, 6), 12);
	/* a prefix covering more than the filter has bits fills it; so does 0.0.0.0/0 */
	filter_add(w, "2000::", 3);
	ck_assert_uint_eq(filter_bits(w, 6), 64 * PACER_LIST_FILTER_WORDS);
	filter_add(w, "0.0.0.0", 0);
	ck_assert_uint_eq(filter_bits(w, 4), 64 * PACER_LIST_FILTER_WORDS);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("classify");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_v4);
	tcase_add_test(tc, test_parse_v6);
	tcase_add_test(tc, test_match_terms);
	tcase_add_test(tc, test_match_problems);
	tcase_add_test(tc, test_class_key);
	tcase_add_test(tc, test_classes_check);
	tcase_add_test(tc, test_list_filter);
	tcase_add_test(tc, test_prefix_sets_same);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
