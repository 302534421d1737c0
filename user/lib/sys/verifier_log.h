/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel's verifier said about a program: its log at level
 * BPF_LOG_STATS (error messages and the closing statistics), read into
 * one line for `load`'s error message and into numbers for the report.
 */
#ifndef PACER_VERIFIER_LOG_H
#define PACER_VERIFIER_LOG_H

#include <stddef.h>
#include <stdint.h>

/* The log level that gives the verifier's errors and statistics, not its trace. */
#define VERIFIER_LOG_STATS 4

/*
 * "processed N insns (limit M)": *processed and *limit (0 when the log has
 * no limit).  0 if the log has the line, -1 if not.
 */
int verifier_log_processed(const char *log, uint64_t *processed, uint64_t *limit);

/*
 * Why the verifier rejected the program, as one sentence naming the kernel
 * release: 0 with out filled, -1 if the log says nothing (the failure came
 * from elsewhere).
 */
int verifier_log_cause(const char *log, const char *release, char *out, size_t len);

#endif
