// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exporter's connection slots (see conn_slots.h). */
#include <stddef.h>
#include "conn_slots.h"

void conn_slots_init(struct conn_slots *s, unsigned cap)
{
	int i;

	for (i = 0; i < CONN_STATES; i++)
		s->list[i].prev = s->list[i].next = &s->list[i];
	s->live = 0;
	s->cap = cap;
}

static void unlink_conn(struct conn *c)
{
	if (c->prev) {
		c->prev->next = c->next;
		c->next->prev = c->prev;
	}
	c->prev = c->next = c;
}

static void append(struct conn_slots *s, struct conn *c, enum conn_state state, double now)
{
	struct conn *head = &s->list[state];

	c->state = state;
	c->since = now;
	c->prev = head->prev;
	c->next = head;
	head->prev->next = c;
	head->prev = c;
}

void conn_slots_cut(struct conn_slots *s, struct conn *c)
{
	if (c->state == CONN_CUT)
		return;
	unlink_conn(c);
	c->state = CONN_CUT;
	s->live--;
}

struct conn *conn_slots_open(struct conn_slots *s, struct conn *c, double now)
{
	struct conn *victim = NULL;
	int i;

	for (i = 0; s->live >= s->cap && i < CONN_STATES; i++) {
		if (s->list[i].next != &s->list[i]) {
			victim = s->list[i].next;
			conn_slots_cut(s, victim);
		}
	}
	c->prev = c->next = c;
	append(s, c, CONN_FRESH, now);
	s->live++;
	return victim;
}

void conn_slots_enter(struct conn_slots *s, struct conn *c, enum conn_state state, double now)
{
	if (c->state == CONN_CUT)
		return;
	unlink_conn(c);
	append(s, c, state, now);
}

void conn_slots_close(struct conn_slots *s, struct conn *c)
{
	if (c->state != CONN_CUT)
		s->live--;
	unlink_conn(c);
	c->state = CONN_CUT;
}

struct conn *conn_slots_expired(struct conn_slots *s, double now, double deadline)
{
	static const enum conn_state waiting[] = { CONN_FRESH, CONN_IDLE };
	size_t i;

	/* Each list is in deadline order: its head is the first to expire. */
	for (i = 0; i < sizeof(waiting) / sizeof(waiting[0]); i++) {
		struct conn *head = &s->list[waiting[i]];

		if (head->next != head && now - head->next->since > deadline)
			return head->next;
	}
	return NULL;
}
