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

static const char *const action_names[PACER_ACTION_MAX] = { "pace", "pass", "drop" };
static const char *const key_names[PACER_KEY_MAX] = { "src", "src+dport", "src+dst" };

const char *class_action_name(uint32_t a)
{
	return a < PACER_ACTION_MAX ? action_names[a] : "?";
}

const char *class_key_name(uint32_t k)
{
	return k < PACER_KEY_MAX ? key_names[k] : "?";
}

static int lookup(const char *const *names, uint32_t n, const char *s, uint32_t *out)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s)) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

int parse_class_action(const char *s, uint32_t *out)
{
	return lookup(action_names, PACER_ACTION_MAX, s, out);
}

int parse_class_key(const char *s, uint32_t *out)
{
	return lookup(key_names, PACER_KEY_MAX, s, out);
}

/* ---- prefixes ---- */

int parse_prefix(const char *s, struct conf_prefix *p, char *why, size_t len)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char addr[INET6_ADDRSTRLEN + 1], shown[64];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	uint64_t plen;
	unsigned i, max;

	memset(p, 0, sizeof(*p));
	snprintf(shown, sizeof(shown), "%s", s);
	if (alen == 0 || alen >= sizeof(addr))
		goto bad;
	memcpy(addr, s, alen);
	addr[alen] = 0;
	if (inet_pton(AF_INET, addr, p->addr) == 1)
		p->family = 4;
	else if (inet_pton(AF_INET6, addr, p->addr) == 1)
		p->family = 6;
	else
		goto bad;
	max = p->family == 4 ? 32 : 128;
	plen = max;
	if (slash && parse_u64_range(slash + 1, 0, max, &plen)) {
		snprintf(why, len, "'%s': the prefix length must be 0..%u", shown, max);
		return -EINVAL;
	}
	p->len = (uint8_t)plen;
	for (i = p->len; i < max; i++)
		if (p->addr[i / 8] & (0x80 >> (i % 8))) {
			struct conf_prefix net = *p;
			char b[64];

			for (i = p->len; i < max; i++)
				net.addr[i / 8] &= (uint8_t)~(0x80 >> (i % 8));
			snprintf(why, len, "'%s' has bits set beyond its /%u (did you mean %s?)", shown,
				 p->len, format_prefix(&net, b, sizeof(b)));
			return -EINVAL;
		}
	/* An IPv4-mapped IPv6 prefix reaches the datapath as IPv4. */
	if (p->family == 6 && p->len >= 96 && !memcmp(p->addr, mapped, sizeof(mapped))) {
		memmove(p->addr, p->addr + 12, 4);
		memset(p->addr + 4, 0, 12);
		p->family = 4;
		p->len -= 96;
	}
	return 0;
bad:
	snprintf(why, len, "'%s' is not an IPv4 or IPv6 address or prefix (ADDR/LEN)", shown);
	return -EINVAL;
}

const char *format_prefix_bytes(unsigned family, unsigned plen, const uint8_t *addr, char *buf,
				size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, plen);
	return buf;
}

const char *format_prefix(const struct conf_prefix *p, char *buf, size_t len)
{
	return format_prefix_bytes(p->family, p->len, p->addr, buf, len);
}

/* A prefix as a match term's words and mask (pacer_class.h: struct pacer_src's words). */
static void prefix_to_match(const struct conf_prefix *p, __u64 *lo, __u64 *hi, __u64 *mlo,
			    __u64 *mhi)
{
	if (p->family == 4) {
		__u32 v;

		memcpy(&v, p->addr, 4);
		*lo = v;
		*hi = 0;
		*mlo = pacer_mask4(p->len);
		*mhi = 0;
	} else {
		memcpy(lo, p->addr, 8);
		memcpy(hi, p->addr + 8, 8);
		*mlo = pacer_mask6_lo(p->len);
		*mhi = pacer_mask6_hi(p->len);
	}
}

static void match_to_prefix(uint8_t family, __u64 lo, __u64 hi, __u64 mlo, __u64 mhi,
			    struct conf_prefix *p)
{
	memset(p, 0, sizeof(*p));
	p->family = family;
	if (family == 4) {
		__u32 v = (__u32)lo;

		memcpy(p->addr, &v, 4);
		p->len = (uint8_t)__builtin_popcount((__u32)mlo);
	} else {
		memcpy(p->addr, &lo, 8);
		memcpy(p->addr + 8, &hi, 8);
		p->len = (uint8_t)(__builtin_popcountll(mlo) + __builtin_popcountll(mhi));
	}
}

