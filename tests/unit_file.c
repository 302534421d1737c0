// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording file format: round trip through the writer and reader,
 * truncation at every byte of the header and of the last record, header
 * corruption, version mismatch, foreign files, impossible records, CSV.
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <check.h>
#include "check_run.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "pacer_file.h"
#include "version.h"
#include "pacer_table.h"
#include "pacer_rate.h"
#include "pacer_ticks.h"

static char dir[] = "/tmp/unit_file.XXXXXX";

static void make_dir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cleanup of %s failed\n", dir);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void sample_header(struct pacer_file_header *h)
{
	pacer_file_header_init(h);
	h->interval_ns = 1000000000ULL;
	h->thresh_ticks = 31;
	h->tick_shift = 25;
	h->rows = 4;
	h->lines_log2 = 14;
	h->kind = PACER_LAYOUT_ROWS;
	h->policy = PACER_POLICY_PACE;
	h->placement = PACER_PLACEMENT_SHARED;
	h->clock = PACER_CLOCK_CACHED;
	h->prefix4 = 32;
	h->prefix6 = 64;
	h->ncpus = 4;
	h->sample_src_thresh = 1ULL << 28;
	h->sample_pkt_thresh = 0;
	h->start_mono_ns = 5000000000ULL;
	h->start_real_ns = 1700000000000000000ULL;
	snprintf(h->ifname, sizeof(h->ifname), "veth0");
	snprintf(h->hostname, sizeof(h->hostname), "host.example");
}

static void sample_record(struct pacer_record *r, unsigned i)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = 5000000000ULL + i * 1000003ULL;
	if (i % 3 == 2) {
		r->family = 6;
		r->prefix = 64;
		r->addr[0] = 0xfd;
		r->addr[7] = (uint8_t)i;
	} else {
		r->family = 4;
		r->prefix = 32;
		r->addr[0] = 10;
		r->addr[3] = (uint8_t)i;
	}
	r->verdict = i & 1;
	r->flags = i % 5 ? PACER_REC_SAMPLED_SOURCE : PACER_REC_SAMPLED_SOURCE | PACER_REC_SAMPLED_PACKET;
	r->est_age_ticks = i % 7 ? i % 200 : PACER_AGE_NEVER;
	r->cpu = i % 4;
	r->thresh_ticks = 31;
}

/*
 * Two classes as a load would write them under sample_header's tick
 * (2^25 ns): "dns" (udp dport 53, 20 per second, stat slot 3) and "syn"
 * (tcp flags syn, 100 ms spacing, key src+dport, prefix4 /24, slot 0).
 */
static void sample_classes(struct pacer_class c[2])
{
	struct pacer_rate r;

	memset(c, 0, 2 * sizeof(*c));
	snprintf(c[0].name, sizeof(c[0].name), "dns");
	c[0].m.terms = PACER_M_PROTO | PACER_M_DPORT;
	c[0].m.proto = 17;
	c[0].m.dport_lo = c[0].m.dport_hi = 53;
	c[0].prefix4 = 32;
	c[0].prefix6 = 64;
	c[0].rate_n = 20;
	c[0].interval_ns = 1000000000ULL;
	ck_assert_int_eq(pacer_rate_ticks(20, 1000000000ULL, 25, PACER_RATE_TBL_MAX_SAT, &r), 0);
	c[0].thresh_ticks = r.thresh;
	c[0].burst_ticks = r.burst;
	c[0].id = 7;
	c[0].stat_slot = 3;
	snprintf(c[1].name, sizeof(c[1].name), "syn");
	c[1].m.terms = PACER_M_PROTO | PACER_M_SYN;
	c[1].m.proto = 6;
	c[1].key_mode = PACER_KEY_SRC_DPORT;
	c[1].prefix4 = 24;
	c[1].prefix6 = 64;
	c[1].rate_n = 1;
	c[1].interval_ns = 100000000ULL;
	c[1].thresh_ticks = pacer_thresh_ticks(100000000ULL, 25);
	c[1].id = 8;
	c[1].stat_slot = 0;
}

/* sample_record(i) in a class file: odd records in "dns" (slot 4), even ones in "syn" (slot 1). */
static void class_record(struct pacer_record *r, unsigned i)
{
	struct pacer_class c[2];

	sample_classes(c);
	sample_record(r, i);
	r->class_slot = i & 1 ? 4 : 1;
	r->thresh_ticks = c[i & 1 ? 0 : 1].thresh_ticks;
	if (!(i & 1) && i % 4 == 0) { /* some of syn's records carry their key's port */
		r->flags |= PACER_REC_KEY;
		r->key_dport = (uint16_t)(1000 + i);
	}
	if (r->family == 4 && !(i & 1)) {
		r->prefix = 24;
		r->addr[3] = 0;
	}
}

static void class_header(struct pacer_file_header *h)
{
	struct pacer_class c[2];

	sample_header(h);
	h->backend = PACER_BACKEND_TABLE;
	h->rows = 1;
	h->kind = PACER_LAYOUT_ROWS;
	sample_classes(c);
	pacer_file_header_set_classes(h, c, 2);
}

