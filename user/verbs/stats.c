// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer stats: per-CPU counters summed; with --watch, rates per second. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "json_writer.h"
#include "opts.h"
#include "cli_values.h"
#include "prom.h"
#include "safe_file.h"
#include "time_now.h"
#include "version.h"
#include "classes_cli.h"
#include "classes_map.h"

enum stats_format { FMT_TEXT, FMT_JSON, FMT_PROMETHEUS };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Each class's counters: a line each, or the JSON's "classes" array. */
static void print_classes(const struct prom_class *pc, int n, struct json_writer *w)
{
	int i, s;

	if (w) {
		jsonw_start_array_field(w, "classes");
		for (i = 0; i < n; i++) {
			jsonw_start_object(w);
			jsonw_string_field(w, "class", pc[i].c.name);
			for (s = 0; s < PACER_CSTAT_MAX; s++)
				jsonw_uint_field(w, pacer_class_stat_names[s], pc[i].counters[s]);
			jsonw_end_object(w);
		}
		jsonw_end_array(w);
		return;
	}
	for (i = 0; i < n; i++) {
		printf("class %-15s", pc[i].c.name);
		for (s = 0; s < PACER_CSTAT_MAX; s++)
			printf(" %s %llu", pacer_class_stat_names[s], (unsigned long long)pc[i].counters[s]);
		printf("\n");
	}
}

/* The lists' sizes (the exporter's xdp_pacer_list_entries): JSON object "lists", or a text line. */
static void print_lists(const struct pacer_class_maps *m, struct json_writer *w)
{
	static const char *const lists[2] = { "exempt", "deny" };
	struct pacer_list_entry *v = NULL;
	struct pacer_list_counts c;
	size_t n = 0;
	int l;

	if (pacer_lists_dump(m, &v, &n))
		return;
	pacer_lists_count(v, n, pacer_list_clock_ns(), &c);
	free(v);
	if (w) {
		jsonw_name(w, "lists");
		jsonw_start_object(w);
		for (l = 0; l < 2; l++) {
			jsonw_name(w, lists[l]);
			jsonw_start_object(w);
			jsonw_uint_field(w, "configured", c.n[l][PACER_LIST_CONF]);
			jsonw_uint_field(w, "added", c.n[l][PACER_LIST_ADDED]);
			jsonw_uint_field(w, "timed", c.timed[l]);
			jsonw_end_object(w);
		}
		jsonw_end_object(w);
		return;
	}
	for (l = 0; l < 2; l++)
		printf("%-18s %llu configured, %llu added (%llu with a timeout)\n", lists[l],
		       (unsigned long long)c.n[l][PACER_LIST_CONF], (unsigned long long)c.n[l][PACER_LIST_ADDED],
		       (unsigned long long)c.timed[l]);
}

static void print_totals(const uint64_t *c, const struct pacer_config *cfg,
			 const struct prom_class *pc, int nclasses, const struct pacer_class_maps *m,
			 bool json)
{
	int i;

	if (json) {
		struct json_writer w;

		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		jsonw_string_field(&w, "version", pacer_version);
		for (i = 0; i < PACER_STAT_MAX; i++)
			jsonw_uint_field(&w, pacer_stat_names[i], c[i]);
		/* The per-source rate the counts were made under: N per T (N = 1: --interval T). */
		jsonw_uint_field(&w, "rate_n", cfg->rate_n ? cfg->rate_n : 1);
		jsonw_uint_field(&w, "interval_ns", cfg->interval_ns);
		jsonw_uint_field(&w, "thresh_ticks", cfg->thresh_ticks);
		jsonw_uint_field(&w, "burst_ticks", cfg->burst_ticks);
		/* The earlier names of interval_ns and thresh_ticks, kept for one release. */
		jsonw_uint_field(&w, "rate_period_ns", cfg->interval_ns);
		jsonw_uint_field(&w, "threshold_ticks", cfg->thresh_ticks);
		print_classes(pc, nclasses, &w);
		print_lists(m, &w);
		jsonw_end_object(&w);
		return;
	}
	for (i = 0; i < PACER_STAT_MAX; i++)
		printf("%-20s %llu\n", pacer_stat_names[i], (unsigned long long)c[i]); /* would_drop_malformed */
	print_classes(pc, nclasses, NULL);
	print_lists(m, NULL);
}

/* The classes' counters now; a class new since the last read (another name in its place) reads from 0. */
static double class_rate(const struct prom_class *cur, const struct prom_class *prev, int nprev,
			 int s, double dt)
{
	int i;

	for (i = 0; i < nprev; i++)
		if (!strcmp(prev[i].c.name, cur->c.name) && prev[i].counters[s] <= cur->counters[s])
			return (double)(cur->counters[s] - prev[i].counters[s]) / dt;
	return (double)cur->counters[s] / dt;
}

