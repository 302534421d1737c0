// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer status: what is attached where, and how it is configured. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "variant.h"
#include "variant_swap.h"
#include "opts.h"
#include "cli_values.h"
#include "ticks.h"
#include "backend.h"
#include "budget.h"
#include "rss_probe.h"
#include "pacer_table.h"
#include "version.h"
#include "pacer_ticks.h"
#include "classes_cli.h"
#include "classes_map.h"
#include "json_writer.h"
#include "xdp_chain.h"

struct status_opts {
	const char *ifname;
	bool json;
};

static const struct opt_spec status_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL | OPT_OPTIONAL,
	  OPT_FIELD(struct status_opts, ifname) },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct status_opts, json),
	  .help = "one JSON object: each attached limiter's program, mode, pins,\n"
		  "geometry and its place among the other XDP programs\n"
		  "(libxdp's dispatcher); stale pins are listed in the text form only" },
	{ 0 },
};

static const struct opt_verb status_verb = {
	.name = "status",
	.synopsis = "[IFNAME] [--json]",
	.intro = "Show the xdp-pacer program on IFNAME, or on every interface that has one:\n"
		 "attach mode, its place among other XDP programs in libxdp's dispatcher (each\n"
		 "program's name, id, priority and the verdicts that go on to the next), backend\n"
		 "and geometry (fixed at load), live configuration, map memory,\n"
		 "and whether the NIC's RSS hash makes per-CPU placement exact per source.\n"
		 "Without IFNAME, also list pins no running pacer owns: orphaned ones (the\n"
		 "interface was deleted, or the program detached by other means) and those\n"
		 "of other network namespaces, each with the command that removes them.\n",
	.opts = status_specs,
};

/* The RSS verdict with the live key widths: `set --prefix6` can change it. */
static void show_rss(const struct pacer_handle *h)
{
	struct rss_verdict v;

	rss_verdict_of(h, &v);
	printf("  rss: per-CPU placement %s here: %s\n", v.exact ? "is exact" : "is not exact",
	       v.text);
}

/*
 * The programs that run on the limiter's interface, in run order; 0, or
 * negative errno after saying why (the dispatcher cannot be read).
 */
static int read_chain(const struct pacer_handle *h, struct xdp_chain *c)
{
	char eb[128];
	int err = xdp_chain_read(h->ifindex, c);

	if (err)
		pr_err("cannot read the XDP programs on %s: %s", h->ifname, err_str(err, eb, sizeof(eb)));
	return err;
}

/* Where the limiter runs: alone, or its place among its neighbours. */
static void show_chain(const struct pacer_handle *h)
{
	char acts[64];
	struct xdp_chain c;
	int i;

	if (!h->chained) {
		printf("  chain: attached on its own (no libxdp dispatcher): no other XDP program runs on %s\n",
		       h->ifname);
		return;
	}
	if (read_chain(h, &c))
		return;
	printf("  chain: libxdp dispatcher id %u, %d program%s in run order (a verdict not listed ends the chain):\n",
	       c.dispatcher_id, c.nprogs, c.nprogs == 1 ? "" : "s");
	for (i = 0; i < c.nprogs; i++)
		printf("    %d. %s (id %u, priority %u, on to the next on %s)%s\n", i + 1,
		       c.progs[i].name, c.progs[i].id, c.progs[i].priority,
		       xdp_chain_actions_str(c.progs[i].chain_actions, acts, sizeof(acts)),
		       c.progs[i].id == h->prog_id ? "  <- this limiter" : "");
}

static void json_actions(struct json_writer *w, uint32_t mask)
{
	unsigned int a;

	jsonw_start_array_field(w, "chain_actions");
	for (a = 0; a < XDP_CHAIN_ACTIONS; a++)
		if (mask & (1u << a))
			jsonw_string(w, xdp_chain_action_name(a));
	jsonw_end_array(w);
}

/* One limiter as a JSON object: what `show` says about attachment and geometry. */
/* NAME: [the stages of bits, by name] (variant_swap.h). */
static void json_stages(struct json_writer *w, const char *name, uint32_t bits)
{
	uint32_t b;

	jsonw_start_array_field(w, name);
	for (b = 1; b <= PACER_VARIANT_ALL; b <<= 1)
		if (bits & b)
			jsonw_string(w, variant_feature_name(b));
	jsonw_end_array(w);
}

