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
#include "pacer_dense.h"
#include "backend.h"
#include "class_conf.h"
#include "classes_map.h"

struct query_opts {
	const char *ifname, *class_name;
	struct opt_address addr, dst;
	uint32_t dport;
	bool json, dport_set;
};

static const struct opt_spec query_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct query_opts, ifname) },
	{ .name = "ADDRESS", .type = OPT_ADDRESS, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct query_opts, addr) },
	{ .name = "class", .type = OPT_STRING, .arg = "NAME", OPT_FIELD(struct query_opts, class_name),
	  .help = "with traffic classes: this class only (default: every class)" },
	{ .name = "dport", .type = OPT_U32, .arg = "PORT", .max = 65535,
	  OPT_FIELD(struct query_opts, dport), OPT_GIVEN(struct query_opts, dport_set),
	  .help = "the destination port, for a class keyed src+dport" },
	{ .name = "dst", .type = OPT_ADDRESS, .arg = "ADDR", OPT_FIELD(struct query_opts, dst),
	  .help = "the destination address, for a class keyed src+dst" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct query_opts, json),
	  .help = "one JSON object instead of the text" },
	{ 0 },
};

static const struct opt_verb query_verb = {
	.name = "query",
	.synopsis = "IFNAME ADDRESS [--class NAME] [--dport PORT] [--dst ADDR] [--json]",
	.intro = "When the sketch on IFNAME last saw ADDRESS's key (the address masked to the\n"
		 "configured prefix), whether a packet from it would be dropped now, and\n"
		 "how many packets it may send now (with --rate N/T, up to its burst).\n"
		 "Per-CPU copies merge by taking each row's most recent cell over CPUs,\n"
		 "then the oldest over rows, as the datapath would if all CPUs were one.\n"
		 "With traffic classes, the same for each class's key of ADDRESS (a class\n"
		 "keyed src+dport needs --dport, src+dst needs --dst), and whether ADDRESS\n"
		 "is on the exempt or deny list.\n",
	.args = "an interface name and an address",
	.opts = query_specs,
};

/*
 * Age of the key in ticks over all CPU copies: the youngest copy of each row
 * (per-row max of timestamps), then the oldest row (min over rows).
 */
static int key_age(const struct pacer_handle *h, uint64_t hash, uint64_t tick,
		   const struct pacer_rate *rate, uint32_t *age)
{
	const struct pacer_layout *l = &h->layout;
	uint32_t lines = (uint32_t)pacer_total_lines(l->kind, l->rows, l->lines_log2);
	uint32_t copies = l->copies ? l->copies : 1, cpu;
	uint32_t idx[PACER_MAX_ROWS] = { 0 }, cell[PACER_MAX_ROWS] = { 0 }, r, worst = 0;
	struct pacer_line val;

	(void)rate; /* the sketch's cells hold ages, whatever the rate */
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
static int table_key_age(const struct pacer_handle *h, uint64_t hash, uint64_t tick,
			 const struct pacer_rate *rate, uint32_t *age)
{
	const struct pacer_layout *l = &h->layout;
	uint32_t copies = l->copies ? l->copies : 1, cpu, idx[2], i;
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
		pacer_tbl_scan(lp, pacer_tbl_fp(hash), tick, rate, &s);
		/* No entry: never seen (the datapath gives it a full burst). */
		a = s.fresh_mask | s.own_mask ? pacer_tbl_key_age(lp, &s, tick) : UINT32_MAX;
		*age = a < *age ? a : *age;
	}
	return 0;
}

