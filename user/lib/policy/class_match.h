/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A class's match and action as operators write them ("udp dport 53",
 * "pace 20/1s key src+dport"), and prefixes: parsed and formatted.  Below
 * the config file's sections and the command line's classes
 * (class_conf.h), which read their words through these.
 */
#ifndef PACER_CLASS_MATCH_H
#define PACER_CLASS_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_class.h"

/* A source prefix of the exempt/deny lists (or a match's src/dst). */
struct conf_prefix {
	uint8_t family; /* 4 or 6 */
	uint8_t len;    /* 0..32 or 0..128 */
	uint8_t addr[16]; /* network byte order; host bits zero */
	unsigned line;  /* of the config file; 0: the command line */
};

/* "192.0.2.0/24", "2001:db8::/32", or an address alone (/32, /128): 0, or -EINVAL with why. */
int parse_prefix(const char *s, struct conf_prefix *p, char *why, size_t len);
const char *format_prefix(const struct conf_prefix *p, char *buf, size_t len);
/* "ADDR/LEN" of a prefix given by its parts (addr: 4 or 16 bytes, network order); returns buf. */
const char *format_prefix_bytes(unsigned family, unsigned plen, const uint8_t *addr, char *buf,
				size_t len);

/* The words of a match ("udp dport 53") into m: 0, or -EINVAL with why naming the word. */
int class_match_parse(const char *text, struct pacer_match *m, char *why, size_t len);
/* A match in the words it was written with (canonical order). */
const char *class_match_format(const struct pacer_match *m, char *buf, size_t len);
/* "pace 20/1s key src+dport policy quiet" and the like, for status. */
const char *class_action_format(const struct pacer_class *c, char *buf, size_t len);

const char *class_action_name(uint32_t a);
const char *class_key_name(uint32_t k);
int parse_class_action(const char *s, uint32_t *out);
int parse_class_key(const char *s, uint32_t *out);

/* ---- for the sections' and the command line's parsers (class_conf.c) ---- */

/* The match words, for messages. */
extern const char class_match_words[];

/* The next whitespace-separated word of *s into w (NUL-terminated; a cut one ends in "..."), or NULL at the end. */
const char *class_next_word(const char **s, char *w, size_t len);

/*
 * Match state while parsing: which words came, for "given twice" and the
 * checks at the end.
 */
struct class_match_state {
	struct pacer_match *m;
	bool any;
	int src_family, dst_family;
};

/*
 * One match word (with its argument from *rest): 1 if it was one, 0 if w
 * is no match word, -EINVAL with why.
 */
int class_match_word(struct class_match_state *st, const char *w, const char **rest, char *why,
		     size_t len);
/* The checks at the end of a match (terms that need others, families): 0 or -EINVAL with why. */
int class_match_finish(struct class_match_state *st, char *why, size_t len);

#endif
