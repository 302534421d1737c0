// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Formatting shared by the text, JSON and HTML reports of `analyze`. */
#include <inttypes.h>
#include <time.h>
#include "analyze_report_fmt.h"
#include "analyze_sizing.h"
#include "backend.h"
#include "cli_values.h"

/* "1/64", or a percentage when the threshold is not 2^32/N for a whole N. */
const char *an_rate_str(uint64_t thresh, char *buf, size_t len)
{
	uint64_t n;

	if (!thresh) {
		snprintf(buf, len, "off");
		return buf;
	}
	n = (1ULL << 32) / thresh;
	if (n && (1ULL << 32) / n == thresh)
		snprintf(buf, len, "1/%" PRIu64, n);
	else
		snprintf(buf, len, "%.6g%%", 100.0 * (double)thresh / 4294967296.0);
	return buf;
}

const char *an_wall_str(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000ULL);
	struct tm tm;

	if (!real_ns || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "unknown");
	return buf;
}

double an_pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

const char *an_structure_str(const struct pacer_file_header *h, char *buf, size_t len)
{
	return backend_of(h->backend)->report_str(h->rows, h->kind, h->lines_log2, h->lines,
						  h->on_full, buf, len);
}

const char *an_false_pass_note(const struct pacer_file_header *h)
{
	if (h->placement == PACER_PLACEMENT_PERCPU)
		return "per-CPU placement: expected";
	if (backend_of(h->backend)->evicts(h->on_full))
		return "evict-oldest: expected, a source whose fresh entry was evicted passes again";
	return "must be 0";
}

uint64_t an_sketch_bytes(const struct pacer_file_header *h)
{
	return geom_bytes_lines(h->kind, h->rows, h->lines_log2, h->lines, h->placement, h->ncpus);
}

double an_span_s(const struct an_report *r)
{
	const struct pacer_file_header *h = &r->rd->hdr;

	if (h->end_mono_ns > h->start_mono_ns)
		return (double)(h->end_mono_ns - h->start_mono_ns) / 1e9;
	return r->s->n ? (double)(r->s->last_ts - r->s->first_ts) / 1e9 : 0;
}

const char *an_recommendation(const struct an_report *r, char *buf, size_t len)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	const struct sizing_result *z = r->sizing;
	const struct backend_desc *d;
	const struct sizing_point *b;
	char m[32], args[128];

	if (!z) {
		snprintf(buf, len, "no recommendation: %s", r->sizing_note ? r->sizing_note : "sizing not run");
		return buf;
	}
	if (z->best < 0) {
		snprintf(buf, len,
			 "no geometry the loader accepts meets a false-drop rate of %g on this traffic",
			 r->target);
		return buf;
	}
	b = &z->pts[z->best];
	d = backend_of(h->backend);
	snprintf(buf, len, "xdp-pacer load IFNAME %s --placement %s: %s of %s%s",
		 d->load_args(b->rows, h->kind, b->width_cells, h->on_full, args, sizeof(args)),
		 placement_name(h->placement), format_bytes(b->target_bytes, m, sizeof(m)), d->noun,
		 h->placement == PACER_PLACEMENT_PERCPU ? " (all CPU copies)" : "");
	return buf;
}

/* ---- text ---- */

/*
 * Which structure is smallest on this stream, and why: HistoricalMembership
 * holds one entry per distinct source of the window (its tables grow with
 * them), the oracle and the block baseline are sized for W.
 */
