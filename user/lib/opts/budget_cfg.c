// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "budget_cfg.h"
#include "cli_values.h"

int budget_parse_rate(const char *s, uint64_t *limit, uint64_t *window_ns)
{
	return parse_count_per(s, BUDGET_MAX_LIMIT, limit, window_ns);
}

/* --budget: "K/T" or "off"; its field is the whole struct budget_opts. */
static int parse_budget(const struct opt_spec *s, const char *arg, void *field, char *why,
			size_t len)
{
	struct budget_opts *o = field;

	(void)s, (void)why, (void)len;
	o->off = !strcmp(arg, "off");
	if (o->off)
		return 0;
	return budget_parse_rate(arg, &o->limit, &o->window_ns);
}

const struct opt_spec budget_specs[] = {
	{ .name = "budget", .type = OPT_CUSTOM, .flags = OPT_CONF | OPT_LIVE, .arg = "K/T|off",
	  .parse = parse_budget, .dflt = "off", .off = 0, OPT_GIVEN(struct budget_opts, set_budget),
	  .why = "expected K/T with K from 1 to 4294967296 and T a positive duration (50000/1s), or off",
	  .help = "global budget: at most K admitted packets in any window T, over\n"
		  "all sources and CPUs, after per-source pacing (e.g. 50000/1s);\n"
		  "plus under K/64 for CPUs' batches (status shows it)" },
	{ .name = "slack-time", .type = OPT_DURATION, .flags = OPT_OFF | OPT_CONF | OPT_LIVE,
	  .arg = "DUR|off",
	  OPT_FIELD(struct budget_opts, slack_ns), OPT_GIVEN(struct budget_opts, set_slack_time),
	  .help = "A: refuse early only when all K were used within T + DUR (T/10)" },
	{ .name = "slack-count", .type = OPT_U64, .flags = OPT_OFF | OPT_CONF | OPT_LIVE,
	  .arg = "N|off", .min = 1,
	  .max = BUDGET_MAX_LIMIT, OPT_FIELD(struct budget_opts, slack_count),
	  OPT_GIVEN(struct budget_opts, set_slack_count),
	  .help = "B: refuse early only when fewer than N would be free (ceil(K/10))" },
	{ .name = "reserve", .type = OPT_U32, .flags = OPT_CONF | OPT_LIVE, .arg = "PCT",
	  .max = BUDGET_MAX_RESERVE_PCT, .dflt = "0",
	  OPT_FIELD(struct budget_opts, reserve_pct), OPT_GIVEN(struct budget_opts, set_reserve),
	  .why = "expected a percentage from 0 to 90",
	  .help = "keep PCT % of K (0..90) for sources admitted within the horizon" },
	{ .name = "horizon", .type = OPT_DURATION, .flags = OPT_CONF | OPT_LIVE, .arg = "DUR",
	  .max = PACER_SEEN_MAX_HORIZON_NS,
	  OPT_FIELD(struct budget_opts, horizon_ns), OPT_GIVEN(struct budget_opts, set_horizon),
	  .why = "expected a positive duration up to 1h",
	  .help = "how long a source counts as returning (10 x T, at most 1h)" },
	{ 0 },
};

bool budget_opts_any(const struct budget_opts *o)
{
	return o->set_budget || o->set_slack_time || o->set_slack_count || o->set_reserve ||
	       o->set_horizon;
}

/* The kernel's possible-CPU list ("0-15", "0,2-3"), as libbpf counts it for per-CPU maps. */
uint32_t budget_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned a, b;
	uint32_t n = 0;
	int k;
	char sep;

	if (!f)
		return 1;
	while ((k = fscanf(f, "%u", &a)) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%u", &b) != 1 || b < a)
				break;
			sep = (char)fgetc(f);
		}
		n += b - a + 1;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n ? n : 1;
}

int budget_apply(const struct budget_opts *o, const struct pacer_budget_cfg *cur,
		 struct pacer_budget_cfg *out, char *err, size_t len)
{
	char a[32], b[32];
	uint64_t ring;

