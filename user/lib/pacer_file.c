// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The recording file format: see pacer_file.h for the byte layout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include "pacer_file.h"
#include "backend.h"
#include "pacer_names.h"
#include "pacer_table.h"
#include "pacer_ticks.h"
#include "pacer_rate.h"
#include "version.h"

/* Header field offsets (v1). */
enum {
	OFF_MAGIC = 0, OFF_MAJOR = 8, OFF_MINOR = 10, OFF_HLEN = 12, OFF_RSIZE = 16,
	OFF_FLAGS = 20, OFF_INTERVAL = 24, OFF_THRESH = 32, OFF_TICK = 36, OFF_ROWS = 40,
	OFF_LINES = 44, OFF_KIND = 48, OFF_LINE_BYTES = 52, OFF_LINE_CELLS = 56,
	OFF_CELL_BITS = 60, OFF_EPOCH = 64, OFF_POLICY = 68, OFF_PLACEMENT = 72,
	OFF_CLOCK = 76, OFF_PREFIX4 = 80, OFF_PREFIX6 = 84, OFF_NCPUS = 88, OFF_ABI = 92,
	OFF_SRC_THRESH = 96, OFF_PKT_THRESH = 104, OFF_START_MONO = 112,
	OFF_START_REAL = 120, OFF_END_MONO = 128, OFF_COUNT = 136, OFF_LOST = 144,
	OFF_IFNAME = 152, OFF_HOSTNAME = 168, OFF_MALFORMED = 232, OFF_MAX_THRESH = 236,
	OFF_BACKEND = 240, OFF_ON_FULL = 244, OFF_RATE_N = 248, OFF_BURST = 250, OFF_CRC_V1 = 252,
	OFF_WRITER = 252, OFF_CRC_V1_1 = 284, OFF_LINES_COUNT = 284,
};

/* Header 3.1: the class table. */
enum {
	OFF_N_CLASSES = 284, OFF_CLASS_ENTRY_LEN = 288, OFF_CLASSES_CHANGED = 292,
};

/* Class entry field offsets (3.1), from the entry's start. */
enum {
	COFF_NAME = 0, COFF_ACTION = 16, COFF_KEY_MODE = 20, COFF_PREFIX4 = 24, COFF_PREFIX6 = 28,
	COFF_POLICY = 32, COFF_THRESH = 36, COFF_BURST = 40, COFF_RATE_N = 44, COFF_INTERVAL = 48,
	COFF_ID = 56, COFF_STAT_SLOT = 60, COFF_TERMS = 64, COFF_PROTO = 68, COFF_FAMILY = 69,
	COFF_VLAN = 70, COFF_DPORT_LO = 72, COFF_DPORT_HI = 74, COFF_SPORT_LO = 76,
	COFF_SPORT_HI = 78, COFF_SRC = 80, COFF_SRC_MASK = 96, COFF_DST = 112, COFF_DST_MASK = 128,
};

/* Record field offsets (v1; v3 adds the class slot). */
enum {
	ROFF_TS = 0, ROFF_ADDR = 8, ROFF_FAMILY = 24, ROFF_PREFIX = 25, ROFF_VERDICT = 26,
	ROFF_FLAGS = 27, ROFF_AGE = 28, ROFF_CPU = 32, ROFF_THRESH = 36, ROFF_CLASS = 40,
	ROFF_KEY_DPORT = 44, ROFF_KEY_PAD = 46, ROFF_KEY_DST = 48,
};

static const char *const problem_names[] = {
	[PACER_FILE_OK] = "ok",
	[PACER_FILE_IO] = "I/O error",
	[PACER_FILE_FOREIGN] = "not an xdp-pacer recording",
	[PACER_FILE_VERSION] = "unsupported format version",
	[PACER_FILE_HEADER_TRUNCATED] = "truncated header",
	[PACER_FILE_HEADER_CORRUPT] = "corrupt header",
	[PACER_FILE_HEADER_INVALID] = "invalid header",
	[PACER_FILE_RECORD_TRUNCATED] = "truncated last record",
	[PACER_FILE_RECORD_INVALID] = "invalid record",
	[PACER_FILE_COUNT_MISMATCH] = "record count mismatch",
	[PACER_FILE_INCOMPLETE] = "incomplete recording",
};

const char *pacer_file_problem_name(enum pacer_file_problem p)
{
	return (unsigned)p < sizeof(problem_names) / sizeof(problem_names[0]) ? problem_names[p] : "?";
}

__attribute__((format(printf, 5, 6)))
static int fail(struct pacer_file_error *err, enum pacer_file_problem p, int code, uint64_t offset,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err)
		return code;
	err->problem = p;
	err->code = code;
	err->offset = offset;
	n = snprintf(err->msg, sizeof(err->msg), "%s at offset %" PRIu64 ": ",
		     pacer_file_problem_name(p), offset);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		return code;
	va_start(ap, fmt);
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