static long write_class_file(const char *path, unsigned n, enum pacer_file_format fmt)
{
	struct pacer_file_writer w;
	struct pacer_file_header h;
	struct pacer_file_error e;
	struct pacer_record r;
	struct stat st;
	unsigned i;

	class_header(&h);
	ck_assert_int_eq(pacer_file_writer_open(&w, path, fmt, &h, &e), 0);
	for (i = 0; i < n; i++) {
		class_record(&r, i);
		ck_assert_int_eq(pacer_file_writer_append(&w, &r), 0);
	}
	ck_assert_int_eq(pacer_file_writer_finish(&w, 9000000000ULL, 0, &e), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

/* Write a complete recording of n records; returns its size. */
static long write_file(const char *path, unsigned n, enum pacer_file_format fmt)
{
	struct pacer_file_writer w;
	struct pacer_file_header h;
	struct pacer_file_error e;
	struct pacer_record r;
	struct stat st;
	unsigned i;

	sample_header(&h);
	ck_assert_int_eq(pacer_file_writer_open(&w, path, fmt, &h, &e), 0);
	for (i = 0; i < n; i++) {
		sample_record(&r, i);
		ck_assert_int_eq(pacer_file_writer_append(&w, &r), 0);
	}
	ck_assert_int_eq(pacer_file_writer_finish(&w, 9000000000ULL, 7, &e), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	return (long)st.st_size;
}

static void read_all(const char *path, unsigned *n)
{
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	struct pacer_record got, want;
	int ret;

	ck_assert_int_eq(pacer_file_open(path, &rd, &e), 0);
	*n = 0;
	while ((ret = pacer_file_next(&rd, &got, &e)) == 1) {
		sample_record(&want, *n);
		ck_assert_mem_eq(&got, &want, sizeof(got));
		(*n)++;
	}
	ck_assert_int_eq(ret, 0);
	pacer_file_close(&rd);
}

/* Copy the first `len` bytes of src into dst. */
static void copy_prefix(const char *src, const char *dst, long len)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char *buf = malloc(len ? (size_t)len : 1);

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(fread(buf, 1, (size_t)len, in), len);
	ck_assert_int_eq(fwrite(buf, 1, (size_t)len, out), len);
	fclose(in);
	fclose(out);
	free(buf);
}

static void poke(const char *path, long off, uint8_t v)
{
	FILE *f = fopen(path, "r+b");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
	ck_assert_int_eq(fputc(v, f), v);
	fclose(f);
}

START_TEST(test_round_trip)
{
	struct pacer_file_reader rd;
	struct pacer_file_header want;
	struct pacer_file_error e;
	char p[128], tmp[140];
	unsigned n;
	long size;

	path_of(p, sizeof(p), "rt.xpr");
	size = write_file(p, 1000, PACER_FORMAT_BINARY);
	ck_assert_int_eq(size, PACER_FILE_HEADER_LEN + 1000 * PACER_FILE_RECORD_V1_LEN);
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	ck_assert_int_ne(access(tmp, F_OK), 0); /* renamed into place */

	ck_assert_int_eq(pacer_file_open(p, &rd, &e), 0);
	ck_assert_int_eq(rd.n_warnings, 0);
	ck_assert_uint_eq(rd.n_records, 1000);
	sample_header(&want);
	ck_assert_uint_eq(rd.hdr.interval_ns, want.interval_ns);
	ck_assert_uint_eq(rd.hdr.thresh_ticks, 31);
	ck_assert_uint_eq(rd.hdr.tick_shift, 25);
	ck_assert_uint_eq(rd.hdr.rows, 4);
	ck_assert_uint_eq(rd.hdr.lines_log2, 14);
	ck_assert_uint_eq(rd.hdr.placement, PACER_PLACEMENT_SHARED);
	ck_assert_uint_eq(rd.hdr.clock, PACER_CLOCK_CACHED);
	ck_assert_uint_eq(rd.hdr.line_cells, 62);
	ck_assert_uint_eq(rd.hdr.sample_src_thresh, 1ULL << 28);
	ck_assert_uint_eq(rd.hdr.start_mono_ns, want.start_mono_ns);
	ck_assert_uint_eq(rd.hdr.start_real_ns, want.start_real_ns);
	ck_assert_uint_eq(rd.hdr.end_mono_ns, 9000000000ULL);
	ck_assert_uint_eq(rd.hdr.record_count, 1000);
	ck_assert_uint_eq(rd.hdr.records_lost, 7);
	ck_assert_uint_eq(rd.hdr.ncpus, 4);
	ck_assert_str_eq(rd.hdr.ifname, "veth0");
	ck_assert_str_eq(rd.hdr.hostname, "host.example");
	ck_assert(rd.hdr.flags & PACER_FILE_F_COMPLETE);
	pacer_file_close(&rd);
	read_all(p, &n);
	ck_assert_uint_eq(n, 1000);
}
END_TEST

START_TEST(test_encoding_is_little_endian_and_fixed)
{
	struct pacer_record r, back;
	uint8_t buf[PACER_FILE_RECORD_V1_LEN];

	sample_record(&r, 4); /* IPv4 */
	r.ts_ns = 0x0102030405060708ULL;
	r.cpu = 0x0a0b0c0d;
	pacer_file_record_encode(&r, buf);
	ck_assert_uint_eq(buf[0], 0x08);
	ck_assert_uint_eq(buf[7], 0x01);
	ck_assert_uint_eq(buf[32], 0x0d);
	ck_assert_uint_eq(buf[35], 0x0a);
	ck_assert_uint_eq(buf[24], 4);
	pacer_file_record_decode(buf, &back);
	ck_assert_mem_eq(&r, &back, sizeof(r));
	/* CRC-32 check value from the standard. */
	ck_assert_uint_eq(pacer_crc32(0, "123456789", 9), 0xcbf43926u);
}
END_TEST

START_TEST(test_truncated_last_record_every_byte)
{
	char p[128], q[128];
	long size, cut;

	path_of(p, sizeof(p), "full.xpr");
	path_of(q, sizeof(q), "cut.xpr");
	size = write_file(p, 50, PACER_FORMAT_BINARY);
	for (cut = 1; cut < PACER_FILE_RECORD_V1_LEN; cut++) {
		struct pacer_file_reader rd;
		struct pacer_file_error e;
		struct pacer_record r;
		unsigned n = 0;
		int i, found = 0;

		copy_prefix(p, q, size - cut);
		ck_assert_int_eq(pacer_file_open(q, &rd, &e), 0);
		ck_assert_uint_eq(rd.n_records, 49);
		ck_assert_uint_eq(rd.tail_bytes, PACER_FILE_RECORD_V1_LEN - cut);
		for (i = 0; i < rd.n_warnings; i++) {
			if (rd.warnings[i].problem == PACER_FILE_RECORD_TRUNCATED) {
				found = 1;
				ck_assert_uint_eq(rd.warnings[i].offset,
						  PACER_FILE_HEADER_LEN + 49 * PACER_FILE_RECORD_V1_LEN);
				ck_assert_ptr_nonnull(strstr(rd.warnings[i].msg, "offset 2252"));
			}
		}
		ck_assert_int_eq(found, 1);
		while (pacer_file_next(&rd, &r, &e) == 1)
			n++;
		ck_assert_uint_eq(n, 49);
		pacer_file_close(&rd);
	}
}
END_TEST

START_TEST(test_truncated_header_every_byte)
{
	char p[128], q[128];
	long cut;

	path_of(p, sizeof(p), "h.xpr");
	path_of(q, sizeof(q), "hcut.xpr");
	write_file(p, 3, PACER_FORMAT_BINARY);
	for (cut = 0; cut < PACER_FILE_HEADER_LEN; cut++) {
		struct pacer_file_reader rd;
		struct pacer_file_error e;
		int ret;

		copy_prefix(p, q, cut);
		ret = pacer_file_open(q, &rd, &e);
		ck_assert_int_lt(ret, 0);
		ck_assert_int_eq(e.problem, PACER_FILE_HEADER_TRUNCATED);
		ck_assert_uint_eq(e.offset, (uint64_t)cut);
		ck_assert_ptr_nonnull(strstr(e.msg, "truncated header"));
	}
}
END_TEST

START_TEST(test_header_corruption_detected_at_every_byte)
{
	char p[128], q[128];
	long size, off;

	path_of(p, sizeof(p), "c.xpr");
	path_of(q, sizeof(q), "cc.xpr");
	size = write_file(p, 2, PACER_FORMAT_BINARY);
	for (off = 0; off < PACER_FILE_HEADER_LEN; off++) {
		struct pacer_file_reader rd;
		struct pacer_file_error e;
		FILE *f;
		int ret, byte;

		copy_prefix(p, q, size);
		f = fopen(q, "rb");
		ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
		byte = fgetc(f);
		fclose(f);
		poke(q, off, (uint8_t)(byte ^ 0x10));
		ret = pacer_file_open(q, &rd, &e);
		ck_assert_int_lt(ret, 0);
		/* Magic bytes make it foreign, the version field a version mismatch, the rest corrupt. */
		if (off < 8)
			ck_assert_int_eq(e.problem, PACER_FILE_FOREIGN);
		else if (off < 10)
			ck_assert_int_eq(e.problem, PACER_FILE_VERSION);
		else
			ck_assert_int_eq(e.problem, PACER_FILE_HEADER_CORRUPT);
	}
}
END_TEST

/*
 * A rate (N > 1) is written as format 2, which a format-1 reader refuses by
 * its version; it carries N and the burst, checked against the ticks.
 */
START_TEST(test_rate_header)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;
	struct pacer_rate r;

	sample_header(&h);
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[8], 1); /* an interval stays format 1 */
	ck_assert_int_eq(pacer_rate_ticks(10, 1000000000ULL, h.tick_shift, PACER_RATE_TBL_MAX_SAT, &r), 0);
	h.rate_n = 10;
	h.interval_ns = 1000000000ULL;
	h.thresh_ticks = r.thresh;
	h.burst_ticks = r.burst;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[8], 2);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_uint_eq(got.rate_n, 10);
	ck_assert_uint_eq(got.burst_ticks, r.burst);
	ck_assert_uint_eq(got.version_major, 2);
	/* A burst that is not the rate's: invalid, naming the rate. */
	h.burst_ticks = r.burst + 1;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_HEADER_INVALID);
	ck_assert_ptr_nonnull(strstr(e.msg, "rate 10 per"));
	/*
	 * The encoding with bursts of N - 1 (emission ceil(T/N/tick), tolerance
	 * floor((N-1)T/N/tick)) that recordings of earlier versions carry stays
	 * readable: tick 2^25 ns, 10 per 1 s: emission 3 ticks, tolerance 26.
	 */
	h.tick_shift = 25;
	h.thresh_ticks = 4;
	h.burst_ticks = 26;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_uint_eq(got.burst_ticks, 26);
	ck_assert_uint_eq(got.thresh_ticks, 4);
	/* ... and the ticks of this version at that tick: emission 4, tolerance 37. */
	ck_assert_int_eq(pacer_rate_ticks(10, 1000000000ULL, 25, PACER_RATE_TBL_MAX_SAT, &r), 0);
	ck_assert_uint_eq(r.thresh, 5);
	ck_assert_uint_eq(r.burst, 37);
	h.thresh_ticks = r.thresh;
	h.burst_ticks = r.burst;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	/* Neither: refused. */
	h.thresh_ticks = 4;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
}
END_TEST

