// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The real XDP object under BPF_PROG_TEST_RUN with crafted frames: parsing
 * (every truncation of every header), verdicts, prefix keys, pace vs quiet,
 * live changes.  Time is moved by writing old ticks into the sketch, never
 * by sleeping.
 */
#define _GNU_SOURCE
#include <check.h>
#include <sched.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pacer_sketch.h"
#include "frame.h"
#include "pacer_budget.h"
#include "pacer_place.h"
#include "pacer_table.h"
#include "pacer_rate.h"
#include "ticks.h"
#include "layout.h"
#include "two_choice_sim.h"
#include "xdp_pacer.skel.h"
#include "prog_skel.h"

static const __u64 test_key[2] = { 0x1111222233334445ULL, 0x5555666677778889ULL };

struct fixture {
	struct xdp_pacer_bpf *skel;
	int prog_fd, ncpus;
	struct pacer_line *sk; /* the sketch map, mmapped: every copy */
	size_t sk_len;
	uint32_t lines;        /* lines per copy */
	struct pacer_layout lay;
};

static struct fixture fx;
/* The clock fixture_load() builds with; tests run on the production default. */
static uint32_t fx_clock = PACER_CLOCK_CACHED;
static uint32_t fx_tick_shift = 25;
/*
 * The backend fixture_load() builds (table: lines_log2 fx_table_lines_log2,
 * rows 1; dense: fx_dense_lines lines).
 */
static uint32_t fx_backend = PACER_BACKEND_SKETCH, fx_on_full = PACER_TBL_FULL_DROP;
static uint32_t fx_table_lines_log2 = 10, fx_dense_lines = 1023;
/* Load the sweep's probe program (not loaded by default) too. */
static int fx_probe;

static void fixture_load(uint32_t kind, uint32_t placement, uint32_t rows, uint32_t policy,
			 uint32_t malformed, uint32_t prefix4, uint32_t prefix6, int zero_key)
{
	struct pacer_layout lay = {
		.magic = PACER_LAYOUT_MAGIC, .abi_version = PACER_ABI_VERSION, .rows = rows,
		.kind = kind, .placement = placement, .clock = fx_clock,
		.tick_shift = fx_tick_shift, .lines_log2 = 10,
		.copies = placement == PACER_PLACEMENT_PERCPU ? (uint32_t)libbpf_num_possible_cpus() : 1,
		.backend = fx_backend, .on_full = fx_on_full,
	};
	struct pacer_config *cfg;
	uint32_t lines;

	if (fx_backend == PACER_BACKEND_TABLE)
		lay.lines_log2 = fx_table_lines_log2;
	if (fx_backend == PACER_BACKEND_DENSE) {
		lay.lines = fx_dense_lines;
		for (lay.lines_log2 = 0; (1u << lay.lines_log2) < lay.lines; lay.lines_log2++)
			;
	}
	lines = (uint32_t)PACER_LAYOUT_LINES(lay);
	memset(&fx, 0, sizeof(fx));
	fx.skel = xdp_pacer_bpf__open();
	ck_assert_ptr_nonnull(fx.skel);
	fx.skel->rodata->pacer_layout = lay;
	cfg = &fx.skel->data->pacer_cfg;
	cfg->interval_ns = 1000000000ULL;
	cfg->thresh_ticks = pacer_thresh_ticks(cfg->interval_ns, lay.tick_shift);
	cfg->policy = policy;
	cfg->malformed = malformed;
	cfg->prefix4 = prefix4;
	cfg->prefix6 = prefix6;
	if (!zero_key) {
		cfg->hash_key[0] = test_key[0];
		cfg->hash_key[1] = test_key[1];
	}
	ck_assert_int_eq(bpf_map__set_max_entries(fx.skel->maps.pacer_sk, lines * lay.copies), 0);
	if (fx_probe)
		ck_assert_int_eq(bpf_program__set_autoload(fx.skel->progs.pacer_sweep_probe, true), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(fx.skel), 0);
	fx.prog_fd = bpf_program__fd(fx.skel->progs.xdp_pacer);
	fx.ncpus = (int)lay.copies;
	fx.lines = lines;
	fx.sk_len = (size_t)lines * lay.copies * sizeof(struct pacer_line);
	fx.sk = mmap(NULL, fx.sk_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     bpf_map__fd(fx.skel->maps.pacer_sk), 0);
	ck_assert_ptr_ne(fx.sk, MAP_FAILED);
	fx.lay = lay;
}

static void fixture_default(void)
{
	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE,
		     PACER_MALFORMED_PASS, 32, 64, 0);
}

static void fixture_unload(void)
{
	munmap(fx.sk, fx.sk_len);
	xdp_pacer_bpf__destroy(fx.skel);
	fx.skel = NULL;
}

/* ---- frames ---- */

struct frame {
	uint8_t b[256];
	size_t len;
};

/* The library's builder with this test's addresses; vlans outer tags (QinQ: 802.1ad outer). */
static size_t build(struct frame *f, const char *src, const char *dst, int vlans, uint16_t tpid,
		    uint8_t ihl)
{
	struct frame_spec s = { .dmac = { 0x02, 0, 0, 0, 0, 1 }, .smac = { 0x02, 0, 0, 0, 0, 2 },
				.vlan_tci = { 42, 42 }, .n_vlans = (unsigned)vlans, .outer_tpid = tpid,
				.ihl = ihl };
	size_t l3;

	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(parse_address(src, &s.src), 0);
	ck_assert_int_eq(parse_address(dst, &s.dst), 0);
	f->len = frame_build(f->b, sizeof(f->b), &s, &l3);
	ck_assert_uint_ne(f->len, 0);
	return l3;
}

/* Then the fields a malformed-header test sets: version, IHL, total length. */
static void build_v4(struct frame *f, const char *src, int vlans, int ihl, int version, int tot_len)
{
	size_t l3 = build(f, src, "10.99.0.1", vlans, 0, (uint8_t)(ihl < 5 ? 5 : ihl));

	f->b[l3] = (uint8_t)(version << 4 | ihl);
	f->b[l3 + 2] = (uint8_t)(tot_len >> 8);
	f->b[l3 + 3] = (uint8_t)tot_len;
}

static void v4(struct frame *f, const char *src)
{
	build_v4(f, src, 0, 5, 4, 28);
}

static void build_v6(struct frame *f, const char *src, int vlans, int version)
{
	size_t l3 = build(f, src, "fd00:99::1", vlans, FRAME_ETH_P_8021Q, 0);

	f->b[l3] = (uint8_t)(version << 4);
}

static int run_len(const struct frame *f, size_t len)
{
	uint8_t out[512];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int err = bpf_prog_test_run_opts(fx.prog_fd, &o);

	ck_assert_msg(err == 0, "BPF_PROG_TEST_RUN failed: %d (%s)", err, strerror(errno));
	return (int)o.retval;
}

static int run(const struct frame *f)
{
	return run_len(f, f->len);
}

static uint64_t counter(enum pacer_stat s)
{
	return skel_counter(fx.skel, s);
}

/*
 * ---- moving time: rewrite the key's cells to a chosen age ----
 * Ages are set from userspace's coarse clock; the datapath's cached clock
 * can lag it by up to one refresh, so expectations keep a tick of margin.
 */

static uint64_t now_tick(void)
{
	struct timespec ts;

	clock_gettime(fx.lay.clock == PACER_CLOCK_PRECISE ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec) >> fx.lay.tick_shift;
}

