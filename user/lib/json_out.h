/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JSON string output shared by every --json writer of the CLI. */
#ifndef PACER_JSON_OUT_H
#define PACER_JSON_OUT_H

#include <stdio.h>

/*
 * Write s as a JSON string literal, quotes included.  Quotes, backslashes
 * and control bytes are escaped; valid UTF-8 passes through; every byte
 * that is not part of a valid UTF-8 sequence becomes U+FFFD, so the output
 * is valid JSON whatever bytes s holds (a hostname, a file name).
 */
void json_string(FILE *f, const char *s);

#endif