/* ---- match words ---- */

static const char match_words[] = "tcp, udp, icmp, icmpv6, dport N[-M], sport N[-M], flags syn, "
				  "src PREFIX, dst PREFIX, vlan N, any";

static int port_range(const char *s, __u16 *lo, __u16 *hi)
{
	char a[16];
	const char *dash = strchr(s, '-');
	uint64_t x, y;

	if (!dash)
		return parse_u64_range(s, 0, 65535, &x) ? -EINVAL : (*lo = *hi = (__u16)x, 0);
	if ((size_t)(dash - s) >= sizeof(a))
		return -EINVAL;
	memcpy(a, s, (size_t)(dash - s));
	a[dash - s] = 0;
	if (parse_u64_range(a, 0, 65535, &x) || parse_u64_range(dash + 1, 0, 65535, &y) || x > y)
		return -EINVAL;
	*lo = (__u16)x;
	*hi = (__u16)y;
	return 0;
}

/* The next whitespace-separated word of *s into w (NUL-terminated), or NULL at the end. */
static const char *next_word(const char **s, char *w, size_t len)
{
	const char *p = *s;
	size_t n = 0;

	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return NULL;
	while (*p && !isspace((unsigned char)*p)) {
		if (n + 1 < len)
			w[n++] = *p;
		p++;
	}
	w[n] = 0;
	*s = p;
	return w;
}

static const char *proto_word(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	}
	return "?";
}

/*
 * Match state while parsing: which words came, for "given twice" and the
 * checks at the end.
 */
struct match_state {
	struct pacer_match *m;
	bool any;
	int src_family, dst_family;
};

/*
 * One match word (with its argument from *rest): 1 if it was one, 0 if w
 * is no match word, -EINVAL with why.
 */
static int match_word(struct match_state *st, const char *w, const char **rest, char *why,
		      size_t len)
{
	struct pacer_match *m = st->m;
	char arg[80];
	uint64_t v;
	struct conf_prefix p;
	__u32 term = 0;

	if (!strcmp(w, "tcp") || !strcmp(w, "udp") || !strcmp(w, "icmp") || !strcmp(w, "icmpv6")) {
		if (m->terms & PACER_M_PROTO) {
			snprintf(why, len, "'%s' after '%s': a class matches one protocol", w,
				 proto_word(m->proto));
			return -EINVAL;
		}
		m->terms |= PACER_M_PROTO;
		m->proto = !strcmp(w, "tcp") ? IPPROTO_TCP : !strcmp(w, "udp") ? IPPROTO_UDP :
			   !strcmp(w, "icmp") ? IPPROTO_ICMP : IPPROTO_ICMPV6;
		return 1;
	}
	if (!strcmp(w, "any")) {
		st->any = true;
		return 1;
	}
	if (!strcmp(w, "dport"))
		term = PACER_M_DPORT;
	else if (!strcmp(w, "sport"))
		term = PACER_M_SPORT;
	else if (!strcmp(w, "flags"))
		term = PACER_M_SYN;
	else if (!strcmp(w, "src"))
		term = PACER_M_SRC;
	else if (!strcmp(w, "dst"))
		term = PACER_M_DST;
	else if (!strcmp(w, "vlan"))
		term = PACER_M_VLAN;
	else
		return 0;
	if (m->terms & term) {
		snprintf(why, len, "'%s' given twice", w);
		return -EINVAL;
	}
	if (!next_word(rest, arg, sizeof(arg))) {
		snprintf(why, len, "'%s' needs a value (%s)", w,
			 term == PACER_M_SYN ? "flags syn" :
			 term & (PACER_M_DPORT | PACER_M_SPORT) ? "a port N or a range N-M" :
			 term == PACER_M_VLAN ? "a VLAN id 0..4095" : "a prefix ADDR/LEN");
		return -EINVAL;
	}
	m->terms |= term;
	switch (term) {
	case PACER_M_DPORT:
	case PACER_M_SPORT:
		if (port_range(arg, term == PACER_M_DPORT ? &m->dport_lo : &m->sport_lo,
			       term == PACER_M_DPORT ? &m->dport_hi : &m->sport_hi)) {
			snprintf(why, len, "'%s %s': expected a port 0..65535 or a range N-M with N <= M",
				 w, arg);
			return -EINVAL;
		}
		return 1;
	case PACER_M_SYN:
		if (strcmp(arg, "syn")) {
			snprintf(why, len, "'flags %s': the flag a class matches is 'syn' (SYN set, ACK clear)",
				 arg);
			return -EINVAL;
		}
		return 1;
	case PACER_M_VLAN:
		if (parse_u64_range(arg, 0, 4095, &v)) {
			snprintf(why, len, "'vlan %s': expected a VLAN id 0..4095", arg);
			return -EINVAL;
		}
		m->vlan = (__u16)v;
		return 1;
	default:
		if (parse_prefix(arg, &p, why, len))
			return -EINVAL;
		if (term == PACER_M_SRC) {
			prefix_to_match(&p, &m->src_lo, &m->src_hi, &m->src_mask_lo, &m->src_mask_hi);
			st->src_family = p.family;
		} else {
			prefix_to_match(&p, &m->dst_lo, &m->dst_hi, &m->dst_mask_lo, &m->dst_mask_hi);
			st->dst_family = p.family;
		}
		return 1;
	}
}

