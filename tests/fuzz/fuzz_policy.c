// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A hostile probe of the policy inputs: one libFuzzer target over what an
 * operator writes (tests/fuzz.sh runs it; docs/hacking.md, Fuzzing).
 *
 * The input is taken three ways at once:
 *   - as a --config file (pacer_conf.c, class_conf.c's sections), its
 *     global values through the option tables load and set parse them
 *     with (opts.c, cli_values.c), its classes through the tick choice
 *     (ticks.c) and the datapath's check of a class list;
 *   - each line as `--class TEXT`, then as `--exempt TEXT` or `--deny
 *     TEXT`, through the option table's parser (class_conf.c's
 *     command-line form), then merged over the file as load and set do;
 *   - its first line's words as a command line (opts.c's getopt_long,
 *     defaults and positionals);
 *   - each word as a duration, checked against an independent parser.
 *
 * Beyond the sanitizers (ASan, UBSan), it aborts when a refusal does not
 * say where (FILE:LINE: for the file, the option and its text for the
 * command line), when a message carries a byte a terminal could take as
 * a control (a C1 control in UTF-8 is two bytes >= 0x80), when what was
 * accepted does not read back the same from its own text (a match, a
 * prefix), when a list after the merge is not sorted, unique, disjoint
 * and within its limit, or when the tick chosen for the classes does not
 * hold them.
 *
 * Built with clang -fsanitize=fuzzer,address,undefined when libFuzzer is
 * there, else with tests/fuzz/mutate_main.c (a deterministic mutation
 * loop under ASan/UBSan): the Makefile picks.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "budget_cfg.h"
#include "class_conf.h"
#include "classes_map.h"
#include "cli_values.h"
#include "live_opts.h"
#include "opts.h"
#include "pacer_abi.h"
#include "pacer_classify.h"
#include "pacer_conf.h"
#include "ticks.h"

#define FUZZ_PATH "fuzz.conf"
#define MAX_LINES 64 /* lines of one input tried on the command line */

static void fail(const char *what, const char *detail) __attribute__((noreturn));

static void fail(const char *what, const char *detail)
{
	char shown[4 * 700 + 1];

	fprintf(stderr, "fuzz_policy: %s: \"%s\"\n", what,
		pacer_conf_shown(detail ? detail : "", shown, sizeof(shown)));
	abort();
}

/* Only printable ASCII reaches the operator's terminal. */
static void check_printable(const char *msg)
{
	const unsigned char *p;

	for (p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p > 0x7e)
			fail("a message carries a byte outside printable ASCII", msg);
}

/* "fuzz.conf:LINE: ..." with LINE within the file (lines: how many it has). */
static void check_file_message(const char *msg, unsigned lines)
{
	const char *p = msg + strlen(FUZZ_PATH ":");
	unsigned long line;
	char *end;

	if (strncmp(msg, FUZZ_PATH ":", strlen(FUZZ_PATH ":")))
		fail("a refusal of the file does not name it", msg);
	line = strtoul(p, &end, 10);
	if (end == p || strncmp(end, ": ", 2))
		fail("a refusal of the file does not name the line", msg);
	if (line < 1 || line > lines)
		fail("a refusal names a line the file does not have", msg);
	check_printable(msg);
}

/* A match reads back the same from the words class_match_format() writes. */
static void check_match_round_trip(const struct pacer_match *m, const char *who)
{
	struct pacer_match again;
	char text[256], why[384];
	const char *problem = pacer_match_problem(m);

	if (problem)
		fail("an accepted match is one the datapath's check refuses", problem);
	class_match_format(m, text, sizeof(text));
	if (class_match_parse(text, &again, why, sizeof(why)))
		fail("a match's own text is refused", text);
	if (memcmp(m, &again, sizeof(again)))
		fail("a match reads back different from its text", who);
}

static void check_prefix_round_trip(const struct conf_prefix *p)
{
	struct conf_prefix again;
	char text[64], why[256];

	format_prefix(p, text, sizeof(text));
	if (parse_prefix(text, &again, why, sizeof(why)))
		fail("a prefix's own text is refused", text);
	if (again.family != p->family || again.len != p->len || memcmp(again.addr, p->addr, 16))
		fail("a prefix reads back different from its text", text);
}

