// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer stats: per-CPU counters summed; with --watch, rates per second. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "parse.h"
#include "prom.h"
#include "safe_file.h"

enum stats_format { FMT_TEXT, FMT_JSON, FMT_PROMETHEUS };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-pacer stats IFNAME [--watch SECONDS [--count N]] [--format text|json|prometheus [-o FILE]]\n\n"
		   "Counters of the limiter on IFNAME, summed over CPUs.\n"
		   "  --watch SECONDS  print rates per second every SECONDS (1..3600) until interrupted\n"
		   "  --count N        with --watch, stop after N reports\n"
		   "  --format F       text (default), json (one JSON object per report; also --json),\n"
		   "                   or prometheus: the text exposition format with the live\n"
		   "                   configuration as gauges, for node_exporter's textfile collector\n"
		   "  -o, --output FILE  with --format prometheus: write FILE atomically (a temporary\n"
		   "                   file in the same directory, renamed into place)\n");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void print_totals(const uint64_t *c, bool json)
{
	int i;

	if (json) {
		printf("{");
		for (i = 0; i < PACER_STAT_MAX; i++)
			printf("%s\"%s\":%llu", i ? "," : "", pacer_stat_names[i],
			       (unsigned long long)c[i]);
		printf("}\n");
		return;
	}
	for (i = 0; i < PACER_STAT_MAX; i++)
		printf("%-18s %llu\n", pacer_stat_names[i], (unsigned long long)c[i]);
}

static void print_rates(const uint64_t *cur, const uint64_t *prev, double dt, bool json)
{
	int i;

	if (json) {
		printf("{\"interval_s\":%.3f", dt);
		for (i = 0; i < PACER_STAT_MAX; i++)
			printf(",\"%s_per_s\":%.1f", pacer_stat_names[i],
			       (double)(cur[i] - prev[i]) / dt);
		printf("}\n");
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

static int parse_format(const char *s, enum stats_format *out)
{
	if (!strcmp(s, "text"))
		*out = FMT_TEXT;
	else if (!strcmp(s, "json"))
		*out = FMT_JSON;
	else if (!strcmp(s, "prometheus"))
		*out = FMT_PROMETHEUS;
	else
		return -EINVAL;
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname_arg;
	uint64_t cur[PACER_STAT_MAX], prev[PACER_STAT_MAX], watch = 0, count = 0, done = 0;
	struct pacer_handle h;
	enum stats_format fmt = FMT_TEXT;
	const char *out_path = NULL;
	bool json;
	double t0, t1;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (parse_u64_range(optarg, 1, 3600, &watch))
				return bad_value("--watch", optarg, "expected whole seconds from 1 to 3600");
			break;
		case 'n':
			if (parse_u64_range(optarg, 1, UINT32_MAX, &count))
				return bad_value("--count", optarg, "expected a positive integer");
			break;
		case 'j':
			fmt = FMT_JSON;
			break;
		case 'f':
			if (parse_format(optarg, &fmt))
				return bad_value("--format", optarg, "expected text, json or prometheus");
			break;
		case 'o':
			out_path = optarg;
			break;
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
	if (count && !watch) {
		pr_err("--count only applies with --watch");
		return 2;
	}
	if (fmt == FMT_PROMETHEUS && watch) {
		pr_err("--format prometheus writes totals; it does not combine with --watch (Prometheus computes rates)");
		return 2;
	}
	if (out_path && fmt != FMT_PROMETHEUS) {
		pr_err("-o/--output only applies with --format prometheus");
		return 2;
	}
	json = fmt == FMT_JSON;
	if (pacer_handle_open(argv[optind], &h))
		return 1;
	if (fmt == FMT_PROMETHEUS) {
		err = write_prometheus(&h, out_path);
		goto out;
	}
	err = pacer_read_counters(&h, cur);
	if (err) {
		pr_err("cannot read counters: %s", strerror(-err));
		goto out;
	}
	if (!watch) {
		print_totals(cur, json);
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_s();
	while (!stop && (!count || done < count)) {
		memcpy(prev, cur, sizeof(cur));
		sleep((unsigned)watch);
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
		if (err) {
			pr_err("cannot read counters (was the program unloaded?): %s", strerror(-err));
			break;
		}
		t1 = now_s();
		print_rates(cur, prev, t1 - t0, json);
		t0 = t1;
		done++;
	}
out:
	pacer_handle_close(&h);
	return err ? 1 : 0;
}
