// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer top: the sources with the most drops (or passes, or packets)
 * now, from the datapath's packet sampling (sample_tap.h) counted in a
 * Space-Saving summary (heavy_hitters.h): a table every --interval, each
 * count with its error.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "cli_values.h"
#include "heavy_hitters.h"
#include "json_writer.h"
#include "opts.h"
#include "sample_key.h"
#include "sample_tap.h"
#include "time_now.h"

#define TOP_DEFAULT_ONE_IN 1000

enum top_by { TOP_BY_DROPPED, TOP_BY_PASSED, TOP_BY_SEEN };
static const char *const by_names[] = { "dropped", "passed", "seen" };

struct top_opts {
	const char *ifname, *class_name;
	uint32_t by, prefix4, prefix6, rows, counters;
	uint64_t interval_ns, sample;
	bool json, once;
};

static const struct opt_choice by_choices[] = {
	{ "dropped", TOP_BY_DROPPED },
	{ "passed", TOP_BY_PASSED },
	{ "seen", TOP_BY_SEEN },
	{ NULL, 0 },
};

#define STR(x) #x
#define XSTR(x) STR(x)

static const struct opt_spec top_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct top_opts, ifname) },
	{ .name = "by", .type = OPT_ENUM, .choices = by_choices, .dflt = "dropped",
	  OPT_FIELD(struct top_opts, by),
	  .help = "rank by packets dropped (by the limit or the budget),\n"
		  "passed, or seen (both)" },
	{ .name = "interval", .type = OPT_DURATION, .arg = "DUR", .dflt = "1s",
	  .max = 3600000000000ULL, OPT_FIELD(struct top_opts, interval_ns),
	  .help = "refresh period; each table counts the packets of one\n"
		  "period (at most 3600 s)" },
	{ .name = "prefix4", .type = OPT_U32, .arg = "LEN", .max = 32, .dflt = "32",
	  OPT_FIELD(struct top_opts, prefix4),
	  .help = "aggregate IPv4 sources to /LEN (keys coarser than /LEN\n"
		  "stay as the pacer masked them)" },
	{ .name = "prefix6", .type = OPT_U32, .arg = "LEN", .max = 128, .dflt = "128",
	  OPT_FIELD(struct top_opts, prefix6), .help = "aggregate IPv6 sources to /LEN" },
	{ .name = "class", .type = OPT_STRING, .arg = "NAME", OPT_FIELD(struct top_opts, class_name),
	  .help = "only the packets of traffic class NAME" },
	{ .name = "rows", .short_name = 'n', .type = OPT_U32, .arg = "N", .min = 1, .max = 10000,
	  .dflt = "20", OPT_FIELD(struct top_opts, rows), .help = "rows per table" },
	{ .name = "sample-packets", .type = OPT_SAMPLING, .arg = "1/M", .dflt = "1/" XSTR(TOP_DEFAULT_ONE_IN),
	  OPT_FIELD(struct top_opts, sample),
	  .help = "sample one paced packet in M (1/1: every packet)" },
	{ .name = "counters", .type = OPT_U32, .arg = "K", .min = 16, .max = 1u << 20, .dflt = "4096",
	  OPT_FIELD(struct top_opts, counters),
	  .help = "sources the summary keeps (Space-Saving counters); a\n"
		  "count is exact to within 1/K of the samples of a period" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct top_opts, json),
	  .help = "one JSON object per period, one line each" },
	{ .name = "once", .type = OPT_BOOL, OPT_FIELD(struct top_opts, once),
	  .help = "one period, one table, then exit (SIGINT or SIGTERM\n"
		  "ends the period early and prints it)" },
	{ 0 },
};

