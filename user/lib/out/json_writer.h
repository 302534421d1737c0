/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small streaming JSON writer (the shape of iproute2's json_writer): every
 * --json output of the CLI goes through it, so commas, nesting and escaping
 * are decided in one place.
 *
 *	struct json_writer w;
 *
 *	jsonw_init(&w, stdout);
 *	jsonw_start_object(&w);
 *	jsonw_string_field(&w, "key", "10.0.0.1/32");
 *	jsonw_uint_field(&w, "age_ticks", 3);
 *	jsonw_end_object(&w);          // a finished top-level value ends its line
 *	return jsonw_finish(&w);
 *
 * Compact by default ("k":v, no spaces: scripts grep it); jsonw_pretty()
 * indents one level per tab.
 */
#ifndef PACER_JSON_WRITER_H
#define PACER_JSON_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 32

struct json_writer {
	FILE *f;
	unsigned depth;
	bool pretty;
	bool need_comma;     /* a value was written at this depth */
	bool after_name;     /* a name was written; its value comes next */
	bool misused;        /* unbalanced nesting, a name outside an object, ... */
	uint32_t in_object;  /* bit d: the container at depth d + 1 is an object */
};

void jsonw_init(struct json_writer *w, FILE *f);
void jsonw_pretty(struct json_writer *w, bool on);
/* 0; -EINVAL if the calls did not nest (unclosed, name without value); -EIO on a write error. */
int jsonw_finish(struct json_writer *w);

/* The name of the next value, inside an object. */
void jsonw_name(struct json_writer *w, const char *name);

void jsonw_start_object(struct json_writer *w);
void jsonw_end_object(struct json_writer *w);
void jsonw_start_array(struct json_writer *w);
void jsonw_end_array(struct json_writer *w);
/* name + start, inside an object. */
void jsonw_start_object_field(struct json_writer *w, const char *name);
void jsonw_start_array_field(struct json_writer *w, const char *name);

void jsonw_string(struct json_writer *w, const char *s);
void jsonw_uint(struct json_writer *w, uint64_t v);
void jsonw_int(struct json_writer *w, int64_t v);
/* %.9g; NaN and infinities (which JSON cannot carry) as null. */
void jsonw_float(struct json_writer *w, double v);
/* v with a printf format for one double ("%.3f"); non-finite as null. */
void jsonw_float_fmt(struct json_writer *w, const char *fmt, double v);
void jsonw_bool(struct json_writer *w, bool v);
void jsonw_null(struct json_writer *w);

/* name + value in one call. */
void jsonw_string_field(struct json_writer *w, const char *name, const char *s);
void jsonw_uint_field(struct json_writer *w, const char *name, uint64_t v);
void jsonw_int_field(struct json_writer *w, const char *name, int64_t v);
void jsonw_float_field(struct json_writer *w, const char *name, double v);
void jsonw_float_field_fmt(struct json_writer *w, const char *name, const char *fmt, double v);
void jsonw_bool_field(struct json_writer *w, const char *name, bool v);
void jsonw_null_field(struct json_writer *w, const char *name);

/*
 * A struct's members as JSON fields, declared once in a table: the table
 * names each member and its JSON key, and the macros refuse (at compile
 * time) a member whose C type is not the kind they read.
 */
enum jsonw_member_kind { JSONW_M_U32, JSONW_M_U64, JSONW_M_DOUBLE, JSONW_M_INT_BOOL };

struct jsonw_member {
	const char *name;
	enum jsonw_member_kind kind;
	size_t offset;
};

#define JSONW_TYPE_CHECK(type, member, ctype) \
	(0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((type *)0)->member), ctype) ? 1 : -1]))
#define JSONW_MEMBER(kind, ctype, type, member, key) \
	{ (key), (kind), offsetof(type, member) + JSONW_TYPE_CHECK(type, member, ctype) }
#define JSONW_U32(type, member, key) JSONW_MEMBER(JSONW_M_U32, uint32_t, type, member, key)
#define JSONW_U64(type, member, key) JSONW_MEMBER(JSONW_M_U64, uint64_t, type, member, key)
#define JSONW_DOUBLE(type, member, key) JSONW_MEMBER(JSONW_M_DOUBLE, double, type, member, key)
/* An int member written as true/false. */
#define JSONW_INT_BOOL(type, member, key) JSONW_MEMBER(JSONW_M_INT_BOOL, int, type, member, key)

/* Each of m[0..n) of obj as a field (doubles as jsonw_float). */
void jsonw_members(struct json_writer *w, const void *obj, const struct jsonw_member *m, size_t n);
#define JSONW_MEMBERS(w, obj, table) jsonw_members(w, obj, table, sizeof(table) / sizeof(table[0]))

/*
 * Write s as a JSON string literal, quotes included.  Quotes, backslashes
 * and control bytes are escaped; valid UTF-8 passes through; every byte
 * that is not part of a valid UTF-8 sequence becomes U+FFFD, so the output
 * is valid JSON whatever bytes s holds (a hostname, a file name).
 */
void json_string(FILE *f, const char *s);

#endif
