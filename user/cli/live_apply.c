// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live settings into a running pacer's configuration (live_apply.h). */
#include <stdbool.h>
#include "live_apply.h"

/* One word, stored only if its option was given and it differs. */
static void store32(volatile __u32 *to, uint32_t v, bool given)
{
	if (given && *to != v)
		*to = v;
}

static void store64(volatile __u64 *to, uint64_t v, bool given)
{
	if (given && *to != v)
		*to = v;
}

void live_apply_words(struct pacer_config *cfg, const struct live_opts *l)
{
	store32(&cfg->policy, l->policy, l->policy_set);
	store32(&cfg->mode, l->mode.mode, l->mode_set);
	store32(&cfg->deny_mode, l->deny_mode, l->deny_mode_set);
	store32(&cfg->malformed, l->malformed, l->malformed_set);
	store32(&cfg->prefix4, l->prefix4, l->prefix4_set);
	store32(&cfg->prefix6, l->prefix6, l->prefix6_set);
	store64(&cfg->sample_src_thresh, l->sample_src, l->sample_src_set);
	store64(&cfg->sample_pkt_thresh, l->sample_pkt, l->sample_pkt_set);
	__sync_synchronize();
}

void live_apply_rate(struct pacer_config *cfg, uint32_t n, uint64_t interval_ns,
		     const struct pacer_rate *rate)
{
	if (cfg->thresh_ticks == rate->thresh && cfg->burst_ticks == rate->burst &&
	    cfg->interval_ns == interval_ns && cfg->rate_n == n)
		return;
	cfg->burst_ticks = 0;
	__sync_synchronize();
	cfg->thresh_ticks = rate->thresh;
	__sync_synchronize();
	cfg->burst_ticks = rate->burst;
	cfg->interval_ns = interval_ns;
	cfg->rate_n = n;
	__sync_synchronize();
}