uint32_t pacer_crc32(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t table[256];
	static int ready;
	const uint8_t *p = buf;
	size_t i;

	if (!ready) {
		/* Idempotent: racing first callers write the same values. */
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		ready = 1;
	}
	crc = ~crc;
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/*
 * The error of a failed stdio write: errno says why (ENOSPC, EDQUOT...) when
 * the write reached the file; callers clear errno before writing.
 */
static int write_errno(void)
{
	return errno ? -errno : -EIO;
}

static void put16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *b, uint32_t v) { put16(b, (uint16_t)v); put16(b + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *b, uint64_t v) { put32(b, (uint32_t)v); put32(b + 4, (uint32_t)(v >> 32)); }
static uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t get32(const uint8_t *b) { return get16(b) | (uint32_t)get16(b + 2) << 16; }
static uint64_t get64(const uint8_t *b) { return get32(b) | (uint64_t)get32(b + 4) << 32; }

void pacer_file_header_init(struct pacer_file_header *h)
{
	memset(h, 0, sizeof(*h));
	h->version_major = PACER_FILE_VERSION_MAJOR;
	h->version_minor = PACER_FILE_VERSION_MINOR;
	h->header_len = PACER_FILE_HEADER_LEN;
	h->record_size = PACER_FILE_RECORD_V1_LEN;
	h->line_bytes = PACER_LINE_BYTES;
	h->line_cells = PACER_LINE_CELLS;
	h->cell_bits = 8;
	h->epoch_shift = PACER_EPOCH_SHIFT;
	h->max_thresh = PACER_MAX_THRESH;
	h->abi_version = PACER_ABI_VERSION;
	h->rate_n = 1;
	snprintf(h->writer, sizeof(h->writer), "xdp-pacer %s", pacer_version);
}

/* Header and record lengths for h's classes: minor 3 always carries the line count. */
static void fit_lengths(struct pacer_file_header *h)
{
	uint32_t n = h->n_classes;

	h->header_len = (n ? PACER_FILE_HEADER_CLASSES_LEN(n) : PACER_FILE_HEADER_V1_1_LEN) + 4;
	h->record_size = n ? PACER_FILE_RECORD_V3_LEN : PACER_FILE_RECORD_V1_LEN;
	h->version_minor = PACER_FILE_VERSION_MINOR;
}

void pacer_file_header_set_classes(struct pacer_file_header *h, const struct pacer_class *c,
				   uint32_t n)
{
	if (n > PACER_MAX_CLASSES)
		n = PACER_MAX_CLASSES;
	memset(h->classes, 0, sizeof(h->classes));
	if (n)
		memcpy(h->classes, c, n * sizeof(*c));
	h->n_classes = n;
	fit_lengths(h);
}

void pacer_file_header_set_lines(struct pacer_file_header *h, uint32_t lines)
{
	h->lines = lines;
	fit_lengths(h);
}

/* Where minor 2's line count sits: after the x.1 fields, or after format 3's classes. */
static uint32_t lines_offset(uint32_t n_classes, uint32_t class_entry_len)
{
	return n_classes ? PACER_FILE_CLASSES_OFF + n_classes * class_entry_len : OFF_LINES_COUNT;
}

const struct pacer_class *pacer_file_class_of(const struct pacer_file_header *h, uint32_t class_slot)
{
	uint32_t i;

	for (i = 0; class_slot && i < h->n_classes && i < PACER_MAX_CLASSES; i++)
		if (h->classes[i].stat_slot + 1 == class_slot)
			return &h->classes[i];
	return NULL;
}

static void put_class(uint8_t *b, const struct pacer_class *c)
{
	const struct pacer_match *m = &c->m;

	memcpy(b + COFF_NAME, c->name, strnlen(c->name, sizeof(c->name) - 1));
	put32(b + COFF_ACTION, c->action);
	put32(b + COFF_KEY_MODE, c->key_mode);
	put32(b + COFF_PREFIX4, c->prefix4);
	put32(b + COFF_PREFIX6, c->prefix6);
	put32(b + COFF_POLICY, c->policy);
	put32(b + COFF_THRESH, c->thresh_ticks);
	put32(b + COFF_BURST, c->burst_ticks);
	put32(b + COFF_RATE_N, c->rate_n);
	put64(b + COFF_INTERVAL, c->interval_ns);
	put32(b + COFF_ID, c->id);
	put32(b + COFF_STAT_SLOT, c->stat_slot);
	put32(b + COFF_TERMS, m->terms);
	b[COFF_PROTO] = m->proto;
	b[COFF_FAMILY] = m->family;
	put16(b + COFF_VLAN, m->vlan);
	put16(b + COFF_DPORT_LO, m->dport_lo);
	put16(b + COFF_DPORT_HI, m->dport_hi);
	put16(b + COFF_SPORT_LO, m->sport_lo);
	put16(b + COFF_SPORT_HI, m->sport_hi);
	/* Addresses and masks as in memory: network byte order, the same on every host. */
	memcpy(b + COFF_SRC, &m->src_lo, 8);
	memcpy(b + COFF_SRC + 8, &m->src_hi, 8);
	memcpy(b + COFF_SRC_MASK, &m->src_mask_lo, 8);
	memcpy(b + COFF_SRC_MASK + 8, &m->src_mask_hi, 8);
	memcpy(b + COFF_DST, &m->dst_lo, 8);
	memcpy(b + COFF_DST + 8, &m->dst_hi, 8);
	memcpy(b + COFF_DST_MASK, &m->dst_mask_lo, 8);
	memcpy(b + COFF_DST_MASK + 8, &m->dst_mask_hi, 8);
}

static void get_class(const uint8_t *b, struct pacer_class *c)
{
	struct pacer_match *m = &c->m;

	memset(c, 0, sizeof(*c));
	memcpy(c->name, b + COFF_NAME, sizeof(c->name) - 1);
	c->action = get32(b + COFF_ACTION);
	c->key_mode = get32(b + COFF_KEY_MODE);
	c->prefix4 = get32(b + COFF_PREFIX4);
	c->prefix6 = get32(b + COFF_PREFIX6);
	c->policy = get32(b + COFF_POLICY);
	c->thresh_ticks = get32(b + COFF_THRESH);
	c->burst_ticks = get32(b + COFF_BURST);
	c->rate_n = get32(b + COFF_RATE_N);
	c->interval_ns = get64(b + COFF_INTERVAL);
	c->id = get32(b + COFF_ID);
	c->stat_slot = get32(b + COFF_STAT_SLOT);
	m->terms = get32(b + COFF_TERMS);
	m->proto = b[COFF_PROTO];
	m->family = b[COFF_FAMILY];
	m->vlan = get16(b + COFF_VLAN);
	m->dport_lo = get16(b + COFF_DPORT_LO);
	m->dport_hi = get16(b + COFF_DPORT_HI);
	m->sport_lo = get16(b + COFF_SPORT_LO);
	m->sport_hi = get16(b + COFF_SPORT_HI);
	memcpy(&m->src_lo, b + COFF_SRC, 8);
	memcpy(&m->src_hi, b + COFF_SRC + 8, 8);
	memcpy(&m->src_mask_lo, b + COFF_SRC_MASK, 8);
	memcpy(&m->src_mask_hi, b + COFF_SRC_MASK + 8, 8);
	memcpy(&m->dst_lo, b + COFF_DST, 8);
	memcpy(&m->dst_hi, b + COFF_DST + 8, 8);
	memcpy(&m->dst_mask_lo, b + COFF_DST_MASK, 8);
	memcpy(&m->dst_mask_hi, b + COFF_DST_MASK + 8, 8);
}

int pacer_file_header_encode(const struct pacer_file_header *h, uint8_t *buf, size_t len)
{
	uint32_t i;

	uint32_t extra = h->version_minor >= PACER_FILE_VERSION_MINOR_LINES ? 4 : 0;

	if (h->n_classes > PACER_MAX_CLASSES ||
	    (h->n_classes && (h->header_len != PACER_FILE_HEADER_CLASSES_LEN(h->n_classes) + extra ||
			      h->record_size != PACER_FILE_RECORD_V3_LEN)) ||
	    (!h->n_classes && ((h->header_len != PACER_FILE_HEADER_V1_LEN &&
				h->header_len != PACER_FILE_HEADER_V1_1_LEN + extra) ||
			       h->record_size != PACER_FILE_RECORD_V1_LEN)) ||
	    (!extra && h->lines) || len < h->header_len)
		return -EINVAL;
	memset(buf, 0, h->header_len);
	memcpy(buf + OFF_MAGIC, PACER_FILE_MAGIC, PACER_FILE_MAGIC_LEN);
	put16(buf + OFF_MAJOR, h->n_classes ? PACER_FILE_VERSION_CLASSES
			       : h->rate_n > 1 ? PACER_FILE_VERSION_RATE : h->version_major);
	if (h->rate_n > 1 || h->n_classes) {
		put16(buf + OFF_RATE_N, (uint16_t)(h->rate_n ? h->rate_n : 1));
		put16(buf + OFF_BURST, (uint16_t)h->burst_ticks);
	}
	if (h->n_classes) {
		put32(buf + OFF_N_CLASSES, h->n_classes);
		put32(buf + OFF_CLASS_ENTRY_LEN, PACER_FILE_CLASS_ENTRY_LEN);
		put64(buf + OFF_CLASSES_CHANGED, h->classes_changed_ns);
		for (i = 0; i < h->n_classes; i++)
			put_class(buf + PACER_FILE_CLASSES_OFF + i * PACER_FILE_CLASS_ENTRY_LEN,
				  &h->classes[i]);
	}
	put16(buf + OFF_MINOR, h->version_minor);
	put32(buf + OFF_HLEN, h->header_len);
	put32(buf + OFF_RSIZE, h->record_size);
	put32(buf + OFF_FLAGS, h->flags);
	put64(buf + OFF_INTERVAL, h->interval_ns);
	put32(buf + OFF_THRESH, h->thresh_ticks);
	put32(buf + OFF_TICK, h->tick_shift);
	put32(buf + OFF_ROWS, h->rows);
	put32(buf + OFF_LINES, h->lines_log2);
	put32(buf + OFF_KIND, h->kind);
	put32(buf + OFF_LINE_BYTES, h->line_bytes);
	put32(buf + OFF_LINE_CELLS, h->line_cells);
	put32(buf + OFF_CELL_BITS, h->cell_bits);
	put32(buf + OFF_EPOCH, h->epoch_shift);
	put32(buf + OFF_POLICY, h->policy);
	put32(buf + OFF_PLACEMENT, h->placement);
	put32(buf + OFF_CLOCK, h->clock);
	put32(buf + OFF_PREFIX4, h->prefix4);
	put32(buf + OFF_PREFIX6, h->prefix6);
	put32(buf + OFF_NCPUS, h->ncpus);
	put32(buf + OFF_ABI, h->abi_version);
	put64(buf + OFF_SRC_THRESH, h->sample_src_thresh);
	put64(buf + OFF_PKT_THRESH, h->sample_pkt_thresh);
	put64(buf + OFF_START_MONO, h->start_mono_ns);
	put64(buf + OFF_START_REAL, h->start_real_ns);
	put64(buf + OFF_END_MONO, h->end_mono_ns);
	put64(buf + OFF_COUNT, h->record_count);
	put64(buf + OFF_LOST, h->records_lost);
	/* strnlen: the in-memory strings may fill their arrays without a NUL. */
	memcpy(buf + OFF_IFNAME, h->ifname, strnlen(h->ifname, sizeof(h->ifname) - 1));
	memcpy(buf + OFF_HOSTNAME, h->hostname, strnlen(h->hostname, sizeof(h->hostname) - 1));
	put32(buf + OFF_MALFORMED, h->malformed);
	put32(buf + OFF_MAX_THRESH, h->max_thresh);
	put32(buf + OFF_BACKEND, h->backend);
	put32(buf + OFF_ON_FULL, h->on_full);
	if (h->header_len >= PACER_FILE_HEADER_V1_1_LEN)
		memcpy(buf + OFF_WRITER, h->writer, strnlen(h->writer, sizeof(h->writer) - 1));
	if (extra)
		put32(buf + lines_offset(h->n_classes, PACER_FILE_CLASS_ENTRY_LEN), h->lines);
	put32(buf + h->header_len - 4, pacer_crc32(0, buf, h->header_len - 4));
	return 0;
}

/* Printable rendering of a file's first bytes for the "foreign file" message. */
static void describe_start(const uint8_t *buf, size_t len, char *out, size_t outlen)
{
	size_t i, n = len < 8 ? len : 8, o = 0;

	for (i = 0; i < n && o + 4 < outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%s%02x", i ? " " : "", buf[i]);
	out[o] = 0;
}

/* The largest threshold a file's format allows (a rate's reaches the table's ticks). */
static uint32_t pacer_file_max_thresh(const struct pacer_file_header *h)
{
	return h->rate_n > 1 || h->version_major == PACER_FILE_VERSION_CLASSES
		       ? PACER_RATE_TBL_MAX_SAT : PACER_MAX_THRESH;
}

/* A header field out of range: the checksum held, so the writer wrote it. */
#define INVALID(off, ...) fail(err, PACER_FILE_HEADER_INVALID, -EBADMSG, (off), __VA_ARGS__)

/*
 * Whether a rate's threshold and burst are ticks a datapath runs it with:
 * pacer_rate_ticks()'s (bursts of exactly N), or the encoding that takes
 * the tick of margin from the burst instead of the spacing (emission
 * ceil(T/N/tick), tolerance floor((N-1)T/N/tick): N - 1 at once), which
 * recordings of earlier versions carry.  Both are one-sided, and the audit
 * judges either against the exact GCRA.
 */
static int rate_ticks_known(uint32_t rate_n, uint64_t interval_ns, uint32_t tick_shift,
			    uint32_t thresh_ticks, uint32_t burst_ticks)
{
	uint64_t q = 1ULL << tick_shift, emit, burst;
	struct pacer_rate r;

	if (!pacer_rate_ticks(rate_n, interval_ns, tick_shift, PACER_RATE_TBL_MAX_SAT, &r) &&
	    r.thresh == thresh_ticks && r.burst == burst_ticks)
		return 1;
	emit = (interval_ns + rate_n * q - 1) / (rate_n * q);
	burst = (rate_n - 1) * interval_ns / rate_n / q;
	return emit + 1 == thresh_ticks && burst == burst_ticks &&
	       emit + (burst ? burst : 1) <= PACER_RATE_TBL_MAX_SAT;
}

/*
 * Fields that are each in range can still describe a limiter `load` never
 * makes: a sketch outside the --width range, or a threshold that is not the
 * one the interval and tick give.
 */
static int check_plausible(const struct pacer_file_header *h, struct pacer_file_error *err)
{
	uint64_t per_row = (uint64_t)PACER_LINE_BYTES << h->lines_log2;
	uint32_t want;

	if (h->kind == PACER_LAYOUT_BLOCKED) {
		if (h->rows & (h->rows - 1))
			return INVALID(OFF_ROWS, "blocked layout with %u rows; it needs a power of two",
				       h->rows);
		per_row /= h->rows;
	}
	if (per_row < PACER_MIN_WIDTH || per_row > PACER_MAX_WIDTH)
		return INVALID(OFF_LINES,
			       "lines_log2 %u gives %" PRIu64 " cells per row; load makes %u to %u",
			       h->lines_log2, per_row, PACER_MIN_WIDTH, PACER_MAX_WIDTH);
	/* With classes the tick serves every class's limit: the global one may take the table's ticks. */
	if (h->version_major == PACER_FILE_VERSION_CLASSES &&
	    h->thresh_ticks - 1 + (h->burst_ticks ? h->burst_ticks : 1) > pacer_rate_max_sat(h->backend))
		return INVALID(OFF_THRESH, "threshold %u ticks (burst %u) is more than the %s's cells hold (%u)",
			       h->thresh_ticks, h->burst_ticks, backend_name(h->backend),
			       pacer_rate_max_sat(h->backend));
	if (h->rate_n > 1 || h->version_major == PACER_FILE_VERSION_CLASSES) {
		if (!rate_ticks_known(h->rate_n, h->interval_ns, h->tick_shift, h->thresh_ticks,
				      h->burst_ticks))
			return INVALID(OFF_RATE_N,
				       "threshold %u and burst %u ticks do not match the rate %u per %" PRIu64 " ns with %" PRIu64 " ns ticks",
				       h->thresh_ticks, h->burst_ticks, h->rate_n, h->interval_ns,
				       (uint64_t)pacer_tick_ns(h->tick_shift));
		return 0;
	}
	want = pacer_thresh_ticks(h->interval_ns, h->tick_shift);
	if (want != h->thresh_ticks)
		return INVALID(OFF_THRESH,
			       "threshold %u ticks does not match the interval (%" PRIu64 " ns with %" PRIu64 " ns ticks gives %u)",
			       h->thresh_ticks, h->interval_ns, (uint64_t)pacer_tick_ns(h->tick_shift), want);
	return 0;
}

/* Magic, version, header length and checksum: whether the bytes are a header at all. */
static int check_framing(const uint8_t *buf, size_t len, struct pacer_file_header *h,
			 struct pacer_file_error *err)
{
	uint32_t stored, computed;
	char start[40];

	memset(h, 0, sizeof(*h));
	if (len == 0)
		return fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, 0,
			    "the file is empty: no header");
	if (memcmp(buf, PACER_FILE_MAGIC, len < PACER_FILE_MAGIC_LEN ? len : PACER_FILE_MAGIC_LEN)) {
		describe_start(buf, len, start, sizeof(start));
		return fail(err, PACER_FILE_FOREIGN, -EBADMSG, 0,
			    "the file starts with bytes %s, not the xdp-pacer recording magic 89 58 50 52 0d 0a 1a 0a",
			    start);
	}
	if (len < OFF_RSIZE)
		return fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, len,
			    "the file ends after %zu bytes, inside the %d-byte header", len,
			    PACER_FILE_HEADER_V1_LEN);
	h->version_major = get16(buf + OFF_MAJOR);
	h->version_minor = get16(buf + OFF_MINOR);
	h->header_len = get32(buf + OFF_HLEN);
	if (h->version_major != PACER_FILE_VERSION_MAJOR && h->version_major != PACER_FILE_VERSION_RATE &&
	    h->version_major != PACER_FILE_VERSION_CLASSES)
		return fail(err, PACER_FILE_VERSION, -EPROTONOSUPPORT, OFF_MAJOR,
			    "the file is format version %u.%u; this reader understands versions %d.x, %d.x and %d.x",
			    h->version_major, h->version_minor, PACER_FILE_VERSION_MAJOR,
			    PACER_FILE_VERSION_RATE, PACER_FILE_VERSION_CLASSES);
	/* Format 3 began with the writer field and holds at least one class. */
	if (h->version_major == PACER_FILE_VERSION_CLASSES &&
	    (h->version_minor < 1 || h->header_len < PACER_FILE_HEADER_CLASSES_LEN(1) ||
	     h->header_len > PACER_FILE_HEADER_MAX_LEN || h->header_len % 4))
		return fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
			    "header length %u is impossible for version %u.%u (3.1 headers are %d bytes and %d more per class)",
			    h->header_len, h->version_major, h->version_minor,
			    PACER_FILE_CLASSES_OFF + 4, PACER_FILE_CLASS_ENTRY_LEN);
	/* The checksum sits at header_len - 4: a header_len we cannot trust means corruption. */
	if (h->version_major != PACER_FILE_VERSION_CLASSES &&
	    (h->header_len < (h->version_minor >= PACER_FILE_VERSION_MINOR_LINES ? PACER_FILE_HEADER_V1_2_LEN
			      : h->version_minor ? PACER_FILE_HEADER_V1_1_LEN : PACER_FILE_HEADER_V1_LEN) ||
	    h->header_len > PACER_FILE_HEADER_MAX_LEN || h->header_len % 4 ||
	    (h->version_minor == 0 && h->header_len != PACER_FILE_HEADER_V1_LEN) ||
	    (h->version_minor == 1 && h->header_len != PACER_FILE_HEADER_V1_1_LEN) ||
	    ((h->version_minor == 2 || h->version_minor == 3) && h->header_len != PACER_FILE_HEADER_V1_2_LEN)))
		return fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
			    "header length %u is impossible for version %u.%u (x.0 headers are %d bytes, x.1 ones %d, x.2 and x.3 ones %d, later ones up to %d)",
			    h->header_len, h->version_major, h->version_minor, PACER_FILE_HEADER_V1_LEN,
			    PACER_FILE_HEADER_V1_1_LEN, PACER_FILE_HEADER_V1_2_LEN, PACER_FILE_HEADER_MAX_LEN);
	if (h->version_major == PACER_FILE_VERSION_CLASSES && len >= PACER_FILE_CLASSES_OFF) {
		uint32_t n = get32(buf + OFF_N_CLASSES), elen = get32(buf + OFF_CLASS_ENTRY_LEN);
		uint64_t need = PACER_FILE_CLASSES_OFF + (uint64_t)n * elen + 4 +
				(h->version_minor >= PACER_FILE_VERSION_MINOR_LINES ? 4 : 0);

		/* Counts out of range are named after the checksum (get_classes). */
		if (n >= 1 && n <= PACER_MAX_CLASSES && elen >= PACER_FILE_CLASS_ENTRY_LEN &&
		    elen <= PACER_FILE_CLASS_ENTRY_MAX_LEN &&
		    (h->header_len < need ||
		     (h->version_minor <= PACER_FILE_VERSION_MINOR_OBSERVED && h->header_len != need)))
			return fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
				    "header length %u does not match its %u classes of %u bytes (%" PRIu64 ")",
				    h->header_len, n, elen, need);
	}
	if (len < h->header_len)
		return fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, len,
			    "the file ends after %zu bytes, inside the %u-byte header", len,
			    h->header_len);
	stored = get32(buf + h->header_len - 4);
	computed = pacer_crc32(0, buf, h->header_len - 4);
	if (stored != computed)
		return fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, h->header_len - 4,
			    "header checksum is %08x but bytes 0..%u sum to %08x", stored,
			    h->header_len - 5, computed);
	return 0;
}

