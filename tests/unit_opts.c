// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the declarative option tables (user/lib/opts/opts.c): every type
 * parses and refuses as documented, errors name the option and the value,
 * defaults are applied and shown, "given" flags, included tables, required
 * options, positionals, and the usage text printed from the table.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "budget_cfg.h"
#include "class_conf.h"
#include "live_opts.h"
#include "live_opts.h"
#include "pacer_abi.h"

struct inner {
	uint32_t level;
	bool level_set;
};

struct test_opts {
	const char *ifname, *name;
	uint64_t count, gap_ns, sample;
	uint32_t rows, colour;
	double p;
	bool verbose, count_set, gap_set, name_set;
	struct opt_address addr;
	struct inner in;
};

static const struct opt_choice colours[] = { { "red", 1 }, { "green", 2 }, { "blue", 7 }, { NULL, 0 } };

static const struct opt_spec inner_specs[] = {
	{ .name = "level", .type = OPT_U32, .arg = "L", .max = 9, OPT_FIELD(struct inner, level),
	  OPT_GIVEN(struct inner, level_set), .help = "a level" },
	{ 0 },
};

static const struct opt_spec specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL, OPT_FIELD(struct test_opts, ifname) },
	{ .name = "ADDRESS", .type = OPT_ADDRESS, .flags = OPT_POSITIONAL | OPT_OPTIONAL,
	  OPT_FIELD(struct test_opts, addr) },
	{ .name = "count", .type = OPT_U64, .arg = "N", .min = 1, .max = 1000, .dflt = "10",
	  OPT_FIELD(struct test_opts, count), OPT_GIVEN(struct test_opts, count_set),
	  .help = "how many\nsecond line" },
	{ .name = "rows", .type = OPT_U32, .flags = OPT_POW2, .arg = "D", .min = 1, .max = 8,
	  OPT_FIELD(struct test_opts, rows), .help = "rows" },
	{ .name = "gap", .type = OPT_DURATION, .flags = OPT_OFF, .arg = "DUR", .max = 2000000000ULL,
	  OPT_FIELD(struct test_opts, gap_ns), OPT_GIVEN(struct test_opts, gap_set), .help = "a gap" },
	{ .name = "p", .type = OPT_DECIMAL, .flags = OPT_MIN_OPEN | OPT_MAX_OPEN, .arg = "P",
	  .dmin = 0, .dmax = 1, OPT_FIELD(struct test_opts, p), .help = "a probability" },
	{ .name = "colour", .type = OPT_ENUM, .choices = colours, .dflt = "green",
	  OPT_FIELD(struct test_opts, colour), .help = "a colour" },
	{ .name = "sample", .type = OPT_SAMPLING, .arg = "1/N|off", OPT_FIELD(struct test_opts, sample),
	  .help = "sampling" },
	{ .name = "verbose", .short_name = 'v', .type = OPT_BOOL, OPT_FIELD(struct test_opts, verbose),
	  .help = "more" },
	{ .name = "name", .short_name = 'n', .type = OPT_STRING, .flags = OPT_REQUIRED, .arg = "NAME",
	  OPT_FIELD(struct test_opts, name), OPT_GIVEN(struct test_opts, name_set), .help = "a name" },
	{ .type = OPT_SECTION, .help = "Inner:" },
	{ .type = OPT_INCLUDE, .sub = inner_specs, OPT_FIELD(struct test_opts, in) },
	{ 0 },
};

static const struct opt_verb verb = {
	.name = "try",
	.synopsis = "IFNAME [ADDRESS] [OPTIONS]",
	.intro = "A test verb.\n",
	.args = "an interface name",
	.opts = specs,
};

#define MAX_ARGS 32

/* Parse the NULL-terminated words after the verb name. */
static int run(struct test_opts *o, struct opt_error *e, const char *first, ...)
{
	char *argv[MAX_ARGS + 1] = { "try" };
	const char *w = first;
	int argc = 1, rc;
	va_list ap;
	FILE *devnull = fopen("/dev/null", "w");

	va_start(ap, first);
	for (; w && argc < MAX_ARGS; w = va_arg(ap, const char *))
		argv[argc++] = (char *)w;
	va_end(ap);
	memset(o, 0, sizeof(*o));
	memset(e, 0, sizeof(*e));
	rc = opts_parse(&verb, argc, argv, o, devnull, e);
	fclose(devnull);
	return rc;
}

