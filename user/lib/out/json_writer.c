// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include "json_writer.h"

/*
 * Length of the valid UTF-8 sequence starting at s (1..4), or 0 if the
 * bytes there are not one (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
 */
static int utf8_seq_len(const unsigned char *s)
{
	unsigned char c = s[0];
	int n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n = utf8_seq_len(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, (size_t)n, f);
			p += n;
		}
	}
	fputc('"', f);
}

void jsonw_init(struct json_writer *w, FILE *f)
{
	*w = (struct json_writer){ .f = f };
}

void jsonw_pretty(struct json_writer *w, bool on)
{
	w->pretty = on;
}

int jsonw_finish(struct json_writer *w)
{
	if (w->misused || w->depth || w->after_name)
		return -EINVAL;
	return ferror(w->f) ? -EIO : 0;
}

static bool in_object(const struct json_writer *w)
{
	return w->depth && (w->in_object >> (w->depth - 1) & 1);
}

static void newline_indent(struct json_writer *w)
{
	unsigned i;

	fputc('\n', w->f);
	for (i = 0; i < w->depth; i++)
		fputc('\t', w->f);
}

/* Separator and indentation before a value or a name; marks misuse (a value in an object without a name). */
static void begin_item(struct json_writer *w, bool is_name)
{
	if (w->after_name) {
		w->after_name = false;
		if (is_name)
			w->misused = true;
		return;
	}
	if (in_object(w) != is_name)
		w->misused = true; /* a value in an object needs a name; a name needs an object */
	if (!w->depth)
		return;
	if (w->need_comma)
		fputc(',', w->f);
	if (w->pretty)
		newline_indent(w);
}

/* After a value: a finished top-level value ends its line. */
static void end_value(struct json_writer *w)
{
	w->need_comma = true;
	if (!w->depth)
		fputc('\n', w->f);
}

void jsonw_name(struct json_writer *w, const char *name)
{
	begin_item(w, true);
	json_string(w->f, name);
	fputs(w->pretty ? ": " : ":", w->f);
	w->after_name = true;
}

static void start_container(struct json_writer *w, char open, bool object)
{
	begin_item(w, false);
	fputc(open, w->f);
	if (w->depth >= JSONW_MAX_DEPTH) {
		w->misused = true;
		return;
	}
	if (object)
		w->in_object |= 1u << w->depth;
	else
		w->in_object &= ~(1u << w->depth);
	w->depth++;
	w->need_comma = false;
}

static void end_container(struct json_writer *w, char close, bool object)
{
	if (!w->depth || in_object(w) != object || w->after_name) {
		w->misused = true;
		return;
	}
	w->depth--;
	if (w->pretty && w->need_comma)
		newline_indent(w);
	fputc(close, w->f);
	end_value(w);
}

void jsonw_start_object(struct json_writer *w)
{
	start_container(w, '{', true);
}

void jsonw_end_object(struct json_writer *w)
{
	end_container(w, '}', true);
}

void jsonw_start_array(struct json_writer *w)
{
	start_container(w, '[', false);
}

void jsonw_end_array(struct json_writer *w)
{
	end_container(w, ']', false);
}

void jsonw_start_object_field(struct json_writer *w, const char *name)
{
	jsonw_name(w, name);
	jsonw_start_object(w);
}

void jsonw_start_array_field(struct json_writer *w, const char *name)
{
	jsonw_name(w, name);
	jsonw_start_array(w);
}

void jsonw_string(struct json_writer *w, const char *s)
{
	begin_item(w, false);
	json_string(w->f, s);
	end_value(w);
}

void jsonw_uint(struct json_writer *w, uint64_t v)
{
	begin_item(w, false);
	fprintf(w->f, "%llu", (unsigned long long)v);
	end_value(w);
}

void jsonw_int(struct json_writer *w, int64_t v)
{
	begin_item(w, false);
	fprintf(w->f, "%lld", (long long)v);
	end_value(w);
}

void jsonw_float_fmt(struct json_writer *w, const char *fmt, double v)
{
	begin_item(w, false);
	if (isfinite(v))
		fprintf(w->f, fmt, v);
	else
		fputs("null", w->f);
	end_value(w);
}

void jsonw_float(struct json_writer *w, double v)
{
	jsonw_float_fmt(w, "%.9g", v);
}

static void literal(struct json_writer *w, const char *text)
{
	begin_item(w, false);
	fputs(text, w->f);
	end_value(w);
}

void jsonw_bool(struct json_writer *w, bool v)
{
	literal(w, v ? "true" : "false");
}

void jsonw_null(struct json_writer *w)
{
	literal(w, "null");
}

void jsonw_string_field(struct json_writer *w, const char *name, const char *s)
{
	jsonw_name(w, name);
	jsonw_string(w, s);
}

void jsonw_uint_field(struct json_writer *w, const char *name, uint64_t v)
{
	jsonw_name(w, name);
	jsonw_uint(w, v);
}

void jsonw_int_field(struct json_writer *w, const char *name, int64_t v)
{
	jsonw_name(w, name);
	jsonw_int(w, v);
}

void jsonw_float_field(struct json_writer *w, const char *name, double v)
{
	jsonw_name(w, name);
	jsonw_float(w, v);
}

void jsonw_float_field_fmt(struct json_writer *w, const char *name, const char *fmt, double v)
{
	jsonw_name(w, name);
	jsonw_float_fmt(w, fmt, v);
}

void jsonw_bool_field(struct json_writer *w, const char *name, bool v)
{
	jsonw_name(w, name);
	jsonw_bool(w, v);
}

void jsonw_null_field(struct json_writer *w, const char *name)
{
	jsonw_name(w, name);
	jsonw_null(w);
}

void jsonw_members(struct json_writer *w, const void *obj, const struct jsonw_member *m, size_t n)
{
	const char *base = obj;
	size_t i;

	for (i = 0; i < n; i++) {
		const void *at = base + m[i].offset;

		jsonw_name(w, m[i].name);
		if (m[i].kind == JSONW_M_DOUBLE)
			jsonw_float(w, *(const double *)at);
		else if (m[i].kind == JSONW_M_INT_BOOL)
			jsonw_bool(w, *(const int *)at);
		else
			jsonw_uint(w, m[i].kind == JSONW_M_U32 ? *(const uint32_t *)at : *(const uint64_t *)at);
	}
}