START_TEST(test_version_mismatch)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;
	uint32_t crc;

	sample_header(&h);
	h.version_major = 4;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EPROTONOSUPPORT);
	ck_assert_int_eq(e.problem, PACER_FILE_VERSION);
	ck_assert_uint_eq(e.offset, 8);
	ck_assert_ptr_nonnull(strstr(e.msg, "version 4.3"));
	ck_assert_ptr_nonnull(strstr(e.msg, "versions 1.x, 2.x and 3.x"));

	/* A newer minor version with a longer header is still read: its fields past x.3's ignored. */
	{
		uint8_t big[PACER_FILE_HEADER_V1_2_LEN + 64];

		sample_header(&h);
		h.version_minor = 4;
		h.header_len = PACER_FILE_HEADER_V1_2_LEN;
		ck_assert_int_eq(pacer_file_header_encode(&h, big, sizeof(big)), 0);
		memset(big + PACER_FILE_HEADER_V1_2_LEN - 4, 0xee, 68);
		big[12] = (uint8_t)(sizeof(big) & 0xff);
		big[13] = (uint8_t)(sizeof(big) >> 8);
		crc = pacer_crc32(0, big, sizeof(big) - 4);
		memcpy(big + sizeof(big) - 4, &crc, 4); /* little-endian host */
		ck_assert_int_eq(pacer_file_header_decode(big, sizeof(big), &got, &e), 0);
		ck_assert_uint_eq(got.version_minor, 4);
		ck_assert_uint_eq(got.header_len, sizeof(big));
	}
}
END_TEST

/* Format x.1 names the release that wrote the file; x.0 files still read, without one. */
START_TEST(test_writer_release)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;
	char want[40], *csv = NULL;
	size_t csv_len = 0;
	FILE *f;

	sample_header(&h);
	snprintf(want, sizeof(want), "xdp-pacer %s", pacer_version);
	ck_assert_str_eq(h.writer, want);
	ck_assert_uint_eq(h.header_len, PACER_FILE_HEADER_V1_2_LEN);
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[10], 3); /* minor version 3 */
	ck_assert_int_eq(memcmp(buf + 252, want, strlen(want)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_str_eq(got.writer, want);
	/* A 1.0 header: 256 bytes, no writer. */
	h.version_minor = 0;
	h.header_len = PACER_FILE_HEADER_V1_LEN;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, PACER_FILE_HEADER_V1_LEN, &got, &e), 0);
	ck_assert_str_eq(got.writer, "");
	/* Bytes that are not printable are shown as '?', not refused. */
	sample_header(&h);
	snprintf(h.writer, sizeof(h.writer), "xdp\033[2Jpacer");
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_str_eq(got.writer, "xdp?[2Jpacer");
	/* The CSV header names it too. */
	sample_header(&h);
	f = open_memstream(&csv, &csv_len);
	ck_assert_int_eq(pacer_csv_write_header(f, &h), 0);
	fclose(f);
	snprintf(want, sizeof(want), "# writer: xdp-pacer %s\n", pacer_version);
	ck_assert_ptr_nonnull(strstr(csv, want));
	free(csv);
}
END_TEST

START_TEST(test_foreign_files)
{
	static const char *const texts[] = { "hello, world\n", "index,ts_ns,t_rel_s\n", "\x7f" "ELF" };
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	char p[128];
	size_t i;

	path_of(p, sizeof(p), "foreign");
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		FILE *f = fopen(p, "wb");

		fputs(texts[i], f);
		fclose(f);
		ck_assert_int_eq(pacer_file_open(p, &rd, &e), -EBADMSG);
		ck_assert_int_eq(e.problem, PACER_FILE_FOREIGN);
		ck_assert_uint_eq(e.offset, 0);
		ck_assert_ptr_nonnull(strstr(e.msg, "not an xdp-pacer recording"));
	}
	/* A CSV recording is for other tools: the reader says it is not the binary format. */
	write_file(p, 3, PACER_FORMAT_CSV);
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_FOREIGN);
	/* Nonexistent, directory. */
	ck_assert_int_eq(pacer_file_open("/nonexistent/x", &rd, &e), -ENOENT);
	ck_assert_int_eq(e.problem, PACER_FILE_IO);
	ck_assert_int_lt(pacer_file_open(dir, &rd, &e), 0);
}
END_TEST


/*
 * fdopen() failing on demand: this definition stands in for the C library's
 * in the test binary (pacer_file.o is linked in statically).
 */
static int fdopen_fails;

