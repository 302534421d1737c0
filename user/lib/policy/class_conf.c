// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Traffic classes and exempt/deny lists as operators write them (class_conf.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "class_conf.h"
#include "cli_values.h"
#include "pacer_abi.h"
#include "pacer_hash.h"
#include "pacer_classify.h"
#include "pacer_names.h"
#include "conf_text.h"
#include "pacer_rate.h"

/* ---- classes ---- */

void class_conf_init(struct class_conf *cc, const char *path)
{
	memset(cc, 0, sizeof(*cc));
	cc->path = path;
}

void class_conf_free(struct class_conf *cc)
{
	free(cc->exempt.p);
	free(cc->deny.p);
	memset(cc, 0, sizeof(*cc));
}

static bool valid_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n >= PACER_CLASS_NAME_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
			return false;
	return true;
}

const char *class_where(const struct class_conf *cc, const struct class_spec *s, char *buf,
			size_t len)
{
	if (s->line && cc->path)
		snprintf(buf, len, "%s:%u: class '%s'", cc->path, s->limit_line ? s->limit_line : s->line,
			 s->c.name);
	else
		snprintf(buf, len, "--class '%s'", s->text);
	return buf;
}

/*
 * "FILE:LINE: " into err, then the message, the file's words in it shown
 * as pacer_conf_shown() does (a word's UTF-8 may encode a terminal control).
 */
