// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "prom.h"
#include "backend.h"
#include "geometry.h"
#include "pacer_ticks.h"
#include "pacer_file.h"
#include "pacer_names.h"
#include "version.h"
#include "class_conf.h"

/* Counter families.  F_NONE marks a counter no family claims: a unit test keeps that from happening. */
enum family {
	F_NONE, F_FRAMES, F_PACKETS, F_IP, F_REBASES, F_RECORDS, F_RECORDS_LOST, F_KEY_INITS,
	F_BUDGET_NO_BUCKET, F_BUDGET_RETURNING, F_TABLE_EVENTS, F_SWEEP_ROUNDS, F_SWEEP_LINES,
	F_SWEEP_CLEARED, F_MAX,
};

static const struct {
	const char *name, *help, *label;
} families[F_MAX] = {
	[F_FRAMES] = { "xdp_pacer_frames_total", "Frames the XDP program ran on; the verdicts of xdp_pacer_packets_total sum to it.", NULL },
	[F_PACKETS] = { "xdp_pacer_packets_total",
			"Frames by verdict: IP frames passed, dropped by the per-source limit, dropped by the global budget, dropped by a class whose action is drop, dropped on a map error (fail closed); sources on the exempt list passed, on the deny list dropped; IP frames no class matched passed; non-IP frames passed; malformed frames passed or dropped.  Observe mode: packets a drop verdict passed carry mode=\"observe\" beside that verdict; samples without it are enforced.",
			"verdict" },
	[F_IP] = { "xdp_pacer_ip_packets_total", "Well-formed IP frames by address family.", "family" },
	[F_REBASES] = { "xdp_pacer_line_rebases_total", "Sketch lines re-based to a new epoch.", NULL },
	[F_RECORDS] = { "xdp_pacer_records_total", "Sample records written to the ring buffer.", NULL },
	[F_RECORDS_LOST] = { "xdp_pacer_records_lost_total", "Sample records lost because the ring buffer was full.", NULL },
	[F_KEY_INITS] = { "xdp_pacer_hash_key_inits_total", "Hash key words drawn in the datapath.", NULL },
	[F_BUDGET_NO_BUCKET] = { "xdp_pacer_budget_no_bucket_total",
				 "Budget drops because the bucket ring was full (after a live change); part of verdict dropped_budget.", NULL },
	[F_BUDGET_RETURNING] = { "xdp_pacer_budget_returning_total",
				 "Budget admissions of returning sources (reserve on).", NULL },
	[F_TABLE_EVENTS] = { "xdp_pacer_table_events_total",
			     "Table events: table_full and table_race drops (part of verdict dropped_recent), table_evict replacements.",
			     "event" },
	[F_SWEEP_ROUNDS] = { "xdp_pacer_sweep_rounds_total",
			     "Rounds of the tables' sweep (a BPF timer clearing expired entries).", NULL },
	[F_SWEEP_LINES] = { "xdp_pacer_sweep_lines_total", "Table lines the sweep visited.", NULL },
	[F_SWEEP_CLEARED] = { "xdp_pacer_sweep_cleared_total", "Expired table entries the sweep cleared.",
			      NULL },
};

/*
 * The family each counter of `stats --json` is exported under; in a
 * labelled family the label's value is the counter's name there.
 */