START_TEST(test_defaults_and_values)
{
	struct test_opts o;
	struct opt_error e;

	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", NULL), 0);
	ck_assert_str_eq(o.ifname, "eth0");
	ck_assert_uint_eq(o.count, 10);
	ck_assert(!o.count_set); /* a default is not "given" */
	ck_assert_uint_eq(o.colour, 2);
	ck_assert_ptr_null(o.addr.text);

	ck_assert_int_eq(run(&o, &e, "--count", "20", "eth0", "10.0.0.1", "--rows=4", "--gap", "1.5s",
			     "--p", "0.25", "--colour", "blue", "--sample", "1/4", "-v", "--name",
			     "y", "--level", "3", NULL), 0);
	ck_assert_uint_eq(o.count, 20);
	ck_assert(o.count_set);
	ck_assert_uint_eq(o.rows, 4);
	ck_assert_uint_eq(o.gap_ns, 1500000000ULL);
	ck_assert(o.gap_set);
	ck_assert_double_eq(o.p, 0.25);
	ck_assert_uint_eq(o.colour, 7);
	ck_assert_uint_eq(o.sample, 1ULL << 30);
	ck_assert(o.verbose);
	ck_assert_str_eq(o.name, "y");
	ck_assert_uint_eq(o.in.level, 3); /* an included table writes into its own struct */
	ck_assert(o.in.level_set);
	ck_assert_str_eq(o.addr.text, "10.0.0.1");
	ck_assert_int_eq(o.addr.addr.family, 4);

	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", "--gap", "off", "--sample", "off", NULL), 0);
	ck_assert_uint_eq(o.gap_ns, 0);
	ck_assert_uint_eq(o.sample, 0);
}
END_TEST

/* Each bad value: exit 2, the option and the value named, what was expected said. */
static void refused(const char *opt, const char *val, const char *why)
{
	struct test_opts o;
	struct opt_error e;
	char want[128];

	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", opt, val, NULL), 2);
	snprintf(want, sizeof(want), "invalid value '%s' for %s: ", val, opt);
	ck_assert_msg(strstr(e.msg, want), "%s: got '%s'", want, e.msg);
	ck_assert_msg(strstr(e.why, why), "%s: got '%s'", why, e.why);
	ck_assert_str_eq(e.opt, opt);
	ck_assert_str_eq(e.value, val);
}

START_TEST(test_bad_values_name_option_and_value)
{
	refused("--count", "0", "expected an integer from 1 to 1000");
	refused("--count", "1001", "expected an integer from 1 to 1000");
	refused("--count", "12x", "expected an integer from 1 to 1000");
	refused("--rows", "3", "expected a power of two from 1 to 8");
	refused("--gap", "3s", "expected a positive duration of at most 2 s");
	refused("--gap", "10", "or off");
	refused("--p", "1", "expected a number in (0, 1)");
	refused("--p", "0", "expected a number in (0, 1)");
	refused("--p", "0.5x", "expected a number in (0, 1)");
	refused("--colour", "pink", "expected red, green or blue");
	refused("--sample", "1/0", "expected 1/N with N from 1 to 4294967296, or off");
	refused("--name", "", "expected a non-empty value");
	refused("--level", "10", "expected an integer from 0 to 9");
}
END_TEST

START_TEST(test_usage_errors)
{
	struct test_opts o;
	struct opt_error e;

	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", "--bogus", NULL), 2);
	ck_assert_str_eq(e.msg, "unknown option '--bogus'");
	ck_assert(e.hint);
	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", "-q", NULL), 2);
	ck_assert_str_eq(e.msg, "unknown option '-q'");
	ck_assert_int_eq(run(&o, &e, "eth0", "-n", "x", "--count", NULL), 2);
	ck_assert_str_eq(e.msg, "option '--count' needs a value");
	ck_assert_int_eq(run(&o, &e, "-n", "x", NULL), 2);
	ck_assert_str_eq(e.msg, "try needs an interface name");
	ck_assert_int_eq(run(&o, &e, "eth0", "10.0.0.1", "extra", "-n", "x", NULL), 2);
	ck_assert_str_eq(e.msg, "unexpected argument 'extra'");
	ck_assert_int_eq(run(&o, &e, "eth0", NULL), 2);
	ck_assert_str_eq(e.msg, "try needs --name NAME");
	ck_assert_int_eq(run(&o, &e, "eth0/1", "-n", "x", NULL), 2);
	ck_assert_str_eq(e.opt, "IFNAME");
	ck_assert_int_eq(run(&o, &e, "eth0", "10.0.0", "-n", "x", NULL), 2);
	ck_assert_str_eq(e.msg, "invalid value '10.0.0' for ADDRESS: expected an IPv4 or IPv6 address");
	ck_assert_int_eq(run(&o, &e, "-h", NULL), OPTS_HELP);
	ck_assert_int_eq(run(&o, &e, "eth0", "--help", NULL), OPTS_HELP);
}
END_TEST

