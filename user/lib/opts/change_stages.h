/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath stages (enum pacer_feature) a change given on the command
 * line or in a file may turn on: what a writer makes the running program
 * carry before it applies the change (variant_swap.h).  A superset where
 * the change's outcome depends on the running settings (a budget option
 * may turn the budget off; the settle after the change drops the stage).
 */
#ifndef PACER_CHANGE_STAGES_H
#define PACER_CHANGE_STAGES_H

#include <stdint.h>
#include "pacer_abi.h"
#include "budget_cfg.h"
#include "class_conf.h"
#include "live_opts.h"

/* l, b and cc may each be NULL (not part of the change). */
uint32_t change_stages(const struct live_opts *l, const struct budget_opts *b,
		       const struct class_conf *cc);

#endif
