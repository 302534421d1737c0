// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer record: turn on sampling in the live program, stream the ring
 * buffer's records into a recording file, and put sampling back as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "pacer_file.h"
#include "live_opts.h"
#include "parse.h"
#include "safe_file.h"
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
		  "Records the datapath could not queue (ring buffer full) are counted and reported.\n",
};

struct consumer {
	struct pacer_file_writer *w;
	uint64_t written, limit;
	uint64_t discarded;     /* drained before the start, or beyond --count */
	uint64_t short_events;  /* smaller than a record: a foreign datapath */
	bool discard;
	uint64_t deadline_ns;   /* 0: none; checked while polling (see on_event) */
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
	if (size < sizeof(rec)) {
		c->short_events++;
		return 0;
	}
	memcpy(&rec, data, sizeof(rec));
	err = pacer_file_writer_append(c->w, &rec);
	if (err) {
		c->write_err = err;
		return err;
	}
	c->written++;
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

/*
 * One recorder per program: two would split the ring buffer's records
 * between them and each would restore sampling under the other's feet.
 * Keyed by program id, which (unlike an ifindex) is unique across network
 * namespaces.  The lock file is removed when the recording ends.
 */
static int lock_program(const struct pacer_handle *h, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/run/xdp-pacer-record.prog%u.lock", h->prog_id);
	fd = lock_file_acquire(path, 1);
	if (fd < 0 && fd != -EBUSY) {
		snprintf(path, len, "/tmp/xdp-pacer-record.prog%u.lock", h->prog_id);
		fd = lock_file_acquire(path, 1);
	}
	return fd;
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

int cmd_record(int argc, char **argv)
{
	struct record_opts ro = { 0 };
	uint64_t src_thresh = sample_thresh_one_in(DEFAULT_SOURCES_ONE_IN), pkt_thresh = 0;
	uint64_t duration = 0, count = 0, prev_src, prev_pkt, deadline = 0, next_flush;
	uint64_t before[PACER_STAT_MAX], after[PACER_STAT_MAX], lost = 0, end_mono;
	enum pacer_file_format format = PACER_FORMAT_BINARY;
	struct pacer_file_writer w = { 0 };
	struct pacer_file_header hdr;
	struct pacer_file_error ferr;
	struct consumer cons = { 0 };
	struct ring_buffer *rb = NULL;
	struct sigaction sa = { 0 }, old_int, old_term, old_hup;
	struct pacer_handle h;
	const char *out = NULL;
	bool tty = isatty(STDERR_FILENO), sampling_on = false, counters_ok;
	char eb[128], a[32], sbuf[64], lock_path[64];
	int err, lock_fd, ret = 1, stopped_by = 0;

	ro.live.sample_src = src_thresh;
	err = parse_verb_opts(&record_verb, argc, argv, &ro);
	if (err)
		return err == OPTS_HELP ? 0 : err;
	src_thresh = ro.live.sample_src, pkt_thresh = ro.live.sample_pkt, out = ro.out;
	duration = ro.duration, count = ro.count;
	format = ro.csv ? PACER_FORMAT_CSV : PACER_FORMAT_BINARY;
	if (!strcmp(out, "-")) {
		pr_err("-o - is not supported: a recording is renamed into place when complete; give a file name");
		return 2;
	}
	if (!src_thresh && !pkt_thresh) {
		pr_err("--sample-sources off and --sample-packets off together would record nothing");
		return 2;
	}
	if (pacer_handle_open(ro.ifname, &h))
		return 1;
	if (h.layout.backend == PACER_BACKEND_TABLE)
		pr_info("note: %s runs the recency table; the recording's audit applies as is, but "
			"analyze's sizing models the sketch (the file format does not name the backend yet)",
			h.ifname);
	lock_fd = lock_program(&h, lock_path, sizeof(lock_path));
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			pr_err("another 'xdp-pacer record' is already recording %s", h.ifname);
		else
			pr_err("cannot take the recording lock for %s: %s", h.ifname, strerror(-lock_fd));
		pacer_handle_close(&h);
		return 1;
	}

	rb = ring_buffer__new(h.map_fd[PACER_MAP_EVENTS], on_event, &cons, NULL);
	if (!rb) {
		err = -errno;
		pr_err("cannot open the ring buffer of %s: %s", h.ifname, err_str(err, eb, sizeof(eb)));
		goto out;
	}
	/* Records someone else's sampling left behind are not part of this recording. */
	cons.discard = true;
	ring_buffer__consume(rb);
	cons.discard = false;

	counters_ok = !pacer_read_counters(&h, before);
	if (!counters_ok)
		pr_err("warning: cannot read the counters of %s: lost records will not be known", h.ifname);

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	pacer_file_header_init(&hdr);
	read_interval(&h, &hdr);
	hdr.tick_shift = h.layout.tick_shift;
	hdr.rows = h.layout.rows;
	hdr.lines_log2 = h.layout.lines_log2;
	hdr.kind = h.layout.kind;
	hdr.policy = h.cfg->policy;
	hdr.placement = h.layout.placement;
	hdr.clock = h.layout.clock;
	hdr.prefix4 = h.cfg->prefix4;
	hdr.prefix6 = h.cfg->prefix6;
	hdr.malformed = h.cfg->malformed;
	hdr.ncpus = (uint32_t)h.ncpus;
	hdr.abi_version = h.layout.abi_version;
	hdr.sample_src_thresh = src_thresh;
	hdr.sample_pkt_thresh = pkt_thresh;
	snprintf(hdr.ifname, sizeof(hdr.ifname), "%s", h.ifname);
	if (gethostname(hdr.hostname, sizeof(hdr.hostname) - 1))
		snprintf(hdr.hostname, sizeof(hdr.hostname), "?");

	prev_src = h.cfg->sample_src_thresh;
	prev_pkt = h.cfg->sample_pkt_thresh;
	/* Word-sized stores into the live .data, as 'set' does. */
	h.cfg->sample_src_thresh = src_thresh;
	h.cfg->sample_pkt_thresh = pkt_thresh;
	__sync_synchronize();
	sampling_on = true;
	/*
	 * Read the clock after switching sampling on: a packet that saw it off
	 * took its timestamp before this, so the audit may take "no record since
	 * start" as "no packet since start".
	 */
	hdr.start_mono_ns = pacer_clock_now(&h);
	hdr.start_real_ns = clock_now_ns(CLOCK_REALTIME);

	err = pacer_file_writer_open(&w, out, format, &hdr, &ferr);
	if (err) {
		pr_err("%s", ferr.msg);
		goto out;
	}
	cons.w = &w;
	cons.limit = count;
	pr_info("recording %s into %s.tmp (renamed to %s when done): %s%s%s", h.ifname, out, out,
		format_sampling(src_thresh, pkt_thresh, sbuf, sizeof(sbuf)),
		duration ? ", for " : "", duration ? format_duration(duration, a, sizeof(a)) : "");
	fflush(stdout);

	if (duration)
		deadline = mono_ns() + duration;
	cons.deadline_ns = deadline;
	next_flush = mono_ns() + 1000000000ULL;
	while (!stop_signal) {
		uint64_t now;

		err = ring_buffer__poll(rb, 100);
		if (err == -ECANCELED || (count && cons.written >= count))
			break;
		if (err < 0 && err != -EINTR && err != -EAGAIN) {
			if (cons.write_err)
				pr_err("writing %s.tmp failed: %s", out, strerror(-cons.write_err));
			else
				pr_err("reading the ring buffer failed: %s", err_str(err, eb, sizeof(eb)));
			break;
		}
		now = mono_ns();
		if (now >= next_flush) {
			/* Bound what a kill can lose to about a second of records. */
			if (pacer_file_writer_flush(&w))
				pr_err("warning: flushing %s.tmp failed: %s", out, strerror(errno));
			next_flush = now + 1000000000ULL;
			if (tty) {
				uint64_t cur[PACER_STAT_MAX];

				if (counters_ok && !pacer_read_counters(&h, cur))
					lost = cur[PACER_STAT_RECORD_LOST] - before[PACER_STAT_RECORD_LOST];
				fprintf(stderr, "\r%" PRIu64 " records, %" PRIu64 " lost ", cons.written, lost);
			}
		}
		if (deadline && now >= deadline)
			break;
	}
	if (tty)
		fputc('\n', stderr);

	h.cfg->sample_src_thresh = prev_src;
	h.cfg->sample_pkt_thresh = prev_pkt;
	__sync_synchronize();
	sampling_on = false;
	cons.deadline_ns = 0;
	stopped_by = stop_signal;
	stop_signal = 0; /* let the final drain run to the end of the ring (a second Ctrl-C cuts it short) */
	/* What the datapath queued before sampling went off belongs to the recording. */
	if (!cons.write_err && !(count && cons.written >= count))
		ring_buffer__consume(rb);
	end_mono = pacer_clock_now(&h);
	if (counters_ok && !pacer_read_counters(&h, after))
		lost = after[PACER_STAT_RECORD_LOST] - before[PACER_STAT_RECORD_LOST];

	if (cons.write_err) {
		pr_err("writing %s.tmp failed: %s; the records written so far stay in %s.tmp", out,
		       strerror(-cons.write_err), out);
		pacer_file_writer_abandon(&w);
		goto out;
	}
	err = pacer_file_writer_finish(&w, end_mono, lost, &ferr);
	if (err) {
		pr_err("%s", ferr.msg);
		goto out;
	}
	pr_info("%s: %" PRIu64 " records written to %s over %.1f s; %" PRIu64 " records lost (ring buffer full)%s",
		h.ifname, cons.written, out, (double)(end_mono - hdr.start_mono_ns) / 1e9, lost,
		stopped_by ? " (stopped by signal)" : "");
	if (cons.discarded)
		pr_info("%s: %" PRIu64 " records not kept (queued before the start or beyond --count)",
			h.ifname, cons.discarded);
	if (cons.short_events)
		pr_err("warning: %" PRIu64 " ring buffer events were shorter than a record and skipped",
		       cons.short_events);
	if (lost)
		pr_err("warning: %" PRIu64 " records were lost: the audit may count false drops that did not happen; sample fewer sources (--sample-sources 1/N with a larger N)",
		       lost);
	if (!counters_ok)
		pr_err("warning: lost records unknown (counters unreadable)");
	ret = 0;
out:
	if (sampling_on) {
		h.cfg->sample_src_thresh = prev_src;
		h.cfg->sample_pkt_thresh = prev_pkt;
		__sync_synchronize();
	}
	if (sa.sa_handler) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
	}
	ring_buffer__free(rb);
	lock_file_release(lock_fd, lock_path);
	pacer_handle_close(&h);
	return ret;
}
