// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer gen: what was sent, and how many distinct sources that makes. */
#include <math.h>
#include <stdio.h>
#include "common.h"
#include "json_writer.h"
#include "cli_values.h"
#include "gen.h"

struct gen_report {
	uint64_t sent, good_sent;
	const uint64_t *heavy_sent; /* heavy: per heavy source */
	double seconds, distinct;
	bool distinct_exact;
	char sources_text[160];
};

static void print_report_json(const struct gen_ctx *g, const struct gen_report *r, double pps,
			      const char *good_first, const char *good_last)
{
	const struct gen_opts *o = &g->o;
	struct json_writer w;

	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "engine", g->engine->name);
	jsonw_string_field(&w, "engine_mode", g->engine_mode);
	jsonw_string_field(&w, "dist", gen_dist_names[o->dist]);
	jsonw_uint_field(&w, "family", o->family);
	jsonw_uint_field(&w, "threads", o->threads);
	jsonw_uint_field(&w, "sent", r->sent);
	jsonw_float_field_fmt(&w, "seconds", "%.6f", r->seconds);
	jsonw_float_field_fmt(&w, "pps", "%.0f", pps);
	jsonw_uint_field(&w, "sources", o->dist == GEN_DIST_MIX ? o->good
					: o->dist == GEN_DIST_HEAVY ? o->heavy : o->sources);
	jsonw_float_field_fmt(&w, "distinct_sources", "%.0f", r->distinct);
	jsonw_bool_field(&w, "distinct_exact", r->distinct_exact);
	jsonw_uint_field(&w, "good_sent", r->good_sent);
	jsonw_string_field(&w, "affinity", o->affinity_source ? "source" : "spread");
	if (g->device_dropped_known)
		jsonw_uint_field(&w, "device_tx_dropped", g->device_dropped);
	if (o->dist == GEN_DIST_MIX) {
		jsonw_uint_field(&w, "good_sources", o->good);
		jsonw_string_field(&w, "good_first", good_first);
		jsonw_string_field(&w, "good_last", good_last);
		jsonw_uint_field(&w, "good_sport", GEN_SPORT_GOOD);
		jsonw_uint_field(&w, "flood_sport", GEN_SPORT_FLOOD);
		jsonw_uint_field(&w, "flood_sent", r->sent - r->good_sent);
	}
	if (o->dist == GEN_DIST_HEAVY) {
		uint32_t i;

		jsonw_uint_field(&w, "heavy_sources", o->heavy);
		jsonw_string_field(&w, "heavy_first", good_first);
		jsonw_string_field(&w, "heavy_last", good_last);
		jsonw_uint_field(&w, "heavy_sport", GEN_SPORT_GOOD);
		jsonw_uint_field(&w, "flood_sent", r->sent - r->good_sent);
		jsonw_start_array_field(&w, "heavy_sent");
		for (i = 0; i < o->heavy; i++)
			jsonw_uint(&w, r->heavy_sent[i]);
		jsonw_end_array(&w);
	}
	jsonw_end_object(&w);
}

static void print_report(const struct gen_ctx *g, const struct gen_report *r,
			 const char *good_first, const char *good_last)
{
	const struct gen_opts *o = &g->o;
	double pps = r->seconds > 0 ? (double)r->sent / r->seconds : 0;

	if (o->json) {
		print_report_json(g, r, pps, good_first, good_last);
		return;
	}
	printf("sent %llu IPv%u frames (%s) in %.3f s: %.2f Mpps, %u thread%s%s\n",
	       (unsigned long long)r->sent, o->family, gen_dist_names[o->dist], r->seconds, pps / 1e6,
	       o->threads, o->threads == 1 ? "" : "s",
	       o->affinity_source ? ", each sending only the sources that hash to it" : "");
	printf("engine: %s (%s)", g->engine->name, g->engine_mode);
	if (g->device_dropped_known)
		printf("; %s dropped %llu on transmit", o->ifname, (unsigned long long)g->device_dropped);
	printf("\n");
	printf("sources: %s\n", r->sources_text);
	if (o->dist == GEN_DIST_MIX)
		printf("well-behaved: %llu packets from %u sources %s .. %s (UDP source port %u), "
		       "one each per period; flood: %llu packets (port %u)\n",
		       (unsigned long long)r->good_sent, o->good, good_first, good_last,
		       GEN_SPORT_GOOD, (unsigned long long)(r->sent - r->good_sent),
		       GEN_SPORT_FLOOD);
	if (o->dist == GEN_DIST_HEAVY) {
		uint64_t lo = UINT64_MAX, hi = 0;
		uint32_t i;

		for (i = 0; i < o->heavy; i++) {
			lo = r->heavy_sent[i] < lo ? r->heavy_sent[i] : lo;
			hi = r->heavy_sent[i] > hi ? r->heavy_sent[i] : hi;
		}
		printf("heavy: %llu packets from %u sources %s .. %s (UDP source port %u), "
		       "%llu to %llu each (--json lists them); flood: %llu packets (port %u)\n",
		       (unsigned long long)r->good_sent, o->heavy, good_first, good_last,
		       GEN_SPORT_GOOD, (unsigned long long)lo, (unsigned long long)hi,
		       (unsigned long long)(r->sent - r->good_sent), GEN_SPORT_FLOOD);
	}
}

