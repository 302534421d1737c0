// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer record: turn on sampling in the live program, stream the ring
 * buffer's records into a recording file, and put sampling back as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "variant_swap.h"
#include "classes_map.h"
#include "pacer_file.h"
#include "live_opts.h"
#include "cli_values.h"
#include "safe_file.h"
#include "sample_tap.h"
#include "time_now.h"

#define DEFAULT_SOURCES_ONE_IN 64

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

struct record_opts {
	struct live_opts live; /* the sampling options */
	const char *ifname, *out;
	uint64_t duration, count;
	bool csv, out_set;
};

static const struct opt_spec record_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct record_opts, ifname) },
	{ .name = "output", .short_name = 'o', .type = OPT_STRING, .flags = OPT_REQUIRED,
	  .arg = "FILE", OPT_FIELD(struct record_opts, out), OPT_GIVEN(struct record_opts, out_set),
	  .help = "where to write (mode 0600); the recording goes to FILE.tmp,\n"
		  "which must not exist, and is renamed to FILE when complete" },
	{ .type = OPT_INCLUDE, .sub = sampling_specs, OPT_FIELD(struct record_opts, live) },
	{ .name = "duration", .type = OPT_DURATION, .arg = "DUR",
	  OPT_FIELD(struct record_opts, duration),
	  .help = "stop after DUR (e.g. 30s, 500ms); default: until Ctrl-C" },
	{ .name = "count", .type = OPT_U64, .arg = "N", .min = 1, .max = UINT64_MAX,
	  OPT_FIELD(struct record_opts, count), .help = "stop after N records" },
	{ .name = "csv", .type = OPT_BOOL, OPT_FIELD(struct record_opts, csv),
	  .help = "write CSV (for other tools) instead of the binary format" },
	{ 0 },
};

#define STR(x) #x
#define XSTR(x) STR(x)

static const struct opt_verb record_verb = {
	.name = "record",
	.synopsis = "IFNAME -o FILE [--sample-sources 1/N|off] [--sample-packets 1/M|off]\n"
		    "                        [--duration DUR] [--count N] [--csv]",
	.intro = "Record the limiter's decisions on IFNAME for 'xdp-pacer analyze'.\n"
		 "Sampling by source defaults to 1/" XSTR(DEFAULT_SOURCES_ONE_IN)
		 "; complete per-source streams make the audit\n"
		 "exact.  Packet sampling defaults to off.\n",
	.args = "an interface name",
	.opts = record_specs,
	.epilog = "Sampling is switched on in the running program and restored to its previous\n"
		  "setting on exit, Ctrl-C and SIGTERM.  After 'kill -9' restore it by hand:\n"
		  "'xdp-pacer set IFNAME --sample-sources off --sample-packets off'.  A killed\n"
		  "recording leaves FILE.tmp, which analyze reads up to its last whole record.\n"
		  "Records the datapath could not queue (ring buffer full) are counted and reported.\n"
		  "If the pacer goes away (unload, or the interface deleted), the recording stops,\n"
		  "keeps what it has, and exits 1.\n",
};

struct consumer {
	struct pacer_file_writer *w;
	uint64_t written, limit;
	uint64_t discarded;     /* drained before the start, or beyond --count */
	uint64_t short_events;  /* smaller than a record: a foreign datapath */
	uint64_t class_late;    /* a class's record in a recording begun without classes */
	bool discard;
	uint64_t deadline_ns;   /* 0: none; checked while polling (see on_event) */
	uint64_t last_ts_ns;    /* the latest record's timestamp */
	int write_err;
};