static void key_slots(const char *addr, uint32_t prefix, uint32_t idx[PACER_MAX_ROWS],
		      uint32_t cell[PACER_MAX_ROWS])
{
	uint8_t b[16] = { 0 };
	uint64_t h;

	if (strchr(addr, ':')) {
		uint64_t lo, hi;

		ck_assert_int_eq(inet_pton(AF_INET6, addr, b), 1);
		memcpy(&lo, b, 8);
		memcpy(&hi, b + 8, 8);
		h = pacer_hash_v6(test_key, lo & pacer_mask6_lo(prefix), hi & pacer_mask6_hi(prefix));
	} else {
		uint32_t a;

		ck_assert_int_eq(inet_pton(AF_INET, addr, b), 1);
		memcpy(&a, b, 4);
		h = pacer_hash_v4(test_key, a & pacer_mask4(prefix));
	}
	pacer_slots(fx.lay.kind, fx.lay.rows, fx.lay.lines_log2, h, idx, cell);
}

/* Row r's line of the key in CPU copy `cpu`. */
static struct pacer_line *copy_line(int cpu, uint32_t idx)
{
	return &fx.sk[pacer_copy_base(fx.lay.placement, fx.lay.copies, (uint32_t)cpu, fx.lines) + idx];
}

/* Make every copy of the key's cells look written `age` ticks ago. */
static void set_key_age(const char *addr, uint32_t prefix, uint32_t age)
{
	uint32_t idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS], r;
	uint64_t tick = now_tick();
	int cpu;

	key_slots(addr, prefix, idx, cell);
	for (r = 0; r < fx.lay.rows; r++) {
		for (cpu = 0; cpu < fx.ncpus; cpu++) {
			struct pacer_line *l = copy_line(cpu, idx[r]);

			if (l->epoch != pacer_epoch(tick))
				pacer_line_rebase(l, tick);
			l->cell[cell[r]] = (uint8_t)(tick - age);
		}
	}
}

/* The key's age over every CPU copy: youngest copy per row, oldest row. */
static uint32_t key_age(const char *addr, uint32_t prefix)
{
	uint32_t idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS], r, worst = 0;
	uint64_t tick = now_tick();
	int cpu;

	key_slots(addr, prefix, idx, cell);
	for (r = 0; r < fx.lay.rows; r++) {
		uint32_t best = PACER_AGE_STALE;

		for (cpu = 0; cpu < fx.ncpus; cpu++) {
			uint32_t a = pacer_cell_age(copy_line(cpu, idx[r]), cell[r], tick);

			best = a < best ? a : best;
		}
		worst = best > worst ? best : worst;
	}
	return worst;
}

/* ---- tests ---- */

START_TEST(test_first_passes_second_drops_then_passes_after_interval)
{
	struct frame f;
	uint32_t t;

	fixture_default();
	t = fx.skel->data->pacer_cfg.thresh_ticks;
	v4(&f, "10.1.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* One tick short of the threshold: still inside the interval. */
	set_key_age("10.1.0.1", 32, t - 2);
	ck_assert_int_eq(run(&f), XDP_DROP);
	set_key_age("10.1.0.1", 32, t + 1);
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* Another source is independent. */
	v4(&f, "10.1.0.2");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_uint_eq(counter(PACER_STAT_SEEN), 7);
	ck_assert_uint_eq(counter(PACER_STAT_PASSED), 3);
	ck_assert_uint_eq(counter(PACER_STAT_DROPPED_RECENT), 4);
	ck_assert_uint_eq(counter(PACER_STAT_IPV4), 7);
	fixture_unload();
}
END_TEST

/* Every layout/placement/rows combination: the same basic contract. */
static const struct variant {
	uint32_t kind, placement, rows, clock;
} variants[] = {
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 1, PACER_CLOCK_CACHED },
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_SHARED, 3, PACER_CLOCK_COARSE },
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_SHARED, 8, PACER_CLOCK_PRECISE },
	{ PACER_LAYOUT_BLOCKED, PACER_PLACEMENT_PERCPU, 4, PACER_CLOCK_CACHED },
	{ PACER_LAYOUT_BLOCKED, PACER_PLACEMENT_SHARED, 8, PACER_CLOCK_COARSE },
	{ PACER_LAYOUT_BLOCKED, PACER_PLACEMENT_SHARED, 1, PACER_CLOCK_PRECISE },
};

START_TEST(test_variants)
{
	const struct variant *v = &variants[_i];
	struct frame f;
	uint32_t t;

	fx_clock = v->clock;
	fixture_load(v->kind, v->placement, v->rows, PACER_POLICY_PACE, PACER_MALFORMED_PASS, 32, 64, 0);
	fx_clock = PACER_CLOCK_CACHED;
	t = fx.skel->data->pacer_cfg.thresh_ticks;
	build_v6(&f, "2001:db8:1:2::7", 0, 6);
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_lt(key_age("2001:db8:1:2::7", 64), 2);
	set_key_age("2001:db8:1:2::7", 64, t + 1); /* +1: the cached clock may lag a tick */
	ck_assert_int_eq(run(&f), XDP_PASS);
	v4(&f, "192.0.2.9");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	fixture_unload();
}
END_TEST

/*
 * Soon after boot with a long interval (the case: up 18 minutes,
 * interval 3600 s, so tick 2^37 ns and fewer than 64 ticks since boot): the
 * zeroed sketch must read as "never seen", so new sources pass once each.
 * The cached clock is set by hand (armed, never refreshed) to that moment;
 * the last loop runs the real precise clock with the largest tick, which is
 * the same situation on any host up less than 64 such ticks (19.5 hours).
 */
static const struct variant boot_variants[] = {
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_CLOCK_CACHED },
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_SHARED, 4, PACER_CLOCK_CACHED },
	{ PACER_LAYOUT_BLOCKED, PACER_PLACEMENT_SHARED, 2, PACER_CLOCK_CACHED },
	{ PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_CLOCK_PRECISE },
};

START_TEST(test_new_sources_pass_soon_after_boot)
{
	const struct variant *v = &boot_variants[_i];
	struct pacer_clock_state cs = { .armed = 1, .now_ns = 18 * 60 * 1000000000ULL };
	struct pacer_config *cfg;
	char addr[32];
	struct frame f;
	uint32_t zero = 0;
	int src, k;

	fx_clock = v->clock;
	fx_tick_shift = v->clock == PACER_CLOCK_CACHED ? 37 : 40;
	fixture_load(v->kind, v->placement, v->rows, PACER_POLICY_PACE, PACER_MALFORMED_PASS, 32, 64, 0);
	fx_clock = PACER_CLOCK_CACHED;
	fx_tick_shift = 25;
	cfg = &fx.skel->data->pacer_cfg;
	cfg->interval_ns = v->clock == PACER_CLOCK_CACHED ? 3600000000000ULL : 62ULL << 40;
	cfg->thresh_ticks = pacer_thresh_ticks(cfg->interval_ns, fx.lay.tick_shift);
	ck_assert_uint_ne(cfg->thresh_ticks, 0);
	if (v->clock == PACER_CLOCK_CACHED)
		ck_assert_int_eq(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero,
						     &cs, BPF_ANY), 0);
	for (src = 0; src < 5; src++) {
		snprintf(addr, sizeof(addr), "10.99.0.%d", src + 1);
		v4(&f, addr);
		for (k = 0; k < 3; k++)
			ck_assert_msg(run(&f) == (k ? XDP_DROP : XDP_PASS),
				      "source %s packet %d: wrong verdict", addr, k);
	}
	ck_assert_uint_eq(counter(PACER_STAT_PASSED), 5);
	ck_assert_uint_eq(counter(PACER_STAT_DROPPED_RECENT), 10);
	ck_assert_uint_eq(key_age("10.99.99.99", 32), PACER_AGE_STALE);
	fixture_unload();
}
END_TEST