FILE *fdopen(int fd, const char *mode)
{
	FILE *(*real)(int, const char *) = (FILE * (*)(int, const char *))dlsym(RTLD_NEXT, "fdopen");

	if (fdopen_fails || !real) {
		errno = ENOMEM;
		return NULL;
	}
	return real(fd, mode);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* When fdopen() fails, the reader says so and leaves no descriptor open. */
START_TEST(test_open_fdopen_fails_no_leak)
{
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	char p[128];
	int before, i;

	path_of(p, sizeof(p), "fdopen.xpr");
	write_file(p, 3, PACER_FORMAT_BINARY);
	before = open_fds();
	fdopen_fails = 1;
	for (i = 0; i < 8; i++) {
		ck_assert_int_eq(pacer_file_open(p, &rd, &e), -ENOMEM);
		ck_assert_int_eq(e.problem, PACER_FILE_IO);
		ck_assert_ptr_nonnull(strstr(e.msg, "cannot open"));
	}
	fdopen_fails = 0;
	ck_assert_int_eq(open_fds(), before);
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), 0);
	pacer_file_close(&rd);
	ck_assert_int_eq(open_fds(), before);
}
END_TEST

START_TEST(test_incomplete_and_count_mismatch)
{
	struct pacer_file_writer w;
	struct pacer_file_reader rd;
	struct pacer_file_header h;
	struct pacer_file_error e;
	struct pacer_record r;
	char p[128], tmp[140], q[128];
	unsigned i, n;
	long size;

	/* A writer that never finishes (killed): .tmp is readable and marked incomplete. */
	path_of(p, sizeof(p), "killed.xpr");
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	sample_header(&h);
	ck_assert_int_eq(pacer_file_writer_open(&w, p, PACER_FORMAT_BINARY, &h, &e), 0);
	for (i = 0; i < 10; i++) {
		sample_record(&r, i);
		pacer_file_writer_append(&w, &r);
	}
	pacer_file_writer_flush(&w);
	ck_assert_int_ne(access(p, F_OK), 0); /* nothing that looks complete */
	ck_assert_int_eq(pacer_file_open(tmp, &rd, &e), 0);
	ck_assert_int_eq(rd.n_warnings, 1);
	ck_assert_int_eq(rd.warnings[0].problem, PACER_FILE_INCOMPLETE);
	ck_assert_uint_eq(rd.n_records, 10);
	pacer_file_close(&rd);
	pacer_file_writer_abandon(&w);
	read_all(tmp, &n);
	ck_assert_uint_eq(n, 10);

	/* A complete file cut at a record boundary: the count in the header gives it away. */
	path_of(p, sizeof(p), "whole.xpr");
	path_of(q, sizeof(q), "short.xpr");
	size = write_file(p, 20, PACER_FORMAT_BINARY);
	copy_prefix(p, q, size - 5 * PACER_FILE_RECORD_V1_LEN);
	ck_assert_int_eq(pacer_file_open(q, &rd, &e), 0);
	ck_assert_int_eq(rd.n_warnings, 1);
	ck_assert_int_eq(rd.warnings[0].problem, PACER_FILE_COUNT_MISMATCH);
	ck_assert_ptr_nonnull(strstr(rd.warnings[0].msg, "says 20 records but the file holds 15"));
	pacer_file_close(&rd);
}
END_TEST

START_TEST(test_invalid_record_named_with_offset)
{
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	struct pacer_record r;
	char p[128];
	long rec3 = PACER_FILE_HEADER_LEN + 3 * PACER_FILE_RECORD_V1_LEN;
	int ret, n = 0;

	path_of(p, sizeof(p), "bad.xpr");
	write_file(p, 10, PACER_FORMAT_BINARY);
	poke(p, rec3 + 24, 7); /* family 7 */
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), 0);
	while ((ret = pacer_file_next(&rd, &r, &e)) == 1)
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(ret, -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_RECORD_INVALID);
	ck_assert_uint_eq(e.offset, (uint64_t)rec3);
	ck_assert_ptr_nonnull(strstr(e.msg, "record 3"));
	ck_assert_ptr_nonnull(strstr(e.msg, "family 7"));
	pacer_file_close(&rd);

	/* Each impossible field is caught on its own. */
	{
		struct pacer_file_header h;

		sample_header(&h);
		sample_record(&r, 0);
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), 0);
		r.addr[5] = 1; /* IPv4 with bytes past the address */
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 0);
		r.prefix = 24; /* 10.0.0.0/24 has the host byte 0: fine; set it */
		r.addr[3] = 9;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 0);
		r.verdict = 2;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 0);
		r.flags = 0;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 0);
		r.cpu = 4;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 0);
		r.thresh_ticks = 65;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
		sample_record(&r, 1);
		r.est_age_ticks = 256;
		ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	}
}
END_TEST

START_TEST(test_invalid_header_fields)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;

	sample_header(&h);
	h.rows = 9;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_HEADER_INVALID);
	ck_assert_uint_eq(e.offset, 40);
	sample_header(&h);
	h.line_cells = 60;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "cell layout"));
	sample_header(&h);
	h.record_size = 41;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), -EINVAL);
}
END_TEST

/*
 * The file takes every tick and interval load takes (the largest: tick
 * 2^40 ns, interval 63 such ticks) and nothing beyond (PACER_TICK_SHIFT_MAX
 * and PACER_INTERVAL_MAX_NS, shared with load and set).
 */
START_TEST(test_tick_and_interval_bounds)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;

	sample_header(&h);
	h.tick_shift = PACER_TICK_SHIFT_MAX;
	h.interval_ns = PACER_INTERVAL_MAX_NS;
	h.thresh_ticks = pacer_thresh_ticks(h.interval_ns, h.tick_shift);
	ck_assert_uint_eq(h.thresh_ticks, PACER_MAX_THRESH);
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_uint_eq(got.tick_shift, 40);

	h.tick_shift = PACER_TICK_SHIFT_MAX + 1; /* the issue's --tick 2199023255552ns */
	h.interval_ns = 10800000000000ULL;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "tick_shift 41"));

	sample_header(&h);
	h.interval_ns = PACER_INTERVAL_MAX_NS + 1;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "69269232549889 ns"));
}
END_TEST

START_TEST(test_implausible_header_contents)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;

	/* Each field in range, valid CRC, but not a limiter load makes. */
	sample_header(&h);
	h.interval_ns = 1;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_HEADER_INVALID);
	ck_assert_uint_eq(e.offset, 32);
	ck_assert_ptr_nonnull(strstr(e.msg, "threshold 31 ticks does not match the interval"));
	sample_header(&h);
	h.lines_log2 = 30;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 44);
	ck_assert_ptr_nonnull(strstr(e.msg, "lines_log2 30"));
	sample_header(&h);
	h.kind = PACER_LAYOUT_BLOCKED;
	h.rows = 3;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "power of two"));
	/* The largest and smallest sketches load makes still pass. */
	sample_header(&h);
	h.lines_log2 = 24;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	h.kind = PACER_LAYOUT_BLOCKED;
	h.rows = 8;
	h.lines_log2 = 3;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
}
END_TEST

