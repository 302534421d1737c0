/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recording file written by `xdp-pacer record` and read by
 * `xdp-pacer analyze`: a versioned, self-describing header followed by
 * fixed-size records.  Pure C, no libbpf: the unit tests and any offline
 * tool can read it.
 *
 * Everything on disk is little-endian and encoded field by field (never a
 * struct dump), so a file means the same on any host and compiler.
 *
 *   offset size  header v1.0 (PACER_FILE_HEADER_V1_LEN = 256 bytes)
 *        0    8  magic "\x89XPR\r\n\x1a\n" (PNG-style: a text-mode copy or
 *                a 7-bit channel breaks it, so it is caught as foreign)
 *        8    2  version major: a reader refuses any other major
 *       10    2  version minor: additions only (longer header/records)
 *       12    4  header_len: bytes of header including the checksum
 *       16    4  record_size: bytes per record (>= 40)
 *       20    4  flags: PACER_FILE_F_COMPLETE once the writer closed it
 *       24    8  interval_ns at the start of the recording
 *       32    4  thresh_ticks at the start
 *       36    4  tick_shift (a tick is 2^tick_shift ns)
 *       40    4  rows          44  4  lines_log2     48  4  layout kind
 *       52    4  line_bytes    56  4  line_cells     60  4  cell_bits
 *       64    4  epoch_shift   68  4  policy         72  4  placement
 *       76    4  clock         80  4  prefix4        84  4  prefix6
 *       88    4  ncpus         92  4  datapath ABI version
 *       96    8  sample_src_thresh (of 2^32)   104  8  sample_pkt_thresh
 *      112    8  start_mono_ns (datapath clock) 120  8  start_real_ns (CLOCK_REALTIME)
 *      128    8  end_mono_ns (0 until complete) 136  8  record_count (0 until complete)
 *      144    8  records_lost (datapath ring buffer full during the recording)
 *      152   16  ifname (NUL padded)           168  64  hostname (NUL padded)
 *      232    4  malformed verdict             236   4  max_thresh (cell age cap, ticks)
 *      240    4  backend (0 sketch, 1 table, 2 dense; files from before the
 *                table hold zero here, and were written by the sketch)
 *      244    4  on_full (table, dense: 0 drop, 1 evict-oldest; the sketch: 0)
 *      248    2  rate_n: N of --rate N/T (format 2 only; 1.x: reserved, zero)
 *      250    2  burst_ticks: the rate's burst tolerance in ticks (format 2 only)
 *      252    4  CRC-32 (IEEE) of bytes [0, header_len - 4)
 *
 *   header v1.1 (PACER_FILE_HEADER_V1_1_LEN = 288 bytes; also format 2.1):
 *   bytes 0..251 as in v1.0, then
 *      252   32  writer: the xdp-pacer release that wrote the file, printable
 *                ASCII, NUL padded (analyze and the CSV header show it)
 *      284    4  CRC-32 (IEEE) of bytes [0, header_len - 4)
 *
 *   header 3.1, a recording of a program with traffic classes
 *   (PACER_FILE_HEADER_CLASSES_LEN(n) = 304 + n * 144 bytes): bytes 0..283
 *   as in x.1, the global limit's rate_n (1 for an interval) and burst at
 *   248 and 250 as in format 2, then
 *      284    4  n_classes: 1..PACER_MAX_CLASSES, the list active when the
 *                recording started
 *      288    4  class_entry_len (144; a later minor may append fields)
 *      292    8  classes_changed_ns: 0, or the datapath time after which the
 *                running class list was no longer this one (`set` changed
 *                it): records from then on are not judged
 *      300  n*e  the classes, in match order, each:
 *                  0  16  name (NUL padded)      16   4  action
 *                 20   4  key_mode               24   4  prefix4
 *                 28   4  prefix6                32   4  policy
 *                 36   4  thresh_ticks           40   4  burst_ticks
 *                 44   4  rate_n                 48   8  interval_ns
 *                 56   4  id                     60   4  stat_slot
 *                 64   4  match terms            68   1  proto
 *                 69   1  family                 70   2  vlan
 *                 72   2  dport_lo  74 2 dport_hi  76 2 sport_lo  78 2 sport_hi
 *                 80  32  src, src_mask (address bytes as in memory: network order)
 *                112  32  dst, dst_mask
 *      end-4  4  CRC-32 (IEEE) of bytes [0, header_len - 4)
 *
 *   header x.2, a recording of the dense table (backend 2): the x.1 header
 *   (or 3.1's, classes included) with the line count appended before the
 *   checksum: PACER_FILE_HEADER_V1_2_LEN = 292 bytes, or
 *   PACER_FILE_HEADER_CLASSES_LEN(n) + 4 with classes:
 *    L       4  lines: the dense table's lines per copy, any count 2..2^24
 *               (lines_log2 is its ceiling's log2); L = 284, or 300 + n * e
 *               after the classes
 *    L+4     4  CRC-32 (IEEE) of bytes [0, header_len - 4)
 *   Written for the dense table, whose geometry lines_log2 cannot say (0
 *   for the other backends, whose geometry lines_log2 is); a file of minor
 *   0 or 1 has lines 0 (its line count is 2^lines_log2 for the table, the
 *   sketch's rows and lines_log2 for the sketch).
 *
 *   header x.3 (what this writer writes): x.2's layout, the line count
 *   always there (0 but for the dense table), and records may carry the
 *   flag PACER_REC_OBSERVED (0x8): a drop verdict that observe mode passed
 *   (verdict stays 1, the judgement).  Readers of x.0 to x.2 files refuse
 *   the flag in them.
 *
 *   record v1 (PACER_FILE_RECORD_V1_LEN = 40 bytes), at header_len + i * record_size:
 *        0    8  ts_ns, datapath clock       8  16  masked source address
 *       24    1  family (4/6)  25 1 prefix   26   1  verdict (0 pass, 1 drop)
 *       27    1  flags (PACER_REC_SAMPLED_*)  28   4  est_age_ticks (PACER_AGE_NEVER)
 *       32    4  cpu                          36   4  thresh_ticks in force
 *   record v3 (format 3: PACER_FILE_RECORD_V3_LEN = 64 bytes): v1, then
 *       40    4  class_slot: the deciding class's stat_slot + 1; 0 for a
 *                packet paced by the global limit (classes removed live)
 *       44    2  key_dport (flags has PACER_REC_KEY, the class keys src+dport)
 *       46    2  zero
 *       48   16  key_dst (flags has PACER_REC_KEY, the class keys src+dst;
 *                IPv4 in the first 4 bytes)
 *   and flags may hold PACER_REC_KEY: the record carries its class's key.
 *   From minor 3, flags may hold PACER_REC_OBSERVED (0x8) on a drop verdict.
 *
 * The hash key is deliberately not stored: whoever holds the file could use
 * it to aim collisions at the live sketch.  Offline simulation draws its own.
 */
#ifndef PACER_FILE_H
#define PACER_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pacer_abi.h"
#include "safe_file.h"

#define PACER_FILE_MAGIC "\x89XPR\r\n\x1a\n"
#define PACER_FILE_MAGIC_LEN 8
/*
 * Format 1: one packet per interval.  Format 2, the same bytes with the
 * rate's N and burst in the header: written only for --rate N/T with N > 1,
 * so that a reader of format 1 refuses it instead of auditing it as an
 * interval; interval_ns is then T, thresh_ticks may reach the table's
 * ticks, and ages 16 bits.
 */
#define PACER_FILE_VERSION_MAJOR 1
#define PACER_FILE_VERSION_RATE 2
/*
 * Format 3: a program with traffic classes (pacer_class.h): the class
 * table in the header and each record's class, so a reader of formats 1
 * and 2 refuses it instead of auditing every class against the global
 * limit.  Written only while classes are configured.
 */
#define PACER_FILE_VERSION_CLASSES 3
/* Minor 1: the writer's release.  Minor 2: the dense table's line count. */
#define PACER_FILE_VERSION_MINOR_LINES 2
/* Minor 3, what the writer writes: the line count always, records flagged observed. */
#define PACER_FILE_VERSION_MINOR_OBSERVED 3
#define PACER_FILE_VERSION_MINOR PACER_FILE_VERSION_MINOR_OBSERVED
#define PACER_FILE_HEADER_V1_LEN 256
#define PACER_FILE_HEADER_V1_1_LEN 288
#define PACER_FILE_HEADER_V1_2_LEN 292
/* What the writer writes without classes: format 1.3 (or 2.3), x.2's layout. */
#define PACER_FILE_HEADER_LEN PACER_FILE_HEADER_V1_2_LEN
#define PACER_FILE_RECORD_V1_LEN 40
#define PACER_FILE_RECORD_V3_LEN 64
#define PACER_FILE_CLASS_ENTRY_LEN 144
#define PACER_FILE_CLASS_ENTRY_MAX_LEN 1024
#define PACER_FILE_CLASSES_OFF 300
#define PACER_FILE_HEADER_CLASSES_LEN(n) (PACER_FILE_CLASSES_OFF + (n) * PACER_FILE_CLASS_ENTRY_LEN + 4)
/* Room for any header this writer makes (3.2: the classes and the line count). */
#define PACER_FILE_HEADER_BUF_LEN (PACER_FILE_HEADER_CLASSES_LEN(PACER_MAX_CLASSES) + 4)
/* Sanity caps a reader applies before trusting the lengths in a header. */
#define PACER_FILE_HEADER_MAX_LEN 65536
#define PACER_FILE_RECORD_MAX_LEN 4096
#define PACER_FILE_F_COMPLETE 0x1u

struct pacer_file_header {
	uint16_t version_major, version_minor;
	uint32_t header_len, record_size, flags;
	uint64_t interval_ns;
	uint32_t thresh_ticks, tick_shift;
	uint32_t rows, lines_log2, kind;
	uint32_t line_bytes, line_cells, cell_bits, epoch_shift;
	uint32_t policy, placement, clock;
	uint32_t prefix4, prefix6;
	uint32_t ncpus, abi_version;
	uint64_t sample_src_thresh, sample_pkt_thresh;
	uint64_t start_mono_ns, start_real_ns, end_mono_ns;
	uint64_t record_count, records_lost;
	char ifname[16];   /* NUL-terminated in memory; padded on disk */
	char hostname[64];
	uint32_t malformed, max_thresh;
	uint32_t backend, on_full;
	uint32_t rate_n, burst_ticks; /* 1 and 0 in format 1 */
	uint32_t lines;    /* the dense table's lines per copy (minor 2); 0 for the others */
	char writer[32];   /* release that wrote it, "" before format x.1; NUL-terminated in memory */
	/* Format 3: the classes in match order (name NUL-terminated in memory); 0 before. */
	uint32_t n_classes, class_entry_len;
	uint64_t classes_changed_ns; /* 0: the list held all through; else from when it did not */
	struct pacer_class classes[PACER_MAX_CLASSES];
};

/* What went wrong with a file; the reader fills one of these with an offset. */
enum pacer_file_problem {
	PACER_FILE_OK = 0,
	PACER_FILE_IO,                /* open/read/write failed (errno in code) */
	PACER_FILE_FOREIGN,           /* no magic: not an xdp-pacer recording */
	PACER_FILE_VERSION,           /* a major version this reader does not know */
	PACER_FILE_HEADER_TRUNCATED,  /* file ends inside the header */
	PACER_FILE_HEADER_CORRUPT,    /* checksum mismatch */
	PACER_FILE_HEADER_INVALID,    /* checksum fine, but a field is impossible */
	PACER_FILE_RECORD_TRUNCATED,  /* last record cut short (warning: rest usable) */
	PACER_FILE_RECORD_INVALID,    /* a record's fields are impossible */
	PACER_FILE_COUNT_MISMATCH,    /* complete file, count in header != records present (warning) */
	PACER_FILE_INCOMPLETE,        /* writer did not close it (killed?) (warning) */
};

struct pacer_file_error {
	enum pacer_file_problem problem;
	int code;          /* negative errno matching the problem */
	uint64_t offset;   /* byte offset in the file where the problem is */
	char msg[256];     /* one line naming the problem and the offset */
};

const char *pacer_file_problem_name(enum pacer_file_problem p);

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()). */
uint32_t pacer_crc32(uint32_t crc, const void *buf, size_t len);

/*
 * A header for a fresh recording: constants of the format filled in, the
 * writer set to this release, the rest zero.
 */
void pacer_file_header_init(struct pacer_file_header *h);

/*
 * Encode into h->header_len bytes, checksum included: PACER_FILE_HEADER_V1_LEN
 * (format x.0), PACER_FILE_HEADER_V1_1_LEN (x.1, with the writer) or, with
 * classes, PACER_FILE_HEADER_CLASSES_LEN(n) (3.1); len must hold them.
 * 0 or -EINVAL.
 */
int pacer_file_header_encode(const struct pacer_file_header *h, uint8_t *buf, size_t len);

/*
 * Decode and check a header from the first `len` bytes of a file (all of
 * them, if the file is shorter than its header: that is then reported as a
 * truncated header).  0, or a negative errno with *err saying what and where.
 */
int pacer_file_header_decode(const uint8_t *buf, size_t len, struct pacer_file_header *h,
			     struct pacer_file_error *err);

/*
 * Record <-> bytes: PACER_FILE_RECORD_V1_LEN bytes; the _v forms the
 * header's record_size (format 3: the class slot too).
 */
void pacer_file_record_encode(const struct pacer_record *r, uint8_t *buf);
void pacer_file_record_decode(const uint8_t *buf, struct pacer_record *r);
void pacer_file_record_encode_v(const struct pacer_file_header *h, const struct pacer_record *r,
				uint8_t *buf);
void pacer_file_record_decode_v(const struct pacer_file_header *h, const uint8_t *buf,
				struct pacer_record *r);

/*
 * Make h a format-3 header carrying these n classes (1..PACER_MAX_CLASSES),
 * or, with n = 0, the format of a program without classes.  Sets the
 * header and record lengths (and the minor version: 2 with a line count).
 */
void pacer_file_header_set_classes(struct pacer_file_header *h, const struct pacer_class *c,
				   uint32_t n);

/*
 * The dense table's line count (0: a backend without one), and the header
 * length and minor version that carry it.
 */
void pacer_file_header_set_lines(struct pacer_file_header *h, uint32_t lines);

/* The class a record's class_slot names (NULL: slot 0, or a class not in the table). */
const struct pacer_class *pacer_file_class_of(const struct pacer_file_header *h, uint32_t class_slot);

/*
 * Is this record possible under header h?  0, or -EBADMSG with *err naming
 * the bad field (offset = the record's offset, passed in).
 */
int pacer_file_record_check(const struct pacer_file_header *h, const struct pacer_record *r,
			    uint64_t offset, uint64_t index, struct pacer_file_error *err);

/* ---- reading ---- */

struct pacer_file_reader {
	FILE *f;
	struct pacer_file_header hdr;
	uint64_t file_size;
	uint64_t n_records;    /* whole records present */
	uint64_t tail_bytes;   /* bytes of a cut-short last record, 0 if none */
	uint64_t next;         /* index of the next record pacer_file_next() returns */
	/* Warnings found at open (truncated tail, count mismatch, incomplete): */
	int n_warnings;
	struct pacer_file_error warnings[3];
	uint8_t *recbuf;
};

/*
 * Open and validate a recording.  0 on success (warnings, if any, in
 * r->warnings: the records present are still readable); negative errno on a
 * fatal problem, described in *err.
 */
int pacer_file_open(const char *path, struct pacer_file_reader *r, struct pacer_file_error *err);

/*
 * The next record: 1 when one was read, 0 at the end, negative errno on an
 * I/O error or an impossible record (described in *err, with its offset).
 */
int pacer_file_next(struct pacer_file_reader *r, struct pacer_record *rec,
		    struct pacer_file_error *err);

/* Byte offset of record i. */
uint64_t pacer_file_record_offset(const struct pacer_file_header *h, uint64_t i);

void pacer_file_close(struct pacer_file_reader *r);

/* ---- writing ---- */

enum pacer_file_format {
	PACER_FORMAT_BINARY,
	PACER_FORMAT_CSV,
};

/*
 * A recording in progress.  It is written to "<path>.tmp" and renamed to
 * path by pacer_file_writer_finish(), so a file under the final name is
 * always complete.  The .tmp is created exclusively and never through a
 * link (safe_file.h), mode 0600: an existing "<path>.tmp" is an error.
 * Records reach the .tmp file in whole-record writes through stdio; a
 * writer killed mid-way leaves a .tmp whose header says "incomplete" and
 * whose last record may be cut short: both are what the reader detects and
 * reports, and every whole record stays readable.
 */
struct pacer_file_writer {
	FILE *f;                 /* out.f */
	struct safe_out out;
	enum pacer_file_format format;
	struct pacer_file_header hdr;
	uint64_t n_records;
	const char *tmp_path;    /* out.tmp_path while open */
};

/* 0 or negative errno (err describes it). */
int pacer_file_writer_open(struct pacer_file_writer *w, const char *path,
			   enum pacer_file_format format, const struct pacer_file_header *hdr,
			   struct pacer_file_error *err);
int pacer_file_writer_append(struct pacer_file_writer *w, const struct pacer_record *rec);
/* Push buffered records to the kernel (bounds what a kill can lose). */
int pacer_file_writer_flush(struct pacer_file_writer *w);
/*
 * Fill in end time, count and losses, mark complete, fsync, rename into
 * place.  0 or negative errno (err says where); when writing the records
 * or the header fails the .tmp file is left for the user, when only the
 * final fsync or rename fails it is removed.
 */
int pacer_file_writer_finish(struct pacer_file_writer *w, uint64_t end_mono_ns,
			     uint64_t records_lost, struct pacer_file_error *err);
/* Stop after a failure: close, leaving the .tmp file (readable as incomplete) for the user. */
void pacer_file_writer_abandon(struct pacer_file_writer *w);
/* Give up: close and remove the .tmp file. */
void pacer_file_writer_discard(struct pacer_file_writer *w);

/* ---- CSV ---- */

/* "# key: value" lines describing the header, then the column names. */
int pacer_csv_write_header(FILE *f, const struct pacer_file_header *h);
int pacer_csv_write_record(FILE *f, const struct pacer_file_header *h, uint64_t index,
			   const struct pacer_record *r);

/* A class's action and key mode as the config file writes them ("pace", "src+dport"). */
const char *pacer_file_action_name(uint32_t action);
const char *pacer_file_key_name(uint32_t key_mode);
/* The name of the class a record's slot names: "" for slot 0, "?" for one not in the table. */
const char *pacer_record_class_name(const struct pacer_file_header *h, uint32_t class_slot);

/* Text of a record's source, "10.1.2.3/32" or "2001:db8::/64". */
const char *pacer_record_source(const struct pacer_record *r, char *buf, size_t len);

#endif
