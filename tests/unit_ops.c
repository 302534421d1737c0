// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Operating pieces: the configuration file parser (good and bad files, each
 * error naming its file and line), the Prometheus exposition writer (label
 * escaping, families grouped once over interfaces), and the atomic writer.
 */
#define _GNU_SOURCE /* fmemopen, open_memstream */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "analyze_pcap.h"
#include "class_conf.h"
#include "pacer_conf.h"
#include "prom.h"
#include "prom_text.h"
#include "safe_file.h"

/* Parse text as a file named "t.conf"; the error text in err. */
static int parse_text(const char *text, struct pacer_conf *c, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	ck_assert_ptr_nonnull(f);
	err[0] = 0;
	ret = pacer_conf_parse(f, "t.conf", c, err, len);
	fclose(f);
	return ret;
}

START_TEST(test_conf_good_file)
{
	struct pacer_conf c;
	char err[512];

	ck_assert_int_eq(parse_text("# pacer for eth0\n\n  interval = 250ms  \n"
				    "policy=quiet # trailing comment\n\trows =\t2\n",
				    &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.n, 3);
	ck_assert_str_eq(pacer_conf_get(&c, "interval")->value, "250ms");
	ck_assert_uint_eq(pacer_conf_get(&c, "interval")->line, 3);
	ck_assert_str_eq(pacer_conf_get(&c, "policy")->value, "quiet");
	ck_assert_str_eq(pacer_conf_get(&c, "rows")->value, "2");
	ck_assert_uint_eq(pacer_conf_line_of(&c, pacer_conf_get(&c, "rows")->value), 5);
	ck_assert_uint_eq(pacer_conf_line_of(&c, "2"), 0); /* by identity, not by text */
	ck_assert_ptr_null(pacer_conf_get(&c, "width"));
	pacer_conf_free(&c);
}
END_TEST

static const struct {
	const char *text, *want;
} bad_files[] = {
	{ "interval = 1s\nburst = 3\n", "t.conf:2: unknown key 'burst' (known keys: interval," },
	{ "sample_sources = 1/4\n", "t.conf:1: unknown key 'sample_sources' (known keys:" },
	{ "Prefix4 = 24\n", "t.conf:1: unknown key 'Prefix4' (did you mean 'prefix4'?)" },
	{ "interval = 1s\n# again\ninterval = 2s\n", "t.conf:3: 'interval' is already set on line 1" },
	{ "\n\ninterval 1s\n", "t.conf:3: expected 'key = value', got 'interval 1s'" },
	{ "interval =\n", "t.conf:1: 'interval' has no value" },
	{ "interval = # nothing\n", "t.conf:1: 'interval' has no value" },
	{ " = 1s\n", "t.conf:1: no key before '='" },
	/* UTF-8 U+009B, a terminal's CSI: shown as bytes, never sent raw */
	{ "int\xc2\x9b" "erval = 1s\n", "t.conf:1: unknown key 'int\\xc2\\x9berval' (known keys:" },
	{ "\xc2\x9b" "2J\n", "t.conf:1: expected 'key = value', got '\\xc2\\x9b2J'" },
};

START_TEST(test_conf_bad_files)
{
	struct pacer_conf c;
	char err[512];

	ck_assert_int_eq(parse_text(bad_files[_i].text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(!strncmp(err, bad_files[_i].want, strlen(bad_files[_i].want)),
		      "file %d: got \"%s\", want \"%s...\"", _i, err, bad_files[_i].want);
	pacer_conf_free(&c);
}
END_TEST

START_TEST(test_conf_long_line_and_missing_file)
{
	struct pacer_conf c;
	char err[512], *text = malloc(PACER_CONF_MAX_LINE + 100);

	ck_assert_ptr_nonnull(text);
	memset(text, 'x', PACER_CONF_MAX_LINE + 98);
	memcpy(text, "rows = 1\ntick = ", 16);
	text[PACER_CONF_MAX_LINE + 98] = '\n';
	text[PACER_CONF_MAX_LINE + 99] = 0;
	ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:2: line longer than 512 characters");
	pacer_conf_free(&c);
	free(text);
	ck_assert_int_eq(pacer_conf_read("/nonexistent/x.conf", &c, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "cannot read /nonexistent/x.conf: No such file or directory");
	pacer_conf_free(&c);
}
END_TEST

/* Bytes no text file holds: refused naming the file, line and column, whatever their place. */
static const struct {
	const char *text;
	size_t len;
	const char *err;
} binary_files[] = {
	{ "interval = 1s\n\0rows = 2\n", 24, "t.conf:2: NUL byte at column 1 (not a text file?)" },
	{ "interval = 1s\nrows\0 = 2\n", 24, "t.conf:2: NUL byte at column 5 (not a text file?)" },
	{ "\0\0\0\0", 4, "t.conf:1: NUL byte at column 1 (not a text file?)" },
	{ "int\x1b[2Jerval = 1s\n", 18, "t.conf:1: control byte 0x1b at column 4" },
	{ "interval = 1s\x07\n", 15, "t.conf:1: control byte 0x07 at column 14" },
};

START_TEST(test_conf_binary_bytes)
{
	FILE *f = fmemopen((void *)binary_files[_i].text, binary_files[_i].len, "r");
	struct pacer_conf c;
	char err[512] = "";

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pacer_conf_parse(f, "t.conf", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, binary_files[_i].err);
	fclose(f);
	pacer_conf_free(&c);
}
END_TEST

/* Tabs and a CRLF line end are text. */
START_TEST(test_conf_tabs_and_crlf)
{
	struct pacer_conf c;
	char err[512];

	ck_assert_int_eq(parse_text("interval\t=\t250ms\r\nrows = 2\r\n", &c, err, sizeof(err)), 0);
	ck_assert_str_eq(pacer_conf_get(&c, "interval")->value, "250ms");
	ck_assert_str_eq(pacer_conf_get(&c, "rows")->value, "2");
	pacer_conf_free(&c);
	/* Sections too; a UTF-8 byte order mark before the first line is skipped. */
	ck_assert_int_eq(parse_text("\xef\xbb\xbfinterval = 1s\r\n[class dns]\r\nmatch = udp dport 53\r\n"
				    "rate = 20/1s\r\n[exempt]\r\nsrc = 192.0.2.0/24, 2001:db8::/32\r\n",
				    &c, err, sizeof(err)), 0);
	ck_assert_str_eq(pacer_conf_get(&c, "interval")->value, "1s");
	ck_assert_int_eq(c.cls->n, 1);
	ck_assert_uint_eq(c.cls->cls[0].c.rate_n, 20);
	ck_assert_uint_eq(c.cls->cls[0].limit_line, 4);
	ck_assert_int_eq((int)c.cls->exempt.n, 2);
	pacer_conf_free(&c);
	/* A line of the longest length is one with either line end; one more is too long. */
	{
		char text[PACER_CONF_MAX_LINE + 8];
		size_t k;

		for (k = 0; k < 2; k++) {
			memset(text, 'x', sizeof(text));
			memcpy(text, "interval = 1s #", 15);
			strcpy(text + PACER_CONF_MAX_LINE, k ? "\r\n" : "\n");
			ck_assert_msg(parse_text(text, &c, err, sizeof(err)) == 0, "%s", err);
			pacer_conf_free(&c);
			memset(text, 'x', sizeof(text));
			memcpy(text, "interval = 1s #", 15);
			strcpy(text + PACER_CONF_MAX_LINE + 1, k ? "\r\n" : "\n");
			ck_assert_int_eq(parse_text(text, &c, err, sizeof(err)), -EINVAL);
			ck_assert_str_eq(err, "t.conf:1: line longer than 512 characters");
			pacer_conf_free(&c);
		}
	}
	/* A carriage return alone (old Mac line ends) is no line end: named, not guessed. */
	ck_assert_int_eq(parse_text("interval = 1s\rrows = 2\r", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "t.conf:1: control byte 0x0d at column 14");
	pacer_conf_free(&c);
	/* A mark anywhere else is a byte of the text, shown escaped. */
	ck_assert_int_eq(parse_text("interval = 1s\n\xef\xbb\xbfrows = 2\n", &c, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "t.conf:2: unknown key '\\xef\\xbb\\xbfrows'"));
	pacer_conf_free(&c);
}
END_TEST

/*
 * Only a regular file is read: /dev/zero never ends and a FIFO blocks until
 * a writer comes (Check's timeout fails a test that hangs).
 */
START_TEST(test_conf_refuses_what_is_not_a_file)
{
	char dir[] = "/tmp/xdp-pacer-conf.XXXXXX", fifo[64], err[512];
	struct pacer_conf c;

	ck_assert_int_eq(pacer_conf_read("/dev/zero", &c, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "/dev/zero: not a regular file (a character device)");
	pacer_conf_free(&c);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(pacer_conf_read(fifo, &c, err, sizeof(err)), -EINVAL);
	ck_assert(strstr(err, "fifo.conf: not a regular file (a FIFO)"));
	pacer_conf_free(&c);
	ck_assert_int_eq(pacer_conf_read(dir, &c, err, sizeof(err)), -EINVAL);
	ck_assert(strstr(err, ": not a regular file (a directory)"));
	pacer_conf_free(&c);
	unlink(fifo);
	rmdir(dir);
}
END_TEST

/* A config file of n exempt prefixes 10.V.x.y, "interval = Vs" and a class's rate V/1s. */
static void write_version(const char *path, int v, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f)
		_exit(1);
	fprintf(f, "interval = %ds\nbackend = table\n[class dns]\nmatch = udp dport 53\nrate = %d/1s\n[exempt]\n",
		v, v);
	for (i = 0; i < n; i++)
		fprintf(f, "src = 10.%d.%d.%d\n", v, i >> 8, i & 255);
	if (fclose(f))
		_exit(1);
}

/*
 * A list file replaced while load or set --config reads it, by a writer
 * renaming complete files over it in a loop (as write_file_atomic and
 * editors' "save" do): every read is the old file or the new one, whole,
 * never a mix, never an error.  The file is read through one descriptor,
 * so a rename during the read leaves the reader on the inode it opened.
 * (A writer rewriting the file in place fails this test: half files.)
 */
START_TEST(test_conf_replaced_while_read)
{
	char dir[] = "/tmp/xdp-pacer-race.XXXXXX", path[64], a[64], b[64], err[512];
	const struct pacer_conf_entry *e;
	int reads, seen[3] = { 0 }, status, v, i;
	struct pacer_conf c;
	pid_t writer;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lists.conf", dir);
	snprintf(a, sizeof(a), "%s/new-1", dir);
	snprintf(b, sizeof(b), "%s/new-2", dir);
	write_version(path, 1, 3000); /* ~60 KiB: many reads of stdio's buffer */
	writer = fork();
	ck_assert_int_ge(writer, 0);
	if (!writer) {
		for (i = 0;; i++) {
			write_version(i & 1 ? a : b, 1 + (i & 1), 3000);
			if (rename(i & 1 ? a : b, path))
				_exit(1);
			usleep(100); /* the reader gets the CPU on a loaded machine */
		}
	}
	for (reads = 0; reads < 200; reads++) {
		ck_assert_msg(pacer_conf_read(path, &c, err, sizeof(err)) == 0, "read %d: %s", reads, err);
		e = pacer_conf_get(&c, "interval");
		ck_assert_ptr_nonnull(e);
		v = e->value[0] - '0';
		ck_assert(v == 1 || v == 2);
		ck_assert_int_eq(c.cls->n, 1);
		ck_assert_uint_eq(c.cls->cls[0].c.rate_n, (unsigned)v);
		ck_assert_int_eq((int)c.cls->exempt.n, 3000);
		for (i = 0; i < 3000; i++)
			ck_assert_uint_eq(c.cls->exempt.p[i].addr[1], (unsigned)v);
		seen[v]++;
		pacer_conf_free(&c);
	}
	kill(writer, SIGKILL);
	ck_assert_int_eq(waitpid(writer, &status, 0), writer);
	ck_assert(WIFSIGNALED(status)); /* the writer never failed */
	ck_assert_int_gt(seen[1], 0);
	ck_assert_int_gt(seen[2], 0);
	unlink(path);
	unlink(a);
	unlink(b);
	rmdir(dir);
}
END_TEST

START_TEST(test_conf_keys_are_load_options)
{
	/* The live keys are the ones `set` takes, each with a default a reload falls back to. */
	static const char *const live[] = { "interval", "policy", "prefix4", "prefix6", "malformed",
					    "budget", "reserve" };
	const struct pacer_conf_key *k;
	size_t i, n_live = 0;

	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		k = pacer_conf_key(live[i]);
		ck_assert_ptr_nonnull(k);
		ck_assert(k->live && pacer_conf_default(k));
	}
	/* ... the defaults of the very options load and set parse */
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("interval")), "1s");
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("prefix6")), "64");
	ck_assert_ptr_null(pacer_conf_default(pacer_conf_key("rows")));
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("budget")), "off");
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("reserve")), "0");
	/* The budget's slack and horizon follow K/T when the file leaves them out. */
	ck_assert(pacer_conf_key("slack-time")->live);
	ck_assert_ptr_null(pacer_conf_default(pacer_conf_key("slack-time")));
	ck_assert(!pacer_conf_key("backend")->live && !pacer_conf_key("on-full")->live);
	/* rate is live without a default of its own: absent, interval's applies. */
	ck_assert(pacer_conf_key("rate")->live);
	ck_assert_ptr_null(pacer_conf_default(pacer_conf_key("rate")));
	for (k = pacer_conf_keys; k->name; k++)
		n_live += k->live ? 1 : 0;
	ck_assert_uint_eq(n_live, 13); /* ... mode and deny-mode */
	ck_assert(!pacer_conf_key("rows")->live);
	/* The verdict mode is live (enforce when a reload's file leaves it out); the attach mode is not. */
	ck_assert(pacer_conf_key("mode")->live);
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("mode")), "enforce");
	ck_assert_str_eq(pacer_conf_default(pacer_conf_key("deny-mode")), "global");
	ck_assert(!pacer_conf_key("xdp-mode")->live);
}
END_TEST

