/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The configuration file read by `load --config` and `set --config` (and so
 * by the systemd unit): `key = value` lines whose keys are the CLI's option
 * names without the dashes.  '#' starts a comment; blank lines are ignored.
 * This layer checks the syntax, that every key is known and that none is
 * given twice; the values are checked by the CLI's own option parser, which
 * names the file and line through pacer_conf_line_of().
 *
 * After the global keys, sections: "[class NAME]", "[exempt]", "[deny]",
 * each followed by its own "key = value" lines, go to class_conf.h's
 * parser (c->cls): traffic classes and the exempt/deny lists.
 */
#ifndef PACER_CONF_H
#define PACER_CONF_H

#include <stddef.h>
#include <stdio.h>
#include "conf_text.h" /* pacer_conf_shown() */

#define PACER_CONF_MAX_LINE 512
#define PACER_CONF_MAX_ENTRIES 64

struct pacer_conf_key {
	const char *name;
	int live;             /* settable with `set` */
};

/* Every key a file may hold (the options of `load`), NULL-terminated by name. */
extern const struct pacer_conf_key pacer_conf_keys[];
const struct pacer_conf_key *pacer_conf_key(const char *name);
/* Live keys: the value a reload applies when the file omits it (the option's default). */
const char *pacer_conf_default(const struct pacer_conf_key *k);

struct pacer_conf_entry {
	char *key, *value;
	unsigned line;
};

struct class_conf;

struct pacer_conf {
	char *path;
	struct class_conf *cls; /* the sections (class_conf.h); NULL until parsed */
	struct pacer_conf_entry e[PACER_CONF_MAX_ENTRIES];
	int n;
};

/*
 * Parse f (named path in messages).  0, or -EINVAL with err holding
 * "path:line: what is wrong", -ENOMEM or -EIO.  Free with pacer_conf_free()
 * in every case.
 */
int pacer_conf_parse(FILE *f, const char *path, struct pacer_conf *c, char *err, size_t errlen);
/* Open and parse path; -errno from fopen with err saying so. */
int pacer_conf_read(const char *path, struct pacer_conf *c, char *err, size_t errlen);
void pacer_conf_free(struct pacer_conf *c);


/* The entry for key, or NULL. */
const struct pacer_conf_entry *pacer_conf_get(const struct pacer_conf *c, const char *key);
/* The line whose value string is exactly `value` (pointer identity), or 0. */
unsigned pacer_conf_line_of(const struct pacer_conf *c, const char *value);

#endif
