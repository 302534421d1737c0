// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "pacer_conf.h"
#include "live_opts.h"
#include "budget_cfg.h"
#include "safe_file.h"
#include "class_conf.h"

/* Live keys take their defaults from the option tables (live_opts.h, budget_cfg.h). */
const struct pacer_conf_key pacer_conf_keys[] = {
	{ "interval", 1 },
	{ "rate", 1 },
	{ "policy", 1 },
	{ "prefix4", 1 },
	{ "prefix6", 1 },
	{ "malformed", 1 },
	{ "mode", 1 },
	{ "deny-mode", 1 },
	{ "budget", 1 },
	{ "slack-time", 1 },
	{ "slack-count", 1 },
	{ "reserve", 1 },
	{ "horizon", 1 },
	{ "backend", 0 },
	{ "on-full", 0 },
	{ "reserve-cells", 0 },
	{ "rows", 0 },
	{ "width", 0 },
	{ "layout", 0 },
	{ "placement", 0 },
	{ "tick", 0 },
	{ "clock", 0 },
	{ "xdp-mode", 0 },
	{ "priority", 0 },
	{ NULL, 0 },
};

const char *pacer_conf_default(const struct pacer_conf_key *k)
{
	const struct opt_spec *s = opts_find(pacing_specs, k->name, NULL);

	if (!s)
		s = opts_find(malformed_specs, k->name, NULL);
	if (!s)
		s = opts_find(budget_specs, k->name, NULL);
	if (!s)
		s = opts_find(mode_specs, k->name, NULL);
	return k->live && s ? s->dflt : NULL;
}

const struct pacer_conf_key *pacer_conf_key(const char *name)
{
	const struct pacer_conf_key *k;

	for (k = pacer_conf_keys; k->name; k++)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = 0;
	return s;
}

