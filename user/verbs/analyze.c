// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer analyze: read a recording and report the audit of its verdicts,
 * the recency structures of the paper measured on it (Table 1), and the
 * sketch size its traffic needs.  The work is in user/analysis/.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "analyze_report.h"
#include "analyze_pcap.h"
#include "pacer_hash.h"
#include "live_opts.h"
#include "cli_values.h"
#include "safe_file.h"
#include "classes_cli.h"
#include "ticks.h"
#include "pacer_conf.h"

/* Files at least this large get a progress indicator (on a terminal). */
#define PROGRESS_MIN_BYTES (8u << 20)

static int parse_eps(const char *s, uint32_t *inv_eps)
{
	double e, inv;

	if (!strncmp(s, "1/", 2)) {
		uint64_t n;

		if (parse_u64_range(s + 2, 2, 1u << 20, &n))
			return -EINVAL;
		*inv_eps = (uint32_t)n;
		return 0;
	}
	if (parse_decimal(s, &e) || !(e > 0) || !(e < 1))
		return -EINVAL;
	inv = 1.0 / e;
	if (fabs(inv - round(inv)) > 1e-6 * inv || round(inv) > (1u << 20))
		return -EINVAL;
	*inv_eps = (uint32_t)round(inv);
	return 0;
}

static int eps_opt(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	(void)s, (void)why, (void)len;
	return parse_eps(arg, field);
}

struct analyze_opts {
	struct live_opts live; /* the pacer a capture runs through */
	struct class_conf cls; /* --class, --exempt, --deny: the capture's classes and lists */
	const char *path, *pcap, *report, *config;
	uint64_t window;
	uint32_t inv_eps;
	double target;
	bool json;
};

static const struct opt_spec analyze_specs[] = {
	{ .name = "FILE", .type = OPT_STRING, .flags = OPT_POSITIONAL | OPT_OPTIONAL,
	  OPT_FIELD(struct analyze_opts, path) },
	{ .name = "eps", .type = OPT_CUSTOM, .arg = "E", .parse = eps_opt, .dflt = "1/8",
	  OPT_FIELD(struct analyze_opts, inv_eps),
	  .why = "expected a number in (0, 1) whose inverse is an integer, e.g. 0.125 or 1/8",
	  .help = "HistoricalMembership's relative error; 1/E must be an\n"
		  "integer (0.125 or 1/8)" },
	{ .name = "window", .type = OPT_U64, .arg = "W", .min = 1, .max = 1ULL << 32,
	  OPT_FIELD(struct analyze_opts, window),
	  .why = "expected a whole number of items from 1 to 2^32",
	  .help = "recency window in items (default: the most source-sampled\n"
		  "packets inside any one interval, so the window spans one)" },
	{ .name = "target-false-drop", .type = OPT_DECIMAL, .flags = OPT_MIN_OPEN | OPT_MAX_OPEN,
	  .arg = "P", .dmin = 0, .dmax = 1, .dflt = "0.001", OPT_FIELD(struct analyze_opts, target),
	  .why = "expected a rate strictly between 0 and 1, e.g. 0.001",
	  .help = "false-drop rate the sizing must meet" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct analyze_opts, json),
	  .help = "JSON on stdout instead of the text summary" },
	{ .name = "report", .type = OPT_STRING, .arg = "FILE", OPT_FIELD(struct analyze_opts, report),
	  .help = "also write an HTML report with inline SVG plots (mode\n"
		  "0600, through a temporary renamed into place)" },
	{ .type = OPT_SECTION,
	  .help = "Or a capture of the operator's own traffic (pcap or pcapng of Ethernet frames, e.g.\n"
		  "'tcpdump -i eth0 -w trace.pcap'), keyed as the datapath keys it, run through an\n"
		  "exact limiter (what the pacer does without collisions), with the same report and\n"
		  "the smallest sketch per layout that meets the target:" },
	{ .name = "pcap", .type = OPT_STRING, .arg = "CAPTURE", OPT_FIELD(struct analyze_opts, pcap),
	  .help = "the capture file" },
	{ .type = OPT_INCLUDE, .sub = pacing_specs, OPT_FIELD(struct analyze_opts, live) },
	{ .type = OPT_INCLUDE, .sub = class_specs, OPT_FIELD(struct analyze_opts, cls) },
	{ .name = "config", .type = OPT_STRING, .arg = "FILE", OPT_FIELD(struct analyze_opts, config),
	  .help = "the limit, traffic classes and exempt/deny lists of a\n"
		  "load config file (interval, policy, prefix4, prefix6, [class NAME],\n"
		  "[exempt], [deny]; its other keys do not change what a class admits)" },
	{ 0 },
};

