// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer load: size the sketch, load, attach through libxdp, pin. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "common.h"
#include "parse.h"
#include "budget.h"
#include "pacer_sketch.h"
#include "pacer_conf.h"
#include "rss_probe.h"
#include "pacer_budget.h"
#include "pacer_table.h"
#include "xdp_pacer.skel.h"

/* --placement auto: decided from the interface's RSS hash once the options are read. */
#define LOAD_PLACEMENT_AUTO UINT32_MAX

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-pacer load IFNAME [OPTIONS]\n\n"
		"Attach the limiter to IFNAME and pin its maps under\n"
		PACER_PIN_ROOT "/netns-INODE/IFNAME (INODE: this network namespace's).\n\n"
		"Live options (change later with 'xdp-pacer set'):\n"
		"  --interval DUR        minimum gap between admitted packets of a source (1s);\n"
		"                        DUR takes ns, us, ms or s, e.g. 250ms, 1.5s; at most 69269.233s\n"
		"  --policy pace|quiet   pace: update on admit only, one packet per interval (default);\n"
		"                        quiet: update on every packet, a source must stay quiet a whole interval\n"
		"  --prefix4 N           IPv4 source prefix length forming the key, 0..32 (32)\n"
		"  --prefix6 N           IPv6 source prefix length forming the key, 0..128 (64)\n"
		"  --malformed pass|drop verdict for truncated or invalid IP headers (pass)\n");
	fputs(budget_usage, f);
	fprintf(f,
		"\nFixed at load (change needs unload + load):\n"
		"  --backend sketch|table  what remembers sources: the recency sketch (default) or the\n"
		"                        recency table (4-byte entries, 2 cache lines per packet; see README)\n"
		"  --on-full drop|evict-oldest  table only: with both of a key's lines full of fresh\n"
		"                        entries, drop the packet (default: never a false pass) or evict\n"
		"                        the oldest entry (no false drop but fingerprint collisions)\n"
		"  --reserve-cells N     returning-source filter cells (2 bytes each), power of two\n"
		"                        1024..33554432 (262144)\n"
		"  --rows D              sketch rows, 1..8 (4)\n"
		"  --width W             sketch: cells per row, power of two, >= 64 (1048576), 1 byte each;\n"
		"                        table: entries, power of two, 32..268435456 (1048576), 4 bytes each\n"
		"  --layout rows|blocked rows: each row its own array (a cache line per row);\n"
		"                        blocked: a key's cells share one cache line (rows must be a power of two)\n"
		"  --placement auto|percpu|shared  percpu: one sketch per CPU, exact per source only\n"
		"                        where the NIC's RSS hash sends all of a source's packets to\n"
		"                        one CPU; shared: one sketch for all CPUs, exact everywhere;\n"
		"                        auto (default): percpu where the RSS hash (ethtool\n"
		"                        rx-flow-hash) or a single RX queue makes it exact, else shared\n"
		"  --tick DUR            clock quantum, rounded down to a power of two ns, at most 2^40 ns\n"
		"                        (default: interval/47 rounded up); sets the live interval range\n"
		"  --clock cached|coarse|precise  datapath clock: cached (default): the coarse clock\n"
		"                        refreshed by a BPF timer, no helper call per packet;\n"
		"                        coarse: bpf_ktime_get_coarse_ns per packet; precise: bpf_ktime_get_ns\n"
		"  --mode native|skb     XDP attach mode (native)\n\n"
		"  --config FILE         read options from FILE: 'key = value' lines with the option\n"
		"                        names above ('interval = 250ms'); '#' comments; options on\n"
		"                        the command line override the file\n"
		"  -h, --help            this text\n");
}

struct load_opts {
	uint64_t interval_ns, tick_ns;
	uint32_t rows, kind, placement, policy, prefix4, prefix6, malformed, clock;
	uint32_t backend, on_full;
	bool sketch_opts, on_full_set; /* --rows or --layout given; --on-full given */
	uint64_t width;
	enum xdp_attach_mode mode;
	struct budget_opts budget;
	uint32_t seen_log2;
};

