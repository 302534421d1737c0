// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The global budget in the real object under BPF_PROG_TEST_RUN:
 *  - two threads pinned to CPU 0 and CPU 1 send new sources at once, every
 *    packet recorded through the ring buffer with the time the budget
 *    admitted it; no window of length T may hold more than K admissions,
 *    plus the slack of the CPUs' batches (none with a batch of 1), the
 *    budget must have been used (refusals and admissions on both CPUs), the
 *    lock taken once per batch and refusals mostly without it;
 *  - the reserve with batches on two CPUs: returning sources pass after a
 *    flood of new ones from both CPUs took the new sources' share;
 *  - off by default; budget drops counted apart from pacing drops; the
 *    reserve lets a returning source in when new ones are refused; a live
 *    change through the sequence count takes effect on the next packet;
 *  - the order of the stages (every backend, placement and policy): a
 *    packet the budget refuses leaves its source's state untouched, and a
 *    flood of new sources the budget refuses takes no per-source state from
 *    the sources that return after it.
 */
#define _GNU_SOURCE
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pacer_sketch.h"
#include "pacer_budget.h"
#include "pacer_place.h"
#include "pacer_names.h"
#include "budget_cfg.h"
#include "lib_opts.h"
#include "xdp_pacer.skel.h"
#include "lib_frames.h"

#define PACKETS_PER_CPU 60000u
#define RING_BYTES (16u << 20)
#define RACE_K 40
#define RACE_T_NS 1000000ULL /* 1 ms */

/* Per-source state for open_pacer_as(): which backend, where, under which policy, how big. */
struct state_opts {
	uint32_t backend, placement, policy, lines_log2;
};

static struct xdp_pacer_bpf *open_pacer_as(uint32_t clock, uint32_t tick_shift,
					   uint64_t interval_ns, const struct state_opts *so)
{
	struct pacer_layout lay = {
		.magic = PACER_LAYOUT_MAGIC, .abi_version = PACER_ABI_VERSION,
		.rows = so->backend == PACER_BACKEND_SKETCH ? 2 : 1,
		.kind = PACER_LAYOUT_ROWS, .placement = so->placement, .clock = clock,
		.tick_shift = tick_shift, .lines_log2 = so->lines_log2,
		.copies = so->placement == PACER_PLACEMENT_PERCPU
				  ? (uint32_t)libbpf_num_possible_cpus() : 1,
		.backend = so->backend, .on_full = PACER_TBL_FULL_DROP,
		/* the dense table: one line short of 2^lines_log2, a count no other backend has */
		.lines = so->backend == PACER_BACKEND_DENSE ? (1u << so->lines_log2) - 1 : 0,
	};
	struct xdp_pacer_bpf *skel = xdp_pacer_bpf__open();
	struct pacer_config *cfg;
	uint32_t lines = (uint32_t)PACER_LAYOUT_LINES(lay);

	ck_assert_ptr_nonnull(skel);
	skel->rodata->pacer_layout = lay;
	cfg = &skel->data->pacer_cfg;
	cfg->interval_ns = interval_ns;
	cfg->thresh_ticks = pacer_thresh_ticks(interval_ns, tick_shift);
	cfg->policy = so->policy;
	cfg->hash_key[0] = 0x0123456789abcdefULL; /* prefixes /32 /64: the object's */
	cfg->hash_key[1] = 0xfedcba9876543211ULL;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_sk, lines * lay.copies), 0);
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_events, RING_BYTES), 0);
	return skel;
}

static struct xdp_pacer_bpf *open_pacer(uint32_t clock, uint32_t tick_shift, uint64_t interval_ns)
{
	const struct state_opts so = { .backend = PACER_BACKEND_SKETCH,
				       .placement = PACER_PLACEMENT_SHARED,
				       .policy = PACER_POLICY_PACE, .lines_log2 = 12 };

	return open_pacer_as(clock, tick_shift, interval_ns, &so);
}

static int send_one(int prog_fd, uint32_t host_src)
{
	uint8_t f[64], out[128];
	uint32_t src = htonl(host_src);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = sizeof(f),
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

	frame_v4(f, src);
	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	return (int)o.retval;
}

