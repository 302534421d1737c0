// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic classes as operators write them (user/lib/policy/class_conf.c): the
 * config file's sections and every kind of mistake in them, each named by
 * file and line; the command line's --class/--exempt/--deny; the tick a
 * load picks for several limits (ticks.c) and the errors when none fits;
 * ids and stat slots across a reload.
 */
#define _GNU_SOURCE /* fmemopen */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "class_conf.h"
#include "pacer_conf.h"
#include "pacer_hash.h"
#include "pacer_classify.h"
#include "pacer_pkt.h"
#include "ticks.h"

static int parse_text(const char *text, struct pacer_conf *c, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	err[0] = 0;
	ret = pacer_conf_parse(f, "t.conf", c, err, len);
	fclose(f);
	return ret;
}

/* The issue's example file. */
static const char issue_conf[] =
	"interval = 1s            # global keys as today\n"
	"backend = table\n"
	"\n"
	"[class dns]\n"
	"match = udp dport 53\n"
	"rate = 20/1s\n"
	"\n"
	"[class syn]\n"
	"match = tcp flags syn\n"
	"interval = 100ms\n"
	"key = src+dport\n"
	"\n"
	"[exempt]\n"
	"src = 192.0.2.0/24, 2001:db8::/32\n"
	"\n"
	"[deny]\n"
	"src = 203.0.113.0/24\n";

START_TEST(test_issue_config)
{
	struct pacer_conf c;
	struct class_conf none;
	char err[512], buf[128];
	const struct class_spec *dns, *syn;

	ck_assert_int_eq(parse_text(issue_conf, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.n, 2);
	ck_assert_str_eq(pacer_conf_get(&c, "backend")->value, "table");
	ck_assert_int_eq(c.cls->n, 2);
	dns = &c.cls->cls[0];
	syn = &c.cls->cls[1];
	ck_assert_str_eq(dns->c.name, "dns");
	ck_assert_uint_eq(dns->line, 4);
	ck_assert_uint_eq(dns->c.m.terms, PACER_M_PROTO | PACER_M_DPORT);
	ck_assert_uint_eq(dns->c.m.proto, IPPROTO_UDP);
	ck_assert_uint_eq(dns->c.m.dport_lo, 53);
	ck_assert_uint_eq(dns->c.m.dport_hi, 53);
	ck_assert_uint_eq(dns->c.rate_n, 20);
	ck_assert_uint_eq(dns->c.interval_ns, 1000000000ULL);
	ck_assert_uint_eq(dns->c.action, PACER_ACTION_PACE);
	ck_assert_uint_eq(dns->c.key_mode, PACER_KEY_SRC);
	ck_assert_uint_eq(syn->c.m.terms, PACER_M_PROTO | PACER_M_SYN);
	ck_assert_uint_eq(syn->c.rate_n, 1);
	ck_assert_uint_eq(syn->c.interval_ns, 100000000ULL);
	ck_assert_uint_eq(syn->c.key_mode, PACER_KEY_SRC_DPORT);
	ck_assert_uint_eq(syn->limit_line, 10);
	ck_assert_int_eq((int)c.cls->exempt.n, 2);
	ck_assert_int_eq((int)c.cls->deny.n, 1);
	class_conf_init(&none, NULL);
	ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), 0);
	/* Sorted: IPv4 first. */
	ck_assert_str_eq(format_prefix(&c.cls->exempt.p[0], buf, sizeof(buf)), "192.0.2.0/24");
	ck_assert_str_eq(format_prefix(&c.cls->exempt.p[1], buf, sizeof(buf)), "2001:db8::/32");
	ck_assert_uint_eq(c.cls->exempt.p[1].line, 14);
	ck_assert_str_eq(format_prefix(&c.cls->deny.p[0], buf, sizeof(buf)), "203.0.113.0/24");
	ck_assert_str_eq(class_match_format(&syn->c.m, buf, sizeof(buf)), "tcp flags syn");
	pacer_conf_free(&c);
}
END_TEST

