// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Declarative command-line options (opts.h): parse, validate, default, usage. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "pins.h"

#define OPTS_MAX 96        /* entries of one verb, includes flattened */
#define OPTS_HELP_COL 24   /* where the help text starts in the usage */
#define OPT_VAL_BASE 256   /* getopt_long values of the table's entries */

/* An entry with the offset of the struct its fields are relative to. */
struct flat_opt {
	const struct opt_spec *s;
	size_t base;
};

static int flatten(const struct opt_spec *t, size_t base, struct flat_opt *out, int n)
{
	for (; t->type != OPT_END; t++) {
		if (t->type == OPT_INCLUDE) {
			n = flatten(t->sub, base + t->off, out, n);
		} else if (t->type != OPT_SECTION && n < OPTS_MAX) {
			out[n].s = t;
			out[n++].base = base;
		}
	}
	return n;
}

const struct opt_spec *opts_find(const struct opt_spec *t, const char *name, size_t *base)
{
	struct flat_opt f[OPTS_MAX];
	int i, n = flatten(t, 0, f, 0);

	for (i = 0; i < n; i++) {
		if (!(f[i].s->flags & OPT_POSITIONAL) && !strcmp(f[i].s->name, name)) {
			if (base)
				*base = f[i].base;
			return f[i].s;
		}
	}
	return NULL;
}

int parse_decimal(const char *s, double *out)
{
	char *end;

	if (!*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno || !isfinite(*out))
		return -ERANGE;
	return 0;
}

int parse_sampling(const char *s, uint64_t *thresh)
{
	uint64_t n;

	if (!strcmp(s, "off")) {
		*thresh = 0;
		return 0;
	}
	if (parse_one_in(s, &n))
		return -EINVAL;
	*thresh = sample_thresh_one_in(n);
	return 0;
}

/* An enum's names joined: "a|b|c", or "a, b or c"; from .choices or from .arg's "a|b|c". */
static void enum_text(const struct opt_spec *s, const char *sep, const char *last, char *buf,
		      size_t len)
{
	const char *names[16], *p = s->arg;
	char words[128], *save = NULL;
	size_t used = 0;
	int i, n = 0;

	if (s->choices) {
		for (; n < 16 && s->choices[n].name; n++)
			names[n] = s->choices[n].name;
	} else {
		snprintf(words, sizeof(words), "%s", p ? p : "");
		for (p = strtok_r(words, "|", &save); p && n < 16; p = strtok_r(NULL, "|", &save))
			names[n++] = p;
	}
	buf[0] = 0;
	for (i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 !i ? "" : i + 1 < n ? sep : last, names[i]);
}

/* What a valid value looks like, for the error message. */
static void expected(const struct opt_spec *s, char *why, size_t len)
{
	const char *off = s->flags & OPT_OFF ? ", or off" : "";
	char d[32], list[160];

	if (s->why) {
		snprintf(why, len, "%s", s->why);
		return;
	}
	switch (s->type) {
	case OPT_U32:
	case OPT_U64:
		snprintf(why, len, "expected %s from %llu to %llu%s",
			 s->flags & OPT_POW2 ? "a power of two" : "an integer",
			 (unsigned long long)s->min, (unsigned long long)s->max, off);
		break;
	case OPT_DURATION:
		if (s->max)
			snprintf(why, len, "expected a positive duration of at most %s (ns, us, ms or s, e.g. 250ms, 1.5s)%s",
				 format_duration(s->max, d, sizeof(d)), off);
		else
			snprintf(why, len, "expected a positive duration (ns, us, ms or s, e.g. 250ms, 1.5s)%s",
				 off);
		break;
	case OPT_DECIMAL:
		snprintf(why, len, "expected a number in %c%g, %g%c", s->flags & OPT_MIN_OPEN ? '(' : '[',
			 s->dmin, s->dmax, s->flags & OPT_MAX_OPEN ? ')' : ']');
		break;
	case OPT_ENUM:
		enum_text(s, ", ", " or ", list, sizeof(list));
		snprintf(why, len, "expected %s", list);
		break;
	case OPT_IFNAME:
		snprintf(why, len, "an interface name has 1 to 15 characters, none of them '/', ':' or white space");
		break;
	case OPT_ADDRESS:
		snprintf(why, len, "expected an IPv4 or IPv6 address");
		break;
	case OPT_SAMPLING:
		snprintf(why, len, "expected 1/N with N from 1 to 4294967296, or off");
		break;
	default:
		snprintf(why, len, "expected a non-empty value");
		break;
	}
}