static const enum family stat_family[PACER_STAT_MAX] = {
	[PACER_STAT_SEEN] = F_FRAMES,
	[PACER_STAT_PASSED] = F_PACKETS,
	[PACER_STAT_DROPPED_RECENT] = F_PACKETS,
	[PACER_STAT_NONIP_PASSED] = F_PACKETS,
	[PACER_STAT_MALFORMED_PASSED] = F_PACKETS,
	[PACER_STAT_MALFORMED_DROPPED] = F_PACKETS,
	[PACER_STAT_IPV4] = F_IP,
	[PACER_STAT_IPV6] = F_IP,
	[PACER_STAT_LINE_REFRESH] = F_REBASES,
	[PACER_STAT_RECORDED] = F_RECORDS,
	[PACER_STAT_RECORD_LOST] = F_RECORDS_LOST,
	[PACER_STAT_KEY_INIT] = F_KEY_INITS,
	[PACER_STAT_MAP_ERROR] = F_PACKETS,
	[PACER_STAT_DROPPED_BUDGET] = F_PACKETS,
	[PACER_STAT_BUDGET_NO_BUCKET] = F_BUDGET_NO_BUCKET,
	[PACER_STAT_BUDGET_RETURNING] = F_BUDGET_RETURNING,
	[PACER_STAT_TABLE_FULL] = F_TABLE_EVENTS,
	[PACER_STAT_TABLE_EVICT] = F_TABLE_EVENTS,
	[PACER_STAT_TABLE_RACE] = F_TABLE_EVENTS,
	[PACER_STAT_EXEMPT_PASSED] = F_PACKETS,
	[PACER_STAT_DENY_DROPPED] = F_PACKETS,
	[PACER_STAT_UNCLASSIFIED] = F_PACKETS,
	[PACER_STAT_CLASS_DROPPED] = F_PACKETS,
	/* Observe mode: the verdict they would have been, with mode="observe". */
	[PACER_STAT_OBSERVED_RECENT] = F_PACKETS,
	[PACER_STAT_OBSERVED_BUDGET] = F_PACKETS,
	[PACER_STAT_OBSERVED_CLASS] = F_PACKETS,
	[PACER_STAT_OBSERVED_DENY] = F_PACKETS,
	[PACER_STAT_OBSERVED_MALFORMED] = F_PACKETS,
	[PACER_STAT_SWEEP_ROUNDS] = F_SWEEP_ROUNDS,
	[PACER_STAT_SWEEP_LINES] = F_SWEEP_LINES,
	[PACER_STAT_SWEEP_CLEARED] = F_SWEEP_CLEARED,
};

const char *prom_counter_family(unsigned stat)
{
	return stat < PACER_STAT_MAX ? families[stat_family[stat]].name : NULL;
}

enum gauge {
	G_INTERVAL, G_RATE, G_BURST, G_THRESH, G_TICK, G_PREFIX, G_ROWS, G_WIDTH, G_TABLE_ENTRIES,
	G_MAP_BYTES, G_SAMPLE_SOURCES, G_SAMPLE_PACKETS, G_BUDGET_LIMIT, G_BUDGET_WINDOW,
	G_BUDGET_SLACK_TIME, G_BUDGET_SLACK_COUNT, G_BUDGET_NEW_LIMIT, G_BUDGET_HORIZON,
	G_BUDGET_BUCKETS, G_BUDGET_FILTER_CELLS, G_BUDGET_BATCH, G_MAX,
};