/*
 * Targeted collisions on the real object (docs/design.md, "Targeted collisions"):
 * knowing the hash key, four crafted sources that share the victim's cell in
 * each row get the victim's first packet ever dropped; the same sources
 * crafted against another key (the real one is secret) do not.
 */
static uint32_t collider_for(const __u64 key[2], uint64_t victim_h, uint32_t row, uint32_t *next)
{
	uint32_t vl[PACER_MAX_ROWS], vc[PACER_MAX_ROWS], l[PACER_MAX_ROWS], c[PACER_MAX_ROWS];

	pacer_slots(fx.lay.kind, fx.lay.rows, fx.lay.lines_log2, victim_h, vl, vc);
	for (;; (*next)++) {
		pacer_slots(fx.lay.kind, fx.lay.rows, fx.lay.lines_log2,
			    pacer_hash_v4(key, htonl(*next)), l, c);
		if (l[row] == vl[row] && c[row] == vc[row])
			return (*next)++;
	}
}

START_TEST(test_targeted_collisions_need_the_key)
{
	static const __u64 guess[2] = { 0x0badc0ffee0ddf00ULL | 1, 0x5eed5eed5eed5eedULL | 1 };
	const __u64 *keys[2] = { test_key, guess };
	uint32_t victim = 0x0a320001u + (uint32_t)_i, next = 0x0b000000u, r;
	char addr[INET_ADDRSTRLEN];
	struct in_addr ia;
	struct frame f;

	/* Shared: the verdict must not depend on which CPU each test run lands on. */
	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_SHARED, 4, PACER_POLICY_PACE,
		     PACER_MALFORMED_PASS, 32, 64, 0);
	for (r = 0; r < fx.lay.rows; r++) {
		ia.s_addr = htonl(collider_for(keys[_i], pacer_hash_v4(keys[_i], htonl(victim)), r, &next));
		v4(&f, inet_ntop(AF_INET, &ia, addr, sizeof(addr)));
		ck_assert_int_eq(run(&f), XDP_PASS); /* a new source: admitted, writes its cells */
	}
	ia.s_addr = htonl(victim);
	v4(&f, inet_ntop(AF_INET, &ia, addr, sizeof(addr)));
	/* Key known: never seen, yet dropped.  Key guessed: passes. */
	ck_assert_int_eq(run(&f), _i == 0 ? XDP_DROP : XDP_PASS);
	fixture_unload();
}
END_TEST

START_TEST(test_prefix_masking_shares_fate)
{
	struct frame f;

	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE,
		     PACER_MALFORMED_PASS, 24, 64, 0);
	v4(&f, "10.7.7.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	v4(&f, "10.7.7.200"); /* same /24 */
	ck_assert_int_eq(run(&f), XDP_DROP);
	v4(&f, "10.7.8.1");   /* next /24 */
	ck_assert_int_eq(run(&f), XDP_PASS);
	build_v6(&f, "2001:db8:aa:bb::1", 0, 6);
	ck_assert_int_eq(run(&f), XDP_PASS);
	build_v6(&f, "2001:db8:aa:bb:ffff:1:2:3", 0, 6); /* same /64: rotating attacker */
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v6(&f, "2001:db8:aa:bc::1", 0, 6);
	ck_assert_int_eq(run(&f), XDP_PASS);
	/* Live prefix change: /32 now tells the two /24 neighbours apart. */
	fx.skel->data->pacer_cfg.prefix4 = 32;
	v4(&f, "10.7.7.99");
	ck_assert_int_eq(run(&f), XDP_PASS);
	fixture_unload();
}
END_TEST

START_TEST(test_vlan_tags_key_on_inner_source)
{
	struct frame f;

	fixture_default();
	build_v4(&f, "10.8.0.1", 1, 5, 4, 28);
	ck_assert_int_eq(run(&f), XDP_PASS);
	build_v4(&f, "10.8.0.1", 2, 5, 4, 28); /* QinQ, same source */
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v4(&f, "10.8.0.1", 0, 5, 4, 28);
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v6(&f, "fd00:8::1", 2, 6);
	ck_assert_int_eq(run(&f), XDP_PASS);
	build_v6(&f, "fd00:8::1", 1, 6);
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_eq(counter(PACER_STAT_MALFORMED_PASSED), 0);
	fixture_unload();
}
END_TEST

/* Frames whose every prefix short of a complete IP header is malformed. */
static const struct trunc_case {
	const char *name;
	int family, vlans;
	size_t complete; /* bytes needed for a complete L3 header */
} trunc_cases[] = {
	{ "ipv4", 4, 0, 14 + 20 },        { "ipv4 vlan", 4, 1, 18 + 20 },
	{ "ipv4 qinq", 4, 2, 22 + 20 },   { "ipv6", 6, 0, 14 + 40 },
	{ "ipv6 vlan", 6, 1, 18 + 40 },   { "ipv6 qinq", 6, 2, 22 + 40 },
};

START_TEST(test_every_truncation_is_malformed)
{
	const struct trunc_case *tc = &trunc_cases[_i / 2];
	uint32_t verdict = (uint32_t)(_i % 2);
	struct frame f;
	size_t len;
	uint64_t n = 0;

	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE, verdict, 32, 64, 0);
	if (tc->family == 4)
		build_v4(&f, "10.9.0.1", tc->vlans, 5, 4, 28);
	else
		build_v6(&f, "fd00:9::1", tc->vlans, 6);
	/* The kernel refuses test frames shorter than an Ethernet header. */
	for (len = ETH_HLEN; len < tc->complete; len++, n++)
		ck_assert_msg(run_len(&f, len) == (verdict ? XDP_DROP : XDP_PASS),
			      "%s truncated to %zu bytes: wrong verdict", tc->name, len);
	ck_assert_uint_eq(counter(verdict ? PACER_STAT_MALFORMED_DROPPED : PACER_STAT_MALFORMED_PASSED), n);
	ck_assert_uint_eq(counter(PACER_STAT_PASSED) + counter(PACER_STAT_DROPPED_RECENT), 0);
	/* Exactly the complete header is enough. */
	ck_assert_int_eq(run_len(&f, tc->complete), XDP_PASS);
	ck_assert_uint_eq(counter(PACER_STAT_PASSED), 1);
	fixture_unload();
}
END_TEST

START_TEST(test_invalid_headers)
{
	struct frame f;
	uint8_t *p;

	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE,
		     PACER_MALFORMED_DROP, 32, 64, 0);
	build_v4(&f, "10.10.0.1", 0, 4, 4, 28); /* IHL below 5 */
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v4(&f, "10.10.0.1", 0, 15, 4, 80); /* IHL 60 bytes, frame shorter */
	ck_assert_int_eq(run_len(&f, 14 + 40), XDP_DROP);
	build_v4(&f, "10.10.0.1", 0, 5, 6, 28); /* version 6 under the IPv4 ethertype */
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v4(&f, "10.10.0.1", 0, 5, 4, 19); /* total length shorter than the header */
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v6(&f, "fd00:10::1", 0, 4); /* version 4 under the IPv6 ethertype */
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* A third VLAN tag is not parsed: malformed rather than a bypass. */
	build_v4(&f, "10.10.0.1", 2, 5, 4, 28);
	p = f.b + 20; /* where the IPv4 header began: a third tag instead */
	memmove(p + 4, p, f.len - 20);
	p[0] = ETH_P_8021Q >> 8;
	p[1] = ETH_P_8021Q & 0xff;
	p[2] = 0;
	p[3] = 42;
	f.len += 4;
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_eq(counter(PACER_STAT_MALFORMED_DROPPED), 6);
	/* IHL with options present is fine. */
	build_v4(&f, "10.10.0.2", 0, 6, 4, 32);
	ck_assert_int_eq(run(&f), XDP_PASS);
	/* Non-IP passes and is counted, whatever the malformed verdict. */
	v4(&f, "10.10.0.3");
	f.b[12] = ETH_P_ARP >> 8;
	f.b[13] = ETH_P_ARP & 0xff;
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_uint_eq(counter(PACER_STAT_NONIP_PASSED), 2);
	ck_assert_uint_eq(counter(PACER_STAT_SEEN), 9);
	fixture_unload();
}
END_TEST