/* The checks across a match's words: 0, or -EINVAL with why. */
static int match_finish(struct match_state *st, char *why, size_t len)
{
	struct pacer_match *m = st->m;
	int fam = 0;

	if (st->any && m->terms) {
		snprintf(why, len, "'any' matches every packet: it takes no other match word");
		return -EINVAL;
	}
	if (!st->any && !m->terms) {
		snprintf(why, len, "empty match (write 'any' for every IP packet)");
		return -EINVAL;
	}
	if ((m->terms & (PACER_M_DPORT | PACER_M_SPORT)) &&
	    (!(m->terms & PACER_M_PROTO) || (m->proto != IPPROTO_TCP && m->proto != IPPROTO_UDP))) {
		snprintf(why, len, "'%s' needs 'tcp' or 'udp'%s%s: only their packets have ports",
			 m->terms & PACER_M_DPORT ? "dport" : "sport",
			 m->terms & PACER_M_PROTO ? ", not " : "",
			 m->terms & PACER_M_PROTO ? proto_word(m->proto) : "");
		return -EINVAL;
	}
	if ((m->terms & PACER_M_SYN) && (!(m->terms & PACER_M_PROTO) || m->proto != IPPROTO_TCP)) {
		snprintf(why, len, "'flags syn' needs 'tcp'%s%s", m->terms & PACER_M_PROTO ? ", not " : "",
			 m->terms & PACER_M_PROTO ? proto_word(m->proto) : "");
		return -EINVAL;
	}
	if (st->src_family && st->dst_family && st->src_family != st->dst_family) {
		snprintf(why, len, "'src' is IPv%d and 'dst' IPv%d: no packet has both", st->src_family,
			 st->dst_family);
		return -EINVAL;
	}
	fam = st->src_family ? st->src_family : st->dst_family;
	if ((m->terms & PACER_M_PROTO) && (m->proto == IPPROTO_ICMP || m->proto == IPPROTO_ICMPV6)) {
		int pf = m->proto == IPPROTO_ICMP ? 4 : 6;

		if (fam && fam != pf) {
			snprintf(why, len, "'%s' with an IPv%d %s prefix: %s is IPv%d only (write '%s')",
				 proto_word(m->proto), fam, st->src_family ? "src" : "dst",
				 proto_word(m->proto), pf, pf == 4 ? "icmpv6" : "icmp");
			return -EINVAL;
		}
		fam = pf;
	}
	if (fam) {
		m->terms |= PACER_M_FAMILY;
		m->family = (__u8)fam;
	}
	return 0;
}

int class_match_parse(const char *text, struct pacer_match *m, char *why, size_t len)
{
	struct match_state st = { .m = m };
	const char *rest = text;
	char w[80];
	int r;

	memset(m, 0, sizeof(*m));
	while (next_word(&rest, w, sizeof(w))) {
		r = match_word(&st, w, &rest, why, len);
		if (r < 0)
			return r;
		if (!r) {
			snprintf(why, len, "unknown match word '%s' (match words: %s)", w, match_words);
			return -EINVAL;
		}
	}
	return match_finish(&st, why, len);
}

