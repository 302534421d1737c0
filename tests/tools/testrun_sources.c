// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-path cost of a loaded program over many sources, by BPF_PROG_TEST_RUN
 * (scripts/bench-testrun.sh --sources): one run per frame, each an IPv4
 * UDP frame from its own source in 128.0.0.0/2 (where the spoofed flood
 * draws its sources).  A warm-up pass of N sources first (the lines the
 * later passes touch are then written and current), then REPS times: N new
 * sources (each admitted: the admission path) and the same N again (each
 * seen within the interval: the drop path).  With a state small enough for
 * the caches and N well below its size, the two are the cache-warm cost of
 * a flood's admissions and of its drops.
 *
 *   testrun_sources PROG_ID N REPS
 *
 * Prints "ADMIT_NS DROP_NS ADMITTED DROPPED": the median over the REPS of
 * the mean kernel-measured ns per run of each pass, and the verdicts over
 * all measured passes (XDP_PASS admitted, XDP_DROP dropped).  The kernel's
 * time of one run includes its clock reads, the same for any program.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#define MAX_REPS 99
#define MAX_SOURCES 1000000

/* Ethernet, IPv4 (source at bytes 26-29) -> 10.9.9.9, UDP 1000 -> 2000 with 6 bytes. */
static unsigned char frame[48] = {
	2, 2, 2, 2, 2, 2, 4, 4, 4, 4, 4, 4, 0x08, 0x00,
	0x45, 0, 0, 0x22, 0, 0, 0, 0, 0x40, 0x11, 0, 0, 10, 1, 2, 3, 10, 9, 9, 9,
	0x03, 0xe8, 0x07, 0xd0, 0, 0x0e, 0, 0, 'x', 'x', 'x', 'x', 'x', 'x',
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

/* A source in 128.0.0.0/2 (xorshift64: a fixed sequence, the same for every program). */
static uint32_t next_source(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return 0x80000000u | ((uint32_t)rng & 0x3fffffffu);
}

static unsigned long long admitted, dropped;

/* One run per source; the mean ns per run, or -1 (said why) if a run failed. */
static double run_pass(int fd, const uint32_t *src, long n, int count)
{
	unsigned long long sum = 0;
	long i;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = sizeof(frame),
			    .repeat = 1);

		frame[26] = src[i] >> 24;
		frame[27] = src[i] >> 16;
		frame[28] = src[i] >> 8;
		frame[29] = src[i];
		if (bpf_prog_test_run_opts(fd, &opts)) {
			fprintf(stderr, "testrun_sources: BPF_PROG_TEST_RUN: %s\n", strerror(errno));
			return -1;
		}
		sum += opts.duration;
		if (count) {
			admitted += opts.retval == XDP_PASS;
			dropped += opts.retval == XDP_DROP;
		}
	}
	return (double)sum / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* A whole number in [lo, hi], or -1 (said why). */
static long parse_count(const char *what, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "testrun_sources: %s '%s' is not a whole number in %ld..%ld\n", what,
			s, lo, hi);
		return -1;
	}
	return v;
}

int main(int argc, char **argv)
{
	double admit[MAX_REPS], drop[MAX_REPS];
	long id, n, reps, r, i;
	uint32_t *src;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: testrun_sources PROG_ID N REPS\n");
		return 2;
	}
	id = parse_count("PROG_ID", argv[1], 1, UINT32_MAX);
	n = parse_count("N", argv[2], 1, MAX_SOURCES);
	reps = parse_count("REPS", argv[3], 1, MAX_REPS);
	if (id < 0 || n < 0 || reps < 0)
		return 2;
	fd = bpf_prog_get_fd_by_id((__u32)id);
	if (fd < 0) {
		fprintf(stderr, "testrun_sources: program id %ld: %s\n", id, strerror(errno));
		return 1;
	}
	src = malloc(n * sizeof(*src));
	if (!src) {
		fprintf(stderr, "testrun_sources: out of memory for %ld sources\n", n);
		return 1;
	}
	for (i = 0; i < n; i++)
		src[i] = next_source();
	if (run_pass(fd, src, n, 0) < 0)
		return 1;
	for (r = 0; r < reps; r++) {
		for (i = 0; i < n; i++)
			src[i] = next_source();
		admit[r] = run_pass(fd, src, n, 1);
		drop[r] = run_pass(fd, src, n, 1);
		if (admit[r] < 0 || drop[r] < 0)
			return 1;
	}
	qsort(admit, reps, sizeof(double), cmp_double);
	qsort(drop, reps, sizeof(double), cmp_double);
	printf("%.2f %.2f %llu %llu\n", admit[reps / 2], drop[reps / 2], admitted, dropped);
	free(src);
	return 0;
}
