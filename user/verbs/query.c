// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer query: the sketch's view of one source, read from the live maps. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "common.h"
#include "json_writer.h"
#include "opts.h"
#include "cli_values.h"
#include "pacer_sketch.h"
#include "pacer_place.h"
#include "pacer_table.h"
#include "backend.h"

struct query_opts {
	const char *ifname;
	struct opt_address addr;
	bool json;
};

static const struct opt_spec query_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct query_opts, ifname) },
	{ .name = "ADDRESS", .type = OPT_ADDRESS, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct query_opts, addr) },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct query_opts, json),
	  .help = "one JSON object instead of the text" },
	{ 0 },
};

static const struct opt_verb query_verb = {
	.name = "query",
	.synopsis = "IFNAME ADDRESS [--json]",
	.intro = "When the sketch on IFNAME last saw ADDRESS's key (the address masked to the\n"
		 "configured prefix), whether a packet from it would be dropped now, and\n"
		 "how many packets it may send now (with --rate N/T, up to its burst).\n"
		 "Per-CPU copies merge by taking each row's most recent cell over CPUs,\n"
		 "then the oldest over rows, as the datapath would if all CPUs were one.\n",
	.args = "an interface name and an address",
	.opts = query_specs,
};

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
	uint32_t copies = l->copies ? l->copies : 1, cpu, idx[2], i;
	struct pacer_rate rate = pacer_rate_of(h->cfg->thresh_ticks, h->cfg->burst_ticks);
	struct pacer_tbl_line lines[2], *lp[2] = { &lines[0], &lines[1] };
	struct pacer_tbl_scan s;
	uint32_t a;

	pacer_tbl_lines(hash, l->lines_log2, idx);
	*age = UINT32_MAX;
	for (cpu = 0; cpu < copies; cpu++) {
		for (i = 0; i < 2; i++) {
			uint32_t k = pacer_copy_base(l->placement, copies, cpu, 1u << l->lines_log2) + idx[i];
			int err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_SK], &k, &lines[i]);

			if (err)
				return err;
		}
		pacer_tbl_scan(lp, pacer_tbl_fp(hash), tick, &rate, &s);
		/* No entry: never seen (the datapath gives it a full burst). */
		a = s.fresh_mask | s.own_mask ? pacer_tbl_key_age(lp, &s, tick) : UINT32_MAX;
		*age = a < *age ? a : *age;
	}
	return 0;
}

/* Each backend's key-age reader of the live map (backend.h); one line per backend. */
static int (*const key_age_of[PACER_BACKEND_MAX])(const struct pacer_handle *h, uint64_t hash,
						   uint64_t tick, uint32_t *age) = {
	[PACER_BACKEND_SKETCH] = key_age,
	[PACER_BACKEND_TABLE] = table_key_age,
};

int cmd_query(int argc, char **argv)
{
	struct query_opts o = { 0 };
	struct pacer_addr addr;
	struct pacer_handle h;
	uint64_t hash, now, tick, q;
	uint32_t age = PACER_AGE_STALE, prefix, credits;
	struct pacer_rate rate;
	bool json, keyed, drop;
	char ab[64], d1[32], d2[32], key[80];
	int err = parse_verb_opts(&query_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	addr = o.addr.addr;
	json = o.json;
	if (pacer_addr_unmap_v4(&addr) && !json)
		printf("%s is IPv4-mapped: the datapath sees that host as the IPv4 source %s\n",
		       o.addr.text, format_address(&addr, ab, sizeof(ab)));
	if (pacer_handle_open(o.ifname, &h))
		return 1;

	prefix = addr.family == 4 ? h.cfg->prefix4 : h.cfg->prefix6;
	pacer_addr_mask(&addr, prefix);
	keyed = h.cfg->hash_key[0] && h.cfg->hash_key[1];
	now = pacer_clock_now(&h);
	tick = pacer_now_tick(now, h.layout.tick_shift);
	q = pacer_tick_ns(h.layout.tick_shift);
	if (keyed) {
		hash = addr.family == 4 ? pacer_hash_v4(h.cfg->hash_key, (uint32_t)addr.lo)
					: pacer_hash_v6(h.cfg->hash_key, addr.lo, addr.hi);
		err = key_age_of[h.layout.backend](&h, hash, tick, &age); /* the handle checked it */
		if (err) {
			pr_err("cannot read the sketch: %s", strerror(-err));
			pacer_handle_close(&h);
			return 1;
		}
	}
	rate = pacer_rate_of(h.cfg->thresh_ticks, h.cfg->burst_ticks);
	drop = pacer_is_recent(age, rate.thresh);
	credits = pacer_rate_credits(age, &rate);
	format_address(&addr, ab, sizeof(ab));
	if (json) {
		struct json_writer w;

		snprintf(key, sizeof(key), "%s/%u", ab, prefix);
		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		jsonw_string_field(&w, "key", key);
		jsonw_int_field(&w, "age_ticks", age >= PACER_AGE_STALE || age >= rate.sat ? -1 : (int)age);
		jsonw_uint_field(&w, "tick_ns", q);
		jsonw_uint_field(&w, "thresh_ticks", rate.thresh);
		jsonw_uint_field(&w, "burst_ticks", rate.burst);
		jsonw_uint_field(&w, "threshold_ticks", rate.thresh); /* thresh_ticks' earlier name, for one release */
		jsonw_bool_field(&w, "would_drop", drop);
		jsonw_uint_field(&w, "may_send_now", credits);
		jsonw_end_object(&w);
	} else if (age >= rate.sat) {
		printf("%s/%u: not seen within the %s's memory (%u ticks); a packet now would pass%s; it may send %u packet%s now\n",
		       ab, prefix, backend_of(h.layout.backend)->name, rate.sat,
		       backend_of(h.layout.backend)->unseen_note,
		       credits, credits == 1 ? "" : "s");
	} else if (rate.burst) {
		printf("%s/%u: its cell is %u ticks old (full burst at %u, threshold %u ticks): it may send %u packet%s now\n",
		       ab, prefix, age, rate.sat, rate.thresh, credits, credits == 1 ? "" : "s");
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