START_TEST(test_prom_escaping_and_grouping)
{
	struct prom_pacer p[2] = { 0 };
	char *t;

	snprintf(p[0].ifname, sizeof(p[0].ifname), "eth0");
	snprintf(p[1].ifname, sizeof(p[1].ifname), "we\"ird\\n\n");
	p[0].counters[PACER_STAT_PASSED] = 42;
	p[0].counters[PACER_STAT_DROPPED_RECENT] = 18446744073709551615ULL;
	p[0].cfg.interval_ns = 250000000;
	p[0].cfg.prefix6 = 48;
	p[0].cfg.sample_src_thresh = 1ULL << 30;
	p[0].layout = (struct pacer_layout){ .rows = 4, .lines_log2 = 14, .tick_shift = 25 };
	p[1].layout = p[0].layout;
	t = prom_text(p, 2);
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_packets_total{ifname=\"eth0\",verdict=\"passed\"} 42\n"));
	ck_assert_ptr_nonnull(strstr(t, "{ifname=\"eth0\",verdict=\"dropped_recent\"} 18446744073709551615\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_frames_total{ifname=\"we\\\"ird\\\\n\\n\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_interval_seconds{ifname=\"eth0\"} 0.25\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_prefix_length{ifname=\"eth0\",family=\"ipv6\"} 48\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_sample_sources_ratio{ifname=\"eth0\"} 0.25\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_sketch_width_cells{ifname=\"eth0\"} 1048576\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_tick_seconds{ifname=\"eth0\"} 0.033554432\n"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE xdp_pacer_packets_total counter\n"));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE xdp_pacer_interval_seconds gauge\n"));
	/* One HELP/TYPE per family, both interfaces' samples after it. */
	ck_assert_uint_eq(count(t, "# TYPE xdp_pacer_packets_total "), 1);
	ck_assert_uint_eq(count(t, "xdp_pacer_packets_total{"), 2 * 16); /* two interfaces, 11 verdicts, 5 observed */
	ck_assert_ptr_null(strstr(strstr(t, "xdp_pacer_packets_total{"), "# TYPE xdp_pacer_packets_total"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_info{ifname=\"eth0\",prog_id=\"0\",backend=\"sketch\",policy=\"pace\""));
	free(t);
	t = prom_text(p, 0);
	ck_assert_uint_eq(count(t, "{"), 1); /* build info, then families without samples: still valid */
	ck_assert_uint_eq(count(t, "# TYPE "), count(t, "# HELP "));
	free(t);
}
END_TEST

