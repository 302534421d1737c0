// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A class's match, its action's words and prefixes as operators write them (class_match.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "class_match.h"
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

const char class_match_words[] = "tcp, udp, icmp, icmpv6, dport N[-M], sport N[-M], flags syn, "
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

/*
 * A word too long for its buffer ends in "...", which no value parses:
 * cut silently, "dport 000...053" would read as a shorter number.
 */
static void mark_cut(char *w, size_t len)
{
	memcpy(w + len - 4, "...", 4);
}

/* The next whitespace-separated word of *s into w (NUL-terminated), or NULL at the end. */
const char *class_next_word(const char **s, char *w, size_t len)
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
		else
			n = len; /* cut */
		p++;
	}
	if (n == len)
		mark_cut(w, len);
	else
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
 * One match word (with its argument from *rest): 1 if it was one, 0 if w
 * is no match word, -EINVAL with why.
 */
int class_match_word(struct class_match_state *st, const char *w, const char **rest, char *why,
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
	if (!class_next_word(rest, arg, sizeof(arg))) {
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
int class_match_finish(struct class_match_state *st, char *why, size_t len)
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
	struct class_match_state st = { .m = m };
	const char *rest = text;
	char w[80];
	int r;

	memset(m, 0, sizeof(*m));
	while (class_next_word(&rest, w, sizeof(w))) {
		r = class_match_word(&st, w, &rest, why, len);
		if (r < 0)
			return r;
		if (!r) {
			snprintf(why, len, "unknown match word '%s' (match words: %s)", w, class_match_words);
			return -EINVAL;
		}
	}
	return class_match_finish(&st, why, len);
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
		snprintf(buf, len, "%s%s%s", class_action_name(c->action),
			 c->mode ? ", mode " : "", c->mode ? own_mode_name(c->mode) : "");
		return buf;
	}
	if (c->rate_n > 1)
		used = appendf(buf, len, 0, "rate %u/%s", c->rate_n,
			       format_duration(c->interval_ns, d, sizeof(d)));
	else
		used = appendf(buf, len, 0, "interval %s", format_duration(c->interval_ns, d, sizeof(d)));
	used = appendf(buf, len, used, ", key %s /%u /%u, policy %s", class_key_name(c->key_mode),
		       c->prefix4, c->prefix6, policy_name(c->policy));
	if (c->mode)
		used = appendf(buf, len, used, ", mode %s", own_mode_name(c->mode));
	(void)used;
	return buf;
}

