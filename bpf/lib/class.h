/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes (include/pacer_class.h): the two banks of classes the
 * loader writes and pacer_cfg.class_sel selects, the compiled classifier of each
 * bank, and the per-class counters.
 */
#ifndef PACER_BPF_CLASS_H
#define PACER_BPF_CLASS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_abi.h"
#include "pacer_cls.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_CLASS_BANKS * PACER_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct pacer_class);
} pacer_classes SEC(".maps");

/* The compiled classifier (include/pacer_cls.h): sets, port ids, prefixes, VLAN ids. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_CLS_SETS);
	__type(key, __u32);
	__type(value, struct pacer_cls_set);
} pacer_cls_sets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_CLS_PORTS);
	__type(key, __u32);
	__type(value, struct pacer_cls_port_chunk);
} pacer_cls_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, PACER_CLS_ADDRS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct pacer_cls_addr_key);
	__type(value, __u32);
} pacer_cls_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PACER_CLS_VLANS);
	__type(key, struct pacer_cls_vlan_key);
	__type(value, __u32);
} pacer_cls_vlan SEC(".maps");

/* acc &= the pool's set id of bank: 0, or -1 if it is missing. */
static __always_inline int cls_and_pool(struct pacer_cls_set *acc, __u32 bank, __u32 id)
{
	__u32 k = pacer_cls_pool_slot(bank, id);
	const struct pacer_cls_set *s;

	if (id >= PACER_CLS_POOL)
		return -1;
	s = bpf_map_lookup_elem(&pacer_cls_sets, &k);
	if (!s)
		return -1;
	pacer_cls_and(acc, s);
	return 0;
}

/* acc &= the set of port's elementary interval (sport 0: destination port). */
static __always_inline int cls_and_port(struct pacer_cls_set *acc, __u32 bank, __u32 sport, __u16 port)
{
	__u32 k = pacer_cls_port_slot(bank, sport, port);
	const struct pacer_cls_port_chunk *ch = bpf_map_lookup_elem(&pacer_cls_ports, &k);

	if (!ch)
		return -1;
	return cls_and_pool(acc, bank, ch->id[port % PACER_CLS_PORT_CHUNK]);
}

/* acc &= the set of the longest prefix holding addr (dst 1: the destination dimension). */
static __always_inline int cls_and_addr(struct pacer_cls_set *acc, __u32 bank, int dst, int kind,
					const struct pacer_src *addr)
{
	struct pacer_cls_addr_key k;
	const __u32 *id;

	pacer_cls_addr_key_of(&k, bank, dst, kind, addr);
	id = bpf_map_lookup_elem(&pacer_cls_addrs, &k);
	if (!id)
		return -1;
	return cls_and_pool(acc, bank, *id);
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PACER_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct pacer_class_counters);
} pacer_class_stats SEC(".maps");

#endif /* PACER_BPF_CLASS_H */
