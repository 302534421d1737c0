// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "frame.h"

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IP6_HLEN 40
#define UDP_HLEN 8
#define IPPROTO_UDP_ 17

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

uint32_t frame_sum_le16(const uint8_t *b, size_t len)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(b[i] | b[i + 1] << 8);
	if (len & 1)
		s += b[len - 1];
	return s;
}

uint16_t frame_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* Store a little-endian-computed checksum so its bytes read right on the wire. */
static void put_csum(uint8_t *p, uint32_t sum)
{
	uint16_t c = (uint16_t)~frame_fold(sum);

	p[0] = (uint8_t)c;
	p[1] = (uint8_t)(c >> 8);
}

static size_t put_eth(uint8_t *b, const struct frame_spec *s)
{
	uint16_t l3 = s->src.family == 4 ? 0x0800 : 0x86dd, tpid;
	size_t off = 12;
	unsigned i;

	memcpy(b, s->dmac, 6);
	memcpy(b + 6, s->smac, 6);
	for (i = 0; i < s->n_vlans && i < 2; i++) {
		tpid = i == 0 && s->n_vlans == 2 ? (s->outer_tpid ? s->outer_tpid : FRAME_ETH_P_8021AD)
						 : FRAME_ETH_P_8021Q;
		put16(b + off, tpid);
		put16(b + off + 2, s->vlan_tci[i]);
		off += VLAN_HLEN;
	}
	put16(b + off, l3);
	return off + 2;
}

static size_t put_ipv4(uint8_t *p, const struct frame_spec *s, size_t udp_len)
{
	size_t hl = (size_t)(s->ihl ? s->ihl : 5) * 4;

	p[0] = (uint8_t)(0x40 | hl / 4);
	put16(p + 2, (uint32_t)(hl + udp_len));
	p[6] = s->df ? 0x40 : 0;
	p[8] = s->ttl ? s->ttl : 64;
	p[9] = IPPROTO_UDP_;
	memcpy(p + 12, s->src.bytes, 4);
	memcpy(p + 16, s->dst.bytes, 4);
	if (s->csum)
		put_csum(p + 10, frame_sum_le16(p, hl));
	return hl;
}

static size_t put_ipv6(uint8_t *p, const struct frame_spec *s, size_t udp_len)
{
	p[0] = 0x60;
	put16(p + 4, (uint32_t)udp_len);
	p[6] = IPPROTO_UDP_;
	p[7] = s->ttl ? s->ttl : 64; /* hop limit */
	memcpy(p + 8, s->src.bytes, 16);
	memcpy(p + 24, s->dst.bytes, 16);
	return IP6_HLEN;
}

/* IPv6 pseudo-header: source, destination, UDP length, next header. */
static uint32_t pseudo6_sum(const uint8_t *ip6, size_t udp_len)
{
	uint8_t ph[40] = { 0 };

	memcpy(ph, ip6 + 8, 32);
	put16(ph + 34, (uint32_t)udp_len);
	ph[39] = IPPROTO_UDP_;
	return frame_sum_le16(ph, sizeof(ph));
}

size_t frame_build(uint8_t *b, size_t cap, const struct frame_spec *s, size_t *l3)
{
	size_t udp_len = UDP_HLEN + s->payload, off, ihl = (size_t)(s->ihl ? s->ihl : 5) * 4;
	size_t need = ETH_HLEN + VLAN_HLEN * s->n_vlans +
		      (s->src.family == 4 ? ihl : IP6_HLEN) + udp_len;
	uint8_t *udp;

	if (need > cap || s->n_vlans > 2)
		return 0;
	memset(b, 0, need);
	off = put_eth(b, s);
	if (l3)
		*l3 = off;
	off += s->src.family == 4 ? put_ipv4(b + off, s, udp_len) : put_ipv6(b + off, s, udp_len);
	udp = b + off;
	put16(udp, s->sport);
	put16(udp + 2, s->dport);
	put16(udp + 4, (uint32_t)udp_len);
	memset(udp + UDP_HLEN, s->fill, s->payload);
	if (s->csum && s->src.family == 6) {
		put_csum(udp + 6, pseudo6_sum(udp - IP6_HLEN, udp_len) + frame_sum_le16(udp, udp_len));
		if (!udp[6] && !udp[7]) /* 0 means "no checksum", which IPv6 forbids */
			udp[6] = udp[7] = 0xff;
	}
	return need;
}

uint32_t frame_csum_base(const uint8_t *b, size_t len, size_t l3, int family)
{
	if (family == 4)
		return frame_sum_le16(b + l3, (size_t)(b[l3] & 0xf) * 4);
	return pseudo6_sum(b + l3, len - l3 - IP6_HLEN) + frame_sum_le16(b + l3 + IP6_HLEN, len - l3 - IP6_HLEN);
}