START_TEST(test_usage_text_comes_from_the_table)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	opts_usage(&verb, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "Usage: xdp-pacer try IFNAME [ADDRESS] [OPTIONS]\n\nA test verb.\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  --count N             how many\n"
					  "                        second line (default: 10)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  --colour red|green|blue  a colour (default: green)\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  -v, --verbose         more\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nInner:\n  --level L             a level\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  -h, --help            this text\n"));
	ck_assert_ptr_null(strstr(buf, "IFNAME "  "  ")); /* positionals are in the synopsis only */
	free(buf);
}
END_TEST

START_TEST(test_decimal_and_sampling_parsers)
{
	uint64_t t;
	double d;

	ck_assert_int_eq(parse_decimal("0.001", &d), 0);
	ck_assert_double_eq(d, 0.001);
	ck_assert_int_eq(parse_decimal("1e-3", &d), 0);
	ck_assert_int_eq(parse_decimal("", &d), -EINVAL);
	ck_assert_int_eq(parse_decimal(" 1", &d), -EINVAL);
	ck_assert_int_eq(parse_decimal("1,5", &d), -EINVAL);
	ck_assert_int_eq(parse_decimal("1e999", &d), -ERANGE);
	ck_assert_int_eq(parse_decimal("nan", &d), -ERANGE);
	ck_assert_int_eq(parse_sampling("off", &t), 0);
	ck_assert_uint_eq(t, 0);
	ck_assert_int_eq(parse_sampling("64", &t), 0);
	ck_assert_uint_eq(t, (1ULL << 32) / 64);
	ck_assert_int_eq(parse_sampling("1/1", &t), 0);
	ck_assert_uint_eq(t, 1ULL << 32);
	ck_assert_int_eq(parse_sampling("1/x", &t), -EINVAL);
}
END_TEST

START_TEST(test_budget_table_through_opts)
{
	struct budget_opts b = { 0 };
	struct opt_error e;
	const struct opt_spec *s = opts_find(budget_specs, "budget", NULL);

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(opts_parse_value(s, "50000/1s", &b, &e), 0);
	ck_assert(b.set_budget && !b.off);
	ck_assert_uint_eq(b.limit, 50000);
	ck_assert_uint_eq(b.window_ns, 1000000000ULL);
	ck_assert_int_eq(opts_parse_value(s, "off", &b, &e), 0);
	ck_assert(b.off);
	ck_assert_int_eq(opts_parse_value(s, "5/", &b, &e), 2);
	ck_assert_ptr_nonnull(strstr(e.msg, "invalid value '5/' for --budget: expected K/T"));
	ck_assert_ptr_null(opts_find(budget_specs, "nope", NULL));
}
END_TEST

/*
 * --class, --exempt and --deny (live_opts.c's class_specs) give bad_value()
 * the reason alone, also for a text longer than the message holds (its
 * reason was once read from past the end of the message) and for one
 * with bytes a terminal could take as controls (shown as \xNN).
 */
