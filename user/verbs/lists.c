// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer deny|exempt add|del|list|flush: the exempt and deny lists
 * changed one prefix at a time, live, with optional timeouts (the way
 * nftables' dynamic set elements work).  Entries added here are `add`'s:
 * a reload (`set --config`) keeps them; the configuration's own entries
 * are changed only through the configuration.  Writers take the pacer's
 * writer lock (writer_lock.h); user/lib/policy/classes_map.c orders the writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "cli_values.h"
#include "class_conf.h"
#include "classes_map.h"
#include "json_writer.h"
#include "opts.h"
#include "writer_lock.h"
#include "variant_swap.h"

enum list_op { OP_ADD, OP_DEL, OP_LIST, OP_FLUSH };

struct list_args {
	const char *list;   /* "deny" or "exempt" */
	uint32_t verdict;
	enum list_op op;
	const char *ifname;
	struct pacer_prefix *p;
	size_t n, cap;
	uint32_t timeout_s, wait_s;
	bool json, missing_ok, read_stdin;
};

static void lists_usage(FILE *f, const char *list)
{
	fprintf(f,
		"Usage: xdp-pacer %s add IFNAME PREFIX... [--timeout DUR] [--wait SECS]\n"
		"       xdp-pacer %s del IFNAME PREFIX... [--missing-ok] [--wait SECS]\n"
		"       xdp-pacer %s list IFNAME [--json]\n"
		"       xdp-pacer %s flush IFNAME [--wait SECS]\n\n"
		"Change the %s list of the running pacer on IFNAME live, a prefix at a time:\n"
		"sources on the exempt list always pass, on the deny list are always dropped\n"
		"(the longest prefix holding a source decides). A PREFIX is 192.0.2.0/24,\n"
		"2001:db8::/32 or an address alone; several may be given, or separated by\n"
		"commas, and '-' reads them from standard input, one per line ('#' comments).\n\n"
		"Options:\n"
		"  --timeout DUR  add: the entries expire on their own after DUR, as in\n"
		"                 nftables: 30s, 5m, 1h, 1d, 1h30m (at most 49710d). Adding\n"
		"                 an entry add made again sets its timeout anew: the last\n"
		"                 add decides, so one without --timeout makes a timed entry\n"
		"                 permanent (as 'nft add element' does on Linux 6.12+)\n"
		"  --missing-ok   del: a prefix not on the list (or expired) is no error\n"
		"  --json         list: one JSON object\n"
		"  --wait SECS    wait this long for another xdp-pacer changing the same\n"
		"                 pacer to finish (0: fail at once if one is) (default: %d)\n"
		"  -h, --help     this text\n\n"
		"Entries added here are kept by a reload ('set --config', systemctl reload),\n"
		"which replaces only the configuration's entries ([%s] sections, --%s);\n"
		"del and flush change only entries added here: the configuration's stay\n"
		"until the configuration drops them. A prefix on the other list is refused.\n"
		"list shows both kinds, with the time left ('expires') of timed entries.\n"
		"Changes are atomic for packets: each packet meets the list before or after\n"
		"a change, also with several writers (docs/design.md, Live changes).\n",
		list, list, list, list, list, PACER_LOCK_WAIT_DEFAULT_S, list, list);
}

static int list_usage_error(const struct list_args *a, const char *fmt, const char *arg)
{
	char verb[32];

	pr_err(fmt, arg);
	snprintf(verb, sizeof(verb), "%s", a->list);
	usage_hint(verb);
	return 2;
}

static int push_prefix(struct list_args *a, const char *text, const char *where, char *why,
		       size_t len)
{
	struct conf_prefix cp;
	char w[256];

	if (parse_prefix(text, &cp, w, sizeof(w))) {
		snprintf(why, len, "%s%s", where, w);
		return -EINVAL;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct pacer_prefix *v = realloc(a->p, cap * sizeof(*v));

		if (!v) {
			snprintf(why, len, "out of memory for %zu prefixes", cap);
			return -ENOMEM;
		}
		a->p = v;
		a->cap = cap;
	}
	memset(&a->p[a->n], 0, sizeof(a->p[0]));
	a->p[a->n].family = cp.family;
	a->p[a->n].len = cp.len;
	memcpy(a->p[a->n].addr, cp.addr, sizeof(cp.addr));
	a->n++;
	return 0;
}

/* "a,b,c" of the command line. */
static int push_words(struct list_args *a, const char *arg, char *why, size_t len)
{
	char *copy = strdup(arg), *save = NULL, *w;
	int e = copy ? 0 : -ENOMEM;
	size_t before = a->n;

	for (w = copy ? strtok_r(copy, ",", &save) : NULL; w && !e; w = strtok_r(NULL, ",", &save))
		e = push_prefix(a, w, "", why, len);
	if (!e && a->n == before) { /* "" or "," */
		snprintf(why, len, "no prefix in '%s'", arg);
		e = -EINVAL;
	}
	free(copy);
	return e;
}

/* One prefix a line from standard input: blank lines and '#' comments skipped. */
static int read_stdin(struct list_args *a, char *why, size_t len)
{
	char *line = NULL, where[48], *s, *e;
	size_t cap = 0;
	unsigned lineno = 0;
	int ret = 0;

	while (!ret && getline(&line, &cap, stdin) >= 0) {
		lineno++;
		s = line;
		if ((e = strchr(s, '#')))
			*e = 0;
		while (*s == ' ' || *s == '\t')
			s++;
		e = s + strlen(s);
		while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			*--e = 0;
		if (!*s)
			continue;
		snprintf(where, sizeof(where), "standard input, line %u: ", lineno);
		ret = push_prefix(a, s, where, why, len);
	}
	if (!ret && ferror(stdin)) {
		snprintf(why, len, "cannot read standard input");
		ret = -EIO;
	}
	free(line);
	return ret;
}

/* An option's value: "--opt=v" or "--opt v". */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (!strcmp(argv[*i], name))
		return *i + 1 < argc ? argv[++*i] : NULL;
	return NULL;
}

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == 0 || arg[n] == '=');
}

