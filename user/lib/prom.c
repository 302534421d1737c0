// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prom.h"
#include "geometry.h"
#include "pacer_ticks.h"
#include "pacer_file.h"
#include "pacer_names.h"

#define FAMILY_MAX_SAMPLES 5

/* A counter family: one sample per counter, told apart by one label whose values are the counters' names. */
static const struct counter_family {
	const char *name, *help, *label;
	enum pacer_stat s[FAMILY_MAX_SAMPLES];
	int n;
} counter_families[] = {
	{ "xdp_pacer_frames_total", "Frames the XDP program ran on.", NULL, { PACER_STAT_SEEN }, 1 },
	{ "xdp_pacer_packets_total",
	  "Frames by verdict: IP frames passed or dropped by the sketch, non-IP frames passed, malformed frames passed or dropped.",
	  "verdict",
	  { PACER_STAT_PASSED, PACER_STAT_DROPPED_RECENT, PACER_STAT_NONIP_PASSED, PACER_STAT_MALFORMED_PASSED,
	    PACER_STAT_MALFORMED_DROPPED }, 5 },
	{ "xdp_pacer_ip_packets_total", "Well-formed IP frames by address family.", "family",
	  { PACER_STAT_IPV4, PACER_STAT_IPV6 }, 2 },
	{ "xdp_pacer_line_rebases_total", "Sketch lines re-based to a new epoch.", NULL,
	  { PACER_STAT_LINE_REFRESH }, 1 },
	{ "xdp_pacer_records_total", "Sample records written to the ring buffer.", NULL,
	  { PACER_STAT_RECORDED }, 1 },
	{ "xdp_pacer_records_lost_total", "Sample records lost because the ring buffer was full.", NULL,
	  { PACER_STAT_RECORD_LOST }, 1 },
	{ "xdp_pacer_hash_key_inits_total", "Hash key words drawn in the datapath.", NULL,
	  { PACER_STAT_KEY_INIT }, 1 },
	{ "xdp_pacer_map_errors_total",
	  "Failed sketch lookups; the packet is dropped (fail closed). Should stay 0.", NULL,
	  { PACER_STAT_MAP_ERROR }, 1 },
};

enum gauge {
	G_INTERVAL, G_RATE, G_BURST, G_THRESH, G_TICK, G_PREFIX, G_ROWS, G_WIDTH, G_MAP_BYTES,
	G_SAMPLE_SOURCES, G_SAMPLE_PACKETS, G_MAX,
};

static const struct {
	const char *name, *help;
} gauges[G_MAX] = {
	[G_INTERVAL] = { "xdp_pacer_interval_seconds", "Live interval L (--interval), or T of --rate N/T." },
	[G_RATE] = { "xdp_pacer_rate_packets", "Live per-source rate: N packets per interval_seconds, bursts allowed (1: --interval)." },
	[G_BURST] = { "xdp_pacer_burst_ticks", "Live GCRA burst tolerance in ticks (0 with --interval)." },
	[G_THRESH] = { "xdp_pacer_threshold_ticks", "Live drop threshold in ticks (derived from the interval or rate)." },
	[G_TICK] = { "xdp_pacer_tick_seconds", "Clock quantum of the sketch cells (fixed at load)." },
	[G_PREFIX] = { "xdp_pacer_prefix_length", "Live source prefix length forming the key, by address family." },
	[G_ROWS] = { "xdp_pacer_sketch_rows", "Sketch rows (fixed at load)." },
	[G_WIDTH] = { "xdp_pacer_sketch_width_cells", "Sketch cells per row, as load --width (fixed at load)." },
	[G_MAP_BYTES] = { "xdp_pacer_map_bytes", "Bytes of map memory behind the program, all CPU copies." },
	[G_SAMPLE_SOURCES] = { "xdp_pacer_sample_sources_ratio", "Share of sources recorded (0: off)." },
	[G_SAMPLE_PACKETS] = { "xdp_pacer_sample_packets_ratio", "Share of packets recorded at random (0: off)." },
};

