// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer load: size the sketch, load, attach through libxdp, pin. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "common.h"
#include "cli_values.h"
#include "budget.h"
#include "pacer_sketch.h"
#include "pacer_conf.h"
#include "live_opts.h"
#include "layout.h"
#include "backend.h"
#include "ticks.h"
#include "rss_probe.h"
#include "place_cost.h"
#include "pacer_budget.h"
#include "pacer_defaults.h"
#include "pacer_table.h"
#include "pacer_place.h"
#include "xdp_chain.h"
#include "verifier_log.h"
#include "xdp_pacer.skel.h"
#include "pacer_ticks.h"
#include "classes_cli.h"
#include "classes_map.h"
#include "writer_lock.h"
#include "pin_keep.h"
#include "map_carry.h"
#include "live_apply.h"
#include "xdp_replace.h"
#include "version.h"
#include "variant.h"
#include "variant_swap.h"
#include "change_stages.h"

/* --placement auto: decided from the interface's RSS hash and the cost once the options are read. */
#define LOAD_PLACEMENT_AUTO UINT32_MAX

static int parse_placement_opt(const char *s, uint32_t *out)
{
	if (strcmp(s, "auto"))
		return parse_placement(s, out);
	*out = LOAD_PLACEMENT_AUTO;
	return 0;
}

static int config_again(const struct opt_spec *s, const char *arg, void *field, char *why,
			size_t len)
{
	(void)s, (void)arg, (void)field;
	snprintf(why, len, "--config may be given once");
	return -EINVAL;
}

static const struct opt_choice mode_choices[] = {
	{ "native", XDP_MODE_NATIVE },
	{ "skb", XDP_MODE_SKB },
	{ NULL, 0 },
};

struct load_opts {
	struct live_opts live;
	struct class_conf cls; /* --class, --exempt, --deny */
	struct budget_opts budget;
	uint64_t tick_ns, width, reserve_cells;
	uint32_t rows, kind, placement, clock, backend, on_full, mode, priority; /* mode: XDP attach */
	bool rows_set, layout_set, on_full_set, mode_set, priority_set, clock_set;
	bool replace, reset_state;
	const char *ifname;
};

#define LOAD_FIXED (OPT_CONF)

static const struct opt_spec load_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct load_opts, ifname) },
	{ .type = OPT_SECTION, .help = "Live options (change later with 'xdp-pacer set'):" },
	{ .type = OPT_INCLUDE, .sub = pacing_specs, OPT_FIELD(struct load_opts, live) },
	{ .type = OPT_INCLUDE, .sub = malformed_specs, OPT_FIELD(struct load_opts, live) },
	{ .type = OPT_INCLUDE, .sub = mode_specs, OPT_FIELD(struct load_opts, live) },
	{ .type = OPT_INCLUDE, .sub = budget_specs, OPT_FIELD(struct load_opts, budget) },
	{ .type = OPT_INCLUDE, .sub = class_specs, OPT_FIELD(struct load_opts, cls) },
	{ .type = OPT_SECTION, .help = "Fixed at load (change needs unload + load):" },
	{ .name = "backend", .type = OPT_ENUM, .flags = LOAD_FIXED, .arg = "sketch|table|dense",
	  .lookup = parse_backend, .dflt = "sketch", OPT_FIELD(struct load_opts, backend),
	  .help = "what remembers sources: the recency sketch, the\n"
		  "recency table (4-byte entries, 2 cache lines per packet), or the\n"
		  "dense table (2.67 bytes an entry, intervals up to 63 ticks,\n"
		  "N = 1 only; refused where its sweep cannot visit every line\n"
		  "within 64 ticks: see docs/operating.md, Which backend)" },
	{ .name = "on-full", .type = OPT_ENUM, .flags = LOAD_FIXED, .arg = "drop|evict-oldest",
	  .lookup = parse_on_full, .dflt = "drop", OPT_FIELD(struct load_opts, on_full), OPT_GIVEN(struct load_opts, on_full_set),
	  .help = "table and dense only: with both of a key's lines full of fresh\n"
		  "entries, drop the packet (never a false pass) or evict\n"
		  "the oldest entry (no false drop but fingerprint collisions)" },
	{ .name = "reserve-cells", .type = OPT_U64, .flags = OPT_POW2, .arg = "N", .min = 1024,
	  .max = 1u << PACER_BUDGET_MAX_SEEN_LOG2, .dflt = "262144",
	  OPT_FIELD(struct load_opts, reserve_cells),
	  .help = "returning-source filter cells (2 bytes each), power of two" },
	{ .name = "rows", .type = OPT_U32, .flags = LOAD_FIXED, .arg = "D", .min = 1,
	  .max = PACER_MAX_ROWS, .dflt = PACER_DEFAULT_ROWS_TEXT, OPT_FIELD(struct load_opts, rows),
	  OPT_GIVEN(struct load_opts, rows_set), .help = "sketch rows" },
	{ .name = "width", .type = OPT_U64, .flags = LOAD_FIXED, .arg = "W",
	  .min = PACER_MIN_WIDTH, .max = PACER_MAX_WIDTH, .dflt = PACER_DEFAULT_WIDTH_TEXT,
	  OPT_FIELD(struct load_opts, width),
	  .help = "sketch: cells per row, power of two, >= 64, 1 byte each;\n"
		  "table: entries, power of two, 64..268435456, 4 bytes each;\n"
		  "dense: entries, any number 64..402653184, rounded up to whole\n"
		  "lines of 24, 64 bytes a line" },
	{ .name = "layout", .type = OPT_ENUM, .flags = LOAD_FIXED, .arg = "rows|blocked",
	  .lookup = parse_layout, .dflt = "rows", OPT_FIELD(struct load_opts, kind),
	  OPT_GIVEN(struct load_opts, layout_set),
	  .help = "rows: each row its own array (a cache line per row);\n"
		  "blocked: a key's cells share one cache line (rows must be a power of two)" },
	{ .name = "placement", .type = OPT_ENUM, .flags = LOAD_FIXED, .arg = "auto|percpu|shared",
	  .lookup = parse_placement_opt, .dflt = "auto", OPT_FIELD(struct load_opts, placement),
	  .help = "percpu: one sketch per CPU, exact per source only\n"
		  "where the NIC's RSS hash sends all of a source's packets to\n"
		  "one CPU; shared: one sketch for all CPUs, exact everywhere;\n"
		  "auto: percpu where the RSS hash (ethtool rx-flow-hash)\n"
		  "or a single RX queue makes it exact and it is the cheaper\n"
		  "(one receiving CPU, or the receiving CPUs' copies within\n"
		  "1/32 of the last-level cache), else shared" },
	{ .name = "tick", .type = OPT_DURATION, .flags = LOAD_FIXED, .arg = "DUR",
	  .max = PACER_TICK_MAX_NS, OPT_FIELD(struct load_opts, tick_ns),
	  .help = "clock quantum, rounded down to a power of two ns, at most 2^40 ns\n"
		  "(default: interval/47 rounded up; with --rate N/T, N > 1, the\n"
		  "coarsest that delivers 99.5 % of N/T and holds the burst);\n"
		  "sets the live interval and rate range" },
	{ .name = "clock", .type = OPT_ENUM, .flags = LOAD_FIXED, .arg = "cached|coarse|precise",
	  .lookup = parse_clock, .dflt = "cached", OPT_FIELD(struct load_opts, clock),
	  OPT_GIVEN(struct load_opts, clock_set),
	  .help = "datapath clock: cached: the coarse clock\n"
		  "refreshed by a BPF timer, no helper call per packet;\n"
		  "coarse: bpf_ktime_get_coarse_ns per packet; precise: bpf_ktime_get_ns" },
	{ .name = "xdp-mode", .type = OPT_ENUM, .flags = LOAD_FIXED, .choices = mode_choices,
	  .dflt = "native", OPT_FIELD(struct load_opts, mode), OPT_GIVEN(struct load_opts, mode_set),
	  .help = "XDP attach mode ('--mode native|skb' still sets it: its\n"
		  "spelling before --mode took enforce|observe)" },
	{ .name = "priority", .type = OPT_U32, .flags = LOAD_FIXED, .arg = "N", .min = 0,
	  .max = UINT32_MAX, .dflt = PACER_DEFAULT_RUN_PRIO_TEXT,
	  OPT_FIELD(struct load_opts, priority), OPT_GIVEN(struct load_opts, priority_set),
	  .help = "place in libxdp's dispatcher beside other XDP programs\n"
		  "(lower runs first): the default runs after xdp-filter (10)\n"
		  "and before programs at libxdp's default (50); a packet the\n"
		  "limiter drops reaches no later program, one it passes does" },
	{ .type = OPT_SECTION, .help = "What comes before (docs/operating.md, Restart, upgrade and purge):" },
	{ .name = "replace", .type = OPT_BOOL, OPT_FIELD(struct load_opts, replace),
	  .help = "a limiter runs on IFNAME: put this one in its place at\n"
		  "once, keeping its maps (the sources' state, the lists and\n"
		  "their added entries, the counters, the live settings the\n"
		  "options do not give); in libxdp's dispatcher, in its place\n"
		  "beside the same neighbours; IFNAME is never without a limiter.\n"
		  "A load keeps the pins of a stopped limiter the same way" },
	{ .name = "reset-state", .type = OPT_BOOL, OPT_FIELD(struct load_opts, reset_state),
	  .help = "start the sources' state afresh where the options change\n"
		  "the geometry or backend (else refused); the lists, counters\n"
		  "and settings are kept all the same" },
	{ .type = OPT_SECTION, .help = "" },
	{ .name = "config", .type = OPT_CUSTOM, .arg = "FILE", .parse = config_again,
	  .help = "read options from FILE: 'key = value' lines with the option\n"
		  "names above ('interval = 250ms'); '#' comments; options on\n"
		  "the command line override the file; then sections [class NAME],\n"
		  "[exempt], [deny] (example.conf, docs/operating.md)" },
	{ 0 },
};