START_TEST(test_pace_vs_quiet)
{
	struct frame f;
	uint32_t policy, t;

	for (policy = 0; policy < 2; policy++) {
		fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, policy,
			     PACER_MALFORMED_PASS, 32, 64, 0);
		t = fx.skel->data->pacer_cfg.thresh_ticks;
		v4(&f, "10.11.0.1");
		/* Seen (and admitted) t-4 ticks ago: this packet falls inside the interval. */
		set_key_age("10.11.0.1", 32, t - 4);
		ck_assert_int_eq(run(&f), XDP_DROP);
		/* pace: a drop leaves the record alone; quiet: the drop restarts the clock. */
		if (policy == PACER_POLICY_PACE)
			ck_assert_uint_ge(key_age("10.11.0.1", 32), t - 4);
		else
			ck_assert_uint_le(key_age("10.11.0.1", 32), 1);
		fixture_unload();
	}
}
END_TEST

START_TEST(test_live_interval_and_policy_change)
{
	struct frame f;

	fixture_default();
	v4(&f, "10.12.0.1");
	set_key_age("10.12.0.1", 32, 10);
	ck_assert_int_eq(run(&f), XDP_DROP); /* 10 ticks < 31 */
	/* Shorten the interval live to 7 ticks (threshold 8): 10 ticks is now long enough. */
	fx.skel->data->pacer_cfg.interval_ns = 7ULL << 25;
	fx.skel->data->pacer_cfg.thresh_ticks = 8;
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* Lengthen it again: state kept, the fresh record now counts for longer. */
	fx.skel->data->pacer_cfg.thresh_ticks = 64;
	set_key_age("10.12.0.1", 32, 40);
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* Switch to quiet live: the drop now refreshes. */
	fx.skel->data->pacer_cfg.policy = PACER_POLICY_QUIET;
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_le(key_age("10.12.0.1", 32), 1);
	/* A corrupt threshold fails closed (strictest), it does not open the gate. */
	fx.skel->data->pacer_cfg.thresh_ticks = 0;
	set_key_age("10.12.0.1", 32, 50);
	ck_assert_int_eq(run(&f), XDP_DROP);
	fixture_unload();
}
END_TEST

START_TEST(test_cached_clock_is_armed_and_advances)
{
	struct pacer_clock_state cs;
	struct frame f;
	uint32_t zero = 0;
	uint64_t first;

	fixture_default();
	v4(&f, "10.14.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero, &cs), 0);
	ck_assert_uint_eq(cs.armed, 1);
	first = cs.now_ns;
	ck_assert_uint_gt(first, 0);
	usleep(30 * 1000); /* the refresh period is 8 ms at this tick: several refreshes */
	ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero, &cs), 0);
	ck_assert_uint_gt(cs.now_ns, first);
	fixture_unload();
}
END_TEST

START_TEST(test_key_drawn_in_datapath_when_loaded_without_cli)
{
	struct frame f;

	fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE,
		     PACER_MALFORMED_PASS, 32, 64, 1);
	ck_assert_uint_eq(fx.skel->data->pacer_cfg.hash_key[0], 0);
	v4(&f, "10.13.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_ne(fx.skel->data->pacer_cfg.hash_key[0], 0);
	ck_assert_uint_ne(fx.skel->data->pacer_cfg.hash_key[1], 0);
	ck_assert_uint_eq(counter(PACER_STAT_KEY_INIT), 2);
	fixture_unload();
}
END_TEST

/* Per-CPU placement: a packet handled on CPU c writes copy c of the map and no other. */
START_TEST(test_percpu_copy_is_the_running_cpus)
{
	uint32_t idx[PACER_MAX_ROWS], cell[PACER_MAX_ROWS];
	uint64_t tick;
	cpu_set_t saved, one;
	struct frame f;
	int cpu, other;

	if (libbpf_num_possible_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return; /* nothing to tell apart on one CPU */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(saved), &saved), 0);
	for (cpu = 0; cpu < 2; cpu++) {
		fixture_load(PACER_LAYOUT_ROWS, PACER_PLACEMENT_PERCPU, 4, PACER_POLICY_PACE,
			     PACER_MALFORMED_PASS, 32, 64, 0);
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
		v4(&f, "10.14.0.1");
		ck_assert_int_eq(run(&f), XDP_PASS);
		ck_assert_int_eq(run(&f), XDP_DROP);
		ck_assert_int_eq(sched_setaffinity(0, sizeof(saved), &saved), 0);
		key_slots("10.14.0.1", 32, idx, cell);
		tick = now_tick();
		for (other = 0; other < fx.ncpus; other++) {
			uint32_t age = pacer_cell_age(copy_line(other, idx[0]), cell[0], tick);

			if (other == cpu)
				ck_assert_uint_le(age, 1);
			else
				ck_assert_uint_ge(age, PACER_MAX_THRESH);
		}
		fixture_unload();
	}
}
END_TEST

/* ---- the tables (--backend table and dense) ---- */

/*
 * The table tests run on either table: tbl_backend picks it.  The dense
 * table gets odd line counts: 2 lines for lines_log2 1, else 2^lines_log2 - 1.
 */
static uint32_t tbl_backend = PACER_BACKEND_TABLE;

static void table_load(uint32_t placement, uint32_t policy, uint32_t on_full, uint32_t lines_log2)
{
	fx_backend = tbl_backend;
	fx_on_full = on_full;
	fx_table_lines_log2 = lines_log2;
	fx_dense_lines = lines_log2 == 1 ? 2 : (1u << lines_log2) - 1;
	fixture_load(PACER_LAYOUT_ROWS, placement, 1, policy, PACER_MALFORMED_PASS, 32, 64, 0);
	fx_backend = PACER_BACKEND_SKETCH;
	fx_on_full = PACER_TBL_FULL_DROP;
	fx_table_lines_log2 = 10;
	fx_dense_lines = 1023;
}

static int tbl_dense(void)
{
	return fx.lay.backend == PACER_BACKEND_DENSE;
}

/* Entries a line holds, ticks before an entry's tick wraps, the largest sat: the loaded table's. */
static uint32_t tbl_ways(void) { return tbl_dense() ? PACER_DENSE_WAYS : PACER_TBL_WAYS; }
static uint32_t tbl_wrap(void) { return tbl_dense() ? 256 : 0x10000; }
static uint32_t tbl_max_sat(void) { return tbl_dense() ? PACER_DENSE_MAX_SAT : PACER_RATE_TBL_MAX_SAT; }

/* The key's fingerprint and two lines in the loaded table. */
static uint32_t tbl_key(const char *addr, uint32_t lines[2])
{
	uint32_t a;
	uint64_t h;

	ck_assert_int_eq(inet_pton(AF_INET, addr, &a), 1);
	h = pacer_hash_v4(test_key, a);
	if (tbl_dense()) {
		pacer_dense_lines(h, fx.lay.lines, lines);
		return pacer_dense_fp(h);
	}
	pacer_tbl_lines(h, fx.lay.lines_log2, lines);
	return pacer_tbl_fp(h);
}

/* Entry i of a line, its fingerprint, and an entry of fingerprint fp at tick. */
static uint32_t tbl_get(struct pacer_line *line, uint32_t i)
{
	struct pacer_dense_line *d[2] = { (struct pacer_dense_line *)line, NULL };

	return tbl_dense() ? pacer_dense_get(d, i) : ((struct pacer_tbl_line *)line)->e[i];
}

