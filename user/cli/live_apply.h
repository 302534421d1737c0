/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live settings written into a running pacer's mapped configuration
 * (.data), one word-sized store per field, so the datapath sees each field
 * change at once: set's, and a replace's for the options it was given.
 */
#ifndef PACER_LIVE_APPLY_H
#define PACER_LIVE_APPLY_H

#include <stdint.h>
#include "live_opts.h"
#include "pacer_abi.h"
#include "pacer_rate.h"

/* The one-word live options of l that were given, into cfg (callers compare before and after to report). */
void live_apply_words(struct pacer_config *cfg, const struct live_opts *l);

/*
 * A per-source rate (n per interval_ns, its ticks in rate) into cfg, with
 * no burst while the threshold changes: a packet meanwhile sees at most
 * one per interval; nothing is stored when it is the running one.
 */
void live_apply_rate(struct pacer_config *cfg, uint32_t n, uint64_t interval_ns,
		     const struct pacer_rate *rate);

#endif