const char *an_t1_smallest(const struct t1_result *t, char *buf, size_t len)
{
	int i, best = -1;

	for (i = 0; i < T1_NSTRUCT; i++)
		if (t->row[i].ok && (best < 0 || t->row[i].bytes < t->row[best].bytes))
			best = i;
	if (best < 0)
		return "no structure was built";
	snprintf(buf, len,
		 "smallest here: %s.  The window holds at most %" PRIu64 " distinct sources (mean %.0f) of W = %" PRIu64
		 " items: HistoricalMembership stores one entry per distinct source (%.1f bits each), the exact oracle and "
		 "the block baseline keep slots for every item of W (%.1f and %.1f bits per item)%s",
		 t->row[best].name, t->distinct_max, t->distinct_mean, t->window,
		 t->distinct_max ? (double)t->row[T1_HM].bytes * 8 / (double)t->distinct_max : 0,
		 t->row[T1_EXACT].bits_per_item, t->row[T1_BLOCK].bits_per_item,
		 t->distinct_max * 2 < t->window ? "; with many repeats per window that favours HistoricalMembership"
						  : "; with every source distinct all three hold W entries and the "
						    "oracle's wide timestamps cost most");
	return buf;
}

double an_hm_bound_ratio(const struct t1_result *t)
{
	return t->paper_hm_distinct_bits > 0 ? (double)t->row[T1_HM].bytes * 8 / t->paper_hm_distinct_bits : 0;
}

/* The smallest geometry with this many rows that meets the target, or NULL. */
const struct sizing_point *an_smallest_meeting(const struct sizing_result *z, uint32_t rows)
{
	const struct sizing_point *best = NULL;
	size_t i;

	for (i = 0; i < z->npts; i++)
		if (z->pts[i].rows == rows && z->pts[i].meets &&
		    (!best || z->pts[i].target_bytes < best->target_bytes))
			best = &z->pts[i];
	return best;
}

const char *an_class_limit_str(const struct an_class_audit *ca, char *buf, size_t len)
{
	const struct audit_result *au = ca->audit;
	char a[32];

	if (au->action != PACER_ACTION_PACE)
		snprintf(buf, len, "action %s", pacer_file_action_name(au->action));
	else if (au->rate_n > 1)
		snprintf(buf, len, "rate %u per %s, key %s, policy %s", au->rate_n,
			 format_duration(au->interval_ns, a, sizeof(a)), pacer_file_key_name(au->key_mode),
			 policy_name(au->policy));
	else
		snprintf(buf, len, "interval %s, key %s, policy %s",
			 format_duration(au->interval_ns, a, sizeof(a)), pacer_file_key_name(au->key_mode),
			 policy_name(au->policy));
	return buf;
}

const char *an_class_key_note(const struct audit_result *au)
{
	if (!au->key_merged)
		return "";
	return au->key_mode == PACER_KEY_SRC_DPORT
		       ? "records hold the source, not the destination port of this class's key: its keys are audited merged by source, so its false drops are proven ones (a lower bound)"
		       : "records hold the source, not the destination address of this class's key: its keys are audited merged by source, so its false drops are proven ones (a lower bound)";
}

double an_class_keys_peak(const struct an_report *r)
{
	double scale = sizing_scale(r->rd->hdr.sample_src_thresh), sum = 0;
	uint32_t i;

	for (i = 0; i < r->n_classes; i++)
		if (r->classes[i].audit->action == PACER_ACTION_PACE)
			sum += (double)r->classes[i].audit->keys_per_interval_peak;
	return sum * (scale > 0 ? scale : 1);
}

const char *an_class_sizing(const struct an_report *r, char *buf, size_t len)
{
	const struct pacer_file_header *h = &r->rd->hdr;
	uint64_t width = sizing_header_width(h);
	double keys = an_class_keys_peak(r);

	if (r->pcap)
		snprintf(buf, len,
			 "sizing: the classes' keys each live for their own class's interval in the one table; at peak about %.0f at once (the sum of the classes' peaks): a table of at least that many entries (--backend table --width, a power of two, with room to spare) holds them",
			 keys);
	else
		snprintf(buf, len,
			 "sizing: the classes' sources each live for their own class's interval in the one %s; at peak about %.0f at once%s (the sum of the classes' peaks), %.2f%% of its %" PRIu64 " %s",
			 backend_name(h->backend), keys,
			 an_source_rate(h) < 1 ? " at full scale" : "", width ? 100.0 * keys / (double)width : 0.0,
			 width, h->backend == PACER_BACKEND_TABLE ? "entries" : "cells per row");
	return buf;
}