static int parse_args(int argc, char **argv, struct list_args *a)
{
	static const char *const ops[] = { "add", "del", "list", "flush" };
	bool no_more_opts = false;
	char why[320];
	int i, npos = 0;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			lists_usage(stdout, a->list);
			return OPTS_HELP;
		}
	if (argc < 2)
		return list_usage_error(a, "%s needs add, del, list or flush", a->list);
	for (a->op = OP_ADD; a->op <= OP_FLUSH; a->op++)
		if (!strcmp(argv[1], ops[a->op]))
			break;
	if (a->op > OP_FLUSH)
		return list_usage_error(a, "unknown action '%s': expected add, del, list or flush",
					argv[1]);
	for (i = 2; i < argc; i++) {
		const char *arg = argv[i], *v;

		if (!no_more_opts && !strcmp(arg, "--")) {
			no_more_opts = true;
		} else if (!no_more_opts && is_opt(arg, "--timeout")) {
			if (a->op != OP_ADD)
				return list_usage_error(a, "--timeout is an option of add only (%s)", arg);
			v = opt_value(argc, argv, &i, "--timeout");
			if (!v)
				return list_usage_error(a, "%s needs a duration (30s, 5m, 1h, 1d, 1h30m)", arg);
			if (parse_timeout_s(v, &a->timeout_s)) {
				snprintf(why, sizeof(why), "expected a duration of 1s to 49710d as nftables writes one: 30s, 5m, 1h, 1d, 1h30m");
				return bad_value("--timeout", v, why);
			}
		} else if (!no_more_opts && is_opt(arg, "--wait")) {
			uint64_t w;

			if (a->op == OP_LIST)
				return list_usage_error(a, "%s: list takes no lock: no --wait", arg);
			v = opt_value(argc, argv, &i, "--wait");
			if (!v)
				return list_usage_error(a, "%s needs a number of seconds", arg);
			if (parse_u64_range(v, 0, PACER_LOCK_WAIT_MAX_S, &w))
				return bad_value("--wait", v, "expected whole seconds, 0 to 3600");
			a->wait_s = (uint32_t)w;
		} else if (!no_more_opts && !strcmp(arg, "--missing-ok") && a->op == OP_DEL) {
			a->missing_ok = true;
		} else if (!no_more_opts && !strcmp(arg, "--json") && a->op == OP_LIST) {
			a->json = true;
		} else if (!no_more_opts && arg[0] == '-' && arg[1]) {
			return list_usage_error(a, "unknown option '%s' for this action (see --help)", arg);
		} else if (npos++ == 0) {
			if (!ifname_valid(arg))
				return bad_value("IFNAME", arg, "expected an interface name");
			a->ifname = arg;
		} else if (a->op == OP_LIST || a->op == OP_FLUSH) {
			return list_usage_error(a, "unexpected argument '%s': list and flush take IFNAME only", arg);
		} else if (!strcmp(arg, "-")) {
			if (a->read_stdin)
				return list_usage_error(a, "'%s' (standard input) may be given once", arg);
			a->read_stdin = true;
			if (read_stdin(a, why, sizeof(why))) {
				pr_err("%s", why);
				return 2;
			}
		} else if (push_words(a, arg, why, sizeof(why))) {
			return bad_value("PREFIX", arg, why);
		}
	}
	if (!a->ifname)
		return list_usage_error(a, "%s needs IFNAME", ops[a->op]);
	if ((a->op == OP_ADD || a->op == OP_DEL) && !a->n && !a->read_stdin)
		return list_usage_error(a, "%s needs at least one PREFIX ('-': from standard input)",
					ops[a->op]);
	return 0;
}