START_TEST(test_write_file_atomic)
{
	char dir[] = "/tmp/unit_ops.XXXXXX", path[128], cmd[160];
	char buf[64] = "";
	struct stat st;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	ck_assert_int_eq(write_file_atomic(path, "a 1\n", 4, 0644), 0);
	ck_assert_int_eq(write_file_atomic(path, "b 2\n", 4, 0644), 0); /* replaces */
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	ck_assert_str_eq(buf, "b 2\n");
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0644);
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", dir);
	ck_assert_int_eq(system(cmd), 0); /* no temporary left behind */
	snprintf(path, sizeof(path), "%s/missing/m.prom", dir);
	ck_assert_int_eq(write_file_atomic(path, "x", 1, 0644), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- analyze --pcap on a hand-made capture ---- */

static void put_frame(FILE *f, uint64_t ts_ns, const uint8_t *b, uint32_t caplen, uint32_t len)
{
	uint32_t rh[4] = { (uint32_t)(ts_ns / 1000000000ULL), (uint32_t)(ts_ns % 1000000000ULL), caplen, len };

	ck_assert_uint_eq(fwrite(rh, sizeof(rh), 1, f), 1);
	ck_assert_uint_eq(fwrite(b, 1, caplen, f), caplen);
}

/* Ethernet (+ tags) + IPv4 header from 10.0.0.<host>; ihl 5 unless told. */
static uint32_t v4_frame(uint8_t *b, int tags, uint8_t host, uint8_t ihl)
{
	static const uint8_t tag_types[2][2] = { { 0x88, 0xa8 }, { 0x81, 0x00 } };
	uint32_t o = 12;
	int t;

	memset(b, 0, 128);
	for (t = 0; t < tags; t++) {
		memcpy(b + o, tag_types[t + (tags == 1)], 2);
		o += 4;
	}
	b[o] = 0x08, b[o + 1] = 0x00;
	o += 2;
	b[o] = (uint8_t)(0x40 | ihl);
	b[o + 3] = 40; /* total length */
	b[o + 12] = 10, b[o + 15] = host;
	return o + 40;
}

static uint32_t v6_frame(uint8_t *b, uint8_t last)
{
	static const uint8_t src[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 2 };

	memset(b, 0, 128);
	b[12] = 0x86, b[13] = 0xdd;
	b[14] = 0x60;
	memcpy(b + 22, src, 16);
	b[37] = last;
	return 14 + 40 + 8;
}

/* The capture described in test_pcap_keys_like_the_datapath, written to path. */
static void write_capture(const char *path)
{
	uint32_t gh[6] = { 0xa1b23c4d, 0x00040002, 0, 0, 65535, 1 };
	uint8_t b[128];
	uint32_t n;
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(gh, sizeof(gh), 1, f), 1);
	n = v4_frame(b, 0, 1, 5);
	put_frame(f, 0, b, n, n);                    /* 10.0.0.1: admitted */
	n = v4_frame(b, 2, 1, 5);
	put_frame(f, 100000000, b, n, n);            /* QinQ 10.0.0.1, 100 ms later: dropped */
	n = v4_frame(b, 1, 2, 5);
	put_frame(f, 200000000, b, n, n);            /* 802.1Q 10.0.0.2: admitted (/32) */
	n = v6_frame(b, 1);
	put_frame(f, 300000000, b, n, n);            /* 2001:db8:1:2::1: admitted */
	n = v6_frame(b, 0xff);
	put_frame(f, 400000000, b, n, n);            /* same /64: dropped */
	memset(b, 0, 60);
	b[12] = 0x08, b[13] = 0x06;
	put_frame(f, 500000000, b, 60, 60);          /* ARP: non-IP */
	n = v4_frame(b, 0, 3, 4);
	put_frame(f, 600000000, b, n, n);            /* IHL 4: malformed */
	n = v4_frame(b, 0, 1, 5);
	put_frame(f, 1200000000, b, n, n);           /* 10.0.0.1 after 1.2 s: admitted */
	put_frame(f, 1300000000, b, 20, n);          /* snap length 20: not keyed */
	ck_assert_int_eq(fclose(f), 0);
}