/* The backend and its mode round-trip; combinations load never makes are refused by offset. */
START_TEST(test_backend_fields)
{
	uint8_t buf[PACER_FILE_HEADER_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;

	sample_header(&h);
	h.backend = PACER_BACKEND_TABLE;
	h.on_full = PACER_TBL_FULL_EVICT;
	h.rows = 1;
	h.lines_log2 = 16;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[240], PACER_BACKEND_TABLE);
	ck_assert_uint_eq(buf[244], PACER_TBL_FULL_EVICT);
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), 0);
	ck_assert_uint_eq(got.backend, PACER_BACKEND_TABLE);
	ck_assert_uint_eq(got.on_full, PACER_TBL_FULL_EVICT);

	h.backend = PACER_BACKEND_MAX;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 240);
	/* evict-oldest is the table's mode only */
	h.backend = PACER_BACKEND_SKETCH;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 244);
	/* a table has one row of at most 2^24 lines */
	sample_header(&h);
	h.backend = PACER_BACKEND_TABLE;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "a table is one row"));
	h.rows = 1;
	h.lines_log2 = PACER_TBL_MAX_LINES_LOG2 + 1;
	pacer_file_header_encode(&h, buf, sizeof(buf));
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
}
END_TEST

/* Opening a FIFO for reading blocks until a writer comes: the reader must not. */
START_TEST(test_fifo_refused_without_blocking)
{
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	char p[128];

	path_of(p, sizeof(p), "fifo");
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	alarm(5); /* a regression hangs: fail instead */
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), -EINVAL);
	alarm(0);
	ck_assert_ptr_nonnull(strstr(e.msg, "not a regular file"));
	unlink(p);
}
END_TEST