static const struct opt_verb top_verb = {
	.name = "top",
	.synopsis = "IFNAME [--by dropped|passed|seen] [--interval DUR] [-n N]\n"
		    "                     [--prefix4 LEN] [--prefix6 LEN] [--class NAME]\n"
		    "                     [--sample-packets 1/M] [--counters K] [--json] [--once]",
	.intro = "Show the sources of IFNAME's pacer with the most dropped (or passed, or seen)\n"
		 "packets, refreshed every --interval, from a sample of one paced packet in M\n"
		 "(default 1/" XSTR(TOP_DEFAULT_ONE_IN) ") counted in a bounded summary of K sources.\n",
	.args = "an interface name",
	.opts = top_specs,
	.epilog = "Each count is the samples times M, with its error: +- is half the summary's\n"
		  "overcount bound plus the sampling's 95 % interval, 1.96 * sqrt(c * (1 - 1/M)) * M\n"
		  "for c samples.  A source not listed has at most the 'unlisted' count.  Only\n"
		  "packets a limit judged are sampled (not exempt, deny, pass or drop classes).\n"
		  "Sampling is switched on in the running program and put back on exit; one of\n"
		  "record, top and events reads a pacer's samples at a time.\n",
};

struct top_state {
	const struct top_opts *o;
	struct sample_tap tap;
	struct hh_summary hh;
	struct hh_entry *rows;
	uint64_t sampled[3];    /* this period's samples: dropped, passed, seen */
	uint64_t period_start_ns, lost_at_start;
	int class_slot;         /* --class: the record's class_slot to keep; -1 none left; 0 any */
	bool class_gone_said;
};

static void on_record(void *ctx, const struct pacer_record *rec)
{
	struct top_state *s = ctx;
	struct hh_key k;
	bool drop = rec->verdict == PACER_REC_DROP;

	if (!(rec->flags & PACER_REC_SAMPLED_PACKET))
		return; /* chosen by source (someone's leftover setting): not a uniform sample */
	if (s->o->class_name && (s->class_slot <= 0 || rec->class_slot != (uint32_t)s->class_slot))
		return;
	s->sampled[TOP_BY_SEEN]++;
	s->sampled[drop ? TOP_BY_DROPPED : TOP_BY_PASSED]++;
	if (s->o->by != TOP_BY_SEEN && (s->o->by == TOP_BY_DROPPED) != drop)
		return;
	sample_key_of(rec, s->o->prefix4, s->o->prefix6, &k);
	hh_add(&s->hh, &k, 1);
}

/* --class NAME's slot in the running list: its record class_slot, or -1 (said why when gone). */
static int resolve_class(struct top_state *s)
{
	int i;

	sample_tap_refresh_classes(&s->tap);
	for (i = 0; i < s->tap.nclasses; i++)
		if (!strcmp(s->tap.classes[i].name, s->o->class_name))
			return (int)s->tap.classes[i].stat_slot + 1;
	return -1;
}

/* The error of a row, in packets: half the overcount plus the sampling's 95 % interval. */
static void row_estimate(const struct hh_entry *e, double m, double *est, double *pm)
{
	double c = (double)e->count, half = (double)e->err / 2;

	*est = (c - half) * m;
	*pm = (half + 1.96 * sqrt(c * (1 - 1 / m))) * m;
}

static void class_json(struct json_writer *w, const struct top_state *s, uint32_t slot)
{
	if (slot)
		jsonw_string_field(w, "class", sample_tap_class_name(&s->tap, slot));
	else
		jsonw_null_field(w, "class");
}