static const struct opt_verb load_verb = {
	.name = "load",
	.synopsis = "IFNAME [OPTIONS]",
	.intro = "Attach the limiter to IFNAME and pin its maps under\n"
		 PACER_PIN_ROOT "/netns-INODE/IFNAME (INODE: this network namespace's).\n",
	.args = "an interface name",
	.opts = load_specs,
};

static int parse_opts(int argc, char **argv, struct load_opts *o)
{
	int err;

	memset(o, 0, sizeof(*o));
	err = parse_verb_opts(&load_verb, argc, argv, o);
	if (err)
		return err;
	if (!backend_of(o->backend)->sized_by_rows && (o->rows_set || o->layout_set))
		return conf_conflict("load", o->rows_set ? "rows" : "layout", "backend",
				     "--rows and --layout size the sketch; the tables take --width (entries) only");
	if (!backend_of(o->backend)->takes_on_full && o->on_full_set)
		return conf_conflict("load", "on-full", "backend",
				     "--on-full applies to --backend table and dense only");
	if (live_opts_conflict(&o->live))
		return conf_conflict("load", "interval", "rate", live_opts_conflict(&o->live));
	/*
	 * --mode native|skb: the attach mode's old spelling (a file's 'mode =
	 * native|skb' reads as xdp-mode): it overrides the file's xdp-mode, as
	 * the command line does, and conflicts with a different --xdp-mode.
	 */
	if (o->live.mode.attach_set) {
		uint32_t attach = o->live.mode.attach == 2 ? XDP_MODE_SKB : XDP_MODE_NATIVE;

		if (o->mode_set && o->mode != attach && cli_gives("xdp-mode"))
			return conf_conflict("load", "mode", "xdp-mode",
					     "--mode native|skb is the attach mode --xdp-mode sets: give one");
		o->mode = attach;
	}
	return 0;
}

/*
 * The layout of o's options with this placement: 0, or non-zero with why in
 * err (empty when already said).  With classes that pace, the tick is the
 * one every class's limit and the global one fit (classes_cli.h); the
 * global limit then takes the classes' range.
 */
static int layout_of(const struct load_opts *o, const struct class_conf *cc, uint32_t placement,
		     struct pacer_layout *lay, struct pacer_rate *rate, char *err, size_t len)
{
	struct layout_req r = {
		.tick_ns = o->tick_ns, .width = o->width,
		.rows = o->rows, .kind = o->kind, .placement = placement, .clock = o->clock,
		.backend = o->backend, .on_full = o->on_full, .ncpus = (uint32_t)num_cpus(),
	};

	live_opts_rate(&o->live, &r.rate_n, &r.interval_ns);
	if (cc && classes_pace(cc) && backend_of(o->backend)) {
		uint32_t shift;

		if (classes_choose_tick(cc, r.rate_n, r.interval_ns, o->tick_ns, o->backend, &shift)) {
			err[0] = 0;
			return 2;
		}
		r.tick_ns = 1ULL << shift;
		r.wide_limit = 1;
	}
	return layout_build(&r, lay, rate, err, len);
}

static int build_layout(const struct load_opts *o, const struct class_conf *cc,
			struct pacer_layout *lay, struct pacer_rate *rate)
{
	char err[256];

	if (!layout_of(o, cc, o->placement, lay, rate, err, sizeof(err)))
		return 0;
	if (err[0])
		pr_err("%s", err);
	return 2;
}

/* The budget's live configuration (with the filter's size); 0 or 2 (said why). */
static int build_budget(const struct load_opts *o, struct pacer_budget_cfg *cfg)
{
	struct pacer_budget_cfg cur = { .seen_cells_log2 = (uint32_t)log2_exact(o->reserve_cells) };
	char e[256];

	*cfg = cur;
	if (budget_opts_any(&o->budget) && budget_apply(&o->budget, &cur, cfg, e, sizeof(e))) {
		pr_err("%s", e);
		return 2;
	}
	return 0;
}

