/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Classification shared verbatim by the XDP program and userspace (analyze
 * --pcap, query, the tests): whether a class's match fits a parsed packet
 * (pacer_pkt.h), a class's key and its hash, and the helpers userspace
 * fills and checks a match with.
 *
 * A class's key is the source masked to the class's prefix4/prefix6,
 * hashed as the classless key is (pacer_hash.h), then mixed with the
 * class's id, its key mode and, per mode, the destination port or the
 * full destination address.  With no classes the key and hash are the
 * classless ones, unchanged.
 */
#ifndef PACER_CLASSIFY_H
#define PACER_CLASSIFY_H

#include <linux/types.h>
#include "pacer_compiler.h"
#include "pacer_abi.h"
#include "pacer_hash.h"
#include "pacer_pkt.h"

#define PACER_CLASS_SALT 0x8cb92ba72f3d8dd7ULL

PACER_INLINE __u32 pacer_family_of(int kind)
{
	return kind == PACER_PKT_V4 ? 4 : 6;
}

/* Whether addr lies within want/mask (the words of struct pacer_src). */
PACER_INLINE int pacer_addr_within(const struct pacer_src *addr, __u64 want_lo, __u64 want_hi,
				   __u64 mask_lo, __u64 mask_hi)
{
	return (addr->lo & mask_lo) == want_lo && (addr->hi & mask_hi) == want_hi;
}

/*
 * The terms of a match's first 16 bytes (all but the address compares):
 * every one set must hold.  Port and flags terms need the TCP or UDP
 * header (p->l4): a non-first fragment fits none of them.  An address
 * term holds only for the family its prefix was written in.
 */
PACER_INLINE int pacer_match_quick_fits(const struct pacer_match_quick *m, const struct pacer_pkt *p)
{
	__u32 t = m->terms;

	if ((t & PACER_M_PROTO) && m->proto != p->proto)
		return 0;
	if ((t & (PACER_M_FAMILY | PACER_M_SRC | PACER_M_DST)) && m->family != pacer_family_of(p->kind))
		return 0;
	if (t & (PACER_M_DPORT | PACER_M_SPORT | PACER_M_SYN)) {
		if (!p->l4)
			return 0;
		if ((t & PACER_M_DPORT) && (p->dport < m->dport_lo || p->dport > m->dport_hi))
			return 0;
		if ((t & PACER_M_SPORT) && (p->sport < m->sport_lo || p->sport > m->sport_hi))
			return 0;
		if ((t & PACER_M_SYN) &&
		    (p->proto != PACER_IPPROTO_TCP ||
		     (p->tcp_flags & (PACER_TCP_SYN | PACER_TCP_ACK)) != PACER_TCP_SYN))
			return 0;
	}
	if ((t & PACER_M_VLAN) && m->vlan != p->vlan)
		return 0;
	return 1;
}

/* The address terms of a match: every one set must hold. */
PACER_INLINE int pacer_match_addr_fits(const struct pacer_match *m, const struct pacer_pkt *p)
{
	__u32 t = m->terms;

	if ((t & PACER_M_SRC) &&
	    !pacer_addr_within(&p->src, m->src_lo, m->src_hi, m->src_mask_lo, m->src_mask_hi))
		return 0;
	if ((t & PACER_M_DST) &&
	    !pacer_addr_within(&p->dst, m->dst_lo, m->dst_hi, m->dst_mask_lo, m->dst_mask_hi))
		return 0;
	return 1;
}

/* A match's terms but the address compares, as the walk's index holds them. */
PACER_INLINE void pacer_match_quick_of(const struct pacer_match *m, struct pacer_match_quick *q)
{
	q->terms = m->terms;
	q->proto = m->proto;
	q->family = m->family;
	q->vlan = m->vlan;
	q->dport_lo = m->dport_lo;
	q->dport_hi = m->dport_hi;
	q->sport_lo = m->sport_lo;
	q->sport_hi = m->sport_hi;
}

/* Whether match m fits packet p: every term set holds. */
PACER_INLINE int pacer_match_fits(const struct pacer_match *m, const struct pacer_pkt *p)
{
	struct pacer_match_quick q;

	pacer_match_quick_of(m, &q);
	return pacer_match_quick_fits(&q, p) && pacer_match_addr_fits(m, p);
}

/*
 * The classless key: src (kind PACER_PKT_V4 or _V6) masked in place to
 * prefix4 or prefix6, which *prefix gets; its keyed hash.
 */
PACER_INLINE __u64 pacer_src_key_hash(const __u64 key[2], int kind, struct pacer_src *src,
				      __u32 prefix4, __u32 prefix6, __u32 *prefix)
{
	if (kind == PACER_PKT_V4) {
		*prefix = prefix4;
		src->lo &= pacer_mask4(prefix4);
		src->hi = 0;
		return pacer_hash_v4(key, (__u32)src->lo);
	}
	*prefix = prefix6;
	src->lo &= pacer_mask6_lo(prefix6);
	src->hi &= pacer_mask6_hi(prefix6);
	return pacer_hash_v6(key, src->lo, src->hi);
}

