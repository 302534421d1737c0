/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the record file's three parts share (pacer_file.h): the header's
 * format (pacer_file.c), records, reading and writing (pacer_file_io.c),
 * and CSV (pacer_csv.c).  Not for other users of the library.
 */
#ifndef PACER_FILE_INTERNAL_H
#define PACER_FILE_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include "pacer_file.h"
#include "pacer_rate.h"
#include "pacer_ticks.h"

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

/* The largest threshold a file's format allows (a rate's reaches the table's ticks). */
static inline uint32_t pacer_file_max_thresh(const struct pacer_file_header *h)
{
	return h->rate_n > 1 || h->version_major == PACER_FILE_VERSION_CLASSES
		       ? PACER_RATE_TBL_MAX_SAT : PACER_MAX_THRESH;
}

/* Fill *err (if any) with the problem at offset and return code. */
__attribute__((format(printf, 5, 6)))
int pacer_file_fail(struct pacer_file_error *err, enum pacer_file_problem p, int code, uint64_t offset,
		    const char *fmt, ...);

/*
 * The error of a failed stdio write: errno says why (ENOSPC, EDQUOT...) when
 * the write reached the file; callers clear errno before writing.
 */
static inline int write_errno(void)
{
	return errno ? -errno : -EIO;
}

static inline void put16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *b, uint32_t v) { put16(b, (uint16_t)v); put16(b + 2, (uint16_t)(v >> 16)); }
static inline void put64(uint8_t *b, uint64_t v) { put32(b, (uint32_t)v); put32(b + 4, (uint32_t)(v >> 32)); }
static inline uint16_t get16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static inline uint32_t get32(const uint8_t *b) { return get16(b) | (uint32_t)get16(b + 2) << 16; }
static inline uint64_t get64(const uint8_t *b) { return get32(b) | (uint64_t)get32(b + 4) << 32; }

#endif
