// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "opts.h"
#include "pacer_conf.h"
#include "cli_values.h"
#include "pins.h"
#include "layout.h"
#include "ticks.h"
#include "live_opts.h"
#include "pacer_names.h"
#include "time_now.h"
#include "verifier_log.h"

void usage_hint(const char *verb)
{
	fprintf(stderr, "Try 'xdp-pacer %s --help'.\n", verb);
}

/* Options expanded from a --config file: errors about their values name the file and line. */
static const struct pacer_conf *opt_conf;
/* The command line's own arguments (without --config FILE), which override the file's. */
static char **cli_args;
static int cli_nargs;

int parse_verb_opts(const struct opt_verb *v, int argc, char **argv, void *opts)
{
	struct opt_error e;
	int err = opts_parse(v, argc, argv, opts, stdout, &e);

	if (err != 2)
		return err;
	if (e.opt[0])
		bad_value(e.opt, e.value, e.why);
	else
		pr_err("%s", e.msg);
	if (e.hint)
		usage_hint(v->name);
	return 2;
}

int usage_error(const char *verb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pr_err_va(fmt, ap);
	va_end(ap);
	usage_hint(verb);
	return 2;
}

int bad_value(const char *opt, const char *val, const char *why)
{
	unsigned line = pacer_conf_line_of(opt_conf, val);
	char shown[PACER_CONF_MAX_LINE * 4 + 1];

	if (line)
		pr_err("%s:%u: invalid value '%s' for %s: %s", opt_conf->path, line,
		       pacer_conf_shown(val, shown, sizeof(shown)), opt + 2, why);
	else
		pr_err("invalid value '%s' for %s: %s", pacer_conf_shown(val, shown, sizeof(shown)), opt, why);
	return 2;
}

/* Is --name (or --name=VALUE) among the command line's own arguments? */
static bool cli_has(const char *name)
{
	size_t len = strlen(name);
	int i;

	for (i = 0; i < cli_nargs && strcmp(cli_args[i], "--"); i++)
		if (!strncmp(cli_args[i], "--", 2) && !strncmp(cli_args[i] + 2, name, len) &&
		    (!cli_args[i][2 + len] || cli_args[i][2 + len] == '='))
			return true;
	return false;
}

bool cli_gives(const char *name)
{
	return cli_nargs ? cli_has(name) : true; /* no --config: every option is the command line's */
}

/* The line of the --config file that set key (the command line not overriding it), or 0. */
static unsigned conf_line(const char *key)
{
	const struct pacer_conf_entry *e = key && opt_conf ? pacer_conf_get(opt_conf, key) : NULL;

	return e && !cli_has(key) ? e->line : 0;
}

int conf_conflict(const char *verb, const char *a, const char *b, const char *why)
{
	unsigned la = conf_line(a), lb = conf_line(b);

	if (!la && !lb)
		return usage_error(verb, "%s", why);
	if (la && lb)
		pr_err("%s:%u: '%s' conflicts with '%s' on line %u: %s", opt_conf->path,
		       la > lb ? la : lb, la > lb ? a : b, la > lb ? b : a, la > lb ? lb : la, why);
	else if (b && cli_has(la ? b : a))
		pr_err("%s:%u: '%s' conflicts with --%s on the command line: %s", opt_conf->path,
		       la ? la : lb, la ? a : b, la ? b : a, why);
	else
		pr_err("%s:%u: '%s': %s", opt_conf->path, la ? la : lb, la ? a : b, why);
	usage_hint(verb);
	return 2;
}

/* Where --config FILE (or --config=FILE) is in argv: its index, and *file. */
static int find_config_arg(int argc, char **argv, const char **file)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--config=", 9)) {
			*file = argv[i] + 9;
			return i;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			*file = argv[i + 1];
			return i;
		}
	}
	return 0;
}

/* Is the per-source rate (--interval or --rate) on the command line? */
static bool argv_sets_rate(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--interval", 10) || !strncmp(argv[i], "--rate", 6))
			return true;
	return false;
}

/*
 * interval and rate are one setting: the file's gives way to the command
 * line's, and a file with rate gets no default interval.
 */