static int file_err(const struct class_conf *cc, unsigned line, char *err, size_t errlen,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int file_err(const struct class_conf *cc, unsigned line, char *err, size_t errlen,
		    const char *fmt, ...)
{
	size_t used = (size_t)snprintf(err, errlen, "%s:%u: ", cc->path ? cc->path : "?", line);
	char body[1024];
	va_list ap;

	if (used < errlen) {
		va_start(ap, fmt);
		vsnprintf(body, sizeof(body), fmt, ap);
		va_end(ap);
		pacer_conf_shown(body, err + used, errlen - used);
	}
	return -EINVAL;
}

/*
 * "--OPT 'TEXT': why" into err, TEXT and why shown as file_err() shows
 * them; a long TEXT (a list) cut to its start, so the reason fits.
 */
static int cli_err(const char *opt, const char *text, const char *why, char *err, size_t errlen)
{
	char t[4 * 160 + 1], w[4 * 384 + 1];

	pacer_conf_shown(text, t, sizeof(t));
	if (strlen(t) > 160)
		memcpy(t + 156, "...", 4);
	snprintf(err, errlen, "--%s '%s': %s", opt, t, pacer_conf_shown(why, w, sizeof(w)));
	return -EINVAL;
}

/* A new class named name, checked: 0, or -EINVAL with why. */
static int new_class(struct class_conf *cc, const char *name, struct class_spec **out, char *why,
		     size_t len)
{
	char shown[64];
	int i;

	if (!valid_name(name)) {
		snprintf(why, len, "bad class name '%s' (1 to %d of a-z, A-Z, 0-9, '_', '-')",
			 pacer_conf_shown(name, shown, sizeof(shown)), PACER_CLASS_NAME_LEN - 1);
		return -EINVAL;
	}
	for (i = 0; i < cc->n; i++)
		if (!strcmp(cc->cls[i].c.name, name)) {
			if (cc->cls[i].line)
				snprintf(why, len, "class '%s' is already defined on line %u", name,
					 cc->cls[i].line);
			else
				snprintf(why, len, "class '%s' is given twice", name);
			return -EINVAL;
		}
	if (cc->n >= PACER_MAX_CLASSES) {
		snprintf(why, len, "more than %d classes", PACER_MAX_CLASSES);
		return -EINVAL;
	}
	*out = &cc->cls[cc->n++];
	memset(*out, 0, sizeof(**out));
	snprintf((*out)->c.name, sizeof((*out)->c.name), "%s", name);
	cc->classes_given = true;
	return 0;
}

/* A class attribute word (rate, interval, ...) and its value: 0, or -EINVAL with why. */
static int class_attr(struct class_spec *s, const char *key, const char *value, unsigned line,
		      char *why, size_t len)
{
	uint64_t n, t;

	if (!strcmp(key, "rate")) {
		if (s->limit_set) {
			snprintf(why, len, "'rate' and 'interval' both set the class's limit: give one");
			return -EINVAL;
		}
		if (parse_count_per(value, PACER_RATE_MAX_N, &n, &t) || t > PACER_RATE_MAX_PERIOD_NS) {
			snprintf(why, len, "'rate %s': expected N/T with N from 1 to %d and T a positive duration up to 2^50 ns (20/1s)",
				 value, PACER_RATE_MAX_N);
			return -EINVAL;
		}
		s->c.rate_n = (__u32)n;
		s->c.interval_ns = t;
		s->limit_set = true;
		s->limit_line = line;
		return 0;
	}
	if (!strcmp(key, "interval")) {
		if (s->limit_set) {
			snprintf(why, len, "'rate' and 'interval' both set the class's limit: give one");
			return -EINVAL;
		}
		if (parse_duration_max(value, PACER_INTERVAL_MAX_NS, &t)) {
			char most[32];

			snprintf(why, len, "'interval %s': expected a positive duration of at most %s (100ms, 1s)",
				 value, format_duration(PACER_INTERVAL_MAX_NS, most, sizeof(most)));
			return -EINVAL;
		}
		s->c.rate_n = 1;
		s->c.interval_ns = t;
		s->limit_set = true;
		s->limit_line = line;
		return 0;
	}
	if (!strcmp(key, "policy")) {
		if (parse_policy(value, &s->c.policy)) {
			snprintf(why, len, "'policy %s': expected pace or quiet", value);
			return -EINVAL;
		}
		s->policy_set = true;
		return 0;
	}
	if (!strcmp(key, "action")) {
		if (parse_class_action(value, &s->c.action)) {
			snprintf(why, len, "'action %s': expected pace, pass or drop", value);
			return -EINVAL;
		}
		s->action_set = true;
		return 0;
	}
	if (!strcmp(key, "key")) {
		if (parse_class_key(value, &s->c.key_mode)) {
			snprintf(why, len, "'key %s': expected src, src+dport or src+dst", value);
			return -EINVAL;
		}
		s->key_set = true;
		return 0;
	}
	if (!strcmp(key, "mode")) {
		if (parse_own_mode(value, &s->c.mode)) {
			snprintf(why, len, "'mode %s': expected observe, enforce or global (as --mode)", value);
			return -EINVAL;
		}
		s->mode_set = true;
		return 0;
	}
	if (!strcmp(key, "prefix4") || !strcmp(key, "prefix6")) {
		bool v4 = key[6] == '4';

		if (parse_u64_range(value, 0, v4 ? 32 : 128, &n)) {
			snprintf(why, len, "'%s %s': expected 0..%d", key, value, v4 ? 32 : 128);
			return -EINVAL;
		}
		if (v4) {
			s->c.prefix4 = (__u32)n;
			s->prefix4_set = true;
		} else {
			s->c.prefix6 = (__u32)n;
			s->prefix6_set = true;
		}
		return 0;
	}
	return 1;
}

/* A class's own checks once all its words are in: 0, or -EINVAL with why. */
static int class_finish(struct class_spec *s, char *why, size_t len)
{
	if (!s->match_set) {
		snprintf(why, len, "class '%s' has no match (e.g. 'match = udp dport 53', or 'any')",
			 s->c.name);
		return -EINVAL;
	}
	if (!s->action_set)
		s->c.action = PACER_ACTION_PACE;
	if (s->c.action == PACER_ACTION_PASS && s->mode_set) {
		snprintf(why, len, "class '%s': action pass never drops, so it takes no mode", s->c.name);
		return -EINVAL;
	}
	if (s->c.action != PACER_ACTION_PACE) {
		if (s->limit_set || s->policy_set || s->key_set || s->prefix4_set || s->prefix6_set) {
			snprintf(why, len,
				 "class '%s': action %s takes no rate, interval, policy, key or prefix (they pace)",
				 s->c.name, class_action_name(s->c.action));
			return -EINVAL;
		}
		return 0;
	}
	if (!s->limit_set) {
		snprintf(why, len, "class '%s' paces but has no limit: give a rate (N/T) or an interval, or action pass or drop",
			 s->c.name);
		return -EINVAL;
	}
	return 0;
}

/* ---- the file ---- */

/* The keys a [class] section takes, for messages. */
static const char class_keys[] = "match, rate, interval, policy, action, key, prefix4, prefix6, mode";

static int finish_section(struct class_conf *cc, char *err, size_t errlen)
{
	char why[256];

	if (cc->section == CLASS_SEC_CLASS && class_finish(&cc->cls[cc->n - 1], why, sizeof(why)))
		return file_err(cc, cc->section_line, err, errlen, "%s", why);
	return 0;
}

int class_conf_section(struct class_conf *cc, const char *header, unsigned line, char *err,
		       size_t errlen)
{
	char w1[64], w2[64], w3[8], why[256], shown[96];
	const char *rest = header;
	struct class_spec *s;
	int ret = finish_section(cc, err, errlen);

	if (ret)
		return ret;
	if (!class_next_word(&rest, w1, sizeof(w1))) {
		return file_err(cc, line, err, errlen, "empty section header '[]' (sections: [class NAME], [exempt], [deny])");
	}
	if (!strcmp(w1, "exempt") || !strcmp(w1, "deny")) {
		if (class_next_word(&rest, w2, sizeof(w2)))
			return file_err(cc, line, err, errlen, "[%s] takes no name ('%s')", w1,
					pacer_conf_shown(w2, shown, sizeof(shown)));
		cc->section = w1[0] == 'e' ? CLASS_SEC_EXEMPT : CLASS_SEC_DENY;
		cc->section_line = line;
		(w1[0] == 'e' ? &cc->exempt : &cc->deny)->given = true;
		return 0;
	}
	if (strcmp(w1, "class"))
		return file_err(cc, line, err, errlen,
				"unknown section '[%s]' (sections: [class NAME], [exempt], [deny])",
				pacer_conf_shown(header, shown, sizeof(shown)));
	if (!class_next_word(&rest, w2, sizeof(w2)))
		return file_err(cc, line, err, errlen, "[class] needs a name: [class NAME]");
	if (class_next_word(&rest, w3, sizeof(w3)))
		return file_err(cc, line, err, errlen, "[class %s ...]: a class name is one word", w2);
	if (new_class(cc, w2, &s, why, sizeof(why)))
		return file_err(cc, line, err, errlen, "%s", why);
	s->line = line;
	cc->section = CLASS_SEC_CLASS;
	cc->section_line = line;
	return 0;
}

static int list_add(struct prefix_list *l, const struct conf_prefix *p)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct conf_prefix *np = realloc(l->p, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		l->p = np;
		l->cap = cap;
	}
	l->p[l->n++] = *p;
	l->n6 += p->family == 6;
	return 0;
}

