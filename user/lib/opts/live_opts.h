/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The live settings' options, shared by load, set, record and analyze --pcap. */
#ifndef PACER_LIVE_OPTS_H
#define PACER_LIVE_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include "opts.h"

/* --rate N/T. */
struct rate_opt {
	uint64_t n, interval_ns;
};

/*
 * --mode: observe|enforce; native|skb, load's attach mode as it was spelt
 * before --xdp-mode, lands in attach (load takes it, set refuses it).
 */
struct mode_opt {
	uint32_t mode;   /* enum pacer_mode: ENFORCE or OBSERVE */
	uint32_t attach; /* enum xdp_attach_mode, when attach_set */
	bool attach_set;
};

struct live_opts {
	uint64_t interval_ns, sample_src, sample_pkt; /* sampling: 32-bit hash thresholds */
	struct rate_opt rate;
	uint32_t policy, prefix4, prefix6, malformed;
	bool interval_set, rate_set, policy_set, prefix4_set, prefix6_set, malformed_set;
	bool sample_src_set, sample_pkt_set;
	struct mode_opt mode;
	uint32_t deny_mode; /* enum pacer_mode: GLOBAL follows --mode */
	bool mode_set, deny_mode_set;
};

/* --interval, --policy, --prefix4, --prefix6 with load's defaults. */
extern const struct opt_spec pacing_specs[];
/* --malformed. */
extern const struct opt_spec malformed_specs[];
/* --mode, --deny-mode. */
extern const struct opt_spec mode_specs[];
/* --sample-sources, --sample-packets (no defaults). */
extern const struct opt_spec sampling_specs[];

/*
 * --class 'NAME: WORDS', --exempt PREFIX, --deny PREFIX, each repeatable,
 * into the struct class_conf at the entry's offset (class_conf.h).
 */
extern const struct opt_spec class_specs[];

/*
 * --wait SECS: how long a writing verb waits for another's writer lock
 * (writer_lock.h), into the uint32_t at the entry's offset.
 */
extern const struct opt_spec wait_specs[];

/* Whether any option of these tables was given. */
bool live_opts_any(const struct live_opts *o);

/* What is wrong with the combination given (--interval with --rate), or NULL. */
const char *live_opts_conflict(const struct live_opts *o);

/* The per-source rate asked for: N (1 for --interval) and T. */
void live_opts_rate(const struct live_opts *o, uint32_t *n, uint64_t *interval_ns);

#endif
