// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * grace_probe: whether this kernel waits for an RCU grace period on a
 * map-in-map update, the wait pacer_classes_install relies on before it
 * rewrites a bank of classes (docs/design.md, Live changes).  Times N such
 * waits (pacer_wait_packets_in_flight) against N plain array updates and
 * prints both; exit 0 when the fastest wait is at least 20 times the
 * median plain update and at least 0.1 ms, 1 when not, 2 on an error.
 * Run on the booted kernels by tests/qemu_guest.sh.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "classes_map.h"

#define N 15

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	uint64_t wait[N], plain[N], t;
	__u32 zero = 0, v = 1;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "grace_plain", 4, 4, 1, NULL), i, e;

	if (fd < 0) {
		fprintf(stderr, "grace_probe: cannot make an array map: %s\n", strerror(errno));
		return 2;
	}
	for (i = 0; i < N; i++) {
		t = now_ns();
		e = pacer_wait_packets_in_flight();
		wait[i] = now_ns() - t;
		if (e) {
			fprintf(stderr, "grace_probe: map-in-map update: %s\n", strerror(-e));
			return 2;
		}
		t = now_ns();
		if (bpf_map_update_elem(fd, &zero, &v, BPF_ANY)) {
			fprintf(stderr, "grace_probe: array update: %s\n", strerror(errno));
			return 2;
		}
		plain[i] = now_ns() - t;
	}
	close(fd);
	qsort(wait, N, sizeof(wait[0]), cmp_u64);
	qsort(plain, N, sizeof(plain[0]), cmp_u64);
	printf("grace period: median %.3f ms, fastest %.3f ms; a plain update: median %.1f us\n",
	       wait[N / 2] / 1e6, wait[0] / 1e6, plain[N / 2] / 1e3);
	return wait[0] >= 20 * plain[N / 2] && wait[0] >= 100000 ? 0 : 1;
}