static void analyse(const char *path, uint32_t prefix4, struct an_stream *s, struct pcap_summary *m)
{
	struct pcap_params p = { .interval_ns = 1000000000ULL, .prefix4 = prefix4, .prefix6 = 64,
				 .policy = PACER_POLICY_PACE };
	char err[256] = "";

	ck_assert_msg(!pcap_load(path, &p, s, m, err, sizeof(err)), "pcap_load: %s", err);
}

START_TEST(test_pcap_keys_like_the_datapath)
{
	char path[] = "/tmp/unit_ops_pcap.XXXXXX";
	struct pcap_summary m;
	struct an_stream s;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	write_capture(path);
	analyse(path, 32, &s, &m);
	ck_assert_uint_eq(m.frames, 9);
	ck_assert_uint_eq(m.ipv4, 4); /* VLAN and QinQ tags parsed as the datapath does */
	ck_assert_uint_eq(m.ipv6, 2);
	ck_assert_uint_eq(m.nonip, 1);
	ck_assert_uint_eq(m.malformed, 1);
	ck_assert_uint_eq(m.snap_cut, 1);
	ck_assert_uint_eq(m.snap_unkeyed, 1);
	ck_assert_uint_eq(s.nsrc, 3);
	ck_assert_uint_eq(m.admitted, 4);
	ck_assert_uint_eq(m.dropped, 2);
	ck_assert_int_eq(s.rec[1].verdict, PACER_REC_DROP);
	ck_assert_uint_eq(s.rec[1].est_age_ticks, (100000000ULL >> 25) - 0);
	ck_assert(!m.truncated);
	an_stream_free(&s);

	analyse(path, 24, &s, &m); /* 10.0.0.1 and 10.0.0.2 share a /24 key */
	ck_assert_uint_eq(s.nsrc, 2);
	ck_assert_uint_eq(m.admitted, 3);
	ck_assert_uint_eq(m.dropped, 3);
	an_stream_free(&s);

	ck_assert_int_eq(truncate(path, 24 + 16 + 54 + 5), 0); /* inside the second record's header */
	analyse(path, 32, &s, &m);
	ck_assert(m.truncated);
	ck_assert_uint_eq(m.frames, 1);
	ck_assert_ptr_nonnull(strstr(m.truncation, "truncated dump file"));
	an_stream_free(&s);
	unlink(path);
}
END_TEST

