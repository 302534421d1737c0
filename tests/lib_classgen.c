// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Random class lists and packets near their edges (lib_classgen.h). */
#include <stdio.h>
#include <string.h>
#include "lib_classgen.h"

static __u64 rng_state = 0x243f6a8885a308d3ULL;

void classgen_seed(__u64 seed)
{
	rng_state = seed ? seed : 1;
}

static __u64 rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

__u32 classgen_below(__u32 n)
{
	return (__u32)(rnd() % n);
}

/* A few base addresses per family, so prefixes nest and overlap. */
static const __u8 bases4[][4] = { { 10, 0, 0, 0 }, { 10, 1, 2, 0 }, { 192, 0, 2, 128 }, { 0, 0, 0, 0 } };
static const __u8 bases6[][16] = {
	{ 0x20, 0x01, 0x0d, 0xb8 },
	{ 0x20, 0x01, 0x0d, 0xb8, 0, 1 },
	{ 0xfe, 0x80 },
	{ 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 },
};
static const __u16 ports[] = { 0, 1, 22, 53, 80, 443, 1023, 1024, 8080, 65534, 65535 };
static const __u16 vlans[] = { 0, 10, 20, 4095 };
static const __u8 protos[] = { PACER_IPPROTO_TCP, PACER_IPPROTO_UDP, PACER_IPPROTO_ICMP, PACER_IPPROTO_ICMPV6 };

/* addr (16 bytes, memory order of struct pacer_src) to its words. */
static void to_src(const __u8 *b, struct pacer_src *s)
{
	memcpy(&s->lo, b, 8);
	memcpy(&s->hi, b + 8, 8);
}

static void random_prefix(int v6, __u64 *lo, __u64 *hi, __u64 *mlo, __u64 *mhi)
{
	__u8 a[16] = { 0 }, m[16] = { 0 };
	int bits = v6 ? (int)classgen_below(129) : (int)classgen_below(33), i;
	struct pacer_src s, ms;

	if (v6)
		memcpy(a, bases6[classgen_below(4)], 16);
	else
		memcpy(a, bases4[classgen_below(4)], 4);
	for (i = 0; i < bits; i++)
		m[i / 8] |= (__u8)(0x80 >> (i % 8));
	for (i = 0; i < 16; i++)
		a[i] &= m[i];
	to_src(a, &s);
	to_src(m, &ms);
	*lo = s.lo;
	*hi = s.hi;
	*mlo = ms.lo;
	*mhi = ms.hi;
}

static void random_range(__u16 *lo, __u16 *hi)
{
	__u16 a = ports[classgen_below(sizeof(ports) / sizeof(ports[0]))];
	__u16 b = ports[classgen_below(sizeof(ports) / sizeof(ports[0]))];

	*lo = a < b ? a : b;
	*hi = a < b ? b : a;
}

void classgen_class(struct pacer_class *c, int i)
{
	struct pacer_match *m = &c->m;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "c%d", i);
	m->terms = (__u32)(rnd() & rnd() & PACER_M_ALL); /* about a quarter of the terms each */
	m->family = classgen_below(2) ? 6 : 4;
	if (m->terms & PACER_M_PROTO)
		m->proto = protos[classgen_below(4)];
	if (m->terms & PACER_M_DPORT)
		random_range(&m->dport_lo, &m->dport_hi);
	if (m->terms & PACER_M_SPORT)
		random_range(&m->sport_lo, &m->sport_hi);
	if (m->terms & PACER_M_SRC)
		random_prefix(m->family == 6, &m->src_lo, &m->src_hi, &m->src_mask_lo, &m->src_mask_hi);
	if (m->terms & PACER_M_DST)
		random_prefix(m->family == 6, &m->dst_lo, &m->dst_hi, &m->dst_mask_lo, &m->dst_mask_hi);
	if (m->terms & PACER_M_VLAN)
		m->vlan = vlans[classgen_below(4)];
}

/* An address near one of the bases: equal, or with one random bit flipped. */
static void random_addr(int v6, struct pacer_src *s)
{
	__u8 a[16] = { 0 };

	if (v6)
		memcpy(a, bases6[classgen_below(4)], 16);
	else
		memcpy(a, bases4[classgen_below(4)], 4);
	if (classgen_below(2)) {
		int bit = (int)classgen_below(v6 ? 128 : 32);

		a[bit / 8] ^= (__u8)(0x80 >> (bit % 8));
	}
	to_src(a, s);
}

void classgen_pkt(struct pacer_pkt *p)
{
	static const __u8 flags[] = { PACER_TCP_SYN, PACER_TCP_SYN | PACER_TCP_ACK, PACER_TCP_ACK, 0 };
	static const __u8 pprotos[] = { PACER_IPPROTO_TCP, PACER_IPPROTO_UDP, PACER_IPPROTO_ICMP,
					PACER_IPPROTO_ICMPV6, 47 };
	int v6 = (int)classgen_below(2);
	__u16 d = ports[classgen_below(sizeof(ports) / sizeof(ports[0]))], s = ports[classgen_below(sizeof(ports) / sizeof(ports[0]))];

	memset(p, 0, sizeof(*p));
	p->kind = v6 ? PACER_PKT_V6 : PACER_PKT_V4;
	p->proto = pprotos[classgen_below(5)];
	random_addr(v6, &p->src);
	random_addr(v6, &p->dst);
	p->vlan = classgen_below(5) ? vlans[classgen_below(4)] : PACER_VLAN_NONE;
	/* TCP and UDP carry ports, but not in a non-first fragment. */
	p->l4 = (p->proto == PACER_IPPROTO_TCP || p->proto == PACER_IPPROTO_UDP) && classgen_below(8);
	if (p->l4) {
		/* An edge or its neighbour. */
		p->dport = (__u16)(d + (int)classgen_below(3) - 1);
		p->sport = (__u16)(s + (int)classgen_below(3) - 1);
		if (p->proto == PACER_IPPROTO_TCP)
			p->tcp_flags = flags[classgen_below(4)];
	}
}

