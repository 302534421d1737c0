/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes and the exempt/deny lists as operators write them: the
 * config file's sections ([class NAME], [exempt], [deny]), the command
 * line's --class 'NAME: WORDS', --exempt PREFIX, --deny PREFIX, and the
 * checks that need no running program (match words, impossible matches,
 * names, counts, a prefix on both lists).  What needs the loaded geometry
 * (does a limit fit the tick) is ticks.c's limits_fit(); which id and stat
 * slot a class gets against the running list is class_assign_ids().
 * The layout the datapath reads is include/pacer_class.h.
 *
 * Every error names where the bad word came from: "FILE:LINE: ..." for
 * the file, "--class 'TEXT': ..." for the command line.
 */
#ifndef PACER_CLASS_CONF_H
#define PACER_CLASS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_class.h"
#include "class_match.h"

struct prefix_list {
	struct conf_prefix *p;
	size_t n, cap;
	size_t n6;  /* of n, IPv6 */
	bool given; /* set by the file or the command line (possibly to none) */
};

/* A class as written, before its limit is put in ticks. */
struct class_spec {
	struct pacer_class c;  /* match, action, key, name; limit as asked (rate_n, interval_ns) */
	bool limit_set, policy_set, action_set, key_set, prefix4_set, prefix6_set, match_set, mode_set;
	unsigned line;         /* its [class NAME] line; 0: the command line */
	unsigned limit_line;   /* the line of its rate or interval */
	char text[160];        /* --class's text, for messages */
};

struct class_conf {
	struct class_spec cls[PACER_MAX_CLASSES];
	int n;
	bool classes_given; /* a [class] section, or --class (possibly 'none') */
	struct prefix_list exempt, deny;
	const char *path; /* the file, for messages; NULL: command line only */
	/* The file's parser state: the section lines belong to. */
	int section;      /* CLASS_SEC_NONE, _CLASS, _EXEMPT, _DENY */
	unsigned section_line;
};

enum { CLASS_SEC_NONE, CLASS_SEC_CLASS, CLASS_SEC_EXEMPT, CLASS_SEC_DENY };

void class_conf_init(struct class_conf *cc, const char *path);
void class_conf_free(struct class_conf *cc);

/*
 * The file: a "[...]" line (text without the brackets' surroundings
 * trimmed), then its "key = value" lines.  0, or -EINVAL with err
 * ("FILE:LINE: ...").
 */
int class_conf_section(struct class_conf *cc, const char *header, unsigned line, char *err,
		       size_t errlen);
int class_conf_key(struct class_conf *cc, const char *key, const char *value, unsigned line,
		   char *err, size_t errlen);
/* The checks at the end of the file (every class has a match ...): 0 or -EINVAL with err. */
int class_conf_finish(struct class_conf *cc, char *err, size_t errlen);

/*
 * The command line: --class 'NAME: WORDS' (or 'none': no classes),
 * --exempt PREFIX[,PREFIX...], --deny likewise ('none': an empty list).
 * Given on the command line, each replaces the file's list of its kind.
 */
int class_conf_add_cli(struct class_conf *cc, const char *text, char *err, size_t errlen);
int class_conf_add_list_cli(struct class_conf *cc, int deny, const char *text, char *err,
			    size_t errlen);

/*
 * The command line's lists over the file's: each kind the command line
 * gave replaces the file's.  Then the checks across lists (a prefix on
 * both lists).  0 or -EINVAL with err.
 */
int class_conf_merge(struct class_conf *file, const struct class_conf *cli, char *err,
		     size_t errlen);

/* Where a class was written, for messages: "FILE:LINE: class 'dns'" or "--class 'dns: ...'". */
const char *class_where(const struct class_conf *cc, const struct class_spec *s, char *buf,
			size_t len);

/* Fill each class's prefix4/prefix6 left unset from the global ones. */
void class_conf_default_prefixes(struct class_conf *cc, uint32_t prefix4, uint32_t prefix6);

/* Whether two classes pace the same sources alike (same match, action, limit and key). */
bool class_same_behaviour(const struct pacer_class *a, const struct pacer_class *b);

/*
 * Whether the class lists a[0..na) and b[0..nb) are the same configuration:
 * in the same order, each with the same name, behaviour and mode (what
 * `set` reports as a change of the classes).
 */
bool class_lists_same(const struct pacer_class *a, int na, const struct pacer_class *b, int nb);

/*
 * Ids and stat slots for want[0..n) against the running list cur[0..ncur):
 * a class that behaves as a running one keeps its id (so its sources'
 * state); any other gets a fresh id, from fresh_id() (retried until it is
 * nonzero and unused).  A class keeps the stat slot of the running class
 * of its name; a new name takes the lowest slot no running class of a kept
 * name holds.  reset[slot] is set for slots that change hands (their
 * counters start at zero).
 */
void class_assign_ids(struct pacer_class *want, int n, const struct pacer_class *cur, int ncur,
		      uint32_t (*fresh_id)(void *), void *arg, bool reset[PACER_MAX_CLASSES]);

struct pacer_addr;
/*
 * The hash the datapath keys class c's state by for a packet from src
 * (IPv4-mapped already unmapped) to dport or dst (what c's key mode
 * takes; dst may be NULL for the other modes): pacer_classify.h's.  The
 * key as text ("192.0.2.7/32 dport 53") into buf.
 */
uint64_t class_key_hash_of(const __u64 key[2], const struct pacer_class *c,
			   const struct pacer_addr *src, uint16_t dport, const struct pacer_addr *dst,
			   char *buf, size_t len);

#endif