/* Dense table: as the table's, over its two lines of any line count, copies `lines` apart. */
static int dense_key_age(const struct pacer_handle *h, uint64_t hash, uint64_t tick,
			 const struct pacer_rate *rate, uint32_t *age)
{
	const struct pacer_layout *l = &h->layout;
	uint32_t copies = l->copies ? l->copies : 1, cpu, idx[2], i, a;
	struct pacer_dense_line lines[2], *lp[2] = { &lines[0], &lines[1] };
	struct pacer_dense_scan s;

	pacer_dense_lines(hash, l->lines, idx);
	*age = UINT32_MAX;
	for (cpu = 0; cpu < copies; cpu++) {
		for (i = 0; i < 2; i++) {
			uint32_t k = pacer_copy_base(l->placement, copies, cpu, l->lines) + idx[i];
			int err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_SK], &k, &lines[i]);

			if (err)
				return err;
		}
		pacer_dense_scan(lp, pacer_dense_fp(hash), tick, rate, &s);
		/* No entry: never seen (the datapath gives it a full burst). */
		a = s.fresh_mask | s.own_mask ? pacer_dense_key_age(lp, &s, tick) : UINT32_MAX;
		*age = a < *age ? a : *age;
	}
	return 0;
}

/* Each backend's key-age reader of the live map (backend.h); one line per backend. */
static int (*const key_age_of[PACER_BACKEND_MAX])(const struct pacer_handle *h, uint64_t hash,
						   uint64_t tick, const struct pacer_rate *rate,
						   uint32_t *age) = {
	[PACER_BACKEND_SKETCH] = key_age,
	[PACER_BACKEND_TABLE] = table_key_age,
	[PACER_BACKEND_DENSE] = dense_key_age,
};

/* What a key's state says, for one limit: text or JSON fields. */
struct key_view {
	const char *key;         /* "192.0.2.7/32" */
	uint32_t age;
	struct pacer_rate rate;
};

static void view_json(struct json_writer *w, const struct key_view *v, uint64_t q)
{
	bool drop = pacer_is_recent(v->age, v->rate.thresh);

	jsonw_string_field(w, "key", v->key);
	jsonw_int_field(w, "age_ticks", v->age >= v->rate.sat ? -1 : (int)v->age);
	jsonw_uint_field(w, "tick_ns", q);
	jsonw_uint_field(w, "thresh_ticks", v->rate.thresh);
	jsonw_uint_field(w, "burst_ticks", v->rate.burst);
	jsonw_uint_field(w, "threshold_ticks", v->rate.thresh); /* thresh_ticks' earlier name, for one release */
	jsonw_bool_field(w, "would_drop", drop);
	jsonw_uint_field(w, "may_send_now", pacer_rate_credits(v->age, &v->rate));
}

static void view_text(const struct pacer_handle *h, const char *lead, const struct key_view *v)
{
	uint64_t q = pacer_tick_ns(h->layout.tick_shift);
	uint32_t age = v->age, credits = pacer_rate_credits(age, &v->rate);
	bool drop = pacer_is_recent(age, v->rate.thresh);
	char d1[32], d2[32];

	if (age >= v->rate.sat) {
		printf("%s%s: not seen within the %s's memory (%u ticks); a packet now would pass%s; it may send %u packet%s now\n",
		       lead, v->key, backend_of(h->layout.backend)->noun, v->rate.sat,
		       backend_of(h->layout.backend)->unseen_note, credits, credits == 1 ? "" : "s");
	} else if (v->rate.burst) {
		printf("%s%s: its cell is %u ticks old (full burst at %u, threshold %u ticks): it may send %u packet%s now\n",
		       lead, v->key, age, v->rate.sat, v->rate.thresh, credits, credits == 1 ? "" : "s");
	} else {
		/* A whole-tick age a means the last update was between a-1 and a+1 ticks ago. */
		printf("%s%s: last seen %u ticks ago (between %s and %s); threshold %u ticks: a packet now would be %s\n",
		       lead, v->key, age, format_duration(age ? (age - 1) * q : 0, d1, sizeof(d1)),
		       format_duration((age + 1) * q, d2, sizeof(d2)), v->rate.thresh,
		       drop ? "DROPPED" : "passed");
	}
}