/* MemAvailable from /proc/meminfo, or 0 if unknown. */
static uint64_t mem_available(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/*
 * The kernel would try to allocate any size asked for (per-CPU arrays one
 * element at a time), so refuse up front what cannot reasonably fit.
 */
static int check_memory(const struct load_opts *o, const struct pacer_layout *lay)
{
	uint64_t copies = lay->copies;
	uint64_t bytes = PACER_LAYOUT_LINES(*lay) *
			 PACER_LINE_BYTES * copies;
	uint64_t avail = mem_available();
	char a[32], b[32];

	if (avail && bytes > avail / 2) {
		pr_err("a %s of %u rows x width %llu%s needs %s, more than half the memory available (%s); choose a smaller --width or --rows",
		       backend_name(lay->backend), lay->rows, (unsigned long long)o->width,
		       copies > 1 ? " on every CPU" : "", format_bytes(bytes, a, sizeof(a)),
		       format_bytes(avail, b, sizeof(b)));
		return 2;
	}
	return 0;
}

/* Sets *created once this run made dir: only then is it this run's to remove. */
static int pin_all(struct xdp_pacer_bpf *skel, const char *dir, bool *created)
{
	struct bpf_map *maps[PACER_MAP_MAX] = {
		[PACER_MAP_SK] = skel->maps.pacer_sk,
		[PACER_MAP_STATS] = skel->maps.pacer_stats,
		[PACER_MAP_EVENTS] = skel->maps.pacer_events,
		[PACER_MAP_DATA] = skel->maps.data,
		[PACER_MAP_RODATA] = skel->maps.rodata,
		[PACER_MAP_CLOCK] = skel->maps.pacer_clock,
		[PACER_MAP_BUDGET] = skel->maps.pacer_budget,
		[PACER_MAP_BUDGET_CFG] = skel->maps.data_budget,
		[PACER_MAP_SEEN] = skel->maps.pacer_seen,
		[PACER_MAP_CLASSES] = skel->maps.pacer_classes,
		[PACER_MAP_CLASS_STATS] = skel->maps.pacer_class_stats,
		[PACER_MAP_LIST4] = skel->maps.pacer_list4,
		[PACER_MAP_LIST6] = skel->maps.pacer_list6,
		[PACER_MAP_LIST_FILTER] = skel->maps.pacer_list_filter,
		[PACER_MAP_CLS_SETS] = skel->maps.pacer_cls_sets,
		[PACER_MAP_CLS_PORTS] = skel->maps.pacer_cls_ports,
		[PACER_MAP_CLS_ADDRS] = skel->maps.pacer_cls_addrs,
		[PACER_MAP_CLS_VLAN] = skel->maps.pacer_cls_vlan,
		[PACER_MAP_VARIANT] = skel->maps.rodata_variant,
	};
	char path[300], eb[128], *slash;
	int i, err;

	snprintf(path, sizeof(path), "%s", dir);
	slash = strrchr(path, '/');
	*slash = 0;
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700))
		return -errno;
	*created = true;
	for (i = 0; i < PACER_MAP_MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pacer_maps[i].pin_name);
		err = bpf_obj_pin(bpf_map__fd(maps[i]), path);
		if (err) {
			pr_err("cannot pin %s: %s", path, err_str(err, eb, sizeof(eb)));
			return err;
		}
	}
	snprintf(path, sizeof(path), "%s/prog", dir);
	err = bpf_obj_pin(bpf_program__fd(skel->progs.xdp_pacer), path);
	if (err)
		pr_err("cannot pin %s: %s", path, err_str(err, eb, sizeof(eb)));
	return err;
}

/* Which attach path libxdp took: its dispatcher, or a plain single program. */
static const char *attach_kind(int ifindex)
{
	struct xdp_chain c;

	if (xdp_chain_read(ifindex, &c) || !c.nprogs)
		return "unknown";
	return c.dispatcher ? "libxdp dispatcher"
			    : "single program (libxdp's dispatcher is not available on this kernel)";
}

/* In a dispatcher: the limiter's place among its neighbours, in run order. */
static void report_chain(int ifindex)
{
	char acts[64], line[1024] = "";
	struct xdp_chain c;
	int i;

	if (xdp_chain_read(ifindex, &c) || !c.dispatcher)
		return;
	for (i = 0; i < c.nprogs; i++) {
		size_t used = strlen(line);

		snprintf(line + used, sizeof(line) - used, "%s%d. %s%s (id %u, priority %u, on to the next on %s)",
			 i ? "; " : "", i + 1, c.progs[i].name,
			 strcmp(c.progs[i].name, PACER_PROG_NAME) ? "" : " [this limiter]", c.progs[i].id,
			 c.progs[i].priority,
			 xdp_chain_actions_str(c.progs[i].chain_actions, acts, sizeof(acts)));
	}
	pr_info("  chain: program %d of %d in libxdp's dispatcher (id %u), in run order: %s",
		xdp_chain_find(&c, PACER_PROG_NAME) + 1, c.nprogs, c.dispatcher_id, line);
}

/* Which placement, who chose it, whether per-CPU placement is exact here, and which costs less. */
static void report_placement(uint32_t placement, const char *lead, const struct rss_verdict *v,
			     const struct place_cost_verdict *cost)
{
	/* Shared where per-CPU would cost less: exactness comes first, said as such. */
	if (placement == PACER_PLACEMENT_SHARED && !v->exact && cost->percpu_cheaper)
		pr_info("  placement shared (%s): %s; shared placement is exact whichever CPU receives, "
			"and exactness comes before cost: per-CPU would be cheaper here (%s)",
			lead, v->text, cost->reason);
	else
		pr_info("  placement %s (%s): %s%s; %s", placement_name(placement), lead, v->text,
			placement == PACER_PLACEMENT_SHARED && !v->exact
				? "; shared placement is exact whichever CPU receives"
				: "",
			cost->text);
}

/*
 * Per-CPU placement's cost against shared on this machine: the copies the
 * receiving CPUs (ifname's RX queues, at most the online CPUs) would touch
 * against the last-level cache.  A geometry load refuses leaves the copy's
 * bytes 0: build_layout() then refuses the load, saying why.
 */
static void judge_cost(const struct load_opts *o, const struct rss_verdict *v,
		       struct place_cost_verdict *cost)
{
	struct place_cost c = { 0 };
	struct pacer_layout lay;
	struct pacer_rate rate;
	char err[256];

	if (!layout_of(o, NULL, PACER_PLACEMENT_SHARED, &lay, &rate, err, sizeof(err)))
		c.copy_bytes = PACER_LAYOUT_LINES(lay) * PACER_LINE_BYTES;
	c.receiving_cpus = place_receiving_cpus(v->rx_queues, sysconf(_SC_NPROCESSORS_ONLN));
	c.cache_bytes = place_cache_bytes("/sys/devices/system/cpu/cpu0/cache", &c.cache_level);
	place_cost_judge(&c, cost);
}

