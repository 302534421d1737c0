/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Drop events (`events`): which sources are being limited now, from the
 * sampled drops, and a cap on the lines said about it.
 *
 * A source (a key of sample_key.h: address at its prefix, and class)
 * *starts* being limited at its min_drops-th sampled drop (1: its first)
 * while it is not limited, no two of them hold_ns apart; it *stops* once
 * hold_ns passed without a sampled drop of it (the stop's time is its last
 * sampled drop + hold).  A source that goes quiet before min_drops starts
 * nothing and stops nothing.  At most cap sources
 * are tracked at once; a drop of a new source beyond them is counted
 * (untracked) and starts nothing.  Drops are taken in arrival order; a
 * drop stamped earlier than the source's last (another CPU's record,
 * queued later) does not move it back.
 *
 * The line cap: at most per_sec lines in any window of one second; what
 * it refuses is counted, by kind, for a summary.
 */
#ifndef PACER_DROP_EVENTS_H
#define PACER_DROP_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include "heavy_hitters.h"

enum de_kind { DE_START, DE_STOP };

struct de_event {
	enum de_kind kind;
	struct hh_key key;
	uint64_t first_ns, last_ns; /* the source's first and last sampled drop */
	uint64_t at_ns;             /* start: its first drop; stop: last drop + hold */
	uint64_t sampled;           /* stop: sampled drops while limited */
};

struct de_source {
	struct hh_key key;
	uint64_t first_ns, last_ns, sampled;
	int started;          /* its start was said: min_drops reached */
	int32_t hnext;        /* hash chain; free list */
	int32_t prev, next;   /* sorted by last drop, oldest first */
};

struct de_tracker {
	struct de_source *s;
	int32_t *head;
	int32_t free, oldest, newest;
	uint32_t cap, used, nbuckets;
	uint64_t hold_ns;
	uint32_t min_drops;
	uint64_t untracked;   /* drops of new sources refused while cap were tracked */
};

/* 0, -EINVAL (cap 0 or above 2^24, hold 0, min_drops 0), -ENOMEM. */
int de_init(struct de_tracker *t, uint32_t cap, uint64_t hold_ns, uint32_t min_drops);
void de_free(struct de_tracker *t);
/* A sampled drop of key at ts_ns: true with *ev its start when it makes the source limited. */
bool de_drop(struct de_tracker *t, const struct hh_key *key, uint64_t ts_ns, struct de_event *ev);
/*
 * The oldest started source whose hold ran out by now_ns: true with *ev its
 * stop (removed); else false.  Sources that never started are removed on
 * the way, silently.
 */
bool de_expire(struct de_tracker *t, uint64_t now_ns, struct de_event *ev);
/* Any started source (on exit): true with *ev its stop at last drop + hold; else false. */
bool de_flush(struct de_tracker *t, struct de_event *ev);

struct de_rate {
	uint64_t *stamp;      /* the last per_sec lines' times, a ring */
	uint32_t per_sec, n, pos;
	uint64_t refused[2];  /* by enum de_kind, since the last summary */
};

/* 0, -EINVAL (0), -ENOMEM. */
int de_rate_init(struct de_rate *r, uint32_t per_sec);
void de_rate_free(struct de_rate *r);
/* May a line of kind go out at now_ns?  If not, it is counted in refused[kind]. */
bool de_rate_take(struct de_rate *r, uint64_t now_ns, enum de_kind kind);

#endif
