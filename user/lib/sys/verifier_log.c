// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The verifier's log read into one line of cause and its instruction count. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verifier_log.h"

int verifier_log_processed(const char *log, uint64_t *processed, uint64_t *limit)
{
	const char *p = log ? strstr(log, "processed ") : NULL;
	char *end;

	/* The statistics line is the last "processed N insns" of the log. */
	for (; p; p = strstr(p + 1, "processed ")) {
		uint64_t n = strtoull(p + 10, &end, 10);

		if (end == p + 10 || strncmp(end, " insns", 6))
			continue;
		*processed = n;
		*limit = 0;
		if (!strncmp(end, " insns (limit ", 14))
			*limit = strtoull(end + 14, NULL, 10);
		return 0;
	}
	return -1;
}

/* The last line of the log that is a message, not statistics. */
static int last_message(const char *log, char *out, size_t len)
{
	const char *line = log, *found = NULL, *nl;
	size_t n = 0;

	while (*line) {
		nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) : strlen(line);

		if (l && strncmp(line, "processed ", 10) && strncmp(line, "verification time", 17) &&
		    strncmp(line, "stack depth", 11)) {
			found = line;
			n = l;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (!found)
		return -1;
	if (n >= len)
		n = len - 1;
	/* Control bytes would garble the terminal; the verifier writes none, but it is input. */
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)found[i] < 0x20 ? '?' : found[i];
	out[n] = '\0';
	return 0;
}

int verifier_log_cause(const char *log, const char *release, char *out, size_t len)
{
	uint64_t processed = 0, limit = 0;
	char msg[256];

	if (!log || !*log)
		return -1;
	if (strstr(log, "BPF program is too large") ||
	    (!verifier_log_processed(log, &processed, &limit) && limit && processed > limit)) {
		if (verifier_log_processed(log, &processed, &limit))
			snprintf(out, len,
				 "the kernel's verifier gave up: program too complex for Linux %s",
				 release);
		else
			snprintf(out, len,
				 "the kernel's verifier gave up: program too complex for Linux %s "
				 "(%" PRIu64 " instructions processed, limit %" PRIu64 ")",
				 release, processed, limit);
		return 0;
	}
	if (last_message(log, msg, sizeof(msg)))
		return -1;
	snprintf(out, len, "the kernel's verifier (Linux %s) rejected the program: %s", release, msg);
	return 0;
}