/* A link planted at FILE.tmp is never followed; one at FILE is replaced, not written through. */
START_TEST(test_writer_never_follows_links)
{
	struct pacer_file_writer w;
	struct pacer_file_header h;
	struct pacer_file_error e;
	char p[128], tmp[140], victim[128], b[16] = "";
	struct stat st;
	FILE *f;

	path_of(victim, sizeof(victim), "victim");
	path_of(p, sizeof(p), "out.xpr");
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(victim, "w");
	ck_assert_ptr_nonnull(f);
	fputs("precious", f);
	fclose(f);
	sample_header(&h);
	ck_assert_int_eq(symlink(victim, tmp), 0);
	ck_assert_int_eq(pacer_file_writer_open(&w, p, PACER_FORMAT_BINARY, &h, &e), -EEXIST);
	ck_assert_ptr_nonnull(strstr(e.msg, ".tmp"));
	unlink(tmp);
	ck_assert_int_eq(symlink(victim, p), 0);
	ck_assert_int_eq(pacer_file_writer_open(&w, p, PACER_FORMAT_BINARY, &h, &e), 0);
	ck_assert_int_eq(fstat(fileno(w.f), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(pacer_file_writer_finish(&w, 1, 0, &e), 0);
	ck_assert_int_eq(lstat(p, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	f = fopen(victim, "r");
	ck_assert_ptr_nonnull(fgets(b, sizeof(b), f));
	fclose(f);
	ck_assert_str_eq(b, "precious");
	ck_assert_int_eq(access(tmp, F_OK), -1);
	unlink(p);
	unlink(victim);
}
END_TEST


/* A recording of a program with classes is format 3.1: its class table and each record's class. */
START_TEST(test_classes_round_trip)
{
	struct pacer_file_reader rd;
	struct pacer_file_error e;
	struct pacer_record got, want;
	struct pacer_class c[2];
	char p[128];
	long size;
	unsigned n = 0;
	int ret;

	path_of(p, sizeof(p), "cls.xpr");
	size = write_class_file(p, 300, PACER_FORMAT_BINARY);
	ck_assert_int_eq(size, PACER_FILE_HEADER_CLASSES_LEN(2) + 4 + 300 * PACER_FILE_RECORD_V3_LEN);
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), 0);
	ck_assert_int_eq(rd.n_warnings, 0);
	ck_assert_uint_eq(rd.hdr.version_major, 3);
	ck_assert_uint_eq(rd.hdr.version_minor, 3);
	ck_assert_uint_eq(rd.hdr.n_classes, 2);
	ck_assert_uint_eq(rd.hdr.rate_n, 1);
	sample_classes(c);
	ck_assert_mem_eq(&rd.hdr.classes[0], &c[0], sizeof(c[0]));
	ck_assert_mem_eq(&rd.hdr.classes[1], &c[1], sizeof(c[1]));
	ck_assert_uint_eq(rd.hdr.classes_changed_ns, 0);
	ck_assert_str_eq(pacer_file_class_of(&rd.hdr, 4)->name, "dns");
	ck_assert_str_eq(pacer_file_class_of(&rd.hdr, 1)->name, "syn");
	ck_assert_ptr_null(pacer_file_class_of(&rd.hdr, 0));
	ck_assert_ptr_null(pacer_file_class_of(&rd.hdr, 2));
	while ((ret = pacer_file_next(&rd, &got, &e)) == 1) {
		class_record(&want, n++);
		ck_assert_mem_eq(&got, &want, sizeof(got));
	}
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(n, 300);
	pacer_file_close(&rd);
}
END_TEST

/* Every byte of a 3.1 header is covered: cut anywhere, it is truncated; flipped, corrupt. */
START_TEST(test_classes_header_every_byte)
{
	char p[128], q[128];
	long size, off, hlen = PACER_FILE_HEADER_CLASSES_LEN(2) + 4;

	path_of(p, sizeof(p), "clsb.xpr");
	path_of(q, sizeof(q), "clsbb.xpr");
	size = write_class_file(p, 2, PACER_FORMAT_BINARY);
	for (off = 0; off < hlen; off++) {
		struct pacer_file_reader rd;
		struct pacer_file_error e;
		FILE *f;
		int byte;

		copy_prefix(p, q, off);
		ck_assert_int_lt(pacer_file_open(q, &rd, &e), 0);
		ck_assert(e.problem == PACER_FILE_HEADER_TRUNCATED ||
			  (off > 0 && off < 8 && e.problem == PACER_FILE_FOREIGN));
		copy_prefix(p, q, size);
		f = fopen(q, "rb");
		ck_assert_int_eq(fseek(f, off, SEEK_SET), 0);
		byte = fgetc(f);
		fclose(f);
		poke(q, off, (uint8_t)(byte ^ 0x10));
		ck_assert_int_lt(pacer_file_open(q, &rd, &e), 0);
		if (off < 8)
			ck_assert_int_eq(e.problem, PACER_FILE_FOREIGN);
		else if (off < 10)
			ck_assert_int_eq(e.problem, PACER_FILE_VERSION);
		else
			ck_assert_int_eq(e.problem, PACER_FILE_HEADER_CORRUPT);
	}
}
END_TEST

/* Re-encode a 3.1 header after poking a field, checksum made right: only the field is wrong. */
static int decode_poked(const struct pacer_file_header *h, long off, const void *val, size_t len,
			struct pacer_file_error *e)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	struct pacer_file_header got;
	uint32_t crc;

	ck_assert_int_eq(pacer_file_header_encode(h, buf, sizeof(buf)), 0);
	memcpy(buf + off, val, len);
	crc = pacer_crc32(0, buf, h->header_len - 4);
	memcpy(buf + h->header_len - 4, &crc, 4); /* little-endian host */
	return pacer_file_header_decode(buf, h->header_len, &got, e);
}

/*
 * Minor 2 carries the dense table's line count before the checksum (after
 * the classes in format 3); the writer uses it only when there is a count,
 * and any other backend's count must be 0.
 */
START_TEST(test_line_count_field)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	struct pacer_file_header h, got;
	struct pacer_file_error e;
	uint32_t v;

	/* Without a count: format x.3 writes it 0. */
	sample_header(&h);
	pacer_file_header_set_lines(&h, 0);
	ck_assert_uint_eq(h.version_minor, 3);
	ck_assert_uint_eq(h.header_len, PACER_FILE_HEADER_V1_2_LEN);
	/* A table's x.2 header with count 0 reads, and says 0. */
	h.backend = PACER_BACKEND_TABLE;
	h.rows = 1;
	h.lines_log2 = 16;
	h.version_minor = 2;
	h.header_len = PACER_FILE_HEADER_V1_2_LEN;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[10], 2);
	ck_assert_int_eq(pacer_file_header_decode(buf, PACER_FILE_HEADER_V1_2_LEN, &got, &e), 0);
	ck_assert_uint_eq(got.lines, 0);
	ck_assert_uint_eq(got.header_len, PACER_FILE_HEADER_V1_2_LEN);
	/* A count beside the table: refused at the count's offset, 284. */
	v = 7;
	ck_assert_int_eq(decode_poked(&h, 284, &v, 4, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 284);
	ck_assert_ptr_nonnull(strstr(e.msg, "line count 7 in a recording of the table"));
	/* An x.2 header of the x.1 length (or longer) is corrupt. */
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	buf[12] = PACER_FILE_HEADER_V1_1_LEN & 0xff;
	buf[13] = PACER_FILE_HEADER_V1_1_LEN >> 8;
	ck_assert_int_eq(pacer_file_header_decode(buf, sizeof(buf), &got, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_HEADER_CORRUPT);
	/* The encoder refuses a count it has no room for (an x.1 header). */
	sample_header(&h);
	h.version_minor = 1;
	h.header_len = PACER_FILE_HEADER_V1_1_LEN;
	h.lines = 5;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), -EINVAL);
	/* Format 3.2: the count after the class table. */
	class_header(&h);
	h.lines_log2 = 16;
	h.version_minor = 2;
	h.header_len = PACER_FILE_HEADER_CLASSES_LEN(2) + 4;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), 0);
	ck_assert_uint_eq(got.n_classes, 2);
	ck_assert_uint_eq(got.lines, 0);
	v = 9;
	ck_assert_int_eq(decode_poked(&h, PACER_FILE_CLASSES_OFF + 2 * PACER_FILE_CLASS_ENTRY_LEN, &v, 4,
				      &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, PACER_FILE_CLASSES_OFF + 2 * PACER_FILE_CLASS_ENTRY_LEN);
	/* A dense recording: x.2 with its line count, any count; lines_log2 its ceiling's log2. */
	sample_header(&h);
	h.backend = PACER_BACKEND_DENSE;
	h.rows = 1;
	h.lines_log2 = 19;
	pacer_file_header_set_lines(&h, 468750);
	ck_assert_uint_eq(h.version_minor, 3);
	ck_assert_uint_eq(h.header_len, PACER_FILE_HEADER_V1_2_LEN);
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_uint_eq(buf[284] | buf[285] << 8 | buf[286] << 16, 468750);
	ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), 0);
	ck_assert_uint_eq(got.lines, 468750);
	ck_assert_uint_eq(got.backend, PACER_BACKEND_DENSE);
	/* The CSV header names the format and the line count. */
	{
		char *csv = NULL;
		size_t csv_len = 0;
		FILE *f = open_memstream(&csv, &csv_len);

		ck_assert_ptr_nonnull(f);
		ck_assert_int_eq(pacer_csv_write_header(f, &h), 0);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(csv, "format 1.3\n"));
		ck_assert_ptr_nonnull(strstr(csv, "# dense: 468750 lines\n"));
		free(csv);
	}
	/* lines_log2 that is not the count's magnitude, or a count of 1: refused at the count. */
	v = 262144;
	ck_assert_int_eq(decode_poked(&h, 284, &v, 4, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 284);
	ck_assert_ptr_nonnull(strstr(e.msg, "line count 262144 with lines_log2 19"));
	v = 1;
	ck_assert_int_eq(decode_poked(&h, 284, &v, 4, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 284);
	/* A dense recording in x.1, without its count: refused naming the version. */
	h.lines = 0;
	h.version_minor = 1;
	h.header_len = PACER_FILE_HEADER_V1_1_LEN;
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), -EBADMSG);
	ck_assert_uint_eq(e.offset, 10);
	ck_assert_ptr_nonnull(strstr(e.msg, "without its line count"));
	/* With classes (3.2): the count after the class table. */
	class_header(&h);
	h.backend = PACER_BACKEND_DENSE;
	h.lines_log2 = 10;
	pacer_file_header_set_lines(&h, 937);
	ck_assert_uint_eq(h.header_len, PACER_FILE_HEADER_CLASSES_LEN(2) + 4);
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), 0);
	ck_assert_uint_eq(got.lines, 937);
	ck_assert_uint_eq(got.n_classes, 2);
	/* A 3.2 header that lacks the count's 4 bytes is corrupt. */
	h.lines = 0;
	h.version_minor = 1;
	h.header_len = PACER_FILE_HEADER_CLASSES_LEN(2);
	ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
	buf[10] = 2;
	v = pacer_crc32(0, buf, h.header_len - 4);
	memcpy(buf + h.header_len - 4, &v, 4); /* little-endian host */
	ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), -EBADMSG);
	ck_assert_int_eq(e.problem, PACER_FILE_HEADER_CORRUPT);
}
END_TEST