static bool conf_skip_key(const struct pacer_conf *conf, const char *name, bool cli_rate)
{
	bool is_rate = !strcmp(name, "rate"), is_interval = !strcmp(name, "interval");

	if (cli_rate && (is_rate || is_interval))
		return true;
	if (is_rate)
		return !pacer_conf_get(conf, "rate");
	/* The budget's other keys go back to their defaults with the budget itself. */
	if (!strcmp(name, "reserve") && !pacer_conf_get(conf, name)) {
		const struct pacer_conf_entry *b = pacer_conf_get(conf, "budget");

		return !b || !strcmp(b->value, "off");
	}
	return is_interval && !pacer_conf_get(conf, "interval") && pacer_conf_get(conf, "rate");
}

/* The keys of the limit analyze --pcap models from a config file. */
static bool capture_key(const char *name)
{
	static const char *const keys[] = { "interval", "rate", "policy", "prefix4", "prefix6" };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(name, keys[i]))
			return true;
	return false;
}

static char **conf_argv_for(const struct pacer_conf *conf, char *argv0, int live_only, int extra,
			    bool cli_rate, int *n)
{
	const struct pacer_conf_key *k;
	const struct pacer_conf_entry *e;
	char **nv = calloc(2 * PACER_CONF_MAX_ENTRIES + (size_t)extra + 2, sizeof(*nv));

	if (!nv)
		return NULL;
	*n = 0;
	nv[(*n)++] = argv0;
	for (k = pacer_conf_keys; k->name; k++) {
		if ((live_only && !k->live) || conf_skip_key(conf, k->name, cli_rate))
			continue;
		if (live_only == CONF_KEYS_CAPTURE && !capture_key(k->name))
			continue;
		e = pacer_conf_get(conf, k->name);
		if (!e && (!live_only || live_only == CONF_KEYS_CAPTURE || !pacer_conf_default(k)))
			continue;
		if (asprintf(&nv[*n], "--%s", k->name) < 0)
			return NULL; /* exiting anyway */
		(*n)++;
		nv[(*n)++] = e ? e->value : (char *)pacer_conf_default(k);
	}
	return nv;
}

char **conf_argv(const struct pacer_conf *conf, char *argv0, int live_only, int extra, int *n)
{
	return conf_argv_for(conf, argv0, live_only, extra, false, n);
}

int conf_expand_argv(int *argc, char ***argv, int live_only, struct pacer_conf *conf)
{
	const char *file = NULL;
	char err[512], **nv;
	int at = find_config_arg(*argc, *argv, &file), skip, n, i, ret;

	memset(conf, 0, sizeof(*conf));
	if (!at)
		return 0;
	ret = pacer_conf_read(file, conf, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		pacer_conf_free(conf);
		return ret == -EINVAL ? 2 : 1;
	}
	/* The file first, so options on the command line override it. */
	nv = conf_argv_for(conf, (*argv)[0], live_only, *argc, argv_sets_rate(*argc, *argv), &n);
	if (!nv) {
		pacer_conf_free(conf);
		return 1;
	}
	skip = strchr((*argv)[at], '=') ? 1 : 2;
	for (i = 1; i < *argc; i++)
		if (i < at || i >= at + skip)
			nv[n++] = (*argv)[i];
	opt_conf = conf;
	cli_args = nv + n - (*argc - 1 - skip);
	cli_nargs = *argc - 1 - skip;
	*argc = n;
	*argv = nv; /* lives until exit, as argv does */
	return 0;
}

void warn_coarse_clock(const struct live_opts *l, uint32_t clock)
{
	uint64_t interval_ns, res = clock_res_ns(CLOCK_MONOTONIC_COARSE);
	char g[32], r[32];
	uint32_t n;

	live_opts_rate(l, &n, &interval_ns);
	if (!gap_below_clock(clock, n, interval_ns, res))
		return;
	pr_err("warning: a gap of %s between a source's packets is finer than the %s clock's steps of %s: "
	       "a source's packets within one step look simultaneous, so it gets fewer through than it should (false drops); "
	       "'load --clock precise' reads time to the nanosecond",
	       format_duration(interval_ns / n, g, sizeof(g)), clock_name(clock),
	       format_duration(res, r, sizeof(r)));
}

void prog_load_prepare(struct bpf_program *prog, char *log, size_t len, uint32_t level)
{
	const char *fault = getenv("XDP_PACER_FAULT");

	bpf_program__set_log_buf(prog, log, len);
	bpf_program__set_log_level(prog, level);
	if (fault && !strcmp(fault, "verifier"))
		bpf_program__set_flags(prog, bpf_program__flags(prog) | BPF_F_SLEEPABLE);
}

int prog_refusal_cause(const char *log, char *out, size_t len)
{
	struct utsname u;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	return verifier_log_cause(log, u.release, out, len);
}
