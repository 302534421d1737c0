// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* How configuration text appears in messages (conf_text.h). */
#include <stdio.h>
#include "conf_text.h"

const char *pacer_conf_shown(const char *text, char *out, size_t len)
{
	size_t o = 0;

	for (; *text && o + 5 <= len; text++) {
		unsigned char ch = (unsigned char)*text;

		if (ch >= 0x20 && ch < 0x7f)
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", ch);
	}
	out[o] = 0;
	return out;
}