/*
 * Read the RSS verdict for ifname and the cost of per-CPU placement;
 * --placement auto becomes per-CPU where it is exact and cheaper, shared
 * otherwise.  True if it was auto.
 */
static bool resolve_placement(struct load_opts *o, const char *ifname, struct rss_verdict *v,
			      struct place_cost_verdict *cost)
{
	rss_verdict_for(ifname, o->mode == XDP_MODE_SKB, o->live.prefix4, o->live.prefix6, v);
	judge_cost(o, v, cost);
	if (o->placement != LOAD_PLACEMENT_AUTO)
		return false;
	o->placement = place_auto(v->exact, cost);
	return true;
}

static void add_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
}

int load_check_fixed(int argc, char **argv, const struct class_conf *cls,
		     const struct pacer_layout *running, int running_seen_log2,
		     int64_t running_prio, char *differ, size_t len)
{
	struct place_cost_verdict cost;
	struct rss_verdict rss;
	struct load_opts o;
	struct pacer_layout lay;
	struct pacer_rate rate;
	int err;

	err = parse_opts(argc, argv, &o);
	if (!err) {
		resolve_placement(&o, o.ifname, &rss, &cost); /* what a load would pick now */
		err = build_layout(&o, cls, &lay, &rate);
	}
	if (err)
		return 2;
	differ[0] = 0;
	if (lay.rows != running->rows)
		add_name(differ, len, "rows");
	if (lay.lines_log2 != running->lines_log2 || lay.lines != running->lines)
		add_name(differ, len, "width");
	if (lay.kind != running->kind)
		add_name(differ, len, "layout");
	if (lay.placement != running->placement)
		add_name(differ, len, "placement");
	if (lay.clock != running->clock)
		add_name(differ, len, "clock");
	if (lay.tick_shift != running->tick_shift)
		add_name(differ, len, "tick (set, or derived from the interval or rate)");
	if (lay.backend != running->backend)
		add_name(differ, len, "backend");
	if (lay.on_full != running->on_full)
		add_name(differ, len, "on-full");
	if (running_seen_log2 >= 0 && log2_exact(o.reserve_cells) != running_seen_log2)
		add_name(differ, len, "reserve-cells");
	/* A priority matters only inside a dispatcher; one attached alone has none. */
	if (running_prio >= 0 && o.priority != running_prio)
		add_name(differ, len, "priority");
	return 0;
}

static int load_main(int argc, char **argv, struct pacer_conf *conf);

int cmd_load(int argc, char **argv)
{
	struct pacer_conf conf;
	int err = conf_expand_argv(&argc, &argv, 0, &conf);

	if (!err)
		err = load_main(argc, argv, &conf);
	pacer_conf_free(&conf);
	return err;
}

/*
 * The newest of the kernel features the datapath needs, and what each
 * brought: bounded loops (5.3), mmapable arrays (5.5), ring buffers (5.8),
 * bpf_ktime_get_coarse_ns (5.11), atomic compare-and-swap and pointer
 * arguments of global functions (5.12), BPF timers (5.15).  The sentence
 * README.md states.
 */
#define PACER_MIN_KERNEL "Linux 5.15"

/*
 * Refuse a kernel that lacks what the datapath uses, naming the minimum,
 * rather than let libbpf fail on the first missing piece.  Probed, not read
 * from the version: distribution kernels (RHEL's 5.14) carry backports.
 */
static int check_kernel_features(void)
{
	static const struct {
		enum bpf_func_id helper;
		const char *what;
	} helpers[] = {
		{ BPF_FUNC_timer_init, "BPF timers in XDP programs" },
		{ BPF_FUNC_ktime_get_coarse_ns, "bpf_ktime_get_coarse_ns" },
		{ BPF_FUNC_ringbuf_reserve, "BPF ring buffers" },
		{ BPF_FUNC_spin_lock, "BPF spin locks" },
	};
	struct utsname u;
	char missing[256] = "";
	size_t i;

	for (i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++) {
		/* < 0: the probe itself failed (e.g. no permission): let the load say why. */
		if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, helpers[i].helper, NULL) == 0)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? ", " : "", helpers[i].what);
	}
	if (!*missing)
		return 0;
	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	pr_err("this kernel (Linux %s) is too old: xdp-pacer needs %s or later; it lacks %s",
	       u.release, PACER_MIN_KERNEL, missing);
	return -EOPNOTSUPP;
}

/* What runs on the interface before this load: no limiter, or one (in libxdp's dispatcher or alone). */
struct running {
	uint32_t id; /* the limiter's program id; 0: none */
	bool chained;
	uint32_t priority;
};

/*
 * Where the limiter can go on ifname: a free interface, or beside other
 * programs in libxdp's dispatcher (it joins it), or, with --replace, in
 * the place of the limiter running there.  Refused: another limiter
 * without --replace, a program attached on its own (libxdp cannot add to
 * it), a dispatcher in another mode or already full.
 */
static int check_interface(int ifindex, struct load_opts *o, struct running *run)
{
	const char *ifname = o->ifname;
	struct xdp_chain c;
	char eb[128];
	int err, i;

	memset(run, 0, sizeof(*run));
	err = xdp_chain_read(ifindex, &c);
	if (err) {
		pr_err("cannot read the XDP state of %s: %s", ifname, err_str(err, eb, sizeof(eb)));
		return err;
	}
	i = xdp_chain_find(&c, PACER_PROG_NAME);
	if (i >= 0 && !o->replace) {
		pr_err("%s already has xdp-pacer attached (program id %u%s); one limiter per interface: 'xdp-pacer load %s --replace ...' puts a new one in its place, keeping its state, or run 'xdp-pacer unload %s' first",
		       ifname, c.progs[i].id, c.dispatcher ? ", in libxdp's dispatcher" : "", ifname, ifname);
		return -EBUSY;
	}
	if (i >= 0) {
		/* A replace keeps the place: the mode and, in the dispatcher, the priority. */
		if (o->mode_set && o->mode != (uint32_t)c.mode) {
			pr_err("--xdp-mode %s: the limiter on %s runs in %s mode, which a replace keeps; unload and load to change it",
			       xdp_chain_mode_name((int)o->mode), ifname, xdp_chain_mode_name(c.mode));
			return -EINVAL;
		}
		if (c.dispatcher && o->priority_set && o->priority != c.progs[i].priority) {
			pr_err("--priority %u: the limiter on %s runs at priority %u in libxdp's dispatcher, which a replace keeps beside the same neighbours; unload and load to change it",
			       o->priority, ifname, c.progs[i].priority);
			return -EINVAL;
		}
		o->mode = (uint32_t)c.mode;
		o->priority = c.progs[i].priority;
		run->id = c.progs[i].id;
		run->chained = c.dispatcher;
		run->priority = c.progs[i].priority;
		return 0;
	}
	if (c.nprogs && !c.dispatcher) {
		pr_err("%s has XDP program id %u '%s' attached on its own, not through libxdp's dispatcher (attached by 'ip link', or by a libxdp loader that fell back to a single program because libxdp cannot build its dispatcher on this kernel); xdp-pacer can run beside other programs only in that dispatcher: detach it ('ip link set dev %s xdp off'), or load both through libxdp on a kernel where its dispatcher works (xdp-loader, xdp-filter; docs/operating.md, Sharing the interface)",
		       ifname, c.progs[0].id, c.progs[0].name, ifname);
		return -EBUSY;
	}
	if (c.dispatcher && c.mode != (int)o->mode) {
		pr_err("libxdp's dispatcher on %s runs in %s mode; the limiter can join it only in the same mode (--mode %s)",
		       ifname, xdp_chain_mode_name(c.mode), xdp_chain_mode_name(c.mode));
		return -EBUSY;
	}
	if (c.dispatcher && c.nprogs >= XDP_CHAIN_MAX) {
		pr_err("libxdp's dispatcher on %s already runs %d programs, its most; unload one first",
		       ifname, c.nprogs);
		return -EBUSY;
	}
	return 0;
}

