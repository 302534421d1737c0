// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer set: change the live configuration without detaching. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "rss_probe.h"
#include "cli_values.h"
#include "ticks.h"
#include "budget.h"
#include "pacer_conf.h"
#include "live_opts.h"
#include "classes_cli.h"
#include "classes_map.h"
#include "pin_ops.h"
#include "live_apply.h"
#include "change_stages.h"
#include "variant_swap.h"

static int fixed_at_load(const struct opt_spec *s, const char *arg, void *field, char *why,
			 size_t len)
{
	(void)s, (void)arg, (void)field;
	snprintf(why, len, "fixed at load: run 'xdp-pacer unload' and 'xdp-pacer load' with the new value");
	return -EINVAL;
}

static int config_again(const struct opt_spec *s, const char *arg, void *field, char *why,
			size_t len)
{
	(void)s, (void)arg, (void)field;
	snprintf(why, len, "--config may be given once");
	return -EINVAL;
}

struct set_opts {
	struct live_opts live;
	struct class_conf cls; /* --class, --exempt, --deny */
	struct budget_opts budget;
	const char *ifname, *fixed;
	uint32_t wait_s;
};

#define SET_FIXED(n)                                                                     \
	{ .name = n, .type = OPT_CUSTOM, .flags = OPT_HIDDEN, .parse = fixed_at_load, OPT_FIELD(struct set_opts, fixed) }

static const struct opt_spec fixed_specs[] = {
	SET_FIXED("rows"), SET_FIXED("width"), SET_FIXED("layout"), SET_FIXED("placement"),
	SET_FIXED("tick"), SET_FIXED("clock"), SET_FIXED("xdp-mode"), SET_FIXED("reserve-cells"),
	SET_FIXED("backend"), SET_FIXED("on-full"), SET_FIXED("priority"),
	{ 0 },
};

static const struct opt_spec set_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct set_opts, ifname) },
	{ .type = OPT_INCLUDE, .sub = pacing_specs, OPT_FIELD(struct set_opts, live) },
	{ .type = OPT_INCLUDE, .sub = malformed_specs, OPT_FIELD(struct set_opts, live) },
	{ .type = OPT_INCLUDE, .sub = mode_specs, OPT_FIELD(struct set_opts, live) },
	{ .type = OPT_INCLUDE, .sub = sampling_specs, OPT_FIELD(struct set_opts, live) },
	{ .name = "config", .type = OPT_CUSTOM, .arg = "FILE", .parse = config_again,
	  .help = "make the live settings what FILE says (the file 'load\n"
		  "--config' reads; live keys it omits go back to their\n"
		  "defaults, its class sections and lists replace the running\n"
		  "ones); the whole file is checked as load would" },
	{ .type = OPT_INCLUDE, .sub = budget_specs, OPT_FIELD(struct set_opts, budget) },
	{ .type = OPT_INCLUDE, .sub = class_specs, OPT_FIELD(struct set_opts, cls) },
	{ .type = OPT_INCLUDE, .sub = fixed_specs },
	{ .type = OPT_INCLUDE, .sub = wait_specs, OPT_FIELD(struct set_opts, wait_s) },
	{ 0 },
};

static const struct opt_verb set_verb = {
	.name = "set",
	.synopsis = "IFNAME OPTION...",
	.intro = "Change the running limiter on IFNAME; the sketch keeps its state.\n"
		 "The interval or rate must fit the tick chosen at load (the range 'status'\n"
		 "shows).\n",
	.args = "an interface name",
	.opts = set_specs,
	.hide_defaults = true,
	.epilog = "--class replaces the running classes (all of them, in the order given), --exempt\n"
		  "and --deny each their list; a class whose match, limit and key are unchanged\n"
		  "keeps its sources' state, and a class keeps its counters while its name does.\n"
		  "A budget change keeps the ring: held buckets stay and are released by the\n"
		  "new T; the new K applies to what is in flight (docs/design.md, Global budget).\n"
		  "--mode switches every source's verdicts at once and keeps their state.\n"
		  "A change that turns a stage on or off (classes, lists, budget, sampling,\n"
		  "observe mode) swaps the program for one with exactly the stages in use, in\n"
		  "place, every map kept ('status' shows the stages).\n"
		  "Rows, width, layout, placement, tick, clock, xdp-mode, backend, on-full and reserve\n"
		  "cells are fixed at load: changing them needs 'xdp-pacer unload' and\n"
		  "'xdp-pacer load'.\n",
};

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
	if (load_check_fixed(n, lv, conf->cls, &h->layout, budget_seen_cells_log2(h),
			     h->chained ? (int64_t)h->run_prio : -1, differ, sizeof(differ)))
		return 2;
	if (differ[0])
		pr_err("warning: %s: fixed at load, not applied by set: %s (unload and load again; systemctl restart, a load --replace, applies the clock, and with --reset-state the geometry, keeping the lists)",
		       conf->path, differ);
	return 0;
}