static void tbl_set(struct pacer_line *line, uint32_t i, uint32_t e)
{
	struct pacer_dense_line *d[2] = { (struct pacer_dense_line *)line, NULL };

	if (tbl_dense())
		pacer_dense_set(d, i, e);
	else
		((struct pacer_tbl_line *)line)->e[i] = e;
}

static uint32_t tbl_fp_of(uint32_t e) { return tbl_dense() ? e >> 8 : e >> 16; }

static uint32_t tbl_entry(uint32_t fp, uint64_t tick)
{
	return tbl_dense() ? pacer_dense_entry(fp, tick) : pacer_tbl_entry((uint16_t)fp, tick);
}

/* Age every entry with the key's fingerprint in every copy by `ticks`. */
static void table_age_key(const char *addr, uint32_t ticks)
{
	uint32_t lines[2], i, j, fp = tbl_key(addr, lines);
	int cpu;

	for (cpu = 0; cpu < fx.ncpus; cpu++) {
		for (j = 0; j < 2; j++) {
			struct pacer_line *l = copy_line(cpu, lines[j]);

			for (i = 0; i < tbl_ways(); i++)
				if (tbl_fp_of(tbl_get(l, i)) == fp)
					tbl_set(l, i, tbl_entry(fp, tbl_get(l, i) - ticks));
		}
	}
}

/* _i: backend (table, dense) x placement x policy x on_full */
START_TEST(test_table_verdicts)
{
	uint32_t placement = (uint32_t)(_i / 4 % 2), policy = (uint32_t)(_i / 2 % 2);
	struct frame f, g;

	tbl_backend = _i >= 8 ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	table_load(placement, policy, (uint32_t)(_i % 2), 10);
	v4(&f, "10.21.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	build_v6(&g, "2001:db8:21::1", 0, 6);
	ck_assert_int_eq(run(&g), XDP_PASS);
	ck_assert_int_eq(run(&g), XDP_DROP);
	/* A whole interval later (threshold 31 ticks) the key passes again. */
	table_age_key("10.21.0.1", 32);
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	/* Under quiet the drop refreshed the entry: 20 ticks older is still recent. */
	table_age_key("10.21.0.1", 20);
	ck_assert_int_eq(run(&f), XDP_DROP);
	table_age_key("10.21.0.1", 20);
	ck_assert_int_eq(run(&f), policy == PACER_POLICY_QUIET ? XDP_DROP : XDP_PASS);
	fixture_unload();
}
END_TEST

/*
 * Two lines (32 entries; dense: 48): every key's two candidates.  The next
 * fresh key finds no entry: one-sided drops it, opposite evicts the oldest.
 * _i: backend x placement x on_full.
 */
START_TEST(test_table_full)
{
	uint32_t on_full = (uint32_t)(_i % 2), placement = (uint32_t)(_i / 2 % 2);
	char addr[32];
	struct frame f;
	int k;

	tbl_backend = _i >= 4 ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	table_load(placement, PACER_POLICY_PACE, on_full, 1);
	for (k = 0; k < 2 * (int)tbl_ways(); k++) {
		snprintf(addr, sizeof(addr), "10.22.0.%d", k + 1);
		v4(&f, addr);
		ck_assert_int_eq(run(&f), XDP_PASS);
	}
	v4(&f, "10.22.1.1");
	ck_assert_int_eq(run(&f), on_full == PACER_TBL_FULL_EVICT ? XDP_PASS : XDP_DROP);
	ck_assert_uint_eq(counter(PACER_STAT_TABLE_FULL), on_full == PACER_TBL_FULL_EVICT ? 0 : 1);
	ck_assert_uint_eq(counter(PACER_STAT_TABLE_EVICT), on_full == PACER_TBL_FULL_EVICT ? 1 : 0);
	/* One-sided: the admitted keys are all still recent. */
	for (k = 0; k < 2 * (int)tbl_ways() && on_full == PACER_TBL_FULL_DROP; k++) {
		snprintf(addr, sizeof(addr), "10.22.0.%d", k + 1);
		v4(&f, addr);
		ck_assert_int_eq(run(&f), XDP_DROP);
	}
	fixture_unload();
}
END_TEST

/*
 * The datapath against the simulator (the same header, plus the BPF side's
 * lookups and swaps): 4 lines (64 entries; dense: 3 lines, 72 entries),
 * 300 sources sent twice in order, all within the interval, so every
 * verdict is decided by the table alone (fresh, own, free or full).  The
 * datapath's cached clock is held still, as the simulator's is: the oldest
 * entry evict-oldest replaces depends on the ticks the entries were written
 * in, and a run stretched over several ticks (a loaded machine) made it
 * differ from the simulator's.  _i: backend x placement x on_full.
 */
START_TEST(test_table_matches_simulation)
{
	struct pacer_clock_state held = { .armed = 1, .now_ns = 5000000000ULL };
	uint32_t placement = (uint32_t)(_i / 2 % 2), on_full = (uint32_t)(_i % 2), k, a, zero = 0;
	struct two_choice_sim sim;
	struct two_choice_sim dsim;
	int mismatches = 0, drops = 0, round, dense = _i >= 4;
	uint64_t evicted, full;
	char addr[32];
	struct frame f;

	tbl_backend = dense ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	table_load(placement, PACER_POLICY_PACE, on_full, 2);
	ck_assert_int_eq(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero, &held,
					     BPF_ANY), 0);
	ck_assert_int_eq(table_sim_init(&sim, 2, 25, fx.skel->data->pacer_cfg.thresh_ticks,
					PACER_POLICY_PACE, on_full, test_key), 0);
	ck_assert_int_eq(dense_sim_init(&dsim, 3, 25, fx.skel->data->pacer_cfg.thresh_ticks,
					PACER_POLICY_PACE, on_full, test_key), 0);
	for (round = 0; round < 2; round++) {
		for (k = 0; k < 300; k++) {
			int want, got;

			snprintf(addr, sizeof(addr), "10.23.%u.%u", k / 200, k % 200 + 1);
			ck_assert_int_eq(inet_pton(AF_INET, addr, &a), 1);
			want = dense ? dense_sim_packet(&dsim, pacer_hash_v4(test_key, a), 1ULL << 40, NULL)
				     : table_sim_packet(&sim, pacer_hash_v4(test_key, a), 1ULL << 40, NULL);
			v4(&f, addr);
			got = run(&f) == XDP_DROP;
			mismatches += got != want;
			drops += got;
		}
	}
	ck_assert_int_eq(mismatches, 0);
	evicted = dense ? dsim.evicted : sim.evicted;
	full = dense ? dsim.full : sim.full;
	/* The table filled: overflow was exercised (dropped, or evicted and admitted again). */
	if (on_full == PACER_TBL_FULL_EVICT)
		ck_assert_uint_gt(evicted, 200);
	else
		ck_assert_int_gt(drops, 300);
	ck_assert_uint_eq(counter(on_full == PACER_TBL_FULL_EVICT ? PACER_STAT_TABLE_EVICT
								   : PACER_STAT_TABLE_FULL),
			  on_full == PACER_TBL_FULL_EVICT ? evicted : full);
	table_sim_free(&sim);
	dense_sim_free(&dsim);
	fixture_unload();
}
END_TEST

/* ---- --rate N/T: GCRA cells in the datapath, time moved by rewriting cells ---- */

/* Make the live config --rate n/period (with the loaded tick and backend). */
static struct pacer_rate set_rate(uint32_t n, uint64_t period)
{
	struct pacer_config *cfg = &fx.skel->data->pacer_cfg;
	struct pacer_rate r;