/* The key's age in the live map, or PACER_AGE_STALE before the hash key is drawn: 0 or 1 (said why). */
static int age_of(const struct pacer_handle *h, uint64_t hash, const struct pacer_rate *rate,
		  uint32_t *age)
{
	int err;

	*age = PACER_AGE_STALE;
	if (!h->cfg->hash_key[0] || !h->cfg->hash_key[1])
		return 0;
	err = key_age_of[h->layout.backend](h, hash, pacer_now_tick(pacer_clock_now(h), h->layout.tick_shift),
					    rate, age); /* the handle checked the backend */
	if (err)
		pr_err("cannot read the sketch: %s", strerror(-err));
	return err ? 1 : 0;
}

/* What the exempt and deny lists say of an address: now, and once a timed entry deciding it ends. */
struct list_view {
	uint32_t verdict;      /* PACER_LIST_EXEMPT or _DENY; 0: on neither list */
	char prefix[64];       /* the entry that decides */
	uint32_t timeout_s;    /* its timeout as added (0: none) */
	uint64_t left_ns;      /* the time until its deadline (0: none) */
	uint32_t then_verdict; /* after that deadline: the entry that decides then (0: none) */
	char then_prefix[64];
	uint32_t then_timeout_s;
};

/* The longest prefix of p[0..n) holding a and live at at_ns, other than skip: its index, or -1. */
static long list_best(const struct pacer_list_entry *p, size_t n, const struct pacer_addr *a,
		      uint64_t at_ns, long skip)
{
	uint32_t best_len = 0, bit;
	long best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((long)i == skip || (int)p[i].p.family != a->family ||
		    (best >= 0 && p[i].p.len < best_len) || pacer_list_expired(&p[i].v, at_ns))
			continue;
		for (bit = 0; bit < p[i].p.len; bit++)
			if ((p[i].p.addr[bit / 8] ^ a->bytes[bit / 8]) & (0x80 >> (bit % 8)))
				break;
		if (bit < p[i].p.len)
			continue;
		best = (long)i;
		best_len = p[i].p.len;
	}
	return best;
}

/*
 * The lists' verdict on a (0: neither), as the datapath takes it: the
 * longest live prefix holding it.  A timed entry decides until its
 * deadline; then the longest prefix still live below it does.
 */
static uint32_t list_verdict(const struct pacer_class_maps *m, const struct pacer_addr *a,
			     struct list_view *lv)
{
	struct pacer_list_entry *p = NULL;
	uint64_t now = pacer_list_clock_ns();
	size_t n = 0;
	long b, t;

	memset(lv, 0, sizeof(*lv));
	if (!m->cfg->list_sel || pacer_lists_dump(m, &p, &n))
		return 0;
	b = list_best(p, n, a, now, -1);
	if (b >= 0) {
		lv->verdict = p[b].v.verdict;
		pacer_prefix_str(&p[b].p, lv->prefix, sizeof(lv->prefix));
		lv->timeout_s = p[b].v.timeout_s;
		if (p[b].v.expires_ns) {
			lv->left_ns = p[b].v.expires_ns > now ? p[b].v.expires_ns - now : 0;
			t = list_best(p, n, a, p[b].v.expires_ns, b);
			if (t >= 0) {
				lv->then_verdict = p[t].v.verdict;
				pacer_prefix_str(&p[t].p, lv->then_prefix, sizeof(lv->then_prefix));
				lv->then_timeout_s = p[t].v.expires_ns ? p[t].v.timeout_s : 0;
			}
		}
	}
	free(p);
	return lv->verdict;
}

static const char *list_name(uint32_t verdict)
{
	return verdict == PACER_LIST_EXEMPT ? "exempt" : "deny";
}