static void counters(struct xdp_pacer_bpf *skel, uint64_t out[PACER_STAT_MAX])
{
	int ncpus = libbpf_num_possible_cpus(), k, i;
	struct pacer_counters *pc = calloc((size_t)ncpus, sizeof(*pc));
	uint32_t zero = 0;

	ck_assert_ptr_nonnull(pc);
	ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(skel->maps.pacer_stats), &zero, pc), 0);
	memset(out, 0, sizeof(uint64_t) * PACER_STAT_MAX);
	for (k = 0; k < ncpus; k++)
		for (i = 0; i < PACER_STAT_MAX; i++)
			out[i] += pc[k].c[i];
	free(pc);
}

/* ---- two CPUs ---- */

struct race {
	int prog_fd;
	pthread_barrier_t start;
};

struct sender {
	struct race *r;
	int cpu, err;
	unsigned long passed;
};

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	cpu_set_t set;
	unsigned i;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		s->err = -1;
	pthread_barrier_wait(&s->r->start);
	for (i = 0; i < PACKETS_PER_CPU && !s->err; i++) {
		/* a new source every packet: pacing admits them all, the budget decides */
		int v = send_one(s->r->prog_fd, 0x0b000000u | (uint32_t)s->cpu << 20 | i);

		if (v < 0)
			s->err = v;
		s->passed += v == 2;
	}
	return NULL;
}

struct recs {
	uint64_t *ts;
	unsigned long n, cap, records;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct recs *c = ctx;
	const struct pacer_record *rec = data;

