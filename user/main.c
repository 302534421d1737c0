// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer: per-source XDP packet pacing; the verb table and global options. */
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "verbs/verbs.h"
#include "version.h"

static const struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} verbs[] = {
	{ "load", cmd_load, "attach the limiter to an interface" },
	{ "unload", cmd_unload, "detach it and remove its pins" },
	{ "status", cmd_status, "what is attached where, with which configuration" },
	{ "set", cmd_set, "change interval, policy, prefixes or malformed verdict live" },
	{ "deny", cmd_deny, "add, del, list or flush deny-list prefixes live, with timeouts" },
	{ "exempt", cmd_exempt, "add, del, list or flush exempt-list prefixes live, with timeouts" },
	{ "stats", cmd_stats, "counters, totals or rates" },
	{ "query", cmd_query, "when the limiter last saw an address" },
	{ "model", cmd_model, "false-drop model and sizing for a sketch, table or dense table" },
	{ "gen", cmd_gen, "traffic generator (XDP live frames, AF_XDP or AF_PACKET)" },
	{ "record", cmd_record, "record sampled decisions into a file for analyze" },
	{ "top", cmd_top, "the sources with the most drops now, from sampled packets" },
	{ "events", cmd_events, "a line when a source starts and stops being limited" },
	{ "analyze", cmd_analyze, "audit, recency structures and sizing from a recording or a pcap" },
	{ "exporter", cmd_exporter, "serve /metrics for Prometheus" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: xdp-pacer [-v] VERB [OPTIONS]\n\n"
		   "Admit at most one packet per interval (or N per T) from each source\n"
		   "prefix, judged in an XDP program by a recency sketch or a table.\n\nVerbs:\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\nGlobal options:\n"
		   "  -v, --verbose  show libbpf/libxdp logs (twice: debug logs)\n"
		   "  -V, --version  the release and the datapath ABI it reads\n"
		   "  -h, --help     this text; 'xdp-pacer VERB --help' for a verb\n");
}

int main(int argc, char **argv)
{
	size_t i;
	int a = 1;

	while (a < argc && argv[a][0] == '-') {
		if (!strcmp(argv[a], "-v") || !strcmp(argv[a], "--verbose")) {
			verbose++;
		} else if (!strcmp(argv[a], "-vv")) {
			verbose += 2;
		} else if (!strcmp(argv[a], "-V") || !strcmp(argv[a], "--version")) {
			printf("xdp-pacer %s (datapath ABI %d)\n", pacer_version, PACER_ABI_VERSION);
			return 0;
		} else if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
			usage(stdout);
			return 0;
		} else {
			pr_err("unknown global option '%s'", argv[a]);
			usage(stderr);
			return 2;
		}
		a++;
	}
	if (a >= argc) {
		usage(stderr);
		return 2;
	}
	setup_lib_logging();
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		if (!strcmp(argv[a], verbs[i].name))
			return verbs[i].fn(argc - a, argv + a);
	}
	pr_err("unknown verb '%s'", argv[a]);
	usage(stderr);
	return 2;
}