/* Prefixes of a family written onto both lists of cc so far (repeats too). */
static size_t written(const struct class_conf *cc, int family)
{
	size_t n6 = cc->exempt.n6 + cc->deny.n6;

	return family == 6 ? n6 : cc->exempt.n + cc->deny.n - n6;
}

/*
 * "P, P P,P": every prefix of text onto cc's list l (line: where it came
 * from): 0, or -EINVAL with why.  Refused at the first prefix over the
 * lists' limit, so a million-line list costs no more than the limit's.
 */
static int list_add_text(struct class_conf *cc, struct prefix_list *l, const char *text,
			 unsigned line, char *why, size_t len)
{
	const char *s = text;
	struct conf_prefix p;
	char w[80];
	size_t n;

	for (;;) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			return 0;
		n = strcspn(s, ", \t");
		if (!n) {
			snprintf(why, len, "an empty item between commas");
			return -EINVAL;
		}
		if (n >= sizeof(w)) {
			snprintf(why, len, "'%.24s...': longer than any prefix (%zu characters, at most %zu)",
				 s, n, sizeof(w) - 1);
			return -EINVAL;
		}
		memcpy(w, s, n);
		w[n] = 0;
		s += strcspn(s, ", \t");
		if (parse_prefix(w, &p, why, len))
			return -EINVAL;
		if (written(cc, p.family) >= PACER_LIST_MAX_ENTRIES) {
			snprintf(why, len, "'%s': more than %d IPv%d prefixes on the exempt and deny lists (at most %d per family, both lists together)",
				 w, PACER_LIST_MAX_ENTRIES, p.family, PACER_LIST_MAX_ENTRIES);
			return -EINVAL;
		}
		p.line = line;
		if (list_add(l, &p)) {
			snprintf(why, len, "out of memory");
			return -ENOMEM;
		}
		while (isspace((unsigned char)*s))
			s++;
		if (*s == ',') {
			s++;
			while (isspace((unsigned char)*s))
				s++;
			if (!*s || *s == ',') {
				snprintf(why, len, "an empty item after a comma");
				return -EINVAL;
			}
		}
	}
}