	ck_assert_int_eq(pacer_rate_ticks(n, period, fx.lay.tick_shift,
					  pacer_rate_max_sat(fx.lay.backend), &r), 0);
	cfg->interval_ns = period;
	cfg->rate_n = n;
	cfg->thresh_ticks = r.thresh;
	cfg->burst_ticks = r.burst;
	return r;
}

static uint32_t passes(const struct frame *f, int tries)
{
	uint32_t n = 0;

	while (tries--)
		n += run(f) == XDP_PASS;
	return n;
}

/*
 * _i: sketch rows percpu, rows shared, blocked shared, table percpu, table
 * shared, dense percpu, dense shared.  4 per 40 ticks: emission 11 ticks (10, and a tick of margin),
 * tolerance 3 * 11 + 1: a fresh source has its burst of exactly 4 at one
 * instant, then one per emission interval; an older cell (written with an
 * old tick, as time passing would) gives what pacer_rate_credits() says,
 * a long-idle one the full burst again.
 */
START_TEST(test_rate_bursts)
{
	static const uint32_t kinds[] = { PACER_LAYOUT_ROWS, PACER_LAYOUT_ROWS, PACER_LAYOUT_BLOCKED };
	int table = _i >= 3;
	uint32_t placement = _i == 0 || _i == 3 || _i == 5 ? PACER_PLACEMENT_PERCPU : PACER_PLACEMENT_SHARED;
	struct pacer_rate r;
	struct frame f, g;
	uint32_t got, age;

	fx_clock = PACER_CLOCK_PRECISE;
	tbl_backend = _i >= 5 ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	if (table)
		table_load(placement, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, 10);
	else
		fixture_load(kinds[_i], placement, 4, PACER_POLICY_PACE, PACER_MALFORMED_PASS, 32, 64, 0);
	fx_clock = PACER_CLOCK_CACHED;
	r = set_rate(4, 40ULL << fx.lay.tick_shift);
	ck_assert_uint_eq(r.emit, 11);
	ck_assert_uint_eq(r.burst, 34);
	v4(&f, "10.31.0.1");
	got = passes(&f, 8);
	ck_assert_uint_eq(got, pacer_rate_credits(r.sat, &r));
	ck_assert_uint_eq(got, 4);
	/* Another source has its own burst. */
	v4(&g, "10.31.0.2");
	ck_assert_uint_eq(passes(&g, 8), 4);
	/* The cell after the burst: 11 ticks of credit spent thrice from 34, one tick left. */
	if (!table) {
		age = key_age("10.31.0.1", 32);
		ck_assert_uint_le(age, 2);
		ck_assert_uint_ge(age, 1);
		/* 25 ticks on: two credits (25 - 11 = 14, then 3 < 12). */
		set_key_age("10.31.0.1", 32, 25);
	} else {
		table_age_key("10.31.0.1", 24); /* 1 + 24 = 25 */
	}
	ck_assert_uint_eq(passes(&f, 6), 2);
	/* A long idle: the full burst again, exactly. */
	if (!table)
		set_key_age("10.31.0.1", 32, 63);
	else
		table_age_key("10.31.0.1", tbl_max_sat() + 10);
	ck_assert_uint_eq(passes(&f, 8), 4);
	fixture_unload();
}
END_TEST

/* Write every entry with the key's fingerprint in every copy as `age` ticks old now. */
static void table_set_key_age(const char *addr, uint32_t age)
{
	uint32_t lines[2], a, i, j;
	uint64_t h, tick = now_tick();
	int cpu;

	ck_assert_int_eq(inet_pton(AF_INET, addr, &a), 1);
	h = pacer_hash_v4(test_key, a);
	pacer_tbl_lines(h, fx.lay.lines_log2, lines);
	for (cpu = 0; cpu < fx.ncpus; cpu++)
		for (j = 0; j < 2; j++) {
			struct pacer_tbl_line *l = (struct pacer_tbl_line *)copy_line(cpu, lines[j]);

			for (i = 0; i < PACER_TBL_WAYS; i++)
				if ((l->e[i] >> 16) == pacer_tbl_fp(h))
					l->e[i] = pacer_tbl_entry(pacer_tbl_fp(h), tick - age);
		}
}

/*
 * The table rates at load's default tick (_i: 50/1s, 5/1s; per-CPU,
 * shared): a fresh source gets exactly N at once; a cell k emission
 * intervals past the threshold gives k + 1; one idle for a full burst's
 * ages gives N again; a source sending faster than its rate gets one per
 * emission interval, within 1 % of T/N.
 */
START_TEST(test_rate_default_tick_table)
{
	static const struct {
		uint32_t n;
		uint64_t period;
	} rates[] = { { 50, 1000000000ULL }, { 5, 1000000000ULL } };
	uint32_t n = rates[_i / 2].n, k;
	uint64_t period = rates[_i / 2].period;
	uint32_t placement = _i % 2 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	struct pacer_rate r;
	struct frame f;
	char err[256];

	fx_tick_shift = pacer_default_rate_tick_shift(n, period, PACER_BACKEND_TABLE);
	fx_clock = PACER_CLOCK_PRECISE;
	tbl_backend = PACER_BACKEND_TABLE; /* the dense table's 8-bit ages hold no N/T within 1 % */
	table_load(placement, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, 10);
	fx_clock = PACER_CLOCK_CACHED;
	fx_tick_shift = 25;
	ck_assert_int_eq(rate_fit(n, period, fx.lay.tick_shift, PACER_BACKEND_TABLE, &r, err, sizeof(err)), 0);
	r = set_rate(n, period);
	/* The spacing is T/N within 1 %, never less. */
	ck_assert_uint_ge((uint64_t)r.emit << fx.lay.tick_shift, period / n);
	ck_assert_uint_le(((uint64_t)r.emit << fx.lay.tick_shift) * 99, period / n * 100);
	v4(&f, "10.34.0.1");
	ck_assert_uint_eq(passes(&f, n + 5), n);
	for (k = 0; k < 3; k++) {
		table_set_key_age("10.34.0.1", r.thresh + k * r.emit);
		ck_assert_uint_eq(passes(&f, k + 4), k + 1);
	}
	/* Flooding: every emission interval exactly one (ages written, not waited for). */
	for (k = 0; k < 20; k++) {
		table_set_key_age("10.34.0.1", r.thresh);
		ck_assert_uint_eq(passes(&f, 3), 1);
	}
	table_set_key_age("10.34.0.1", r.sat + 1);
	ck_assert_uint_eq(passes(&f, n + 5), n);
	fixture_unload();
}
END_TEST

/* ---- the tables' sweep (bpf/lib/sweep.h) ---- */

/* Entries with the key's fingerprint, over both lines of every copy. */
static uint32_t table_key_entries(const char *addr)
{
	uint32_t lines[2], i, j, n = 0, fp = tbl_key(addr, lines);
	int cpu;

	for (cpu = 0; cpu < fx.ncpus; cpu++)
		for (j = 0; j < 2; j++)
			for (i = 0; i < tbl_ways(); i++)
				n += tbl_fp_of(tbl_get(copy_line(cpu, lines[j]), i)) == fp;
	return n;
}

/* The sweep's timer state (pacer_clock's element 1), or armed = ~0: never armed by packets. */
static void sweep_state_set(uint64_t armed)
{
	struct pacer_clock_state s = { .armed = armed };
	uint32_t elem = 1;

	ck_assert_int_eq(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &elem, &s,
					     BPF_ANY), 0);
}