static const struct {
	const char *name, *help;
} gauges[G_MAX] = {
	[G_INTERVAL] = { "xdp_pacer_interval_seconds", "Live interval L (--interval), or T of --rate N/T." },
	[G_RATE] = { "xdp_pacer_rate_packets", "Live per-source rate: N packets per interval_seconds, bursts allowed (1: --interval)." },
	[G_BURST] = { "xdp_pacer_burst_ticks", "Live GCRA burst tolerance in ticks (0 with --interval)." },
	[G_THRESH] = { "xdp_pacer_threshold_ticks", "Live drop threshold in ticks (derived from the interval or rate)." },
	[G_TICK] = { "xdp_pacer_tick_seconds", "Clock quantum of the sketch cells or table entries (fixed at load)." },
	[G_PREFIX] = { "xdp_pacer_prefix_length", "Live source prefix length forming the key, by address family." },
	[G_ROWS] = { "xdp_pacer_sketch_rows", "Sketch rows (fixed at load; sketch backend only)." },
	[G_WIDTH] = { "xdp_pacer_sketch_width_cells", "Sketch cells per row, as load --width (fixed at load; sketch backend only)." },
	[G_TABLE_ENTRIES] = { "xdp_pacer_table_entries", "Table entries: load --width with --backend table, rounded up to whole lines of 24 with --backend dense (fixed at load; the tables only)." },
	[G_MAP_BYTES] = { "xdp_pacer_map_bytes", "Bytes of map memory behind the program, all CPU copies." },
	[G_SAMPLE_SOURCES] = { "xdp_pacer_sample_sources_ratio", "Share of sources recorded (0: off)." },
	[G_SAMPLE_PACKETS] = { "xdp_pacer_sample_packets_ratio", "Share of packets recorded at random (0: off)." },
	[G_BUDGET_LIMIT] = { "xdp_pacer_budget_limit_packets", "Global budget K: admissions per window (0: budget off)." },
	[G_BUDGET_WINDOW] = { "xdp_pacer_budget_window_seconds", "Global budget window T." },
	[G_BUDGET_SLACK_TIME] = { "xdp_pacer_budget_slack_seconds", "Budget bucket time seal (--slack-time; 0: none)." },
	[G_BUDGET_SLACK_COUNT] = { "xdp_pacer_budget_slack_packets", "Budget bucket count seal (--slack-count; 0: none)." },
	[G_BUDGET_NEW_LIMIT] = { "xdp_pacer_budget_new_sources_limit_packets", "Admissions in flight up to which new sources are admitted (K minus the reserve)." },
	[G_BUDGET_HORIZON] = { "xdp_pacer_budget_horizon_seconds", "A source admitted within this time counts as returning (--horizon)." },
	[G_BUDGET_BUCKETS] = { "xdp_pacer_budget_buckets", "Buckets in the budget ring." },
	[G_BUDGET_BATCH] = { "xdp_pacer_budget_batch_packets", "Admissions a CPU draws from the budget ring at once; at most CPUs x (batch - 1) above K in a window." },
	[G_BUDGET_FILTER_CELLS] = { "xdp_pacer_budget_filter_cells", "Cells of the returning-source filter (fixed at load; --reserve-cells)." },
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
	size_t k;
	int fam, s;

	for (fam = F_NONE + 1; fam < F_MAX; fam++) {
		family_head(f, families[fam].name, families[fam].help, "counter");
		for (k = 0; k < n; k++) {
			for (s = 0; s < PACER_STAT_MAX; s++) {
				int twin = pacer_stat_observes((unsigned)s);

				if (stat_family[s] != (enum family)fam)
					continue;
				fputs(families[fam].name, f);
				if (twin >= 0) { /* an observed verdict: its enforced twin's name, and the mode */
					fputs("{ifname=\"", f);
					prom_label_value(f, p[k].ifname);
					fputc('"', f);
					label_pair(f, families[fam].label, pacer_stat_names[twin]);
					label_pair(f, "mode", "observe");
					fputc('}', f);
				} else {
					labels(f, &p[k], families[fam].label,
					       families[fam].label ? pacer_stat_names[s] : NULL);
				}
				fprintf(f, " %llu\n", (unsigned long long)p[k].counters[s]);
			}
		}
	}
}

/*
 * Per traffic class: packets it matched, and what became of them, with a
 * class label; its match, action and key as labels of an info gauge, its
 * limit as gauges.
 */