	*out = *cur;
	if (o->set_budget && o->off) {
		if (o->set_slack_time || o->set_slack_count || o->set_reserve || o->set_horizon) {
			snprintf(err, len, "--budget off takes no other budget option");
			return 2;
		}
		out->limit = 0;
		return 0;
	}
	if (o->set_budget) {
		out->limit = o->limit;
		out->window_ns = o->window_ns;
		out->slack_ns = o->window_ns / BUDGET_DEFAULT_SLACK_DIV;
		out->slack_count = (o->limit + BUDGET_DEFAULT_SLACK_DIV - 1) / BUDGET_DEFAULT_SLACK_DIV;
		out->horizon_ns = o->window_ns * BUDGET_DEFAULT_HORIZON_MUL;
		if (out->horizon_ns > PACER_SEEN_MAX_HORIZON_NS)
			out->horizon_ns = PACER_SEEN_MAX_HORIZON_NS;
	} else if (!cur->limit) {
		snprintf(err, len, "no budget is set: give --budget K/T with the other budget options");
		return 2;
	}
	if (o->set_slack_time)
		out->slack_ns = o->slack_ns;
	if (o->set_slack_count)
		out->slack_count = o->slack_count;
	if (o->set_reserve)
		out->reserve_pct = o->reserve_pct;
	if (o->set_horizon)
		out->horizon_ns = o->horizon_ns;
	if (!out->slack_ns && !out->slack_count) {
		snprintf(err, len, "--slack-time and --slack-count cannot both be off: the ring would need a bucket per packet");
		return 2;
	}
	ring = pacer_budget_ring_size(out->limit, out->window_ns, out->slack_ns, out->slack_count);
	if (ring > PACER_BUDGET_MAX_BUCKETS) {
		snprintf(err, len,
			 "budget %llu/%s with slack time %s and slack count %llu needs %llu buckets, more than %u; raise --slack-time or --slack-count",
			 (unsigned long long)out->limit, format_duration(out->window_ns, a, sizeof(a)),
			 out->slack_ns ? format_duration(out->slack_ns, b, sizeof(b)) : "off",
			 (unsigned long long)out->slack_count, (unsigned long long)ring,
			 PACER_BUDGET_MAX_BUCKETS);
		return 2;
	}
	out->buckets = (uint32_t)ring;
	out->new_limit = out->limit - out->limit * out->reserve_pct / 100;
	out->batch = pacer_budget_batch(out->limit, out->slack_count, budget_cpus());
	return 0;
}

const char *budget_describe(const struct pacer_budget_cfg *c, char *buf, size_t len)
{
	char t[32], s[32], h[32], sc[32];
	uint32_t ncpus = budget_cpus();
	uint64_t b = pacer_budget_cfg_batch(c);

	if (!c->limit) {
		snprintf(buf, len, "off");
		return buf;
	}
	if (c->slack_count)
		snprintf(sc, sizeof(sc), "%llu", (unsigned long long)c->slack_count);
	snprintf(buf, len,
		 "%llu per %s, slack time %s, slack count %s, ring of %u buckets; reserve %u%% (new sources stop at %llu in flight), horizon %s; batches of %llu per CPU (at most %llu above K in a window on %u CPUs)",
		 (unsigned long long)c->limit, format_duration(c->window_ns, t, sizeof(t)),
		 c->slack_ns ? format_duration(c->slack_ns, s, sizeof(s)) : "off",
		 c->slack_count ? sc : "off", c->buckets, c->reserve_pct,
		 (unsigned long long)c->new_limit, format_duration(c->horizon_ns, h, sizeof(h)),
		 (unsigned long long)b,
		 (unsigned long long)pacer_budget_batch_slack((uint32_t)b, ncpus), ncpus);
	return buf;
}

bool budget_cfg_same(const struct pacer_budget_cfg *a, const struct pacer_budget_cfg *b)
{
	if (!a->limit || !b->limit)
		return !a->limit && !b->limit;
	return a->limit == b->limit && a->window_ns == b->window_ns && a->slack_ns == b->slack_ns &&
	       a->slack_count == b->slack_count && a->new_limit == b->new_limit &&
	       a->horizon_ns == b->horizon_ns && a->buckets == b->buckets &&
	       a->reserve_pct == b->reserve_pct && a->seen_cells_log2 == b->seen_cells_log2 &&
	       a->batch == b->batch;
}

void budget_cfg_store(struct pacer_budget_cfg *live, const struct pacer_budget_cfg *cfg)
{
	volatile struct pacer_budget_cfg *d = live;
	uint64_t seq = d->seq;

	d->seq = seq | 1; /* odd: being written */
	__sync_synchronize();
	d->limit = cfg->limit;
	d->window_ns = cfg->window_ns;
	d->slack_ns = cfg->slack_ns;
	d->slack_count = cfg->slack_count;
	d->new_limit = cfg->new_limit;
	d->horizon_ns = cfg->horizon_ns;
	d->buckets = cfg->buckets;
	d->reserve_pct = cfg->reserve_pct;
	d->seen_cells_log2 = cfg->seen_cells_log2;
	d->batch = cfg->batch;
	__sync_synchronize();
	d->seq = (seq | 1) + 1;
}
