// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "cli_log.h"

int verbose;

static void vpr(const char *pfx, const char *fmt, va_list ap)
{
	fputs(pfx, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err_va(const char *fmt, va_list ap)
{
	vpr("xdp-pacer: ", fmt, ap);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pr_err_va(fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vpr("xdp-pacer: debug: ", fmt, ap);
	va_end(ap);
}

static int lib_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBXDP_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void setup_lib_logging(void)
{
	libbpf_set_print(lib_print);
	libxdp_set_print(xdp_print);
}

const char *err_str(int err, char *buf, size_t len)
{
	if (err < 0)
		err = -err;
	if (libbpf_strerror(err, buf, len) < 0)
		snprintf(buf, len, "%s", strerror(err));
	return buf;
}