/*
 * The release that wrote a x.1 (or later) header; informational, so bytes
 * that are not printable read as '?' instead of refusing the file.
 */
static void get_writer(const uint8_t *buf, struct pacer_file_header *h)
{
	size_t i;

	memset(h->writer, 0, sizeof(h->writer));
	if (h->version_minor < 1 || h->header_len < PACER_FILE_HEADER_V1_1_LEN)
		return;
	for (i = 0; i < sizeof(h->writer) - 1 && buf[OFF_WRITER + i]; i++)
		h->writer[i] = buf[OFF_WRITER + i] >= 0x20 && buf[OFF_WRITER + i] < 0x7f
				       ? (char)buf[OFF_WRITER + i] : '?';
}

/* Every field, little-endian at its offset. */
static void get_fields(const uint8_t *buf, struct pacer_file_header *h)
{
	h->record_size = get32(buf + OFF_RSIZE);
	h->flags = get32(buf + OFF_FLAGS);
	h->interval_ns = get64(buf + OFF_INTERVAL);
	h->thresh_ticks = get32(buf + OFF_THRESH);
	h->tick_shift = get32(buf + OFF_TICK);
	h->rows = get32(buf + OFF_ROWS);
	h->lines_log2 = get32(buf + OFF_LINES);
	h->kind = get32(buf + OFF_KIND);
	h->line_bytes = get32(buf + OFF_LINE_BYTES);
	h->line_cells = get32(buf + OFF_LINE_CELLS);
	h->cell_bits = get32(buf + OFF_CELL_BITS);
	h->epoch_shift = get32(buf + OFF_EPOCH);
	h->policy = get32(buf + OFF_POLICY);
	h->placement = get32(buf + OFF_PLACEMENT);
	h->clock = get32(buf + OFF_CLOCK);
	h->prefix4 = get32(buf + OFF_PREFIX4);
	h->prefix6 = get32(buf + OFF_PREFIX6);
	h->ncpus = get32(buf + OFF_NCPUS);
	h->abi_version = get32(buf + OFF_ABI);
	h->sample_src_thresh = get64(buf + OFF_SRC_THRESH);
	h->sample_pkt_thresh = get64(buf + OFF_PKT_THRESH);
	h->start_mono_ns = get64(buf + OFF_START_MONO);
	h->start_real_ns = get64(buf + OFF_START_REAL);
	h->end_mono_ns = get64(buf + OFF_END_MONO);
	h->record_count = get64(buf + OFF_COUNT);
	h->records_lost = get64(buf + OFF_LOST);
	memcpy(h->ifname, buf + OFF_IFNAME, sizeof(h->ifname) - 1);
	memcpy(h->hostname, buf + OFF_HOSTNAME, sizeof(h->hostname) - 1);
	h->malformed = get32(buf + OFF_MALFORMED);
	h->max_thresh = get32(buf + OFF_MAX_THRESH);
	h->backend = get32(buf + OFF_BACKEND);
	h->on_full = get32(buf + OFF_ON_FULL);
	get_writer(buf, h);
}