static const char *origin_name(uint8_t origin)
{
	return origin == PACER_LIST_CONF ? "configured" : "added";
}

/* list's order: IPv4 first, by address, a shorter prefix before the longer ones it holds. */
static int by_address(const void *a, const void *b)
{
	const struct pacer_list_entry *x = a, *y = b;
	int c;

	if (x->p.family != y->p.family)
		return x->p.family < y->p.family ? -1 : 1;
	c = memcmp(x->p.addr, y->p.addr, sizeof(x->p.addr));
	if (c)
		return c;
	return x->p.len < y->p.len ? -1 : x->p.len > y->p.len;
}

static int do_list(struct list_args *a, const struct pacer_class_maps *m, bool may_collect)
{
	struct pacer_list_entry *v = NULL;
	struct pacer_list_counts c;
	struct json_writer w;
	uint64_t now;
	size_t n = 0, i, shown = 0;
	char pb[64], tb[32], eb[32];
	int e, l = a->verdict == PACER_LIST_EXEMPT ? 0 : 1;

	e = pacer_lists_dump(m, &v, &n);
	if (e) {
		pr_err("cannot read the lists of %s: %s", a->ifname, strerror(-e));
		return 1;
	}
	qsort(v, n, sizeof(*v), by_address);
	now = pacer_list_clock_ns();
	pacer_lists_count(v, n, now, &c);
	if (c.expired && may_collect) { /* nobody writes: collect them on the way */
		size_t collected = 0;

		pacer_lists_collect(m, &collected);
	}
	if (a->json) {
		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		jsonw_string_field(&w, "ifname", a->ifname);
		jsonw_string_field(&w, "list", a->list);
		jsonw_uint_field(&w, "configured", c.n[l][PACER_LIST_CONF]);
		jsonw_uint_field(&w, "added", c.n[l][PACER_LIST_ADDED]);
		jsonw_uint_field(&w, "timed", c.timed[l]);
		jsonw_name(&w, "entries");
		jsonw_start_array(&w);
	} else {
		printf("%s list of %s: %llu prefix%s (%llu configured, %llu added, %llu with a timeout)\n",
		       a->list, a->ifname,
		       (unsigned long long)(c.n[l][0] + c.n[l][1]), c.n[l][0] + c.n[l][1] == 1 ? "" : "es",
		       (unsigned long long)c.n[l][0], (unsigned long long)c.n[l][1],
		       (unsigned long long)c.timed[l]);
	}
	for (i = 0; i < n; i++) {
		uint64_t left;

		if (v[i].v.verdict != a->verdict || pacer_list_expired(&v[i].v, now))
			continue;
		shown++;
		pacer_prefix_str(&v[i].p, pb, sizeof(pb));
		left = v[i].v.expires_ns ? (v[i].v.expires_ns - now + 999999999ULL) / 1000000000ULL : 0;
		if (a->json) {
			jsonw_start_object(&w);
			jsonw_string_field(&w, "prefix", pb);
			jsonw_string_field(&w, "origin", origin_name(v[i].v.origin));
			if (v[i].v.expires_ns) {
				jsonw_uint_field(&w, "timeout_s", v[i].v.timeout_s);
				jsonw_uint_field(&w, "expires_s", left);
			}
			jsonw_end_object(&w);
		} else if (v[i].v.expires_ns) {
			printf("  %-43s %-10s timeout %s expires %s\n", pb, origin_name(v[i].v.origin),
			       format_timeout_s(v[i].v.timeout_s, tb, sizeof(tb)),
			       format_timeout_s(left, eb, sizeof(eb)));
		} else {
			printf("  %-43s %s\n", pb, origin_name(v[i].v.origin));
		}
	}
	free(v);
	if (a->json) {
		jsonw_end_array(&w);
		jsonw_end_object(&w);
		return jsonw_finish(&w) ? 1 : 0;
	}
	(void)shown;
	return 0;
}

