/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Random class lists and packets for the classifier's property tests
 * (unit_classcompile, prog_classes): every match term, prefixes that nest
 * and overlap around a few base addresses of both families, port ranges
 * on a few edges, VLAN ids; packets on those edges and their neighbours,
 * fragments without ports, SYN and SYN-ACK.  Deterministic from the seed.
 */
#ifndef PACER_LIB_CLASSGEN_H
#define PACER_LIB_CLASSGEN_H

#include <linux/types.h>
#include "pacer_class.h"
#include "pacer_pkt.h"

void classgen_seed(__u64 seed);
__u32 classgen_below(__u32 n);
/* A class named c<i> with random terms (its action, limit and slot are the caller's). */
void classgen_class(struct pacer_class *c, int i);
/* A packet as the full parse leaves it. */
void classgen_pkt(struct pacer_pkt *p);

#endif