static int on_event(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;
	struct pacer_record rec;
	int err;

	if (c->discard || (c->limit && c->written >= c->limit)) {
		c->discarded++;
		return 0;
	}
	/* A program loaded by an earlier release writes records without the class's key. */
	if (size < offsetof(struct pacer_record, key_dport)) {
		c->short_events++;
		return 0;
	}
	memset(&rec, 0, sizeof(rec));
	memcpy(&rec, data, size < sizeof(rec) ? size : sizeof(rec));
	/* What the datapath did not say it wrote is not the key (ring memory is not zeroed). */
	rec.pad = 0;
	if (!(rec.flags & PACER_REC_KEY) || size < sizeof(rec) || !c->w->hdr.n_classes) {
		rec.flags &= (uint8_t)~PACER_REC_KEY;
		rec.key_dport = 0;
		memset(rec.key_dst, 0, sizeof(rec.key_dst));
	}
	/*
	 * Classes configured after a classless start: the file has no table to
	 * judge them by, and under the global limit they would be misjudged.
	 */
	if (rec.class_slot && !c->w->hdr.n_classes) {
		c->class_late++;
		return 0;
	}
	err = pacer_file_writer_append(c->w, &rec);
	if (err) {
		c->write_err = err;
		return err;
	}
	c->written++;
	if (rec.ts_ns > c->last_ts_ns)
		c->last_ts_ns = rec.ts_ns;
	/* Stop polling at the limit; what is left in the ring is not ours to keep. */
	if (c->limit && c->written >= c->limit)
		return -ECANCELED;
	/*
	 * Under a steady flood one poll call can keep consuming for as long as
	 * records arrive: look at the clock and signals now and then.
	 */
	if (!(c->written & 4095) && (stop_signal || (c->deadline_ns && mono_ns() >= c->deadline_ns)))
		return -EAGAIN;
	return 0;
}

/* Interval (or rate) and its ticks as one consistent set, even while 'set' changes them. */
static void read_interval(const struct pacer_handle *h, struct pacer_file_header *hdr)
{
	volatile struct pacer_config *c = h->cfg;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		hdr->interval_ns = c->interval_ns;
		hdr->thresh_ticks = c->thresh_ticks;
		hdr->burst_ticks = c->burst_ticks;
		hdr->rate_n = c->rate_n ? c->rate_n : 1;
		__sync_synchronize();
		if (c->interval_ns == hdr->interval_ns && c->thresh_ticks == hdr->thresh_ticks &&
		    c->burst_ticks == hdr->burst_ticks && c->rate_n == hdr->rate_n)
			return;
	}
}

/* One recording: what must be undone at the end, whatever happened. */
struct recorder {
	struct pacer_handle h;
	struct ring_buffer *rb;
	struct consumer cons;
	struct pacer_file_writer w;
	struct pacer_file_header hdr;
	struct sigaction old_int, old_term, old_hup;
	uint64_t before[PACER_STAT_MAX], lost, prev_src, prev_pkt;
	uint64_t seen_attached; /* the program's clock when it was last seen attached */
	uint64_t classes_same_ns; /* ... when its class list was last seen as the header's */
	uint32_t class_sel;     /* the class_sel that list was read under */
	bool handle_open, signals_set, sampling_on, counters_ok, gone;
	char lock_path[64];
	int lock_fd;
};

static int check_record_opts(const struct record_opts *ro)
{
	if (!strcmp(ro->out, "-")) {
		pr_err("-o - is not supported: a recording is renamed into place when complete; give a file name");
		return 2;
	}
	if (!ro->live.sample_src && !ro->live.sample_pkt) {
		pr_err("--sample-sources off and --sample-packets off together would record nothing");
		return 2;
	}
	return 0;
}

/* The program, the lock, the ring (drained of others' records), the counters, the signals. */
static int recorder_open(struct recorder *r, const char *ifname)
{
	struct sigaction sa = { .sa_handler = on_signal };
	char eb[128];
	int err;

	r->lock_fd = -1;
	if (pacer_handle_open(ifname, &r->h))
		return 1;
	r->handle_open = true;
	/* One consumer of the ring per program (sample_tap.h): record, top or events. */
	r->lock_fd = sample_lock_take(&r->h, "record", r->lock_path, sizeof(r->lock_path));
	if (r->lock_fd < 0)
		return 1;
	r->rb = ring_buffer__new(r->h.map_fd[PACER_MAP_EVENTS], on_event, &r->cons, NULL);
	if (!r->rb) {
		err = -errno;
		pr_err("cannot open the ring buffer of %s: %s", r->h.ifname, err_str(err, eb, sizeof(eb)));
		return 1;
	}
	/* Records someone else's sampling left behind are not part of this recording. */
	r->cons.discard = true;
	ring_buffer__consume(r->rb);
	r->cons.discard = false;
	r->counters_ok = !pacer_read_counters(&r->h, r->before);
	if (!r->counters_ok)
		pr_err("warning: cannot read the counters of %s: lost records will not be known",
		       r->h.ifname);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &r->old_int);
	sigaction(SIGTERM, &sa, &r->old_term);
	sigaction(SIGHUP, &sa, &r->old_hup);
	r->signals_set = true;
	return 0;
}

