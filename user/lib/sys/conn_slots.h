/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exporter's connection slots: which connection a new one evicts when
 * every slot is taken, and which ones missed the request deadline.  Pure
 * bookkeeping (no sockets, no locks: the caller holds its own), so the
 * policy is unit-tested (tests/unit_exporter.c).
 *
 * Every connection holding a slot is on one of three lists, each in the
 * order its connections entered it, so a list's head is its oldest: fresh
 * ones have not yet sent a whole request header, idle ones completed a
 * request and wait (kept alive) for the next, serving ones are being
 * answered.  A connection that is cut leaves its slot at once, before its
 * socket is closed.
 */
#ifndef CONN_SLOTS_H
#define CONN_SLOTS_H

enum conn_state {
	CONN_FRESH,   /* no whole request yet */
	CONN_IDLE,    /* completed a request, waits for the next */
	CONN_SERVING, /* its request is being answered */
	CONN_STATES,
	CONN_CUT = CONN_STATES, /* evicted or past the deadline: no slot, closing */
};

struct conn {
	struct conn *prev, *next;
	int fd;
	enum conn_state state;
	double since; /* entered its list then (seconds, a monotonic clock) */
};

struct conn_slots {
	struct conn list[CONN_STATES]; /* circular lists' heads, by state */
	unsigned live;                 /* connections holding a slot */
	unsigned cap;
};

void conn_slots_init(struct conn_slots *s, unsigned cap);

/*
 * c opens at now and takes a slot as fresh.  With every slot taken, the
 * connection returned (else NULL) gave up its slot for it and must be
 * closed: the oldest fresh one, else the one idle longest, else the oldest
 * being served (every slot answering clients that do not read).
 */
struct conn *conn_slots_open(struct conn_slots *s, struct conn *c, double now);

/* c (not cut) moves to the tail of state's list, since now. */
void conn_slots_enter(struct conn_slots *s, struct conn *c, enum conn_state state, double now);

/* c gives up its slot (it is being closed by force); it stays CONN_CUT until closed. */
void conn_slots_cut(struct conn_slots *s, struct conn *c);

/* c's socket is closed: its slot, if it still held one, is free. */
void conn_slots_close(struct conn_slots *s, struct conn *c);

/* The oldest fresh or idle connection waiting longer than deadline at now, or NULL. */
struct conn *conn_slots_expired(struct conn_slots *s, double now, double deadline);

#endif