	if (len < sizeof(*rec))
		return 0;
	c->records++;
	if (rec->verdict == PACER_REC_PASS && c->n < c->cap)
		c->ts[c->n++] = rec->ts_ns;
	return 0;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static const struct {
	const char *rate, *slack_time, *slack_count;
	uint64_t K, T;
} two_cpu_cases[] = {
	{ "40/1ms", "100us", "4", 40, 1000000ULL },            /* batch 1: exact */
	{ "1280/5ms", "500us", "128", 1280, 5000000ULL },      /* batches of 10 on 2 CPUs */
};

START_TEST(test_budget_two_cpus)
{
	struct xdp_pacer_bpf *skel = open_pacer(PACER_CLOCK_PRECISE, 16, 1000000ULL);
	struct sender s[2] = { { .cpu = 0 }, { .cpu = 1 } };
	struct race r = { 0 };
	struct recs c = { 0 };
	struct ring_buffer *rb;
	struct pacer_budget_state bs;
	uint64_t st[PACER_STAT_MAX], K = two_cpu_cases[_i].K, T = two_cpu_cases[_i].T, slack;
	unsigned long i, j, worst = 0, windows_full = 0;
	uint32_t zero = 0, batch;
	pthread_t t[2];
	int k;

	skel->data->pacer_cfg.sample_src_thresh = 1ULL << 32; /* record every packet */
	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	budget_cfg(&skel->data_budget->pacer_budget_cfg, two_cpu_cases[_i].rate,
		   two_cpu_cases[_i].slack_time, two_cpu_cases[_i].slack_count, "0");
	batch = skel->data_budget->pacer_budget_cfg.batch;
	slack = pacer_budget_batch_slack(batch, (uint32_t)libbpf_num_possible_cpus());
	ck_assert_uint_eq(batch, _i ? pacer_budget_batch(K, 128, (uint32_t)libbpf_num_possible_cpus()) : 1);
	ck_assert_int_eq(xdp_pacer_bpf__load(skel), 0);
	r.prog_fd = bpf_program__fd(skel->progs.xdp_pacer);
	ck_assert_int_eq(pthread_barrier_init(&r.start, NULL, 2), 0);
	for (k = 0; k < 2; k++) {
		s[k].r = &r;
		ck_assert_int_eq(pthread_create(&t[k], NULL, send_loop, &s[k]), 0);
	}
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	ck_assert_msg(s[0].err == 0 && s[1].err == 0, "sender failed: %d %d", s[0].err, s[1].err);
	counters(skel, st);
	ck_assert_int_eq(bpf_map_lookup_elem_flags(bpf_map__fd(skel->maps.pacer_budget), &zero, &bs,
						   BPF_F_LOCK), 0);

	c.cap = 2 * PACKETS_PER_CPU;
	c.ts = calloc(c.cap, sizeof(*c.ts));
	ck_assert_ptr_nonnull(c.ts);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.pacer_events), on_record, &c, NULL);
	ck_assert_ptr_nonnull(rb);
	while (ring_buffer__consume(rb) > 0)
		;
	ring_buffer__free(rb);
	qsort(c.ts, c.n, sizeof(*c.ts), by_u64);
	/* every window (ts[j] - T, ts[j]] */
	for (i = 0, j = 0; j < c.n; j++) {
		while (c.ts[j] - c.ts[i] >= T)
			i++;
		if (j - i + 1 > worst)
			worst = j - i + 1;
		windows_full += j - i + 1 >= K;
	}
	printf("    %s, batch %u: %llu packets, %lu admitted on CPU 0 + %lu on CPU 1, %llu budget drops, "
	       "%llu batches drawn, %llu under the lock; %lu windows at K or more, fullest window "
	       "%lu of K = %llu + slack %llu\n",
	       two_cpu_cases[_i].rate, batch, (unsigned long long)st[PACER_STAT_SEEN], s[0].passed,
	       s[1].passed, (unsigned long long)st[PACER_STAT_DROPPED_BUDGET],
	       (unsigned long long)bs.draws, (unsigned long long)bs.locked, windows_full, worst,
	       (unsigned long long)K, (unsigned long long)slack);
	fflush(stdout);
	ck_assert_uint_eq(st[PACER_STAT_RECORD_LOST], 0);
	ck_assert_uint_eq(c.records, 2 * PACKETS_PER_CPU);
	ck_assert_uint_eq(c.n, s[0].passed + s[1].passed);
	ck_assert_uint_eq(st[PACER_STAT_BUDGET_NO_BUCKET], 0);
	/* stressed: both CPUs admitted and were refused, windows reached K */
	ck_assert_uint_gt(s[0].passed, 100);
	ck_assert_uint_gt(s[1].passed, 100);
	ck_assert_uint_gt(st[PACER_STAT_DROPPED_BUDGET], 1000);
	ck_assert_uint_gt(windows_full, 10);
	ck_assert_msg(worst <= K + slack, "a window of %llu ns held %lu admissions, budget %llu + slack %llu",
		      (unsigned long long)T, worst, (unsigned long long)K, (unsigned long long)slack);
	/* one lock per batch drawn, and refusals mostly without it */
	if (batch > 1)
		ck_assert_uint_lt(bs.draws * (batch / 2), s[0].passed + s[1].passed);
	else
		ck_assert_uint_eq(bs.draws, s[0].passed + s[1].passed);
	ck_assert_uint_lt(bs.locked * 10, st[PACER_STAT_SEEN]);
	free(c.ts);
	pthread_barrier_destroy(&r.start);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

/* Sources base .. base + n - 1 from a thread pinned to cpu, once each. */
struct burst {
	int prog_fd, cpu, err;
	uint32_t base, n;
	unsigned long passed;
};

