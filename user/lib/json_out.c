// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdint.h>
#include "json_out.h"

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
