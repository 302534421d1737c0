/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What `xdp-pacer analyze` prints: a text summary, JSON, and an HTML report with SVG plots. */
#ifndef PACER_ANALYZE_REPORT_H
#define PACER_ANALYZE_REPORT_H

#include <stdio.h>
#include "analyze_audit.h"
#include "analyze_pcap.h"
#include "analyze_sizing.h"
#include "analyze_stream.h"
#include "analyze_recency.h"
#include "json_writer.h"

/* One class's audit (a recording of a program with traffic classes). */
struct an_class_audit {
	uint32_t slot;                    /* class_slot; 0: paced by the global limit */
	const struct pacer_class *c;      /* its entry in the recording's table; NULL for slot 0 */
	const struct audit_result *audit;
};

struct an_report {
	const char *path;
	const struct pacer_file_reader *rd;  /* header, sizes, warnings */
	const struct an_stream *s;
	const struct audit_result *audit;    /* NULL: not run (audit_note says why) */
	const char *audit_note;
	const struct an_class_audit *classes; /* per class, in match order (format 3); n_classes of them */
	uint32_t n_classes;
	const struct t1_result *t1;          /* NULL: not run (t1_note says why) */
	const char *t1_note;
	const struct sizing_result *sizing;  /* NULL: not run (sizing_note says why) */
	const char *sizing_note;
	double target;
	/* analyze --pcap: the capture's summary, and sizing in the other layout (NULL: a recording) */
	const struct pcap_summary *pcap;
	const struct sizing_result *sizing_blocked;
};

int an_report_text(FILE *f, const struct an_report *r);
int an_report_json(FILE *f, const struct an_report *r);
int an_report_html(FILE *f, const struct an_report *r);

/*
 * The capture's section of the report (r->pcap), in text and as a JSON
 * object: frames by kind, the exact limiter's verdicts, sources per
 * interval, and the smallest blocked-layout sketch (r->sizing_blocked).
 */
void pcap_report_text(FILE *f, const struct an_report *r);
void pcap_report_json(struct json_writer *w, const struct an_report *r);

/* One line for the recommended configuration (used by text and HTML). */
const char *an_recommendation(const struct an_report *r, char *buf, size_t len);

#endif
