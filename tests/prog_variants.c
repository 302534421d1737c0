// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Program variants (.rodata.variant, enum pacer_feature) under
 * BPF_PROG_TEST_RUN: every variant of every backend loads, and a stage
 * whose bit is clear is off whatever the live settings say (the CLI never
 * lets the two disagree; the program must not depend on that to stay
 * one-sided): classes, lists, budget, sampling and observe mode each
 * decide a crafted frame only in the variants that carry them, and the
 * rest of the verdict is the same.
 */
#define _GNU_SOURCE
#include <check.h>
#include <sched.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "frame.h"
#include "layout.h"
#include "lib_opts.h"
#include "pacer_budget.h"
#include "pacer_class.h"
#include "pacer_rate.h"
#include "pacer_place.h"
#include "pacer_ticks.h"
#include "classes_map.h"
#include "ticks.h"
#include "xdp_pacer.skel.h"
#include "prog_skel.h"

static const uint32_t backends[] = { PACER_BACKEND_SKETCH, PACER_BACKEND_TABLE, PACER_BACKEND_DENSE };
#define N_BACKENDS (sizeof(backends) / sizeof(backends[0]))
#define N_VARIANTS (PACER_VARIANT_ALL + 1)

/* A loaded program of backend with the variant bits (the shared placement, the cached clock). */
static struct xdp_pacer_bpf *load(uint32_t backend, uint32_t bits)
{
	struct pacer_layout lay = {
		.magic = PACER_LAYOUT_MAGIC, .abi_version = PACER_ABI_VERSION, .rows = 4,
		.kind = PACER_LAYOUT_ROWS, .placement = PACER_PLACEMENT_SHARED,
		.clock = PACER_CLOCK_CACHED, .tick_shift = 25, .lines_log2 = 10, .copies = 1,
		.backend = backend, .on_full = PACER_TBL_FULL_DROP,
	};
	struct xdp_pacer_bpf *skel;
	struct pacer_config *cfg;

	if (backend != PACER_BACKEND_SKETCH)
		lay.rows = 1;
	if (backend == PACER_BACKEND_DENSE)
		lay.lines = 1023;
	skel = xdp_pacer_bpf__open();
	ck_assert_ptr_nonnull(skel);
	skel->rodata->pacer_layout = lay;
	skel->rodata_variant->pacer_variant = bits;
	cfg = &skel->data->pacer_cfg;
	cfg->interval_ns = 1000000000ULL;
	cfg->thresh_ticks = pacer_thresh_ticks(cfg->interval_ns, lay.tick_shift);
	cfg->prefix4 = 32;
	cfg->prefix6 = 64;
	cfg->hash_key[0] = 0x1111222233334445ULL;
	cfg->hash_key[1] = 0x5555666677778889ULL;
	skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
	ck_assert_int_eq(bpf_map__set_max_entries(skel->maps.pacer_sk,
						  (uint32_t)PACER_LAYOUT_LINES(lay)), 0);
	ck_assert_msg(xdp_pacer_bpf__load(skel) == 0, "backend %u, variant 0x%x: the load failed",
		      backend, bits);
	return skel;
}

static int run(const struct xdp_pacer_bpf *skel, const char *src)
{
	struct frame_spec s = { .dmac = { 0x02, 0, 0, 0, 0, 1 }, .smac = { 0x02, 0, 0, 0, 0, 2 } };
	uint8_t f[256], out[512];
	size_t l3;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	ck_assert_int_eq(parse_address(src, &s.src), 0);
	ck_assert_int_eq(parse_address("10.99.0.1", &s.dst), 0);
	o.data_size_in = (uint32_t)frame_build(f, sizeof(f), &s, &l3);
	ck_assert_uint_ne(o.data_size_in, 0);
	ck_assert_int_eq(bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_pacer), &o), 0);
	return (int)o.retval;
}