int class_conf_key(struct class_conf *cc, const char *key, const char *value, unsigned line,
		   char *err, size_t errlen)
{
	char why[384], shown[64];
	struct class_spec *s;
	int ret;

	if (cc->section == CLASS_SEC_EXEMPT || cc->section == CLASS_SEC_DENY) {
		const char *sec = cc->section == CLASS_SEC_EXEMPT ? "exempt" : "deny";

		if (strcmp(key, "src"))
			return file_err(cc, line, err, errlen, "unknown key '%s' in [%s] (it takes 'src = PREFIX, ...')",
					pacer_conf_shown(key, shown, sizeof(shown)), sec);
		ret = list_add_text(cc, cc->section == CLASS_SEC_EXEMPT ? &cc->exempt : &cc->deny, value,
				    line, why, sizeof(why));
		return ret ? file_err(cc, line, err, errlen, "%s", why), ret : 0;
	}
	s = &cc->cls[cc->n - 1];
	if (!strcmp(key, "match")) {
		if (s->match_set)
			return file_err(cc, line, err, errlen, "'match' is already set for class '%s'", s->c.name);
		if (class_match_parse(value, &s->c.m, why, sizeof(why)))
			return file_err(cc, line, err, errlen, "%s", why);
		s->match_set = true;
		return 0;
	}
	if ((!strcmp(key, "policy") && s->policy_set) || (!strcmp(key, "action") && s->action_set) ||
	    (!strcmp(key, "key") && s->key_set) || (!strcmp(key, "prefix4") && s->prefix4_set) ||
	    (!strcmp(key, "prefix6") && s->prefix6_set) || (!strcmp(key, "mode") && s->mode_set))
		return file_err(cc, line, err, errlen, "'%s' is already set for class '%s'", key, s->c.name);
	ret = class_attr(s, key, value, line, why, sizeof(why));
	if (ret > 0)
		return file_err(cc, line, err, errlen,
				"unknown key '%s' in [class %s] (class keys: %s; global keys go before the first section)",
				pacer_conf_shown(key, shown, sizeof(shown)), s->c.name, class_keys);
	return ret ? file_err(cc, line, err, errlen, "%s", why) : 0;
}

int class_conf_finish(struct class_conf *cc, char *err, size_t errlen)
{
	int ret = finish_section(cc, err, errlen);

	cc->section = CLASS_SEC_NONE;
	return ret;
}

/* ---- the command line ---- */

