// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include "pacer_abi.h"
#include "pacer_defaults.h"
#include "pacer_names.h"
#include "live_opts.h"
#include "pacer_rate.h"
#include "class_conf.h"
#include "writer_lock.h"

#define PACER_STR_(x) #x
#define PACER_STR(x) PACER_STR_(x)
#include "conf_text.h"
#include <stdio.h>
#include <string.h>

static int parse_rate_opt(const struct opt_spec *s, const char *arg, void *field, char *why,
			  size_t len)
{
	struct rate_opt *r = field;

	(void)s, (void)why, (void)len;
	if (parse_count_per(arg, PACER_RATE_MAX_N, &r->n, &r->interval_ns) ||
	    r->interval_ns > PACER_RATE_MAX_PERIOD_NS)
		return -EINVAL;
	return 0;
}

const struct opt_spec pacing_specs[] = {
	{ .name = "interval", .type = OPT_DURATION, .flags = OPT_CONF | OPT_LIVE, .arg = "DUR",
	  .max = PACER_INTERVAL_MAX_NS, .dflt = PACER_DEFAULT_INTERVAL_TEXT, OPT_FIELD(struct live_opts, interval_ns),
	  OPT_GIVEN(struct live_opts, interval_set),
	  .help = "minimum gap between admitted packets of a source;\n"
		  "DUR takes ns, us, ms or s, e.g. 250ms, 1.5s" },
	{ .name = "rate", .type = OPT_CUSTOM, .flags = OPT_CONF | OPT_LIVE, .arg = "N/T",
	  .parse = parse_rate_opt, OPT_FIELD(struct live_opts, rate), OPT_GIVEN(struct live_opts, rate_set),
	  .why = "expected N/T with N from 1 to 16384 and T a positive duration up to 2^50 ns (50/30s)",
	  .help = "N packets per T per source, bursts of N at once (GCRA), within 1 %\n"
		  "of N/T: N > 1 needs --backend table; instead of --interval,\n"
		  "which is --rate 1/L (docs/design.md, Per-source rate)" },
	{ .name = "policy", .type = OPT_ENUM, .flags = OPT_CONF | OPT_LIVE, .arg = "pace|quiet",
	  .lookup = parse_policy, .dflt = "pace", OPT_FIELD(struct live_opts, policy),
	  OPT_GIVEN(struct live_opts, policy_set),
	  .help = "pace: update on admit only, one packet per interval;\n"
		  "quiet: update on every packet, a source must stay quiet a whole interval\n"
		  "(with --rate, a dropped packet leaves it no credit)" },
	{ .name = "prefix4", .type = OPT_U32, .flags = OPT_CONF | OPT_LIVE, .arg = "N", .max = 32,
	  .dflt = PACER_DEFAULT_PREFIX4_TEXT, OPT_FIELD(struct live_opts, prefix4), OPT_GIVEN(struct live_opts, prefix4_set),
	  .help = "IPv4 source prefix length forming the key, 0..32" },
	{ .name = "prefix6", .type = OPT_U32, .flags = OPT_CONF | OPT_LIVE, .arg = "N", .max = 128,
	  .dflt = PACER_DEFAULT_PREFIX6_TEXT, OPT_FIELD(struct live_opts, prefix6), OPT_GIVEN(struct live_opts, prefix6_set),
	  .help = "IPv6 source prefix length forming the key, 0..128" },
	{ 0 },
};

const struct opt_spec malformed_specs[] = {
	{ .name = "malformed", .type = OPT_ENUM, .flags = OPT_CONF | OPT_LIVE, .arg = "pass|drop",
	  .lookup = parse_malformed, .dflt = "pass", OPT_FIELD(struct live_opts, malformed),
	  OPT_GIVEN(struct live_opts, malformed_set),
	  .help = "verdict for truncated or invalid IP headers" },
	{ 0 },
};

/* --mode's values: the verdict mode, or (load) the attach mode's old spelling. */
static int parse_mode_opt(const struct opt_spec *s, const char *arg, void *field, char *why,
			  size_t len)
{
	struct mode_opt *m = field;

	(void)s, (void)why, (void)len;
	if (!parse_mode(arg, &m->mode))
		return 0;
	if (!strcmp(arg, "native") || !strcmp(arg, "skb")) {
		m->attach = arg[0] == 'n' ? 1 /* XDP_MODE_NATIVE */ : 2 /* XDP_MODE_SKB */;
		m->attach_set = true;
		return 0;
	}
	return -EINVAL;
}

