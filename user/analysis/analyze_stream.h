/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A recording held in memory for `xdp-pacer analyze`: records in datapath
 * time order, each naming its source by a dense id so that the audit, the
 * recency structures and the sizing simulation can keep per-source state in
 * plain arrays.
 */
#ifndef PACER_ANALYZE_STREAM_H
#define PACER_ANALYZE_STREAM_H

#include <stdint.h>
#include "pacer_file.h"

/* A u64 -> u64 open-addressing map; keys may be anything but UINT64_MAX. */
struct an_map {
	uint64_t *keys, *vals;
	uint64_t cap, n;
};

int an_map_init(struct an_map *m, uint64_t expect);
void an_map_free(struct an_map *m);
/* Pointer to the value of key, inserting it with value `init` if absent; NULL on ENOMEM. */
uint64_t *an_map_get(struct an_map *m, uint64_t key, uint64_t init, int *inserted);
/* Pointer to the value of key, or NULL if absent. */
uint64_t *an_map_find(const struct an_map *m, uint64_t key);

/*
 * A source is a key of the limiter as far as the recording tells it: the
 * masked address and, in format 3, the class (records of different
 * classes are different keys, never compared with each other).
 */
struct an_source {
	uint8_t addr[16];
	uint8_t family, prefix;
	uint8_t class_slot;    /* the record's class_slot: 0 without classes */
	uint64_t key_extra;    /* the rest of a class's key where known (a capture's dport or dst digest); 0 */
	uint32_t first_cpu;
	uint32_t ncpus_seen;   /* distinct CPUs its packets arrived on (capped at 2: "more than one") */
	uint64_t packets;
};

struct an_record {
	uint64_t ts_ns;
	uint32_t src;          /* index into an_stream.src */
	uint32_t est_age_ticks;
	uint32_t seq;          /* position in the file: ties in ts_ns keep file order */
	uint16_t cpu;
	uint16_t thresh;       /* a rate's reaches the table's 16384 ticks */
	uint8_t verdict, flags;
	uint8_t class_slot;    /* the source's, copied here for the per-record loops */
};

struct an_stream {
	struct pacer_file_header hdr;
	struct an_record *rec;
	uint64_t n, cap;
	struct an_source *src;
	uint32_t nsrc, src_cap;
	struct an_map src_index;   /* key hash -> candidate source ids (chained through probe) */
	uint64_t n_source_sampled; /* records flagged PACER_REC_SAMPLED_SOURCE */
	uint64_t n_packet_only;    /* records chosen by packet sampling alone */
	uint64_t out_of_order;     /* records whose ts is before their predecessor's in the file */
	uint64_t max_backstep_ns;
	uint64_t first_ts, last_ts;
	uint16_t max_cpu;
	int exact_keys;            /* sources are a class's whole keys (a capture), not masked sources only */
	/* Records of a src+dport or src+dst class without their key (PACER_REC_KEY), by class_slot. */
	uint64_t class_unkeyed[PACER_MAX_CLASSES + 1];
	uint64_t class_keyed[PACER_MAX_CLASSES + 1];   /* ... with it */
};

/* Progress: phase name, work done of total (either may be 0 when unknown). */
typedef void (*an_progress_fn)(void *ctx, const char *phase, uint64_t done, uint64_t total);

int an_stream_init(struct an_stream *s, const struct pacer_file_header *hdr);
void an_stream_free(struct an_stream *s);
/* Append one record (file order).  0, -ENOMEM, or -EFBIG past 2^32 - 1 records. */
int an_stream_add(struct an_stream *s, const struct pacer_record *r);
/*
 * The same, for a key with more than its source: key_extra tells such keys
 * apart.  an_stream_add takes it from a record that carries its class's key
 * (the port plus one; an IPv4 destination exactly, an IPv6 one by a 64-bit
 * digest).
 */
int an_stream_add_key(struct an_stream *s, const struct pacer_record *r, uint64_t key_extra);
/* Put records in timestamp order (stable).  Call once after the last add. */
int an_stream_finish(struct an_stream *s);

/*
 * Read a whole recording.  0, or a negative errno with *err filled (bad
 * records are fatal: their offset is named).  File-level warnings stay in
 * the reader for the caller to print.
 */
int an_stream_load(struct pacer_file_reader *rd, struct an_stream *s, struct pacer_file_error *err,
		   an_progress_fn progress, void *ctx);

/* Tick of a timestamp under the recording's tick. */
static inline uint64_t an_tick(const struct an_stream *s, uint64_t ts)
{
	return ts >> s->hdr.tick_shift;
}

/* Sampling rates as fractions (0 when off). */
double an_source_rate(const struct pacer_file_header *h);
double an_packet_rate(const struct pacer_file_header *h);

#endif