static size_t appendf(char *buf, size_t len, size_t used, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t appendf(char *buf, size_t len, size_t used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (used >= len)
		return used;
	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return n < 0 ? used : used + (size_t)n;
}

static size_t append_ports(char *buf, size_t len, size_t used, const char *w, __u16 lo, __u16 hi)
{
	if (lo == hi)
		return appendf(buf, len, used, "%s%s %u", used ? " " : "", w, lo);
	return appendf(buf, len, used, "%s%s %u-%u", used ? " " : "", w, lo, hi);
}

const char *class_match_format(const struct pacer_match *m, char *buf, size_t len)
{
	struct conf_prefix p;
	char b[64];
	size_t used = 0;

	buf[0] = 0;
	if (m->terms & PACER_M_PROTO)
		used = appendf(buf, len, used, "%s", proto_word(m->proto));
	if (m->terms & PACER_M_SYN)
		used = appendf(buf, len, used, "%sflags syn", used ? " " : "");
	if (m->terms & PACER_M_SPORT)
		used = append_ports(buf, len, used, "sport", m->sport_lo, m->sport_hi);
	if (m->terms & PACER_M_DPORT)
		used = append_ports(buf, len, used, "dport", m->dport_lo, m->dport_hi);
	if (m->terms & PACER_M_SRC) {
		match_to_prefix(m->family, m->src_lo, m->src_hi, m->src_mask_lo, m->src_mask_hi, &p);
		used = appendf(buf, len, used, "%ssrc %s", used ? " " : "", format_prefix(&p, b, sizeof(b)));
	}
	if (m->terms & PACER_M_DST) {
		match_to_prefix(m->family, m->dst_lo, m->dst_hi, m->dst_mask_lo, m->dst_mask_hi, &p);
		used = appendf(buf, len, used, "%sdst %s", used ? " " : "", format_prefix(&p, b, sizeof(b)));
	}
	if (m->terms & PACER_M_VLAN)
		used = appendf(buf, len, used, "%svlan %u", used ? " " : "", m->vlan);
	if (!used)
		snprintf(buf, len, "any");
	return buf;
}

const char *class_action_format(const struct pacer_class *c, char *buf, size_t len)
{
	char d[32];
	size_t used;

	if (c->action != PACER_ACTION_PACE) {
		snprintf(buf, len, "%s", class_action_name(c->action));
		return buf;
	}
	if (c->rate_n > 1)
		used = appendf(buf, len, 0, "rate %u/%s", c->rate_n,
			       format_duration(c->interval_ns, d, sizeof(d)));
	else
		used = appendf(buf, len, 0, "interval %s", format_duration(c->interval_ns, d, sizeof(d)));
	used = appendf(buf, len, used, ", key %s /%u /%u, policy %s", class_key_name(c->key_mode),
		       c->prefix4, c->prefix6, policy_name(c->policy));
	(void)used;
	return buf;
}

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

/* "FILE:LINE: " into err, then the message. */
static int file_err(const struct class_conf *cc, unsigned line, char *err, size_t errlen,
		    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int file_err(const struct class_conf *cc, unsigned line, char *err, size_t errlen,
		    const char *fmt, ...)
{
	size_t used = (size_t)snprintf(err, errlen, "%s:%u: ", cc->path ? cc->path : "?", line);
	va_list ap;

	if (used < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + used, errlen - used, fmt, ap);
		va_end(ap);
	}
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
			snprintf(why, len, "'rate %s': expected N/T with N from 1 to %d and T a positive duration (20/1s)",
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
			snprintf(why, len, "'interval %s': expected a positive duration (100ms, 1s)", value);
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
static const char class_keys[] = "match, rate, interval, policy, action, key, prefix4, prefix6";

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
	if (!next_word(&rest, w1, sizeof(w1))) {
		return file_err(cc, line, err, errlen, "empty section header '[]' (sections: [class NAME], [exempt], [deny])");
	}
	if (!strcmp(w1, "exempt") || !strcmp(w1, "deny")) {
		if (next_word(&rest, w2, sizeof(w2)))
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
	if (!next_word(&rest, w2, sizeof(w2)))
		return file_err(cc, line, err, errlen, "[class] needs a name: [class NAME]");
	if (next_word(&rest, w3, sizeof(w3)))
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
	return 0;
}

/* "P, P P,P": every prefix of text onto l (line: where it came from): 0, or -EINVAL with why. */
static int list_add_text(struct prefix_list *l, const char *text, unsigned line, char *why,
			 size_t len)
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
		if (n >= sizeof(w))
			n = sizeof(w) - 1;
		memcpy(w, s, n);
		w[n] = 0;
		s += strcspn(s, ", \t");
		if (parse_prefix(w, &p, why, len))
			return -EINVAL;
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
		ret = list_add_text(cc->section == CLASS_SEC_EXEMPT ? &cc->exempt : &cc->deny, value,
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
	    (!strcmp(key, "prefix6") && s->prefix6_set))
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
	struct match_state st = { 0 };
	char name[64], w[80], arg[80], why[384];
	const char *colon = strchr(text, ':'), *rest;
	struct class_spec *s = NULL;
	size_t n;
	int r;

	if (!strcmp(text, "none")) {
		cc->classes_given = true;
		return 0;
	}
	if (!colon) {
		snprintf(err, errlen, "--class '%s': expected 'NAME: MATCH... rate N/T' (e.g. 'dns: udp dport 53 rate 20/1s'), or 'none'",
			 text);
		return -EINVAL;
	}
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
	while (next_word(&rest, w, sizeof(w))) {
		if (!strcmp(w, "pace") || !strcmp(w, "pass") || !strcmp(w, "drop")) {
			r = class_attr(s, "action", w, 0, why, sizeof(why));
			if (r)
				goto bad;
			continue;
		}
		r = match_word(&st, w, &rest, why, sizeof(why));
		if (r < 0)
			goto bad;
		if (r)
			continue;
		if (!next_word(&rest, arg, sizeof(arg))) {
			if (class_attr(s, w, "", 0, why, sizeof(why)) > 0)
				snprintf(why, sizeof(why), "unknown word '%s' (match words: %s; then rate N/T or interval DUR, action, key, policy, prefix4, prefix6)",
					 w, match_words);
			else
				snprintf(why, sizeof(why), "'%s' needs a value", w);
			goto bad;
		}
		r = class_attr(s, w, arg, 0, why, sizeof(why));
		if (r > 0)
			snprintf(why, sizeof(why), "unknown word '%s' (match words: %s; then rate N/T or interval DUR, action, key, policy, prefix4, prefix6)",
				 w, match_words);
		if (r)
			goto bad;
	}
	if (match_finish(&st, why, sizeof(why)))
		goto bad;
	s->match_set = true;
	if (class_finish(s, why, sizeof(why)))
		goto bad;
	return 0;
bad:
	if (s)
		cc->n--; /* nothing half-added */
	snprintf(err, errlen, "--class '%s': %s", text, why);
	return -EINVAL;
}

int class_conf_add_list_cli(struct class_conf *cc, int deny, const char *text, char *err,
			    size_t errlen)
{
	struct prefix_list *l = deny ? &cc->deny : &cc->exempt;
	char why[256];

	l->given = true;
	if (!strcmp(text, "none"))
		return 0;
	if (list_add_text(l, text, 0, why, sizeof(why))) {
		snprintf(err, errlen, "--%s '%s': %s", deny ? "deny" : "exempt", text, why);
		return -EINVAL;
	}
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

int class_conf_merge(struct class_conf *file, const struct class_conf *cli_in, char *err,
		     size_t errlen)
{
	struct class_conf *cli = (struct class_conf *)cli_in;
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
	list_sort_unique(&file->exempt);
	list_sort_unique(&file->deny);
	for (fam = 4; fam <= 6; fam += 2) {
		size_t n = count_family(&file->exempt, fam) + count_family(&file->deny, fam);

		if (n > PACER_LIST_MAX_ENTRIES) {
			snprintf(err, errlen, "%zu IPv%d prefixes on the exempt and deny lists: at most %d per family",
				 n, fam, PACER_LIST_MAX_ENTRIES);
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