static int show_json(struct pacer_handle *h, void *ctx)
{
	struct json_writer *w = ctx;
	const struct pacer_layout *l = &h->layout;
	struct xdp_chain c = { 0 };
	char dir[256];
	uint32_t use;
	int i;

	if (h->chained && read_chain(h, &c))
		return -EIO;
	jsonw_start_object(w);
	jsonw_string_field(w, "ifname", h->ifname);
	jsonw_uint_field(w, "ifindex", (uint64_t)h->ifindex);
	jsonw_uint_field(w, "prog_id", h->prog_id);
	jsonw_string_field(w, "mode", h->mode);
	if (h->pinned && !pin_dir(h->ifname, dir, sizeof(dir)))
		jsonw_string_field(w, "pins", dir);
	else
		jsonw_null_field(w, "pins");
	jsonw_string_field(w, "backend", backend_name(l->backend));
	jsonw_string_field(w, "placement", placement_name(l->placement));
	jsonw_string_field(w, "clock", clock_name(l->clock));
	jsonw_uint_field(w, "tick_ns", pacer_tick_ns(l->tick_shift));
	jsonw_string_field(w, "policy", policy_name(h->cfg->policy));
	jsonw_uint_field(w, "map_bytes", pacer_map_bytes(h));
	jsonw_string_field(w, "attach", h->chained ? "dispatcher" : "single");
	if (h->chained) {
		jsonw_uint_field(w, "dispatcher_id", c.dispatcher_id);
		jsonw_uint_field(w, "priority", h->run_prio);
		json_actions(w, h->chain_actions);
	}
	jsonw_start_array_field(w, "chain");
	for (i = 0; i < c.nprogs; i++) {
		jsonw_start_object(w);
		jsonw_string_field(w, "name", c.progs[i].name);
		jsonw_uint_field(w, "id", c.progs[i].id);
		jsonw_uint_field(w, "priority", c.progs[i].priority);
		json_actions(w, c.progs[i].chain_actions);
		jsonw_bool_field(w, "self", c.progs[i].id == h->prog_id);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	json_stages(w, "stages", variant_running(h));
	if (!variant_in_use(h, &use))
		json_stages(w, "stages_in_use", use);
	jsonw_end_object(w);
	return 0;
}

static void show(const struct pacer_handle *h)
{
	const struct pacer_layout *l = &h->layout;
	const struct pacer_config *c = h->cfg;
	const struct backend_desc *d = backend_of(l->backend);
	uint64_t min_ns, max_ns;
	struct pacer_class_maps cm;
	char a[32], b[256], rng[64], dir[256], shape[96];

	pacer_class_maps_of(h, &cm);
	/* With classes the global limit takes theirs (classes_cli.h). */
	if (PACER_CLASS_SEL_COUNT(c->class_sel))
		limit_range(l->tick_shift, l->backend, &min_ns, &max_ns);
	else
		interval_range(l->tick_shift, &min_ns, &max_ns);
	if (!h->pinned || pin_dir(h->ifname, dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "attached by another loader (no pins)");
	printf("%s (ifindex %d): program id %u, %s mode, %s%s\n", h->ifname, h->ifindex, h->prog_id,
	       h->mode, h->pinned ? "loaded by xdp-pacer, pins in " : "", dir);
	printf("  %s (fixed at load): %s, %s, tick %s, clock %s\n", d->name,
	       d->live_str(l->rows, l->kind, l->lines_log2, l->lines, l->on_full, shape, sizeof(shape)),
	       placement_name(l->placement), format_duration(pacer_tick_ns(l->tick_shift), a, sizeof(a)),
	       clock_name(l->clock));
	show_chain(h);
	printf("  stages: %s\n", variant_explain(h, b, sizeof(b)));
	printf("  live: %s, policy %s\n", rate_describe(c, l->tick_shift, b, sizeof(b)),
	       policy_name(c->policy));
	printf("  live: mode %s%s, deny list %s\n", mode_name(c->mode),
	       c->mode == PACER_MODE_OBSERVE ? " (drop verdicts pass, counted as would-drop)" : "",
	       c->deny_mode ? own_mode_name(c->deny_mode) : "as mode");
	if (d->rate_max_n > 1)
		printf("  live: --interval settable within %s; --rate N/T needs T/N >= %s, about T <= %u ticks, and N/T delivered within 1 %%\n",
		       format_duration_range(min_ns, max_ns, rng, sizeof(rng)),
		       format_duration(pacer_tick_ns(l->tick_shift), a, sizeof(a)), d->rate_max_sat);
	else
		printf("  live: --interval settable within %s; --rate N/T with N > 1: %s\n",
		       format_duration_range(min_ns, max_ns, rng, sizeof(rng)), d->rate_n_hint);
	printf("  live: prefix4 /%u, prefix6 /%u, malformed %s, hash key %s\n", c->prefix4,
	       c->prefix6, c->malformed ? "drop" : "pass",
	       c->hash_key[0] && c->hash_key[1] ? "set" : "not yet drawn (no packet seen)");
	printf("  sampling: %s\n", format_sampling(c->sample_src_thresh, c->sample_pkt_thresh, rng, sizeof(rng)));
	budget_show(h);
	fflush(stdout);
	classes_report(&cm, l->tick_shift, l->backend);
	printf("  map memory: %s (%d CPUs)\n", format_bytes(pacer_map_bytes(h), a, sizeof(a)),
	       h->ncpus);
	show_rss(h);
}

static int show_one(struct pacer_handle *h, void *ctx)
{
	(void)ctx;
	show(h);
	return 0;
}

/* Pins in this namespace that no attached program owns. */
static int show_own_orphan(const char *dir, const char *ifname)
{
	uint32_t id = pinned_prog_id(dir);
	unsigned int ifindex = if_nametoindex(ifname);

	if (ifindex && id && attached_pacer_id((int)ifindex) == id)
		return 0; /* live: shown above */
	printf("%s: ORPHANED pins in %s (program id %u): %s; remove them with 'xdp-pacer unload %s'\n",
	       ifname, dir, id,
	       !ifindex ? "the interface no longer exists" : "the program is no longer attached to it",
	       ifname);
	return 1;
}

static int show_foreign(const char *dir, const char *ifname, uint64_t ns)
{
	bool alive = netns_alive(ns);

	printf("%s in network namespace %llu (not this one): pins in %s (program id %u); ", ifname,
	       (unsigned long long)ns, dir, pinned_prog_id(dir));
	if (alive)
		printf("that namespace exists: run 'xdp-pacer status' inside it\n");
	else
		printf("ORPHANED: that namespace is gone; remove them with 'xdp-pacer unload --netns %llu %s'\n",
		       (unsigned long long)ns, ifname);
	return 1;
}

/* Pins an older xdp-pacer made directly under the root, keyed by name only. */
static int show_legacy(const char *name)
{
	char dir[300];
	uint32_t id;

	if (!ifname_valid(name) || snprintf(dir, sizeof(dir), "%s/%s", PACER_PIN_ROOT, name) < 0)
		return 0;
	id = pinned_prog_id(dir);
	if (!id)
		return 0;
	printf("%s: pins of an older xdp-pacer in %s (program id %u), namespace unknown; remove them with 'rm -r %s' once nothing uses them\n",
	       name, dir, id, dir);
	return 1;
}

/* Every pin directory under the root that the interface scan did not show. */
static int show_other_pins(void)
{
	char nsdir[300], dir[300];
	struct dirent *ns_ent, *if_ent;
	uint64_t self = 0, ns;
	DIR *root, *d;
	int shown = 0;

	root = opendir(PACER_PIN_ROOT);
	if (!root || netns_self(&self)) {
		if (root)
			closedir(root);
		return 0;
	}
	while ((ns_ent = readdir(root))) {
		if (pin_netns_parse(ns_ent->d_name, &ns)) {
			shown += show_legacy(ns_ent->d_name);
			continue;
		}
		if (pin_netns_dir(PACER_PIN_ROOT, ns, nsdir, sizeof(nsdir)) || !(d = opendir(nsdir)))
			continue;
		while ((if_ent = readdir(d))) {
			if (pin_if_dir(PACER_PIN_ROOT, ns, if_ent->d_name, dir, sizeof(dir)))
				continue; /* ".", "..", or not an interface's directory */
			shown += ns == self ? show_own_orphan(dir, if_ent->d_name)
					    : show_foreign(dir, if_ent->d_name, ns);
		}
		closedir(d);
	}
	closedir(root);
	return shown;
}

/* --json: {"version", "abi", "interfaces": [limiter, ...]}. */
static int status_json(const char *ifname)
{
	struct json_writer w;
	struct pacer_handle h;
	int err = 0;

	if (ifname && pacer_handle_open(ifname, &h))
		return 1;
	jsonw_init(&w, stdout);
	jsonw_start_object(&w);
	jsonw_string_field(&w, "version", pacer_version);
	jsonw_uint_field(&w, "abi", PACER_ABI_VERSION);
	jsonw_start_array_field(&w, "interfaces");
	if (ifname) {
		err = show_json(&h, &w);
		pacer_handle_close(&h);
	} else {
		err = pacer_for_each(show_json, &w);
	}
	jsonw_end_array(&w);
	jsonw_end_object(&w);
	return jsonw_finish(&w) || err < 0 ? 1 : 0;
}

int cmd_status(int argc, char **argv)
{
	struct status_opts o = { 0 };
	struct pacer_handle h;
	int found = 0, err = parse_verb_opts(&status_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	if (o.json)
		return status_json(o.ifname);
	printf("xdp-pacer %s (datapath ABI %d)\n", pacer_version, PACER_ABI_VERSION);
	if (o.ifname) {
		if (pacer_handle_open(o.ifname, &h))
			return 1;
		show(&h);
		pacer_handle_close(&h);
		return 0;
	}
	found = pacer_for_each(show_one, NULL);
	if (found < 0)
		return 1;
	if (!found)
		printf("xdp-pacer is not attached to any interface\n");
	show_other_pins();
	return 0;
}
