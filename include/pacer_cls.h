/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The compiled classifier: the ordered class list (pacer_class.h) as
 * lookup tables, so the first class that fits a packet is found in a
 * bounded number of steps whatever the number of classes.
 *
 * Bit-vector intersection (Lakshman and Stiliadis' scheme): each field a
 * class may test is a dimension, and a lookup in a dimension gives the
 * set of classes whose term on that field holds for the packet's value
 * (a class without the term is in every set).  Class i is bit i.  The
 * packet's classes are the AND of its dimensions' sets; the first set bit
 * is the first class in order whose every term holds: first-match, as the
 * ordered walk (pacer_match_fits()) decides.
 *
 * The dimensions, and what a lookup costs:
 *   head   family, protocol, "has TCP/UDP ports" and "is a bare SYN": one
 *          array lookup of its set (PACER_CLS_HEAD_ENTRIES per bank).  It
 *          also carries what other terms need: an address term holds only
 *          in its family, a port or flags term only with an L4 header;
 *   dport, sport
 *          the port's elementary interval's set id from an array of
 *          PACER_CLS_PORT_CHUNK ids per entry, then its set from the pool;
 *   src, dst
 *          a longest-prefix match in a trie holding each class's prefix
 *          (and /0), keyed with the bank, dimension and family in front
 *          of the address; the longest prefix holding the address gives
 *          the classes whose prefix holds it (prefixes nest, so every
 *          such class's prefix is that one or a shorter one), by pool id;
 *   vlan   a hash lookup of the VLAN id's pool id; absent: the default
 *          set (the classes without a VLAN term).
 * A dimension no class of the bank tests (its PACER_CLS_D_* bit is clear)
 * is not looked up.  Sets are PACER_CLS_WORDS 64-bit words; the first
 * (count + 63) / 64 of them hold classes.
 *
 * Everything is per bank (pacer_class.h): the installer compiles into the
 * bank no packet reads, then flips class_sel.
 */
#ifndef PACER_CLS_H
#define PACER_CLS_H

#include <linux/types.h>
#include "pacer_compiler.h"
#include "pacer_class.h"
#include "pacer_pkt.h"

#define PACER_CLS_WORDS ((PACER_MAX_CLASSES + 63) / 64)

struct pacer_cls_set {
	__u64 w[PACER_CLS_WORDS];
};

/* head index: family (1 bit), protocol (8), L4 header read (1), bare SYN (1). */
#define PACER_CLS_HEAD_ENTRIES 2048u

/* Port dimensions: ids of 65536 ports, PACER_CLS_PORT_CHUNK to an array entry. */
#define PACER_CLS_PORT_CHUNK 32u
#define PACER_CLS_PORT_ENTRIES (65536u / PACER_CLS_PORT_CHUNK)
struct pacer_cls_port_chunk {
	__u16 id[PACER_CLS_PORT_CHUNK];
};

/* The pool of sets the port, address and VLAN dimensions name by id, per bank. */
#define PACER_CLS_POOL 4096u

/*
 * Dimensions a bank's classes test.  They travel in class_sel
 * (pacer_class.h) with the bank and the count, so the flip that installs a
 * bank installs its dimensions in the same 32-bit store.
 */
#define PACER_CLS_D_DPORT (1u << 0)
#define PACER_CLS_D_SPORT (1u << 1)
#define PACER_CLS_D_SRC4 (1u << 2)
#define PACER_CLS_D_SRC6 (1u << 3)
#define PACER_CLS_D_DST4 (1u << 4)
#define PACER_CLS_D_DST6 (1u << 5)
#define PACER_CLS_D_VLAN (1u << 6)
#define PACER_CLS_D_ALL 0x7fu

/* A bank's header, as class_sel carries it. */
struct pacer_cls_bank {
	__u32 dims;  /* PACER_CLS_D_* */
	__u32 words; /* words of a set that hold classes: 1..PACER_CLS_WORDS */
};

/* The VLAN dimension's default set (the classes without a VLAN term): pool id 0. */
#define PACER_CLS_VLAN_DEFAULT 0u

/*
 * "pacer_cls_sets", an array of struct pacer_cls_set: per bank, the head's
 * PACER_CLS_HEAD_ENTRIES sets by head index, then the pool's by id.
 */
#define PACER_CLS_BANK_SETS (PACER_CLS_HEAD_ENTRIES + PACER_CLS_POOL)
#define PACER_CLS_SETS (PACER_CLASS_BANKS * PACER_CLS_BANK_SETS)
PACER_INLINE __u32 pacer_cls_head_slot(__u32 bank, __u32 head)
{
	return bank * PACER_CLS_BANK_SETS + (head & (PACER_CLS_HEAD_ENTRIES - 1));
}
PACER_INLINE __u32 pacer_cls_pool_slot(__u32 bank, __u32 id)
{
	return bank * PACER_CLS_BANK_SETS + PACER_CLS_HEAD_ENTRIES + id;
}

/* "pacer_cls_ports", an array of chunks: per bank, dport's then sport's. */
#define PACER_CLS_PORTS (PACER_CLASS_BANKS * 2 * PACER_CLS_PORT_ENTRIES)
PACER_INLINE __u32 pacer_cls_port_slot(__u32 bank, __u32 sport, __u32 port)
{
	return (bank * 2 + sport) * PACER_CLS_PORT_ENTRIES + (port & 0xffff) / PACER_CLS_PORT_CHUNK;
}

/*
 * "pacer_cls_addrs", one longest-prefix-match trie for both address
 * dimensions of both banks: the key's tag byte, always matched whole,
 * says which (bank << 2 | dst << 1 | IPv6), and prefixlen counts it.  An
 * IPv4 address fills addr[0..3], as struct pacer_src holds it.  Value:
 * the prefix's pool id (__u32).
 */
struct pacer_cls_addr_key {
	__u32 prefixlen;
	__u8 tag;
	__u8 addr[16];
} __attribute__((packed));

#define PACER_CLS_TAG_BITS 8u
#define PACER_CLS_ADDRS (PACER_CLASS_BANKS * 2 * 2 * (PACER_MAX_CLASSES + 1))

PACER_INLINE __u8 pacer_cls_tag(__u32 bank, int dst, int v6)
{
	return (__u8)(bank << 2 | (__u32)(dst != 0) << 1 | (__u32)(v6 != 0));
}

/* "pacer_cls_vlan", a hash: a VLAN id's pool id in a bank; absent: PACER_CLS_VLAN_DEFAULT. */
struct pacer_cls_vlan_key {
	__u32 bank;
	__u32 vlan;
};

#define PACER_CLS_VLANS (PACER_CLASS_BANKS * PACER_MAX_CLASSES)

/* The packet's head index (pacer_pkt.h's fields). */
PACER_INLINE __u32 pacer_cls_head_index(const struct pacer_pkt *p)
{
	__u32 syn = p->l4 && p->proto == PACER_IPPROTO_TCP &&
		    (p->tcp_flags & (PACER_TCP_SYN | PACER_TCP_ACK)) == PACER_TCP_SYN;

	return (__u32)(p->kind == PACER_PKT_V6) << 10 | (__u32)p->proto << 2 | (__u32)(p->l4 != 0) << 1 |
	       syn;
}

/* The trie key for addr (kind PACER_PKT_V4 or _V6), a source (dst 0) or a destination, in bank. */
PACER_INLINE void pacer_cls_addr_key_of(struct pacer_cls_addr_key *k, __u32 bank, int dst, int kind,
					const struct pacer_src *addr)
{
	__u64 lo = addr->lo, hi = addr->hi;
	int i;

	k->tag = pacer_cls_tag(bank, dst, kind == PACER_PKT_V6);
	k->prefixlen = PACER_CLS_TAG_BITS + (kind == PACER_PKT_V6 ? 128 : 32);
	/* pacer_src holds the bytes in memory order: copy them so, on any host. */
	PACER_UNROLL
	for (i = 0; i < 8; i++) {
		k->addr[i] = ((const __u8 *)&lo)[i];
		k->addr[8 + i] = ((const __u8 *)&hi)[i];
	}
}

/* acc &= s over the first words words. */
PACER_INLINE void pacer_cls_and(struct pacer_cls_set *acc, const struct pacer_cls_set *s)
{
	int i;

	PACER_UNROLL
	for (i = 0; i < PACER_CLS_WORDS; i++)
		acc->w[i] &= s->w[i];
}

/*
 * The index of the lowest set bit of x (x != 0), without a
 * count-trailing-zeros instruction: that bit alone, then a binary search
 * for it in six halvings.
 */
PACER_INLINE __u32 pacer_cls_lowest_bit(__u64 x)
{
	__u32 n = 0, half;

	x &= -x;
	PACER_UNROLL
	for (half = 32; half; half >>= 1)
		if (x >> half) {
			n += half;
			x >>= half;
		}
	return n;
}

/* The first class in s among the first words words, or -1. */
PACER_INLINE int pacer_cls_first(const struct pacer_cls_set *s, __u32 words)
{
	int i;

	for (i = 0; i < PACER_CLS_WORDS; i++) {
		if ((__u32)i >= words)
			break;
		if (s->w[i])
			return i * 64 + (int)pacer_cls_lowest_bit(s->w[i]);
	}
	return -1;
}

#endif /* PACER_CLS_H */