static void write_classes(FILE *f, const struct prom_pacer *p, size_t n)
{
	static const char *const verdicts[] = { [PACER_CSTAT_PASSED] = "passed",
						[PACER_CSTAT_DROPPED] = "dropped",
						[PACER_CSTAT_DROPPED_BUDGET] = "dropped_budget",
						[PACER_CSTAT_OBSERVED] = "dropped",
						[PACER_CSTAT_OBSERVED_BUDGET] = "dropped_budget" };
	char mb[160];
	size_t k;
	int i, s;

	family_head(f, "xdp_pacer_class_seen_total", "IP packets a traffic class matched (the first class that matches decides).",
		    "counter");
	for (k = 0; k < n; k++)
		for (i = 0; i < p[k].nclasses; i++) {
			fputs("xdp_pacer_class_seen_total", f);
			labels(f, &p[k], "class", p[k].classes[i].c.name);
			fprintf(f, " %llu\n", (unsigned long long)p[k].classes[i].counters[PACER_CSTAT_SEEN]);
		}
	family_head(f, "xdp_pacer_class_packets_total",
		    "Packets a traffic class matched, by verdict: passed (paced and admitted, or action pass), dropped (by its limit or action drop), dropped_budget (admitted by the class, refused by the global budget); mode=\"observe\": packets such a drop verdict passed in observe mode.",
		    "counter");
	for (k = 0; k < n; k++)
		for (i = 0; i < p[k].nclasses; i++)
			for (s = PACER_CSTAT_PASSED; s < PACER_CSTAT_MAX; s++) {
				fputs("xdp_pacer_class_packets_total{ifname=\"", f);
				prom_label_value(f, p[k].ifname);
				fputc('"', f);
				label_pair(f, "class", p[k].classes[i].c.name);
				label_pair(f, "verdict", verdicts[s]);
				if (s == PACER_CSTAT_OBSERVED || s == PACER_CSTAT_OBSERVED_BUDGET)
					label_pair(f, "mode", "observe");
				fprintf(f, "} %llu\n", (unsigned long long)p[k].classes[i].counters[s]);
			}
	family_head(f, "xdp_pacer_class_info",
		    "The traffic classes in order (value: its position from 1), with their match, action and key.", "gauge");
	for (k = 0; k < n; k++)
		for (i = 0; i < p[k].nclasses; i++) {
			const struct pacer_class *c = &p[k].classes[i].c;

			fputs("xdp_pacer_class_info{ifname=\"", f);
			prom_label_value(f, p[k].ifname);
			fputc('"', f);
			label_pair(f, "class", c->name);
			label_pair(f, "match", class_match_format(&c->m, mb, sizeof(mb)));
			label_pair(f, "action", class_action_name(c->action));
			label_pair(f, "key", c->action == PACER_ACTION_PACE ? class_key_name(c->key_mode) : "");
			label_pair(f, "mode", own_mode_name(c->mode));
			fprintf(f, "} %d\n", i + 1);
		}
	family_head(f, "xdp_pacer_class_interval_seconds", "A pacing class's interval L, or T of its rate N/T.", "gauge");
	for (k = 0; k < n; k++)
		for (i = 0; i < p[k].nclasses; i++) {
			if (p[k].classes[i].c.action != PACER_ACTION_PACE)
				continue;
			fputs("xdp_pacer_class_interval_seconds", f);
			labels(f, &p[k], "class", p[k].classes[i].c.name);
			fprintf(f, " %.10g\n", (double)p[k].classes[i].c.interval_ns / 1e9);
		}
	family_head(f, "xdp_pacer_class_rate_packets", "A pacing class's N per interval_seconds (1: an interval).", "gauge");
	for (k = 0; k < n; k++)
		for (i = 0; i < p[k].nclasses; i++) {
			if (p[k].classes[i].c.action != PACER_ACTION_PACE)
				continue;
			fputs("xdp_pacer_class_rate_packets", f);
			labels(f, &p[k], "class", p[k].classes[i].c.name);
			fprintf(f, " %u\n", p[k].classes[i].c.rate_n ? p[k].classes[i].c.rate_n : 1);
		}
}

