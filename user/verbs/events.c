// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer events: a line when a source starts being limited and when it
 * stops, from the datapath's sampled drops (sample_tap.h, drop_events.h),
 * at most --max-rate lines a second, for journald and log pipelines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "cli_values.h"
#include "drop_events.h"
#include "json_writer.h"
#include "opts.h"
#include "sample_key.h"
#include "sample_tap.h"
#include "time_now.h"

#define EVENTS_DEFAULT_ONE_IN 100

struct events_opts {
	const char *ifname;
	uint32_t prefix4, prefix6, max_rate, max_sources, min_drops;
	uint64_t hold_ns, sample, duration_ns;
	bool json;
};

#define STR(x) #x
#define XSTR(x) STR(x)

static const struct opt_spec events_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct events_opts, ifname) },
	{ .name = "hold", .type = OPT_DURATION, .arg = "DUR", .dflt = "10s", .max = 86400000000000ULL,
	  OPT_FIELD(struct events_opts, hold_ns),
	  .help = "a source stops being limited DUR after its last\n"
		  "sampled drop (at most 86400 s)" },
	{ .name = "min-drops", .type = OPT_U32, .arg = "N", .min = 1, .max = 1000000, .dflt = "1",
	  OPT_FIELD(struct events_opts, min_drops),
	  .help = "a source starts being limited at its N-th sampled drop,\n"
		  "none of them --hold apart (1: its first); fewer say nothing" },
	{ .name = "max-rate", .type = OPT_U32, .arg = "N", .min = 1, .max = 100000, .dflt = "100",
	  OPT_FIELD(struct events_opts, max_rate),
	  .help = "at most N start/stop lines in any second; those beyond\n"
		  "are counted in a summary line, at most one a second" },
	{ .name = "sample-packets", .type = OPT_SAMPLING, .arg = "1/M", .dflt = "1/" XSTR(EVENTS_DEFAULT_ONE_IN),
	  OPT_FIELD(struct events_opts, sample),
	  .help = "sample one paced packet in M (1/1: every packet)" },
	{ .name = "prefix4", .type = OPT_U32, .arg = "LEN", .max = 32, .dflt = "32",
	  OPT_FIELD(struct events_opts, prefix4),
	  .help = "report IPv4 sources as /LEN prefixes" },
	{ .name = "prefix6", .type = OPT_U32, .arg = "LEN", .max = 128, .dflt = "128",
	  OPT_FIELD(struct events_opts, prefix6), .help = "report IPv6 sources as /LEN prefixes" },
	{ .name = "max-sources", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 24,
	  .dflt = "65536", OPT_FIELD(struct events_opts, max_sources),
	  .help = "sources tracked as limited at once; drops of others are\n"
		  "counted as untracked in the summary line" },
	{ .name = "duration", .type = OPT_DURATION, .arg = "DUR",
	  OPT_FIELD(struct events_opts, duration_ns),
	  .help = "stop after DUR; default: until SIGINT or SIGTERM" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct events_opts, json),
	  .help = "one JSON object per line instead of text" },
	{ 0 },
};

static const struct opt_verb events_verb = {
	.name = "events",
	.synopsis = "IFNAME [--hold DUR] [--min-drops N] [--max-rate N] [--sample-packets 1/M]\n"
		    "                        [--prefix4 LEN] [--prefix6 LEN] [--max-sources N] [--duration DUR]\n"
		    "                        [--json]",
	.intro = "Print a line when a source of IFNAME's pacer starts being limited (its first\n"
		 "sampled drop while it was not) and when it stops (--hold without a sampled\n"
		 "drop), per traffic class, from a sample of one paced packet in M (default\n"
		 "1/" XSTR(EVENTS_DEFAULT_ONE_IN) ").\n",
	.args = "an interface name",
	.opts = events_specs,
	.epilog = "A source dropping d packets a second is reported within about M/d seconds;\n"
		  "while it keeps dropping, a false stop has probability exp(-d * hold / M) per\n"
		  "hold.  On exit every source still limited gets its stop line (reason exit).\n"
		  "Sampling is switched on in the running program and put back on exit; one of\n"
		  "record, top and events reads a pacer's samples at a time.  The systemd unit\n"
		  "xdp-pacer-events@IFNAME runs it into the journal.\n",
};