int class_conf_add_cli(struct class_conf *cc, const char *text, char *err, size_t errlen)
{
	struct class_match_state st = { 0 };
	char name[64], w[80], arg[80], why[384];
	const char *colon = strchr(text, ':'), *rest;
	struct class_spec *s = NULL;
	size_t n;
	int r;

	if (!strcmp(text, "none")) {
		cc->classes_given = true;
		return 0;
	}
	if (!colon)
		return cli_err("class", text,
			       "expected 'NAME: MATCH... rate N/T' (e.g. 'dns: udp dport 53 rate 20/1s'), or 'none'",
			       err, errlen);
	n = (size_t)(colon - text);
	while (n && isspace((unsigned char)text[n - 1]))
		n--;
	rest = text;
	while (isspace((unsigned char)*rest) && n) {
		rest++;
		n--;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), rest);
	if (new_class(cc, name, &s, why, sizeof(why)))
		goto bad;
	snprintf(s->text, sizeof(s->text), "%s", text);
	st.m = &s->c.m;
	rest = colon + 1;
	while (class_next_word(&rest, w, sizeof(w))) {
		if (!strcmp(w, "pace") || !strcmp(w, "pass") || !strcmp(w, "drop")) {
			r = class_attr(s, "action", w, 0, why, sizeof(why));
			if (r)
				goto bad;
			continue;
		}
		if (!strcmp(w, "observe") || !strcmp(w, "enforce")) { /* 'mode observe', short */
			if (s->mode_set) {
				snprintf(why, sizeof(why), "the class's mode is given twice");
				goto bad;
			}
			r = class_attr(s, "mode", w, 0, why, sizeof(why));
			if (r)
				goto bad;
			continue;
		}
		r = class_match_word(&st, w, &rest, why, sizeof(why));
		if (r < 0)
			goto bad;
		if (r)
			continue;
		if (!class_next_word(&rest, arg, sizeof(arg))) {
			if (class_attr(s, w, "", 0, why, sizeof(why)) > 0)
				snprintf(why, sizeof(why), "unknown word '%s' (match words: %s; then rate N/T or interval DUR, action, key, policy, prefix4, prefix6, mode)",
					 w, class_match_words);
			else
				snprintf(why, sizeof(why), "'%s' needs a value", w);
			goto bad;
		}
		r = class_attr(s, w, arg, 0, why, sizeof(why));
		if (r > 0)
			snprintf(why, sizeof(why), "unknown word '%s' (match words: %s; then rate N/T or interval DUR, action, key, policy, prefix4, prefix6, mode)",
				 w, class_match_words);
		if (r)
			goto bad;
	}
	if (class_match_finish(&st, why, sizeof(why)))
		goto bad;
	s->match_set = true;
	if (class_finish(s, why, sizeof(why)))
		goto bad;
	return 0;
bad:
	if (s)
		cc->n--; /* nothing half-added */
	return cli_err("class", text, why, err, errlen);
}

int class_conf_add_list_cli(struct class_conf *cc, int deny, const char *text, char *err,
			    size_t errlen)
{
	struct prefix_list *l = deny ? &cc->deny : &cc->exempt;
	char why[256];

	l->given = true;
	if (!strcmp(text, "none"))
		return 0;
	if (list_add_text(cc, l, text, 0, why, sizeof(why)))
		return cli_err(deny ? "deny" : "exempt", text, why, err, errlen);
	return 0;
}

/* ---- across lists ---- */

static int prefix_cmp(const void *a, const void *b)
{
	const struct conf_prefix *x = a, *y = b;
	int d;

	if (x->family != y->family)
		return x->family - y->family;
	if (x->len != y->len)
		return x->len - y->len;
	d = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (d)
		return d;
	return (x->line > y->line) - (x->line < y->line);
}

static bool same_prefix(const struct conf_prefix *x, const struct conf_prefix *y)
{
	return x->family == y->family && x->len == y->len && !memcmp(x->addr, y->addr, 16);
}

/* Sort l and drop repeats of a prefix (the first one written stays). */
static void list_sort_unique(struct prefix_list *l)
{
	size_t i, o = 0;

	if (!l->n)
		return;
	qsort(l->p, l->n, sizeof(*l->p), prefix_cmp);
	for (i = 1; i < l->n; i++)
		if (!same_prefix(&l->p[o], &l->p[i]))
			l->p[++o] = l->p[i];
	l->n = o + 1;
	for (i = 0, l->n6 = 0; i < l->n; i++)
		l->n6 += l->p[i].family == 6;
}

