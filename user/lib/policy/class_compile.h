/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The class list compiled into the classifier's tables (include/pacer_cls.h):
 * what the installer writes into a bank's maps, and the lookup those maps
 * give, run here on the tables themselves (the property tests check it
 * against the ordered walk).
 */
#ifndef PACER_CLASS_COMPILE_H
#define PACER_CLASS_COMPILE_H

#include <stddef.h>
#include <linux/types.h>
#include "pacer_cls.h"

/* One prefix of an address dimension: its trie entry. */
struct pacer_cls_prefix {
	__u8 v6;       /* 1: IPv6 */
	__u8 len;      /* the address's bits: 0..32 or 0..128 */
	__u16 set;     /* pool id */
	__u8 addr[16]; /* network order; beyond len: 0 */
};

struct pacer_cls_vlan {
	__u16 vlan, set;
};

#define PACER_CLS_MAX_PREFIXES (2 * (PACER_MAX_CLASSES + 1))

struct pacer_cls_compiled {
	struct pacer_cls_bank bank;
	struct pacer_cls_set head[PACER_CLS_HEAD_ENTRIES];
	__u16 dport[65536], sport[65536]; /* pool ids; meaningful with the dimension's flag */
	struct pacer_cls_set pool[PACER_CLS_POOL];
	__u32 n_pool;
	struct pacer_cls_prefix src[PACER_CLS_MAX_PREFIXES], dst[PACER_CLS_MAX_PREFIXES];
	int n_src, n_dst;
	struct pacer_cls_vlan vlan[PACER_MAX_CLASSES];
	int n_vlan;
};

/*
 * Compile classes c[0..n) (1 <= n <= PACER_MAX_CLASSES, as the checks of
 * class_conf.h leave them) into *out (about 0.5 MB: allocate it).  0, or
 * -EINVAL with err naming the class whose address mask is not a prefix.
 */
int pacer_cls_compile(const struct pacer_class *c, int n, struct pacer_cls_compiled *out, char *err,
		      size_t errlen);

/* The first class of the compiled list that fits p, or -1: the datapath's lookup, on the tables. */
int pacer_cls_lookup(const struct pacer_cls_compiled *cc, const struct pacer_pkt *p);

/* The same question asked of the list in order: the reference. */
int pacer_cls_walk(const struct pacer_class *c, int n, const struct pacer_pkt *p);

#endif