/*
 * Minor 2's line count: the dense table's, whose lines_log2 is its
 * ceiling's log2; any other backend's is 0 (its geometry is lines_log2).
 */
static int check_lines(const struct pacer_file_header *h, const struct backend_desc *d,
		       struct pacer_file_error *err)
{
	uint64_t off = lines_offset(h->n_classes, h->class_entry_len);
	uint32_t lg = 0;

	if (h->backend != PACER_BACKEND_DENSE) {
		if (h->lines)
			return INVALID(off, "line count %u in a recording of the %s (only the dense table has one)",
				       h->lines, d->name);
		return 0;
	}
	if (h->version_minor < PACER_FILE_VERSION_MINOR_LINES)
		return INVALID(OFF_MINOR, "a recording of the dense table in format %u.%u, without its line count (format %u.%d has it)",
			       h->version_major, h->version_minor, h->version_major,
			       PACER_FILE_VERSION_MINOR_LINES);
	while (lg < 32 && (1ULL << lg) < h->lines)
		lg++;
	if (h->lines < 2 || lg != h->lines_log2)
		return INVALID(off, "line count %u with lines_log2 %u; the dense table has 2 or more lines and lines_log2 the log2 of their count rounded up",
			       h->lines, h->lines_log2);
	return 0;
}

/* Fields outside what any writer produces: refused with the offending field's offset. */
static int check_ranges(struct pacer_file_header *h, struct pacer_file_error *err)
{
	const struct backend_desc *d;
	char why[160];
	int ret;

	uint32_t min_rsize = h->version_major == PACER_FILE_VERSION_CLASSES ? PACER_FILE_RECORD_V3_LEN
									    : PACER_FILE_RECORD_V1_LEN;

	if (h->record_size < min_rsize || h->record_size > PACER_FILE_RECORD_MAX_LEN)
		return INVALID(OFF_RSIZE, "record size %u is outside %u..%d", h->record_size,
			       min_rsize, PACER_FILE_RECORD_MAX_LEN);
	if (h->line_bytes != PACER_LINE_BYTES || h->line_cells != PACER_LINE_CELLS ||
	    h->cell_bits != 8 || h->epoch_shift != PACER_EPOCH_SHIFT)
		return INVALID(OFF_LINE_BYTES,
			       "cell layout %u-byte lines of %u %u-bit cells, epoch 2^%u ticks; this reader knows 64-byte lines of 62 8-bit cells, epoch 2^6",
			       h->line_bytes, h->line_cells, h->cell_bits, h->epoch_shift);
	if (h->rows < 1 || h->rows > PACER_MAX_ROWS)
		return INVALID(OFF_ROWS, "rows %u is outside 1..%d", h->rows, PACER_MAX_ROWS);
	if (h->kind != PACER_LAYOUT_ROWS && h->kind != PACER_LAYOUT_BLOCKED)
		return INVALID(OFF_KIND, "layout kind %u is neither rows (0) nor blocked (1)", h->kind);
	if (h->lines_log2 > 30)
		return INVALID(OFF_LINES, "lines_log2 %u is larger than 30", h->lines_log2);
	if (h->tick_shift > PACER_TICK_SHIFT_MAX)
		return INVALID(OFF_TICK, "tick_shift %u is larger than %d", h->tick_shift,
			       PACER_TICK_SHIFT_MAX);
	if (h->thresh_ticks < PACER_MIN_THRESH || h->thresh_ticks > pacer_file_max_thresh(h))
		return INVALID(OFF_THRESH, "threshold %u ticks is outside %d..%u", h->thresh_ticks,
			       PACER_MIN_THRESH, pacer_file_max_thresh(h));
	if (h->interval_ns == 0 ||
	    h->interval_ns > (h->rate_n > 1 ? PACER_RATE_MAX_PERIOD_NS : PACER_INTERVAL_MAX_NS))
		return INVALID(OFF_INTERVAL, "interval %" PRIu64 " ns is outside 1..%llu ns",
			       h->interval_ns,
			       h->rate_n > 1 ? PACER_RATE_MAX_PERIOD_NS : PACER_INTERVAL_MAX_NS);
	if (h->policy >= PACER_POLICY_MAX)
		return INVALID(OFF_POLICY, "policy %u is neither pace (0) nor quiet (1)", h->policy);
	if (h->placement > PACER_PLACEMENT_SHARED)
		return INVALID(OFF_PLACEMENT, "placement %u is neither percpu (0) nor shared (1)",
			       h->placement);
	if (h->clock > PACER_CLOCK_CACHED)
		return INVALID(OFF_CLOCK, "clock %u is not coarse, precise or cached", h->clock);
	if (h->prefix4 > 32 || h->prefix6 > 128)
		return INVALID(OFF_PREFIX4, "prefix lengths /%u and /%u exceed /32 and /128",
			       h->prefix4, h->prefix6);
	if (h->ncpus < 1 || h->ncpus > 65536)
		return INVALID(OFF_NCPUS, "CPU count %u is outside 1..65536", h->ncpus);
	if (h->sample_src_thresh > (1ULL << 32) || h->sample_pkt_thresh > (1ULL << 32))
		return INVALID(OFF_SRC_THRESH, "sampling thresholds exceed 2^32");
	d = backend_of(h->backend);
	if (!d)
		return INVALID(OFF_BACKEND, "backend %u is not sketch (0), table (1) or dense (2)", h->backend);
	if (h->on_full >= PACER_TBL_FULL_MAX || (!d->takes_on_full && h->on_full != PACER_TBL_FULL_DROP))
		return INVALID(OFF_ON_FULL, "on_full %u: drop (0) or, for the tables, evict-oldest (1)",
			       h->on_full);
	ret = check_lines(h, d, err);
	if (ret)
		return ret;
	if (d->check(h->rows, h->kind, h->lines_log2, h->lines, why, sizeof(why)))
		return INVALID(OFF_LINES, "%s", why);
	return 0;
}

