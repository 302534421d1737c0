/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* HTML output helpers: escaped text, table cells and rows, notes. */
#ifndef PACER_HTML_OUT_H
#define PACER_HTML_OUT_H

#include <stdio.h>

/* s with <, >, & and " escaped (JSON strings: json_writer.h). */
void html_text(FILE *f, const char *s);
/* A paragraph "what: why" saying why a section is missing. */
void html_note(FILE *f, const char *what, const char *why);
/* <tag>text</tag>, text escaped. */
void html_cell(FILE *f, const char *tag, const char *text);
/* A two-column table row: label, then the printf-formatted value. */
void html_kv(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
