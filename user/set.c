// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer set: change the live configuration without detaching. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "rss_probe.h"
#include "parse.h"
#include "budget.h"
#include "pacer_sketch.h"
#include "pacer_conf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-pacer set IFNAME OPTION...\n\n"
		"Change the running limiter on IFNAME; the sketch keeps its state.\n"
		"  --interval DUR          new interval; must lie within the range 'status' shows\n"
		"                          (it depends on the tick chosen at load)\n"
		"  --policy pace|quiet\n"
		"  --prefix4 N, --prefix6 N  key prefix lengths (0..32, 0..128)\n"
		"  --malformed pass|drop\n"
		"  --sample-sources 1/N|off  record every packet of 1 in N sources\n"
		"  --sample-packets 1/N|off  also record 1 in N packets at random\n"
		"  --config FILE           make the live settings what FILE says (the file 'load\n"
		"                          --config' reads; live keys it omits go back to their\n"
		"                          defaults); the whole file is checked as load would\n");
	fputs(budget_usage, f);
	fprintf(f,
		"  A budget change keeps the ring: held buckets stay and are released by the\n"
		"  new T; the new K applies to what is in flight (README, Global budget).\n"
		"Rows, width, layout, placement, tick, clock, mode and reserve cells are fixed at load:\n"
		"changing them needs 'xdp-pacer unload' and 'xdp-pacer load'.\n");
}

static int parse_sampling(const char *opt, const char *v, uint64_t *thresh)
{
	uint64_t n;

	if (!strcmp(v, "off")) {
		*thresh = 0;
		return 0;
	}
	if (parse_one_in(v, &n))
		return bad_value(opt, v, "expected 1/N with N from 1 to 4294967296, or off");
	*thresh = sample_thresh_one_in(n);
	return 0;
}

/*
 * With --config: check the whole file as load would, and say which of its
 * fixed-at-load settings the running program does not have (set cannot
 * apply them).  0 or 2.
 */
static int check_config_fixed(const struct pacer_conf *conf, const struct pacer_handle *h)
{
	char differ[256], **lv;
	int n;

	lv = conf_argv(conf, "load", 0, 1, &n);
	if (!lv)
		return 2;
	lv[n++] = (char *)h->ifname;
	if (load_check_fixed(n, lv, &h->layout, differ, sizeof(differ)))
		return 2;
	if (differ[0])
		pr_err("warning: %s: fixed at load, not applied by set: %s (unload and load again, e.g. systemctl restart)",
		       conf->path, differ);
	return 0;
}

static int set_main(int argc, char **argv, const struct pacer_conf *conf);

/* A wider key can make a per-CPU pacer inexact: RSS spreads the key's addresses. */
static void note_rss(const struct pacer_handle *h)
{
	struct rss_verdict v;

	rss_verdict_of(h, &v);
	if (!v.exact)
		pr_info("  note: this pacer is per-CPU, and per-CPU placement is not exact here: %s",
			v.text);
}

int cmd_set(int argc, char **argv)
{
	struct pacer_conf conf;
	int err = conf_expand_argv(&argc, &argv, 1, &conf);

	if (!err)
		err = set_main(argc, argv, &conf);
	pacer_conf_free(&conf);
	return err;
}