static const struct opt_verb analyze_verb = {
	.name = "analyze",
	.synopsis = "FILE [--eps E] [--window W] [--target-false-drop P]\n"
		    "                         [--json] [--report report.html]\n"
		    "       xdp-pacer analyze --pcap CAPTURE [--interval DUR] [--prefix4 N] [--prefix6 N]\n"
		    "                         [--policy pace|quiet] [--config FILE] [--class SPEC]...\n"
		    "                         [--exempt PREFIX] [--deny PREFIX] [same options as above]",
	.intro = "Analyse a recording made by 'xdp-pacer record':\n"
		 " - audit: every verdict of a source-sampled source checked against the policy's\n"
		 "   promise, computed exactly from its complete packet stream (false drops split\n"
		 "   into quantisation, by design, and collisions in the sketch or table; false\n"
		 "   passes, by CPU);\n"
		 " - the paper's Table 1 measured on the same stream: an exact recency oracle,\n"
		 "   HistoricalMembership and the fixed-block baseline: memory, time, error;\n"
		 " - sizing: the stream replayed through the recorded backend (sketch, table or\n"
		 "   dense table) at other sizes (scaled by the sampling rate; the dense table in\n"
		 "   any line count) and the smallest geometry that meets the target.\n",
	.args = "a recording file (or --pcap CAPTURE)",
	.opts = analyze_specs,
};

