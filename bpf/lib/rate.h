/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rate in force (pacer_cfg's ticks, include/pacer_rate.h), as packets
 * and the table's sweep read it: live `set` changes it.
 */
#ifndef PACER_BPF_RATE_H
#define PACER_BPF_RATE_H

#include "config.h"
#include "pacer_rate.h"

/* The rate in force; a corrupt one must not open the gate: use the strictest the cells hold. */
static __always_inline struct pacer_rate rate_now(void)
{
	__u32 max_sat = pacer_rate_max_sat(pacer_layout.backend);
	struct pacer_rate r = pacer_rate_of(pacer_cfg.thresh_ticks, pacer_cfg.burst_ticks);

	if (r.thresh < PACER_MIN_THRESH || r.thresh > max_sat || r.burst > max_sat || r.sat > max_sat)
		return pacer_rate_of(max_sat, 0);
	return r;
}

#endif /* PACER_BPF_RATE_H */
