// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "change_stages.h"

uint32_t change_stages(const struct live_opts *l, const struct budget_opts *b,
		       const struct class_conf *cc)
{
	uint32_t bits = 0;
	int i;

	if (l && ((l->mode_set && l->mode.mode == PACER_MODE_OBSERVE) ||
		  (l->deny_mode_set && l->deny_mode == PACER_MODE_OBSERVE)))
		bits |= PACER_F_OBSERVE;
	if (l && ((l->sample_src_set && l->sample_src) || (l->sample_pkt_set && l->sample_pkt)))
		bits |= PACER_F_SAMPLING;
	if (b && budget_opts_any(b) && !b->off)
		bits |= PACER_F_BUDGET;
	if (cc && cc->classes_given && cc->n > 0)
		bits |= PACER_F_CLASSES;
	for (i = 0; cc && cc->classes_given && i < cc->n; i++)
		if (cc->cls[i].c.mode == PACER_MODE_OBSERVE)
			bits |= PACER_F_OBSERVE;
	if (cc && ((cc->exempt.given && cc->exempt.n) || (cc->deny.given && cc->deny.n)))
		bits |= PACER_F_LISTS;
	return bits;
}
