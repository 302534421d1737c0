/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes (include/pacer_class.h): the two banks of classes the
 * loader writes and pacer_cfg.class_sel selects, the walk's index of each
 * bank, and the per-class counters.
 */
#ifndef PACER_BPF_CLASS_H
#define PACER_BPF_CLASS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_CLASS_BANKS * PACER_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct pacer_class);
} pacer_classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PACER_CLASS_BANKS);
	__type(key, __u32);
	__type(value, struct pacer_class_index);
} pacer_class_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PACER_MAX_CLASSES);
	__type(key, __u32);
	__type(value, struct pacer_class_counters);
} pacer_class_stats SEC(".maps");

#endif /* PACER_BPF_CLASS_H */
