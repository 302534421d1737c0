// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdio.h>
#include <string.h>
#include "pacer_class.h"
#include "variant.h"

static const char *const feature_names[PACER_F_COUNT] = {
	"classes", "lists", "budget", "sampling", "observe",
};

uint32_t variant_needed(const struct pacer_config *cfg, uint64_t budget_limit,
			const struct pacer_class *c, int n)
{
	uint32_t bits = 0;
	int i;

	if (PACER_CLASS_SEL_COUNT(cfg->class_sel))
		bits |= PACER_F_CLASSES;
	if (cfg->list_sel)
		bits |= PACER_F_LISTS;
	if (budget_limit)
		bits |= PACER_F_BUDGET;
	if (cfg->sample_src_thresh || cfg->sample_pkt_thresh)
		bits |= PACER_F_SAMPLING;
	/* Observed anywhere a drop verdict can be: globally, on the deny list, by a class. */
	if (cfg->mode == PACER_MODE_OBSERVE ||
	    ((bits & PACER_F_LISTS) && PACER_MODE_OBSERVES(cfg->deny_mode, cfg->mode)))
		bits |= PACER_F_OBSERVE;
	for (i = 0; (bits & PACER_F_CLASSES) && i < n; i++)
		if (PACER_MODE_OBSERVES(c[i].mode, cfg->mode))
			bits |= PACER_F_OBSERVE;
	return bits;
}

const char *variant_feature_name(uint32_t bit)
{
	int i;

	for (i = 0; i < PACER_F_COUNT; i++)
		if (bit == 1u << i)
			return feature_names[i];
	return NULL;
}

const char *variant_describe(uint32_t bits, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < PACER_F_COUNT && used < len; i++)
		if (bits & (1u << i))
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
						 feature_names[i]);
	if (!buf[0])
		snprintf(buf, len, "none");
	return buf;
}