/* The lists' line of query's text: for how long the entry decides, and what decides after it. */
static void list_text(const char *addr, const struct list_view *lv)
{
	char tb[32], lb[32];

	if (!lv->left_ns) {
		printf("%s: on the %s list (%s): %s, whatever the classes say\n", addr,
		       list_name(lv->verdict), lv->prefix,
		       lv->verdict == PACER_LIST_EXEMPT ? "always passes" : "always dropped");
		return;
	}
	lb[0] = 0;
	if (lv->left_ns >= 60000000000ULL)
		snprintf(lb, sizeof(lb), " (%s)",
			 format_timeout_s(lv->left_ns / 1000000000ULL, tb, sizeof(tb)));
	/* Tenths cut, not rounded: never later than the deadline. */
	printf("%s: %s for another %.1f s%s, until its %s list entry %s (timeout %s) expires, whatever the classes say; ",
	       addr, lv->verdict == PACER_LIST_EXEMPT ? "exempt (passes)" : "denied (dropped)",
	       (double)(lv->left_ns / 100000000ULL) / 10, lb, list_name(lv->verdict), lv->prefix,
	       format_timeout_s(lv->timeout_s, tb, sizeof(tb)));
	if (!lv->then_verdict)
		printf("then the lists no longer hold it: the limits decide\n");
	else
		printf("then the %s list's %s decides%s\n", list_name(lv->then_verdict), lv->then_prefix,
		       lv->then_timeout_s ? " (itself timed)" : "");
}

/* Each class's view of addr (or the one named): 0, 1 or 2 (said why). */
static int query_classes(const struct pacer_handle *h, const struct query_opts *o,
			 const struct pacer_addr *addr, const struct pacer_class *cls, int n,
			 struct json_writer *w)
{
	uint64_t q = pacer_tick_ns(h->layout.tick_shift);
	char key[160], lead[64], mb[160];
	struct pacer_addr dst = o->dst.addr;
	int i, shown = 0;

	if (o->dst.text)
		pacer_addr_unmap_v4(&dst);
	if (w)
		jsonw_start_array_field(w, "classes");
	for (i = 0; i < n; i++) {
		const struct pacer_class *c = &cls[i];
		struct key_view v = { .key = key };
		uint64_t hash;

		if (o->class_name && strcmp(o->class_name, c->name))
			continue;
		shown++;
		snprintf(lead, sizeof(lead), "class %s: ", c->name);
		if (c->action != PACER_ACTION_PACE) {
			if (w) {
				jsonw_start_object(w);
				jsonw_string_field(w, "class", c->name);
				jsonw_string_field(w, "action", class_action_name(c->action));
				jsonw_end_object(w);
			} else {
				printf("%s%s -> always %s\n", lead, class_match_format(&c->m, mb, sizeof(mb)),
				       class_action_name(c->action));
			}
			continue;
		}
		if ((c->key_mode == PACER_KEY_SRC_DPORT && !o->dport_set) ||
		    (c->key_mode == PACER_KEY_SRC_DST && !o->dst.text)) {
			const char *need = c->key_mode == PACER_KEY_SRC_DPORT ? "--dport" : "--dst";

			if (w) {
				jsonw_start_object(w);
				jsonw_string_field(w, "class", c->name);
				jsonw_string_field(w, "needs", need);
				jsonw_end_object(w);
			} else {
				printf("%skeyed %s: give %s to query it\n", lead, class_key_name(c->key_mode), need);
			}
			continue;
		}
		if (c->key_mode == PACER_KEY_SRC_DST && dst.family != addr->family) {
			pr_err("--dst %s and %s differ in family", o->dst.text, o->addr.text);
			return 2;
		}
		hash = class_key_hash_of(h->cfg->hash_key, c, addr, (uint16_t)o->dport,
					 c->key_mode == PACER_KEY_SRC_DST ? &dst : NULL, key, sizeof(key));
		v.rate = pacer_rate_of(c->thresh_ticks, c->burst_ticks);
		if (age_of(h, hash, &v.rate, &v.age))
			return 1;
		if (w) {
			jsonw_start_object(w);
			jsonw_string_field(w, "class", c->name);
			view_json(w, &v, q);
			jsonw_end_object(w);
		} else {
			view_text(h, lead, &v);
		}
	}
	if (w)
		jsonw_end_array(w);
	if (o->class_name && !shown) {
		pr_err("no class named '%s' runs on %s", o->class_name, h->ifname);
		return 2;
	}
	return 0;
}