void prom_label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '"')
			fputs("\\\"", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void label_pair(FILE *f, const char *name, const char *value)
{
	fprintf(f, ",%s=\"", name);
	prom_label_value(f, value);
	fputc('"', f);
}

/* {ifname="...",name="value"}; name may be NULL. */
static void labels(FILE *f, const struct prom_pacer *p, const char *name, const char *value)
{
	fputs("{ifname=\"", f);
	prom_label_value(f, p->ifname);
	fputc('"', f);
	if (name)
		label_pair(f, name, value);
	fputc('}', f);
}

static void family_head(FILE *f, const char *name, const char *help, const char *type)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void write_counters(FILE *f, const struct prom_pacer *p, size_t n)
{
	size_t i, k;
	int j;

	for (i = 0; i < sizeof(counter_families) / sizeof(counter_families[0]); i++) {
		const struct counter_family *cf = &counter_families[i];

		family_head(f, cf->name, cf->help, "counter");
		for (k = 0; k < n; k++) {
			for (j = 0; j < cf->n; j++) {
				fputs(cf->name, f);
				labels(f, &p[k], cf->label, cf->label ? pacer_stat_names[cf->s[j]] : NULL);
				fprintf(f, " %llu\n", (unsigned long long)p[k].counters[cf->s[j]]);
			}
		}
	}
}

static double ratio_of(uint64_t thresh)
{
	return (double)thresh / 4294967296.0;
}

static void gauge_samples(FILE *f, enum gauge g, const struct prom_pacer *p)
{
	const char *name = gauges[g].name;
	const struct pacer_layout *l = &p->layout;
	double v = 0;

	switch (g) {
	case G_PREFIX:
		fputs(name, f);
		labels(f, p, "family", "ipv4");
		fprintf(f, " %u\n", p->cfg.prefix4);
		fputs(name, f);
		labels(f, p, "family", "ipv6");
		fprintf(f, " %u\n", p->cfg.prefix6);
		return;
	case G_INTERVAL: v = (double)p->cfg.interval_ns / 1e9; break;
	case G_RATE: v = p->cfg.rate_n ? p->cfg.rate_n : 1; break;
	case G_BURST: v = p->cfg.burst_ticks; break;
	case G_THRESH: v = p->cfg.thresh_ticks; break;
	case G_TICK: v = (double)pacer_tick_ns(l->tick_shift) / 1e9; break;
	case G_ROWS: v = l->rows; break;
	case G_WIDTH: v = (double)geom_width_cells(l->kind, l->rows, l->lines_log2); break;
	case G_MAP_BYTES: v = (double)p->map_bytes; break;
	case G_SAMPLE_SOURCES: v = ratio_of(p->cfg.sample_src_thresh); break;
	case G_SAMPLE_PACKETS: v = ratio_of(p->cfg.sample_pkt_thresh); break;
	case G_MAX: return;
	}
	fputs(name, f);
	labels(f, p, NULL, NULL);
	/* Whole numbers exactly; seconds to the nanosecond, ratios to 10 digits. */
	if (v == (double)(uint64_t)v && v < 9007199254740992.0)
		fprintf(f, " %llu\n", (unsigned long long)v);
	else
		fprintf(f, " %.10g\n", v);
}

static void write_info(FILE *f, const struct prom_pacer *p, size_t n)
{
	char id[16];
	size_t k;

	family_head(f, "xdp_pacer_info",
		    "Configuration names of the pacer on an interface (value always 1).", "gauge");
	for (k = 0; k < n; k++) {
		snprintf(id, sizeof(id), "%u", p[k].prog_id);
		fputs("xdp_pacer_info{ifname=\"", f);
		prom_label_value(f, p[k].ifname);
		fputc('"', f);
		label_pair(f, "prog_id", id);
		label_pair(f, "policy", policy_name(p[k].cfg.policy));
		label_pair(f, "malformed", p[k].cfg.malformed ? "drop" : "pass");
		label_pair(f, "layout", layout_name(p[k].layout.kind));
		label_pair(f, "placement", placement_name(p[k].layout.placement));
		label_pair(f, "clock", clock_name(p[k].layout.clock));
		fputs("} 1\n", f);
	}
}

int prom_write(FILE *f, const struct prom_pacer *p, size_t n)
{
	size_t k;
	int g;

	write_counters(f, p, n);
	for (g = 0; g < G_MAX; g++) {
		family_head(f, gauges[g].name, gauges[g].help, "gauge");
		for (k = 0; k < n; k++)
			gauge_samples(f, (enum gauge)g, &p[k]);
	}
	write_info(f, p, n);
	return ferror(f) ? -EIO : 0;
}