static void print_json(struct top_state *s, uint32_t n, double secs, uint64_t lost, uint64_t now_real)
{
	struct json_writer w;
	double m = sample_tap_scale(&s->tap), est, pm;
	char buf[64];
	uint32_t i;

	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "time", format_utc_ms(now_real, buf, sizeof(buf)));
	jsonw_string_field(&w, "ifname", s->tap.h.ifname);
	jsonw_string_field(&w, "by", by_names[s->o->by]);
	if (s->o->class_name)
		jsonw_string_field(&w, "class", s->o->class_name);
	jsonw_float_field_fmt(&w, "seconds", "%.3f", secs);
	jsonw_float_field_fmt(&w, "sample_one_in", "%.3f", m);
	jsonw_uint_field(&w, "samples_seen", s->sampled[TOP_BY_SEEN]);
	jsonw_uint_field(&w, "samples_dropped", s->sampled[TOP_BY_DROPPED]);
	jsonw_uint_field(&w, "samples_passed", s->sampled[TOP_BY_PASSED]);
	jsonw_uint_field(&w, "samples_lost", lost);
	jsonw_uint_field(&w, "counters", s->hh.k);
	jsonw_float_field_fmt(&w, "unlisted_max", "%.0f", (double)hh_min(&s->hh) * m);
	jsonw_start_array_field(&w, "rows");
	for (i = 0; i < n; i++) {
		const struct hh_entry *e = &s->rows[i];

		row_estimate(e, m, &est, &pm);
		jsonw_start_object(&w);
		jsonw_string_field(&w, "source", sample_key_str(&e->key, buf, sizeof(buf)));
		jsonw_uint_field(&w, "family", sample_key_family(&e->key));
		class_json(&w, s, sample_key_class_slot(&e->key));
		jsonw_float_field_fmt(&w, "count", "%.0f", est);
		jsonw_float_field_fmt(&w, "error", "%.0f", pm);
		jsonw_float_field_fmt(&w, "per_second", "%.1f", secs > 0 ? est / secs : 0);
		jsonw_uint_field(&w, "sampled", e->count);
		jsonw_uint_field(&w, "overcount", e->err);
		jsonw_end_object(&w);
	}
	jsonw_end_array(&w);
	jsonw_end_object(&w);
	jsonw_finish(&w);
}

static void print_text(struct top_state *s, uint32_t n, double secs, uint64_t lost, uint64_t now_real)
{
	double m = sample_tap_scale(&s->tap), est, pm;
	char buf[64], tbuf[40], by[16];
	uint32_t i;

	snprintf(by, sizeof(by), "%s", by_names[s->o->by]);
	for (i = 0; by[i]; i++)
		by[i] = (char)(by[i] - 'a' + 'A');
	printf("%s  %s: top %u by %s%s%s over %.2f s; sampling 1/%.0f: %" PRIu64 " samples (%" PRIu64
	       " dropped, %" PRIu64 " passed), %" PRIu64 " lost\n",
	       format_utc_ms(now_real, tbuf, sizeof(tbuf)), s->tap.h.ifname, s->o->rows,
	       by_names[s->o->by], s->o->class_name ? " in class " : "",
	       s->o->class_name ? s->o->class_name : "", secs, m, s->sampled[TOP_BY_SEEN],
	       s->sampled[TOP_BY_DROPPED], s->sampled[TOP_BY_PASSED], lost);
	if (lost)
		printf("warning: the ring buffer lost %" PRIu64 " samples: counts are low; sample fewer packets (--sample-packets 1/M with a larger M)\n",
		       lost);
	printf("%-4s %-43s %-16s %12s %10s %12s\n", "RANK", "SOURCE", "CLASS", by, "+-", "PER SECOND");
	for (i = 0; i < n; i++) {
		const struct hh_entry *e = &s->rows[i];
		uint32_t slot = sample_key_class_slot(&e->key);

		row_estimate(e, m, &est, &pm);
		printf("%4u %-43s %-16s %12.0f %10.0f %12.1f\n", i + 1,
		       sample_key_str(&e->key, buf, sizeof(buf)),
		       slot ? sample_tap_class_name(&s->tap, slot) : "-", est, pm,
		       secs > 0 ? est / secs : 0);
	}
	if (!n)
		printf("(no %s packets sampled)\n", by_names[s->o->by]);
	/* Counters to spare: every source of the summary's samples (the --by kind only) is counted. */
	if (s->hh.used < s->hh.k)
		printf("unlisted sources: none: all %u source%s of the %" PRIu64 " %s samples %s counted exactly (%u of %u counters used)\n",
		       s->hh.used, s->hh.used == 1 ? "" : "s", s->hh.n, by_names[s->o->by],
		       s->hh.used == 1 ? "is" : "are", s->hh.used, s->hh.k);
	else
		printf("unlisted sources: at most %.0f each (the smallest of %u counters, times %.0f)\n",
		       (double)hh_min(&s->hh) * m, s->hh.k, m);
}

