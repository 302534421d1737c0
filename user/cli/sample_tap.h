/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The datapath's packet sampling as a live feed, for `top` and `events`
 * (`record` shares the lock): one consumer per program takes the lock,
 * switches packet sampling on at 1/M, drains the ring buffer of sampled
 * records (struct pacer_record) and puts sampling back as it was on exit.
 */
#ifndef PACER_SAMPLE_TAP_H
#define PACER_SAMPLE_TAP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "common.h"
#include "pacer_class.h"

/*
 * One consumer of a program's sampled records at a time (record, top,
 * events): two would split the ring buffer's records and each would
 * restore sampling under the other's feet.  Keyed by program id (unique
 * across network namespaces); the file names the holder.  The fd, or
 * negative errno after saying who holds it (-EBUSY) or why not.
 */
int sample_lock_take(const struct pacer_handle *h, const char *verb, char *path, size_t len);

typedef void (*sample_tap_fn)(void *ctx, const struct pacer_record *rec);

struct sample_tap {
	struct pacer_handle h;
	struct ring_buffer *rb;
	sample_tap_fn fn;
	void *ctx;
	uint64_t pkt_thresh;     /* 2^32 / M */
	uint64_t prev_src, prev_pkt;
	uint64_t lost_before, recorded_before;
	uint64_t short_events;   /* smaller than a record: a foreign datapath */
	int64_t real_minus_mono; /* realtime - the datapath clock, ns, at open */
	uint32_t class_sel;      /* the selector the names were read under */
	int nclasses;
	struct pacer_class classes[PACER_MAX_CLASSES];
	struct sigaction old_int, old_term, old_hup;
	bool handle_open, signals_set, sampling_on, counters_ok, gone;
	char lock_path[64];
	int lock_fd;
};

/* Set by SIGINT, SIGTERM, SIGHUP once sample_tap_open returned 0. */
extern volatile sig_atomic_t sample_tap_signal;

/*
 * Open ifname's pacer, take the lock, drain what others left in the ring,
 * switch packet sampling on at pkt_thresh (source sampling off) and catch
 * the signals.  0, or 1 after saying why (sample_tap_close undoes the rest).
 */
int sample_tap_open(struct sample_tap *t, const char *ifname, const char *verb,
		    uint64_t pkt_thresh, sample_tap_fn fn, void *ctx);
/* Deliver the records queued now to fn, waiting up to timeout_ms for one.  0, or negative errno. */
int sample_tap_poll(struct sample_tap *t, int timeout_ms);
/* Still attached where it was?  Says so and sets gone when not. */
bool sample_tap_attached(struct sample_tap *t);
/* Re-read the class names if `set` flipped the class list (cheap otherwise). */
void sample_tap_refresh_classes(struct sample_tap *t);
/* The name of a record's class_slot (stat_slot + 1), "" for none, "?" if unknown. */
const char *sample_tap_class_name(const struct sample_tap *t, uint32_t class_slot);
/* Records the datapath could not queue (ring buffer full) since open. */
uint64_t sample_tap_lost(struct sample_tap *t);
/* The sampling factor M (2^32 / threshold). */
double sample_tap_scale(const struct sample_tap *t);
/* A datapath timestamp as wall-clock ns. */
uint64_t sample_tap_realtime(const struct sample_tap *t, uint64_t ts_ns);
/* Sampling back as it was, the lock released, the handle closed (what is still queued is left). */
void sample_tap_close(struct sample_tap *t);

#endif
