// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer query: the sketch's view of one source, read from the live maps. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "common.h"
#include "json_out.h"
#include "parse.h"
#include "pacer_sketch.h"
#include "pacer_place.h"
#include "pacer_table.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-pacer query IFNAME ADDRESS [--json]\n\n"
		   "When the sketch on IFNAME last saw ADDRESS's key (the address masked to the\n"
		   "configured prefix), and whether a packet from it would be dropped now.\n"
		   "Per-CPU copies merge by taking each row's most recent cell over CPUs,\n"
		   "then the oldest over rows, as the datapath would if all CPUs were one.\n");
}

/*
 * Age of the key in ticks over all CPU copies: the youngest copy of each row
 * (per-row max of timestamps), then the oldest row (min over rows).
 */
static int key_age(const struct pacer_handle *h, uint64_t hash, uint64_t tick, uint32_t *age)
{
	const struct pacer_layout *l = &h->layout;
	uint32_t lines = (uint32_t)pacer_total_lines(l->kind, l->rows, l->lines_log2);
	uint32_t copies = l->copies ? l->copies : 1, cpu;
	uint32_t idx[PACER_MAX_ROWS] = { 0 }, cell[PACER_MAX_ROWS] = { 0 }, r, worst = 0;
	struct pacer_line val;

	pacer_slots(l->kind, l->rows, l->lines_log2, hash, idx, cell);
	for (r = 0; r < l->rows; r++) {
		uint32_t best = PACER_AGE_STALE;

		for (cpu = 0; cpu < copies; cpu++) {
			uint32_t i = pacer_copy_base(l->placement, copies, cpu, lines) + idx[r], a;
			int err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_SK], &i, &val);

			if (err)
				return err;
			a = pacer_cell_age(&val, cell[r], tick);
			best = a < best ? a : best;
		}
		worst = best > worst ? best : worst;
	}
	*age = worst;
	return 0;
}

/* Table: the key's youngest entry with its fingerprint over its two lines in every copy. */
static int table_key_age(const struct pacer_handle *h, uint64_t hash, uint64_t tick, uint32_t *age)
{
	const struct pacer_layout *l = &h->layout;
	uint32_t copies = l->copies ? l->copies : 1, cpu, idx[2], i, thresh = h->cfg->thresh_ticks;
	struct pacer_tbl_line lines[2], *lp[2] = { &lines[0], &lines[1] };
	struct pacer_tbl_scan s;
	uint32_t a;

	pacer_tbl_lines(hash, l->lines_log2, idx);
	*age = PACER_AGE_STALE;
	for (cpu = 0; cpu < copies; cpu++) {
		for (i = 0; i < 2; i++) {
			uint32_t k = pacer_copy_base(l->placement, copies, cpu, 1u << l->lines_log2) + idx[i];
			int err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_SK], &k, &lines[i]);

			if (err)
				return err;
		}
		pacer_tbl_scan(lp, pacer_tbl_fp(hash), tick, thresh, &s);
		a = pacer_tbl_key_age(lp, &s, tick);
		*age = a < *age ? a : *age;
	}
	return 0;
}

int cmd_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pacer_handle h;
	struct pacer_addr addr;
	uint64_t hash, now, tick, q;
	uint32_t age = PACER_AGE_STALE, prefix;
	bool json = false, keyed, drop;
	char ab[64], d1[32], d2[32], key[80];
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (expect_positionals(argc, argv, 2, "an interface name and an address"))
		return 2;
	if (check_ifname_arg(argv[optind]))
		return 2;
	if (parse_address(argv[optind + 1], &addr))
		return bad_value("ADDRESS", argv[optind + 1], "expected an IPv4 or IPv6 address");
	if (pacer_addr_unmap_v4(&addr) && !json)
		printf("%s is IPv4-mapped: the datapath sees that host as the IPv4 source %s\n",
		       argv[optind + 1], format_address(&addr, ab, sizeof(ab)));
	if (pacer_handle_open(argv[optind], &h))
		return 1;

	prefix = addr.family == 4 ? h.cfg->prefix4 : h.cfg->prefix6;
	pacer_addr_mask(&addr, prefix);
	keyed = h.cfg->hash_key[0] && h.cfg->hash_key[1];
	now = pacer_clock_now(&h);
	tick = pacer_now_tick(now, h.layout.tick_shift);
	q = 1ULL << h.layout.tick_shift;
	if (keyed) {
		hash = addr.family == 4 ? pacer_hash_v4(h.cfg->hash_key, (uint32_t)addr.lo)
					: pacer_hash_v6(h.cfg->hash_key, addr.lo, addr.hi);
		err = h.layout.backend == PACER_BACKEND_TABLE ? table_key_age(&h, hash, tick, &age)
							       : key_age(&h, hash, tick, &age);
		if (err) {
			pr_err("cannot read the sketch: %s", strerror(-err));
			pacer_handle_close(&h);
			return 1;
		}
	}
	drop = pacer_is_recent(age, h.cfg->thresh_ticks);
	format_address(&addr, ab, sizeof(ab));
	if (json) {
		snprintf(key, sizeof(key), "%s/%u", ab, prefix);
		printf("{\"key\":");
		json_string(stdout, key);
		printf(",\"age_ticks\":%d,\"tick_ns\":%llu,\"threshold_ticks\":%u,\"would_drop\":%s}\n",
		       age >= PACER_AGE_STALE || age >= PACER_MAX_THRESH ? -1 : (int)age,
		       (unsigned long long)q, h.cfg->thresh_ticks, drop ? "true" : "false");
	} else if (age >= PACER_MAX_THRESH) {
		printf("%s/%u: not seen within the %s's memory (%llu ticks); a packet now would pass%s\n",
		       ab, prefix, backend_name(h.layout.backend), (unsigned long long)PACER_MAX_THRESH,
		       h.layout.backend == PACER_BACKEND_TABLE ? " if one of its lines has a free entry" : "");
	} else {
		/* A whole-tick age a means the last update was between a-1 and a+1 ticks ago. */
		printf("%s/%u: last seen %u ticks ago (between %s and %s); threshold %u ticks: a packet now would be %s\n",
		       ab, prefix, age, format_duration(age ? (age - 1) * q : 0, d1, sizeof(d1)),
		       format_duration((age + 1) * q, d2, sizeof(d2)), h.cfg->thresh_ticks,
		       drop ? "DROPPED" : "passed");
	}
	pacer_handle_close(&h);
	return 0;
}