static void print_class_rates(const struct prom_class *cur, int n, const struct prom_class *prev,
			      int nprev, double dt, struct json_writer *w)
{
	char name[64];
	int i, s;

	if (w)
		jsonw_start_array_field(w, "classes");
	for (i = 0; i < n; i++) {
		if (w) {
			jsonw_start_object(w);
			jsonw_string_field(w, "class", cur[i].c.name);
			for (s = 0; s < PACER_CSTAT_MAX; s++) {
				snprintf(name, sizeof(name), "%s_per_s", pacer_class_stat_names[s]);
				jsonw_float_field_fmt(w, name, "%.1f", class_rate(&cur[i], prev, nprev, s, dt));
			}
			jsonw_end_object(w);
			continue;
		}
		printf("  class %s:", cur[i].c.name);
		for (s = 0; s < PACER_CSTAT_MAX; s++)
			printf(" %s %.0f/s", pacer_class_stat_names[s], class_rate(&cur[i], prev, nprev, s, dt));
		printf("\n");
	}
	if (w)
		jsonw_end_array(w);
}

static void print_rates(const uint64_t *cur, const uint64_t *prev, double dt, bool json,
			const struct prom_class *ccur, int ncur, const struct prom_class *cprev,
			int nprev)
{
	int i;

	if (json) {
		struct json_writer w;
		char name[64];

		jsonw_init(&w, stdout);
		jsonw_start_object(&w);
		jsonw_float_field_fmt(&w, "interval_s", "%.3f", dt);
		for (i = 0; i < PACER_STAT_MAX; i++) {
			snprintf(name, sizeof(name), "%s_per_s", pacer_stat_names[i]);
			jsonw_float_field_fmt(&w, name, "%.1f", (double)(cur[i] - prev[i]) / dt);
		}
		print_class_rates(ccur, ncur, cprev, nprev, dt, &w);
		jsonw_end_object(&w);
	} else {
		printf("seen %.0f/s  passed %.0f/s  dropped %.0f/s  budget-dropped %.0f/s  non-IP %.0f/s  malformed %.0f/s  lost records %.0f/s\n",
		       (double)(cur[PACER_STAT_SEEN] - prev[PACER_STAT_SEEN]) / dt,
		       (double)(cur[PACER_STAT_PASSED] - prev[PACER_STAT_PASSED]) / dt,
		       (double)(cur[PACER_STAT_DROPPED_RECENT] - prev[PACER_STAT_DROPPED_RECENT]) / dt,
		       (double)(cur[PACER_STAT_DROPPED_BUDGET] - prev[PACER_STAT_DROPPED_BUDGET]) / dt,
		       (double)(cur[PACER_STAT_NONIP_PASSED] - prev[PACER_STAT_NONIP_PASSED]) / dt,
		       (double)(cur[PACER_STAT_MALFORMED_PASSED] + cur[PACER_STAT_MALFORMED_DROPPED] -
				prev[PACER_STAT_MALFORMED_PASSED] - prev[PACER_STAT_MALFORMED_DROPPED]) / dt,
		       (double)(cur[PACER_STAT_RECORD_LOST] - prev[PACER_STAT_RECORD_LOST]) / dt);
		print_class_rates(ccur, ncur, cprev, nprev, dt, NULL);
	}
	fflush(stdout);
}