/* The running class list, which makes the recording format 3: 0 or 1. */
static int read_classes(struct pacer_file_header *hdr, const struct pacer_handle *h, uint32_t *sel)
{
	struct pacer_class_maps m;
	struct pacer_class c[PACER_MAX_CLASSES];
	int n = 0, err;

	pacer_class_maps_of(h, &m);
	if (m.classes_fd < 0)
		return 0; /* a program without class maps runs no classes */
	*sel = __atomic_load_n(&h->cfg->class_sel, __ATOMIC_ACQUIRE);
	err = pacer_classes_read(&m, c, &n);
	if (err) {
		pr_err("cannot read the classes of %s: %s", h->ifname, strerror(-err));
		return 1;
	}
	pacer_file_header_set_classes(hdr, c, (uint32_t)n);
	return 0;
}

/* The loaded geometry and live settings, as the audit and the sizing need them. */
static int fill_header(struct pacer_file_header *hdr, const struct pacer_handle *h,
		       uint64_t src_thresh, uint64_t pkt_thresh, uint32_t *class_sel)
{
	pacer_file_header_init(hdr);
	read_interval(h, hdr);
	hdr->tick_shift = h->layout.tick_shift;
	hdr->rows = h->layout.rows;
	hdr->lines_log2 = h->layout.lines_log2;
	hdr->kind = h->layout.kind;
	hdr->backend = h->layout.backend;
	hdr->on_full = h->layout.on_full;
	pacer_file_header_set_lines(hdr, h->layout.lines);
	hdr->policy = h->cfg->policy;
	hdr->placement = h->layout.placement;
	hdr->clock = h->layout.clock;
	hdr->prefix4 = h->cfg->prefix4;
	hdr->prefix6 = h->cfg->prefix6;
	hdr->malformed = h->cfg->malformed;
	hdr->ncpus = (uint32_t)h->ncpus;
	hdr->abi_version = h->layout.abi_version;
	hdr->sample_src_thresh = src_thresh;
	hdr->sample_pkt_thresh = pkt_thresh;
	snprintf(hdr->ifname, sizeof(hdr->ifname), "%s", h->ifname);
	if (gethostname(hdr->hostname, sizeof(hdr->hostname) - 1))
		snprintf(hdr->hostname, sizeof(hdr->hostname), "?");
	return read_classes(hdr, h, class_sel);
}

/* Word-sized stores into the live .data, as 'set' does; off puts back what was there. */
static int switch_sampling(struct recorder *r, bool on, uint64_t src, uint64_t pkt)
{
	if (on) {
		r->prev_src = r->h.cfg->sample_src_thresh;
		r->prev_pkt = r->h.cfg->sample_pkt_thresh;
	} else {
		src = r->prev_src;
		pkt = r->prev_pkt;
	}
	/* On: the program made to carry sampling first (variant_swap.h). */
	if (variant_store_sampling(&r->h, src, pkt) && on)
		return -1;
	r->sampling_on = on;
	return 0;
}

/* Every second: flush (bounding what a kill loses) and, on a terminal, show progress. */
static void tick_second(struct recorder *r, const char *out, bool tty)
{
	uint64_t cur[PACER_STAT_MAX];

	if (pacer_file_writer_flush(&r->w))
		pr_err("warning: flushing %s.tmp failed: %s", out, strerror(errno));
	if (!tty)
		return;
	if (r->counters_ok && !pacer_read_counters(&r->h, cur))
		r->lost = cur[PACER_STAT_RECORD_LOST] - r->before[PACER_STAT_RECORD_LOST];
	fprintf(stderr, "\r%" PRIu64 " records, %" PRIu64 " lost ", r->cons.written, r->lost);
}

/*
 * Is the program still attached where it was?  Our map fds keep the ring
 * buffer open after an unload or after the interface is deleted, so no
 * read fails: the ring just stays empty.
 */
static bool still_attached(struct recorder *r)
{
	if (pacer_handle_follow(&r->h)) {
		r->seen_attached = pacer_clock_now(&r->h);
		return true;
	}
	r->gone = true;
	return false;
}