static void report_change(const struct list_args *a, const struct pacer_list_change *r)
{
	char tb[32], extra[160] = "", untimed[240] = "";

	if (a->op == OP_ADD) {
		if (r->kept_conf)
			snprintf(extra, sizeof(extra), ", %zu already there by the configuration (left without a timeout)",
				 r->kept_conf);
		/* The last add decides: one without --timeout leaves no timeout (nft add element, Linux 6.12+). */
		if (r->untimed)
			snprintf(untimed, sizeof(untimed),
				 "; %zu had a timeout and %s now permanent: add without --timeout removes the timeout "
				 "(give --timeout to keep %s timed)",
				 r->untimed, r->untimed == 1 ? "is" : "are", r->untimed == 1 ? "it" : "them");
		pr_info("xdp-pacer: %s: %s: %zu added, %zu refreshed%s%s%s%s", a->ifname, a->list, r->added,
			r->refreshed, extra, a->timeout_s ? ", timeout " : "",
			a->timeout_s ? format_timeout_s(a->timeout_s, tb, sizeof(tb)) : "", untimed);
	} else if (a->op == OP_DEL) {
		pr_info("xdp-pacer: %s: %s: %zu removed%s", a->ifname, a->list, r->removed,
			r->missing ? (snprintf(extra, sizeof(extra), ", %zu not on the list", r->missing), extra)
				   : "");
	} else {
		pr_info("xdp-pacer: %s: %s: %zu added entr%s removed (the configuration's stay)",
			a->ifname, a->list, r->removed, r->removed == 1 ? "y" : "ies");
	}
}

static int lists_main(const char *list, uint32_t verdict, int argc, char **argv)
{
	struct list_args a = { .list = list, .verdict = verdict, .wait_s = PACER_LOCK_WAIT_DEFAULT_S };
	struct pacer_class_maps m;
	struct pacer_list_change r;
	struct pacer_handle h;
	char err[640];
	int ret, lock_fd = -1;

	ret = parse_args(argc, argv, &a);
	if (ret) {
		free(a.p);
		return ret == OPTS_HELP ? 0 : ret;
	}
	if (a.op == OP_LIST) {
		/* A reader: it takes the lock only to collect expired entries, when nobody writes. */
		lock_fd = pins_writer_lock_try(a.ifname);
	} else {
		lock_fd = pins_writer_lock(a.ifname, a.wait_s);
		if (lock_fd < 0) {
			free(a.p);
			return 1;
		}
	}
	if (pacer_handle_open(a.ifname, &h)) {
		pins_writer_unlock(lock_fd);
		free(a.p);
		return 1;
	}
	/* An entry on a program without the lists' stage: swap in one with it first. */
	if (a.op == OP_ADD &&
	    variant_ensure(&h, PACER_F_LISTS |
				       (PACER_MODE_OBSERVES(h.cfg->deny_mode, h.cfg->mode) ? PACER_F_OBSERVE : 0))) {
		pr_err("%s: %s add: nothing changed", a.ifname, list);
		ret = 1;
		goto out;
	}
	pacer_class_maps_of(&h, &m);
	switch (a.op) {
	case OP_ADD:
		ret = pacer_lists_add(&m, verdict, a.p, a.n, a.timeout_s, &r, err, sizeof(err));
		break;
	case OP_DEL:
		ret = pacer_lists_del(&m, verdict, a.p, a.n, a.missing_ok, &r, err, sizeof(err));
		break;
	case OP_FLUSH:
		ret = pacer_lists_flush(&m, verdict, &r, err, sizeof(err));
		break;
	case OP_LIST:
		ret = do_list(&a, &m, lock_fd >= 0);
		goto out;
	}
	if (ret) {
		pr_err("%s: %s %s: %s; nothing changed", a.ifname, list,
		       a.op == OP_ADD ? "add" : a.op == OP_DEL ? "del" : "flush", err);
		ret = 1;
	} else {
		report_change(&a, &r);
	}
	/* A list emptied (or an add refused after the swap): the stage goes when nothing uses it. */
	variant_settle(&h);
out:
	pacer_handle_close(&h);
	pins_writer_unlock(lock_fd);
	free(a.p);
	return ret;
}

int cmd_deny(int argc, char **argv)
{
	return lists_main("deny", PACER_LIST_DENY, argc, argv);
}

int cmd_exempt(int argc, char **argv)
{
	return lists_main("exempt", PACER_LIST_EXEMPT, argc, argv);
}