static int set_main(int argc, char **argv, const struct pacer_conf *conf)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "policy", required_argument, NULL, 'p' },
		{ "prefix4", required_argument, NULL, '4' },
		{ "prefix6", required_argument, NULL, '6' },
		{ "malformed", required_argument, NULL, 'M' },
		{ "sample-sources", required_argument, NULL, 's' },
		{ "sample-packets", required_argument, NULL, 'k' },
		{ "rows", required_argument, NULL, 'R' },
		{ "width", required_argument, NULL, 'R' },
		{ "layout", required_argument, NULL, 'R' },
		{ "placement", required_argument, NULL, 'R' },
		{ "tick", required_argument, NULL, 'R' },
		{ "clock", required_argument, NULL, 'R' },
		{ "mode", required_argument, NULL, 'R' },
		{ "config", required_argument, NULL, 'C' },
		{ "reserve-cells", required_argument, NULL, 'R' },
		BUDGET_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname_arg;
	struct pacer_config want;
	struct budget_opts budget = { 0 };
	struct pacer_handle h;
	uint64_t interval = 0, src_thresh = 0, pkt_thresh = 0;
	uint32_t policy = 0, malformed = 0, p4 = 0, p6 = 0;
	int c, idx, err, n_changes = 0;
	bool set_i = false, set_p = false, set_m = false, set_4 = false, set_6 = false;
	bool set_s = false, set_k = false;
	char a[32], b[32], d[32], e[32];

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, &idx)) != -1) {
		switch (c) {
		case 'i':
			if (parse_duration_opt("--interval", optarg, PACER_INTERVAL_MAX_NS, &interval))
				return 2;
			set_i = true;
			break;
		case 'p':
			if (parse_policy(optarg, &policy))
				return bad_value("--policy", optarg, "expected pace or quiet");
			set_p = true;
			break;
		case '4':
			if (parse_prefix_arg("--prefix4", optarg, 32, &p4))
				return 2;
			set_4 = true;
			break;
		case '6':
			if (parse_prefix_arg("--prefix6", optarg, 128, &p6))
				return 2;
			set_6 = true;
			break;
		case 'M':
			if (parse_malformed(optarg, &malformed))
				return bad_value("--malformed", optarg, "expected pass or drop");
			set_m = true;
			break;
		case 's':
			if (parse_sampling("--sample-sources", optarg, &src_thresh))
				return 2;
			set_s = true;
			break;
		case 'k':
			if (parse_sampling("--sample-packets", optarg, &pkt_thresh))
				return 2;
			set_k = true;
			break;
		case 'C':
			pr_err("--config may be given once");
			return 2;
		BUDGET_OPT_CASES:
			if (budget_cli_opt(c, optarg, &budget))
				return 2;
			break;
		case 'R':
			pr_err("--%s is fixed at load: run 'xdp-pacer unload' and 'xdp-pacer load' with the new value",
			       longopts[idx].name);
			return 2;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (expect_ifname(argc, argv, &ifname_arg))
		return 2;
	if (!(set_i || set_p || set_m || set_4 || set_6 || set_s || set_k || budget_opts_any(&budget))) {
		pr_err("set needs at least one option to change");
		usage_hint(argv[0]);
		return 2;
	}
	if (pacer_handle_open(argv[optind], &h))
		return 1;
	if (conf->path && check_config_fixed(conf, &h)) {
		pacer_handle_close(&h);
		return 2;
	}

	want = *h.cfg;
	if (set_i) {
		uint64_t min_ns, max_ns;
		uint32_t t = pacer_thresh_ticks(interval, h.layout.tick_shift);

		interval_range(h.layout.tick_shift, &min_ns, &max_ns);
		if (!t || interval < min_ns || interval > max_ns) {
			pr_err("--interval %s is outside [%s, %s], the range the loaded tick of %s allows; "
			       "reload with 'xdp-pacer load --interval' to change the tick",
			       format_duration(interval, a, sizeof(a)),
			       format_duration(min_ns, b, sizeof(b)), format_duration(max_ns, d, sizeof(d)),
			       format_duration(1ULL << h.layout.tick_shift, e, sizeof(e)));
			pacer_handle_close(&h);
			return 2;
		}
		want.interval_ns = interval;
		want.thresh_ticks = t;
	}
	/* The budget last among the checks: it is stored when valid, and nothing else can fail. */
	if (budget_opts_any(&budget)) {
		err = budget_set(&h, &budget);
		if (err || !(set_i || set_p || set_m || set_4 || set_6 || set_s || set_k)) {
			pacer_handle_close(&h);
			return err;
		}
	}
	/* Word-sized stores into the mmapped .data: the datapath sees each field change atomically. */
	if (set_i) {
		h.cfg->thresh_ticks = want.thresh_ticks;
		h.cfg->interval_ns = want.interval_ns;
		n_changes++;
	}
	if (set_p) {
		h.cfg->policy = policy;
		n_changes++;
	}
	if (set_m) {
		h.cfg->malformed = malformed;
		n_changes++;
	}
	if (set_4) {
		h.cfg->prefix4 = p4;
		n_changes++;
	}
	if (set_6) {
		h.cfg->prefix6 = p6;
		n_changes++;
	}
	if (set_s) {
		h.cfg->sample_src_thresh = src_thresh;
		n_changes++;
	}
	if (set_k) {
		h.cfg->sample_pkt_thresh = pkt_thresh;
		n_changes++;
	}
	__sync_synchronize();
	err = 0;
	pr_info("xdp-pacer: %s: %d setting%s changed: interval %s (threshold %u ticks), policy %s, prefix4 /%u, prefix6 /%u, malformed %s",
		h.ifname, n_changes, n_changes == 1 ? "" : "s",
		format_duration(h.cfg->interval_ns, a, sizeof(a)), h.cfg->thresh_ticks,
		policy_name(h.cfg->policy), h.cfg->prefix4, h.cfg->prefix6,
		h.cfg->malformed ? "drop" : "pass");
	if ((set_4 || set_6) && h.layout.placement == PACER_PLACEMENT_PERCPU)
		note_rss(&h);
	pacer_handle_close(&h);
	return err;
}
