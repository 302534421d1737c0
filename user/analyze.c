// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer analyze: read a recording and report the audit of its verdicts,
 * the recency structures of the paper measured on it (Table 1), and the
 * sketch size its traffic needs.  The work is in user/lib/analyze_*.c.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "analyze_report.h"
#include "pacer_sketch.h"
#include "parse.h"
#include "safe_file.h"

#define DEFAULT_TARGET 1e-3
#define DEFAULT_INV_EPS 8
/* Files at least this large get a progress indicator (on a terminal). */
#define PROGRESS_MIN_BYTES (8u << 20)

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-pacer analyze FILE [--eps E] [--window W] [--target-false-drop P]\n"
		"                         [--json] [--report report.html]\n\n"
		"Analyse a recording made by 'xdp-pacer record':\n"
		" - audit: every verdict of a source-sampled source checked against the policy's\n"
		"   promise, computed exactly from its complete packet stream (false drops split\n"
		"   into quantisation, by design, and sketch collisions; false passes, by CPU);\n"
		" - the paper's Table 1 measured on the same stream: an exact recency oracle,\n"
		"   HistoricalMembership and the fixed-block baseline: memory, time, error;\n"
		" - sizing: the stream replayed through the sketch at other widths (scaled by the\n"
		"   sampling rate) and the smallest geometry that meets the target.\n"
		"  --eps E                 HistoricalMembership's relative error; 1/E must be an\n"
		"                          integer (0.125 or 1/8; default 1/%d)\n"
		"  --window W              recency window in items (default: the most source-sampled\n"
		"                          packets inside any one interval, so the window spans one)\n"
		"  --target-false-drop P   false-drop rate the sizing must meet (default %g)\n"
		"  --json                  JSON on stdout instead of the text summary\n"
		"  --report FILE           also write an HTML report with inline SVG plots (mode\n"
		"                          0600, through a temporary renamed into place)\n",
		DEFAULT_INV_EPS, DEFAULT_TARGET);
}

static int parse_eps(const char *s, uint32_t *inv_eps)
{
	double e, inv;
	char *end;

	if (!strncmp(s, "1/", 2)) {
		uint64_t n;

		if (parse_u64_range(s + 2, 2, 1u << 20, &n))
			return -EINVAL;
		*inv_eps = (uint32_t)n;
		return 0;
	}
	errno = 0;
	e = strtod(s, &end);
	if (errno || *end || !(e > 0) || !(e < 1))
		return -EINVAL;
	inv = 1.0 / e;
	if (fabs(inv - round(inv)) > 1e-6 * inv || round(inv) > (1u << 20))
		return -EINVAL;
	*inv_eps = (uint32_t)round(inv);
	return 0;
}

struct progress {
	bool on;
	const char *last_phase;
	int last_pct;
};

static void show_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	int pc = total ? (int)(100.0 * (double)done / (double)total) : 0;

	if (!p->on)
		return;
	if (pc > 100)
		pc = 100;
	if (p->last_phase == phase && p->last_pct == pc)
		return;
	p->last_phase = phase;
	p->last_pct = pc;
	fprintf(stderr, "\ranalyze: %-8s %3d%%", phase, pc);
	fflush(stderr);
}

static void end_progress(struct progress *p)
{
	if (p->on && p->last_phase)
		fprintf(stderr, "\r%30s\r", "");
	p->last_phase = NULL;
}

