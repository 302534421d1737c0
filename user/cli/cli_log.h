/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The CLI's messages: errors and debug on stderr, information on stdout; libbpf's and libxdp's with -v. */
#ifndef PACER_CLI_LOG_H
#define PACER_CLI_LOG_H

#include <stdarg.h>
#include <stddef.h>

extern int verbose;

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_err_va(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Route libbpf/libxdp logs to stderr, shown with -v. */
void setup_lib_logging(void);

/* Text for a negative errno from libbpf (or anything else). */
const char *err_str(int err, char *buf, size_t len);

#endif