START_TEST(test_pcap_rejects_what_is_not_a_capture)
{
	struct pcap_params p = { .interval_ns = 1000000000ULL, .prefix4 = 32, .prefix6 = 64 };
	struct pcap_summary m;
	struct an_stream s = { 0 };
	char err[256];

	ck_assert_int_eq(pcap_load("/nonexistent.pcap", &p, &s, &m, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "cannot read: No such file or directory");
	an_stream_free(&s);
	ck_assert_int_eq(pcap_load("/etc/hostname", &p, &s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "not a capture libpcap can read"));
	an_stream_free(&s);
	p.interval_ns = 1000000000000000000ULL; /* past the largest tick load picks */
	ck_assert_int_eq(pcap_load("/nonexistent.pcap", &p, &s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "interval 1000000000000000000 ns cannot be represented");
	an_stream_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_conf_good_file);
	tcase_add_loop_test(tc, test_conf_bad_files, 0, (int)(sizeof(bad_files) / sizeof(bad_files[0])));
	tcase_add_test(tc, test_conf_long_line_and_missing_file);
	tcase_add_test(tc, test_conf_keys_are_load_options);
	tcase_add_loop_test(tc, test_conf_binary_bytes, 0,
			    (int)(sizeof(binary_files) / sizeof(binary_files[0])));
	tcase_add_test(tc, test_conf_tabs_and_crlf);
	tcase_add_test(tc, test_conf_refuses_what_is_not_a_file);
	tcase_add_test(tc, test_prom_escaping_and_grouping);
	tcase_add_test(tc, test_write_file_atomic);
	tcase_add_test(tc, test_pcap_keys_like_the_datapath);
	tcase_add_test(tc, test_pcap_rejects_what_is_not_a_capture);
	suite_add_tcase(s, tc);
	/* A race against a writer process: seconds on a loaded machine. */
	tc = tcase_create("race");
	tcase_set_tags(tc, CHECK_TAG_SLOW);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_conf_replaced_while_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