static size_t count_family(const struct prefix_list *l, int family)
{
	size_t i, n = 0;

	for (i = 0; i < l->n; i++)
		n += l->p[i].family == family;
	return n;
}

static void list_move(struct prefix_list *to, struct prefix_list *from)
{
	free(to->p);
	*to = *from;
	memset(from, 0, sizeof(*from));
	to->given = true;
}

/* Where a prefix came from, for messages. */
static const char *prefix_where(const struct class_conf *cc, const struct conf_prefix *p,
				const char *opt, char *buf, size_t len)
{
	if (p->line && cc->path)
		snprintf(buf, len, "%s:%u", cc->path, p->line);
	else
		snprintf(buf, len, "--%s", opt);
	return buf;
}

/* Whether every packet b's terms fit also fits a's (pacer_classify.h's matching). */
static bool ports_cover(__u16 alo, __u16 ahi, __u16 blo, __u16 bhi)
{
	return alo <= blo && bhi <= ahi;
}

static bool prefix_covers(__u64 alo, __u64 ahi, __u64 amlo, __u64 amhi, __u64 blo, __u64 bhi,
			  __u64 bmlo, __u64 bmhi)
{
	return !(amlo & ~bmlo) && !(amhi & ~bmhi) && (blo & amlo) == alo && (bhi & amhi) == ahi;
}

static bool match_covers(const struct pacer_match *a, const struct pacer_match *b)
{
	__u32 ta = a->terms, tb = b->terms;

	if ((ta & PACER_M_PROTO) && (!(tb & PACER_M_PROTO) || a->proto != b->proto))
		return false;
	if ((ta & PACER_M_FAMILY) && (!(tb & PACER_M_FAMILY) || a->family != b->family))
		return false;
	if ((ta & PACER_M_DPORT) &&
	    (!(tb & PACER_M_DPORT) || !ports_cover(a->dport_lo, a->dport_hi, b->dport_lo, b->dport_hi)))
		return false;
	if ((ta & PACER_M_SPORT) &&
	    (!(tb & PACER_M_SPORT) || !ports_cover(a->sport_lo, a->sport_hi, b->sport_lo, b->sport_hi)))
		return false;
	if ((ta & PACER_M_SYN) && !(tb & PACER_M_SYN))
		return false;
	if ((ta & PACER_M_VLAN) && (!(tb & PACER_M_VLAN) || a->vlan != b->vlan))
		return false;
	if ((ta & PACER_M_SRC) &&
	    (!(tb & PACER_M_SRC) || !prefix_covers(a->src_lo, a->src_hi, a->src_mask_lo, a->src_mask_hi,
						    b->src_lo, b->src_hi, b->src_mask_lo, b->src_mask_hi)))
		return false;
	if ((ta & PACER_M_DST) &&
	    (!(tb & PACER_M_DST) || !prefix_covers(a->dst_lo, a->dst_hi, a->dst_mask_lo, a->dst_mask_hi,
						    b->dst_lo, b->dst_hi, b->dst_mask_lo, b->dst_mask_hi)))
		return false;
	return true;
}

/* Where a class's section or --class is ("FILE:LINE: class 'dns'"), or which class it is. */
static const char *class_at(const struct class_conf *cc, const struct class_spec *s, bool where,
			    char *buf, size_t len)
{
	char t[4 * 160 + 1];

	if (s->line && cc->path && where)
		snprintf(buf, len, "%s:%u: class '%s'", cc->path, s->line, s->c.name);
	else if (s->line && cc->path)
		snprintf(buf, len, "class '%s' (line %u)", s->c.name, s->line);
	else if (where)
		snprintf(buf, len, "--class '%s'", pacer_conf_shown(s->text, t, sizeof(t)));
	else
		snprintf(buf, len, "class '%s' (--class)", s->c.name);
	return buf;
}

/*
 * The first class that matches decides: a class every packet of which an
 * earlier one matches never decides anything (written after a broader
 * one, or twice with different actions).  Refused, naming both.
 */