/* A class table that no load writes is refused naming the class, the field and its offset. */
START_TEST(test_classes_invalid_table)
{
	static const struct {
		long off;        /* from the header (< 292) or from class 1's entry */
		bool in_entry;
		uint32_t val;
		unsigned len;
		const char *says;
	} cases[] = {
		{ 284, false, 0, 4, "0 classes" },
		{ 284, false, 257, 4, "257 classes" },
		{ 288, false, 100, 4, "class entries of 100 bytes" },
		{ 248, false, 0, 2, "rate N = 0" },
		{ 0, true, '!', 1, "class 1: the name" },
		{ 0, true, 0, 1, "class 1: the name" },
		{ 0, true, 'd' | 'n' << 8 | 's' << 16, 3, "the name 'dns' is also class 0's" },
		{ 16, true, 3, 4, "action 3" },
		{ 20, true, 3, 4, "key mode 3" },
		{ 24, true, 33, 4, "prefix lengths /33" },
		{ 32, true, 2, 4, "policy 2" },
		{ 36, true, 99, 4, "threshold 99 and burst" },
		{ 36, true, 1, 4, "threshold 1 ticks (burst 0) is outside" },
		{ 40, true, 5, 4, "burst 5 ticks do not match" },
		{ 44, true, 0, 4, "rate N = 0" },
		{ 48, true, 0, 4, "interval 0 ns" },
		{ 60, true, 3, 4, "stat slot 3 is also class 'dns'" },
		{ 60, true, 256, 4, "stat slot 256 is outside" },
		{ 64, true, 0x100, 4, "match terms 0x100" },
		{ 69, true, 5, 1, "family 5" },
		{ 72, true, 9, 1, "port range ends before it starts" },
		{ 80, true, 1, 1, "bits beyond its mask" },
	};
	struct pacer_file_header h;
	struct pacer_file_error e;
	unsigned i;

	class_header(&h);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long off = cases[i].in_entry ? PACER_FILE_CLASSES_OFF + PACER_FILE_CLASS_ENTRY_LEN + cases[i].off
					     : cases[i].off;
		uint32_t v = cases[i].val;

		ck_assert_msg(decode_poked(&h, off, &v, cases[i].len, &e) == -EBADMSG, "case %u", i);
		ck_assert_int_eq(e.problem, PACER_FILE_HEADER_INVALID);
		ck_assert_msg(strstr(e.msg, cases[i].says), "case %u: %s", i, e.msg);
		if (cases[i].in_entry)
			ck_assert_uint_ge(e.offset, PACER_FILE_CLASSES_OFF + PACER_FILE_CLASS_ENTRY_LEN);
	}
	/*
	 * The tick serves the classes: the global interval may then need more
	 * ticks than a classless sketch holds (1 s at 2^20 ns: 955), on the table.
	 */
	h.tick_shift = 20;
	h.thresh_ticks = 955;
	h.classes[0].thresh_ticks = 50;
	h.classes[0].burst_ticks = 932;
	h.classes[1].thresh_ticks = 97;
	ck_assert_msg(decode_poked(&h, 0, "\x89", 1, &e) == 0, "%s", e.msg);
	h.thresh_ticks = 954;
	ck_assert_int_eq(decode_poked(&h, 0, "\x89", 1, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "threshold 954 and burst 0 ticks do not match the rate 1 per"));
	class_header(&h);
	/* When the class list changed, read back. */
	{
		uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
		struct pacer_file_header got;

		h.classes_changed_ns = 7000000000ULL;
		ck_assert_int_eq(pacer_file_header_encode(&h, buf, sizeof(buf)), 0);
		ck_assert_int_eq(pacer_file_header_decode(buf, h.header_len, &got, &e), 0);
		ck_assert_uint_eq(got.classes_changed_ns, 7000000000ULL);
		h.classes_changed_ns = 0;
	}
	/* A count of classes that the header's length does not hold: corrupt. */
	{
		uint32_t three = 3;

		ck_assert_int_eq(decode_poked(&h, 284, &three, 4, &e), -EBADMSG);
		ck_assert_int_eq(e.problem, PACER_FILE_HEADER_CORRUPT);
		ck_assert_ptr_nonnull(strstr(e.msg, "3 classes of 144 bytes"));
	}
	/* A pass or drop class carries no limit: its limit fields are not judged. */
	h.classes[1].action = PACER_ACTION_DROP;
	h.classes[1].thresh_ticks = 0;
	h.classes[1].rate_n = 0;
	ck_assert_int_eq(decode_poked(&h, 0, "\x89", 1, &e), 0);
	/* The sketch's cells hold ages up to 64 ticks: 20 per second's burst fits, 10 s does not. */
	class_header(&h);
	h.backend = PACER_BACKEND_SKETCH;
	h.rows = 4;
	ck_assert_int_eq(decode_poked(&h, 0, "\x89", 1, &e), 0);
	h.classes[1].interval_ns = 10000000000ULL;
	h.classes[1].thresh_ticks = 300; /* ceil(10 s / 2^25 ns) + 1: the table's ticks */
	ck_assert_int_eq(decode_poked(&h, 0, "\x89", 1, &e), -EBADMSG);
	ck_assert_msg(strstr(e.msg, "class 'syn': threshold 300 ticks (burst 0) is outside 2..64 for the sketch"), "%s", e.msg);
	/* The table holds it: limits 100x apart in one load. */
	h.backend = PACER_BACKEND_TABLE;
	h.rows = 1;
	h.classes[0].interval_ns = 100000000ULL;
	h.classes[0].rate_n = 1;
	h.classes[0].burst_ticks = 0;
	h.classes[0].thresh_ticks = 4;
	ck_assert_msg(decode_poked(&h, 0, "\x89", 1, &e) == 0, "%s", e.msg);
}
END_TEST

/* A record's class slot: within the table's range, and its prefix the class's. */
START_TEST(test_classes_invalid_record)
{
	struct pacer_file_header h, plain;
	struct pacer_file_error e;
	struct pacer_record r;
	char p[128];
	long rec2 = PACER_FILE_HEADER_CLASSES_LEN(2) + 4 + 2 * PACER_FILE_RECORD_V3_LEN;
	struct pacer_file_reader rd;
	int ret, n = 0;

	class_header(&h);
	class_record(&r, 1);
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), 0);
	/* A slot not in the table (a class added during the recording) is read. */
	r.class_slot = 9;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), 0);
	ck_assert_str_eq(pacer_record_class_name(&h, 9), "?");
	r.class_slot = 257;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "class slot 257"));
	class_record(&r, 0); /* syn keys IPv4 by /24 */
	r.prefix = 32;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "class 'syn' keys IPv4 sources by /24"));
	/* Key bytes only with the key flag; padding zero. */
	class_record(&r, 0);
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), 0);
	r.flags &= (uint8_t)~PACER_REC_KEY;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "key bytes set without the key flag"));
	class_record(&r, 2);
	r.key_dst[15] = 1;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	class_record(&r, 0);
	r.pad = 1;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	/* Formats 1 and 2 have no classes: any slot but 0, or the key flag, is impossible. */
	sample_header(&plain);
	sample_record(&r, 0);
	r.class_slot = 1;
	ck_assert_int_eq(pacer_file_record_check(&plain, &r, 0, 0, &e), -EBADMSG);
	sample_record(&r, 0);
	r.flags |= PACER_REC_KEY;
	ck_assert_int_eq(pacer_file_record_check(&plain, &r, 0, 0, &e), -EBADMSG);

	path_of(p, sizeof(p), "clsr.xpr");
	write_class_file(p, 10, PACER_FORMAT_BINARY);
	poke(p, rec2 + 40, 1); /* class_slot 0x101 = 257: beyond any program's */
	poke(p, rec2 + 41, 1);
	ck_assert_int_eq(pacer_file_open(p, &rd, &e), 0);
	while ((ret = pacer_file_next(&rd, &r, &e)) == 1)
		n++;
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(ret, -EBADMSG);
	ck_assert_uint_eq(e.offset, (uint64_t)rec2);
	ck_assert_ptr_nonnull(strstr(e.msg, "record 2: class slot 257"));
	pacer_file_close(&rd);
}
END_TEST