static int log2_exact(uint64_t v)
{
	int n = 0;

	if (!v || (v & (v - 1)))
		return -1;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

static int parse_opts(int argc, char **argv, struct load_opts *o, const char **ifname)
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "rows", required_argument, NULL, 'r' },
		{ "width", required_argument, NULL, 'w' },
		{ "layout", required_argument, NULL, 'l' },
		{ "placement", required_argument, NULL, 'P' },
		{ "policy", required_argument, NULL, 'p' },
		{ "prefix4", required_argument, NULL, '4' },
		{ "prefix6", required_argument, NULL, '6' },
		{ "mode", required_argument, NULL, 'm' },
		{ "malformed", required_argument, NULL, 'M' },
		{ "tick", required_argument, NULL, 't' },
		{ "clock", required_argument, NULL, 'c' },
		{ "config", required_argument, NULL, 'C' },
		{ "reserve-cells", required_argument, NULL, 'S' },
		BUDGET_LONGOPTS,
		{ "backend", required_argument, NULL, 'b' },
		{ "on-full", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (parse_duration_opt("--interval", optarg, PACER_INTERVAL_MAX_NS, &o->interval_ns))
				return 2;
			break;
		case 't':
			if (parse_duration_opt("--tick", optarg, PACER_TICK_MAX_NS, &o->tick_ns))
				return 2;
			break;
		case 'r':
			if (parse_u64_range(optarg, 1, PACER_MAX_ROWS, &v))
				return bad_value("--rows", optarg, "expected an integer from 1 to 8");
			o->rows = (uint32_t)v;
			o->sketch_opts = true;
			break;
		case 'w':
			if (parse_u64_range(optarg, PACER_MIN_WIDTH, PACER_MAX_WIDTH, &v) || log2_exact(v) < 0)
				return bad_value("--width", optarg,
						 "expected a power of two from 64 to 1073741824");
			o->width = v;
			break;
		case 'l':
			if (parse_layout(optarg, &o->kind))
				return bad_value("--layout", optarg, "expected rows or blocked");
			o->sketch_opts = true;
			break;
		case 'b':
			if (parse_backend(optarg, &o->backend))
				return bad_value("--backend", optarg, "expected sketch or table");
			break;
		case 'F':
			if (parse_on_full(optarg, &o->on_full))
				return bad_value("--on-full", optarg, "expected drop or evict-oldest");
			o->on_full_set = true;
			break;
		case 'P':
			if (!strcmp(optarg, "auto"))
				o->placement = LOAD_PLACEMENT_AUTO;
			else if (parse_placement(optarg, &o->placement))
				return bad_value("--placement", optarg, "expected auto, percpu or shared");
			break;
		case 'p':
			if (parse_policy(optarg, &o->policy))
				return bad_value("--policy", optarg, "expected pace or quiet");
			break;
		case '4':
			if (parse_prefix_arg("--prefix4", optarg, 32, &o->prefix4))
				return 2;
			break;
		case '6':
			if (parse_prefix_arg("--prefix6", optarg, 128, &o->prefix6))
				return 2;
			break;
		case 'm':
			if (!strcmp(optarg, "native"))
				o->mode = XDP_MODE_NATIVE;
			else if (!strcmp(optarg, "skb"))
				o->mode = XDP_MODE_SKB;
			else
				return bad_value("--mode", optarg, "expected native or skb");
			break;
		case 'M':
			if (parse_malformed(optarg, &o->malformed))
				return bad_value("--malformed", optarg, "expected pass or drop");
			break;
		case 'c':
			if (parse_clock(optarg, &o->clock))
				return bad_value("--clock", optarg, "expected cached, coarse or precise");
			break;
		case 'C':
			pr_err("--config may be given once");
			return 2;
		case 'S':
			if (parse_u64_range(optarg, 1024, 1u << PACER_BUDGET_MAX_SEEN_LOG2, &v) ||
			    log2_exact(v) < 0)
				return bad_value("--reserve-cells", optarg,
						 "expected a power of two from 1024 to 33554432");
			o->seen_log2 = (uint32_t)log2_exact(v);
			break;
		BUDGET_OPT_CASES:
			if (budget_cli_opt(c, optarg, &o->budget))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (o->backend == PACER_BACKEND_TABLE && o->sketch_opts) {
		pr_err("--rows and --layout size the sketch; the table takes --width (entries) only");
		usage_hint(argv[0]);
		return 2;
	}
	if (o->backend != PACER_BACKEND_TABLE && o->on_full_set) {
		pr_err("--on-full applies to --backend table only");
		usage_hint(argv[0]);
		return 2;
	}
	return expect_ifname(argc, argv, ifname);
}