/*
 * Observe mode: what "dropped" above means where it applies (the global
 * mode, the deny list's, a class's own).
 */
static void observe_note(const struct pacer_config *cfg, uint32_t list, const struct pacer_class *cls,
			 int ncls)
{
	bool any = PACER_MODE_OBSERVES(0, cfg->mode) ||
		   (list == PACER_LIST_DENY && PACER_MODE_OBSERVES(cfg->deny_mode, cfg->mode));
	int i;

	for (i = 0; i < ncls; i++)
		any = any || PACER_MODE_OBSERVES(cls[i].mode, cfg->mode);
	if (any)
		printf("note: observe mode (global %s, deny list %s%s): where it applies, a packet judged to drop passes, counted as would-drop\n",
		       mode_name(cfg->mode), own_mode_name(cfg->deny_mode),
		       ncls ? ", classes as status lists" : "");
}

int cmd_query(int argc, char **argv)
{
	static struct pacer_class cls[PACER_MAX_CLASSES];
	struct query_opts o = { 0 };
	struct pacer_class_maps m;
	struct pacer_addr addr, masked;
	struct pacer_handle h;
	struct json_writer w;
	struct key_view v;
	uint64_t hash;
	uint32_t prefix, verdict;
	int ncls = 0, ret = 0;
	bool json;
	struct list_view lv;
	char ab[64], key[80];
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
	pacer_class_maps_of(&h, &m);
	if (pacer_classes_read(&m, cls, &ncls)) {
		pr_err("cannot read the classes of %s", h.ifname);
		pacer_handle_close(&h);
		return 1;
	}
	if (o.class_name && !ncls) {
		pr_err("--class %s: no traffic classes run on %s", o.class_name, h.ifname);
		pacer_handle_close(&h);
		return 2;
	}
	verdict = list_verdict(&m, &addr, &lv);

	prefix = addr.family == 4 ? h.cfg->prefix4 : h.cfg->prefix6;
	masked = addr;
	pacer_addr_mask(&masked, prefix);
	hash = masked.family == 4 ? pacer_hash_v4(h.cfg->hash_key, (uint32_t)masked.lo)
				  : pacer_hash_v6(h.cfg->hash_key, masked.lo, masked.hi);
	snprintf(key, sizeof(key), "%s/%u", format_address(&masked, ab, sizeof(ab)), prefix);
	v.key = key;
	v.rate = pacer_rate_of(h.cfg->thresh_ticks, h.cfg->burst_ticks);
	if (!ncls && age_of(&h, hash, &v.rate, &v.age)) {
		pacer_handle_close(&h);
		return 1;
	}
	if (json) {
		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		if (!ncls)
			view_json(&w, &v, pacer_tick_ns(h.layout.tick_shift));
		if (verdict) {
			jsonw_string_field(&w, list_name(verdict), lv.prefix);
			if (lv.left_ns) { /* a timed entry: it decides until its deadline */
				jsonw_float_field_fmt(&w, "list_expires_s", "%.3f", (double)lv.left_ns / 1e9);
				jsonw_uint_field(&w, "list_timeout_s", lv.timeout_s);
			}
		}
		jsonw_string_field(&w, "mode", mode_name(h.cfg->mode));
		if (ncls)
			ret = query_classes(&h, &o, &addr, cls, ncls, &w);
		jsonw_end_object(&w);
	} else {
		if (verdict)
			list_text(o.addr.text, &lv);
		if (ncls)
			ret = query_classes(&h, &o, &addr, cls, ncls, NULL);
		else
			view_text(&h, "", &v);
		observe_note(h.cfg, verdict, cls, ncls);
	}
	pacer_handle_close(&h);
	return ret;
}
