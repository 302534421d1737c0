/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The program's settings.  The loader writes both before load; an object
 * attached without it (`ip link set dev X xdp obj`) runs on the defaults.
 */
#ifndef PACER_BPF_CONFIG_H
#define PACER_BPF_CONFIG_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_defaults.h"

/* Fixed at load (.rodata): it says what the state's bytes mean. */
const volatile struct pacer_layout pacer_layout = PACER_DEFAULT_LAYOUT;

/*
 * Fixed at load (.rodata.variant): the stages this program carries (enum
 * pacer_feature).  A section of its own, so the layout's map keeps its
 * size for the readers of every release.
 */
const volatile __u32 pacer_variant SEC(".rodata.variant") = PACER_VARIANT_ALL;

/* Whether the program carries stage f: a constant to the verifier, which drops the code it turns off. */
#define PACER_HAS(f) (pacer_variant & (f))

/* Changeable while attached (.data): read on every packet. */
struct pacer_config pacer_cfg = PACER_DEFAULT_CONFIG;

#endif /* PACER_BPF_CONFIG_H */
