// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sweep_cost: the table sweep's CPU cost (bpf/lib/sweep.h), timed by the
 * kernel: the real object's sweep round, run through its probe program
 * with BPF_PROG_TEST_RUN over every line of every per-CPU copy, on three
 * fillings of the table: empty, every entry fresh (scanned, nothing to
 * clear) and every entry expired (each word swapped: the worst case, once
 * per entry's life).  Root.
 *
 *   sweep_cost [LINES_LOG2 TICK_SHIFT]   (16 16: 4 MiB a copy, 65.5 us ticks)
 *
 * Prints, per filling, ns per line, and the share of one CPU the timer
 * takes at the plan's pace (pacer_tbl_sweep_plan: every line once per
 * PACER_TBL_SWEEP_TICKS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pacer_abi.h"
#include "pacer_budget.h"
#include "pacer_defaults.h"
#include "pacer_table.h"
#include "xdp_pacer.skel.h"

#define NOW_NS 5000000000000ULL /* the cached clock, held still */
#define SAT 100

static int die(const char *what)
{
	fprintf(stderr, "sweep_cost: %s\n", what);
	return 1;
}

int main(int argc, char **argv)
{
	struct pacer_layout lay = PACER_DEFAULT_LAYOUT;
	struct pacer_clock_state clock = { .now_ns = NOW_NS, .armed = 1 };
	struct pacer_clock_state sweep = { .armed = ~0ULL };
	static const char *const fill_name[] = { "empty", "fresh", "expired" };
	struct pacer_tbl_sweep plan;
	struct xdp_pacer_bpf *skel;
	struct pacer_tbl_line *tbl;
	unsigned char frame[64] = { 0 };
	uint64_t lines, tick, rounds, k, i;
	uint32_t elem;
	int fill, probe;

	lay.backend = PACER_BACKEND_TABLE;
	lay.kind = PACER_LAYOUT_ROWS;
	lay.rows = 1;
	lay.placement = PACER_PLACEMENT_PERCPU;
	lay.clock = PACER_CLOCK_CACHED;
	lay.lines_log2 = argc > 1 ? (uint32_t)atoi(argv[1]) : 16;
	lay.tick_shift = argc > 2 ? (uint32_t)atoi(argv[2]) : 16;
	lay.copies = (uint32_t)libbpf_num_possible_cpus();
	if (lay.lines_log2 < 1 || lay.lines_log2 > PACER_TBL_MAX_LINES_LOG2 || lay.tick_shift < 6 ||
	    lay.tick_shift > PACER_TICK_SHIFT_MAX)
		return die("usage: sweep_cost [LINES_LOG2 (1..24) TICK_SHIFT (6..40)]");
	lines = (uint64_t)lay.copies << lay.lines_log2;
	skel = xdp_pacer_bpf__open();
	if (!skel)
		return die("cannot open the object");
	skel->rodata->pacer_layout = lay;
	skel->data->pacer_cfg.thresh_ticks = SAT;
	if (bpf_map__set_max_entries(skel->maps.pacer_sk, (uint32_t)lines) ||
	    bpf_program__set_autoload(skel->progs.pacer_sweep_probe, true) ||
	    xdp_pacer_bpf__load(skel))
		return die("cannot load the object (root?)");
	elem = 0;
	bpf_map_update_elem(bpf_map__fd(skel->maps.pacer_clock), &elem, &clock, BPF_ANY);
	elem = 1;
	bpf_map_update_elem(bpf_map__fd(skel->maps.pacer_clock), &elem, &sweep, BPF_ANY);
	tbl = mmap(NULL, lines * sizeof(*tbl), PROT_READ | PROT_WRITE, MAP_SHARED,
		   bpf_map__fd(skel->maps.pacer_sk), 0);
	if (tbl == MAP_FAILED)
		return die("cannot map the table");
	probe = bpf_program__fd(skel->progs.pacer_sweep_probe);
	pacer_tbl_sweep_plan(lines, lay.tick_shift, &plan);
	rounds = (lines + plan.chunk - 1) / plan.chunk;
	tick = NOW_NS >> lay.tick_shift;
	printf("{\"copies\": %u, \"lines\": %llu, \"tick_ns\": %llu, \"chunk\": %u, \"period_ns\": %llu, \"full_sweep_ns\": %llu}\n",
	       lay.copies, (unsigned long long)lines, 1ULL << lay.tick_shift, plan.chunk,
	       (unsigned long long)plan.period_ns, (unsigned long long)(rounds * plan.period_ns));
	for (fill = 0; fill < 3; fill++) {
		uint64_t ns[3] = { 0 }, left = 0, t;
		int rep;

		/* Three passes, each on a fresh filling: the median. */
		for (rep = 0; rep < 3; rep++) {
			for (i = 0; i < lines; i++)
				for (k = 0; k < PACER_TBL_WAYS; k++)
					tbl[i].e[k] = fill ? pacer_tbl_entry((uint16_t)(1 + (i * 16 + k) % 0xfffe),
									     tick - (fill == 2 ? SAT + 100 : 0)) : 0;
			for (k = 0; k < rounds; k++) {
				LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame));

				if (bpf_prog_test_run_opts(probe, &o) || o.retval != 2 /* XDP_PASS */)
					return die("the probe did not run a round");
				ns[rep] += o.duration;
			}
		}
		for (rep = 0; rep < 2; rep++)
			for (k = 0; k + 1 < 3; k++)
				if (ns[k] > ns[k + 1])
					t = ns[k], ns[k] = ns[k + 1], ns[k + 1] = t;
		for (i = 0; i < lines; i++)
			for (k = 0; k < PACER_TBL_WAYS; k++)
				left += tbl[i].e[k] != 0;
		printf("{\"fill\": \"%s\", \"ns_per_line\": %.2f, \"entries_left\": %llu, \"cpu_share\": %.5f}\n",
		       fill_name[fill], (double)ns[1] / (double)lines, (unsigned long long)left,
		       (double)ns[1] / (double)(rounds * plan.period_ns));
	}
	munmap(tbl, lines * sizeof(*tbl));
	xdp_pacer_bpf__destroy(skel);
	return 0;
}