/* Format 3's class table: its count and entry length, then the entries. */
static int get_classes(const uint8_t *buf, struct pacer_file_header *h, struct pacer_file_error *err)
{
	uint32_t n = get32(buf + OFF_N_CLASSES), elen = get32(buf + OFF_CLASS_ENTRY_LEN), i;

	if (n < 1 || n > PACER_MAX_CLASSES)
		return INVALID(OFF_N_CLASSES, "%u classes; a program holds 1..%d", n, PACER_MAX_CLASSES);
	if (elen < PACER_FILE_CLASS_ENTRY_LEN || elen > PACER_FILE_CLASS_ENTRY_MAX_LEN || elen % 4)
		return INVALID(OFF_CLASS_ENTRY_LEN, "class entries of %u bytes; they are %d (later versions up to %d)",
			       elen, PACER_FILE_CLASS_ENTRY_LEN, PACER_FILE_CLASS_ENTRY_MAX_LEN);
	if ((uint64_t)PACER_FILE_CLASSES_OFF + (uint64_t)n * elen + 4 > h->header_len)
		return INVALID(OFF_N_CLASSES, "%u classes of %u bytes do not fit the %u-byte header", n,
			       elen, h->header_len);
	h->n_classes = n;
	h->classes_changed_ns = get64(buf + OFF_CLASSES_CHANGED);
	for (i = 0; i < n; i++)
		get_class(buf + PACER_FILE_CLASSES_OFF + i * elen, &h->classes[i]);
	h->class_entry_len = elen;
	return 0;
}

/* A name as `[class NAME]` allows: 1..15 of [a-zA-Z0-9_-]. */
static int class_name_ok(const char *name)
{
	size_t i, n = strnlen(name, PACER_CLASS_NAME_LEN);

	if (n < 1 || n >= PACER_CLASS_NAME_LEN)
		return 0;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* Does any address bit lie outside its mask (a match `load` never writes)? */
static int beyond_mask(uint64_t lo, uint64_t hi, uint64_t mlo, uint64_t mhi)
{
	return (lo & ~mlo) || (hi & ~mhi);
}

/* One class of the table: i its position, off its entry's offset in the header. */
static int check_class(const struct pacer_file_header *h, uint32_t i, struct pacer_file_error *err)
{
	const struct pacer_class *c = &h->classes[i];
	const struct pacer_match *m = &c->m;
	uint64_t off = PACER_FILE_CLASSES_OFF + (uint64_t)i * h->class_entry_len;
	uint32_t j;

	if (!class_name_ok(c->name))
		return INVALID(off + COFF_NAME, "class %u: the name is not 1..15 of a-z, A-Z, 0-9, _ and -", i);
	for (j = 0; j < i; j++) {
		if (!strcmp(h->classes[j].name, c->name))
			return INVALID(off + COFF_NAME, "class %u: the name '%s' is also class %u's", i,
				       c->name, j);
		if (h->classes[j].stat_slot == c->stat_slot)
			return INVALID(off + COFF_STAT_SLOT, "class '%s': stat slot %u is also class '%s''s",
				       c->name, c->stat_slot, h->classes[j].name);
	}
	if (c->stat_slot >= PACER_MAX_CLASSES)
		return INVALID(off + COFF_STAT_SLOT, "class '%s': stat slot %u is outside 0..%d", c->name,
			       c->stat_slot, PACER_MAX_CLASSES - 1);
	if (c->action >= PACER_ACTION_MAX)
		return INVALID(off + COFF_ACTION, "class '%s': action %u is not pace (0), pass (1) or drop (2)",
			       c->name, c->action);
	if (c->key_mode >= PACER_KEY_MAX)
		return INVALID(off + COFF_KEY_MODE, "class '%s': key mode %u is not src (0), src+dport (1) or src+dst (2)",
			       c->name, c->key_mode);
	if (c->prefix4 > 32 || c->prefix6 > 128)
		return INVALID(off + COFF_PREFIX4, "class '%s': prefix lengths /%u and /%u exceed /32 and /128",
			       c->name, c->prefix4, c->prefix6);
	if (m->terms & ~PACER_M_ALL)
		return INVALID(off + COFF_TERMS, "class '%s': match terms 0x%x are not a set of 0x%x",
			       c->name, m->terms, PACER_M_ALL);
	if (m->dport_lo > m->dport_hi || m->sport_lo > m->sport_hi)
		return INVALID(off + COFF_DPORT_LO, "class '%s': a port range ends before it starts (dport %u-%u, sport %u-%u)",
			       c->name, m->dport_lo, m->dport_hi, m->sport_lo, m->sport_hi);
	if (m->family != 0 && m->family != 4 && m->family != 6)
		return INVALID(off + COFF_FAMILY, "class '%s': family %u is neither 4 nor 6", c->name, m->family);
	if (beyond_mask(m->src_lo, m->src_hi, m->src_mask_lo, m->src_mask_hi) ||
	    beyond_mask(m->dst_lo, m->dst_hi, m->dst_mask_lo, m->dst_mask_hi))
		return INVALID(off + COFF_SRC, "class '%s': a match address has bits beyond its mask", c->name);
	if (c->action != PACER_ACTION_PACE)
		return 0;
	if (c->policy >= PACER_POLICY_MAX)
		return INVALID(off + COFF_POLICY, "class '%s': policy %u is neither pace (0) nor quiet (1)",
			       c->name, c->policy);
	if (c->rate_n < 1 || c->rate_n > PACER_RATE_MAX_N)
		return INVALID(off + COFF_RATE_N, "class '%s': rate N = %u is outside 1..%d", c->name,
			       c->rate_n, PACER_RATE_MAX_N);
	if (c->interval_ns == 0 || c->interval_ns > PACER_RATE_MAX_PERIOD_NS)
		return INVALID(off + COFF_INTERVAL, "class '%s': interval %" PRIu64 " ns is outside 1..%llu ns",
			       c->name, (uint64_t)c->interval_ns, PACER_RATE_MAX_PERIOD_NS);
	/* What the datapath takes: every age the limit needs within the backend's cells. */
	if (c->thresh_ticks < PACER_MIN_THRESH || c->thresh_ticks > pacer_rate_max_sat(h->backend) ||
	    c->thresh_ticks - 1 + (c->burst_ticks ? c->burst_ticks : 1) > pacer_rate_max_sat(h->backend))
		return INVALID(off + COFF_THRESH, "class '%s': threshold %u ticks (burst %u) is outside %d..%u for the %s",
			       c->name, c->thresh_ticks, c->burst_ticks, PACER_MIN_THRESH,
			       pacer_rate_max_sat(h->backend), backend_name(h->backend));
	/* One per interval: ceil(interval / tick) + 1, as for the global limit, up to the backend's ages. */
	if (!rate_ticks_known(c->rate_n, c->interval_ns, h->tick_shift, c->thresh_ticks, c->burst_ticks))
		return INVALID(off + COFF_THRESH,
			       "class '%s': threshold %u and burst %u ticks do not match %u per %" PRIu64 " ns with %" PRIu64 " ns ticks",
			       c->name, c->thresh_ticks, c->burst_ticks, c->rate_n, (uint64_t)c->interval_ns,
			       (uint64_t)pacer_tick_ns(h->tick_shift));
	return 0;
}

static int check_classes(const struct pacer_file_header *h, struct pacer_file_error *err)
{
	uint32_t i;
	int ret;

	for (i = 0; i < h->n_classes; i++) {
		ret = check_class(h, i, err);
		if (ret)
			return ret;
	}
	return 0;
}

int pacer_file_header_decode(const uint8_t *buf, size_t len, struct pacer_file_header *h,
			     struct pacer_file_error *err)
{
	int ret = check_framing(buf, len, h, err);

	if (ret)
		return ret;
	get_fields(buf, h);
	h->rate_n = 1;
	if (h->version_major == PACER_FILE_VERSION_RATE) {
		h->rate_n = get16(buf + OFF_RATE_N);
		h->burst_ticks = get16(buf + OFF_BURST);
		if (h->rate_n < 2 || h->rate_n > PACER_RATE_MAX_N)
			return INVALID(OFF_RATE_N, "format 2 with rate N = %u, outside 2..%d", h->rate_n,
				       PACER_RATE_MAX_N);
	}
	if (h->version_major == PACER_FILE_VERSION_CLASSES) {
		h->rate_n = get16(buf + OFF_RATE_N);
		h->burst_ticks = get16(buf + OFF_BURST);
		if (h->rate_n < 1 || h->rate_n > PACER_RATE_MAX_N)
			return INVALID(OFF_RATE_N, "format 3 with rate N = %u, outside 1..%d", h->rate_n,
				       PACER_RATE_MAX_N);
		if (h->rate_n == 1 && h->burst_ticks)
			return INVALID(OFF_BURST, "burst %u ticks with one packet per interval", h->burst_ticks);
		ret = get_classes(buf, h, err);
		if (ret)
			return ret;
	}
	if (h->version_minor >= PACER_FILE_VERSION_MINOR_LINES)
		h->lines = get32(buf + lines_offset(h->n_classes, h->class_entry_len));
	ret = check_ranges(h, err);
	if (!ret)
		ret = check_plausible(h, err);
	return ret ? ret : check_classes(h, err);
}

void pacer_file_record_encode(const struct pacer_record *r, uint8_t *buf)
{
	put64(buf + ROFF_TS, r->ts_ns);
	memcpy(buf + ROFF_ADDR, r->addr, 16);
	buf[ROFF_FAMILY] = r->family;
	buf[ROFF_PREFIX] = r->prefix;
	buf[ROFF_VERDICT] = r->verdict;
	buf[ROFF_FLAGS] = r->flags;
	put32(buf + ROFF_AGE, r->est_age_ticks);
	put32(buf + ROFF_CPU, r->cpu);
	put32(buf + ROFF_THRESH, r->thresh_ticks);
}

void pacer_file_record_decode(const uint8_t *buf, struct pacer_record *r)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = get64(buf + ROFF_TS);
	memcpy(r->addr, buf + ROFF_ADDR, 16);
	r->family = buf[ROFF_FAMILY];
	r->prefix = buf[ROFF_PREFIX];
	r->verdict = buf[ROFF_VERDICT];
	r->flags = buf[ROFF_FLAGS];
	r->est_age_ticks = get32(buf + ROFF_AGE);
	r->cpu = get32(buf + ROFF_CPU);
	r->thresh_ticks = get32(buf + ROFF_THRESH);
}