static int build_layout(const struct load_opts *o, struct pacer_layout *lay, uint32_t *thresh)
{
	char a[32], b[32], c[64];
	uint64_t lines, min_ns, max_ns;
	int lg;

	memset(lay, 0, sizeof(*lay));
	lay->magic = PACER_LAYOUT_MAGIC;
	lay->abi_version = PACER_ABI_VERSION;
	lay->rows = o->rows;
	lay->kind = o->kind;
	lay->placement = o->placement;
	lay->clock = o->clock;
	lay->backend = o->backend;
	lay->on_full = o->on_full;
	lines = o->width / (PACER_LINE_BYTES / sizeof(uint8_t));
	if (o->backend == PACER_BACKEND_TABLE) {
		/* One "row" of lines of PACER_TBL_WAYS entries. */
		lay->rows = 1;
		lay->kind = PACER_LAYOUT_ROWS;
		lines = o->width / PACER_TBL_WAYS;
		if (o->width < 2 * PACER_TBL_WAYS || lines > 1ULL << PACER_TBL_MAX_LINES_LOG2) {
			pr_err("--width %llu: a table takes 32 to 268435456 entries",
			       (unsigned long long)o->width);
			return 2;
		}
	} else if (o->kind == PACER_LAYOUT_BLOCKED) {
		lines *= o->rows;
		if (log2_exact(o->rows) < 0) {
			pr_err("--layout blocked needs --rows to be a power of two (1, 2, 4 or 8), not %u",
			       o->rows);
			return 2;
		}
	}
	lg = log2_exact(lines);
	if (lg < 0 || pacer_total_lines(lay->kind, lay->rows, (uint32_t)lg) > UINT32_MAX / 2) {
		pr_err("sketch of %u rows x %llu cells is too large for one map", o->rows,
		       (unsigned long long)o->width);
		return 2;
	}
	lay->lines_log2 = (uint32_t)lg;
	lay->copies = o->placement == PACER_PLACEMENT_PERCPU ? (uint32_t)num_cpus() : 1;
	if (pacer_total_lines(lay->kind, lay->rows, (uint32_t)lg) * lay->copies > UINT32_MAX) {
		pr_err("%s of width %llu on %u CPUs is too large for one map", backend_name(lay->backend),
		       (unsigned long long)o->width, lay->copies);
		return 2;
	}
	if (o->tick_ns) {
		lay->tick_shift = (uint32_t)pacer_tick_shift_of(o->tick_ns); /* bounded by parse */
	} else {
		lay->tick_shift = pacer_default_tick_shift(o->interval_ns);
	}
	interval_range(lay->tick_shift, &min_ns, &max_ns);
	*thresh = pacer_thresh_ticks(o->interval_ns, lay->tick_shift);
	if (o->interval_ns < min_ns || o->interval_ns > max_ns || !*thresh) {
		pr_err("--interval %s does not fit tick %s: with this tick the interval must be within %s",
		       format_duration(o->interval_ns, a, sizeof(a)),
		       format_duration(1ULL << lay->tick_shift, b, sizeof(b)),
		       format_duration_range(min_ns, max_ns, c, sizeof(c)));
		return 2;
	}
	return 0;
}

/* The budget's live configuration (with the filter's size); 0 or 2 (said why). */
static int build_budget(const struct load_opts *o, struct pacer_budget_cfg *cfg)
{
	struct pacer_budget_cfg cur = { .seen_cells_log2 = o->seen_log2 };
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
	uint64_t bytes = pacer_total_lines(lay->kind, lay->rows, lay->lines_log2) *
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
		snprintf(path, sizeof(path), "%s/%s", dir, pacer_pin_names[i]);
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
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	const char *kind = "unknown";

	if (!libxdp_get_error(mp) && mp) {
		kind = xdp_multiprog__is_legacy(mp)
			       ? "single program (libxdp's dispatcher is not available on this kernel)"
			       : "libxdp dispatcher";
		xdp_multiprog__close(mp);
	}
	return kind;
}

/* Which placement, who chose it, and whether per-CPU placement is exact here. */
static void report_placement(uint32_t placement, bool chosen_by_auto, const struct rss_verdict *v)
{
	pr_info("  placement %s (%s): %s%s", placement_name(placement),
		chosen_by_auto ? "--placement auto" : "as asked", v->text,
		placement == PACER_PLACEMENT_SHARED && !v->exact
			? "; shared placement is exact whichever CPU receives"
			: "");
}

/* Read the RSS verdict for ifname; --placement auto becomes its choice.  True if it was auto. */
static bool resolve_placement(struct load_opts *o, const char *ifname, struct rss_verdict *v)
{
	rss_verdict_for(ifname, o->mode == XDP_MODE_SKB, o->prefix4, o->prefix6, v);
	if (o->placement != LOAD_PLACEMENT_AUTO)
		return false;
	o->placement = rss_auto_placement(v);
	return true;
}

