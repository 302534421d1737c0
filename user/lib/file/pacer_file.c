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
#include "pacer_file_internal.h"
#include "backend.h"
#include "pacer_names.h"
#include "pacer_table.h"
#include "pacer_ticks.h"
#include "pacer_rate.h"
#include "version.h"

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

int pacer_file_fail(struct pacer_file_error *err, enum pacer_file_problem p, int code, uint64_t offset,
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

/* A header field out of range: the checksum held, so the writer wrote it. */
#define INVALID(off, ...) pacer_file_fail(err, PACER_FILE_HEADER_INVALID, -EBADMSG, (off), __VA_ARGS__)

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
		return pacer_file_fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, 0,
			    "the file is empty: no header");
	if (memcmp(buf, PACER_FILE_MAGIC, len < PACER_FILE_MAGIC_LEN ? len : PACER_FILE_MAGIC_LEN)) {
		describe_start(buf, len, start, sizeof(start));
		return pacer_file_fail(err, PACER_FILE_FOREIGN, -EBADMSG, 0,
			    "the file starts with bytes %s, not the xdp-pacer recording magic 89 58 50 52 0d 0a 1a 0a",
			    start);
	}
	if (len < OFF_RSIZE)
		return pacer_file_fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, len,
			    "the file ends after %zu bytes, inside the %d-byte header", len,
			    PACER_FILE_HEADER_V1_LEN);
	h->version_major = get16(buf + OFF_MAJOR);
	h->version_minor = get16(buf + OFF_MINOR);
	h->header_len = get32(buf + OFF_HLEN);
	if (h->version_major != PACER_FILE_VERSION_MAJOR && h->version_major != PACER_FILE_VERSION_RATE &&
	    h->version_major != PACER_FILE_VERSION_CLASSES)
		return pacer_file_fail(err, PACER_FILE_VERSION, -EPROTONOSUPPORT, OFF_MAJOR,
			    "the file is format version %u.%u; this reader understands versions %d.x, %d.x and %d.x",
			    h->version_major, h->version_minor, PACER_FILE_VERSION_MAJOR,
			    PACER_FILE_VERSION_RATE, PACER_FILE_VERSION_CLASSES);
	/* Format 3 began with the writer field and holds at least one class. */
	if (h->version_major == PACER_FILE_VERSION_CLASSES &&
	    (h->version_minor < 1 || h->header_len < PACER_FILE_HEADER_CLASSES_LEN(1) ||
	     h->header_len > PACER_FILE_HEADER_MAX_LEN || h->header_len % 4))
		return pacer_file_fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
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
		return pacer_file_fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
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
			return pacer_file_fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, OFF_HLEN,
				    "header length %u does not match its %u classes of %u bytes (%" PRIu64 ")",
				    h->header_len, n, elen, need);
	}
	if (len < h->header_len)
		return pacer_file_fail(err, PACER_FILE_HEADER_TRUNCATED, -ENODATA, len,
			    "the file ends after %zu bytes, inside the %u-byte header", len,
			    h->header_len);
	stored = get32(buf + h->header_len - 4);
	computed = pacer_crc32(0, buf, h->header_len - 4);
	if (stored != computed)
		return pacer_file_fail(err, PACER_FILE_HEADER_CORRUPT, -EBADMSG, h->header_len - 4,
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