static int parse_integer(const struct opt_spec *s, const char *arg, void *field)
{
	uint64_t v;

	if (parse_u64_range(arg, s->min, s->max, &v) || ((s->flags & OPT_POW2) && (v & (v - 1))))
		return -EINVAL;
	if (s->type == OPT_U32)
		*(uint32_t *)field = (uint32_t)v;
	else
		*(uint64_t *)field = v;
	return 0;
}

static int parse_enum(const struct opt_spec *s, const char *arg, uint32_t *field)
{
	const struct opt_choice *c;

	if (!s->choices)
		return s->lookup(arg, field);
	for (c = s->choices; c->name; c++) {
		if (!strcmp(c->name, arg)) {
			*field = c->value;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_decimal_in(const struct opt_spec *s, const char *arg, double *field)
{
	double v;

	if (parse_decimal(arg, &v))
		return -EINVAL;
	if (v < s->dmin || v > s->dmax || ((s->flags & OPT_MIN_OPEN) && v == s->dmin) ||
	    ((s->flags & OPT_MAX_OPEN) && v == s->dmax))
		return -ERANGE;
	*field = v;
	return 0;
}

static int parse_typed(const struct opt_spec *s, const char *arg, void *field, char *why,
		       size_t len)
{
	struct opt_address *a = field;

	switch (s->type) {
	case OPT_BOOL:
		*(bool *)field = true;
		return 0;
	case OPT_U32:
	case OPT_U64:
		return parse_integer(s, arg, field);
	case OPT_DURATION:
		return parse_duration_max(arg, s->max ? s->max : UINT64_MAX, field);
	case OPT_DECIMAL:
		return parse_decimal_in(s, arg, field);
	case OPT_ENUM:
		return parse_enum(s, arg, field);
	case OPT_IFNAME:
		if (!ifname_valid(arg))
			return -EINVAL;
		/* fall through */
	case OPT_STRING:
		*(const char **)field = arg;
		return *arg ? 0 : -EINVAL;
	case OPT_ADDRESS:
		a->text = arg;
		return parse_address(arg, &a->addr);
	case OPT_SAMPLING:
		return parse_sampling(arg, field);
	case OPT_CUSTOM:
		return s->parse(s, arg, field, why, len);
	default:
		return -EINVAL;
	}
}

static void name_of(const struct opt_spec *s, char *buf, size_t len)
{
	snprintf(buf, len, s->flags & OPT_POSITIONAL ? "%s" : "--%s", s->name);
}

int opts_parse_value(const struct opt_spec *s, const char *arg, void *opts, struct opt_error *e)
{
	void *field = (char *)opts + s->off;

	e->why[0] = 0;
	if ((s->flags & OPT_OFF) && !strcmp(arg, "off")) {
		if (s->type == OPT_U32)
			*(uint32_t *)field = 0;
		else
			*(uint64_t *)field = 0;
	} else if (parse_typed(s, arg, field, e->why, sizeof(e->why))) {
		name_of(s, e->opt, sizeof(e->opt));
		e->value = arg;
		if (!e->why[0])
			expected(s, e->why, sizeof(e->why));
		snprintf(e->msg, sizeof(e->msg), "invalid value '%s' for %s: %s", arg, e->opt, e->why);
		e->hint = false;
		return 2;
	}
	if (s->given)
		*((bool *)opts + s->given - 1) = true;
	return 0;
}

static int fail(struct opt_error *e, bool hint, const char *fmt, const char *a, const char *b)
{
	e->opt[0] = 0;
	e->value = NULL;
	e->why[0] = 0;
	snprintf(e->msg, sizeof(e->msg), fmt, a, b);
	e->hint = hint;
	return 2;
}

static int apply_defaults(const struct flat_opt *f, int n, void *opts, struct opt_error *e)
{
	struct opt_spec quiet;
	int i;

	for (i = 0; i < n; i++) {
		if (!f[i].s->dflt)
			continue;
		quiet = *f[i].s;
		quiet.given = 0; /* a default is not "given" */
		if (opts_parse_value(&quiet, quiet.dflt, (char *)opts + f[i].base, e))
			return 2;
	}
	return 0;
}

/* getopt_long's tables for the options (not the positionals). */
static void getopt_tables(const struct flat_opt *f, int n, struct option *lo, char *so)
{
	int i, k = 0;
	size_t sl = 0;

	so[sl++] = ':'; /* a missing value returns ':' */
	so[sl++] = 'h';
	for (i = 0; i < n; i++) {
		const struct opt_spec *s = f[i].s;

		if (s->flags & OPT_POSITIONAL)
			continue;
		lo[k++] = (struct option){ s->name, s->type == OPT_BOOL ? no_argument : required_argument,
					   NULL, OPT_VAL_BASE + i };
		if (s->short_name) {
			so[sl++] = s->short_name;
			if (s->type != OPT_BOOL)
				so[sl++] = ':';
		}
	}
	lo[k++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[k] = (struct option){ NULL, 0, NULL, 0 };
	so[sl] = 0;
}

static int short_index(const struct flat_opt *f, int n, int c)
{
	int i;

	for (i = 0; i < n; i++)
		if (f[i].s->short_name == c && !(f[i].s->flags & OPT_POSITIONAL))
			return i;
	return -1;
}

static int bad_option(int argc, char **argv, struct opt_error *e, int c)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
	char shortopt[3] = { '-', (char)optopt, 0 };
	bool is_short = optopt > 0 && optopt < OPT_VAL_BASE && optopt != 'h';

	return fail(e, true, c == ':' ? "option '%s' needs a value%s" : "unknown option '%s'%s",
		    is_short ? shortopt : arg, "");
}

static int parse_options(const struct opt_verb *v, const struct flat_opt *f, int n, int argc,
			 char **argv, void *opts, FILE *help_out, struct opt_error *e)
{
	struct option lo[OPTS_MAX + 2];
	char so[2 * OPTS_MAX + 3];
	int c, i;

	getopt_tables(f, n, lo, so);
	opterr = 0;
	optind = 0; /* glibc: start over, also after an earlier verb's parse */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			opts_usage(v, help_out);
			return OPTS_HELP;
		}
		i = c >= OPT_VAL_BASE ? c - OPT_VAL_BASE : short_index(f, n, c);
		if (c == '?' || c == ':' || i < 0)
			return bad_option(argc, argv, e, c);
		if (opts_parse_value(f[i].s, optarg, (char *)opts + f[i].base, e))
			return 2;
	}
	return 0;
}

static bool is_given(const struct flat_opt *f, const void *opts)
{
	return *((const bool *)opts + f->base + f->s->given - 1);
}

static int check_required(const struct opt_verb *v, const struct flat_opt *f, int n,
			  const void *opts, struct opt_error *e)
{
	char what[96];
	int i;

	for (i = 0; i < n; i++) {
		const struct opt_spec *s = f[i].s;

		if (!(s->flags & OPT_REQUIRED) || (s->given && is_given(&f[i], opts)))
			continue;
		snprintf(what, sizeof(what), "--%s %s", s->name, s->arg ? s->arg : "");
		return fail(e, true, "%s needs %s", v->name, what);
	}
	return 0;
}

static int parse_positionals(const struct opt_verb *v, const struct flat_opt *f, int n, int argc,
			     char **argv, void *opts, struct opt_error *e)
{
	int i, at = optind, want = 0, have = argc - optind;

	for (i = 0; i < n; i++)
		want += (f[i].s->flags & (OPT_POSITIONAL | OPT_OPTIONAL)) == OPT_POSITIONAL;
	if (have < want)
		return fail(e, true, "%s needs %s", v->name, v->args ? v->args : "more arguments");
	for (i = 0; i < n && at < argc; i++) {
		if (!(f[i].s->flags & OPT_POSITIONAL))
			continue;
		if (opts_parse_value(f[i].s, argv[at++], (char *)opts + f[i].base, e))
			return 2;
	}
	if (at < argc)
		return fail(e, true, "unexpected argument '%s'%s", argv[at], "");
	return 0;
}

int opts_parse(const struct opt_verb *v, int argc, char **argv, void *opts, FILE *help_out,
	       struct opt_error *e)
{
	struct flat_opt f[OPTS_MAX];
	int n = flatten(v->opts, 0, f, 0), err;

	err = apply_defaults(f, n, opts, e);
	if (!err)
		err = parse_options(v, f, n, argc, argv, opts, help_out, e);
	if (!err)
		err = check_required(v, f, n, opts, e);
	if (!err)
		err = parse_positionals(v, f, n, argc, argv, opts, e);
	return err;
}

/* "  -o, --output FILE" and its help, the help's lines aligned. */
static void usage_entry(const struct opt_spec *s, bool dflt, FILE *f)
{
	char left[96], list[96], sh[8] = "";
	const char *arg = s->arg ? s->arg : "VALUE", *h = s->help ? s->help : "", *nl;
	bool flag = s->type == OPT_BOOL, pos = s->flags & OPT_POSITIONAL;
	int w;

	if (!s->arg && s->type == OPT_ENUM) {
		enum_text(s, "|", "|", list, sizeof(list));
		arg = list;
	}
	if (s->short_name)
		snprintf(sh, sizeof(sh), "-%c, ", s->short_name);
	w = snprintf(left, sizeof(left), "  %s%s%s%s%s", sh, pos ? "" : "--", s->name,
		     flag || pos ? "" : " ", flag || pos ? "" : arg);
	fprintf(f, "%-*s%s", OPTS_HELP_COL - 1, left, w >= OPTS_HELP_COL - 1 ? "  " : " ");
	while ((nl = strchr(h, '\n'))) {
		fprintf(f, "%.*s\n%*s", (int)(nl - h), h, OPTS_HELP_COL, "");
		h = nl + 1;
	}
	fputs(h, f);
	if (dflt && s->dflt)
		fprintf(f, " (default: %s)", s->dflt);
	fputc('\n', f);
}

static void usage_table(const struct opt_spec *t, bool dflt, FILE *f)
{
	for (; t->type != OPT_END; t++) {
		if (t->type == OPT_INCLUDE)
			usage_table(t->sub, dflt, f);
		else if (t->type == OPT_SECTION)
			fprintf(f, "\n%s%s", t->help, t->help[0] ? "\n" : "");
		else if (!(t->flags & OPT_HIDDEN) && (!(t->flags & OPT_POSITIONAL) || t->help))
			usage_entry(t, dflt, f);
	}
}

void opts_usage(const struct opt_verb *v, FILE *f)
{
	if (v->program)
		fprintf(f, "Usage: %s %s\n\n", v->program, v->synopsis);
	else
		fprintf(f, "Usage: xdp-pacer %s %s\n\n", v->name, v->synopsis);
	fputs(v->intro ? v->intro : "", f);
	usage_table(v->opts, !v->hide_defaults, f);
	fprintf(f, "%-*s%s\n", OPTS_HELP_COL, "  -h, --help", "this text");
	if (v->epilog)
		fprintf(f, "\n%s", v->epilog);
}