/* The exposition text to stdout, or atomically to path. */
static int write_prometheus(const struct pacer_handle *h, const char *path)
{
	struct prom_pacer p = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = pacer_prom_fill(h, &p);

	if (err) {
		pr_err("cannot read counters: %s", strerror(-err));
		return err;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	err = prom_write(f, &p, 1);
	if (fclose(f) && !err)
		err = -EIO;
	if (!err && !path && fwrite(buf, 1, len, stdout) != len)
		err = -EIO;
	if (!err && path) {
		err = write_file_atomic(path, buf, len, 0644);
		if (err)
			pr_err("cannot write %s: %s", path, strerror(-err));
	}
	free(buf);
	return err;
}

static const struct opt_choice format_choices[] = {
	{ "text", FMT_TEXT },
	{ "json", FMT_JSON },
	{ "prometheus", FMT_PROMETHEUS },
	{ NULL, 0 },
};

struct stats_opts {
	const char *ifname, *out_path;
	uint64_t watch, count;
	uint32_t fmt;
	bool json, count_set, out_set;
};

static const struct opt_spec stats_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct stats_opts, ifname) },
	{ .name = "watch", .type = OPT_U64, .arg = "SECONDS", .min = 1, .max = 3600,
	  OPT_FIELD(struct stats_opts, watch), .why = "expected whole seconds from 1 to 3600",
	  .help = "print rates per second every SECONDS (1..3600) until interrupted" },
	{ .name = "count", .type = OPT_U64, .arg = "N", .min = 1, .max = UINT32_MAX,
	  OPT_FIELD(struct stats_opts, count), OPT_GIVEN(struct stats_opts, count_set),
	  .help = "with --watch, stop after N reports" },
	{ .name = "format", .type = OPT_ENUM, .choices = format_choices, .dflt = "text",
	  OPT_FIELD(struct stats_opts, fmt),
	  .help = "json: one JSON object per report (also --json);\n"
		  "prometheus: the text exposition format with the live\n"
		  "configuration as gauges, for node_exporter's textfile collector" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct stats_opts, json),
	  .help = "the same as --format json" },
	{ .name = "output", .short_name = 'o', .type = OPT_STRING, .arg = "FILE",
	  OPT_FIELD(struct stats_opts, out_path), OPT_GIVEN(struct stats_opts, out_set),
	  .help = "with --format prometheus: write FILE atomically (a temporary\n"
		  "file in the same directory, renamed into place)" },
	{ 0 },
};

static const struct opt_verb stats_verb = {
	.name = "stats",
	.synopsis = "IFNAME [--watch SECONDS [--count N]] [--format text|json|prometheus [-o FILE]]",
	.intro = "Counters of the limiter on IFNAME, summed over CPUs.\n",
	.args = "an interface name",
	.opts = stats_specs,
};

/* The combinations the options allow: 0, or 2 after saying why not. */
static int check_opts(struct stats_opts *o)
{
	if (o->json)
		o->fmt = FMT_JSON;
	if (o->count_set && !o->watch)
		return usage_error("stats", "--count only applies with --watch");
	if (o->fmt == FMT_PROMETHEUS && o->watch)
		return usage_error("stats", "--format prometheus writes totals; it does not combine with --watch (Prometheus computes rates)");
	if (o->out_set && o->fmt != FMT_PROMETHEUS)
		return usage_error("stats", "-o/--output only applies with --format prometheus");
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	uint64_t cur[PACER_STAT_MAX], prev[PACER_STAT_MAX], done = 0;
	static struct prom_class pc[PACER_MAX_CLASSES], pprev[PACER_MAX_CLASSES];
	struct pacer_class_maps m;
	int npc = 0, nprev = 0;
	struct stats_opts o = { 0 };
	struct pacer_handle h;
	bool json;
	double t0, t1;
	int err = parse_verb_opts(&stats_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	if (check_opts(&o))
		return 2;
	json = o.fmt == FMT_JSON;
	if (pacer_handle_open(o.ifname, &h))
		return 1;
	if (o.fmt == FMT_PROMETHEUS) {
		err = write_prometheus(&h, o.out_path);
		goto out;
	}
	err = pacer_read_counters(&h, cur);
	if (err) {
		pr_err("cannot read counters: %s", strerror(-err));
		goto out;
	}
	pacer_class_maps_of(&h, &m);
	err = classes_fill(&m, pc, &npc);
	if (err) {
		pr_err("cannot read the classes' counters: %s", strerror(-err));
		goto out;
	}
	if (!o.watch) {
		print_totals(cur, h.cfg, pc, npc, &m, json);
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = mono_s();
	while (!stop && (!o.count || done < o.count)) {
		memcpy(prev, cur, sizeof(cur));
		memcpy(pprev, pc, sizeof(pc));
		nprev = npc;
		sleep((unsigned)o.watch);
		if (stop)
			break;
		/* Our map fds keep the counters readable after an unload: they would read as zero rates. */
		if (attached_pacer_id(h.ifindex) != h.prog_id) {
			pr_err("the pacer on %s was unloaded (program id %u is no longer attached); stopping",
			       h.ifname, h.prog_id);
			err = -ENOENT;
			break;
		}
		err = pacer_read_counters(&h, cur);
		if (!err)
			err = classes_fill(&m, pc, &npc);
		if (err) {
			pr_err("cannot read counters (was the program unloaded?): %s", strerror(-err));
			break;
		}
		t1 = mono_s();
		print_rates(cur, prev, t1 - t0, json, pc, npc, pprev, nprev);
		t0 = t1;
		done++;
	}
out:
	pacer_handle_close(&h);
	return err ? 1 : 0;
}