struct events_state {
	const struct events_opts *o;
	struct sample_tap tap;
	struct de_tracker tr;
	struct de_rate rate;
	uint64_t untracked_said, lost_said, last_summary_ns;
	uint64_t lines;
};

static void key_fields(struct json_writer *w, const struct events_state *s, const struct hh_key *k)
{
	uint32_t slot = sample_key_class_slot(k);
	char buf[64];

	jsonw_string_field(w, "source", sample_key_str(k, buf, sizeof(buf)));
	jsonw_uint_field(w, "family", sample_key_family(k));
	if (slot)
		jsonw_string_field(w, "class", sample_tap_class_name(&s->tap, slot));
	else
		jsonw_null_field(w, "class");
}

/* One start or stop line (the cap already said yes). */
static void print_event(struct events_state *s, const struct de_event *ev, const char *reason)
{
	double m = sample_tap_scale(&s->tap);
	uint32_t slot = sample_key_class_slot(&ev->key);
	char t[40], f[40], l[40], src[64];
	struct json_writer w;

	format_utc_ms(sample_tap_realtime(&s->tap, ev->at_ns), t, sizeof(t));
	s->lines++;
	if (!s->o->json) {
		if (ev->kind == DE_START) {
			printf("%s start %s class %s\n", t, sample_key_str(&ev->key, src, sizeof(src)),
			       slot ? sample_tap_class_name(&s->tap, slot) : "-");
			return;
		}
		printf("%s stop %s class %s after %.1f s limited: %" PRIu64
		       " sampled drops, about %.0f dropped (%s)\n",
		       t, sample_key_str(&ev->key, src, sizeof(src)),
		       slot ? sample_tap_class_name(&s->tap, slot) : "-",
		       (double)(ev->last_ns - ev->first_ns) / 1e9, ev->sampled, (double)ev->sampled * m,
		       reason);
		return;
	}
	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "time", t);
	jsonw_string_field(&w, "event", ev->kind == DE_START ? "start" : "stop");
	jsonw_string_field(&w, "ifname", s->tap.h.ifname);
	key_fields(&w, s, &ev->key);
	jsonw_string_field(&w, "first_drop",
			   format_utc_ms(sample_tap_realtime(&s->tap, ev->first_ns), f, sizeof(f)));
	if (ev->kind == DE_STOP) {
		jsonw_string_field(&w, "last_drop",
				   format_utc_ms(sample_tap_realtime(&s->tap, ev->last_ns), l, sizeof(l)));
		jsonw_float_field_fmt(&w, "limited_s", "%.3f", (double)(ev->last_ns - ev->first_ns) / 1e9);
		jsonw_uint_field(&w, "sampled_drops", ev->sampled);
		jsonw_float_field_fmt(&w, "drops_estimate", "%.0f", (double)ev->sampled * m);
		jsonw_string_field(&w, "reason", reason);
	}
	jsonw_float_field_fmt(&w, "sample_one_in", "%.3f", m);
	jsonw_end_object(&w);
	jsonw_finish(&w);
}

static void emit(struct events_state *s, const struct de_event *ev, const char *reason)
{
	if (de_rate_take(&s->rate, mono_ns(), ev->kind))
		print_event(s, ev, reason);
}