/* The FILE / --pcap combinations; copies the capture's pacer into pp.  0 or 2. */
static int check_opts(const struct analyze_opts *o, struct pcap_params *pp)
{
	if (!o->pcap && live_opts_any(&o->live))
		return usage_error("analyze", "--interval, --prefix4, --prefix6 and --policy describe the pacer for --pcap; a recording carries its own");
	if (!o->pcap && (o->config || o->cls.classes_given || o->cls.exempt.given || o->cls.deny.given))
		return usage_error("analyze", "--config, --class, --exempt and --deny describe the pacer for --pcap; a recording carries its own classes");
	if (o->live.rate_set)
		return usage_error("analyze", "--rate: analyze --pcap models --interval pacing (one packet per interval) only, not N per T");
	if (!o->pcap && !o->path)
		return usage_error("analyze", "analyze needs a recording file (or --pcap CAPTURE)");
	if (o->pcap && o->path)
		return usage_error("analyze", "unexpected argument '%s'", o->path);
	pp->interval_ns = o->live.interval_ns;
	pp->prefix4 = o->live.prefix4;
	pp->prefix6 = o->live.prefix6;
	pp->policy = o->live.policy;
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

/* What analyze found, each part with a note where it could not run. */
struct analysis {
	struct audit_result audit;
	/* A recording with classes: one audit per class of its table, and slot 0 if it has records. */
	struct audit_result class_audit[PACER_MAX_CLASSES + 1];
	struct an_class_audit classes[PACER_MAX_CLASSES + 1];
	uint32_t n_classes;
	bool capture_classes; /* the classes of a capture: not an audit, shown per class only */
	struct t1_result *t1;
	struct sizing_result sizing, sizing_blocked;
	bool have_audit, have_sizing, have_blocked;
	char t1_note[256], sz_note[256], au_note[256];
};

/* Each class of the table, in match order, then the global limit's packets if any. */
static int run_class_audits(struct analysis *an, const struct an_stream *s,
			    const struct pacer_file_header *hdr)
{
	bool global = false;
	uint32_t i, n = 0;
	int err;

	for (i = 0; i < s->nsrc; i++)
		global |= s->src[i].class_slot == 0;
	for (i = 0; i <= hdr->n_classes && hdr->n_classes; i++) {
		const struct pacer_class *c = i < hdr->n_classes ? &hdr->classes[i] : NULL;
		uint32_t slot = c ? c->stat_slot + 1 : 0;

		if (!c && !global)
			break;
		err = audit_run_class(s, slot, &an->class_audit[n]);
		if (err) {
			while (n)
				audit_free(&an->class_audit[--n]);
			return err;
		}
		an->classes[n].slot = slot;
		an->classes[n].c = c;
		an->classes[n].audit = &an->class_audit[n];
		n++;
	}
	an->n_classes = n;
	return 0;
}

static void run_audit(struct analysis *an, const struct an_stream *s,
		      const struct pacer_file_header *hdr, bool capture)
{
	int err;

	if (capture && hdr->n_classes) {
		/* Not an audit: each class's exact verdicts, sources and sources per interval. */
		if ((err = audit_run(s, &an->audit)) || (err = run_class_audits(an, s, hdr))) {
			snprintf(an->au_note, sizeof(an->au_note), "%s", strerror(-err));
			return;
		}
		an->have_audit = true;
		an->capture_classes = true;
		snprintf(an->au_note, sizeof(an->au_note),
			 "a capture has no datapath verdicts to audit; the exact limiter's are under Capture and per class");
	} else if (capture)
		snprintf(an->au_note, sizeof(an->au_note),
			 "a capture has no datapath verdicts to audit; the exact limiter's are under Capture");
	else if (!hdr->sample_src_thresh || !s->n_source_sampled)
		snprintf(an->au_note, sizeof(an->au_note),
			 "no source-sampled packets: only complete per-source streams can be audited (record with --sample-sources 1/N)");
	else if ((err = audit_run(s, &an->audit)))
		snprintf(an->au_note, sizeof(an->au_note), "%s", strerror(-err));
	else if ((err = run_class_audits(an, s, hdr))) {
		snprintf(an->au_note, sizeof(an->au_note), "%s", strerror(-err));
		audit_free(&an->audit);
	} else {
		an->have_audit = true;
	}
}

/* Table 1: HistoricalMembership against the other structures on the sampled stream. */
static void run_table1(struct analysis *an, const struct an_stream *s,
		       const struct pacer_file_header *hdr, const struct analyze_opts *o,
		       struct progress *prog)
{
	struct t1_params tp = { .window = o->window, .inv_eps = o->inv_eps,
				.interval_ns = hdr->interval_ns, .tick_shift = hdr->tick_shift,
				.policy = hdr->policy };
	int err;

	an->t1 = calloc(1, sizeof(*an->t1));
	err = an->t1 ? t1_run(s, &tp, an->t1, show_progress, prog) : -ENOMEM;
	end_progress(prog);
	if (!err)
		return;
	if (err == -ENODATA)
		snprintf(an->t1_note, sizeof(an->t1_note), "no source-sampled packets to run the structures on");
	else if (an->t1 && an->t1->note[0])
		snprintf(an->t1_note, sizeof(an->t1_note), "%.200s: %.50s", an->t1->note, strerror(-err));
	else
		snprintf(an->t1_note, sizeof(an->t1_note), "%s", strerror(-err));
	free(an->t1);
	an->t1 = NULL;
}

/* The smallest geometry meeting the target; for a capture also the other layout's. */
static void run_sizing(struct analysis *an, const struct an_stream *s,
		       const struct pacer_file_header *hdr, double target, bool capture,
		       struct progress *prog)
{
	struct sizing_params sp;
	int err;

	if (hdr->n_classes) {
		snprintf(an->sz_note, sizeof(an->sz_note),
			 "the replay models one interval for every source; with traffic classes each class has its own (per-class sources per interval and their sum are under Audit per class)");
		return;
	}
	sizing_params_from_header(&sp, hdr);
	sp.target = target;
	/*
	 * The simulation's hash key: any key gives the same statistics, and one
	 * drawn from the recording itself makes the same file give the same report.
	 */
	sp.key[0] = pacer_mix64(hdr->start_real_ns ^ 0x9e3779b97f4a7c15ULL) | 1;
	sp.key[1] = pacer_mix64(hdr->start_mono_ns ^
				pacer_crc32(0, hdr->hostname, strlen(hdr->hostname))) | 1;
	err = sizing_run(s, &sp, &an->sizing, show_progress, prog);
	end_progress(prog);
	if (err == -ENODATA)
		snprintf(an->sz_note, sizeof(an->sz_note), "%s", an->sizing.note);
	else if (err)
		snprintf(an->sz_note, sizeof(an->sz_note), "%s", strerror(-err));
	else
		an->have_sizing = true;
	if (!capture || !an->have_sizing)
		return;
	/* The other sketch layout's smallest geometry on the same traffic. */
	sp.backend = PACER_BACKEND_SKETCH;
	sp.on_full = PACER_TBL_FULL_DROP;
	sp.kind = PACER_LAYOUT_BLOCKED;
	an->have_blocked = !sizing_run(s, &sp, &an->sizing_blocked, show_progress, prog);
	end_progress(prog);
}

static void analysis_free(struct analysis *an)
{
	uint32_t i;

	if (an->have_audit)
		audit_free(&an->audit);
	for (i = 0; an->have_audit && i < an->n_classes; i++)
		audit_free(&an->class_audit[i]);
	if (an->have_sizing)
		sizing_free(&an->sizing);
	if (an->have_blocked)
		sizing_free(&an->sizing_blocked);
	free(an->t1);
}

/* The text or JSON report on stdout, and the HTML one if asked: 0 or 1. */
static int write_reports(struct an_report *rep, const struct analysis *an,
			 const struct analyze_opts *o)
{
	int err;

	rep->audit = an->have_audit && !an->capture_classes ? &an->audit : NULL;
	rep->audit_note = an->au_note;
	rep->classes = an->have_audit ? an->classes : NULL;
	rep->n_classes = an->have_audit ? an->n_classes : 0;
	rep->t1 = an->t1;
	rep->t1_note = an->t1_note;
	rep->sizing = an->have_sizing ? &an->sizing : NULL;
	rep->sizing_note = an->sz_note;
	rep->sizing_blocked = an->have_blocked ? &an->sizing_blocked : NULL;
	rep->target = o->target;
	err = o->json ? an_report_json(stdout, rep) : an_report_text(stdout, rep);
	if (fflush(stdout) || err) {
		pr_err("writing the report to stdout failed");
		return 1;
	}
	if (!o->report)
		return 0;
	if (write_report(o->report, rep))
		return 1;
	if (!o->json)
		printf("\nHTML report: %s\n", o->report);
	return 0;
}

/* The recording's records (or the capture's frames) as one stream: 0 or 1. */
static int load_input(const struct analyze_opts *o, const struct pcap_params *pp,
		      struct pacer_file_reader *rd, struct an_stream *s, struct pcap_summary *psum,
		      struct progress *prog)
{
	struct pacer_file_error ferr = { 0 };
	char perr[512];
	int i, err;

	if (o->pcap) {
		if (pcap_load(o->pcap, pp, s, psum, perr, sizeof(perr))) {
			pr_err("%s: %s", o->pcap, perr);
			return 1;
		}
		if (psum->truncated)
			pr_err("warning: %s: the capture is cut short (%s); analysing the %llu whole frames before the cut",
			       o->pcap, psum->truncation, (unsigned long long)psum->frames);
		if (psum->corrupt)
			pr_err("warning: %s: the capture is corrupt (%s); analysing the %llu frames before it",
			       o->pcap, psum->corruption, (unsigned long long)psum->frames);
		if (pcap_skipped(psum)) {
			struct pcap_summary skips = *psum;

			skips.corrupt = skips.truncated = 0; /* said above */
			pcap_problems(&skips, perr, sizeof(perr));
			pr_err("warning: %s: %s; analysing the other %llu frames", o->pcap, perr,
			       (unsigned long long)psum->frames);
		}
		rd->hdr = s->hdr;
		rd->n_records = s->n;
		return 0;
	}
	if (pacer_file_open(o->path, rd, &ferr)) {
		pr_err("%s: %s", o->path, ferr.msg);
		return 1;
	}
	for (i = 0; i < rd->n_warnings; i++)
		pr_err("warning: %s: %s", o->path, rd->warnings[i].msg);
	prog->on = isatty(STDERR_FILENO) && rd->file_size >= PROGRESS_MIN_BYTES;
	err = an_stream_load(rd, s, &ferr, show_progress, prog);
	end_progress(prog);
	if (err) {
		pr_err("%s: %s", o->path, ferr.msg);
		pacer_file_close(rd);
		return 1;
	}
	return 0;
}

/*
 * The capture's classes and lists: the config file's sections with the
 * command line's over them, limits in ticks of a tick they all fit on the
 * table (an exact limiter has no cells to fit).  0 or 2 (said why).
 */
static int capture_classes(struct pacer_conf *conf, struct analyze_opts *o, struct pcap_params *pp,
			   struct pacer_class classes[PACER_MAX_CLASSES])
{
	struct class_conf *cc = NULL;
	uint32_t shift;
	int err;

	err = classes_merge(conf, &o->cls, &cc);
	if (err)
		return err;
	if (!cc->n && !cc->exempt.n && !cc->deny.n)
		return 0;
	shift = pacer_default_tick_shift(pp->interval_ns);
	if (cc->n && classes_choose_tick(cc, 1, pp->interval_ns, 0, PACER_BACKEND_TABLE, &shift))
		return 2;
	if (cc->n && classes_build(cc, shift, PACER_BACKEND_TABLE, pp->prefix4, pp->prefix6, NULL, classes))
		return 2;
	pp->classes = classes;
	pp->n_classes = (uint32_t)cc->n;
	pp->tick_shift = shift;
	pp->exempt = cc->exempt.p;
	pp->n_exempt = cc->exempt.n;
	pp->deny = cc->deny.p;
	pp->n_deny = cc->deny.n;
	return 0;
}

int cmd_analyze(int argc, char **argv)
{
	struct pacer_class classes[PACER_MAX_CLASSES];
	struct pacer_conf conf;
	struct pacer_file_reader rd = { 0 };
	struct an_stream s = { 0 };
	struct analysis an = { 0 };
	struct analyze_opts o = { 0 };
	struct pcap_params pp;
	struct pcap_summary psum;
	struct an_report rep = { 0 };
	struct progress prog = { 0 };
	bool capture;
	int err, ret;

	err = conf_expand_argv(&argc, &argv, CONF_KEYS_CAPTURE, &conf);
	if (!err)
		err = parse_verb_opts(&analyze_verb, argc, argv, &o);
	if (err) {
		ret = err == OPTS_HELP ? 0 : err;
		goto out_opts;
	}
	o.config = conf.path;
	ret = 2;
	memset(&pp, 0, sizeof(pp));
	if (check_opts(&o, &pp) || (o.pcap && capture_classes(&conf, &o, &pp, classes)))
		goto out_opts;
	capture = o.pcap != NULL;
	if (load_input(&o, &pp, &rd, &s, &psum, &prog)) {
		an_stream_free(&s);
		ret = 1;
		goto out_opts;
	}
	run_audit(&an, &s, &rd.hdr, capture);
	run_table1(&an, &s, &rd.hdr, &o, &prog);
	run_sizing(&an, &s, &rd.hdr, o.target, capture, &prog);
	rep.path = capture ? o.pcap : o.path;
	rep.rd = &rd;
	rep.s = &s;
	rep.pcap = capture ? &psum : NULL;
	ret = write_reports(&rep, &an, &o);
	analysis_free(&an);
	an_stream_free(&s);
	if (!capture)
		pacer_file_close(&rd);
out_opts:
	class_conf_free(&o.cls);
	pacer_conf_free(&conf);
	return ret;
}
