// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer stats: per-CPU counters summed; with --watch, rates per second. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "common.h"
#include "parse.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: xdp-pacer stats IFNAME [--watch SECONDS [--count N]] [--json]\n\n"
		   "Counters of the limiter on IFNAME, summed over CPUs.\n"
		   "  --watch SECONDS  print rates per second every SECONDS (1..3600) until interrupted\n"
		   "  --count N        with --watch, stop after N reports\n"
		   "  --json           one JSON object per report\n");
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

int cmd_stats(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t cur[PACER_STAT_MAX], prev[PACER_STAT_MAX], watch = 0, count = 0, done = 0;
	struct pacer_handle h;
	bool json = false;
	double t0, t1;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (expect_positionals(argc, argv, 1, "an interface name"))
		return 2;
	if (count && !watch) {
		pr_err("--count only applies with --watch");
		return 2;
	}
	if (pacer_handle_open(argv[optind], &h))
		return 1;
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