/*
 * A class's key from the hash h of its masked source: the class id and
 * key mode always (classes never share a key), then the destination port
 * (0 without an L4 header: ICMP, non-first fragments) or the destination
 * address.  h is keyed, so these words cannot be chosen to collide.
 */
PACER_INLINE __u64 pacer_class_key_mix(__u64 h, __u32 id, __u32 key_mode, const struct pacer_pkt *p)
{
	__u64 tag = (__u64)id << 32 | (__u64)(key_mode & 0xff) << 16;

	if (key_mode == PACER_KEY_SRC_DPORT)
		tag |= p->dport;
	h = pacer_mix64(h ^ tag ^ PACER_CLASS_SALT);
	if (key_mode == PACER_KEY_SRC_DST)
		h = pacer_mix64(pacer_mix64(h ^ p->dst.lo) ^ p->dst.hi);
	return h;
}

/* The class's key for packet p: its masked source into *masked (may be &p->src), prefix into *prefix; the hash. */
PACER_INLINE __u64 pacer_class_key_hash(const __u64 key[2], const struct pacer_class *c,
					const struct pacer_pkt *p, struct pacer_src *masked,
					__u32 *prefix)
{
	__u64 h;

	masked->lo = p->src.lo;
	masked->hi = p->src.hi;
	h = pacer_src_key_hash(key, p->kind, masked, c->prefix4, c->prefix6, prefix);
	return pacer_class_key_mix(h, c->id, c->key_mode, p);
}

#define PACER_LIST_FILTER_SALT 0x4f1bbcdcbfa53e0bULL

/* The list filter's bit for an IPv4 address in host byte order. */
PACER_INLINE __u32 pacer_list_filter_bit4(__u32 addr_host)
{
	return addr_host >> (32 - PACER_LIST_FILTER_LOG2);
}

/* The list filter's bit for an IPv6 address's top 32 bits, in host byte order. */
PACER_INLINE __u32 pacer_list_filter_bit6(__u32 top32_host)
{
	return (__u32)(pacer_mix64(top32_host ^ PACER_LIST_FILTER_SALT) >> (64 - PACER_LIST_FILTER_LOG2));
}

/* A source's filter bit: its family's word index (IPv6's after IPv4's) and bit. */
PACER_INLINE __u32 pacer_list_filter_bit(int kind, const struct pacer_src *src)
{
	__u32 top = __builtin_bswap32((__u32)src->lo);

	return kind == PACER_PKT_V4 ? pacer_list_filter_bit4(top)
				    : (1u << PACER_LIST_FILTER_LOG2) + pacer_list_filter_bit6(top);
}

#ifndef __bpf__
/*
 * Userspace helpers.  An address is its bytes in network order (4 or 16);
 * the words are loaded as the datapath loads them from a packet.
 */

/* The masks of a family's prefix, in struct pacer_src's words. */
PACER_INLINE void pacer_prefix_masks(__u32 family, __u32 prefix, __u64 *mask_lo, __u64 *mask_hi)
{
	if (family == 4) {
		*mask_lo = pacer_mask4(prefix);
		*mask_hi = 0;
		return;
	}
	*mask_lo = pacer_mask6_lo(prefix);
	*mask_hi = pacer_mask6_hi(prefix);
}

/* An address's bytes as struct pacer_src holds them. */
PACER_INLINE void pacer_src_of_bytes(__u32 family, const __u8 *addr, struct pacer_src *out)
{
	__u32 v4;

	if (family == 4) {
		__builtin_memcpy(&v4, addr, 4);
		out->lo = v4;
		out->hi = 0;
		return;
	}
	__builtin_memcpy(&out->lo, addr, 8);
	__builtin_memcpy(&out->hi, addr + 8, 8);
}

/*
 * Set a prefix term (PACER_M_SRC or PACER_M_DST) to addr/prefix, host bits
 * cleared; it sets the family term too.  0, or -1 when the family is not 4
 * or 6, the prefix is too long for it, or the match already names the
 * other family.
 */
