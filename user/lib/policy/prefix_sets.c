// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sets of list prefixes compared: what `set` reports as a changed list (prefix_sets.h). */
#include <stdlib.h>
#include <string.h>
#include "prefix_sets.h"

static int prefix_cmp(const void *a, const void *b)
{
	const struct pacer_prefix *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* p with its host bits (and those past its family's address) cleared, sorted. */
static void prefixes_canon(struct pacer_prefix *p, size_t n)
{
	size_t i, b;

	for (i = 0; i < n; i++)
		for (b = 0; b < sizeof(p[i].addr); b++) {
			uint32_t keep = p[i].len >= (b + 1) * 8 ? 8 : p[i].len > b * 8 ? p[i].len - (uint32_t)b * 8 : 0;

			p[i].addr[b] &= (uint8_t)(0xff00u >> keep);
		}
	if (n)
		qsort(p, n, sizeof(*p), prefix_cmp);
}

bool pacer_prefix_sets_same(struct pacer_prefix *a, size_t na, struct pacer_prefix *b, size_t nb)
{
	size_t i = 0, j = 0;

	prefixes_canon(a, na);
	prefixes_canon(b, nb);
	/* Walk both sorted lists, a run of equal prefixes counting once. */
	while (i < na || j < nb) {
		if (i == na || j == nb || prefix_cmp(&a[i], &b[j]))
			return false;
		while (++i < na && !prefix_cmp(&a[i], &a[i - 1]))
			;
		while (++j < nb && !prefix_cmp(&b[j], &b[j - 1]))
			;
	}
	return true;
}