static void *burst_loop(void *arg)
{
	struct burst *b = arg;
	cpu_set_t set;
	uint32_t i;

	CPU_ZERO(&set);
	CPU_SET(b->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		b->err = -1;
	for (i = 0; i < b->n && !b->err; i++) {
		int v = send_one(b->prog_fd, b->base + i);

		if (v < 0)
			b->err = v;
		b->passed += v == 2;
	}
	return NULL;
}

/* Both CPUs at once: sources base0.. on CPU 0 and base1.. on CPU 1; the admissions. */
static unsigned long burst_two_cpus(int fd, uint32_t base0, uint32_t base1, uint32_t n)
{
	struct burst b[2] = { { .prog_fd = fd, .cpu = 0, .base = base0, .n = n },
			      { .prog_fd = fd, .cpu = 1, .base = base1, .n = n } };
	pthread_t t[2];
	int k;

	for (k = 0; k < 2; k++)
		ck_assert_int_eq(pthread_create(&t[k], NULL, burst_loop, &b[k]), 0);
	for (k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	ck_assert_msg(b[0].err == 0 && b[1].err == 0, "sender failed: %d %d", b[0].err, b[1].err);
	return b[0].passed + b[1].passed;
}

/*
 * The reserve with batches on two CPUs: returning sources, then a flood of
 * new ones from both CPUs takes the new sources' share (K - reserve, less
 * what is in flight, plus at most the batches' slack), and every returning
 * source passes after it, on either CPU.
 */
#define RES_GOOD 20 /* per CPU */
#define RES_FLOOD 6000
START_TEST(test_reserve_with_batches_two_cpus)
{
	struct xdp_pacer_bpf *skel = open_pacer(PACER_CLOCK_PRECISE, 24, 1000000000ULL);
	struct pacer_budget_cfg want;
	uint64_t st[PACER_STAT_MAX], slack, share;
	unsigned long good, flood, back;
	int fd;

	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_seen,
						  PACER_BUDGET_DEFAULT_SEEN_LINES), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(skel), 0);
	fd = bpf_program__fd(skel->progs.xdp_pacer);
	want = skel->data_budget->pacer_budget_cfg;
	budget_cfg(&want, "2560/60s", NULL, NULL, "50");
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	ck_assert_uint_gt(want.batch, 1);
	slack = pacer_budget_batch_slack(want.batch, (uint32_t)libbpf_num_possible_cpus());

	good = burst_two_cpus(fd, 0x0f000000u, 0x0f100000u, RES_GOOD);
	ck_assert_uint_eq(good, 2 * RES_GOOD);
	usleep(1100000); /* the interval: the good sources may send again */
	flood = burst_two_cpus(fd, 0xa0000000u, 0xa1000000u, RES_FLOOD);
	/* the good sources come back on the other CPU */
	back = burst_two_cpus(fd, 0x0f100000u, 0x0f000000u, RES_GOOD);
	counters(skel, st);
	share = want.new_limit - 2 * RES_GOOD;
	printf("    reserve 50 %% of 2560, batch %u: %lu of %d new sources admitted (share %llu + "
	       "slack %llu), then %lu of %d returning sources; %llu returning admissions\n",
	       want.batch, flood, 2 * RES_FLOOD, (unsigned long long)share,
	       (unsigned long long)slack, back, 2 * RES_GOOD,
	       (unsigned long long)st[PACER_STAT_BUDGET_RETURNING]);
	fflush(stdout);
	ck_assert_uint_eq(back, 2 * RES_GOOD);
	ck_assert_uint_le(flood, share + slack);
	ck_assert_uint_ge(flood + 2 * want.batch, share);
	ck_assert_uint_eq(st[PACER_STAT_BUDGET_RETURNING], 2 * RES_GOOD);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

/* ---- one CPU: counters, reserve, live change ---- */

START_TEST(test_budget_counters_reserve_and_set)
{
	/* 16 us ticks, 500 us interval: a source may come back after a short sleep */
	struct xdp_pacer_bpf *skel = open_pacer(PACER_CLOCK_PRECISE, 14, 500000ULL);
	struct pacer_budget_cfg want;
	uint64_t st[PACER_STAT_MAX];
	int i;

	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_seen,
						  PACER_BUDGET_DEFAULT_SEEN_LINES), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(skel), 0);
	int fd = bpf_program__fd(skel->progs.xdp_pacer);

	/* off by default: every new source passes */
	for (i = 0; i < 20; i++)
		ck_assert_int_eq(send_one(fd, 0x0c000000u + (uint32_t)i), 2);
	counters(skel, st);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_BUDGET], 0);

	/* 10 per 60 s, half reserved: 5 new sources, then refused */
	want = skel->data_budget->pacer_budget_cfg;
	budget_cfg(&want, "10/60s", NULL, NULL, "50");
	ck_assert_uint_eq(want.new_limit, 5);
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(send_one(fd, 0x0d000000u + (uint32_t)i), 2);
	ck_assert_int_eq(send_one(fd, 0x0d000100u), 1);
	usleep(2000); /* past the per-source interval */
	/* a source the budget admitted before is returning: the reserve lets it in */
	ck_assert_int_eq(send_one(fd, 0x0d000000u), 2);
	ck_assert_int_eq(send_one(fd, 0x0d000101u), 1);
	/* a paced drop is not a budget drop */
	ck_assert_int_eq(send_one(fd, 0x0d000000u), 1);
	counters(skel, st);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_BUDGET], 2);
	ck_assert_uint_eq(st[PACER_STAT_BUDGET_RETURNING], 1);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_RECENT], 1);

	/* live: off, then a larger budget keeps the 6 in flight */
	want.limit = 0;
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	ck_assert_int_eq(send_one(fd, 0x0d000102u), 2);
	budget_cfg(&want, "8/60s", NULL, NULL, "0");
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	ck_assert_uint_eq(skel->data_budget->pacer_budget_cfg.seq % 2, 0);
	ck_assert_int_eq(send_one(fd, 0x0d000103u), 2); /* 7th in flight */
	ck_assert_int_eq(send_one(fd, 0x0d000104u), 2); /* 8th */
	ck_assert_int_eq(send_one(fd, 0x0d000105u), 1);
	/* a write in progress (odd count): fail closed */
	skel->data_budget->pacer_budget_cfg.seq |= 1;
	want.limit = 100;
	skel->data_budget->pacer_budget_cfg.limit = 100;
	ck_assert_int_eq(send_one(fd, 0x0d000106u), 1);
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	counters(skel, st);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_BUDGET], 4);
	ck_assert_uint_eq(st[PACER_STAT_BUDGET_NO_BUCKET], 0);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