static int set_main(int argc, char **argv, struct pacer_conf *conf);

/* A wider key can make a per-CPU pacer inexact: RSS spreads the key's addresses. */
static void note_rss(const struct pacer_handle *h)
{
	struct rss_verdict v;

	rss_verdict_of(h, &v);
	if (!v.exact)
		pr_info("  note: this pacer is per-CPU, and per-CPU placement is not exact here: %s",
			v.text);
}

/* The writer lock (writer_lock.h), held from before the pacer is read until set returns. */
static int set_lock_fd = -1;

int cmd_set(int argc, char **argv)
{
	struct pacer_conf conf;
	int err = conf_expand_argv(&argc, &argv, 1, &conf);

	if (!err)
		err = set_main(argc, argv, &conf);
	pins_writer_unlock(set_lock_fd);
	set_lock_fd = -1;
	pacer_conf_free(&conf);
	return err;
}


/* Name what set changed into buf ("interval, policy"), comma-separated: how many. */
static int name_change(char *buf, size_t len, bool changed, const char *name)
{
	size_t used = strlen(buf);

	if (!changed)
		return 0;
	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
	return 1;
}

/*
 * What differs between the live configuration before set (b) and after
 * (a), with the budget's and the classes' verdicts: the settings' names
 * into buf, in the order the report line shows them.  How many.
 */
static int live_changes(const struct pacer_config *b, const struct pacer_config *a, bool budget,
			unsigned classes, char *buf, size_t len)
{
	int n = 0;

	buf[0] = 0;
	n += name_change(buf, len, b->interval_ns != a->interval_ns || b->rate_n != a->rate_n ||
					   b->thresh_ticks != a->thresh_ticks || b->burst_ticks != a->burst_ticks,
			 a->rate_n > 1 ? "rate" : "interval");
	n += name_change(buf, len, b->policy != a->policy, "policy");
	n += name_change(buf, len, b->prefix4 != a->prefix4, "prefix4");
	n += name_change(buf, len, b->prefix6 != a->prefix6, "prefix6");
	n += name_change(buf, len, b->malformed != a->malformed, "malformed");
	n += name_change(buf, len, b->mode != a->mode, "mode");
	n += name_change(buf, len, b->deny_mode != a->deny_mode, "deny-mode");
	n += name_change(buf, len, b->sample_src_thresh != a->sample_src_thresh, "sample-sources");
	n += name_change(buf, len, b->sample_pkt_thresh != a->sample_pkt_thresh, "sample-packets");
	n += name_change(buf, len, budget, "budget");
	n += name_change(buf, len, classes & CLASSES_CHANGED_CLASSES, "classes");
	n += name_change(buf, len, classes & CLASSES_CHANGED_EXEMPT, "exempt list");
	n += name_change(buf, len, classes & CLASSES_CHANGED_DENY, "deny list");
	return n;
}

/* Whether a pacer runs classes after this set: the new list's, or the running one's. */
static bool classes_after(const struct class_conf *cc, const struct pacer_class_maps *m)
{
	struct pacer_class cur[PACER_MAX_CLASSES];
	int n = 0;

	if (cc->classes_given)
		return classes_pace(cc);
	return !pacer_classes_read(m, cur, &n) && n > 0;
}