/* Structured source i as text (IPv4 base + i, IPv6 prefix + i). */
static void source_text(const struct pacer_addr *base, uint32_t i, char *buf, size_t len)
{
	struct pacer_addr a = *base;
	uint64_t prefix = 0;
	int b;

	if (a.family == 4) {
		uint32_t v = ((uint32_t)a.bytes[0] << 24 | a.bytes[1] << 16 | a.bytes[2] << 8 |
			      a.bytes[3]) + i;

		for (b = 0; b < 4; b++)
			a.bytes[b] = (uint8_t)(v >> (24 - 8 * b));
	} else {
		for (b = 0; b < 8; b++)
			prefix = prefix << 8 | a.bytes[b];
		prefix += i;
		for (b = 0; b < 8; b++)
			a.bytes[b] = (uint8_t)(prefix >> (56 - 8 * b));
	}
	format_address(&a, buf, len);
}


/* Exact counts of the structured sources sent, from the per-CPU counters. */
static void count_sent(const struct gen_ctx *g, struct gen_report *rep)
{
	uint32_t i;

	for (i = 0; i < g->o.threads; i++) {
		const struct gen_cpu_state *st = &g->states[g->cpus[i]];

		rep->sent += st->sent;
		rep->good_sent += st->good_sent;
		if (g->o.dist == GEN_DIST_UNIFORM)
			rep->distinct += (double)(st->sent < st->src_count ? st->sent : st->src_count);
		if (g->o.dist == GEN_DIST_HEAVY)
			rep->distinct = g->o.heavy; /* drawn at random: at this rate, each is drawn */
		if (g->o.dist == GEN_DIST_MIX)
			rep->distinct += (double)(st->good_sent < st->good_count ? st->good_sent
										  : st->good_count);
	}
}

/* Distinct sources: exact where the sources are structured, expected where drawn. */
static void describe_sources(const struct gen_ctx *g, struct gen_report *rep)
{
	const struct gen_opts *o = &g->o;
	/* Random sources: expected distinct draws from the spoofed space. */
	double space = o->family == 4 ? 1073741824.0 : 0x1p120;
	double spoofed = space * -expm1(-(double)(rep->sent - rep->good_sent) / space);
	const char *range = o->family == 4 ? "128.0.0.0/2" : "fc00::/8";
	char *t = rep->sources_text;
	size_t n = sizeof(rep->sources_text);

	switch (o->dist) {
	case GEN_DIST_UNIFORM:
		rep->distinct_exact = true;
		snprintf(t, n, "%.0f distinct of %u (exact: each thread cycles through its share)",
			 rep->distinct, o->sources);
		break;
	case GEN_DIST_ZIPF:
		rep->distinct = zipf_expected_distinct(&g->z, (double)rep->sent);
		snprintf(t, n, "~%.0f distinct of %u (expected for Zipf(%g) with this many draws)",
			 rep->distinct, o->sources, o->zipf);
		break;
	case GEN_DIST_SPOOFED:
		rep->distinct = spoofed;
		snprintf(t, n, "~%.0f distinct (expected: uniform random in %s)", rep->distinct, range);
		break;
	case GEN_DIST_HEAVY:
		snprintf(t, n, "%u heavy + ~%.0f flood (expected: random in %s)", o->heavy, spoofed, range);
		rep->distinct = o->heavy + spoofed;
		break;
	default:
		snprintf(t, n, "%.0f well-behaved (exact) + ~%.0f flood (expected: random in %s)",
			 rep->distinct, spoofed, range);
		rep->distinct += spoofed;
		break;
	}
}

void gen_report(const struct gen_ctx *g)
{
	struct gen_report rep = {};
	char good_first[64] = "", good_last[64] = "";

	count_sent(g, &rep);
	rep.seconds = (double)g->elapsed_ns / 1e9;
	rep.heavy_sent = g->heavy_sent;
	if (g->o.dist == GEN_DIST_MIX) {
		source_text(&g->o.src_base.addr, 0, good_first, sizeof(good_first));
		source_text(&g->o.src_base.addr, g->o.good - 1, good_last, sizeof(good_last));
	}
	if (g->o.dist == GEN_DIST_HEAVY) {
		source_text(&g->o.src_base.addr, 0, good_first, sizeof(good_first));
		source_text(&g->o.src_base.addr, g->o.heavy - 1, good_last, sizeof(good_last));
	}
	describe_sources(g, &rep);
	print_report(g, &rep, good_first, good_last);
}
