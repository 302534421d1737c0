// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include "html_out.h"

void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

#define SVG_W 860.0

/* A paragraph saying why a section is missing. */
void html_note(FILE *f, const char *what, const char *why)
{
	fprintf(f, "<p>%s: ", what);
	html_text(f, why);
	fputs("</p>\n", f);
}

void html_cell(FILE *f, const char *tag, const char *text)
{
	fprintf(f, "<%s>", tag);
	html_text(f, text);
	fprintf(f, "</%s>", tag);
}

/* A two-column row: label, then printf-formatted value. */
void html_kv(FILE *f, const char *label, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fputs("<tr>", f);
	html_cell(f, "th", label);
	html_cell(f, "td", buf);
	fputs("</tr>\n", f);
}