/* ---- the order of the stages ---- */

/* _i: backend (i % 3), placement, policy (bits 0, 1 of i / 3) */
#define STATES (2 * 2 * PACER_BACKEND_MAX)
static struct state_opts state_of(int i, uint32_t lines_log2)
{
	struct state_opts so = {
		.backend = (uint32_t)(i % PACER_BACKEND_MAX),
		.placement = (uint32_t)(i / PACER_BACKEND_MAX & 1) ? PACER_PLACEMENT_SHARED
								    : PACER_PLACEMENT_PERCPU,
		.policy = (uint32_t)(i / PACER_BACKEND_MAX >> 1 & 1) ? PACER_POLICY_QUIET
								       : PACER_POLICY_PACE,
		.lines_log2 = lines_log2,
	};

	return so;
}

static const char *state_name(const struct state_opts *so)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s, %s, %s",
		 backend_name(so->backend),
		 so->placement == PACER_PLACEMENT_SHARED ? "shared" : "per-CPU",
		 so->policy == PACER_POLICY_QUIET ? "quiet" : "pace");
	return buf;
}

/*
 * A packet the budget refuses was not admitted: its source's state stays as
 * it was, under either policy (quiet restarts a source's interval for the
 * packets pacing drops, not for the ones the budget drops), so the source's
 * next packet is judged as if the refused one never came.
 */
START_TEST(test_budget_refusal_leaves_the_source_untouched)
{
	/* 16.8 ms ticks, 1 s interval: nothing here waits for it */
	struct state_opts so = state_of(_i, 8);
	struct xdp_pacer_bpf *skel = open_pacer_as(PACER_CLOCK_PRECISE, 24, 1000000000ULL, &so);
	struct pacer_budget_cfg want;
	uint64_t st[PACER_STAT_MAX];
	int fd;

	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_seen,
						  PACER_BUDGET_DEFAULT_SEEN_LINES), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(skel), 0);
	fd = bpf_program__fd(skel->progs.xdp_pacer);
	want = skel->data_budget->pacer_budget_cfg;
	budget_cfg(&want, "1/60s", NULL, NULL, "0");
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);

	ck_assert_int_eq(send_one(fd, 0x0e000001u), 2); /* A: the budget's one admission */
	ck_assert_int_eq(send_one(fd, 0x0e000002u), 1); /* B: refused by the budget */
	ck_assert_int_eq(send_one(fd, 0x0e000002u), 1); /* ... again: still the budget */
	counters(skel, st);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_BUDGET], 2);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_RECENT], 0);

	want.limit = 0; /* budget off */
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
	ck_assert_msg(send_one(fd, 0x0e000002u) == 2,
		      "%s: a source the budget refused was paced as if admitted", state_name(&so));
	/* admitted now, and written: its next packet and A's are paced */
	ck_assert_int_eq(send_one(fd, 0x0e000002u), 1);
	ck_assert_int_eq(send_one(fd, 0x0e000001u), 1);
	counters(skel, st);
	ck_assert_uint_eq(st[PACER_STAT_DROPPED_RECENT], 2);
	ck_assert_uint_eq(st[PACER_STAT_TABLE_FULL], 0);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