START_TEST(test_class_options_reason)
{
	struct class_conf cc;
	struct opt_error e;
	const struct opt_spec *cls = opts_find(class_specs, "class", NULL);
	const struct opt_spec *deny = opts_find(class_specs, "deny", NULL);
	char text[2048];

	memset(&cc, 0, sizeof(cc));
	ck_assert_int_eq(opts_parse_value(cls, "x: udp dprot 53 rate 1/1s", &cc, &e), 2);
	ck_assert_str_eq(e.opt, "--class");
	ck_assert_ptr_nonnull(strstr(e.why, "unknown word 'dprot'"));
	ck_assert(!strncmp(e.why, "unknown word", 12));
	ck_assert_int_eq(opts_parse_value(deny, "192.0.2.1/24", &cc, &e), 2);
	ck_assert_str_eq(e.why, "'192.0.2.1/24' has bits set beyond its /24 (did you mean 192.0.2.0/24?)");

	memset(text, 'a', sizeof(text) - 1);
	text[sizeof(text) - 1] = 0;
	memcpy(text, "name: udp", 9);
	ck_assert_int_eq(opts_parse_value(cls, text, &cc, &e), 2);
	ck_assert_ptr_nonnull(strstr(e.why, "--class 'name: udpaaaa"));
	ck_assert_uint_lt(strlen(e.why), sizeof(e.why));
	ck_assert_int_eq(opts_parse_value(deny, text, &cc, &e), 2);
	ck_assert(!strncmp(e.why, "--deny 'name: udpaaa", 20));

	ck_assert_int_eq(opts_parse_value(cls, "x: udp dport 5\xc2\x9b" "3 rate 1/1s", &cc, &e), 2);
	ck_assert_str_eq(e.why, "'dport 5\\xc2\\x9b3': expected a port 0..65535 or a range N-M with N <= M");
	ck_assert_int_eq(opts_parse_value(cls, "\xc2\x9b udp", &cc, &e), 2);
	ck_assert_str_eq(e.why, "expected 'NAME: MATCH... rate N/T' (e.g. 'dns: udp dport 53 rate 20/1s'), or 'none'");
	ck_assert_int_eq(cc.n, 0);
	class_conf_free(&cc);
}
END_TEST

/* --mode enforce|observe; native|skb is load's attach mode (its spelling before --xdp-mode). */
START_TEST(test_mode_table_through_opts)
{
	const struct opt_spec *m = opts_find(mode_specs, "mode", NULL);
	const struct opt_spec *d = opts_find(mode_specs, "deny-mode", NULL);
	struct live_opts o;
	struct opt_error e;

	ck_assert_ptr_nonnull(m);
	ck_assert_ptr_nonnull(d);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(opts_parse_value(m, "observe", &o, &e), 0);
	ck_assert_uint_eq(o.mode.mode, PACER_MODE_OBSERVE);
	ck_assert(o.mode_set && !o.mode.attach_set);
	ck_assert(live_opts_any(&o));
	ck_assert_int_eq(opts_parse_value(m, "enforce", &o, &e), 0);
	ck_assert_uint_eq(o.mode.mode, PACER_MODE_ENFORCE);
	ck_assert_int_eq(opts_parse_value(m, "skb", &o, &e), 0);
	ck_assert(o.mode.attach_set);
	ck_assert_uint_eq(o.mode.attach, 2);
	ck_assert_uint_eq(o.mode.mode, PACER_MODE_ENFORCE); /* the verdict mode untouched */
	ck_assert_int_eq(opts_parse_value(m, "global", &o, &e), 2); /* a class's, not the global one's */
	ck_assert_int_eq(opts_parse_value(m, "watch", &o, &e), 2);
	ck_assert_ptr_nonnull(strstr(e.msg, "invalid value 'watch' for --mode: expected enforce or observe"));
	ck_assert_int_eq(opts_parse_value(d, "global", &o, &e), 0);
	ck_assert_uint_eq(o.deny_mode, PACER_MODE_GLOBAL);
	ck_assert_int_eq(opts_parse_value(d, "observe", &o, &e), 0);
	ck_assert_uint_eq(o.deny_mode, PACER_MODE_OBSERVE);
	ck_assert_int_eq(opts_parse_value(d, "loud", &o, &e), 2);
	ck_assert_str_eq(m->dflt, "enforce");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("opts");
	TCase *tc = tcase_create("option tables");

	tcase_add_test(tc, test_defaults_and_values);
	tcase_add_test(tc, test_bad_values_name_option_and_value);
	tcase_add_test(tc, test_usage_errors);
	tcase_add_test(tc, test_usage_text_comes_from_the_table);
	tcase_add_test(tc, test_decimal_and_sampling_parsers);
	tcase_add_test(tc, test_budget_table_through_opts);
	tcase_add_test(tc, test_class_options_reason);
	tcase_add_test(tc, test_mode_table_through_opts);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