const struct opt_spec mode_specs[] = {
	{ .name = "mode", .type = OPT_CUSTOM, .flags = OPT_CONF | OPT_LIVE, .arg = "enforce|observe",
	  .parse = parse_mode_opt, .dflt = "enforce", OPT_FIELD(struct live_opts, mode),
	  OPT_GIVEN(struct live_opts, mode_set), .why = "expected enforce or observe",
	  .help = "observe: every stage judges and keeps its state as enforcing\n"
		  "would, but a packet judged to drop passes, counted as would-drop\n"
		  "(stats, metrics); a class's own mode overrides it (docs/operating.md,\n"
		  "Observe, then enforce)" },
	{ .name = "deny-mode", .type = OPT_ENUM, .flags = OPT_CONF | OPT_LIVE,
	  .arg = "global|enforce|observe", .lookup = parse_own_mode, .dflt = "global",
	  OPT_FIELD(struct live_opts, deny_mode), OPT_GIVEN(struct live_opts, deny_mode_set),
	  .help = "the deny list's mode; global: as --mode" },
	{ 0 },
};

const struct opt_spec sampling_specs[] = {
	{ .name = "sample-sources", .type = OPT_SAMPLING, .arg = "1/N|off",
	  OPT_FIELD(struct live_opts, sample_src), OPT_GIVEN(struct live_opts, sample_src_set),
	  .help = "record every packet of 1 in N sources, chosen by keyed hash" },
	{ .name = "sample-packets", .type = OPT_SAMPLING, .arg = "1/M|off",
	  OPT_FIELD(struct live_opts, sample_pkt), OPT_GIVEN(struct live_opts, sample_pkt_set),
	  .help = "also record 1 in M packets at random" },
	{ 0 },
};

/*
 * The reason of class_conf's "--opt 'TEXT': reason", which bad_value()
 * frames itself; the whole message where it does not start so (a TEXT
 * cut short in it).
 */
static int class_opt(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	struct class_conf *cc = field;
	char err[640], start[sizeof(err)], shown[sizeof(err)];
	size_t n;
	int ret;

	if (!strcmp(s->name, "class"))
		ret = class_conf_add_cli(cc, arg, err, sizeof(err));
	else
		ret = class_conf_add_list_cli(cc, s->name[0] == 'd', arg, err, sizeof(err));
	if (!ret)
		return 0;
	snprintf(start, sizeof(start), "--%s '%s': ", s->name, pacer_conf_shown(arg, shown, sizeof(shown)));
	n = strlen(start);
	if (n + 1 < sizeof(start) && !strncmp(err, start, n) && err[n])
		snprintf(why, len, "%s", err + n);
	else
		snprintf(why, len, "%s", err);
	return ret;
}

const struct opt_spec class_specs[] = {
	{ .name = "class", .type = OPT_CUSTOM, .arg = "'NAME: MATCH LIMIT'", .parse = class_opt,
	  .help = "a traffic class, repeatable, in order (the first that matches\n"
		  "decides; unmatched traffic passes): 'dns: udp dport 53 rate 20/1s',\n"
		  "'syn: tcp flags syn interval 100ms key src+dport', 'ping: icmp drop';\n"
		  "'observe' or 'enforce' after it: the class's own mode;\n"
		  "'none': no classes (docs/operating.md, Traffic classes)" },
	{ .name = "exempt", .type = OPT_CUSTOM, .arg = "PREFIX[,...]", .parse = class_opt,
	  .help = "source prefixes that always pass, repeatable ('none': empty)" },
	{ .name = "deny", .type = OPT_CUSTOM, .arg = "PREFIX[,...]", .parse = class_opt,
	  .help = "source prefixes that are always dropped, repeatable ('none': empty)" },
	{ 0 },
};

const struct opt_spec wait_specs[] = {
	{ .name = "wait", .type = OPT_U32, .arg = "SECS", .max = PACER_LOCK_WAIT_MAX_S,
	  .dflt = PACER_STR(PACER_LOCK_WAIT_DEFAULT_S),
	  .help = "wait this long for another xdp-pacer changing the same\n"
		  "pacer to finish (0: fail at once if one is)" },
	{ 0 },
};

bool live_opts_any(const struct live_opts *o)
{
	return o->interval_set || o->rate_set || o->policy_set || o->prefix4_set || o->prefix6_set ||
	       o->malformed_set || o->sample_src_set || o->sample_pkt_set || o->mode_set ||
	       o->deny_mode_set;
}

const char *live_opts_conflict(const struct live_opts *o)
{
	if (o->interval_set && o->rate_set)
		return "--interval and --rate both set the per-source rate: give one (--interval L is --rate 1/L)";
	return NULL;
}

void live_opts_rate(const struct live_opts *o, uint32_t *n, uint64_t *interval_ns)
{
	*n = o->rate_set ? (uint32_t)o->rate.n : 1;
	*interval_ns = o->rate_set ? o->rate.interval_ns : o->interval_ns;
}