/*
 * Returning sources, then a flood of new ones within the interval, many
 * times what the per-source state holds: the budget refuses all but a few
 * of the flood, so the flood inserts almost nothing (the table never fills)
 * and every returning source passes pacing and the reserve after it.
 * Writing the state before the budget, the flood filled the sketch's cells
 * (the returning sources then looked recent) and the table (no entry free).
 */
#define RET_GOOD 20
#define RET_FLOOD 12000
START_TEST(test_refused_flood_leaves_returning_sources_their_state)
{
	/* sketch: 2 rows of 2^6 lines (7936 cells); table: 2^6 lines, 1024 entries; dense: 63 lines, 1512 */
	struct state_opts so = state_of(_i, 6);
	struct xdp_pacer_bpf *skel = open_pacer_as(PACER_CLOCK_PRECISE, 24, 1000000000ULL, &so);
	struct pacer_budget_cfg want;
	uint64_t st[PACER_STAT_MAX];
	unsigned passed = 0;
	int fd, i;

	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_seen,
						  PACER_BUDGET_DEFAULT_SEEN_LINES), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(skel), 0);
	fd = bpf_program__fd(skel->progs.xdp_pacer);
	want = skel->data_budget->pacer_budget_cfg;
	budget_cfg(&want, "100/60s", NULL, NULL, "50");
	budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);

	for (i = 0; i < RET_GOOD; i++)
		ck_assert_int_eq(send_one(fd, 0x0f000000u + (uint32_t)i), 2);
	usleep(1100000); /* the interval: the good sources may send again */
	for (i = 0; i < RET_FLOOD; i++)
		ck_assert_int_ge(send_one(fd, 0xa0000000u + (uint32_t)i * 2654435761u % 0x10000000u), 1);
	for (i = 0; i < RET_GOOD; i++)
		passed += send_one(fd, 0x0f000000u + (uint32_t)i) == 2;
	counters(skel, st);
	printf("    %s: %u of %d returning sources passed after %d new ones; passed %llu, "
	       "budget drops %llu, paced drops %llu, table full %llu\n", state_name(&so), passed,
	       RET_GOOD, RET_FLOOD, (unsigned long long)st[PACER_STAT_PASSED],
	       (unsigned long long)st[PACER_STAT_DROPPED_BUDGET],
	       (unsigned long long)st[PACER_STAT_DROPPED_RECENT],
	       (unsigned long long)st[PACER_STAT_TABLE_FULL]);
	/* the flood took the 30 the reserve leaves to new sources, no more */
	ck_assert_uint_eq(st[PACER_STAT_PASSED], 2 * RET_GOOD + 30);
	ck_assert_uint_eq(passed, RET_GOOD);
	ck_assert_uint_eq(st[PACER_STAT_TABLE_FULL], 0);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("global budget (BPF_PROG_TEST_RUN)");
	TCase *one = tcase_create("one CPU"), *two = tcase_create("two CPUs");

	tcase_add_test(one, test_budget_counters_reserve_and_set);
	tcase_add_loop_test(one, test_budget_refusal_leaves_the_source_untouched, 0, STATES);
	tcase_set_timeout(one, 120);
	tcase_add_loop_test(one, test_refused_flood_leaves_returning_sources_their_state, 0, STATES);
	suite_add_tcase(s, one);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		tcase_set_timeout(two, 120);
		tcase_add_loop_test(two, test_budget_two_cpus, 0, 2);
		tcase_add_test(two, test_reserve_with_batches_two_cpus);
		suite_add_tcase(s, two);
	} else {
		printf("two-CPU test skipped: this machine has %ld CPU\n",
		       sysconf(_SC_NPROCESSORS_ONLN));
	}
	return run_suite(s);
}