/* The summary line: lines the cap refused, drops of untracked sources, lost samples. */
static void maybe_summary(struct events_state *s, bool force)
{
	uint64_t now = mono_ns(), lost = sample_tap_lost(&s->tap);
	uint64_t untracked = s->tr.untracked - s->untracked_said, lost_new = lost - s->lost_said;
	char t[40];
	struct json_writer w;

	if (!s->rate.refused[DE_START] && !s->rate.refused[DE_STOP] && !untracked && !lost_new)
		return;
	if (!force && now - s->last_summary_ns < 1000000000ULL)
		return;
	format_utc_ms(clock_now_ns(CLOCK_REALTIME), t, sizeof(t));
	if (s->o->json) {
		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		jsonw_string_field(&w, "time", t);
		jsonw_string_field(&w, "event", "suppressed");
		jsonw_string_field(&w, "ifname", s->tap.h.ifname);
		jsonw_uint_field(&w, "starts", s->rate.refused[DE_START]);
		jsonw_uint_field(&w, "stops", s->rate.refused[DE_STOP]);
		jsonw_uint_field(&w, "max_rate", s->o->max_rate);
		jsonw_uint_field(&w, "untracked_drops", untracked);
		jsonw_uint_field(&w, "samples_lost", lost_new);
		jsonw_end_object(&w);
		jsonw_finish(&w);
	} else {
		printf("%s suppressed %" PRIu64 " start and %" PRIu64
		       " stop lines over --max-rate %u/s; %" PRIu64
		       " sampled drops of untracked sources; %" PRIu64 " samples lost\n",
		       t, s->rate.refused[DE_START], s->rate.refused[DE_STOP], s->o->max_rate, untracked,
		       lost_new);
	}
	s->rate.refused[DE_START] = s->rate.refused[DE_STOP] = 0;
	s->untracked_said = s->tr.untracked;
	s->lost_said = lost;
	s->last_summary_ns = now;
}

static void on_record(void *ctx, const struct pacer_record *rec)
{
	struct events_state *s = ctx;
	struct de_event ev;
	struct hh_key k;

	if (rec->verdict != PACER_REC_DROP || !(rec->flags & PACER_REC_SAMPLED_PACKET))
		return;
	sample_key_of(rec, s->o->prefix4, s->o->prefix6, &k);
	if (de_drop(&s->tr, &k, rec->ts_ns, &ev))
		emit(s, &ev, "");
}

#define ATTACH_CHECK_NS 250000000ULL

static int events_loop(struct events_state *s)
{
	uint64_t start = mono_ns(), next_check = start + ATTACH_CHECK_NS;
	struct de_event ev;
	char eb[128];
	int err;

	while (!sample_tap_signal) {
		uint64_t now, clock;

		err = sample_tap_poll(&s->tap, 100);
		if (err) {
			pr_err("reading the ring buffer failed: %s", err_str(err, eb, sizeof(eb)));
			return 1;
		}
		now = mono_ns();
		clock = pacer_clock_now(&s->tap.h); /* the records' clock */
		while (de_expire(&s->tr, clock, &ev))
			emit(s, &ev, "quiet");
		maybe_summary(s, false);
		fflush(stdout);
		if (now >= next_check) {
			if (!sample_tap_attached(&s->tap))
				return 1;
			sample_tap_refresh_classes(&s->tap);
			next_check = now + ATTACH_CHECK_NS;
		}
		if (s->o->duration_ns && now - start >= s->o->duration_ns)
			break;
	}
	return 0;
}

int cmd_events(int argc, char **argv)
{
	struct events_opts o = { 0 };
	struct events_state s = { .o = &o };
	struct de_event ev;
	int err, ret = 1;

	err = parse_verb_opts(&events_verb, argc, argv, &o);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	if (!o.sample)
		return bad_value("--sample-packets", "off", "events needs sampling: expected 1/M");
	/* Line by line into a pipe or the journal, not in 4 KiB blocks. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (de_init(&s.tr, o.max_sources, o.hold_ns, o.min_drops) || de_rate_init(&s.rate, o.max_rate)) {
		pr_err("cannot allocate the tables for %u sources", o.max_sources);
		goto out;
	}
	if (sample_tap_open(&s.tap, o.ifname, "events", o.sample, on_record, &s))
		goto out;
	ret = events_loop(&s);
	/* Still limited at exit: say so, so that a pipeline closes every start. */
	if (!s.tap.gone)
		sample_tap_poll(&s.tap, 0);
	while (de_flush(&s.tr, &ev)) {
		ev.at_ns = pacer_clock_now(&s.tap.h);
		emit(&s, &ev, "exit");
	}
	maybe_summary(&s, true);
	fflush(stdout);
out:
	sample_tap_close(&s.tap);
	de_free(&s.tr);
	de_rate_free(&s.rate);
	return ret;
}