static int check_shadowed(const struct class_conf *cc, char *err, size_t errlen)
{
	char a[256], b[256], m[160];
	int i, j;

	for (i = 1; i < cc->n; i++)
		for (j = 0; j < i; j++) {
			if (!match_covers(&cc->cls[j].c.m, &cc->cls[i].c.m))
				continue;
			snprintf(err, errlen, "%s never matches: %s comes first and matches every packet it would ('%s'): put the narrower class first",
				 class_at(cc, &cc->cls[i], true, b, sizeof(b)),
				 class_at(cc, &cc->cls[j], false, a, sizeof(a)),
				 class_match_format(&cc->cls[j].c.m, m, sizeof(m)));
			return -EINVAL;
		}
	return 0;
}

int class_conf_merge(struct class_conf *file, const struct class_conf *cli_in, char *err,
		     size_t errlen)
{
	struct class_conf *cli = (struct class_conf *)cli_in;
	/* Where each list comes from, for the limit's message. */
	const char *ex_from = cli->exempt.given ? "--exempt" : file->path ? file->path : "--exempt";
	const char *de_from = cli->deny.given ? "--deny" : file->path ? file->path : "--deny";
	char a[64], b[64], pb[64];
	size_t i, j;
	int fam;

	if (cli->classes_given) {
		memcpy(file->cls, cli->cls, sizeof(cli->cls));
		file->n = cli->n;
		file->classes_given = true;
	}
	if (cli->exempt.given)
		list_move(&file->exempt, &cli->exempt);
	if (cli->deny.given)
		list_move(&file->deny, &cli->deny);
	if (check_shadowed(file, err, errlen))
		return -EINVAL;
	list_sort_unique(&file->exempt);
	list_sort_unique(&file->deny);
	for (fam = 4; fam <= 6; fam += 2) {
		size_t n = count_family(&file->exempt, fam) + count_family(&file->deny, fam);

		if (n > PACER_LIST_MAX_ENTRIES) {
			snprintf(err, errlen, "the exempt list (%s) and the deny list (%s) hold %zu IPv%d prefixes together: at most %d per family",
				 ex_from, de_from, n, fam, PACER_LIST_MAX_ENTRIES);
			return -EINVAL;
		}
	}
	/* Both sorted: one merge pass finds a prefix on both. */
	for (i = 0, j = 0; i < file->exempt.n && j < file->deny.n;) {
		const struct conf_prefix *x = &file->exempt.p[i], *y = &file->deny.p[j];
		int d = x->family != y->family ? x->family - y->family :
			x->len != y->len ? x->len - y->len : memcmp(x->addr, y->addr, 16);

		if (!d) {
			prefix_where(file, y, "deny", b, sizeof(b));
			prefix_where(file, x, "exempt", a, sizeof(a));
			snprintf(err, errlen, "%s: %s is on the deny list and on the exempt list (%s): a source is exempt or denied, not both",
				 b, format_prefix(y, pb, sizeof(pb)), a);
			return -EINVAL;
		}
		if (d < 0)
			i++;
		else
			j++;
	}
	return 0;
}

void class_conf_default_prefixes(struct class_conf *cc, uint32_t prefix4, uint32_t prefix6)
{
	int i;

	for (i = 0; i < cc->n; i++) {
		if (!cc->cls[i].prefix4_set)
			cc->cls[i].c.prefix4 = prefix4;
		if (!cc->cls[i].prefix6_set)
			cc->cls[i].c.prefix6 = prefix6;
	}
}

/* ---- ids and slots ---- */

bool class_same_behaviour(const struct pacer_class *a, const struct pacer_class *b)
{
	return !memcmp(&a->m, &b->m, sizeof(a->m)) && a->action == b->action &&
	       a->key_mode == b->key_mode && a->prefix4 == b->prefix4 && a->prefix6 == b->prefix6 &&
	       a->policy == b->policy && a->thresh_ticks == b->thresh_ticks &&
	       a->burst_ticks == b->burst_ticks && a->rate_n == b->rate_n &&
	       a->interval_ns == b->interval_ns;
}