/* Like table_load(), with the sweep's probe program loaded too. */
static void table_load_probe(uint32_t placement)
{
	fx_backend = tbl_backend;
	fx_table_lines_log2 = 10;
	fx_probe = 1;
	fixture_load(PACER_LAYOUT_ROWS, placement, 1, PACER_POLICY_PACE, PACER_MALFORMED_PASS, 32, 64, 0);
	fx_probe = 0;
	fx_backend = PACER_BACKEND_SKETCH;
}

/* One sweep round through the probe program; its XDP verdict (PASS: a round ran). */
static int sweep_probe_run(void)
{
	struct frame f;
	LIBBPF_OPTS(bpf_test_run_opts, o);

	v4(&f, "10.99.99.1");
	o.data_in = f.b;
	o.data_size_in = (uint32_t)f.len;
	ck_assert_int_eq(bpf_prog_test_run_opts(bpf_program__fd(fx.skel->progs.pacer_sweep_probe), &o), 0);
	return (int)o.retval;
}

/* Every line of every copy: what one whole pass of the sweep visits. */
static uint64_t sweep_all_lines(void)
{
	return (uint64_t)fx.lines * (fx.lay.placement == PACER_PLACEMENT_PERCPU ? fx.lay.copies : 1);
}

/* Rounds through the probe until the sweep has walked every line of every copy once. */
static void sweep_probe_all(void)
{
	uint64_t lines = sweep_all_lines();
	struct pacer_tbl_sweep plan;
	uint64_t k;

	if (tbl_dense())
		ck_assert_int_eq(pacer_dense_sweep_plan(lines, fx.lay.tick_shift, &plan), 0);
	else
		pacer_tbl_sweep_plan(lines, fx.lay.tick_shift, &plan);
	ck_assert_uint_ge(plan.chunk, 1);
	for (k = 0; k < (lines + plan.chunk - 1) / plan.chunk; k++)
		ck_assert_int_eq(sweep_probe_run(), XDP_PASS);
}

/*
 * Issue 20's long-idle aliasing (_i / 2 % 3: per-CPU, shared on the precise
 * clock, per-CPU on the coarse one; odd: no sweep; from 6: the dense
 * table, 1023 lines).  A source spends its burst, goes idle past the
 * largest sat (expired), and comes back after exactly 2^16 ticks (dense:
 * 2^8): its entry's tick reads as written a moment ago.  Without the sweep
 * it gets nothing (the defect, shown so the test is known to reproduce
 * it); with a sweep round while it is expired its entry is gone in every
 * copy, and it gets its full burst of exactly N.
 */
START_TEST(test_sweep_clears_before_the_tick_wraps)
{
	uint32_t placement = _i / 2 % 3 == 1 ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	int sweep = !(_i % 2);
	uint64_t rounds, held, g_tick;
	uint32_t g_earned;
	struct frame f, g;

	tbl_backend = _i >= 6 ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	fx_clock = _i / 2 % 3 == 2 ? PACER_CLOCK_COARSE : PACER_CLOCK_PRECISE;
	table_load_probe(placement);
	fx_clock = PACER_CLOCK_CACHED;
	sweep_state_set(~0ULL);
	set_rate(4, 40ULL << fx.lay.tick_shift);
	v4(&f, "10.35.0.1");
	v4(&g, "10.35.0.2");
	ck_assert_uint_eq(passes(&f, 8), 4);
	g_tick = now_tick();
	ck_assert_uint_eq(passes(&g, 8), 4);
	ck_assert_uint_ge(table_key_entries("10.35.0.1"), 1);
	/* A sweep now leaves fresh entries alone; its counters say what it did. */
	sweep_probe_all();
	ck_assert_uint_ge(table_key_entries("10.35.0.1"), 1);
	ck_assert_uint_ge(table_key_entries("10.35.0.2"), 1);
	rounds = counter(PACER_STAT_SWEEP_ROUNDS);
	ck_assert_uint_ge(rounds, 1);
	ck_assert_uint_eq(counter(PACER_STAT_SWEEP_LINES), sweep_all_lines());
	ck_assert_uint_eq(counter(PACER_STAT_SWEEP_CLEARED), 0);
	/* Idle past sat: expired (the next packet would get a full burst). */
	held = table_key_entries("10.35.0.1");
	table_age_key("10.35.0.1", tbl_max_sat() + 10);
	if (sweep) {
		sweep_probe_all();
		ck_assert_uint_eq(table_key_entries("10.35.0.1"), 0);
		ck_assert_uint_ge(table_key_entries("10.35.0.2"), 1); /* still held */
		ck_assert_uint_eq(counter(PACER_STAT_SWEEP_ROUNDS), 2 * rounds);
		ck_assert_uint_eq(counter(PACER_STAT_SWEEP_LINES), 2 * sweep_all_lines());
		ck_assert_uint_eq(counter(PACER_STAT_SWEEP_CLEARED), held);
	}
	/* Idle 2^16 (dense: 2^8) ticks in all: a surviving entry's tick wrapped to "just now". */
	table_age_key("10.35.0.1", tbl_wrap() - tbl_max_sat() - 10);
	if (sweep)
		ck_assert_uint_eq(passes(&f, 8), 4);
	else
		ck_assert_uint_lt(passes(&f, 8), 4);
	/*
	 * g's entry was kept: g has only what time earned it since its burst
	 * (one per 11 ticks; the test runs on the real clock here, and a loaded
	 * machine stretches it past a credit), never a fresh burst.
	 */
	g_earned = (uint32_t)((now_tick() - g_tick + 1) / 11);
	ck_assert_uint_le(passes(&g, 8), g_earned);
	fixture_unload();
}
END_TEST

/*
 * The real timer, armed by the first packet, on the cached clock held still
 * by the test (table: tick 2^12 ns, a full sweep every 98.6 ms; dense, _i 1:
 * tick 2^16 ns, every 4.2 ms): it clears an entry idle past the largest
 * sat the table holds in every copy and leaves one only past the rate's own.
 */
START_TEST(test_sweep_timer_runs)
{
	struct pacer_clock_state cs = { .armed = 1, .now_ns = 5000000000ULL };
	uint32_t zero = 0, waited, n2 = _i ? 5 : 8;
	uint64_t held;
	struct pacer_rate r;
	struct frame f, g;

	tbl_backend = _i ? PACER_BACKEND_DENSE : PACER_BACKEND_TABLE;
	fx_tick_shift = _i ? 16 : 12;
	table_load(PACER_PLACEMENT_PERCPU, PACER_POLICY_PACE, PACER_TBL_FULL_DROP, 10);
	fx_tick_shift = 25;
	ck_assert_int_eq(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero, &cs,
					     BPF_ANY), 0);
	r = set_rate(4, 40ULL << fx.lay.tick_shift);
	v4(&f, "10.36.0.1");
	v4(&g, "10.36.0.2");
	ck_assert_uint_eq(passes(&f, 8), 4);
	ck_assert_uint_eq(passes(&g, 8), 4);
	/*
	 * 10.36.0.1 idle past the largest sat the table holds: swept.
	 * 10.36.0.2 only past this rate's: a class's limit or a live `set`
	 * may still need it, so it stays.
	 */
	table_age_key("10.36.0.1", tbl_max_sat() + 10);
	table_age_key("10.36.0.2", r.sat + 10);
	ck_assert_uint_lt(r.sat + 10, tbl_max_sat());
	r = set_rate(n2, 10ULL * n2 << fx.lay.tick_shift);
	held = table_key_entries("10.36.0.1");
	for (waited = 0; waited < 3000 && table_key_entries("10.36.0.1"); waited += 10)
		usleep(10 * 1000);
	ck_assert_msg(!table_key_entries("10.36.0.1"), "expired entry not swept in %u ms", waited);
	ck_assert_uint_ge(table_key_entries("10.36.0.2"), 1);
	/* The timer's rounds are counted too: the lines it walked, at least the entries it cleared. */
	ck_assert_uint_ge(counter(PACER_STAT_SWEEP_ROUNDS), 1);
	ck_assert_uint_ge(counter(PACER_STAT_SWEEP_LINES), 1);
	ck_assert_uint_ge(counter(PACER_STAT_SWEEP_CLEARED), held);
	ck_assert_uint_eq(passes(&f, 12), n2);
	fixture_unload();
}
END_TEST

