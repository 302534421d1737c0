// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared sketch and the shared tables under two CPUs at once: the pace guarantee must hold
 * exactly, however the CPUs interleave.  Two threads, pinned to CPU 0 and
 * CPU 1, run the real object with BPF_PROG_TEST_RUN on the same sources at
 * the same moments: a hot set that both send every few hundred
 * microseconds, and a cold pool whose lines sit idle for epochs and are then
 * re-based (from two epochs stale) by both CPUs at once.  The precise clock,
 * a 65.5 us tick and a 1 ms interval make an epoch 4.2 ms.  Every packet is
 * recorded through the ring buffer; for every source, admitted packets must
 * be at least the interval apart in the datapath's own clock.  With --rate
 * 3/3ms instead (emission 1 ms, tolerance 2 ms: bursts of 3 at once, then
 * one per 17 ticks), every source's admitted packets must conform to that
 * GCRA.  With a global budget (that refuses some packets, with a reserve),
 * the same: pacing judges, the budget's lock comes between the judgement
 * and the write, and the write must still admit a source on one CPU only;
 * the records then carry the budget's admission time, the time written.
 *
 * Concurrency makes this a stress test, not a proof: it fails reliably when
 * the re-base is a plain read-modify-write or admission is not exclusive.
 * A CPU stalled for epochs between reading the clock and touching the
 * sketch would need a 4 ms stall at this tick; unit_sketch covers that
 * case deterministically.
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
#include "pacer_rate.h"
#include "pacer_place.h"
#include "pacer_names.h"
#include "budget_cfg.h"
#include "lib_opts.h"
#include "xdp_pacer.skel.h"
#include "lib_frames.h"

#define HOT 64                   /* sources both CPUs send all the time */
#define COLD 4096                /* sources each sent once in a while, by both CPUs */
#define SOURCES (HOT + COLD)
#define PACKETS_PER_CPU 60000u
#define TICK_SHIFT 16            /* 65.5 us: the lag tolerance is 64 ticks, 4.2 ms */
#define INTERVAL_NS 1000000ULL   /* 1 ms: threshold 17 ticks */
#define RATE_N 3                 /* rate mode: 3 per 3 ms, the same emission interval */
#define RATE_T_NS (RATE_N * INTERVAL_NS)
#define LINES_LOG2 8             /* 256 lines a row: cold lines go stale */
#define DENSE_LINES 255          /* the dense table's: 6120 entries, any count */
#define RING_BYTES (128u << 20)
/*
 * Hammer mode: both CPUs run the same two sources in kernel loops
 * (BPF_PROG_TEST_RUN's repeat), a packet every ~100 ns each, so when a
 * source's entry expires both CPUs try to admit it within a few packets of
 * each other.
 */
#define HAMMER_REPEAT 100u
#define HAMMER_PACKETS_PER_CPU 150000u
#define HAMMER_MIN_PASSES 5u  /* admissions each CPU must have made for the race to be tested */
#define HAMMER_MAX_ROUNDS 8

struct race {
	struct xdp_pacer_bpf *skel;
	int prog_fd;
	int hammer;
	pthread_barrier_t start;
};

struct sender {
	struct race *r;
	int cpu;
	int err;
	unsigned long passed;
};

static void *send_loop(void *arg)
{
	struct sender *s = arg;
	cpu_set_t set;
	uint8_t f[64], out[128];
	unsigned i;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		s->err = -1;
		pthread_barrier_wait(&s->r->start);
		return NULL;
	}
	pthread_barrier_wait(&s->r->start);
	for (i = 0; s->r->hammer && i < HAMMER_PACKETS_PER_CPU / HAMMER_REPEAT; i++) {
		uint32_t src = htonl(0x0a400000u + SOURCES + (i / 500) % 2);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = sizeof(f),
			    .data_out = out, .data_size_out = sizeof(out), .repeat = HAMMER_REPEAT);

		frame_v4(f, src);
		if (bpf_prog_test_run_opts(s->r->prog_fd, &o)) {
			s->err = -errno;
			return NULL;
		}
	}
	for (i = 0; !s->r->hammer && i < PACKETS_PER_CPU; i++) {
		/*
		 * Every fourth packet is the next cold source (both CPUs walk the
		 * pool in step); the rest are hot, in different orders per CPU.
		 */
		uint32_t n = i % 4 == 3 ? HOT + (i / 4) % COLD
				       : (s->cpu ? (i * 7u) % HOT : i % HOT);
		uint32_t src = htonl(0x0a400000u + n);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = sizeof(f),
			    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);

		frame_v4(f, src);
		if (bpf_prog_test_run_opts(s->r->prog_fd, &o)) {
			s->err = -errno;
			return NULL;
		}
		s->passed += o.retval == 2 /* XDP_PASS */;
	}
	return NULL;
}