static void print_period(struct top_state *s, bool clear)
{
	uint64_t now = mono_ns(), lost_total = sample_tap_lost(&s->tap);
	double secs = (double)(now - s->period_start_ns) / 1e9;
	uint64_t lost = lost_total - s->lost_at_start;
	uint32_t n;

	sample_tap_refresh_classes(&s->tap);
	n = hh_top(&s->hh, s->rows, s->o->rows);
	if (s->o->json) {
		print_json(s, n, secs, lost, clock_now_ns(CLOCK_REALTIME));
	} else {
		if (clear)
			fputs("\033[H\033[2J", stdout);
		print_text(s, n, secs, lost, clock_now_ns(CLOCK_REALTIME));
		if (!clear && !s->o->once)
			putchar('\n');
	}
	fflush(stdout);
	hh_reset(&s->hh);
	memset(s->sampled, 0, sizeof(s->sampled));
	s->period_start_ns = now;
	s->lost_at_start = lost_total;
}

#define ATTACH_CHECK_NS 250000000ULL

static int top_loop(struct top_state *s)
{
	bool clear = !s->o->json && !s->o->once && isatty(STDOUT_FILENO);
	uint64_t next = mono_ns() + s->o->interval_ns, next_check = mono_ns() + ATTACH_CHECK_NS;
	char eb[128];
	int err;

	s->period_start_ns = mono_ns();
	while (!sample_tap_signal) {
		uint64_t now;

		err = sample_tap_poll(&s->tap, 100);
		if (err) {
			pr_err("reading the ring buffer failed: %s", err_str(err, eb, sizeof(eb)));
			return 1;
		}
		now = mono_ns();
		if (now >= next_check) {
			if (!sample_tap_attached(&s->tap))
				return 1;
			next_check = now + ATTACH_CHECK_NS;
			if (s->o->class_name) {
				s->class_slot = resolve_class(s);
				if (s->class_slot < 0 && !s->class_gone_said)
					pr_err("warning: class '%s' is no longer in %s's class list: nothing is counted until it is back",
					       s->o->class_name, s->tap.h.ifname);
				s->class_gone_said = s->class_slot < 0;
			}
		}
		if (now >= next) {
			print_period(s, clear);
			if (s->o->once)
				return 0;
			next += s->o->interval_ns;
			if (next <= now)
				next = now + s->o->interval_ns;
		}
	}
	/* --once cut short (Ctrl-C, SIGTERM): the period so far is still its answer. */
	if (s->o->once)
		print_period(s, false);
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o = { 0 };
	struct top_state s = { .o = &o };
	int err, ret = 1;

	err = parse_verb_opts(&top_verb, argc, argv, &o);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	if (!o.sample)
		return bad_value("--sample-packets", "off", "top needs sampling: expected 1/M");
	err = hh_init(&s.hh, o.counters);
	s.rows = calloc(o.rows, sizeof(*s.rows));
	if (err || !s.rows) {
		pr_err("cannot allocate the summary of %u counters", o.counters);
		goto out;
	}
	if (sample_tap_open(&s.tap, o.ifname, "top", o.sample, on_record, &s))
		goto out;
	if (o.class_name) {
		s.class_slot = resolve_class(&s);
		if (s.class_slot < 0) {
			pr_err("no class '%s' on %s (%s)", o.class_name, s.tap.h.ifname,
			       s.tap.nclasses ? "see 'xdp-pacer status' for its classes"
					      : "it runs no traffic classes");
			goto out;
		}
	}
	if (!o.json && !o.once && isatty(STDOUT_FILENO))
		fprintf(stderr, "sampling one paced packet in %.0f on %s; Ctrl-C to stop\n",
			sample_tap_scale(&s.tap), s.tap.h.ifname);
	ret = top_loop(&s);
out:
	sample_tap_close(&s.tap);
	hh_free(&s.hh);
	free(s.rows);
	return ret;
}