bool class_lists_same(const struct pacer_class *a, int na, const struct pacer_class *b, int nb)
{
	int i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (!class_same_behaviour(&a[i], &b[i]) || a[i].mode != b[i].mode ||
		    strncmp(a[i].name, b[i].name, PACER_CLASS_NAME_LEN))
			return false;
	return true;
}

static bool id_used(const struct pacer_class *want, int n, const struct pacer_class *cur, int ncur,
		    uint32_t id)
{
	int i;

	for (i = 0; i < n; i++)
		if (want[i].id == id)
			return true;
	for (i = 0; i < ncur; i++)
		if (cur[i].id == id)
			return true;
	return false;
}

void class_assign_ids(struct pacer_class *want, int n, const struct pacer_class *cur, int ncur,
		      uint32_t (*fresh_id)(void *), void *arg, bool reset[PACER_MAX_CLASSES])
{
	bool slot_kept[PACER_MAX_CLASSES] = { 0 }, cur_taken[PACER_MAX_CLASSES] = { 0 };
	bool slot_given[PACER_MAX_CLASSES] = { 0 };
	int i, j;
	uint32_t id;

	for (i = 0; i < PACER_MAX_CLASSES; i++)
		reset[i] = false;
	for (i = 0; i < n; i++)
		want[i].id = 0;
	/* Ids: each running class lends its id to one class that behaves as it does. */
	for (i = 0; i < n; i++)
		for (j = 0; j < ncur; j++)
			if (!cur_taken[j] && class_same_behaviour(&want[i], &cur[j])) {
				want[i].id = cur[j].id;
				cur_taken[j] = true;
				break;
			}
	for (i = 0; i < n; i++)
		if (!want[i].id) {
			do
				id = fresh_id(arg);
			while (!id || id_used(want, n, cur, ncur, id));
			want[i].id = id;
		}
	/* Slots: by name. */
	for (i = 0; i < n; i++) {
		want[i].stat_slot = PACER_MAX_CLASSES;
		for (j = 0; j < ncur; j++)
			if (!strncmp(want[i].name, cur[j].name, PACER_CLASS_NAME_LEN) &&
			    cur[j].stat_slot < PACER_MAX_CLASSES) {
				want[i].stat_slot = cur[j].stat_slot;
				slot_kept[cur[j].stat_slot] = true;
				break;
			}
	}
	for (i = 0; i < n; i++) {
		if (want[i].stat_slot < PACER_MAX_CLASSES)
			continue;
		for (j = 0; j < PACER_MAX_CLASSES && (slot_kept[j] || slot_given[j]); j++)
			;
		want[i].stat_slot = (__u32)j; /* n <= PACER_MAX_CLASSES: one is free */
		slot_given[j] = true;
		reset[j] = true;
	}
}

uint64_t class_key_hash_of(const __u64 key[2], const struct pacer_class *c,
			   const struct pacer_addr *src, uint16_t dport, const struct pacer_addr *dst,
			   char *buf, size_t len)
{
	struct pacer_pkt p;
	struct pacer_src masked;
	struct pacer_addr shown;
	__u32 prefix;
	__u64 h;
	char a[64], d[64];

	memset(&p, 0, sizeof(p));
	p.kind = src->family == 4 ? PACER_PKT_V4 : PACER_PKT_V6;
	pacer_src_of_bytes((__u32)src->family, src->bytes, &p.src);
	if (dst)
		pacer_src_of_bytes((__u32)dst->family, dst->bytes, &p.dst);
	p.dport = dport;
	h = pacer_class_key_hash(key, c, &p, &masked, &prefix);
	shown = *src;
	pacer_addr_mask(&shown, prefix);
	format_address(&shown, a, sizeof(a));
	if (c->key_mode == PACER_KEY_SRC_DPORT)
		snprintf(buf, len, "%s/%u dport %u", a, prefix, dport);
	else if (c->key_mode == PACER_KEY_SRC_DST && dst)
		snprintf(buf, len, "%s/%u dst %s", a, prefix, format_address(dst, d, sizeof(d)));
	else
		snprintf(buf, len, "%s/%u", a, prefix);
	return h;
}