static int prefix_order(const struct conf_prefix *x, const struct conf_prefix *y)
{
	if (x->family != y->family)
		return x->family - y->family;
	if (x->len != y->len)
		return x->len - y->len;
	return memcmp(x->addr, y->addr, 16);
}

/* After a merge: each list sorted and unique, none on both, within the limit. */
static void check_lists(const struct class_conf *cc)
{
	const struct prefix_list *l[2] = { &cc->exempt, &cc->deny };
	size_t i, j, per_family[2] = { 0, 0 };
	int k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < l[k]->n; i++) {
			check_prefix_round_trip(&l[k]->p[i]);
			per_family[l[k]->p[i].family == 6]++;
			if (i && prefix_order(&l[k]->p[i - 1], &l[k]->p[i]) >= 0)
				fail("a list after the merge is not sorted and unique", NULL);
		}
	if (per_family[0] > PACER_LIST_MAX_ENTRIES || per_family[1] > PACER_LIST_MAX_ENTRIES)
		fail("the lists hold more than their limit after a merge", NULL);
	for (i = 0; i < cc->exempt.n; i++)
		for (j = 0; j < cc->deny.n; j++)
			if (!prefix_order(&cc->exempt.p[i], &cc->deny.p[j]))
				fail("a prefix is on both lists after a merge", NULL);
}

/*
 * The classes as load builds them (classes_cli.c's classes_build): one
 * tick for every pacing class and the global limit, for each backend; a
 * tick chosen must hold every one, and the list must pass the check the
 * datapath's maps get.
 */
static void check_classes(struct class_conf *cc, bool from_file, unsigned lines)
{
	struct limit_req l[PACER_MAX_CLASSES + 1];
	struct pacer_class out[PACER_MAX_CLASSES];
	char who[PACER_MAX_CLASSES][200], err[1024];
	struct pacer_rate rate;
	uint32_t backend, shift;
	int i, k;

	class_conf_default_prefixes(cc, 32, 64);
	for (i = 0; i < cc->n; i++) {
		check_match_round_trip(&cc->cls[i].c.m, cc->cls[i].c.name);
		class_where(cc, &cc->cls[i], who[i], sizeof(who[i]));
		if (from_file && cc->cls[i].line)
			check_file_message(who[i], lines);
	}
	for (backend = 0; backend < PACER_BACKEND_MAX; backend++) {
		for (i = 0, k = 0; i < cc->n; i++)
			if (cc->cls[i].c.action == PACER_ACTION_PACE)
				l[k++] = (struct limit_req){ cc->cls[i].c.rate_n, cc->cls[i].c.interval_ns,
							     who[i] };
		l[k++] = (struct limit_req){ 1, 1000000000ULL, "the global limit" };
		if (limits_choose_tick(l, k, 0, backend, &shift, err, sizeof(err))) {
			if (!err[0])
				fail("a tick refused without a reason", NULL);
			continue;
		}
		for (i = 0; i < cc->n; i++) {
			out[i] = cc->cls[i].c;
			out[i].stat_slot = (uint32_t)i;
			out[i].id = (uint32_t)i + 1;
			if (out[i].action != PACER_ACTION_PACE)
				continue;
			if (limit_fit(out[i].rate_n, out[i].interval_ns, shift, backend, &rate, err,
				      sizeof(err)))
				fail("the tick chosen does not hold a class's limit", err);
			out[i].thresh_ticks = rate.thresh;
			out[i].burst_ticks = rate.burst;
		}
		if (pacer_classes_check(out, cc->n, backend, err, sizeof(err)))
			fail("classes the parser and the tick accept fail the maps' check", err);
	}
}

/* ---- an independent reading of a duration, for parse_duration_ns() ---- */