void pacer_file_record_encode_v(const struct pacer_file_header *h, const struct pacer_record *r,
				uint8_t *buf)
{
	pacer_file_record_encode(r, buf);
	if (h->record_size < PACER_FILE_RECORD_V3_LEN)
		return;
	put32(buf + ROFF_CLASS, r->class_slot);
	put16(buf + ROFF_KEY_DPORT, r->key_dport);
	put16(buf + ROFF_KEY_PAD, 0);
	memcpy(buf + ROFF_KEY_DST, r->key_dst, 16);
}

void pacer_file_record_decode_v(const struct pacer_file_header *h, const uint8_t *buf,
				struct pacer_record *r)
{
	pacer_file_record_decode(buf, r);
	if (h->version_major != PACER_FILE_VERSION_CLASSES)
		return;
	r->class_slot = get32(buf + ROFF_CLASS);
	r->key_dport = get16(buf + ROFF_KEY_DPORT);
	r->pad = get16(buf + ROFF_KEY_PAD);
	memcpy(r->key_dst, buf + ROFF_KEY_DST, 16);
}

/* Any address bit beyond the prefix (or beyond 32 bits for IPv4) set? */
static int bits_beyond_prefix(const uint8_t *addr, unsigned bytes, unsigned prefix)
{
	unsigned i;

	for (i = 0; i < 16; i++) {
		unsigned lo = i * 8;
		uint8_t keep;

		if (i >= bytes || lo >= prefix)
			keep = 0;
		else if (lo + 8 <= prefix)
			keep = 0xff;
		else
			keep = (uint8_t)(0xff << (8 - (prefix - lo)));
		if (addr[i] & ~keep)
			return 1;
	}
	return 0;
}

static int zero16(const uint8_t *b)
{
	static const uint8_t z[16];

	return !memcmp(b, z, 16);
}

#define BAD_RECORD(...) fail(err, PACER_FILE_RECORD_INVALID, -EBADMSG, offset, __VA_ARGS__)

int pacer_file_record_check(const struct pacer_file_header *h, const struct pacer_record *r,
			    uint64_t offset, uint64_t index, struct pacer_file_error *err)
{
	unsigned max_prefix = r->family == 4 ? 32 : 128;
	const struct pacer_class *c;

	if (r->family != 4 && r->family != 6)
		return BAD_RECORD("record %" PRIu64 ": family %u is neither 4 nor 6", index, r->family);
	if (r->prefix > max_prefix)
		return BAD_RECORD("record %" PRIu64 ": prefix /%u is longer than an IPv%u address",
				  index, r->prefix, r->family);
	if (bits_beyond_prefix(r->addr, r->family == 4 ? 4 : 16, r->prefix))
		return BAD_RECORD("record %" PRIu64 ": address has bits set beyond its /%u prefix",
				  index, r->prefix);
	if (r->verdict > PACER_REC_DROP)
		return BAD_RECORD("record %" PRIu64 ": verdict %u is neither pass (0) nor drop (1)",
				  index, r->verdict);
	if (!(r->flags & (PACER_REC_SAMPLED_SOURCE | PACER_REC_SAMPLED_PACKET)) ||
	    (r->flags & ~(PACER_REC_SAMPLED_SOURCE | PACER_REC_SAMPLED_PACKET |
			  (h->n_classes ? PACER_REC_KEY : 0) |
			  (h->version_minor >= PACER_FILE_VERSION_MINOR_OBSERVED ? PACER_REC_OBSERVED : 0))))
		return BAD_RECORD("record %" PRIu64 ": flags 0x%x are not a set of 0x1 and 0x2%s%s", index,
				  r->flags, h->n_classes ? " (and 0x4)" : "",
				  h->version_minor >= PACER_FILE_VERSION_MINOR_OBSERVED ? " (and 0x8)" : "");
	if ((r->flags & PACER_REC_OBSERVED) && r->verdict != PACER_REC_DROP)
		return BAD_RECORD("record %" PRIu64 ": flag 0x8 (observed) on a pass verdict: only a drop is observed",
				  index);
	if (r->pad || (!(r->flags & PACER_REC_KEY) && (r->key_dport || !zero16(r->key_dst))))
		return BAD_RECORD("record %" PRIu64 ": key bytes set without the key flag 0x4, or padding not zero",
				  index);
	if (r->class_slot > (h->n_classes ? PACER_MAX_CLASSES : 0))
		return BAD_RECORD("record %" PRIu64 ": class slot %u is outside 0..%u", index,
				  r->class_slot, h->n_classes ? PACER_MAX_CLASSES : 0);
	if (r->est_age_ticks > (pacer_file_max_thresh(h) > PACER_MAX_THRESH ? 0xffffu : 0xffu) &&
	    r->est_age_ticks != PACER_AGE_NEVER)
		return BAD_RECORD("record %" PRIu64 ": estimated age %u ticks is more than a cell holds",
				  index, r->est_age_ticks);
	if (r->thresh_ticks < PACER_MIN_THRESH || r->thresh_ticks > pacer_file_max_thresh(h))
		return BAD_RECORD("record %" PRIu64 ": threshold %u ticks is outside %d..%u", index,
				  r->thresh_ticks, PACER_MIN_THRESH, pacer_file_max_thresh(h));
	if (r->class_slot && (c = pacer_file_class_of(h, r->class_slot)) &&
	    r->prefix != (r->family == 4 ? c->prefix4 : c->prefix6))
		return BAD_RECORD("record %" PRIu64 ": prefix /%u but its class '%s' keys IPv%u sources by /%u",
				  index, r->prefix, c->name, r->family,
				  r->family == 4 ? c->prefix4 : c->prefix6);
	if (r->cpu >= h->ncpus)
		return BAD_RECORD("record %" PRIu64 ": CPU %u but the header says %u CPUs", index,
				  r->cpu, h->ncpus);
	return 0;
}

