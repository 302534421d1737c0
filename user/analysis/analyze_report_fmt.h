/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Formatting and selections shared by the report writers of `analyze` (text, JSON, HTML). */
#ifndef PACER_ANALYZE_REPORT_FMT_H
#define PACER_ANALYZE_REPORT_FMT_H

#include <stdint.h>
#include <stdio.h>
#include "analyze_report.h"
#include "pacer_names.h"

/* A sampling threshold as "1/64", "off", or a percentage when not 2^32/N. */
const char *an_rate_str(uint64_t thresh, char *buf, size_t len);
/* A CLOCK_REALTIME timestamp as "YYYY-MM-DD HH:MM:SS UTC", or "unknown". */
const char *an_wall_str(uint64_t real_ns, char *buf, size_t len);
/* 100 * a / b, 0 when b is 0. */
double an_pct(uint64_t a, uint64_t b);
/* "4 rows x 1048576 cells (rows layout)" or "table of 1048576 entries, on full: drop". */
const char *an_structure_str(const struct pacer_file_header *h, char *buf, size_t len);
/* Whether the audit's global false passes may be non-zero for this limiter, and why. */
const char *an_false_pass_note(const struct pacer_file_header *h);
/* Bytes of the recorded sketch or table (all CPU copies). */
uint64_t an_sketch_bytes(const struct pacer_file_header *h);
/* The recording's span in seconds (header times, else first to last record). */
double an_span_s(const struct an_report *r);
/* A sentence naming the smallest recency structure on this stream, and why. */
const char *an_t1_smallest(const struct t1_result *t, char *buf, size_t len);
/* HistoricalMembership's measured bits over its bound for the distinct count. */
double an_hm_bound_ratio(const struct t1_result *t);
/* The smallest geometry with this many rows that meets the target, or NULL. */
const struct sizing_point *an_smallest_meeting(const struct sizing_result *z, uint32_t rows);

/* A class's limit as "rate 20 per 1s, policy pace", "interval 100ms, ..." or "action drop". */
const char *an_class_limit_str(const struct an_class_audit *ca, char *buf, size_t len);
/* What a class's audit could check, when its key is more than the source. */
const char *an_class_key_note(const struct audit_result *au);

/*
 * Sizing with classes: every class's keys share the one table or sketch,
 * each for its own interval; the sum of the classes' peaks, scaled to the
 * full stream, against the loaded width.
 */
const char *an_class_sizing(const struct an_report *r, char *buf, size_t len);
/* The sum of the classes' peak sources per interval, scaled by the source sample. */
double an_class_keys_peak(const struct an_report *r);

/* The text report's header (recording, limiter, sampling, warnings); the HTML page reuses it. */
void an_text_header(FILE *f, const struct an_report *r);

/* The HTML report's plots (analyze_report_plots.c). */
void an_plot_recency(FILE *f, const struct an_report *r);
void an_plot_timeline(FILE *f, const struct an_report *r);
void an_plot_sizing(FILE *f, const struct an_report *r);

#endif
