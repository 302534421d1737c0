// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-CPU placement against shared by cost: see place_cost.h. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "cli_values.h"
#include "pacer_abi.h"
#include "place_cost.h"

void place_cost_judge(const struct place_cost *c, struct place_cost_verdict *v)
{
	/* saturated: a product past 64 bits fits in no cache */
	uint64_t copies = c->copy_bytes && c->receiving_cpus > UINT64_MAX / c->copy_bytes
				  ? UINT64_MAX
				  : (uint64_t)c->receiving_cpus * c->copy_bytes;
	uint64_t room = c->cache_bytes / PLACE_CACHE_SHARE;
	char one[32], all[32], cache[32], share[32];

	memset(v, 0, sizeof(*v));
	format_bytes(c->copy_bytes, one, sizeof(one));
	format_bytes(copies, all, sizeof(all));
	if (c->receiving_cpus <= 1) {
		v->percpu_cheaper = true;
		snprintf(v->reason, sizeof(v->reason),
			 "one receiving CPU works on one copy of %s either way, and per-CPU admissions "
			 "are written without compare-and-swap", one);
	} else if (!c->cache_bytes) {
		snprintf(v->reason, sizeof(v->reason),
			 "the cache size is unknown, so the %u receiving CPUs' copies (%u x %s = %s) may "
			 "not fit in it", c->receiving_cpus, c->receiving_cpus, one, all);
	} else {
		format_bytes(c->cache_bytes, cache, sizeof(cache));
		format_bytes(room, share, sizeof(share));
		v->percpu_cheaper = copies <= room;
		snprintf(v->reason, sizeof(v->reason),
			 "the %u receiving CPUs' copies (%u x %s = %s) %s 1/%u of the %s L%u cache (%s)",
			 c->receiving_cpus, c->receiving_cpus, one, all,
			 v->percpu_cheaper ? "fit in" : "exceed", PLACE_CACHE_SHARE, cache, c->cache_level,
			 share);
	}
	snprintf(v->text, sizeof(v->text), "by cost: %s is cheaper: %s",
		 v->percpu_cheaper ? "per-CPU" : "shared", v->reason);
}

uint32_t place_auto(bool percpu_exact, const struct place_cost_verdict *v)
{
	return percpu_exact && v->percpu_cheaper ? PACER_PLACEMENT_PERCPU : PACER_PLACEMENT_SHARED;
}

/* The first line of dir/name, or "" */
static void read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* sysfs cache sizes: "32768K", "2M", or bytes; 0 for anything else. */
static uint64_t parse_size(const char *s)
{
	unsigned long long n;
	char unit = '\0', extra;
	int got = sscanf(s, "%llu%c%c", &n, &unit, &extra);

	if (got == 1)
		return n;
	if (got != 2)
		return 0;
	switch (unit) {
	case 'K': return (uint64_t)n << 10;
	case 'M': return (uint64_t)n << 20;
	case 'G': return (uint64_t)n << 30;
	default: return 0;
	}
}

uint64_t place_cache_bytes(const char *dir, uint32_t *level)
{
	uint64_t best = 0;
	uint32_t best_level = 0;
	char sub[512], buf[64];
	unsigned int i, lvl;

	/* index0.. are numbered without gaps; a handful per CPU */
	for (i = 0; i < 16; i++) {
		uint64_t size;

		snprintf(sub, sizeof(sub), "%s/index%u", dir, i);
		read_line(sub, "level", buf, sizeof(buf));
		if (!buf[0])
			break;
		if (sscanf(buf, "%u", &lvl) != 1)
			continue;
		read_line(sub, "type", buf, sizeof(buf));
		if (strcmp(buf, "Unified") && strcmp(buf, "Data"))
			continue;
		read_line(sub, "size", buf, sizeof(buf));
		size = parse_size(buf);
		if (size && lvl > best_level) {
			best = size;
			best_level = lvl;
		}
	}
	*level = best_level;
	return best;
}

uint32_t place_receiving_cpus(uint32_t rx_queues, long online_cpus)
{
	uint32_t online = online_cpus > 0 ? (uint32_t)online_cpus : 1;

	return rx_queues && rx_queues < online ? rx_queues : online;
}
