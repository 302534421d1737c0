/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the BPF_PROG_TEST_RUN tests (prog_*.c) ask of a loaded skeleton:
 * a global counter summed over CPUs, and the class and list maps as the
 * library takes them (classes_map.h), found by the names the pins use
 * (pins.h), so a new map reaches every test at once.  Header-only: the
 * unit tests, which link tests/lib_*.o, have no libbpf.
 */
#ifndef PACER_PROG_SKEL_H
#define PACER_PROG_SKEL_H

#include <check.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "classes_map.h"
#include "pins.h"
#include "xdp_pacer.skel.h"

/*
 * Keep every test on the CPU it started on.  BPF_PROG_TEST_RUN runs an XDP
 * program on the calling CPU, and per-CPU placement keeps a copy of the
 * state per CPU: a test that migrated between two runs (a loaded machine's
 * scheduler may move it) would meet another copy, a source seen as new.
 * Tests about the copies choose their CPUs themselves.  Needs _GNU_SOURCE.
 */
static inline void skel_stay_on_one_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	if (cpu < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* Counter s of the skeleton's pacer_stats, summed over the possible CPUs. */
static inline uint64_t skel_counter(const struct xdp_pacer_bpf *skel, enum pacer_stat s)
{
	int n = libbpf_num_possible_cpus(), i;
	struct pacer_counters *pc = calloc((size_t)n, sizeof(*pc));
	uint32_t zero = 0;
	uint64_t sum = 0;

	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.pacer_stats), &zero, pc), 0);
	for (i = 0; i < n; i++)
		sum += pc[i].c[s];
	free(pc);
	return sum;
}

/* m's map fds from the loaded skeleton (cfg, backend and ncpus are the caller's). */
static inline void skel_class_maps(const struct xdp_pacer_bpf *skel, struct pacer_class_maps *m)
{
	int fd[PACER_MAP_MAX], i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const struct bpf_map *map = bpf_object__find_map_by_name(skel->obj, pacer_maps[i].map_name);

		fd[i] = map ? bpf_map__fd(map) : -1;
	}
	pacer_class_maps_set_fds(m, fd);
}

#endif