/*
 * Is the running class list still the one in the header?  `set` flips
 * class_sel even for an unchanged list, so a new selector is compared by
 * content.  The first time it differs, the header says from when the
 * records cannot be judged by its table: the last time it was seen the same.
 */
static void check_classes(struct recorder *r)
{
	struct pacer_class_maps m;
	struct pacer_class c[PACER_MAX_CLASSES];
	/* The time first: a list read after it and found the same held at it. */
	uint64_t now = pacer_clock_now(&r->h);
	uint32_t sel = __atomic_load_n(&r->h.cfg->class_sel, __ATOMIC_ACQUIRE);
	int n = 0;

	if (r->w.hdr.classes_changed_ns || !r->w.hdr.n_classes)
		return;
	if (sel != r->class_sel) {
		pacer_class_maps_of(&r->h, &m);
		if (pacer_classes_read(&m, c, &n) || (uint32_t)n != r->w.hdr.n_classes ||
		    memcmp(c, r->w.hdr.classes, (size_t)n * sizeof(c[0]))) {
			r->w.hdr.classes_changed_ns = r->classes_same_ns;
			pr_err("warning: the class list of %s changed during the recording: records after it are not audited",
			       r->h.ifname);
			return;
		}
		r->class_sel = sel;
	}
	r->classes_same_ns = now;
}

#define ATTACH_CHECK_NS 250000000ULL

/* Poll until a signal, the deadline, --count, the program going away or an error. */
static void record_loop(struct recorder *r, const struct record_opts *ro)
{
	uint64_t deadline = ro->duration ? mono_ns() + ro->duration : 0;
	uint64_t next_flush = mono_ns() + 1000000000ULL, next_check = mono_ns() + ATTACH_CHECK_NS;
	bool tty = isatty(STDERR_FILENO);
	char eb[128];
	int err;

	r->cons.deadline_ns = deadline;
	while (!stop_signal) {
		uint64_t now;

		err = ring_buffer__poll(r->rb, 100);
		if (err == -ECANCELED || (ro->count && r->cons.written >= ro->count))
			break;
		if (err < 0 && err != -EINTR && err != -EAGAIN) {
			if (r->cons.write_err)
				pr_err("writing %s.tmp failed: %s", ro->out, strerror(-r->cons.write_err));
			else
				pr_err("reading the ring buffer failed: %s", err_str(err, eb, sizeof(eb)));
			break;
		}
		now = mono_ns();
		if (now >= next_check) {
			if (!still_attached(r))
				break;
			check_classes(r);
			next_check = now + ATTACH_CHECK_NS;
		}
		if (now >= next_flush) {
			tick_second(r, ro->out, tty);
			next_flush = now + 1000000000ULL;
		}
		if (deadline && now >= deadline)
			break;
	}
	if (tty)
		fputc('\n', stderr);
}

static void report_recording(const struct recorder *r, const char *out, uint64_t end_mono,
			     int stopped_by)
{
	pr_info("%s: %" PRIu64 " records written to %s over %.1f s; %" PRIu64 " records lost (ring buffer full)%s",
		r->h.ifname, r->cons.written, out, (double)(end_mono - r->hdr.start_mono_ns) / 1e9,
		r->lost, stopped_by ? " (stopped by signal)" : "");
	if (r->cons.discarded)
		pr_info("%s: %" PRIu64 " records not kept (queued before the start or beyond --count)",
			r->h.ifname, r->cons.discarded);
	if (r->cons.class_late)
		pr_err("warning: %" PRIu64 " records of traffic classes configured after the recording started were skipped (the recording has no class table to judge them by); record again",
		       r->cons.class_late);
	if (r->cons.short_events)
		pr_err("warning: %" PRIu64 " ring buffer events were shorter than a record and skipped",
		       r->cons.short_events);
	if (r->lost)
		pr_err("warning: %" PRIu64 " records were lost: the audit may count false drops that did not happen; sample fewer sources (--sample-sources 1/N with a larger N)",
		       r->lost);
	if (!r->counters_ok)
		pr_err("warning: lost records unknown (counters unreadable)");
}

