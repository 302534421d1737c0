/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --placement auto's second question: where per-CPU placement is exact
 * (rss.h), is it also the cheaper one?  Per-CPU placement spares the shared
 * copy its atomic writes and the transfer of its cache lines between CPUs,
 * but every receiving CPU works on a copy of its own: K copies in the
 * last-level cache instead of one.  The rule (docs/design.md, Placement):
 * per-CPU where one CPU receives, or where the copies the receiving CPUs
 * touch fit in 1/PLACE_CACHE_SHARE of the last-level cache; shared otherwise,
 * and shared where the cache size cannot be read.  Pure decision logic, and
 * the sysfs reader of the cache size.
 */
#ifndef PACER_PLACE_COST_H
#define PACER_PLACE_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The share of the last-level cache the receiving CPUs' copies may take. */
#define PLACE_CACHE_SHARE 32

struct place_cost {
	uint64_t copy_bytes;     /* one copy of the state */
	uint32_t receiving_cpus; /* the RX queues, at most the online CPUs */
	uint64_t cache_bytes;    /* the last-level cache of a receiving CPU; 0: unknown */
	uint32_t cache_level;    /* its level (3 for an L3) */
};

struct place_cost_verdict {
	bool percpu_cheaper;
	char reason[256]; /* why the cheaper one is: "the 2 receiving CPUs' copies ... fit in ..." (no ';') */
	char text[320];   /* "by cost: per-CPU is cheaper: " and the reason */
};

void place_cost_judge(const struct place_cost *c, struct place_cost_verdict *v);

/* --placement auto: PACER_PLACEMENT_PERCPU where per-CPU is exact and cheaper, SHARED otherwise. */
uint32_t place_auto(bool percpu_exact, const struct place_cost_verdict *v);

/*
 * The size in bytes of the highest-level data or unified cache described
 * under dir (sysfs: /sys/devices/system/cpu/cpu0/cache: indexN/level,
 * type and size such as "32768K"), its level in *level; 0 if none is readable.
 */
uint64_t place_cache_bytes(const char *dir, uint32_t *level);

/* The receiving CPUs: rx_queues (0: unknown) capped at the online CPUs (at least 1). */
uint32_t place_receiving_cpus(uint32_t rx_queues, long online_cpus);

#endif