uint64_t pacer_file_record_offset(const struct pacer_file_header *h, uint64_t i)
{
	return h->header_len + i * h->record_size;
}

static void warn(struct pacer_file_reader *r, const struct pacer_file_error *e)
{
	if (r->n_warnings < (int)(sizeof(r->warnings) / sizeof(r->warnings[0])))
		r->warnings[r->n_warnings++] = *e;
}

/*
 * Open non-blocking and check the type before reading: opening a FIFO
 * blocks until a writer comes, and reading a device or a FIFO never ends.
 * The fd (blocking again), or negative errno.
 */
static int open_regular(const char *path, struct stat *st, struct pacer_file_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), ret;

	if (fd < 0)
		return fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, st))
		ret = fail(err, PACER_FILE_IO, -errno, 0, "cannot stat %s: %s", path, strerror(errno));
	else if (!S_ISREG(st->st_mode))
		ret = fail(err, PACER_FILE_IO, -EINVAL, 0,
			   "%s is not a regular file (a recording is a file written by 'xdp-pacer record')",
			   path);
	else if (fcntl(fd, F_SETFL, 0))
		ret = fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
	else
		return fd;
	close(fd);
	return ret;
}

int pacer_file_open(const char *path, struct pacer_file_reader *r, struct pacer_file_error *err)
{
	struct pacer_file_error w;
	struct stat st;
	uint8_t *hbuf = NULL;
	size_t want, got;
	uint64_t data;
	int fd, ret;

	memset(r, 0, sizeof(*r));
	if (err)
		memset(err, 0, sizeof(*err));
	fd = open_regular(path, &st, err);
	if (fd < 0)
		return fd;
	r->f = fdopen(fd, "rb");
	if (!r->f) {
		ret = fail(err, PACER_FILE_IO, -errno, 0, "cannot open %s: %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	r->file_size = (uint64_t)st.st_size;
	want = r->file_size < PACER_FILE_HEADER_MAX_LEN ? (size_t)r->file_size : PACER_FILE_HEADER_MAX_LEN;
	hbuf = malloc(want ? want : 1);
	if (!hbuf) {
		ret = fail(err, PACER_FILE_IO, -ENOMEM, 0, "out of memory");
		goto out_close;
	}
	got = fread(hbuf, 1, want, r->f);
	if (got != want) {
		ret = fail(err, PACER_FILE_IO, -EIO, got, "read of the header failed");
		goto out_close;
	}
	ret = pacer_file_header_decode(hbuf, got, &r->hdr, err);
	free(hbuf);
	hbuf = NULL;
	if (ret)
		goto out_close;

	data = r->file_size - r->hdr.header_len;
	r->n_records = data / r->hdr.record_size;
	r->tail_bytes = data % r->hdr.record_size;
	if (!(r->hdr.flags & PACER_FILE_F_COMPLETE)) {
		fail(&w, PACER_FILE_INCOMPLETE, 0, OFF_FLAGS,
		     "the recorder did not finish this file (killed, or still writing): it has no end time, record count or loss count");
		warn(r, &w);
	} else if (r->hdr.record_count != r->n_records) {
		fail(&w, PACER_FILE_COUNT_MISMATCH, 0, r->file_size,
		     "the header says %" PRIu64 " records but the file holds %" PRIu64,
		     r->hdr.record_count, r->n_records);
		warn(r, &w);
	}
	if (r->tail_bytes) {
		fail(&w, PACER_FILE_RECORD_TRUNCATED, 0, pacer_file_record_offset(&r->hdr, r->n_records),
		     "record %" PRIu64 " is cut short (%" PRIu64 " of %u bytes); the %" PRIu64 " whole records before it are used",
		     r->n_records, r->tail_bytes, r->hdr.record_size, r->n_records);
		warn(r, &w);
	}
	r->recbuf = malloc(r->hdr.record_size);
	if (!r->recbuf) {
		ret = fail(err, PACER_FILE_IO, -ENOMEM, 0, "out of memory");
		goto out_close;
	}
	if (fseeko(r->f, (off_t)r->hdr.header_len, SEEK_SET)) {
		ret = fail(err, PACER_FILE_IO, -errno, r->hdr.header_len, "seek failed: %s",
			   strerror(errno));
		goto out_close;
	}
	return 0;
out_close:
	free(hbuf);
	pacer_file_close(r);
	return ret;
}

int pacer_file_next(struct pacer_file_reader *r, struct pacer_record *rec,
		    struct pacer_file_error *err)
{
	uint64_t off;

	if (r->next >= r->n_records)
		return 0;
	off = pacer_file_record_offset(&r->hdr, r->next);
	if (fread(r->recbuf, 1, r->hdr.record_size, r->f) != r->hdr.record_size)
		return fail(err, PACER_FILE_IO, -EIO, off,
			    "record %" PRIu64 " could not be read (file shrank while reading?)", r->next);
	pacer_file_record_decode_v(&r->hdr, r->recbuf, rec);
	if (pacer_file_record_check(&r->hdr, rec, off, r->next, err))
		return -EBADMSG;
	r->next++;
	return 1;
}

void pacer_file_close(struct pacer_file_reader *r)
{
	if (r->f)
		fclose(r->f);
	r->f = NULL;
	free(r->recbuf);
	r->recbuf = NULL;
}

/* ---- writing ---- */

int pacer_file_writer_open(struct pacer_file_writer *w, const char *path,
			   enum pacer_file_format format, const struct pacer_file_header *hdr,
			   struct pacer_file_error *err)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	char why[200];
	int ret;

	memset(w, 0, sizeof(*w));
	w->format = format;
	w->hdr = *hdr;
	w->hdr.flags &= ~PACER_FILE_F_COMPLETE;
	w->hdr.record_count = 0;
	w->hdr.end_mono_ns = 0;
	if (pacer_file_header_encode(&w->hdr, buf, sizeof(buf)))
		return fail(err, PACER_FILE_HEADER_INVALID, -EINVAL, 0,
			    "header lengths are not those of format version 1.0, 1.1 or 3.1");
	ret = safe_out_open(&w->out, path, ".tmp", SAFE_FILE_MODE, why, sizeof(why));
	if (ret)
		return fail(err, PACER_FILE_IO, ret, 0, "%s", why);
	w->f = w->out.f;
	w->tmp_path = w->out.tmp_path;
	setvbuf(w->f, NULL, _IOFBF, 1 << 16);
	errno = 0;
	if (format == PACER_FORMAT_CSV)
		ret = pacer_csv_write_header(w->f, &w->hdr);
	else
		ret = fwrite(buf, w->hdr.header_len, 1, w->f) == 1 ? 0 : write_errno();
	if (!ret)
		ret = fflush(w->f) ? -errno : 0;
	if (ret) {
		fail(err, PACER_FILE_IO, ret, 0, "cannot write the header to %s: %s", w->tmp_path,
		     strerror(-ret));
		pacer_file_writer_discard(w);
		return ret;
	}
	return 0;
}

int pacer_file_writer_append(struct pacer_file_writer *w, const struct pacer_record *rec)
{
	uint8_t buf[PACER_FILE_RECORD_V3_LEN];
	int ret;

	if (w->format == PACER_FORMAT_CSV) {
		ret = pacer_csv_write_record(w->f, &w->hdr, w->n_records, rec);
		if (ret)
			return ret;
	} else {
		pacer_file_record_encode_v(&w->hdr, rec, buf);
		errno = 0;
		if (fwrite(buf, w->hdr.record_size, 1, w->f) != 1)
			return write_errno();
	}
	w->n_records++;
	return 0;
}

int pacer_file_writer_flush(struct pacer_file_writer *w)
{
	return fflush(w->f) ? -errno : 0;
}

int pacer_file_writer_finish(struct pacer_file_writer *w, uint64_t end_mono_ns,
			     uint64_t records_lost, struct pacer_file_error *err)
{
	uint8_t buf[PACER_FILE_HEADER_BUF_LEN];
	char why[200];
	int ret = 0;

	w->hdr.flags |= PACER_FILE_F_COMPLETE;
	w->hdr.end_mono_ns = end_mono_ns;
	w->hdr.record_count = w->n_records;
	w->hdr.records_lost = records_lost;
	errno = 0;
	if (w->format == PACER_FORMAT_CSV) {
		if (fprintf(w->f, "# complete: records %" PRIu64 ", records_lost %" PRIu64 ", end_mono_ns %" PRIu64 "\n",
			    w->n_records, records_lost, end_mono_ns) < 0)
			ret = write_errno();
	}
	if (!ret && fflush(w->f))
		ret = -errno;
	if (!ret && w->format == PACER_FORMAT_BINARY) {
		/* Rewrite the header in place: the data before it is already on its way. */
		pacer_file_header_encode(&w->hdr, buf, sizeof(buf));
		errno = 0;
		if (pwrite(fileno(w->f), buf, w->hdr.header_len, 0) != (ssize_t)w->hdr.header_len)
			ret = write_errno();
	}
	if (ret) {
		fail(err, PACER_FILE_IO, ret, 0, "cannot finish %s: %s (the records so far stay in %s)",
		     w->out.path, strerror(-ret), w->tmp_path);
		pacer_file_writer_abandon(w);
		return ret;
	}
	ret = safe_out_commit(&w->out, why, sizeof(why));
	if (ret)
		fail(err, PACER_FILE_IO, ret, 0, "%s", why);
	w->f = NULL;
	w->tmp_path = NULL;
	return ret;
}

void pacer_file_writer_abandon(struct pacer_file_writer *w)
{
	safe_out_abandon(&w->out);
	w->f = NULL;
	w->tmp_path = NULL;
}

void pacer_file_writer_discard(struct pacer_file_writer *w)
{
	safe_out_discard(&w->out);
	w->f = NULL;
	w->tmp_path = NULL;
}

/* ---- CSV ---- */

const char *pacer_record_source(const struct pacer_record *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, r->prefix);
	return buf;
}