/* The lists' sizes: by list and origin, and how many of them expire. */
static void write_lists(FILE *f, const struct prom_pacer *p, size_t n)
{
	static const char *const lists[2] = { "exempt", "deny" };
	static const char *const origins[PACER_LIST_ORIGIN_MAX] = { "configured", "added" };
	size_t k;
	int l, o;

	family_head(f, "xdp_pacer_list_entries",
		    "Prefixes on the exempt and deny lists, by origin: configured (the configuration's, replaced by a reload) or added (by 'xdp-pacer deny|exempt add', kept by a reload); expired ones not counted.",
		    "gauge");
	for (k = 0; k < n; k++)
		for (l = 0; l < 2; l++)
			for (o = 0; o < PACER_LIST_ORIGIN_MAX; o++) {
				fputs("xdp_pacer_list_entries{ifname=\"", f);
				prom_label_value(f, p[k].ifname);
				fputc('"', f);
				label_pair(f, "list", lists[l]);
				label_pair(f, "origin", origins[o]);
				fprintf(f, "} %llu\n", (unsigned long long)p[k].list_entries[l][o]);
			}
	family_head(f, "xdp_pacer_list_timed_entries",
		    "Of xdp_pacer_list_entries, those added with a timeout: they expire on their own.", "gauge");
	for (k = 0; k < n; k++)
		for (l = 0; l < 2; l++) {
			fputs("xdp_pacer_list_timed_entries", f);
			labels(f, &p[k], "list", lists[l]);
			fprintf(f, " %llu\n", (unsigned long long)p[k].list_timed[l]);
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
	const struct pacer_budget_cfg *b = &p->budget;
	const struct backend_desc *d = backend_of(l->backend);
	bool by_rows = d && d->sized_by_rows;
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
	case G_ROWS:
	case G_WIDTH:
		if (!by_rows)
			return; /* a table has entries, not rows of cells */
		v = g == G_ROWS ? l->rows : (double)geom_width_cells(l->kind, l->rows, l->lines_log2);
		break;
	case G_TABLE_ENTRIES:
		if (!d || by_rows)
			return;
		v = (double)d->width(l->kind, l->rows, l->lines_log2, l->lines); /* the table's --width: entries */
		break;
	case G_INTERVAL: v = (double)p->cfg.interval_ns / 1e9; break;
	case G_RATE: v = p->cfg.rate_n ? p->cfg.rate_n : 1; break;
	case G_BURST: v = p->cfg.burst_ticks; break;
	case G_THRESH: v = p->cfg.thresh_ticks; break;
	case G_TICK: v = (double)pacer_tick_ns(l->tick_shift) / 1e9; break;
	case G_MAP_BYTES: v = (double)p->map_bytes; break;
	case G_SAMPLE_SOURCES: v = ratio_of(p->cfg.sample_src_thresh); break;
	case G_SAMPLE_PACKETS: v = ratio_of(p->cfg.sample_pkt_thresh); break;
	case G_BUDGET_LIMIT: v = (double)b->limit; break;
	case G_BUDGET_WINDOW: v = (double)b->window_ns / 1e9; break;
	case G_BUDGET_SLACK_TIME: v = (double)b->slack_ns / 1e9; break;
	case G_BUDGET_SLACK_COUNT: v = (double)b->slack_count; break;
	case G_BUDGET_NEW_LIMIT: v = (double)b->new_limit; break;
	case G_BUDGET_HORIZON: v = (double)b->horizon_ns / 1e9; break;
	case G_BUDGET_BUCKETS: v = b->buckets; break;
	case G_BUDGET_FILTER_CELLS:
		v = b->seen_cells_log2 < 64 ? (double)(1ULL << b->seen_cells_log2) : 0;
		break;
	case G_BUDGET_BATCH: v = (double)pacer_budget_cfg_batch(b); break;
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
		    "Configuration names of the pacer on an interface (value always 1); layout for the sketch, on_full for the tables.",
		    "gauge");
	for (k = 0; k < n; k++) {
		const struct backend_desc *d = backend_of(p[k].layout.backend);

		snprintf(id, sizeof(id), "%u", p[k].prog_id);
		fputs("xdp_pacer_info{ifname=\"", f);
		prom_label_value(f, p[k].ifname);
		fputc('"', f);
		label_pair(f, "prog_id", id);
		label_pair(f, "backend", backend_name(p[k].layout.backend));
		label_pair(f, "policy", policy_name(p[k].cfg.policy));
		label_pair(f, "malformed", p[k].cfg.malformed ? "drop" : "pass");
		label_pair(f, "mode", mode_name(p[k].cfg.mode));
		label_pair(f, "deny_mode", own_mode_name(p[k].cfg.deny_mode));
		if (d && d->takes_on_full)
			label_pair(f, "on_full", on_full_name(p[k].layout.on_full));
		else
			label_pair(f, "layout", layout_name(p[k].layout.kind));
		label_pair(f, "placement", placement_name(p[k].layout.placement));
		label_pair(f, "clock", clock_name(p[k].layout.clock));
		fputs("} 1\n", f);
	}
}

static void write_build_info(FILE *f)
{
	family_head(f, "xdp_pacer_build_info",
		    "The xdp-pacer release that wrote these metrics and the datapath ABI it reads (value always 1).",
		    "gauge");
	fputs("xdp_pacer_build_info{version=\"", f);
	prom_label_value(f, pacer_version);
	fprintf(f, "\",abi=\"%d\"} 1\n", PACER_ABI_VERSION);
}

int prom_write(FILE *f, const struct prom_pacer *p, size_t n)
{
	size_t k;
	int g;

	write_build_info(f);
	write_counters(f, p, n);
	for (g = 0; g < G_MAX; g++) {
		family_head(f, gauges[g].name, gauges[g].help, "gauge");
		for (k = 0; k < n; k++)
			gauge_samples(f, (enum gauge)g, &p[k]);
	}
	write_info(f, p, n);
	write_classes(f, p, n);
	write_lists(f, p, n);
	return ferror(f) ? -EIO : 0;
}