/* The HTML report, created as every output file is (safe_file.h). */
static int write_report(const char *path, const struct an_report *rep)
{
	struct safe_out o;
	char why[300];
	int err = safe_out_open(&o, path, NULL, SAFE_FILE_MODE, why, sizeof(why));

	if (!err && an_report_html(o.f, rep)) {
		safe_out_discard(&o);
		err = -EIO;
		snprintf(why, sizeof(why), "writing %s failed", path);
	} else if (!err) {
		err = safe_out_commit(&o, why, sizeof(why));
	}
	if (err)
		pr_err("%s", why);
	return err;
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "eps", required_argument, NULL, 'e' },
		{ "window", required_argument, NULL, 'w' },
		{ "target-false-drop", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "report", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pacer_file_reader rd = { 0 };
	struct pacer_file_error ferr = { 0 };
	struct an_stream s = { 0 };
	struct audit_result audit;
	struct t1_result *t1 = NULL;
	struct t1_params tp = { 0 };
	struct sizing_result sizing;
	struct sizing_params sp;
	struct an_report rep = { 0 };
	struct progress prog = { 0 };
	const char *report_path = NULL, *path;
	char t1_note[256] = "", sz_note[256] = "", au_note[256] = "";
	uint64_t window = 0;
	uint32_t inv_eps = DEFAULT_INV_EPS;
	double target = DEFAULT_TARGET;
	bool json = false, have_audit = false, have_sizing = false;
	char *end;
	int c, i, err, ret = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (parse_eps(optarg, &inv_eps))
				return bad_value("--eps", optarg,
						 "expected a number in (0, 1) whose inverse is an integer, e.g. 0.125 or 1/8");
			break;
		case 'w':
			if (parse_u64_range(optarg, 1, 1ULL << 32, &window))
				return bad_value("--window", optarg, "expected a whole number of items from 1 to 2^32");
			break;
		case 't':
			errno = 0;
			target = strtod(optarg, &end);
			if (errno || *end || !(target > 0) || !(target < 1))
				return bad_value("--target-false-drop", optarg,
						 "expected a rate strictly between 0 and 1, e.g. 0.001");
			break;
		case 'j':
			json = true;
			break;
		case 'r':
			report_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (expect_positionals(argc, argv, 1, "a recording file"))
		return 2;
	path = argv[optind];

	err = pacer_file_open(path, &rd, &ferr);
	if (err) {
		pr_err("%s: %s", path, ferr.msg);
		return 1;
	}
	for (i = 0; i < rd.n_warnings; i++)
		pr_err("warning: %s: %s", path, rd.warnings[i].msg);
	prog.on = isatty(STDERR_FILENO) && rd.file_size >= PROGRESS_MIN_BYTES;

	err = an_stream_load(&rd, &s, &ferr, show_progress, &prog);
	end_progress(&prog);
	if (err) {
		pr_err("%s: %s", path, ferr.msg);
		goto out_close;
	}

	/* Audit. */
	if (!rd.hdr.sample_src_thresh || !s.n_source_sampled) {
		snprintf(au_note, sizeof(au_note),
			 "no source-sampled packets: only complete per-source streams can be audited (record with --sources 1/N)");
	} else if ((err = audit_run(&s, &audit))) {
		snprintf(au_note, sizeof(au_note), "%s", strerror(-err));
	} else {
		have_audit = true;
	}

	/* Table 1. */
	t1 = calloc(1, sizeof(*t1));
	tp.window = window;
	tp.inv_eps = inv_eps;
	tp.interval_ns = rd.hdr.interval_ns;
	tp.tick_shift = rd.hdr.tick_shift;
	tp.policy = rd.hdr.policy;
	err = t1 ? t1_run(&s, &tp, t1, show_progress, &prog) : -ENOMEM;
	end_progress(&prog);
	if (err) {
		if (err == -ENODATA)
			snprintf(t1_note, sizeof(t1_note), "no source-sampled packets to run the structures on");
		else if (t1 && t1->note[0])
			snprintf(t1_note, sizeof(t1_note), "%.200s: %.50s", t1->note, strerror(-err));
		else
			snprintf(t1_note, sizeof(t1_note), "%s", strerror(-err));
		free(t1);
		t1 = NULL;
	}

	/* Sizing. */
	sizing_params_from_header(&sp, &rd.hdr);
	sp.target = target;
	/*
	 * The simulation's hash key: any key gives the same statistics, and one
	 * drawn from the recording itself makes the same file give the same report.
	 */
	sp.key[0] = pacer_mix64(rd.hdr.start_real_ns ^ 0x9e3779b97f4a7c15ULL) | 1;
	sp.key[1] = pacer_mix64(rd.hdr.start_mono_ns ^ pacer_crc32(0, rd.hdr.hostname, strlen(rd.hdr.hostname))) | 1;
	err = sizing_run(&s, &sp, &sizing, show_progress, &prog);
	end_progress(&prog);
	if (err == -ENODATA)
		snprintf(sz_note, sizeof(sz_note), "%s", sizing.note);
	else if (err)
		snprintf(sz_note, sizeof(sz_note), "%s", strerror(-err));
	else
		have_sizing = true;

	rep.path = path;
	rep.rd = &rd;
	rep.s = &s;
	rep.audit = have_audit ? &audit : NULL;
	rep.audit_note = au_note;
	rep.t1 = t1;
	rep.t1_note = t1_note;
	rep.sizing = have_sizing ? &sizing : NULL;
	rep.sizing_note = sz_note;
	rep.target = target;

	err = json ? an_report_json(stdout, &rep) : an_report_text(stdout, &rep);
	if (fflush(stdout) || err) {
		pr_err("writing the report to stdout failed");
		goto out_free;
	}
	if (report_path && write_report(report_path, &rep)) {
		goto out_free;
	} else if (report_path) {
		if (!json)
			printf("\nHTML report: %s\n", report_path);
	}
	ret = 0;
out_free:
	if (have_audit)
		audit_free(&audit);
	if (have_sizing)
		sizing_free(&sizing);
	free(t1);
	an_stream_free(&s);
out_close:
	pacer_file_close(&rd);
	return ret;
}