const char *pacer_file_action_name(uint32_t action)
{
	static const char *const names[] = { "pace", "pass", "drop" };

	return action < PACER_ACTION_MAX ? names[action] : "?";
}

const char *pacer_file_key_name(uint32_t key_mode)
{
	static const char *const names[] = { "src", "src+dport", "src+dst" };

	return key_mode < PACER_KEY_MAX ? names[key_mode] : "?";
}

const char *pacer_record_class_name(const struct pacer_file_header *h, uint32_t class_slot)
{
	const struct pacer_class *c = pacer_file_class_of(h, class_slot);

	return c ? c->name : class_slot ? "?" : "";
}

int pacer_csv_write_header(FILE *f, const struct pacer_file_header *h)
{
	uint32_t i;
	int n;

	errno = 0;
	n = fprintf(f,
		    "# xdp-pacer recording, format %u.%u\n"
		    "# writer: %s\n"
		    "# interface: %s\n# host: %s\n"
		    "# interval_ns: %" PRIu64 "\n# thresh_ticks: %u\n# tick_ns: %" PRIu64 "\n"
		    "# backend: %s, on full: %s\n"
		    "# sketch: rows %u, lines_log2 %u, layout %s, %u-byte lines of %u %u-bit cells, epoch 2^%u ticks\n"
		    "# policy: %s\n# placement: %s\n# clock: %s\n# prefix4: %u\n# prefix6: %u\n# ncpus: %u\n"
		    "# sample_src_thresh: %" PRIu64 " (of 2^32)\n# sample_pkt_thresh: %" PRIu64 " (of 2^32)\n"
		    "# start_mono_ns: %" PRIu64 "\n# start_real_ns: %" PRIu64 "\n",
		    h->version_major, h->version_minor, h->writer[0] ? h->writer : "unknown",
		    h->ifname, h->hostname, h->interval_ns,
		    h->thresh_ticks, (uint64_t)pacer_tick_ns(h->tick_shift), backend_name(h->backend),
		    on_full_name(h->on_full), h->rows, h->lines_log2,
		    layout_name(h->kind), h->line_bytes, h->line_cells, h->cell_bits,
		    h->epoch_shift, policy_name(h->policy),
		    placement_name(h->placement), clock_name(h->clock),
		    h->prefix4, h->prefix6, h->ncpus, h->sample_src_thresh, h->sample_pkt_thresh,
		    h->start_mono_ns, h->start_real_ns);
	if (n >= 0 && h->lines)
		n = fprintf(f, "# dense: %u lines\n", h->lines);
	if (n >= 0 && h->rate_n > 1)
		n = fprintf(f, "# rate_n: %u (interval_ns is T of --rate N/T)\n# burst_ticks: %u\n",
			    h->rate_n, h->burst_ticks);
	for (i = 0; n >= 0 && i < h->n_classes; i++) {
		const struct pacer_class *c = &h->classes[i];

		n = fprintf(f, "# class %u: %s, slot %u, action %s, key %s, prefix4 %u, prefix6 %u, policy %s, rate %u per %" PRIu64 " ns, thresh_ticks %u, burst_ticks %u\n",
			    i, c->name, c->stat_slot + 1, pacer_file_action_name(c->action),
			    pacer_file_key_name(c->key_mode), c->prefix4, c->prefix6, policy_name(c->policy),
			    c->rate_n, (uint64_t)c->interval_ns, c->thresh_ticks, c->burst_ticks);
	}
	if (n >= 0)
		n = fprintf(f, "index,ts_ns,t_rel_s,source,family,prefix,verdict,sampled_by,est_age_ticks,est_age_ns,cpu,thresh_ticks%s\n",
			    h->n_classes ? ",class,key" : "");
	return n < 0 ? write_errno() : 0;
}

/* A record's key beyond its source: "dport 53", "dst 192.0.2.1", or "" (none, or not recorded). */
static const char *record_key_text(const struct pacer_file_header *h, const struct pacer_record *r,
				   char *buf, size_t len)
{
	const struct pacer_class *c = pacer_file_class_of(h, r->class_slot);
	char a[INET6_ADDRSTRLEN];

	buf[0] = 0;
	if (!c || !(r->flags & PACER_REC_KEY))
		return buf;
	if (c->key_mode == PACER_KEY_SRC_DPORT)
		snprintf(buf, len, "dport %u", r->key_dport);
	else if (c->key_mode == PACER_KEY_SRC_DST &&
		 inet_ntop(r->family == 4 ? AF_INET : AF_INET6, r->key_dst, a, sizeof(a)))
		snprintf(buf, len, "dst %s", a);
	return buf;
}

int pacer_csv_write_record(FILE *f, const struct pacer_file_header *h, uint64_t index,
			   const struct pacer_record *r)
{
	static const char *const by[] = { "", "source", "packet", "source+packet" };
	char src[64], age[24], age_ns[24], key[64];
	double rel = ((double)r->ts_ns - (double)h->start_mono_ns) / 1e9;
	int n;

	if (r->est_age_ticks == PACER_AGE_NEVER) {
		snprintf(age, sizeof(age), "never");
		snprintf(age_ns, sizeof(age_ns), "never");
	} else {
		snprintf(age, sizeof(age), "%u", r->est_age_ticks);
		snprintf(age_ns, sizeof(age_ns), "%" PRIu64,
			 (uint64_t)pacer_ticks_ns(r->est_age_ticks, h->tick_shift));
	}
	errno = 0;
	n = fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.9f,%s,%u,%u,%s,%s,%s,%s,%u,%u%s%s%s%s\n", index, (uint64_t)r->ts_ns,
		    rel, pacer_record_source(r, src, sizeof(src)), r->family, r->prefix,
		    r->verdict != PACER_REC_DROP ? "pass" : r->flags & PACER_REC_OBSERVED ? "would_drop" : "drop",
		    by[r->flags & 3], age, age_ns,
		    r->cpu, r->thresh_ticks, h->n_classes ? "," : "",
		    h->n_classes ? pacer_record_class_name(h, r->class_slot) : "", h->n_classes ? "," : "",
		    h->n_classes ? record_key_text(h, r, key, sizeof(key)) : "");
	return n < 0 ? write_errno() : 0;
}
