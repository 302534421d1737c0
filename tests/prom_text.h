/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the Prometheus tests (unit_ops, unit_exporter) share: the text
 * prom_write() gives, and how often a string stands in it.  A header of
 * static helpers, as the UBSan build of unit_ops links no test library.
 */
#ifndef PACER_TEST_PROM_TEXT_H
#define PACER_TEST_PROM_TEXT_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#include "prom.h"

/* prom_write()'s text for n pacers, in a buffer the caller frees. */
/* Not inlined: inlined, gcc takes the stream's buffer for a dangling pointer. */
static __attribute__((noinline, unused)) char *prom_text(const struct prom_pacer *p, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(prom_write(f, p, n), 0);
	fclose(f);
	return buf;
}

/* Occurrences of needle in hay, overlapping ones included. */
static __attribute__((unused)) size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

#endif