struct pass {
	uint32_t src;
	uint64_t ts;
};

struct check_state {
	struct pass *pass;
	unsigned long records, passes, cap, cpu_passes[2];
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct check_state *c = ctx;
	const struct pacer_record *rec = data;
	uint32_t a;

	if (len < sizeof(*rec))
		return 0;
	c->records++;
	if (rec->verdict != PACER_REC_PASS || c->passes >= c->cap)
		return 0;
	if (rec->cpu < 2)
		c->cpu_passes[rec->cpu]++;
	memcpy(&a, rec->addr, 4);
	c->pass[c->passes].src = ntohl(a) - 0x0a400000u;
	c->pass[c->passes].ts = rec->ts_ns;
	c->passes++;
	return 0;
}

static int by_source_then_time(const void *x, const void *y)
{
	const struct pass *a = x, *b = y;

	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/*
 * _i: backend (sketch, table, dense) + 3 x hammer + 6 x rate + 12 x budget:
 * each must keep admission exclusive.
 */
#define RACE_CASE(backend, hammer, rate, budget) \
	((backend) + PACER_BACKEND_MAX * ((hammer) + 2 * (rate) + 4 * (budget)))

START_TEST(test_pace_guarantee_under_two_cpus)
{
	uint32_t backend = (uint32_t)(_i % PACER_BACKEND_MAX);
	int hammer = _i / PACER_BACKEND_MAX % 2, rate = _i / PACER_BACKEND_MAX / 2 % 2;
	int budget = _i / PACER_BACKEND_MAX / 4;
	unsigned long per_cpu_packets = hammer ? HAMMER_PACKETS_PER_CPU : PACKETS_PER_CPU;
	struct pacer_layout lay = {
		.magic = PACER_LAYOUT_MAGIC, .abi_version = PACER_ABI_VERSION,
		.rows = backend == PACER_BACKEND_SKETCH ? 4 : 1,
		.kind = PACER_LAYOUT_ROWS, .placement = PACER_PLACEMENT_SHARED,
		.clock = PACER_CLOCK_PRECISE, .tick_shift = TICK_SHIFT, .lines_log2 = LINES_LOG2,
		.copies = 1, .backend = backend, .on_full = PACER_TBL_FULL_DROP,
		.lines = backend == PACER_BACKEND_DENSE ? DENSE_LINES : 0,
	};
	struct check_state c = { 0 };
	unsigned long violations = 0, j;
	uint64_t closest = 0, tat;
	struct sender s[2] = { { .cpu = 0 }, { .cpu = 1 } };
	struct pacer_counters *per_cpu;
	struct ring_buffer *rb;
	struct race r = { 0 };
	struct pacer_config *cfg;
	uint64_t seen = 0, lost = 0, rebased = 0, races = 0, budget_drops = 0;
	uint32_t zero = 0;
	int ncpus = libbpf_num_possible_cpus(), i, k, rounds = 0;

	r.skel = xdp_pacer_bpf__open();
	ck_assert_ptr_nonnull(r.skel);
	r.skel->rodata->pacer_layout = lay;
	cfg = &r.skel->data->pacer_cfg;
	cfg->interval_ns = INTERVAL_NS;
	cfg->thresh_ticks = pacer_thresh_ticks(INTERVAL_NS, TICK_SHIFT);
	if (rate) {
		struct pacer_rate pr;

		ck_assert_int_eq(pacer_rate_ticks(RATE_N, RATE_T_NS, TICK_SHIFT,
						  pacer_rate_max_sat(backend), &pr), 0);
		cfg->interval_ns = RATE_T_NS;
		cfg->rate_n = RATE_N;
		cfg->thresh_ticks = pr.thresh;
		cfg->burst_ticks = pr.burst;
	}
	cfg->policy = PACER_POLICY_PACE;
	cfg->prefix4 = 32;
	cfg->prefix6 = 64;
	cfg->hash_key[0] = 0x0123456789abcdefULL;
	cfg->hash_key[1] = 0xfedcba9876543211ULL;
	cfg->sample_src_thresh = 1ULL << 32; /* every source, every packet */
	ck_assert_int_eq(bpf_map__set_max_entries(r.skel->maps.pacer_sk,
						  (uint32_t)PACER_LAYOUT_LINES(lay)), 0);
	ck_assert_int_eq(bpf_map__set_max_entries(r.skel->maps.pacer_events, RING_BYTES), 0);
	r.skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(r.skel->maps.pacer_seen,
						  PACER_BUDGET_DEFAULT_SEEN_LINES), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(r.skel), 0);
	if (budget) {
		/* about half of what pacing admits here: refusals and admissions on both CPUs */
		struct pacer_budget_cfg want = r.skel->data_budget->pacer_budget_cfg;

		budget_cfg(&want, hammer ? "10/100ms" : "50/1ms", NULL, NULL, "50");
		budget_cfg_store(&r.skel->data_budget->pacer_budget_cfg, &want);
	}
	r.prog_fd = bpf_program__fd(r.skel->progs.xdp_pacer);
	r.hammer = hammer;

	ck_assert_int_eq(pthread_barrier_init(&r.start, NULL, 2), 0);
	/* Every record's pass, in all rounds (a hammer round passes a few dozen). */
	c.cap = (hammer ? HAMMER_MAX_ROUNDS : 1) * 2 * per_cpu_packets;
	c.pass = calloc(c.cap, sizeof(*c.pass));
	ck_assert_ptr_nonnull(c.pass);
	rb = ring_buffer__new(bpf_map__fd(r.skel->maps.pacer_events), on_record, &c, NULL);
	ck_assert_ptr_nonnull(rb);
	/*
	 * A hammer round lasts some 20 ms: where the machine is busy (CI's
	 * qemu guests beside it), one sender can be off its CPU for most of
	 * it and admit almost nothing, and the round tested no race.  Rounds
	 * are sent until both CPUs admitted, every round's admissions checked.
	 */
	do {
		pthread_t t[2];

		for (i = 0; i < 2; i++) {
			s[i].r = &r;
			ck_assert_int_eq(pthread_create(&t[i], NULL, send_loop, &s[i]), 0);
		}
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		ck_assert_msg(s[0].err == 0 && s[1].err == 0, "sender failed: %d %d", s[0].err,
			      s[1].err);
		while (ring_buffer__consume(rb) > 0)
			;
		rounds++;
	} while (hammer && rounds < HAMMER_MAX_ROUNDS &&
		 (c.cpu_passes[0] <= HAMMER_MIN_PASSES || c.cpu_passes[1] <= HAMMER_MIN_PASSES));
	ring_buffer__free(rb);

	per_cpu = calloc((size_t)ncpus, sizeof(*per_cpu));
	ck_assert_ptr_nonnull(per_cpu);
	ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(r.skel->maps.pacer_stats), &zero, per_cpu), 0);
	for (k = 0; k < ncpus; k++) {
		seen += per_cpu[k].c[PACER_STAT_SEEN];
		lost += per_cpu[k].c[PACER_STAT_RECORD_LOST];
		rebased += per_cpu[k].c[PACER_STAT_LINE_REFRESH];
		races += per_cpu[k].c[PACER_STAT_TABLE_RACE];
		budget_drops += per_cpu[k].c[PACER_STAT_DROPPED_BUDGET];
	}
	free(per_cpu);

	/* Records come in reservation order, not clock order: sort per source. */
	qsort(c.pass, c.passes, sizeof(*c.pass), by_source_then_time);
	for (j = 1; j < c.passes; j++) {
		if (c.pass[j].src == c.pass[j - 1].src &&
		    c.pass[j].ts - c.pass[j - 1].ts < INTERVAL_NS && !rate) {
			uint64_t gap = c.pass[j].ts - c.pass[j - 1].ts;

			violations++;
			if (!closest || gap < closest)
				closest = gap;
		}
	}
	/* Rate: each source's admissions through the exact GCRA(T/N, (N-1)T/N). */
	for (j = 0, tat = 0; rate && j < c.passes; j++) {
		const uint64_t tau = RATE_T_NS - INTERVAL_NS;

		if (j && c.pass[j].src == c.pass[j - 1].src && c.pass[j].ts + tau < tat) {
			violations++;
			if (!closest || tat - tau - c.pass[j].ts < closest)
				closest = tat - tau - c.pass[j].ts; /* how early */
		}
		if (!j || c.pass[j].src != c.pass[j - 1].src || c.pass[j].ts > tat)
			tat = c.pass[j].ts;
		tat += INTERVAL_NS;
	}
	free(c.pass);
	printf("    %s%s%s%s: %d round(s), %lu packets, %lu passed on CPU 0 + %lu on CPU 1, %llu line re-bases, "
	       "%llu lost table claims, %llu budget drops, %lu records, %lu violations "
	       "(closest %llu ns)\n",
	       backend_name(backend), hammer ? " (hammer)" : "",
	       rate ? ", --rate 3/3ms" : "", budget ? ", budget" : "", rounds,
	       (unsigned long)seen, c.cpu_passes[0], c.cpu_passes[1], (unsigned long long)rebased,
	       (unsigned long long)races, (unsigned long long)budget_drops, c.records, violations,
	       (unsigned long long)closest);
	ck_assert_uint_eq(seen, (unsigned long)rounds * 2 * per_cpu_packets);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(c.records, (unsigned long)rounds * 2 * per_cpu_packets);
	if (!hammer)
		ck_assert_uint_eq(c.passes, s[0].passed + s[1].passed);
	/* The stress must have stressed: re-bases (sketch) and admissions on both CPUs. */
	if (backend == PACER_BACKEND_SKETCH && !hammer)
		ck_assert_uint_gt(rebased, 1000);
	ck_assert_uint_gt(c.cpu_passes[0], hammer ? HAMMER_MIN_PASSES : 1000);
	ck_assert_uint_gt(c.cpu_passes[1], hammer ? HAMMER_MIN_PASSES : 1000);
	if (budget)
		ck_assert_uint_gt(budget_drops, hammer ? 5 : 1000);
	ck_assert_msg(violations == 0, "%lu admitted packets %s (by %llu ns at the closest)",
		      violations, rate ? "break the GCRA" : "closer than the interval",
		      (unsigned long long)closest);
	pthread_barrier_destroy(&r.start);
	xdp_pacer_bpf__destroy(r.skel);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shared sketch, two CPUs (BPF_PROG_TEST_RUN)");
	TCase *tc = tcase_create("race");

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("SKIP: needs two online CPUs, this machine has %ld\n",
		       sysconf(_SC_NPROCESSORS_ONLN));
		return 77;
	}
	tcase_set_timeout(tc, 300);
	/*
	 * Every backend; hammer mode for the tables only: their race window (a
	 * scan of two lines) is too short for the mixed stream to hit.  The
	 * sketch is not hammered: its senders can block in synchronize_rcu()
	 * for minutes.  --rate: the same, every source's admissions through the
	 * exact GCRA.  With a budget between the judgement and the write: the
	 * same, all of the above.
	 */
	for (int rate = 0; rate < 2; rate++)
		for (int budget = 0; budget < 2; budget++) {
			tcase_add_loop_test(tc, test_pace_guarantee_under_two_cpus,
					    RACE_CASE(0, 0, rate, budget),
					    RACE_CASE(PACER_BACKEND_MAX, 0, rate, budget));
			tcase_add_loop_test(tc, test_pace_guarantee_under_two_cpus,
					    RACE_CASE(PACER_BACKEND_TABLE, 1, rate, budget),
					    RACE_CASE(PACER_BACKEND_MAX, 1, rate, budget));
		}
	suite_add_tcase(s, tc);
	return run_suite(s);
}