/* N = 1 through --rate is --interval: the same ticks and the same verdicts. */
START_TEST(test_rate_one_is_interval)
{
	struct pacer_rate r;
	struct frame f;
	uint32_t t;

	fixture_default();
	t = fx.skel->data->pacer_cfg.thresh_ticks;
	r = set_rate(1, 1000000000ULL);
	ck_assert_uint_eq(r.thresh, t);
	ck_assert_uint_eq(r.burst, 0);
	v4(&f, "10.32.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	set_key_age("10.32.0.1", 32, t - 2);
	ck_assert_int_eq(run(&f), XDP_DROP);
	set_key_age("10.32.0.1", 32, t + 1);
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	ck_assert_uint_le(key_age("10.32.0.1", 32), 1); /* written at now, as before */
	fixture_unload();
}
END_TEST

/* A burst the cells cannot hold must not open the gate: the strictest rate they can. */
START_TEST(test_rate_corrupt_is_strictest)
{
	struct pacer_config *cfg;
	struct frame f;

	fixture_default();
	cfg = &fx.skel->data->pacer_cfg;
	cfg->thresh_ticks = 11;
	cfg->burst_ticks = 1000; /* sat 1010 > the sketch's 64 */
	v4(&f, "10.33.0.1");
	ck_assert_int_eq(run(&f), XDP_PASS);
	ck_assert_int_eq(run(&f), XDP_DROP);
	set_key_age("10.33.0.1", 32, 40); /* would pass at threshold 11 */
	ck_assert_int_eq(run(&f), XDP_DROP);
	fixture_unload();
}
END_TEST

/* ---- packet sampling (record_pick in bpf/lib/record.h): the feed of record, top and events ---- */

struct sampled {
	uint64_t by_src[4], other;
};

static int count_record(void *ctx, void *data, size_t size)
{
	const struct pacer_record *r = data;
	struct sampled *s = ctx;

	if (size >= sizeof(*r) && r->family == 4 && r->addr[0] == 10 && r->addr[1] == 77 &&
	    r->addr[2] == 0 && r->addr[3] < 4 && (r->flags & PACER_REC_SAMPLED_PACKET) &&
	    !(r->flags & PACER_REC_SAMPLED_SOURCE))
		s->by_src[r->addr[3]]++;
	else
		s->other++;
	return 0;
}

/*
 * Off: nothing recorded.  1/8 over 8000 packets of four sources (each
 * passed once, then dropped): about 1000 records, each source about a
 * quarter of them, drops and passes alike; all of them at 1/1.
 */
START_TEST(test_packet_sampling)
{
	struct pacer_config *cfg;
	struct sampled s = { 0 };
	struct ring_buffer *rb;
	struct frame f[4];
	char a[32];
	uint64_t rec0, n, total = 0;
	int i;

	fixture_default();
	cfg = &fx.skel->data->pacer_cfg;
	for (i = 0; i < 4; i++) {
		snprintf(a, sizeof(a), "10.77.0.%d", i);
		v4(&f[i], a);
	}
	rb = ring_buffer__new(bpf_map__fd(fx.skel->maps.pacer_events), count_record, &s, NULL);
	ck_assert_ptr_nonnull(rb);
	for (i = 0; i < 1000; i++)
		run(&f[i & 3]);
	ck_assert_uint_eq(counter(PACER_STAT_RECORDED) + counter(PACER_STAT_RECORD_LOST), 0);
	cfg->sample_pkt_thresh = (1ULL << 32) / 8;
	rec0 = counter(PACER_STAT_RECORDED);
	for (i = 0; i < 8000; i++) {
		run(&f[i & 3]);
		if (!(i & 1023))
			ring_buffer__consume(rb);
	}
	ring_buffer__consume(rb);
	n = counter(PACER_STAT_RECORDED) - rec0;
	ck_assert_uint_eq(counter(PACER_STAT_RECORD_LOST), 0);
	/* Binomial(8000, 1/8): mean 1000, sd 30. */
	ck_assert_msg(n >= 850 && n <= 1150, "%llu of 8000 sampled at 1/8", (unsigned long long)n);
	ck_assert_uint_eq(s.other, 0);
	for (i = 0; i < 4; i++) {
		ck_assert_msg(s.by_src[i] >= 180 && s.by_src[i] <= 320, "source %d: %llu of %llu", i,
			      (unsigned long long)s.by_src[i], (unsigned long long)n);
		total += s.by_src[i];
	}
	ck_assert_uint_eq(total, n);
	cfg->sample_pkt_thresh = 1ULL << 32;
	rec0 = counter(PACER_STAT_RECORDED);
	for (i = 0; i < 100; i++)
		run(&f[i & 3]);
	ck_assert_uint_eq(counter(PACER_STAT_RECORDED) - rec0, 100);
	cfg->sample_pkt_thresh = 0;
	rec0 = counter(PACER_STAT_RECORDED);
	for (i = 0; i < 100; i++)
		run(&f[i & 3]);
	ck_assert_uint_eq(counter(PACER_STAT_RECORDED) - rec0, 0);
	ring_buffer__free(rb);
	fixture_unload();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("xdp program (BPF_PROG_TEST_RUN)");
	TCase *tc = tcase_create("verdicts");

	if (geteuid() != 0) {
		printf("SKIP prog_xdp: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	skel_stay_on_one_cpu();
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_first_passes_second_drops_then_passes_after_interval);
	tcase_add_loop_test(tc, test_variants, 0, (int)(sizeof(variants) / sizeof(variants[0])));
	tcase_add_loop_test(tc, test_new_sources_pass_soon_after_boot, 0,
			    (int)(sizeof(boot_variants) / sizeof(boot_variants[0])));
	tcase_add_loop_test(tc, test_targeted_collisions_need_the_key, 0, 2);
	tcase_add_test(tc, test_prefix_masking_shares_fate);
	tcase_add_test(tc, test_vlan_tags_key_on_inner_source);
	tcase_add_loop_test(tc, test_every_truncation_is_malformed, 0,
			    (int)(sizeof(trunc_cases) / sizeof(trunc_cases[0])) * 2);
	tcase_add_test(tc, test_invalid_headers);
	tcase_add_test(tc, test_pace_vs_quiet);
	tcase_add_test(tc, test_live_interval_and_policy_change);
	tcase_add_test(tc, test_key_drawn_in_datapath_when_loaded_without_cli);
	tcase_add_test(tc, test_cached_clock_is_armed_and_advances);
	tcase_add_test(tc, test_percpu_copy_is_the_running_cpus);
	tcase_add_loop_test(tc, test_table_verdicts, 0, 16);
	tcase_add_loop_test(tc, test_table_full, 0, 8);
	tcase_add_loop_test(tc, test_table_matches_simulation, 0, 8);
	tcase_add_loop_test(tc, test_rate_bursts, 0, 7);
	tcase_add_loop_test(tc, test_rate_default_tick_table, 0, 4);
	tcase_add_test(tc, test_rate_one_is_interval);
	tcase_add_loop_test(tc, test_sweep_clears_before_the_tick_wraps, 0, 12);
	tcase_add_loop_test(tc, test_sweep_timer_runs, 0, 2);
	tcase_add_test(tc, test_rate_corrupt_is_strictest);
	tcase_add_test(tc, test_packet_sampling);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