static void known_keys(char *buf, size_t len)
{
	const struct pacer_conf_key *k;
	size_t used = 0;

	buf[0] = 0;
	for (k = pacer_conf_keys; k->name && used < len; k++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", k->name);
}

/* Check one key: known, and not given before.  0 or -EINVAL with err. */
static int check_key(const struct pacer_conf *c, const char *key, unsigned line, char *err,
		     size_t errlen)
{
	const struct pacer_conf_entry *prev = pacer_conf_get(c, key);
	char known[256], alt[64], show[128];
	size_t i;

	if (prev) {
		snprintf(err, errlen, "%s:%u: '%s' is already set on line %u", c->path, line, key,
			 prev->line);
		return -EINVAL;
	}
	if (pacer_conf_key(key))
		return 0;
	snprintf(alt, sizeof(alt), "%s", key);
	for (i = 0; alt[i]; i++)
		alt[i] = alt[i] == '_' ? '-' : (char)tolower((unsigned char)alt[i]);
	known_keys(known, sizeof(known));
	if (strcmp(alt, key) && pacer_conf_key(alt))
		snprintf(err, errlen, "%s:%u: unknown key '%s' (did you mean '%s'?)", c->path, line,
			 pacer_conf_shown(key, show, sizeof(show)), alt);
	else
		snprintf(err, errlen, "%s:%u: unknown key '%s' (known keys: %s)", c->path, line,
			 pacer_conf_shown(key, show, sizeof(show)), known);
	return -EINVAL;
}

/* One line (comment already cut).  0 or -EINVAL/-ENOMEM with err. */
static int parse_line(struct pacer_conf *c, char *text, unsigned line, char *err, size_t errlen)
{
	char *eq = strchr(text, '='), *key, *value, show[61];
	size_t tlen = strlen(text);
	int ret;

	if (text[0] == '[') {
		if (text[tlen - 1] != ']') {
			snprintf(err, errlen, "%s:%u: a section header ends with ']': '%s'", c->path,
				 line, pacer_conf_shown(text, show, sizeof(show)));
			return -EINVAL;
		}
		text[tlen - 1] = 0;
		return class_conf_section(c->cls, trim(text + 1), line, err, errlen);
	}
	if (!eq) {
		snprintf(err, errlen, "%s:%u: expected 'key = value', got '%s'", c->path, line,
			 pacer_conf_shown(text, show, sizeof(show)));
		return -EINVAL;
	}
	*eq = 0;
	key = trim(text);
	value = trim(eq + 1);
	/* 'mode = native|skb': the attach mode's key before 'mode' took the verdict mode. */
	if (c->cls->section == CLASS_SEC_NONE && !strcmp(key, "mode") &&
	    (!strcmp(value, "native") || !strcmp(value, "skb")))
		key = "xdp-mode";
	if (c->cls->section != CLASS_SEC_NONE) {
		if (!*value) {
			snprintf(err, errlen, "%s:%u: '%s' has no value", c->path, line,
				 pacer_conf_shown(key, show, sizeof(show)));
			return -EINVAL;
		}
		return class_conf_key(c->cls, key, value, line, err, errlen);
	}
	if (!*key) {
		snprintf(err, errlen, "%s:%u: no key before '='", c->path, line);
		return -EINVAL;
	}
	ret = check_key(c, key, line, err, errlen);
	if (ret)
		return ret;
	if (!*value) {
		snprintf(err, errlen, "%s:%u: '%s' has no value", c->path, line, key);
		return -EINVAL;
	}
	if (c->n >= PACER_CONF_MAX_ENTRIES) {
		snprintf(err, errlen, "%s:%u: more than %d settings", c->path, line, PACER_CONF_MAX_ENTRIES);
		return -EINVAL;
	}
	c->e[c->n].key = strdup(key);
	c->e[c->n].value = strdup(value);
	c->e[c->n].line = line;
	c->n++;
	if (!c->e[c->n - 1].key || !c->e[c->n - 1].value) {
		snprintf(err, errlen, "%s: out of memory", c->path);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Read one line into buf (without its newline).  1 with *len set, 0 at the
 * end of the file, or -EINVAL with err naming the line: a line over the
 * limit, or a byte no text file holds (NUL and the other control bytes,
 * which would cut the line short or reach the terminal in messages; a tab,
 * and a carriage return ending the line, are text).
 */
static int read_line(FILE *f, const char *path, unsigned line, char *buf, size_t *len, char *err,
		     size_t errlen)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		/* A CRLF line's CR is its end, not one of its characters. */
		if (n > PACER_CONF_MAX_LINE || (n == PACER_CONF_MAX_LINE && c != '\r')) {
			snprintf(err, errlen, "%s:%u: line longer than %d characters", path, line,
				 PACER_CONF_MAX_LINE);
			return -EINVAL;
		}
		buf[n++] = (char)c;
	}
	if (c == EOF && !n)
		return 0;
	if (n && buf[n - 1] == '\r')
		n--;
	buf[n] = 0;
	*len = n;
	return 1;
}

/* The first control byte of a line (tab excepted), or -1. */
static long control_byte_at(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (((unsigned char)buf[i] < 0x20 && buf[i] != '\t') || buf[i] == 0x7f)
			return (long)i;
	return -1;
}

int pacer_conf_parse(FILE *f, const char *path, struct pacer_conf *c, char *err, size_t errlen)
{
	char buf[PACER_CONF_MAX_LINE + 2], *text, *hash; /* the line, a CR, the NUL */
	unsigned line = 0;
	size_t len;
	long at;
	int ret;

	memset(c, 0, sizeof(*c));
	c->path = strdup(path);
	c->cls = malloc(sizeof(*c->cls));
	if (!c->path || !c->cls)
		return -ENOMEM;
	class_conf_init(c->cls, c->path);
	for (;;) {
		line++;
		ret = read_line(f, path, line, buf, &len, err, errlen);
		if (ret <= 0) {
			line--;
			if (ret)
				return ret;
			break;
		}
		/* A UTF-8 byte order mark (some Windows editors write one) is no key: skipped, as systemd does. */
		if (line == 1 && len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
			memmove(buf, buf + 3, len - 2);
			len -= 3;
		}
		at = control_byte_at(buf, len);
		if (at >= 0) {
			if (buf[at])
				snprintf(err, errlen, "%s:%u: control byte 0x%02x at column %ld", path,
					 line, (unsigned char)buf[at], at + 1);
			else
				snprintf(err, errlen, "%s:%u: NUL byte at column %ld (not a text file?)",
					 path, line, at + 1);
			return -EINVAL;
		}
		hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		text = trim(buf);
		if (!*text)
			continue;
		ret = parse_line(c, text, line, err, errlen);
		if (ret)
			return ret;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error after line %u", path, line);
		return -EIO;
	}
	return class_conf_finish(c->cls, err, errlen);
}

int pacer_conf_read(const char *path, struct pacer_conf *c, char *err, size_t errlen)
{
	char why[128];
	int fd = open_regular_file(path, why, sizeof(why)), ret;
	FILE *f;

	memset(c, 0, sizeof(*c));
	if (fd < 0) {
		snprintf(err, errlen, fd == -EINVAL ? "%s: %s" : "cannot read %s: %s", path, why);
		return fd;
	}
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(-ret));
		close(fd);
		return ret;
	}
	ret = pacer_conf_parse(f, path, c, err, errlen);
	fclose(f);
	return ret;
}

void pacer_conf_free(struct pacer_conf *c)
{
	int i;

	for (i = 0; i < c->n; i++) {
		free(c->e[i].key);
		free(c->e[i].value);
	}
	if (c->cls)
		class_conf_free(c->cls);
	free(c->cls);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

const struct pacer_conf_entry *pacer_conf_get(const struct pacer_conf *c, const char *key)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].key, key))
			return &c->e[i];
	return NULL;
}

unsigned pacer_conf_line_of(const struct pacer_conf *c, const char *value)
{
	int i;

	for (i = 0; c && i < c->n; i++)
		if (c->e[i].value == value)
			return c->e[i].line;
	return 0;
}