/* Random bytes in the class table never crash the reader: refused or read, never more. */
START_TEST(test_classes_table_fuzz)
{
	struct pacer_file_header h;
	struct pacer_file_error e;
	uint64_t x = 0x243f6a8885a308d3ULL;
	unsigned i, refused = 0;

	class_header(&h);
	for (i = 0; i < 20000; i++) {
		uint8_t v[4];
		long off;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		off = 248 + (long)(x % (PACER_FILE_HEADER_CLASSES_LEN(2) - 4 - 248));
		memcpy(v, &x, 4);
		if (decode_poked(&h, off, v, 1 + (x >> 40) % 4 > (uint64_t)(PACER_FILE_HEADER_CLASSES_LEN(2) - 4 - off)
					      ? 1 : 1 + (x >> 40) % 4, &e)) {
			ck_assert(e.problem == PACER_FILE_HEADER_INVALID ||
				  e.problem == PACER_FILE_HEADER_CORRUPT);
			refused++;
		}
	}
	ck_assert_uint_gt(refused, 1000);
}
END_TEST

START_TEST(test_classes_csv)
{
	char p[128], line[512];
	FILE *f;
	int rows = 0, classes = 0;

	path_of(p, sizeof(p), "cls.csv");
	write_class_file(p, 4, PACER_FORMAT_CSV);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "# class ", 8))
			classes++;
		if (!strncmp(line, "# class 1: syn, slot 1, action pace, key src+dport, prefix4 24", 62))
			classes += 10;
		if (!strncmp(line, "index,", 6))
			ck_assert_ptr_nonnull(strstr(line, ",thresh_ticks,class,key\n"));
		if (line[0] >= '0' && line[0] <= '9') {
			rows++;
			ck_assert_ptr_nonnull(strstr(line, rows == 1 ? ",syn,dport 1000\n"
						      : rows == 3 ? ",syn,\n" : ",dns,\n"));
		}
	}
	fclose(f);
	ck_assert_int_eq(rows, 4);
	ck_assert_int_eq(classes, 12);
}
END_TEST

START_TEST(test_csv)
{
	char p[128], line[512];
	FILE *f;
	int rows = 0, comments = 0, header = 0;

	path_of(p, sizeof(p), "r.csv");
	write_file(p, 6, PACER_FORMAT_CSV);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			comments++;
		else if (!strncmp(line, "index,", 6))
			header++;
		else
			rows++;
		if (rows == 1 && line[0] == '0')
			ck_assert_str_eq(line, "0,5000000000,0.000000000,10.0.0.0/32,4,32,pass,source+packet,never,never,0,31\n");
		if (rows == 3 && line[0] == '2')
			ck_assert_ptr_nonnull(strstr(line, ",fd00:0:0:2::/64,6,64,pass,source,2,67108864,2,31"));
	}
	fclose(f);
	ck_assert_int_eq(rows, 6);
	ck_assert_int_eq(header, 1);
	ck_assert_int_gt(comments, 10);
}
END_TEST

/* A full disk is named as one in CSV as in the binary format, not as an I/O error. */
START_TEST(test_csv_full_disk)
{
	struct pacer_file_header h;
	struct pacer_record r = { .family = 4, .prefix = 32 };
	FILE *f = fopen("/dev/full", "w");

	ck_assert_ptr_nonnull(f);
	setvbuf(f, NULL, _IONBF, 0); /* each write reaches the device */
	pacer_file_header_init(&h);
	ck_assert_int_eq(pacer_csv_write_header(f, &h), -ENOSPC);
	clearerr(f);
	ck_assert_int_eq(pacer_csv_write_record(f, &h, 0, &r), -ENOSPC);
	fclose(f);
}
END_TEST

/*
 * Minor 3: a drop verdict observe mode passed carries PACER_REC_OBSERVED
 * (0x8), verdict still drop; the flag on a pass, or in an x.2 file, is
 * refused; the CSV names it would_drop.
 */
START_TEST(test_observed_flag)
{
	struct pacer_file_header h;
	struct pacer_file_error e;
	struct pacer_record r;
	char *csv = NULL;
	size_t csv_len = 0;
	FILE *f;

	sample_header(&h);
	ck_assert_uint_eq(h.version_minor, PACER_FILE_VERSION_MINOR_OBSERVED);
	sample_record(&r, 1); /* a drop */
	ck_assert_uint_eq(r.verdict, PACER_REC_DROP);
	r.flags |= PACER_REC_OBSERVED;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), 0);
	f = open_memstream(&csv, &csv_len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(pacer_csv_write_record(f, &h, 0, &r), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(csv, ",would_drop,source,"));
	free(csv);
	r.verdict = PACER_REC_PASS;
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "flag 0x8 (observed) on a pass verdict"));
	r.verdict = PACER_REC_DROP;
	h.version_minor = 2; /* older files cannot hold it */
	ck_assert_int_eq(pacer_file_record_check(&h, &r, 0, 0, &e), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(e.msg, "flags 0x9 are not a set of 0x1 and 0x2"));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("format");

	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_encoding_is_little_endian_and_fixed);
	tcase_add_test(tc, test_truncated_last_record_every_byte);
	tcase_add_test(tc, test_truncated_header_every_byte);
	tcase_add_test(tc, test_header_corruption_detected_at_every_byte);
	tcase_add_test(tc, test_version_mismatch);
	tcase_add_test(tc, test_writer_release);
	tcase_add_test(tc, test_rate_header);
	tcase_add_test(tc, test_foreign_files);
	tcase_add_test(tc, test_incomplete_and_count_mismatch);
	tcase_add_test(tc, test_invalid_record_named_with_offset);
	tcase_add_test(tc, test_invalid_header_fields);
	tcase_add_test(tc, test_implausible_header_contents);
	tcase_add_test(tc, test_backend_fields);
	tcase_add_test(tc, test_line_count_field);
	tcase_add_test(tc, test_fifo_refused_without_blocking);
	tcase_add_test(tc, test_writer_never_follows_links);
	tcase_add_test(tc, test_tick_and_interval_bounds);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_classes_round_trip);
	tcase_add_test(tc, test_classes_header_every_byte);
	tcase_add_test(tc, test_classes_invalid_table);
	tcase_add_test(tc, test_classes_invalid_record);
	tcase_add_test(tc, test_classes_table_fuzz);
	tcase_add_test(tc, test_classes_csv);
	tcase_add_test(tc, test_csv_full_disk);
	tcase_add_test(tc, test_open_fdopen_fails_no_leak);
	tcase_add_test(tc, test_observed_flag);
	suite_add_tcase(s, tc);
	return s;
}


int main(void)
{
	return run_suite(suite());
}