/* Sampling off, the rest of the ring drained, the file completed and renamed: 0 or 1. */
static int record_finish(struct recorder *r, const struct record_opts *ro)
{
	struct pacer_file_error ferr;
	uint64_t after[PACER_STAT_MAX], end_mono;
	int stopped_by;

	switch_sampling(r, false, 0, 0);
	r->cons.deadline_ns = 0;
	stopped_by = stop_signal;
	stop_signal = 0; /* let the final drain run to the end of the ring (a second Ctrl-C cuts it short) */
	/* What the datapath queued before sampling went off belongs to the recording. */
	if (!r->cons.write_err && !(ro->count && r->cons.written >= ro->count))
		ring_buffer__consume(r->rb);
	/* Gone: the recording covers the time it was last seen attached (or its last record), not the time since. */
	end_mono = r->gone ? (r->seen_attached > r->cons.last_ts_ns ? r->seen_attached : r->cons.last_ts_ns)
			   : pacer_clock_now(&r->h);
	if (r->counters_ok && !pacer_read_counters(&r->h, after))
		r->lost = after[PACER_STAT_RECORD_LOST] - r->before[PACER_STAT_RECORD_LOST];
	if (!r->gone)
		check_classes(r); /* a change since the last look: its records are not judged */
	if (r->cons.write_err) {
		pr_err("writing %s.tmp failed: %s; the records written so far stay in %s.tmp", ro->out,
		       strerror(-r->cons.write_err), ro->out);
		pacer_file_writer_abandon(&r->w);
		return 1;
	}
	if (pacer_file_writer_finish(&r->w, end_mono, r->lost, &ferr)) {
		pr_err("%s", ferr.msg);
		return 1;
	}
	report_recording(r, ro->out, end_mono, stopped_by);
	if (r->gone) {
		pr_err("%s: the recording stopped early because the pacer went away; the %" PRIu64 " records made until then are in %s",
		       r->h.ifname, r->cons.written, ro->out);
		return 1;
	}
	return 0;
}

static void recorder_close(struct recorder *r)
{
	if (r->sampling_on)
		switch_sampling(r, false, 0, 0);
	if (r->signals_set) {
		sigaction(SIGINT, &r->old_int, NULL);
		sigaction(SIGTERM, &r->old_term, NULL);
		sigaction(SIGHUP, &r->old_hup, NULL);
	}
	ring_buffer__free(r->rb);
	if (r->lock_fd >= 0)
		lock_file_release(r->lock_fd, r->lock_path);
	if (r->handle_open)
		pacer_handle_close(&r->h);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts ro = { 0 };
	struct pacer_file_error ferr;
	struct recorder r = { 0 };
	char a[32], sbuf[64];
	int err, ret = 1;

	ro.live.sample_src = sample_thresh_one_in(DEFAULT_SOURCES_ONE_IN);
	err = parse_verb_opts(&record_verb, argc, argv, &ro);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	err = check_record_opts(&ro);
	if (err)
		return err;
	if (recorder_open(&r, ro.ifname))
		goto out;
	if (fill_header(&r.hdr, &r.h, ro.live.sample_src, ro.live.sample_pkt, &r.class_sel))
		goto out;
	if (switch_sampling(&r, true, ro.live.sample_src, ro.live.sample_pkt))
		goto out;
	/*
	 * Read the clock after switching sampling on: a packet that saw it off
	 * took its timestamp before this, so the audit may take "no record since
	 * start" as "no packet since start".
	 */
	r.hdr.start_mono_ns = pacer_clock_now(&r.h);
	r.seen_attached = r.classes_same_ns = r.hdr.start_mono_ns;
	r.hdr.start_real_ns = clock_now_ns(CLOCK_REALTIME);
	if (pacer_file_writer_open(&r.w, ro.out, ro.csv ? PACER_FORMAT_CSV : PACER_FORMAT_BINARY,
				   &r.hdr, &ferr)) {
		pr_err("%s", ferr.msg);
		goto out;
	}
	r.cons.w = &r.w;
	r.cons.limit = ro.count;
	pr_info("recording %s into %s.tmp (renamed to %s when done): %s%s%s", r.h.ifname, ro.out,
		ro.out, format_sampling(ro.live.sample_src, ro.live.sample_pkt, sbuf, sizeof(sbuf)),
		ro.duration ? ", for " : "",
		ro.duration ? format_duration(ro.duration, a, sizeof(a)) : "");
	fflush(stdout);
	record_loop(&r, &ro);
	ret = record_finish(&r, &ro);
out:
	recorder_close(&r);
	return ret;
}