static int set_main(int argc, char **argv, struct pacer_conf *conf)
{
	static struct set_opts o;
	const struct live_opts *l = &o.live;
	struct pacer_class classes[PACER_MAX_CLASSES];
	struct pacer_class_maps cmaps;
	struct class_conf *cc;
	struct pacer_config want, before;
	struct pacer_handle h;
	unsigned classes_changed = 0;
	int err, n_changes;
	bool class_change, budget_changed = false;
	char a[256], what[160], head[200];

	err = parse_verb_opts(&set_verb, argc, argv, &o);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	/* The file is the whole live configuration: no sections is no classes and empty lists. */
	if (conf->path && conf->cls)
		conf->cls->classes_given = conf->cls->exempt.given = conf->cls->deny.given = true;
	err = classes_merge(conf, &o.cls, &cc);
	if (err)
		return err;
	class_change = cc->classes_given || cc->exempt.given || cc->deny.given;
	if (!live_opts_any(l) && !budget_opts_any(&o.budget) && !class_change)
		return usage_error("set", "set needs at least one option to change");
	if (live_opts_conflict(l))
		return conf_conflict("set", "interval", "rate", live_opts_conflict(l));
	if (l->mode.attach_set)
		return usage_error("set", "--mode native|skb is the XDP attach mode (--xdp-mode), fixed at load: run 'xdp-pacer unload' and 'xdp-pacer load' with the new value");
	set_lock_fd = pins_writer_lock(o.ifname, o.wait_s);
	if (set_lock_fd < 0)
		return 1;
	if (pacer_handle_open(o.ifname, &h))
		return 1;
	if (conf->path && check_config_fixed(conf, &h)) {
		pacer_handle_close(&h);
		return 2;
	}

	want = before = *h.cfg;
	pacer_class_maps_of(&h, &cmaps);
	if (cc->classes_given &&
	    classes_build(cc, h.layout.tick_shift, h.layout.backend,
			  l->prefix4_set ? l->prefix4 : h.cfg->prefix4,
			  l->prefix6_set ? l->prefix6 : h.cfg->prefix6,
			  "; the tick is fixed at load: reload ('xdp-pacer unload', 'xdp-pacer load') to change it",
			  classes)) {
		pacer_handle_close(&h);
		return 2;
	}
	if (l->interval_set || l->rate_set) {
		struct pacer_rate rate;
		uint64_t interval_ns;
		uint32_t n;
		char why[256];

		live_opts_rate(l, &n, &interval_ns);
		if ((classes_after(cc, &cmaps) ? limit_fit : rate_fit)(n, interval_ns, h.layout.tick_shift,
									h.layout.backend, &rate, why,
									sizeof(why))) {
			pr_err("%s; the tick is fixed at load: reload ('xdp-pacer unload', 'xdp-pacer load') to change it",
			       why);
			pacer_handle_close(&h);
			return 2;
		}
		warn_coarse_clock(l, h.layout.clock);
		want.interval_ns = interval_ns;
		want.rate_n = n;
		want.thresh_ticks = rate.thresh;
		want.burst_ticks = rate.burst;
	}
	if (budget_opts_any(&o.budget) && budget_check(&h, &o.budget)) {
		pacer_handle_close(&h);
		return 2;
	}
	/* A stage the change turns on is in the program before the change (variant_swap.h). */
	if (variant_ensure(&h, change_stages(l, &o.budget, cc))) {
		pr_err("%s: nothing changed", h.ifname);
		pacer_handle_close(&h);
		return 1;
	}
	pacer_class_maps_of(&h, &cmaps);
	/* Everything is checked: now only the kernel can refuse, and then the classes' maps are unchanged. */
	if (class_change) {
		if (classes_install_changes(&cmaps, cc, classes, &classes_changed)) {
			pacer_handle_close(&h);
			return 1;
		}
	}
	/* The budget last among the checks: it is stored when valid, and nothing else can fail. */
	if (budget_opts_any(&o.budget)) {
		err = budget_set(&h, &o.budget, &budget_changed);
		if (err || (!live_opts_any(l) && !class_change)) {
			variant_settle(&h);
			pacer_handle_close(&h);
			return err;
		}
	}
	/* Word-sized stores into the mmapped .data: the datapath sees each field change atomically. */
	if (l->interval_set || l->rate_set) {
		struct pacer_rate r = { .thresh = want.thresh_ticks, .burst = want.burst_ticks };

		live_apply_rate(h.cfg, want.rate_n, want.interval_ns, &r);
	}
	live_apply_words(h.cfg, l);
	/* A stage the change turned off leaves the program (a failure leaves a superset: said). */
	variant_settle(&h);
	pacer_class_maps_of(&h, &cmaps); /* a swap reopened h: its maps' fds are new */
	err = 0;
	/* Only what differs from before counts: the same file twice changes nothing. */
	n_changes = live_changes(&before, h.cfg, budget_changed, classes_changed, what, sizeof(what));
	if (n_changes)
		snprintf(head, sizeof(head), "%d setting%s changed (%s); now", n_changes,
			 n_changes == 1 ? "" : "s", what);
	else
		snprintf(head, sizeof(head), "no change:");
	pr_info("xdp-pacer: %s: %s %s, policy %s, prefix4 /%u, prefix6 /%u, malformed %s, mode %s, deny-mode %s",
		h.ifname, head, rate_describe(h.cfg, h.layout.tick_shift, a, sizeof(a)),
		policy_name(h.cfg->policy), h.cfg->prefix4, h.cfg->prefix6,
		h.cfg->malformed ? "drop" : "pass", mode_name(h.cfg->mode),
		own_mode_name(h.cfg->deny_mode));
	if (class_change)
		classes_report(&cmaps, h.layout.tick_shift, h.layout.backend);
	if ((l->prefix4_set || l->prefix6_set) && h.layout.placement == PACER_PLACEMENT_PERCPU)
		note_rss(&h);
	pacer_handle_close(&h);
	return err;
}