/* -1: not a duration; -2: one beyond 64 bits of ns; else 0 with *out. */
static int reference_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *name;
		unsigned __int128 ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	unsigned __int128 whole = 0, frac = 0, div = 1, unit = 0, v;
	int digits = 0, fdigits = 0;
	size_t i;

	while (*s >= '0' && *s <= '9') {
		if (whole < ((unsigned __int128)1 << 100))
			whole = whole * 10 + (unsigned)(*s - '0');
		s++, digits++;
	}
	if (!digits)
		return -1;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9') {
			if (++fdigits > 9)
				return -1; /* finer than a nanosecond at any unit */
			frac = frac * 10 + (unsigned)(*s++ - '0');
			div *= 10;
		}
		if (!fdigits)
			return -1;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s, units[i].name))
			unit = units[i].ns;
	if (!unit || frac * unit % div)
		return -1;
	v = whole * unit + frac * unit / div;
	if (v > UINT64_MAX)
		return -2;
	*out = (uint64_t)v;
	return 0;
}

static void check_duration(const char *word)
{
	uint64_t got = 0, want = 0;
	int g = parse_duration_ns(word, &got), w = reference_duration(word, &want);

	if ((g == 0) != (w == 0) || (!g && got != want))
		fail("parse_duration_ns disagrees with the reference", word);
	if (w == -2 && g != -ERANGE)
		fail("a duration beyond 64 bits of ns is not -ERANGE", word);
}

/* ---- the three readings ---- */

struct fuzz_opts {
	struct live_opts live;
	struct budget_opts budget;
	struct class_conf cls;
};

static const struct opt_spec fuzz_specs[] = {
	{ .type = OPT_INCLUDE, .sub = pacing_specs, OPT_FIELD(struct fuzz_opts, live) },
	{ .type = OPT_INCLUDE, .sub = malformed_specs, OPT_FIELD(struct fuzz_opts, live) },
	{ .type = OPT_INCLUDE, .sub = sampling_specs, OPT_FIELD(struct fuzz_opts, live) },
	{ .type = OPT_INCLUDE, .sub = budget_specs, OPT_FIELD(struct fuzz_opts, budget) },
	{ .type = OPT_INCLUDE, .sub = class_specs, OPT_FIELD(struct fuzz_opts, cls) },
	{ 0 },
};

/* The file's global keys through the option tables, as conf_expand_argv feeds them. */
static void check_global_values(const struct pacer_conf *c)
{
	struct fuzz_opts o;
	struct opt_error e;
	const struct opt_spec *s;
	size_t base;
	int i;

	for (i = 0; i < c->n; i++) {
		if (!pacer_conf_key(c->e[i].key))
			fail("the file kept an unknown key", c->e[i].key);
		s = opts_find(fuzz_specs, c->e[i].key, &base);
		if (!s)
			continue; /* a fixed-at-load key of load's own table */
		memset(&o, 0, sizeof(o));
		if (opts_parse_value(s, c->e[i].value, (char *)&o + base, &e) && !e.why[0])
			fail("an option value refused without a reason", c->e[i].value);
		if (s->type == OPT_DURATION)
			check_duration(c->e[i].value);
		class_conf_free(&o.cls);
	}
}

/*
 * Each line of text as --class, then as --exempt (even lines) or --deny
 * (odd), one option at a time as opts_parse() takes a repeated option:
 * into o->cls, a refusal adding nothing.
 */
static void command_line(const char *text, size_t size, struct fuzz_opts *o)
{
	char *copy = malloc(size + 1), *line, *save = NULL;
	const char *opt[2];
	const struct opt_spec *s;
	struct opt_error e;
	int n = 0, k, before;
	size_t base;

	memset(o, 0, sizeof(*o));
	if (!copy)
		return;
	memcpy(copy, text, size);
	copy[size] = 0;
	for (line = strtok_r(copy, "\n", &save); line && n < MAX_LINES;
	     line = strtok_r(NULL, "\n", &save), n++) {
		opt[0] = "class";
		opt[1] = n % 2 ? "deny" : "exempt";
		for (k = 0; k < 2; k++) {
			s = opts_find(fuzz_specs, opt[k], &base);
			before = o->cls.n;
			if (!opts_parse_value(s, line, (char *)o + base, &e))
				continue;
			if (strcmp(e.opt + 2, opt[k]) || e.value != line || !e.why[0])
				fail("a command-line refusal without its option, text or reason", e.msg);
			if (o->cls.n != before)
				fail("a refused --class added a class", e.msg);
			check_printable(e.why);
		}
	}
	free(copy);
}