/* A file without sections parses as before: no classes, no lists given. */
START_TEST(test_no_sections)
{
	struct pacer_conf c;
	char err[512];

	ck_assert_int_eq(parse_text("interval = 1s\n", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.cls->n, 0);
	ck_assert(!c.cls->classes_given);
	ck_assert(!c.cls->exempt.given);
	ck_assert(!c.cls->deny.given);
	pacer_conf_free(&c);
}
END_TEST

/* Every kind of mistake names the file, the line and the bad word. */
static const struct {
	const char *text, *want;
} bad_files[] = {
	{ "[class dns]\nmatch = udp dprot 53\nrate = 1/1s\n",
	  "t.conf:2: unknown match word 'dprot' (match words: tcp, udp," },
	{ "[class dns]\nmatch = dport 53\nrate = 1/1s\n",
	  "t.conf:2: 'dport' needs 'tcp' or 'udp': only their packets have ports" },
	{ "[class a]\nmatch = icmp sport 1\nrate = 1/1s\n",
	  "t.conf:2: 'sport' needs 'tcp' or 'udp', not icmp" },
	{ "[class a]\nmatch = udp flags syn\ninterval = 1s\n", "t.conf:2: 'flags syn' needs 'tcp', not udp" },
	{ "[class a]\nmatch = tcp flags ack\ninterval = 1s\n", "t.conf:2: 'flags ack': the flag a class matches is 'syn'" },
	{ "[class a]\nmatch = icmp src 2001:db8::/32\ninterval = 1s\n",
	  "t.conf:2: 'icmp' with an IPv6 src prefix: icmp is IPv4 only (write 'icmpv6')" },
	{ "[class a]\nmatch = icmpv6 dst 192.0.2.0/24\ninterval = 1s\n",
	  "t.conf:2: 'icmpv6' with an IPv4 dst prefix" },
	{ "[class a]\nmatch = src 192.0.2.0/24 dst 2001:db8::/32\ninterval = 1s\n",
	  "t.conf:2: 'src' is IPv4 and 'dst' IPv6: no packet has both" },
	{ "[class a]\nmatch = tcp udp\ninterval = 1s\n", "t.conf:2: 'udp' after 'tcp': a class matches one protocol" },
	{ "[class a]\nmatch = udp dport 53 dport 54\ninterval = 1s\n", "t.conf:2: 'dport' given twice" },
	{ "[class a]\nmatch = udp dport 70000\ninterval = 1s\n", "t.conf:2: 'dport 70000': expected a port 0..65535" },
	{ "[class a]\nmatch = udp dport 60-50\ninterval = 1s\n", "t.conf:2: 'dport 60-50': expected a port" },
	{ "[class a]\nmatch = udp dport 65536\ninterval = 1s\n", "t.conf:2: 'dport 65536': expected a port 0..65535" },
	{ "[class a]\nmatch = tcp sport 0-65536\ninterval = 1s\n", "t.conf:2: 'sport 0-65536': expected a port 0..65535" },
	{ "[class a]\nmatch = udp dport -1\ninterval = 1s\n", "t.conf:2: 'dport -1': expected a port 0..65535" },
	{ "[class a]\nmatch = udp dport\ninterval = 1s\n", "t.conf:2: 'dport' needs a value" },
	{ "[class a]\nmatch = vlan 5000\ninterval = 1s\n", "t.conf:2: 'vlan 5000': expected a VLAN id 0..4095" },
	{ "[class a]\nmatch = src 192.0.2.1/24\ninterval = 1s\n",
	  "t.conf:2: '192.0.2.1/24' has bits set beyond its /24 (did you mean 192.0.2.0/24?)" },
	{ "[class a]\nmatch = any tcp\ninterval = 1s\n", "t.conf:2: 'any' matches every packet: it takes no other" },
	{ "[class a]\nrate = 1/1s\n", "t.conf:1: class 'a' has no match" },
	{ "[class a]\nmatch = any\n", "t.conf:1: class 'a' paces but has no limit" },
	{ "[class a]\nmatch = any\naction = drop\nrate = 1/1s\n",
	  "t.conf:1: class 'a': action drop takes no rate, interval, policy, key or prefix" },
	{ "[class a]\nmatch = any\naction = reject\n", "t.conf:3: 'action reject': expected pace, pass or drop" },
	{ "[class a]\nmatch = any\nkey = dport\ninterval = 1s\n", "t.conf:3: 'key dport': expected src, src+dport or src+dst" },
	{ "[class a]\nmatch = any\nrate = 20/1s\ninterval = 1s\n",
	  "t.conf:4: 'rate' and 'interval' both set the class's limit: give one" },
	{ "[class a]\nmatch = any\nrate = 0/1s\n", "t.conf:3: 'rate 0/1s': expected N/T" },
	{ "[class a]\nmatch = any\ninterval = 1\n", "t.conf:3: 'interval 1': expected a positive duration" },
	/* A limit beyond the range names the range's end. */
	{ "[class a]\nmatch = any\ninterval = 69270s\n",
	  "t.conf:3: 'interval 69270s': expected a positive duration of at most 69269.233 s (100ms, 1s)" },
	{ "[class a]\nmatch = any\nrate = 2/1125899906842625ns\n",
	  "t.conf:3: 'rate 2/1125899906842625ns': expected N/T with N from 1 to 16384 and T a positive duration up to 2^50 ns" },
	{ "[class a]\nmatch = any\nrate = 16385/1s\n", "t.conf:3: 'rate 16385/1s': expected N/T with N from 1 to 16384" },
	{ "[class a]\nmatch = any\nprefix4 = 33\ninterval = 1s\n", "t.conf:3: 'prefix4 33': expected 0..32" },
	{ "[class a]\nmatch = any\npolicy = fast\n", "t.conf:3: 'policy fast': expected pace or quiet" },
	{ "[class a]\nmatch = any\nmatch = tcp\n", "t.conf:3: 'match' is already set for class 'a'" },
	{ "[class a]\nmatch = any\ninterval = 1s\nbackend = table\n",
	  "t.conf:4: unknown key 'backend' in [class a] (class keys: match, rate," },
	{ "[class a]\nmatch = any\ninterval = 1s\n[class a]\nmatch = tcp\ninterval = 1s\n",
	  "t.conf:4: class 'a' is already defined on line 1" },
	{ "[class dns.v4]\n", "t.conf:1: bad class name 'dns.v4'" },
	{ "[class abcdefghijklmnop]\n", "t.conf:1: bad class name 'abcdefghijklmnop' (1 to 15 of" },
	{ "[class]\n", "t.conf:1: [class] needs a name" },
	{ "[class a b]\n", "t.conf:1: [class a ...]: a class name is one word" },
	{ "[klass a]\n", "t.conf:1: unknown section '[klass a]' (sections: [class NAME], [exempt], [deny])" },
	{ "[class a\n", "t.conf:1: a section header ends with ']'" },
	{ "[exempt]\nsrc = 192.0.2.0/33\n", "t.conf:2: '192.0.2.0/33': the prefix length must be 0..32" },
	{ "[exempt]\nsrc = 192.0.2.0/24,, 10.0.0.0/8\n", "t.conf:2: an empty item after a comma" },
	{ "[exempt]\nsrc = example.com\n", "t.conf:2: 'example.com' is not an IPv4 or IPv6 address" },
	{ "[deny]\naddr = 192.0.2.0/24\n", "t.conf:2: unknown key 'addr' in [deny] (it takes 'src = PREFIX, ...')" },
	{ "[exempt extra]\n", "t.conf:1: [exempt] takes no name ('extra')" },
	{ "[deny]\nsrc =\n", "t.conf:2: 'src' has no value" },
	{ "[class a]\nmatch\n", "t.conf:2: expected 'key = value', got 'match'" },
	{ "[class a]\nmatch = any\ninterval = 1s\nmode = watch\n",
	  "t.conf:4: 'mode watch': expected observe, enforce or global (as --mode)" },
	{ "[class a]\nmatch = any\ninterval = 1s\nmode = observe\nmode = enforce\n",
	  "t.conf:5: 'mode' is already set for class 'a'" },
	{ "[class a]\nmatch = any\naction = pass\nmode = observe\n",
	  "t.conf:1: class 'a': action pass never drops, so it takes no mode" },
	{ "mode = native\nxdp-mode = skb\n", "t.conf:2: 'xdp-mode' is already set on line 1" },
	{ "[deny]\nmode = observe\n", "t.conf:2: unknown key 'mode' in [deny]" },
};

/*
 * A class's mode: 'mode = observe' in its section, 'observe' or 'mode
 * observe' on the command line; unset, it follows the global mode.  The
 * file's 'mode = native|skb' is the attach mode's key from before --mode
 * took the verdict mode: read as 'xdp-mode'.
 */
START_TEST(test_class_modes)
{
	struct pacer_conf c;
	struct class_conf cc;
	char err[512], buf[160];

	ck_assert_int_eq(parse_text("mode = observe\ndeny-mode = enforce\n"
				    "[class dns]\nmatch = udp dport 53\nrate = 20/1s\nmode = enforce\n"
				    "[class ping]\nmatch = icmp\naction = drop\nmode = observe\n"
				    "[class syn]\nmatch = tcp flags syn\ninterval = 1s\n",
				    &c, err, sizeof(err)), 0);
	ck_assert_str_eq(pacer_conf_get(&c, "mode")->value, "observe");
	ck_assert_str_eq(pacer_conf_get(&c, "deny-mode")->value, "enforce");
	ck_assert_int_eq(c.cls->n, 3);
	ck_assert_uint_eq(c.cls->cls[0].c.mode, PACER_MODE_ENFORCE);
	ck_assert_uint_eq(c.cls->cls[1].c.mode, PACER_MODE_OBSERVE);
	ck_assert_uint_eq(c.cls->cls[2].c.mode, PACER_MODE_GLOBAL);
	ck_assert_str_eq(class_action_format(&c.cls->cls[1].c, buf, sizeof(buf)), "drop, mode observe");
	pacer_conf_free(&c);

	ck_assert_int_eq(parse_text("mode = skb\n", &c, err, sizeof(err)), 0);
	ck_assert_ptr_null(pacer_conf_get(&c, "mode"));
	ck_assert_str_eq(pacer_conf_get(&c, "xdp-mode")->value, "skb");
	pacer_conf_free(&c);

	class_conf_init(&cc, NULL);
	ck_assert_int_eq(class_conf_add_cli(&cc, "dns: udp dport 53 rate 20/1s observe", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "ping: icmp drop mode enforce", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "syn: tcp flags syn interval 1s", err, sizeof(err)), 0);
	ck_assert_uint_eq(cc.cls[0].c.mode, PACER_MODE_OBSERVE);
	ck_assert_uint_eq(cc.cls[1].c.mode, PACER_MODE_ENFORCE);
	ck_assert_uint_eq(cc.cls[2].c.mode, PACER_MODE_GLOBAL);
	ck_assert_int_eq(class_conf_add_cli(&cc, "x: udp rate 1/1s observe enforce", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'x: udp rate 1/1s observe enforce': the class's mode is given twice");
	ck_assert_int_eq(class_conf_add_cli(&cc, "y: udp rate 1/1s mode loud", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'y: udp rate 1/1s mode loud': 'mode loud': expected observe, enforce or global (as --mode)");
	ck_assert_int_eq(class_conf_add_cli(&cc, "z: udp pass observe", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(cc.n, 3); /* nothing half-added */
	/* A changed mode keeps the class's behaviour, so its id and its sources' state. */
	{
		struct pacer_class a = cc.cls[0].c, b = a;

		b.mode = PACER_MODE_ENFORCE;
		ck_assert(class_same_behaviour(&a, &b));
	}
	class_conf_free(&cc);
}
END_TEST

START_TEST(test_bad_files)
{
	struct pacer_conf c;
	char err[512];

	ck_assert_int_eq(parse_text(bad_files[_i].text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(!strncmp(err, bad_files[_i].want, strlen(bad_files[_i].want)),
		      "file %d: got \"%s\", want \"%s...\"", _i, err, bad_files[_i].want);
	pacer_conf_free(&c);
}
END_TEST

/*
 * A word longer than its buffer is refused, never read cut short (a
 * prefix length of 75 zeros and an 8 read as /0, a port of 78 zeros and
 * 53 as 5); a word's bytes beyond ASCII are shown as \xNN, as a terminal
 * could take their UTF-8 for a control (U+009B).  Found by tests/fuzz.sh.
 */
START_TEST(test_long_words_and_bytes)
{
	char text[512], zeros[80], err[512];
	struct pacer_conf c;

	memset(zeros, '0', sizeof(zeros));
	snprintf(text, sizeof(text), "[exempt]\nsrc = 0.0.0.0/%.75s8\n", zeros);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: '0.0.0.0/0000000000000000...': longer than any prefix (84 characters, at most 79)");
	pacer_conf_free(&c);
	snprintf(text, sizeof(text), "[class a]\nmatch = udp dport %.78s53\ninterval = 1s\n", zeros);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:2: 'dport 0000000000"));
	ck_assert_ptr_nonnull(strstr(err, "0000...': expected a port 0..65535"));
	pacer_conf_free(&c);
	snprintf(text, sizeof(text), "[class a]\nmatch = udp src %.78s1\ninterval = 1s\n", zeros);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "is not an IPv4 or IPv6 address"));
	pacer_conf_free(&c);
	ck_assert_int_eq(parse_text("[class a]\nmatch = udp dport 5\xc2\x9b" "3\ninterval = 1s\n", &c, err,
				    sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: 'dport 5\\xc2\\x9b3': expected a port 0..65535 or a range N-M with N <= M");
	pacer_conf_free(&c);
	ck_assert_int_eq(parse_text("[exempt]\nsrc = 2001:db8::\xd8\xcc" "2\n", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: '2001:db8::\\xd8\\xcc2' is not an IPv4 or IPv6 address or prefix (ADDR/LEN)");
	pacer_conf_free(&c);
}
END_TEST

/* 33 classes: the 33rd's header is the error. */
START_TEST(test_too_many_classes)
{
	char *text = malloc(64 * (PACER_MAX_CLASSES + 8)), err[512], want[64];
	struct pacer_conf c;
	size_t used = 0;
	int i;

	ck_assert_ptr_nonnull(text);
	for (i = 0; i <= PACER_MAX_CLASSES; i++)
		used += (size_t)sprintf(text + used, "[class c%d]\nmatch = any\ninterval = 1s\n", i);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	/* Three lines a class: the extra class's header is line 3 * PACER_MAX_CLASSES + 1. */
	snprintf(want, sizeof(want), "t.conf:%d: more than %d classes", 3 * PACER_MAX_CLASSES + 1, PACER_MAX_CLASSES);
	ck_assert_str_eq(err, want);
	pacer_conf_free(&c);
	free(text);
}
END_TEST

/* A prefix on both lists is refused, naming both lines; overlapping prefixes are not. */
START_TEST(test_exempt_and_deny)
{
	struct pacer_conf c;
	struct class_conf none;
	char err[512];

	class_conf_init(&none, NULL);
	ck_assert_int_eq(parse_text("[exempt]\nsrc = 192.0.2.0/24\nsrc = 10.0.0.0/8\n[deny]\nsrc = 192.0.2.7, 10.0.0.0/8\n",
				    &c, err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:5: 10.0.0.0/8 is on the deny list and on the exempt list (t.conf:3): a source is exempt or denied, not both");
	pacer_conf_free(&c);
	ck_assert_int_eq(parse_text("[exempt]\nsrc = 192.0.2.0/24, 192.0.2.0/24\n[deny]\nsrc = 192.0.2.7\n", &c,
				    err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), 0);
	ck_assert_int_eq((int)c.cls->exempt.n, 1); /* the repeat is one prefix */
	ck_assert_int_eq((int)c.cls->deny.n, 1);
	ck_assert_uint_eq(c.cls->deny.p[0].len, 32);
	pacer_conf_free(&c);
}
END_TEST

/* 10 000 prefixes per list, 20 a line, parse and check in well under a second. */
START_TEST(test_ten_thousand_prefixes)
{
	size_t cap = 64 * 1024 * 8, used = 0;
	char *text = malloc(cap), err[512];
	struct pacer_conf c;
	struct class_conf none;
	int i;

	ck_assert_ptr_nonnull(text);
	used += (size_t)sprintf(text, "[exempt]\n");
	for (i = 0; i < 10000; i++)
		used += (size_t)sprintf(text + used, "%s10.%d.%d.0/24%s", i % 20 ? "" : "src = ",
					i / 256, i % 256, i % 20 == 19 ? "\n" : ", ");
	used += (size_t)sprintf(text + used, "[deny]\n");
	for (i = 0; i < 10000; i++)
		used += (size_t)sprintf(text + used, "%s2001:db8:%x::/48%s", i % 20 ? "" : "src = ", i,
					i % 20 == 19 ? "\n" : ", ");
	ck_assert_uint_lt(used, cap);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), 0);
	class_conf_init(&none, NULL);
	ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), 0);
	ck_assert_int_eq((int)c.cls->exempt.n, 10000);
	ck_assert_int_eq((int)c.cls->deny.n, 10000);
	pacer_conf_free(&c);
	free(text);
}
END_TEST

/*
 * A million-entry list is refused at the first prefix over the limit,
 * naming its line and the limit, having held no more than the limit's
 * worth; each family has its own limit; a list the command line gives
 * and the file's other one together are refused naming both.
 */
START_TEST(test_million_entry_list)
{
	const int lim = PACER_LIST_MAX_ENTRIES;
	size_t cap = 1000000 * 20 + 64, used = 0;
	char *text = malloc(cap), err[512], want[256];
	struct pacer_conf c;
	struct class_conf none, cli;
	int i;

	ck_assert_ptr_nonnull(text);
	used += (size_t)sprintf(text, "[deny]\n");
	for (i = 0; i < 1000000; i++)
		used += (size_t)sprintf(text + used, "src = 10.%d.%d.%d\n", i >> 16, (i >> 8) & 255, i & 255);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	/* The prefix over the limit is the (lim + 1)th, on line lim + 2. */
	snprintf(want, sizeof(want),
		 "t.conf:%d: '10.%d.%d.%d': more than %d IPv4 prefixes on the exempt and deny lists (at most %d per family, both lists together)",
		 lim + 2, lim >> 16, (lim >> 8) & 255, lim & 255, lim, lim);
	ck_assert_str_eq(err, want);
	ck_assert_uint_le(c.cls->deny.cap, (unsigned)lim);
	pacer_conf_free(&c);

	/* lim of each family, split over both lists: the limit is per family. */
	used = (size_t)sprintf(text, "[exempt]\n");
	for (i = 0; i < lim; i++) {
		if (i == lim / 2)
			used += (size_t)sprintf(text + used, "[deny]\n");
		used += (size_t)sprintf(text + used, "src = 10.%d.%d.%d, 2001:db8:%x:%x::/64\n", i >> 16,
					(i >> 8) & 255, i & 255, i >> 16, i & 0xffff);
	}
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), 0);
	class_conf_init(&none, NULL);
	ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), 0);
	ck_assert_int_eq((int)(c.cls->exempt.n + c.cls->deny.n), 2 * lim);
	ck_assert_int_eq((int)(c.cls->exempt.n6 + c.cls->deny.n6), lim);
	pacer_conf_free(&c);
	strcat(text + used, "src = 2001:db8:ffff:1::/64\n");
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "t.conf:%d: '2001:db8:ffff:1::/64': more than %d IPv6 prefixes on the exempt and deny lists (at most %d per family, both lists together)",
		 lim + 3, lim, lim);
	ck_assert_str_eq(err, want);
	pacer_conf_free(&c);

	/* The command line's exempt list with the file's deny list. */
	used = (size_t)sprintf(text, "[deny]\n");
	for (i = 0; i < lim - 10000; i++)
		used += (size_t)sprintf(text + used, "src = 10.%d.%d.%d\n", i >> 16, (i >> 8) & 255, i & 255);
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), 0);
	class_conf_init(&cli, NULL);
	for (i = 0, used = 0; i < 40000; i++)
		used += (size_t)sprintf(text + used, "%s11.%d.%d.%d", i ? "," : "", i >> 16, (i >> 8) & 255, i & 255);
	ck_assert_int_eq(class_conf_add_list_cli(&cli, 0, text, err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_merge(c.cls, &cli, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want),
		 "the exempt list (--exempt) and the deny list (t.conf) hold %d IPv4 prefixes together: at most %d per family",
		 lim + 30000, lim);
	ck_assert_str_eq(err, want);
	class_conf_free(&cli);
	pacer_conf_free(&c);
	/* On the command line alone: refused at the prefix over the limit. */
	class_conf_init(&cli, NULL);
	for (i = 0, used = 0; i < lim + 1; i++)
		used += (size_t)sprintf(text + used, "%s12.%d.%d.%d", i ? "," : "", i >> 16, (i >> 8) & 255,
					i & 255);
	ck_assert_int_eq(class_conf_add_list_cli(&cli, 1, text, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "...': '12.%d.%d.%d': more than %d IPv4 prefixes on the exempt and deny lists",
		 lim >> 16, (lim >> 8) & 255, lim & 255, lim);
	ck_assert_msg(strstr(err, want), "%s", err);
	ck_assert(!strncmp(err, "--deny '12.0.0.0,12.0.0.1,", 26));
	class_conf_free(&cli);
	free(text);
}
END_TEST

/*
 * The first class that matches decides: one every packet of which an
 * earlier class matches never decides anything, and is refused naming
 * both; classes that overlap in part (or the narrower first) load.
 */
static const struct {
	const char *text, *want; /* want NULL: accepted */
} shadow_files[] = {
	{ "[class all-udp]\nmatch = udp\nrate = 5/1s\n[class dns]\nmatch = udp dport 53\nrate = 20/1s\n",
	  "t.conf:4: class 'dns' never matches: class 'all-udp' (line 1) comes first and matches every packet it would ('udp'): put the narrower class first" },
	{ "[class dns]\nmatch = udp dport 53\nrate = 20/1s\n[class dns2]\nmatch = udp dport 53\naction = drop\n",
	  "t.conf:4: class 'dns2' never matches: class 'dns' (line 1)" },
	{ "[class all]\nmatch = any\ninterval = 1s\n[class syn]\nmatch = tcp flags syn\ninterval = 1s\n",
	  "t.conf:4: class 'syn' never matches: class 'all' (line 1) comes first and matches every packet it would ('any')" },
	{ "[class lan]\nmatch = src 10.0.0.0/8\naction = pass\n[class ssh]\nmatch = tcp dport 22 src 10.1.0.0/16\naction = drop\n",
	  "t.conf:4: class 'ssh' never matches: class 'lan' (line 1) comes first and matches every packet it would ('src 10.0.0.0/8')" },
	{ "[class hi]\nmatch = udp dport 1000-2000\ninterval = 1s\n[class mid]\nmatch = udp dport 1500-1600 vlan 7\ninterval = 1s\n",
	  "t.conf:4: class 'mid' never matches" },
	{ "[class ping]\nmatch = icmp\naction = drop\n[class lanping]\nmatch = icmp src 10.0.0.0/8\naction = pass\n",
	  "t.conf:4: class 'lanping' never matches" },
	{ "[class a]\nmatch = dst 2001:db8::/32\naction = pass\n[class b]\nmatch = udp dst 2001:db8:1::/48 sport 53\naction = drop\n",
	  "t.conf:4: class 'b' never matches" },
	/* Accepted: narrower first, partial overlaps, other families, other ports. */
	{ "[class dns]\nmatch = udp dport 53\nrate = 20/1s\n[class all-udp]\nmatch = udp\nrate = 5/1s\n[class all]\nmatch = any\ninterval = 1s\n",
	  NULL },
	{ "[class lo]\nmatch = udp dport 50-60\ninterval = 1s\n[class hi]\nmatch = udp dport 55-70\ninterval = 1s\n", NULL },
	{ "[class syn]\nmatch = tcp flags syn\ninterval = 1s\n[class web]\nmatch = tcp dport 80\ninterval = 1s\n", NULL },
	{ "[class v4]\nmatch = src 10.0.0.0/8\naction = pass\n[class v6]\nmatch = src 2001:db8::/32\naction = pass\n", NULL },
	{ "[class narrow]\nmatch = src 10.1.0.0/16\naction = pass\n[class wide]\nmatch = src 10.0.0.0/8\naction = drop\n", NULL },
	{ "[class tcp]\nmatch = tcp dport 53\ninterval = 1s\n[class udp]\nmatch = udp dport 53\ninterval = 1s\n", NULL },
	{ "[class v7]\nmatch = vlan 7\naction = pass\n[class v8]\nmatch = vlan 8\naction = drop\n", NULL },
	{ "[class ping4]\nmatch = icmp\naction = drop\n[class lan]\nmatch = src 10.0.0.0/8\naction = pass\n", NULL },
	{ "[class lan]\nmatch = src 10.0.0.0/8\naction = pass\n[class mapped]\nmatch = udp src ::ffff:10.1.0.0/112\naction = drop\n",
	  "t.conf:4: class 'mapped' never matches" },
};

START_TEST(test_shadowed_classes)
{
	struct pacer_conf c;
	struct class_conf none;
	char err[512];

	ck_assert_int_eq(parse_text(shadow_files[_i].text, &c, err, sizeof(err)), 0);
	class_conf_init(&none, NULL);
	if (!shadow_files[_i].want) {
		ck_assert_msg(!class_conf_merge(c.cls, &none, err, sizeof(err)), "file %d: %s", _i, err);
	} else {
		ck_assert_int_eq(class_conf_merge(c.cls, &none, err, sizeof(err)), -EINVAL);
		ck_assert_msg(!strncmp(err, shadow_files[_i].want, strlen(shadow_files[_i].want)),
			      "file %d: got \"%s\"", _i, err);
	}
	pacer_conf_free(&c);
}
END_TEST

static uint64_t shadow_rng = 0x853c49e6748fea9bULL;

static unsigned pick(unsigned n)
{
	shadow_rng ^= shadow_rng << 13;
	shadow_rng ^= shadow_rng >> 7;
	shadow_rng ^= shadow_rng << 17;
	return (unsigned)(shadow_rng % n);
}

/* A packet from values near the vocabulary's edges, as the datapath's parser leaves it. */
static void random_packet(struct pacer_pkt *p)
{
	static const char *const v4[] = { "10.0.0.1", "10.1.2.3", "10.1.9.9", "192.0.2.5", "11.0.0.1" };
	static const char *const v6[] = { "2001:db8::1", "2001:db8:1::5", "2001:db9::1", "fe80::1" };
	static const __u8 protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6 };
	static const __u16 ports[] = { 0, 49, 53, 55, 60, 61, 999, 1000, 1500, 2000, 2001, 65535 };
	static const __u16 vlans[] = { PACER_VLAN_NONE, 0, 7, 8 };
	static const __u8 flags[] = { PACER_TCP_SYN, PACER_TCP_SYN | PACER_TCP_ACK, 0 };
	int fam = pick(2) ? 4 : 6;
	__u8 a[16] = { 0 };

	memset(p, 0, sizeof(*p));
	p->kind = fam == 4 ? PACER_PKT_V4 : PACER_PKT_V6;
	p->proto = protos[pick(4)];
	p->l4 = (p->proto == IPPROTO_TCP || p->proto == IPPROTO_UDP) && pick(8); /* else a fragment */
	if (p->l4) {
		p->dport = ports[pick(12)];
		p->sport = ports[pick(12)];
		p->tcp_flags = p->proto == IPPROTO_TCP ? flags[pick(3)] : 0;
	}
	p->vlan = vlans[pick(4)];
	ck_assert_int_eq(inet_pton(fam == 4 ? AF_INET : AF_INET6, fam == 4 ? v4[pick(5)] : v6[pick(4)], a), 1);
	pacer_src_of_bytes((__u32)fam, a, &p->src);
	memset(a, 0, sizeof(a));
	ck_assert_int_eq(inet_pton(fam == 4 ? AF_INET : AF_INET6, fam == 4 ? v4[pick(5)] : v6[pick(4)], a), 1);
	pacer_src_of_bytes((__u32)fam, a, &p->dst);
}

/*
 * The never-matches check refuses only what is true: for random pairs of
 * matches, where it refuses b after a, every packet b fits a fits too
 * (the datapath's pacer_match_fits on random packets).
 */
START_TEST(test_shadow_check_is_sound)
{
	static const char *const words[] = {
		"tcp", "udp", "icmp", "icmpv6", "dport 53", "dport 50-60", "dport 0-65535", "sport 53",
		"sport 1000-2000", "flags syn", "src 10.0.0.0/8", "src 10.1.0.0/16", "src 10.1.2.3",
		"src 2001:db8::/32", "src 2001:db8:1::/48", "src ::ffff:10.1.0.0/112", "dst 192.0.2.0/24",
		"dst 2001:db8::/32", "vlan 7", "vlan 0", "any",
	};
	int round, k, n, refused = 0, fits = 0;
	char text[2][200], err[512];
	struct class_conf cc, none;
	struct pacer_pkt p;

	for (round = 0; round < 20000; round++) {
		class_conf_init(&cc, NULL);
		for (k = 0; k < 2; k++) {
			n = snprintf(text[k], sizeof(text[k]), "%c:", 'a' + k);
			for (int w = (int)pick(3) + 1; w; w--)
				n += snprintf(text[k] + n, sizeof(text[k]) - (size_t)n, " %s",
					      words[pick(sizeof(words) / sizeof(words[0]))]);
			snprintf(text[k] + n, sizeof(text[k]) - (size_t)n, " drop");
			if (class_conf_add_cli(&cc, text[k], err, sizeof(err)))
				break;
		}
		class_conf_init(&none, NULL);
		if (k < 2 || !class_conf_merge(&cc, &none, err, sizeof(err))) {
			class_conf_free(&cc);
			continue;
		}
		ck_assert_msg(strstr(err, "never matches"), "%s", err);
		refused++;
		for (k = 0; k < 300; k++) {
			random_packet(&p);
			if (!pacer_match_fits(&cc.cls[1].c.m, &p))
				continue;
			fits++;
			ck_assert_msg(pacer_match_fits(&cc.cls[0].c.m, &p), "'%s' then '%s': a packet b fits, a does not",
				      text[0], text[1]);
		}
		class_conf_free(&cc);
	}
	ck_assert_int_gt(refused, 200);
	ck_assert_int_gt(fits, 10000);
}
END_TEST

/* The command line's classes, and the file's replaced by them, are checked alike. */
START_TEST(test_shadowed_cli_classes)
{
	struct pacer_conf c;
	struct class_conf cli;
	char err[512];

	ck_assert_int_eq(parse_text(issue_conf, &c, err, sizeof(err)), 0);
	class_conf_init(&cli, NULL);
	ck_assert_int_eq(class_conf_add_cli(&cli, "a: udp rate 1/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cli, "b: udp dport 53 drop", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_merge(c.cls, &cli, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'b: udp dport 53 drop' never matches: class 'a' (--class) comes first and matches every packet it would ('udp'): put the narrower class first");
	class_conf_free(&cli);
	pacer_conf_free(&c);
}
END_TEST

/* The command line's form. */
START_TEST(test_cli_form)
{
	struct class_conf cc;
	char err[512], buf[160];

	class_conf_init(&cc, NULL);
	ck_assert_int_eq(class_conf_add_cli(&cc, "dns: udp dport 53 rate 20/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "syn: tcp flags syn interval 100ms key src+dport policy quiet",
					    err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "ping : icmp drop", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "lan: src 10.0.0.0/8 vlan 7 action pass", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "hi: tcp dport 1024-65535 rate 5/1s prefix4 24 prefix6 48",
					    err, sizeof(err)), 0);
	ck_assert_int_eq(cc.n, 5);
	ck_assert_uint_eq(cc.cls[0].c.rate_n, 20);
	ck_assert_uint_eq(cc.cls[1].c.policy, PACER_POLICY_QUIET);
	ck_assert_uint_eq(cc.cls[1].c.key_mode, PACER_KEY_SRC_DPORT);
	ck_assert_str_eq(cc.cls[2].c.name, "ping");
	ck_assert_uint_eq(cc.cls[2].c.action, PACER_ACTION_DROP);
	ck_assert_uint_eq(cc.cls[2].c.m.family, 4);
	ck_assert_uint_eq(cc.cls[3].c.action, PACER_ACTION_PASS);
	ck_assert_uint_eq(cc.cls[3].c.m.src_mask_lo, pacer_mask4(8));
	ck_assert_uint_eq(cc.cls[4].c.prefix4, 24);
	ck_assert(cc.cls[4].prefix4_set && !cc.cls[0].prefix4_set);
	ck_assert_str_eq(class_match_format(&cc.cls[3].c.m, buf, sizeof(buf)), "src 10.0.0.0/8 vlan 7");
	ck_assert_str_eq(class_match_format(&cc.cls[4].c.m, buf, sizeof(buf)), "tcp dport 1024-65535");
	class_conf_default_prefixes(&cc, 32, 64);
	ck_assert_uint_eq(cc.cls[0].c.prefix4, 32);
	ck_assert_uint_eq(cc.cls[4].c.prefix4, 24);
	ck_assert_uint_eq(cc.cls[4].c.prefix6, 48);
	ck_assert_str_eq(class_action_format(&cc.cls[1].c, buf, sizeof(buf)),
			 "interval 100.000 ms, key src+dport /32 /64, policy quiet");

	ck_assert_int_eq(class_conf_add_cli(&cc, "dns: udp rate 1/1s", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'dns: udp rate 1/1s': class 'dns' is given twice");
	ck_assert_int_eq(class_conf_add_cli(&cc, "x udp rate 1/1s", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'x udp rate 1/1s': expected 'NAME: MATCH... rate N/T' (e.g. 'dns: udp dport 53 rate 20/1s'), or 'none'");
	ck_assert_int_eq(class_conf_add_cli(&cc, "x: udp dport 53 rate", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'x: udp dport 53 rate': 'rate' needs a value");
	ck_assert_int_eq(class_conf_add_cli(&cc, "x: udp dport 53 burst 5", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--class 'x: udp dport 53 burst 5': unknown word 'burst'"));
	ck_assert_int_eq(class_conf_add_cli(&cc, "x: dport 53 rate 1/1s", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--class 'x: dport 53 rate 1/1s': 'dport' needs 'tcp' or 'udp': only their packets have ports");
	ck_assert_int_eq(class_conf_add_cli(&cc, ": tcp rate 1/1s", err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad class name ''"));
	ck_assert_int_eq(cc.n, 5); /* nothing half-added */
	/* Port 0 and 65535 are ports (scanners and floods send them). */
	ck_assert_int_eq(class_conf_add_cli(&cc, "p0: udp dport 0 sport 65535 drop", err, sizeof(err)), 0);
	ck_assert_uint_eq(cc.cls[5].c.m.dport_lo, 0);
	ck_assert_uint_eq(cc.cls[5].c.m.sport_hi, 65535);
	ck_assert_str_eq(class_match_format(&cc.cls[5].c.m, buf, sizeof(buf)), "udp sport 65535 dport 0");

	ck_assert_int_eq(class_conf_add_list_cli(&cc, 0, "192.0.2.0/24,2001:db8::/32", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_list_cli(&cc, 1, "198.51.100.1", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_list_cli(&cc, 1, "198.51.100.1/24", err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "--deny '198.51.100.1/24': '198.51.100.1/24' has bits set beyond its /24 (did you mean 198.51.100.0/24?)");
	ck_assert_int_eq((int)cc.exempt.n, 2);
	class_conf_free(&cc);
}
END_TEST

/* The failed class leaves nothing behind: n counts only whole classes. */
START_TEST(test_cli_failure_adds_nothing)
{
	struct class_conf cc;
	char err[512];

	class_conf_init(&cc, NULL);
	ck_assert_int_eq(class_conf_add_cli(&cc, "a: tcp rate 1/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&cc, "b: tcp dport x rate 1/1s", err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(cc.n, 1);
	ck_assert_int_eq(class_conf_add_cli(&cc, "b: tcp rate 1/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(cc.n, 2);
	class_conf_free(&cc);
}
END_TEST

/* The command line's kinds replace the file's; the others stay. */
START_TEST(test_cli_over_file)
{
	struct pacer_conf c;
	struct class_conf cli;
	char err[512];

	ck_assert_int_eq(parse_text(issue_conf, &c, err, sizeof(err)), 0);
	class_conf_init(&cli, NULL);
	ck_assert_int_eq(class_conf_add_cli(&cli, "icmp: icmp rate 5/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_list_cli(&cli, 1, "none", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_merge(c.cls, &cli, err, sizeof(err)), 0);
	ck_assert_int_eq(c.cls->n, 1);
	ck_assert_str_eq(c.cls->cls[0].c.name, "icmp");
	ck_assert_int_eq((int)c.cls->exempt.n, 2);
	ck_assert_int_eq((int)c.cls->deny.n, 0);
	ck_assert(c.cls->deny.given);
	class_conf_free(&cli);
	pacer_conf_free(&c);
}
END_TEST

/* One tick for all the limits: the table holds 20 ms and 20 s; the sketch does not. */
START_TEST(test_limits_tick)
{
	struct limit_req l[3] = {
		{ 1, 20000000ULL, "t.conf:5: class 'fast'" },
		{ 1, 20000000000ULL, "t.conf:9: class 'slow'" },
		{ 1, 1000000000ULL, "the global interval" },
	};
	struct pacer_rate r;
	uint32_t s;
	char err[512];

	ck_assert_int_eq(limits_choose_tick(l, 3, 0, PACER_BACKEND_TABLE, &s, err, sizeof(err)), 0);
	ck_assert_int_eq(limit_fit(1, 20000000ULL, s, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 0);
	ck_assert_uint_ge(r.thresh, 5);
	ck_assert_int_eq(limit_fit(1, 20000000000ULL, s, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 0);
	ck_assert_uint_le(r.thresh, PACER_RATE_TBL_MAX_SAT);
	ck_assert_int_eq(limits_choose_tick(l, 3, 0, PACER_BACKEND_SKETCH, &s, err, sizeof(err)), 2);
	ck_assert_str_eq(err, "t.conf:5: class 'fast' (interval 20.000 ms) and t.conf:9: class 'slow' (interval 20 s) need different ticks: at one tick the sketch holds limits from 4 to 63 ticks (its 8-bit ticks); 'backend = table' (--backend table) holds limits 4096x apart");
	/* The dense table's 8-bit ticks: the same refusal, in its own name. */
	ck_assert_int_eq(limits_choose_tick(l, 3, 0, PACER_BACKEND_DENSE, &s, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "need different ticks: at one tick the dense table holds limits from 4 to 63 ticks"));
	/* One limit alone gets the tick a load without classes picks. */
	ck_assert_int_eq(limits_choose_tick(&l[2], 1, 0, PACER_BACKEND_SKETCH, &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s, pacer_default_tick_shift(1000000000ULL));
	/* --tick: the first limit that does not fit it. */
	ck_assert_int_eq(limits_choose_tick(l, 3, 1ULL << 25, PACER_BACKEND_TABLE, &s, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:5: class 'fast': interval 20.000 ms does not fit tick"));
	/* A rate the sketch cannot deliver at any tick: its own reason. */
	l[0].n = 20;
	l[0].interval_ns = 1000000000ULL;
	ck_assert_int_eq(limits_choose_tick(l, 1, 0, PACER_BACKEND_SKETCH, &s, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:5: class 'fast': --rate 20/1 s: the sketch tells"));
	ck_assert_int_eq(limits_choose_tick(l, 1, 0, PACER_BACKEND_DENSE, &s, err, sizeof(err)), 2);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:5: class 'fast': --rate 20/1 s: the dense table tells"));
	/* The issue's config on the table: 20/1s, 100ms and the global 1s. */
	l[1].n = 1;
	l[1].interval_ns = 100000000ULL;
	ck_assert_int_eq(limits_choose_tick(l, 3, 0, PACER_BACKEND_TABLE, &s, err, sizeof(err)), 0);
}
END_TEST

static uint32_t counter_id(void *arg)
{
	return ++*(uint32_t *)arg;
}

/* Unchanged classes keep their ids; slots follow names. */
START_TEST(test_ids_and_slots)
{
	struct class_conf a, b;
	struct pacer_class cur[PACER_MAX_CLASSES], want[PACER_MAX_CLASSES];
	bool reset[PACER_MAX_CLASSES];
	uint32_t next = 100;
	char err[512];
	int i;

	class_conf_init(&a, NULL);
	ck_assert_int_eq(class_conf_add_cli(&a, "dns: udp dport 53 rate 20/1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&a, "syn: tcp flags syn interval 100ms", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&a, "ping: icmp drop", err, sizeof(err)), 0);
	for (i = 0; i < a.n; i++)
		cur[i] = a.cls[i].c;
	class_assign_ids(cur, a.n, NULL, 0, counter_id, &next, reset);
	ck_assert_uint_eq(cur[0].id, 101);
	ck_assert_uint_eq(cur[0].stat_slot, 0);
	ck_assert_uint_eq(cur[2].stat_slot, 2);
	ck_assert(reset[0] && reset[1] && reset[2] && !reset[3]);

	/* Reload: ping removed, syn's limit changed, a new class, dns moved to the end unchanged. */
	class_conf_init(&b, NULL);
	ck_assert_int_eq(class_conf_add_cli(&b, "syn: tcp flags syn interval 200ms", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&b, "ntp: udp dport 123 interval 1s", err, sizeof(err)), 0);
	ck_assert_int_eq(class_conf_add_cli(&b, "dns: udp dport 53 rate 20/1s", err, sizeof(err)), 0);
	for (i = 0; i < b.n; i++)
		want[i] = b.cls[i].c;
	class_assign_ids(want, b.n, cur, a.n, counter_id, &next, reset);
	ck_assert_uint_eq(want[2].id, cur[0].id); /* dns: same behaviour, same id */
	ck_assert_uint_eq(want[2].stat_slot, 0);
	ck_assert_uint_ne(want[0].id, cur[1].id); /* syn: changed, fresh id ... */
	ck_assert_uint_eq(want[0].stat_slot, 1);  /* ... same slot (same name) */
	ck_assert_uint_ne(want[1].id, 0);
	ck_assert_uint_ne(want[1].id, want[0].id);
	ck_assert_uint_eq(want[1].stat_slot, 2); /* ntp takes ping's slot, counters reset */
	ck_assert(reset[2] && !reset[0] && !reset[1]);
	/* What set reports as a change of the classes. */
	ck_assert(!class_lists_same(want, b.n, cur, a.n));
	ck_assert(class_lists_same(cur, a.n, cur, a.n));
	for (i = 0; i < a.n; i++)
		want[i] = a.cls[i].c;
	class_assign_ids(want, a.n, cur, a.n, counter_id, &next, reset);
	ck_assert(class_lists_same(want, a.n, cur, a.n)); /* the same list again: no change */
	want[1].mode = PACER_MODE_OBSERVE;
	ck_assert(!class_lists_same(want, a.n, cur, a.n)); /* a mode alone is a change */
	want[1] = cur[1];
	ck_assert(!class_lists_same(want, a.n - 1, cur, a.n)); /* one fewer */
	want[0] = cur[1];
	want[1] = cur[0];
	ck_assert(!class_lists_same(want, a.n, cur, a.n)); /* another order */
	class_conf_free(&a);
	class_conf_free(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("classconf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_issue_config);
	tcase_add_test(tc, test_no_sections);
	tcase_add_loop_test(tc, test_bad_files, 0, (int)(sizeof(bad_files) / sizeof(bad_files[0])));
	tcase_add_test(tc, test_too_many_classes);
	tcase_add_test(tc, test_long_words_and_bytes);
	tcase_add_test(tc, test_exempt_and_deny);
	tcase_add_test(tc, test_ten_thousand_prefixes);
	tcase_add_test(tc, test_million_entry_list);
	tcase_add_loop_test(tc, test_shadowed_classes, 0, (int)(sizeof(shadow_files) / sizeof(shadow_files[0])));
	tcase_add_test(tc, test_shadowed_cli_classes);
	tcase_add_test(tc, test_shadow_check_is_sound);
	tcase_add_test(tc, test_cli_form);
	tcase_add_test(tc, test_class_modes);
	tcase_add_test(tc, test_cli_failure_adds_nothing);
	tcase_add_test(tc, test_cli_over_file);
	tcase_add_test(tc, test_limits_tick);
	tcase_add_test(tc, test_ids_and_slots);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