static void load_defaults(struct load_opts *o)
{
	*o = (struct load_opts){
		.interval_ns = PACER_DEFAULT_INTERVAL_NS,
		.rows = PACER_DEFAULT_ROWS,
		.width = (uint64_t)PACER_LINE_BYTES << PACER_DEFAULT_LINES_LOG2,
		.kind = PACER_LAYOUT_ROWS,
		.placement = LOAD_PLACEMENT_AUTO,
		.policy = PACER_POLICY_PACE,
		.prefix4 = PACER_DEFAULT_PREFIX4,
		.prefix6 = PACER_DEFAULT_PREFIX6,
		.malformed = PACER_MALFORMED_PASS,
		.clock = PACER_CLOCK_CACHED,
		.mode = XDP_MODE_NATIVE,
		.seen_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2,
	};
}

static void add_name(char *buf, size_t len, const char *name)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
}

int load_check_fixed(int argc, char **argv, const struct pacer_layout *running, char *differ,
		     size_t len)
{
	struct rss_verdict rss;
	struct load_opts o;
	struct pacer_layout lay;
	const char *ifname;
	uint32_t thresh;
	int err;

	load_defaults(&o);
	optind = 1;
	err = parse_opts(argc, argv, &o, &ifname);
	if (!err) {
		resolve_placement(&o, ifname, &rss); /* what a load would pick now */
		err = build_layout(&o, &lay, &thresh);
	}
	if (err)
		return 2;
	differ[0] = 0;
	if (lay.rows != running->rows)
		add_name(differ, len, "rows");
	if (lay.lines_log2 != running->lines_log2)
		add_name(differ, len, "width");
	if (lay.kind != running->kind)
		add_name(differ, len, "layout");
	if (lay.placement != running->placement)
		add_name(differ, len, "placement");
	if (lay.clock != running->clock)
		add_name(differ, len, "clock");
	if (lay.tick_shift != running->tick_shift)
		add_name(differ, len, "tick (set, or derived from the interval)");
	return 0;
}

static int load_main(int argc, char **argv);

int cmd_load(int argc, char **argv)
{
	struct pacer_conf conf;
	int err = conf_expand_argv(&argc, &argv, 0, &conf);

	if (!err)
		err = load_main(argc, argv);
	pacer_conf_free(&conf);
	return err;
}