PACER_INLINE int pacer_match_set_prefix(struct pacer_match *m, __u32 term, __u32 family,
					const __u8 *addr, __u32 prefix)
{
	struct pacer_src a;
	__u64 mlo, mhi;

	if ((family != 4 && family != 6) || prefix > (family == 4 ? 32u : 128u) ||
	    (term != PACER_M_SRC && term != PACER_M_DST))
		return -1;
	if ((m->terms & (PACER_M_FAMILY | PACER_M_SRC | PACER_M_DST)) && m->family != family)
		return -1;
	pacer_src_of_bytes(family, addr, &a);
	pacer_prefix_masks(family, prefix, &mlo, &mhi);
	if (term == PACER_M_SRC) {
		m->src_lo = a.lo & mlo;
		m->src_hi = a.hi & mhi;
		m->src_mask_lo = mlo;
		m->src_mask_hi = mhi;
	} else {
		m->dst_lo = a.lo & mlo;
		m->dst_hi = a.hi & mhi;
		m->dst_mask_lo = mlo;
		m->dst_mask_hi = mhi;
	}
	m->family = (__u8)family;
	m->terms |= term | PACER_M_FAMILY;
	return 0;
}

/*
 * Why a match can never fit, or is not one this ABI knows; NULL when it is
 * sound.  Userspace refuses such a match before it reaches the datapath.
 */
PACER_INLINE const char *pacer_match_problem(const struct pacer_match *m)
{
	__u32 t = m->terms;
	int tcp_udp = (t & PACER_M_PROTO) &&
		      (m->proto == PACER_IPPROTO_TCP || m->proto == PACER_IPPROTO_UDP);

	if (t & ~PACER_M_ALL)
		return "unknown match terms";
	if ((t & (PACER_M_DPORT | PACER_M_SPORT)) && !tcp_udp)
		return "a port needs tcp or udp";
	if ((t & PACER_M_SYN) && !((t & PACER_M_PROTO) && m->proto == PACER_IPPROTO_TCP))
		return "flags syn needs tcp";
	if ((t & PACER_M_DPORT) && m->dport_lo > m->dport_hi)
		return "dport range is empty";
	if ((t & PACER_M_SPORT) && m->sport_lo > m->sport_hi)
		return "sport range is empty";
	if ((t & (PACER_M_FAMILY | PACER_M_SRC | PACER_M_DST)) && m->family != 4 && m->family != 6)
		return "family is neither 4 nor 6";
	if ((t & (PACER_M_SRC | PACER_M_DST)) && !(t & PACER_M_FAMILY))
		return "an address term needs its family";
	if ((t & PACER_M_PROTO) && (t & PACER_M_FAMILY) &&
	    ((m->proto == PACER_IPPROTO_ICMP && m->family != 4) ||
	     (m->proto == PACER_IPPROTO_ICMPV6 && m->family != 6)))
		return "icmp is IPv4's, icmpv6 IPv6's";
	if ((t & PACER_M_SRC) && ((m->src_lo & ~m->src_mask_lo) || (m->src_hi & ~m->src_mask_hi)))
		return "src has bits outside its prefix";
	if ((t & PACER_M_DST) && ((m->dst_lo & ~m->dst_mask_lo) || (m->dst_hi & ~m->dst_mask_hi)))
		return "dst has bits outside its prefix";
	if ((t & PACER_M_VLAN) && m->vlan > 4095)
		return "vlan id is above 4095";
	return 0;
}
/*
 * Set in words (both families' filters, 2 * PACER_LIST_FILTER_WORDS) the
 * bits of every address the prefix (family 4 or 6, len bits of addr, host
 * bits ignored) covers: one bit from the filter's granularity on, each
 * covered value's below it, every bit of IPv6's filter for a prefix so
 * short that it covers more than the filter has bits.
 */
PACER_INLINE void pacer_list_filter_set(__u64 *words, __u32 family, __u32 len, const __u8 *addr)
{
	__u32 top, lo, hi, v;

	__builtin_memcpy(&top, addr, 4);
	top = __builtin_bswap32(top);
	if (family == 4) {
		__u32 span = len >= 32 ? 0 : len == 0 ? 0xffffffffu : 0xffffffffu >> len;

		lo = pacer_list_filter_bit4(top & ~span);
		hi = pacer_list_filter_bit4(top | span);
		for (v = lo;; v++) {
			words[v >> 6] |= 1ULL << (v & 63);
			if (v == hi)
				break;
		}
		return;
	}
	words += PACER_LIST_FILTER_WORDS;
	if (len + PACER_LIST_FILTER_LOG2 < PACER_LIST_FILTER_V6_BITS) {
		for (v = 0; v < PACER_LIST_FILTER_WORDS; v++)
			words[v] = ~0ULL;
		return;
	}
	if (len >= PACER_LIST_FILTER_V6_BITS) {
		v = pacer_list_filter_bit6(top);
		words[v >> 6] |= 1ULL << (v & 63);
		return;
	}
	lo = top & ~(0xffffffffu >> len);
	hi = top | (0xffffffffu >> len);
	for (top = lo;; top++) {
		v = pacer_list_filter_bit6(top);
		words[v >> 6] |= 1ULL << (v & 63);
		if (top == hi)
			break;
	}
}
#endif /* !__bpf__ */

#endif /* PACER_CLASSIFY_H */
