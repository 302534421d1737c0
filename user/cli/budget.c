// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The global budget on a running pacer: live configuration and ring. */
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include "budget.h"
#include "cli_values.h"

static struct pacer_budget_cfg *cfg_map(const struct pacer_handle *h)
{
	void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
		       h->map_fd[PACER_MAP_BUDGET_CFG], 0);

	if (p == MAP_FAILED) {
		pr_err("cannot map the budget configuration of program id %u: %s", h->prog_id,
		       strerror(errno));
		return NULL;
	}
	return p;
}

/* o against the live budget: refused (2, said why), or stored when store is set. */
static int budget_live(const struct pacer_handle *h, const struct budget_opts *o, bool store,
		       bool *changed)
{
	struct pacer_budget_cfg *live = cfg_map(h), want;
	char err[256], d[256];
	bool same;
	int rc = 0;

	if (!live)
		return 1;
	if (budget_apply(o, live, &want, err, sizeof(err))) {
		pr_err("%s", err);
		rc = 2;
	} else if (store) {
		same = budget_cfg_same(live, &want);
		budget_cfg_store(live, &want);
		pr_info("xdp-pacer: %s: budget %s%s", h->ifname, budget_describe(live, d, sizeof(d)),
			same ? " (unchanged)" : "");
		if (changed)
			*changed = !same;
	}
	munmap(live, (size_t)sysconf(_SC_PAGESIZE));
	return rc;
}

int budget_set(const struct pacer_handle *h, const struct budget_opts *o, bool *changed)
{
	return budget_live(h, o, true, changed);
}

int budget_check(const struct pacer_handle *h, const struct budget_opts *o)
{
	return budget_live(h, o, false, NULL);
}

int budget_seen_cells_log2(const struct pacer_handle *h)
{
	struct pacer_budget_cfg *live = cfg_map(h);
	int l;

	if (!live)
		return -1;
	l = (int)live->seen_cells_log2;
	munmap(live, (size_t)sysconf(_SC_PAGESIZE));
	return l;
}

static void show_ring(const struct pacer_budget_ring *r, uint64_t limit, uint64_t now)
{
	char a[32], b[32];
	uint32_t i;

	printf("  budget ring: %u buckets held, %llu in flight, %llu free\n", r->len,
	       (unsigned long long)r->inflight,
	       (unsigned long long)(r->inflight < limit ? limit - r->inflight : 0));
	for (i = 0; i < r->len && i < PACER_BUDGET_MAX_BUCKETS; i++) {
		const struct pacer_budget_bucket *bk = &r->b[(r->head + i) & PACER_BUDGET_MASK];

		printf("    bucket %u: %llu packets, opened %s ago, last %s ago\n", i,
		       (unsigned long long)bk->count,
		       format_duration(now > bk->open_ns ? now - bk->open_ns : 0, a, sizeof(a)),
		       format_duration(now > bk->last_ns ? now - bk->last_ns : 0, b, sizeof(b)));
	}
}

void budget_show(const struct pacer_handle *h)
{
	struct pacer_budget_state s;
	struct pacer_budget_cfg *live = cfg_map(h), c;
	uint64_t now = pacer_clock_now(h);
	char d[256];
	uint32_t zero = 0;

	if (!live)
		return;
	c = *live;
	munmap(live, (size_t)sysconf(_SC_PAGESIZE));
	if (!c.limit) {
		printf("  budget: off\n");
		return;
	}
	printf("  budget: %s; returning-source filter %llu cells\n",
	       budget_describe(&c, d, sizeof(d)), 1ULL << c.seen_cells_log2);
	if (bpf_map_lookup_elem_flags(h->map_fd[PACER_MAP_BUDGET], &zero, &s, BPF_F_LOCK)) {
		pr_err("cannot read the budget ring: %s", strerror(errno));
		return;
	}
	/* Buckets that have cooled but wait for the next packet to release them read as held. */
	show_ring(&s.ring, c.limit, now > s.ring.clock_ns ? now : s.ring.clock_ns);
	printf("  budget batches: %llu drawn, %llu lock round trips (draws and refusals that took the lock)\n",
	       (unsigned long long)s.draws, (unsigned long long)s.locked);
}