static int load_main(int argc, char **argv)
{
	struct load_opts o;
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_pacer_bpf *skel = NULL;
	struct xdp_program *prog = NULL;
	struct pacer_layout lay;
	struct pacer_config *cfg;
	struct rss_verdict rss;
	bool auto_placement;
	struct pacer_budget_cfg bcfg;
	const char *ifname = NULL;
	char dir[256], eb[128], mb[32], ib[32], tb[32], mb2[256];
	uint32_t thresh;
	uint64_t lines, bytes;
	int ifindex, err, lock_fd;
	bool attached = false, created_dir = false;
	struct stat st;

	load_defaults(&o);
	optind = 1;
	err = parse_opts(argc, argv, &o, &ifname);
	if (err)
		return err < 0 ? 0 : err;
	auto_placement = resolve_placement(&o, ifname, &rss);
	err = build_layout(&o, &lay, &thresh);
	if (!err)
		err = check_memory(&o, &lay);
	if (!err)
		err = build_budget(&o, &bcfg);
	if (err)
		return err;
	if (ifname_to_index(ifname, &ifindex))
		return 1;
	if (pin_dir(ifname, dir, sizeof(dir))) {
		pr_err("cannot name the pin directory of %s in this network namespace", ifname);
		return 1;
	}
	if (ensure_bpffs())
		return 1;
	/* A concurrent load of the same interface waits here, then finds it busy. */
	lock_fd = pins_lock();
	if (lock_fd < 0) {
		pr_err("cannot lock %s: %s", PACER_PIN_ROOT, strerror(-lock_fd));
		return 1;
	}
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err) {
		pr_err("cannot query XDP state of %s: %s", ifname, err_str(err, eb, sizeof(eb)));
		goto out;
	}
	if (q.attach_mode != XDP_ATTACHED_NONE) {
		pr_err("%s already has an XDP program attached (id %u); run 'xdp-pacer unload %s' or detach it first",
		       ifname, q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id),
		       ifname);
		err = -EBUSY;
		goto out;
	}
	if (!stat(dir, &st)) {
		pr_err("removing stale pins in %s left by an earlier load (nothing is attached to %s)",
		       dir, ifname);
		err = pacer_remove_pin_dir(dir);
		if (err) {
			pr_err("cannot remove stale pins in %s", dir);
			goto out;
		}
	}

	skel = xdp_pacer_bpf__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}
	skel->rodata->pacer_layout = lay;
	cfg = &skel->data->pacer_cfg;
	cfg->interval_ns = o.interval_ns;
	cfg->thresh_ticks = thresh;
	cfg->policy = o.policy;
	cfg->malformed = o.malformed;
	cfg->prefix4 = o.prefix4;
	cfg->prefix6 = o.prefix6;
	if (getrandom(cfg->hash_key, sizeof(cfg->hash_key), 0) != sizeof(cfg->hash_key)) {
		pr_err("getrandom failed: %s", strerror(errno));
		err = -errno;
		goto out;
	}
	skel->data_budget->pacer_budget_cfg = bcfg;
	err = bpf_map__set_max_entries(skel->maps.pacer_seen,
				       1u << (o.seen_log2 - 5 /* 32 cells a line */));
	if (err) {
		pr_err("cannot size the returning-source filter: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}
	cfg->hash_key[0] |= 1; /* zero words mean "draw a key in the datapath" */
	cfg->hash_key[1] |= 1;
	lines = pacer_total_lines(lay.kind, lay.rows, lay.lines_log2);
	err = bpf_map__set_max_entries(skel->maps.pacer_sk, (uint32_t)(lines * lay.copies));
	if (err) {
		pr_err("cannot size the sketch map: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}

	prog = xdp_program__from_bpf_obj(skel->obj, "xdp");
	err = (int)libxdp_get_error(prog);
	if (err) {
		prog = NULL;
		pr_err("libxdp cannot use the BPF object: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}
	err = xdp_program__attach(prog, ifindex, o.mode, 0);
	if (err) {
		pr_err("cannot attach to %s in %s mode: %s%s", ifname,
		       o.mode == XDP_MODE_SKB ? "skb" : "native", err_str(err, eb, sizeof(eb)),
		       verbose ? "" : " (-v shows the loader's log)");
		goto out;
	}
	attached = true;
	err = pin_all(skel, dir, &created_dir);
	if (err)
		goto out;

	bytes = lines * PACER_LINE_BYTES * lay.copies;
	pr_info("xdp-pacer: attached to %s (ifindex %d) in %s mode as %s, program id %u", ifname,
		ifindex, o.mode == XDP_MODE_SKB ? "skb" : "native", attach_kind(ifindex),
		xdp_program__id(prog));
	if (lay.backend == PACER_BACKEND_TABLE)
		pr_info("  table: %llu entries (2 lines of %u per key), on full: %s, %s (%s%s)",
			(unsigned long long)o.width, PACER_TBL_WAYS, on_full_name(lay.on_full),
			placement_name(lay.placement), format_bytes(bytes, mb, sizeof(mb)),
			o.placement == PACER_PLACEMENT_PERCPU ? " over all CPUs" : "");
	else
		pr_info("  sketch: %u rows x %llu cells, %s layout, %s (%s%s)", lay.rows,
			(unsigned long long)o.width, layout_name(lay.kind),
			placement_name(lay.placement), format_bytes(bytes, mb, sizeof(mb)),
			o.placement == PACER_PLACEMENT_PERCPU ? " over all CPUs" : "");
	report_placement(o.placement, auto_placement, &rss);
	pr_info("  interval %s, policy %s, tick %s (threshold %u ticks), clock %s",
		format_duration(o.interval_ns, ib, sizeof(ib)), policy_name(o.policy),
		format_duration(1ULL << lay.tick_shift, tb, sizeof(tb)), thresh,
		clock_name(lay.clock));
	pr_info("  budget: %s", budget_describe(&skel->data_budget->pacer_budget_cfg, mb2, sizeof(mb2)));
	pr_info("  pins: %s", dir);
	err = 0;
out:
	if (err && attached) {
		int derr = xdp_program__detach(prog, ifindex, o.mode, 0);

		if (derr)
			pr_err("could not detach after failure: %s", err_str(derr, eb, sizeof(eb)));
	}
	if (err && created_dir)
		pacer_remove_pin_dir(dir);
	pins_unlock(lock_fd);
	xdp_program__close(prog);
	xdp_pacer_bpf__destroy(skel);
	return err ? 1 : 0;
}