/* Every variant of every backend loads; the count the verifier reports stays below the full program's. */
START_TEST(test_every_variant_loads)
{
	uint32_t backend = backends[_i / N_VARIANTS], bits = (uint32_t)_i % N_VARIANTS;
	struct xdp_pacer_bpf *skel = load(backend, bits);

	/* With nothing on, a source's second packet within the interval is dropped. */
	ck_assert_int_eq(run(skel, "10.1.0.1"), XDP_PASS);
	ck_assert_int_eq(run(skel, "10.1.0.1"), XDP_DROP);
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

/* Each stage, on in the settings: what decides a frame with the stage's bit, and without it. */
enum stage_case { CASE_CLASSES, CASE_LISTS, CASE_BUDGET, CASE_SAMPLING, CASE_OBSERVE, CASES };
static const uint32_t case_bit[CASES] = { PACER_F_CLASSES, PACER_F_LISTS, PACER_F_BUDGET,
					  PACER_F_SAMPLING, PACER_F_OBSERVE };

START_TEST(test_a_stage_off_in_the_variant_is_off)
{
	uint32_t backend = backends[(_i / CASES) / 2], bit = case_bit[_i % CASES];
	int with = (_i / CASES) % 2;
	struct xdp_pacer_bpf *skel = load(backend, with ? PACER_VARIANT_ALL : PACER_VARIANT_ALL & ~bit);
	struct pacer_config *cfg = &skel->data->pacer_cfg;
	struct pacer_class_maps m = { .cfg = cfg, .backend = backend,
				      .ncpus = libbpf_num_possible_cpus() };
	struct pacer_budget_cfg want = skel->data_budget->pacer_budget_cfg;
	struct pacer_list_change r;
	struct pacer_prefix p = { .family = 4, .len = 16, .addr = { 10, 3 } };
	char err[256];

	skel_stay_on_one_cpu();
	switch (_i % CASES) {
	case CASE_CLASSES:
		/* A selected bank with no entries classifies nothing: the frame passes unclassified. */
		cfg->class_sel = PACER_CLASS_SEL(0, 1);
		ck_assert_int_eq(run(skel, "10.2.0.1"), XDP_PASS);
		ck_assert_int_eq(run(skel, "10.2.0.1"), with ? XDP_PASS : XDP_DROP);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_UNCLASSIFIED), with ? 2 : 0);
		break;
	case CASE_LISTS:
		skel_class_maps(skel, &m);
		ck_assert_msg(pacer_lists_add(&m, PACER_LIST_DENY, &p, 1, 0, &r, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_int_eq(run(skel, "10.3.0.1"), with ? XDP_DROP : XDP_PASS);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_DENY_DROPPED), with ? 1 : 0);
		break;
	case CASE_BUDGET:
		/* One admission a minute: the second new source waits with the budget, not without. */
		budget_cfg(&want, "1/60s", NULL, NULL, NULL);
		budget_cfg_store(&skel->data_budget->pacer_budget_cfg, &want);
		ck_assert_int_eq(run(skel, "10.4.0.1"), XDP_PASS);
		ck_assert_int_eq(run(skel, "10.4.0.2"), with ? XDP_DROP : XDP_PASS);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_DROPPED_BUDGET), with ? 1 : 0);
		break;
	case CASE_SAMPLING:
		cfg->sample_pkt_thresh = 1ULL << 32; /* every packet */
		ck_assert_int_eq(run(skel, "10.5.0.1"), XDP_PASS);
		ck_assert_int_eq(run(skel, "10.5.0.1"), XDP_DROP);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_RECORDED), with ? 2 : 0);
		break;
	case CASE_OBSERVE:
		cfg->mode = PACER_MODE_OBSERVE;
		ck_assert_int_eq(run(skel, "10.6.0.1"), XDP_PASS);
		ck_assert_int_eq(run(skel, "10.6.0.1"), with ? XDP_PASS : XDP_DROP);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_OBSERVED_RECENT), with ? 1 : 0);
		ck_assert_uint_eq(skel_counter(skel, PACER_STAT_DROPPED_RECENT), with ? 0 : 1);
		break;
	}
	xdp_pacer_bpf__destroy(skel);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("program variants (BPF_PROG_TEST_RUN)");
	TCase *t = tcase_create("variants");

	tcase_set_timeout(t, 300);
	tcase_add_loop_test(t, test_every_variant_loads, 0, (int)(N_BACKENDS * N_VARIANTS));
	tcase_add_loop_test(t, test_a_stage_off_in_the_variant_is_off, 0, (int)(N_BACKENDS * 2 * CASES));
	suite_add_tcase(s, t);
	return run_suite(s);
}