/* The object's read-only layout, live configuration, hash key and map sizes, before load. */
static int configure_object(struct xdp_pacer_bpf *skel, const struct load_opts *o,
			    const struct pacer_layout *lay, const struct pacer_rate *rate,
			    const struct pacer_budget_cfg *bcfg)
{
	struct pacer_config *cfg = &skel->data->pacer_cfg;
	uint64_t lines = PACER_LAYOUT_LINES(*lay), interval_ns;
	char eb[128];
	int err;

	skel->rodata->pacer_layout = *lay;
	live_opts_rate(&o->live, &cfg->rate_n, &interval_ns);
	cfg->interval_ns = interval_ns;
	cfg->thresh_ticks = rate->thresh;
	cfg->burst_ticks = rate->burst;
	cfg->policy = o->live.policy;
	cfg->malformed = o->live.malformed;
	cfg->mode = o->live.mode.mode;
	cfg->deny_mode = o->live.deny_mode;
	cfg->prefix4 = o->live.prefix4;
	cfg->prefix6 = o->live.prefix6;
	if (getrandom(cfg->hash_key, sizeof(cfg->hash_key), 0) != sizeof(cfg->hash_key)) {
		err = -errno;
		pr_err("getrandom failed: %s", strerror(-err));
		return err;
	}
	cfg->hash_key[0] |= 1; /* zero words mean "draw a key in the datapath" */
	cfg->hash_key[1] |= 1;
	skel->data_budget->pacer_budget_cfg = *bcfg;
	err = bpf_map__set_max_entries(skel->maps.pacer_seen,
				       1u << ((uint32_t)log2_exact(o->reserve_cells) - 5 /* 32 cells a line */));
	if (err) {
		pr_err("cannot size the returning-source filter: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = bpf_map__set_max_entries(skel->maps.pacer_sk, (uint32_t)(lines * lay->copies));
	if (err)
		pr_err("cannot size the sketch map: %s", err_str(err, eb, sizeof(eb)));
	return err;
}

/*
 * The verifier's messages and statistics for the last load of the program
 * (BPF_LOG_STATS: no trace, so the buffer stays small whatever the size of
 * the program); what a failure is explained from.  With -vv, its whole
 * trace (level 1), which needs far more room.
 */
#define VERIFIER_LOG_BYTES (64 * 1024)
#define VERIFIER_TRACE_BYTES (256u << 20)
static char *verifier_log;

/* Why the kernel refused the program, in one line, if its verifier said: 0, else -1. */
static int explain_load_failure(const char *ifname)
{
	char cause[512];

	if (prog_refusal_cause(verifier_log, cause, sizeof(cause)))
		return -1;
	pr_err("cannot load the limiter for %s: %s%s", ifname, cause,
	       verbose ? "" : " (-v shows the verifier's messages, -vv its whole log)");
	if (verbose)
		fprintf(stderr, "xdp-pacer: the verifier's log:\n%s", verifier_log);
	return 0;
}

/*
 * Open and configure the object, give it what the earlier load kept (keep,
 * if any) or let preload fill its maps, and set up the verifier's log.
 */
static int open_object(const struct load_opts *o, const struct pacer_layout *lay,
		       const struct pacer_rate *rate, const struct pacer_budget_cfg *bcfg,
		       struct pin_keep *keep, bool keep_state,
		       int (*preload)(struct xdp_pacer_bpf *skel, void *arg), void *preload_arg,
		       struct xdp_pacer_bpf **skel)
{
	char eb[128];
	int err;

	*skel = xdp_pacer_bpf__open();
	if (!*skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = configure_object(*skel, o, lay, rate, bcfg);
	/* After configure: a carried configuration overwrites the options' image. */
	if (!err && keep->have)
		err = pin_keep_plan(keep, (*skel)->obj, keep_state);
	else if (!err && preload)
		err = preload(*skel, preload_arg);
	if (err)
		return err;
	verifier_log = calloc(1, verbose >= 2 ? VERIFIER_TRACE_BYTES : VERIFIER_LOG_BYTES);
	if (!verifier_log) {
		pr_err("out of memory for the verifier's log");
		return -ENOMEM;
	}
	prog_load_prepare((*skel)->progs.xdp_pacer, verifier_log,
			  verbose >= 2 ? VERIFIER_TRACE_BYTES : VERIFIER_LOG_BYTES,
			  VERIFIER_LOG_STATS | (verbose >= 2 ? 1 : 0));
	return 0;
}

static void debug_verifier_work(void)
{
	uint64_t processed, limit;

	if (!verifier_log_processed(verifier_log, &processed, &limit))
		pr_debug("the verifier processed %llu instructions (limit %llu)",
			 (unsigned long long)processed, (unsigned long long)limit);
}

/* Load and attach the opened object through libxdp (which loads on attach). */
static int attach_object(const struct load_opts *o, struct xdp_pacer_bpf *skel, int ifindex,
			 struct xdp_program **prog)
{
	char eb[128];
	int err;

	*prog = xdp_program__from_bpf_obj(skel->obj, "xdp");
	err = (int)libxdp_get_error(*prog);
	if (err) {
		*prog = NULL;
		pr_err("libxdp cannot use the BPF object: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	/* Its place in a dispatcher: the object declares the default, --priority overrides it. */
	err = xdp_program__set_run_prio(*prog, o->priority);
	if (err) {
		pr_err("libxdp cannot set the priority %u: %s", o->priority, err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = xdp_program__attach(*prog, ifindex, o->mode, 0);
	if (err) {
		/* Never loaded, and the verifier said why: that is the error, not the attach's errno. */
		if (xdp_program__fd(*prog) < 0 && !explain_load_failure(o->ifname))
			return err;
		pr_err("cannot attach to %s in %s mode: %s%s", o->ifname,
		       o->mode == XDP_MODE_SKB ? "skb" : "native", err_str(err, eb, sizeof(eb)),
		       verbose ? "" : " (-v shows the loader's log)");
		return err;
	}
	debug_verifier_work();
	return 0;
}

/*
 * Put the opened object in the place of the running limiter run->id
 * (xdp_replace.h); the maps it carries over are filled between its load
 * and the swap, so it judges with them from its first packet.
 */
static int carry_before_swap(struct bpf_object *obj, void *arg)
{
	return pin_keep_carry(arg, obj);
}

static int replace_object(const struct load_opts *o, struct xdp_pacer_bpf *skel, int ifindex,
			  const struct running *run, struct pin_keep *keep, uint32_t *new_id)
{
	int new_fd = -1, err;

	err = xdp_replace_program(ifindex, run->id, skel->obj, skel->progs.xdp_pacer,
				  carry_before_swap, keep, &new_fd, new_id);
	if (err) {
		/* Refused by the verifier: say why in its words, as a load would. */
		if (bpf_program__fd(skel->progs.xdp_pacer) < 0)
			explain_load_failure(o->ifname);
		pr_err("the limiter on %s is unchanged (program id %u)", o->ifname, run->id);
		return err;
	}
	debug_verifier_work();
	return 0;
}

/* What is now attached to ifname, and its geometry. */
static void report_attached(const struct load_opts *o, const struct pacer_layout *lay,
			    int ifindex, uint32_t prog_id, bool replaced)
{
	uint64_t bytes = PACER_LAYOUT_LINES(*lay) *
			 PACER_LINE_BYTES * lay->copies;
	const char *over = o->placement == PACER_PLACEMENT_PERCPU ? " over all CPUs" : "";
	const struct backend_desc *d = backend_of(lay->backend);
	char mb[32], shape[96];

	pr_info("xdp-pacer: %s %s (ifindex %d) in %s mode as %s, program id %u",
		replaced ? "replaced the limiter on" : "attached to", o->ifname, ifindex,
		o->mode == XDP_MODE_SKB ? "skb" : "native", attach_kind(ifindex), prog_id);
	report_chain(ifindex);
	pr_info("  %s: %s, %s (%s%s)", d->name,
		d->live_str(lay->rows, lay->kind, lay->lines_log2, lay->lines, lay->on_full, shape,
			    sizeof(shape)),
		placement_name(lay->placement), format_bytes(bytes, mb, sizeof(mb)), over);
}

/* The live settings (as the program reads them) and where the pins are. */
static void report_live(const struct pacer_layout *lay,
			const struct pacer_config *cfg, const struct pacer_budget_cfg *bcfg,
			const char *dir)
{
	char ib[256], tb[32], bb[256];

	if (cfg->rate_n > 1)
		pr_info("  %s, policy %s, tick %s, clock %s",
			rate_describe(cfg, lay->tick_shift, ib, sizeof(ib)), policy_name(cfg->policy),
			format_duration(pacer_tick_ns(lay->tick_shift), tb, sizeof(tb)), clock_name(lay->clock));
	else
		pr_info("  interval %s, policy %s, tick %s (threshold %u ticks), clock %s",
			format_duration(cfg->interval_ns, ib, sizeof(ib)), policy_name(cfg->policy),
			format_duration(pacer_tick_ns(lay->tick_shift), tb, sizeof(tb)), cfg->thresh_ticks,
			clock_name(lay->clock));
	pr_info("  budget: %s", budget_describe(bcfg, bb, sizeof(bb)));
	pr_info("  pins: %s", dir);
}

/* The stages the program carries, and why (variant_swap.h). */
static void report_stages(const char *ifname)
{
	struct pacer_handle h;
	char buf[256];

	if (pacer_handle_open(ifname, &h))
		return;
	pr_info("  stages: %s", variant_explain(&h, buf, sizeof(buf)));
	pacer_handle_close(&h);
}

/*
 * The class and list maps of the loaded object, for classes_map.h, with
 * the live configuration mapped from the kernel's map (libxdp loaded the
 * object, so skel->data is still the image load started from, as
 * pacer_handle.c maps it for set).  0 or -errno.
 */
static int class_maps_of_skel(const struct xdp_pacer_bpf *skel, uint32_t backend,
			      struct pacer_class_maps *m)
{
	void *cfg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(skel->maps.data), 0);
	int fd[PACER_MAP_MAX], i;

	if (cfg == MAP_FAILED) {
		m->cfg = NULL;
		pr_err("cannot map the live configuration: %s", strerror(errno));
		return -errno;
	}
	/* By the names pins.c keeps, as pacer_handle finds them: one list of the maps. */
	for (i = 0; i < PACER_MAP_MAX; i++) {
		const struct bpf_map *map = bpf_object__find_map_by_name(skel->obj, pacer_maps[i].map_name);

		fd[i] = map ? bpf_map__fd(map) : -1;
	}
	pacer_class_maps_set_fds(m, fd);
	m->cfg = cfg;
	m->backend = backend;
	m->ncpus = libbpf_num_possible_cpus();
	return 0;
}

/*
 * The class and list maps, made here and filled before the object loads
 * (libbpf then takes them instead of making its own), with class_sel and
 * list_sel written into the object's initial .data: the program runs its
 * classes and lists from its first packet, never classless for the moment
 * an attach takes.
 */
struct class_preload {
	const struct class_conf *cc;
	struct pacer_class *want;
	uint32_t backend;
};

static int premade_map(struct bpf_map *map, const char *name, int *fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts);
	int err;

	if (!map) {
		pr_err("the BPF object has no map %s", name);
		return -ENOENT;
	}
	opts.map_flags = bpf_map__map_flags(map);
	*fd = bpf_map_create(bpf_map__type(map), bpf_map__name(map), bpf_map__key_size(map),
			     bpf_map__value_size(map), bpf_map__max_entries(map), &opts);
	if (*fd < 0) {
		err = -errno;
		pr_err("cannot make the map %s: %s", bpf_map__name(map), strerror(-err));
		return err;
	}
	err = bpf_map__reuse_fd(map, *fd);
	if (err)
		pr_err("cannot give the map %s to the object: %s", bpf_map__name(map), strerror(-err));
	return err;
}

static int preload_classes(struct xdp_pacer_bpf *skel, void *arg)
{
	static const enum pacer_map_id ids[] = {
		PACER_MAP_CLASSES, PACER_MAP_CLASS_STATS, PACER_MAP_CLS_SETS, PACER_MAP_CLS_PORTS,
		PACER_MAP_CLS_ADDRS, PACER_MAP_CLS_VLAN,
		PACER_MAP_LIST4, PACER_MAP_LIST6, PACER_MAP_LIST_FILTER,
	};
	const struct class_preload *pl = arg;
	struct pacer_class_maps m = { .cfg = &skel->data->pacer_cfg, .backend = pl->backend,
				      .ncpus = libbpf_num_possible_cpus() };
	int fd[PACER_MAP_MAX], err = 0;
	size_t i;

	for (i = 0; i < PACER_MAP_MAX; i++)
		fd[i] = -1;
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]) && !err; i++)
		err = premade_map(bpf_object__find_map_by_name(skel->obj, pacer_maps[ids[i]].map_name),
				  pacer_maps[ids[i]].map_name, &fd[ids[i]]);
	pacer_class_maps_set_fds(&m, fd);
	if (!err && classes_install(&m, pl->cc, pl->want))
		err = -EINVAL;
	/* The object holds its own references now (or the load fails anyway). */
	for (i = 0; i < PACER_MAP_MAX; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return err;
}

/*
 * Settings the options leave to load's choice take the earlier load's, so
 * that a replace or a restart keeps the state: its placement and clock,
 * and its tick where the rate fits it.
 */
static void inherit_layout(struct load_opts *o, const struct pacer_layout *was,
			   const struct class_conf *cc)
{
	struct pacer_layout lay;
	struct pacer_rate rate;
	char err[256];

	if (o->placement == LOAD_PLACEMENT_AUTO)
		o->placement = was->placement;
	if (!o->clock_set)
		o->clock = was->clock;
	if (!o->tick_ns && was->tick_shift <= PACER_TICK_SHIFT_MAX) {
		o->tick_ns = 1ULL << was->tick_shift;
		if (layout_of(o, cc, o->placement, &lay, &rate, err, sizeof(err)))
			o->tick_ns = 0; /* the rate does not fit it: the tick load would derive */
	}
}

/*
 * The earlier load's rate and prefixes where the options give none: the
 * layout is fitted to that rate and the classes' keys default to those
 * prefixes, as they run now (a replace applies only what it is given).
 */
static void inherit_live(struct load_opts *o, int data_fd)
{
	struct pacer_config c;
	uint32_t size;

	if (data_fd < 0 || map_read_first(data_fd, &c, sizeof(c), &size) || size < sizeof(c))
		return;
	if (!o->live.interval_set && !o->live.rate_set && c.interval_ns) {
		if (c.rate_n > 1) {
			o->live.rate.n = c.rate_n;
			o->live.rate.interval_ns = c.interval_ns;
			o->live.rate_set = true;
		} else {
			o->live.interval_ns = c.interval_ns;
		}
	}
	if (!o->live.prefix4_set)
		o->live.prefix4 = c.prefix4;
	if (!o->live.prefix6_set)
		o->live.prefix6 = c.prefix6;
}

/*
 * What came before this load: the running limiter's maps (--replace), or
 * the pins a stopped one left.  0 or -errno after saying why.
 */
static int find_earlier(const struct running *run, const char *dir, struct pin_keep *keep,
			char *source, size_t len)
{
	char eb[128];
	int fd, err;

	if (!run->id) {
		uint64_t here = netns_cookie_self();

		snprintf(source, len, "the stopped limiter's pins");
		err = pin_keep_from_dir(keep, dir);
		if (err || !keep->have || !keep->meta.netns_cookie || !here ||
		    keep->meta.netns_cookie == here)
			return err;
		/* A namespace that is gone left them under an inode this one has now. */
		pin_keep_close(keep);
		pr_err("removing the pins in %s: a network namespace that no longer exists made them (this one has its inode now)",
		       dir);
		err = pacer_remove_pin_dir(dir);
		if (err)
			pr_err("cannot remove the pins in %s: %s", dir, err_str(err, eb, sizeof(eb)));
		return err;
	}
	snprintf(source, len, "the running limiter (program id %u)", run->id);
	fd = bpf_prog_get_fd_by_id(run->id);
	if (fd < 0) {
		pr_err("cannot open the running limiter (program id %u): %s", run->id,
		       err_str(fd, eb, sizeof(eb)));
		return fd;
	}
	err = pin_keep_from_prog(keep, fd, dir);
	close(fd);
	if (!err && !keep->layout_ok) {
		pr_err("the running limiter (program id %u) has no layout this release reads (another ABI): unload it and load this one",
		       run->id);
		err = -EPROTO;
	}
	return err;
}

/*
 * The stages the earlier load's settings use (its live configuration,
 * budget and classes, read from its maps): PACER_VARIANT_ALL where they
 * cannot be read (every stage: never one too few).
 */
static uint32_t kept_stages(const struct pin_keep *k)
{
	struct pacer_config c;
	uint32_t size, bits;

	if (k->fd[PACER_MAP_DATA] < 0 || map_read_first(k->fd[PACER_MAP_DATA], &c, sizeof(c), &size) ||
	    size < sizeof(c) || variant_in_use_of(k->fd, &c, &bits))
		return PACER_VARIANT_ALL;
	return bits;
}

/*
 * The variant the new program is built as: a fresh load's settings are in
 * the object's images; a replace or resumed load carries the earlier
 * settings and applies the options after the swap, so it takes the stages
 * of both (apply_given settles to what is used then).
 */
static uint32_t load_stages(const struct xdp_pacer_bpf *skel, const struct pin_keep *k,
			    const struct load_opts *o, const struct class_conf *cc,
			    const struct pacer_class *want, const struct pacer_budget_cfg *bcfg)
{
	const struct pacer_config *c = &skel->data->pacer_cfg;

	if (k->have)
		return kept_stages(k) | change_stages(&o->live, &o->budget, cc) | variant_floor();
	return variant_needed(c, bcfg->limit, want, (int)PACER_CLASS_SEL_COUNT(c->class_sel)) |
	       variant_floor();
}

/*
 * The options given to a replace or a resumed load, applied to the running
 * program's kept settings (the rest stay as they were): the live words,
 * the rate, the budget, the classes and lists given.  0 or 1 (said why).
 */
static int apply_given(const struct load_opts *o, struct class_conf *cc,
		       const struct pacer_layout *lay, const struct pacer_rate *rate,
		       struct pacer_class *want, struct pacer_class_maps *cmaps)
{
	struct pacer_handle h;
	int err = 0;

	if (pacer_handle_open(o->ifname, &h))
		return 1;
	if (o->live.interval_set || o->live.rate_set) {
		uint64_t interval_ns;
		uint32_t n;

		live_opts_rate(&o->live, &n, &interval_ns);
		live_apply_rate(h.cfg, n, interval_ns, rate);
	}
	live_apply_words(h.cfg, &o->live);
	if (budget_opts_any(&o->budget))
		err = budget_set(&h, &o->budget, NULL);
	if (!err && (cc->classes_given || cc->exempt.given || cc->deny.given))
		err = classes_install(cmaps, cc, want) ? -EINVAL : 0;
	/* The stages the earlier settings used and the options turned off leave the program. */
	if (!err)
		variant_settle(&h);
	(void)lay;
	pacer_handle_close(&h);
	return err ? 1 : 0;
}

static int read_budget_cfg(int fd, struct pacer_budget_cfg *out)
{
	uint32_t zero = 0;

	return bpf_map_lookup_elem(fd, &zero, out) ? -errno : 0;
}

static int load_main(int argc, char **argv, struct pacer_conf *conf)
{
	struct pacer_class want[PACER_MAX_CLASSES];
	struct pacer_class_maps cmaps = { .cfg = NULL };
	struct class_conf *cc = NULL;
	struct class_preload pl;
	struct load_opts o;
	struct xdp_pacer_bpf *skel = NULL;
	struct xdp_program *prog = NULL;
	struct pacer_layout lay;
	struct place_cost_verdict cost;
	struct rss_verdict rss;
	struct pin_keep keep;
	struct running run = { 0 };
	bool auto_placement, keep_state = true, placement_kept;
	struct pacer_budget_cfg bcfg;
	const char *ifname;
	char dir[256], eb[128], source[128], differ[320];
	struct pacer_rate rate;
	uint32_t prog_id = 0;
	int ifindex, err, lock_fd = -1, writer_fd = -1;
	bool attached = false, created_dir = false;

	pin_keep_init(&keep);
	err = parse_opts(argc, argv, &o);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	ifname = o.ifname;
	err = classes_merge(conf, &o.cls, &cc);
	if (err)
		goto out_classes;
	/* A file holds the whole of the classes and lists, as set --config takes it. */
	if (conf->path && conf->cls)
		conf->cls->classes_given = conf->cls->exempt.given = conf->cls->deny.given = true;
	err = 1;
	if (ifname_to_index(ifname, &ifindex))
		goto out_classes;
	if (pin_dir(ifname, dir, sizeof(dir))) {
		pr_err("cannot name the pin directory of %s in this network namespace", ifname);
		goto out_classes;
	}
	if (check_kernel_features() || ensure_bpffs())
		goto out_classes;
	/* Writers of this interface's pacer wait for the load (writer_lock.h). */
	writer_fd = pins_writer_lock(ifname, PACER_LOCK_WAIT_DEFAULT_S);
	if (writer_fd < 0)
		goto out_classes;
	/* A concurrent load of the same interface waits here, then finds it busy. */
	lock_fd = pins_lock();
	if (lock_fd < 0) {
		pr_err("cannot lock %s: %s", PACER_PIN_ROOT, strerror(-lock_fd));
		goto out;
	}
	err = check_interface(ifindex, &o, &run);
	if (!err)
		err = find_earlier(&run, dir, &keep, source, sizeof(source));
	if (err)
		goto out;
	if (keep.have)
		inherit_live(&o, keep.fd[PACER_MAP_DATA]);
	placement_kept = keep.have && keep.layout_ok && o.placement == LOAD_PLACEMENT_AUTO;
	if (keep.have && keep.layout_ok)
		inherit_layout(&o, &keep.layout, cc);
	auto_placement = resolve_placement(&o, ifname, &rss, &cost);
	err = build_layout(&o, cc, &lay, &rate);
	if (!err)
		err = classes_build(cc, lay.tick_shift, lay.backend, o.live.prefix4, o.live.prefix6,
				    NULL, want);
	if (!err)
		err = check_memory(&o, &lay);
	if (!err)
		err = build_budget(&o, &bcfg);
	if (err)
		goto out;
	warn_coarse_clock(&o.live, lay.clock);
	if (keep.have) {
		pin_keep_state_differs(&keep, &lay, differ, sizeof(differ));
		if (differ[0] && !o.reset_state) {
			pr_err("the options change what the sources' state of %s means: %s; --reset-state starts that state afresh (keeping the lists' %llu added entries, the counters and the settings), or give the earlier values",
			       source, differ, (unsigned long long)(keep.added4 + keep.added6));
			err = 2;
			goto out;
		}
		keep_state = !differ[0] && !o.reset_state;
	}
	pl.cc = cc;
	pl.want = want;
	pl.backend = lay.backend;
	err = open_object(&o, &lay, &rate, &bcfg, &keep, keep_state, preload_classes, &pl, &skel);
	if (err)
		goto out;
	skel->rodata_variant->pacer_variant = load_stages(skel, &keep, &o, cc, want, &bcfg);
	if (run.id) {
		err = replace_object(&o, skel, ifindex, &run, &keep, &prog_id);
		if (err)
			goto out;
	} else {
		err = attach_object(&o, skel, ifindex, &prog);
		if (err)
			goto out;
		attached = true;
		prog_id = xdp_program__id(prog);
		if (keep.have)
			err = pin_keep_carry(&keep, skel->obj);
		if (err)
			goto out;
	}
	err = class_maps_of_skel(skel, lay.backend, &cmaps);
	if (err)
		goto out;
	if (keep.have) {
		err = pin_keep_pin(skel->obj, bpf_program__fd(skel->progs.xdp_pacer), dir, pacer_version);
		if (!err)
			err = apply_given(&o, cc, &lay, &rate, want, &cmaps);
	} else {
		err = pin_all(skel, dir, &created_dir);
		if (!err)
			err = pin_keep_pin(skel->obj, bpf_program__fd(skel->progs.xdp_pacer), dir, pacer_version);
	}
	if (err)
		goto out;
	/* Nothing to undo from here: a replace has swapped, a load is pinned. */
	attached = false;
	if (keep.have) /* apply_given may have settled the variant: another program */
		prog_id = attached_pacer_id(ifindex) ? attached_pacer_id(ifindex) : prog_id;
	report_attached(&o, &lay, ifindex, prog_id, run.id != 0);
	report_placement(o.placement,
			 auto_placement ? "--placement auto"
			 : placement_kept ? "the earlier load's, kept with its state" : "as asked",
			 &rss, &cost);
	if (!read_budget_cfg(bpf_map__fd(skel->maps.data_budget), &bcfg))
		report_live(&lay, cmaps.cfg, &bcfg, dir);
	report_stages(ifname);
	if (keep.have)
		pin_keep_report(&keep, source);
	classes_report(&cmaps, lay.tick_shift, lay.backend);
out:
	if (err && attached) {
		int derr = xdp_program__detach(prog, ifindex, o.mode, 0);

		if (derr)
			pr_err("could not detach after failure: %s", err_str(derr, eb, sizeof(eb)));
	}
	if (err && created_dir)
		pacer_remove_pin_dir(dir);
	pin_keep_close(&keep);
	pins_unlock(lock_fd);
	pins_writer_unlock(writer_fd);
	xdp_program__close(prog);
	xdp_pacer_bpf__destroy(skel);
	free(verifier_log);
	verifier_log = NULL;
	if (cmaps.cfg)
		munmap(cmaps.cfg, (size_t)sysconf(_SC_PAGESIZE));
	class_conf_free(&o.cls);
	return err ? (err == 2 ? 2 : 1) : 0;
out_classes:
	class_conf_free(&o.cls);
	return err;
}

const void *pacer_object_bytes(size_t *size)
{
	return xdp_pacer_bpf__elf_bytes(size);
}