struct argv_opts {
	struct fuzz_opts o;
	const char *ifname;
	bool verbose;
};

static const struct opt_spec argv_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct argv_opts, ifname) },
	{ .type = OPT_INCLUDE, .sub = fuzz_specs, OPT_FIELD(struct argv_opts, o) },
	{ .name = "verbose", .short_name = 'v', .type = OPT_BOOL, OPT_FIELD(struct argv_opts, verbose) },
	{ 0 },
};

static const struct opt_verb argv_verb = { .name = "fuzz", .synopsis = "IFNAME [OPTIONS]",
					   .args = "an interface name", .opts = argv_specs };

/* The first line's words as a command line (getopt_long, defaults, positionals): opts.c. */
static void first_line_as_argv(const char *text, size_t size)
{
	char *copy = malloc(size + 1), *argv[34], *w, *save = NULL;
	struct argv_opts o;
	struct opt_error e;
	FILE *devnull;
	int argc = 1;

	if (!copy)
		return;
	memcpy(copy, text, size);
	copy[size] = 0;
	copy[strcspn(copy, "\n")] = 0;
	argv[0] = "fuzz";
	for (w = strtok_r(copy, " \t", &save); w && argc < 33; w = strtok_r(NULL, " \t", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	devnull = fopen("/dev/null", "w");
	memset(&o, 0, sizeof(o));
	if (opts_parse(&argv_verb, argc, argv, &o, devnull, &e) == 2 && !e.msg[0] && !e.why[0])
		fail("a command line refused without a message", text);
	class_conf_free(&o.o.cls);
	if (devnull)
		fclose(devnull);
	free(copy);
}

static void words_as_durations(const char *text, size_t size)
{
	char w[48];
	size_t i = 0, n;

	while (i < size) {
		while (i < size && (text[i] == ' ' || text[i] == '\n' || text[i] == '=' || text[i] == '\t'))
			i++;
		for (n = 0; i < size && text[i] != ' ' && text[i] != '\n' && text[i] != '=' &&
			    text[i] != '\t'; i++)
			if (n + 1 < sizeof(w))
				w[n++] = text[i];
		w[n] = 0;
		if (n && n + 1 < sizeof(w))
			check_duration(w);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), err[1024];
	struct class_conf none;
	struct pacer_conf c;
	struct fuzz_opts cli;
	unsigned lines = 1;
	size_t i;
	FILE *f;
	int ret;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	for (i = 0; i + 1 < size; i++)
		lines += buf[i] == '\n';

	/* The command line first: its lists move into the file's on merge. */
	command_line(buf, size, &cli);
	first_line_as_argv(buf, size);
	words_as_durations(buf, size);

	f = size ? fmemopen(buf, size, "r") : NULL;
	if (f) {
		err[0] = 0;
		ret = pacer_conf_parse(f, FUZZ_PATH, &c, err, sizeof(err));
		fclose(f);
		if (ret) {
			if (ret != -EINVAL)
				fail("the file refused but not as invalid", err);
			check_file_message(err, lines);
		} else {
			check_global_values(&c);
			class_conf_init(&none, NULL);
			ret = class_conf_merge(c.cls, &none, err, sizeof(err));
			if (ret) {
				if (!strstr(err, FUZZ_PATH ":"))
					fail("a refusal of the file's lists does not name it", err);
				check_printable(err);
			} else {
				check_lists(c.cls);
				check_classes(c.cls, true, lines);
			}
			/* The command line's kinds over the file's, as load --config does. */
			ret = class_conf_merge(c.cls, &cli.cls, err, sizeof(err));
			if (!ret) {
				check_lists(c.cls);
				check_classes(c.cls, false, lines);
			} else {
				check_printable(err);
			}
		}
		pacer_conf_free(&c);
	}
	class_conf_free(&cli.cls);
	free(buf);
	return 0;
}
