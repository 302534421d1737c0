// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two-choice engine's outputs pinned (include/pacer_two_choice.h through
 * the simulators): a digest of every packet's verdict and age, the table's
 * final bytes and its full and evicted counts, for both tables, per policy,
 * --on-full mode, placement, burst, a later stage that refuses, and the
 * dense table's sweep, over a fixed stream that overfills a small table
 * and jumps far enough for ticks to wrap.  The digests were recorded from
 * the two tables' separate code before one engine replaced it: a change
 * that moves any of them changes what the tables decide.  Reviewed and
 * intended, re-record them with the generator below (PIN_PRINT).
 */
#include <check.h>
#include "check_run.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "pacer_hash.h"
#include "two_choice_sim.h"

static uint64_t fnv(uint64_t d, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		d = (d ^ *b++) * 0x100000001b3ULL;
	return d;
}

enum {
	PIN_QUIET = 1,
	PIN_EVICT = 2,
	PIN_SHARED = 4,
	PIN_BURST = 8,
	PIN_STAGED = 16, /* a later stage refuses a quarter of what pacing admits */
	PIN_SWEPT = 32,  /* the dense table swept as the datapath's timer does */
};

/*
 * 20000 packets of 300 keys into 128 (table) or 120 (dense) entries, at a
 * tick of 2^16 ns: mostly 1/32 tick apart (several hundred packets an
 * interval of 20 ticks), one in 64 after a jump of up to 300 ticks.
 */
static uint64_t pin_run(int dense, unsigned cfg)
{
	__u64 key[2] = { 0x243f6a8885a308d3ULL, 0x13198a2e03707345ULL };
	uint32_t policy = cfg & PIN_QUIET ? PACER_POLICY_QUIET : PACER_POLICY_PACE;
	uint32_t on_full = cfg & PIN_EVICT ? PACER_TBL_FULL_EVICT : PACER_TBL_FULL_DROP;
	uint32_t tick_shift = 16, thresh = 20, k, age;
	uint64_t d = 0xcbf29ce484222325ULL, t = 1ULL << 30, r = 0x9e3779b97f4a7c15ULL;
	struct two_choice_sim s;
	int v;

	if (dense)
		ck_assert_int_eq(dense_sim_init(&s, 5, tick_shift, thresh, policy, on_full, key), 0);
	else
		ck_assert_int_eq(table_sim_init(&s, 3, tick_shift, thresh, policy, on_full, key), 0);
	s.placement = cfg & PIN_SHARED ? PACER_PLACEMENT_SHARED : PACER_PLACEMENT_PERCPU;
	s.burst = cfg & PIN_BURST ? 3 * thresh : 0;
	s.sweep = !!(cfg & PIN_SWEPT);
	for (k = 0; k < 20000; k++) {
		uint64_t h;

		r = pacer_mix64(r + k);
		h = pacer_mix64(r % 300 + 1);
		t += (r >> 20) % 64 == 0 ? (r >> 24) % (300ULL << tick_shift)
					 : (r >> 24) % (1ULL << (tick_shift - 4));
		if (cfg & PIN_STAGED)
			v = dense ? dense_sim_staged(&s, h, t, (r >> 8) % 4 != 0, &age)
				  : table_sim_staged(&s, h, t, (r >> 8) % 4 != 0, &age);
		else
			v = dense ? dense_sim_packet(&s, h, t, &age) : table_sim_packet(&s, h, t, &age);
		d = fnv(d, &v, sizeof(v));
		d = fnv(d, &age, sizeof(age));
	}
	d = dense ? fnv(d, s.dl, dense_bytes(s.lines)) : fnv(d, s.tl, table_bytes(s.lines_log2));
	d = fnv(d, &s.full, sizeof(s.full));
	d = fnv(d, &s.evicted, sizeof(s.evicted));
	table_sim_free(&s);
	return d;
}

/* Recorded from the tables before the engine (commit 250392a): table 0..31, dense 0..63. */
static const uint64_t pinned[2][64] = {
	{
		0x81ca942523cbd12aULL, 0x25013f9e47909d4dULL, 0x6bd782e8cf204b33ULL,
		0xb3002edd36c34b79ULL, 0x81ca942523cbd12aULL, 0x25013f9e47909d4dULL,
		0x6bd782e8cf204b33ULL, 0xb3002edd36c34b79ULL, 0xf0d85e8fcce45ca2ULL,
		0xa56a2c42c03d445bULL, 0x588498754bd0adbfULL, 0xeffe59822662734dULL,
		0xf0d85e8fcce45ca2ULL, 0xa56a2c42c03d445bULL, 0x588498754bd0adbfULL,
		0xeffe59822662734dULL, 0xd6fa3da284745331ULL, 0x0105a33dc1f43711ULL,
		0x9b63c9260c5453dfULL, 0x2ccd66dd501d83a3ULL, 0xd6fa3da284745331ULL,
		0x0105a33dc1f43711ULL, 0x9b63c9260c5453dfULL, 0x2ccd66dd501d83a3ULL,
		0x0d15742546d7b496ULL, 0x0d15742546d7b496ULL, 0x40a3cb3fc2f0a52cULL,
		0x40a3cb3fc2f0a52cULL, 0x0d15742546d7b496ULL, 0x0d15742546d7b496ULL,
		0x40a3cb3fc2f0a52cULL, 0x40a3cb3fc2f0a52cULL,
	},
	{
		0xf76aea3b7d720a8eULL, 0xe42430051b01605bULL, 0x8715d7ab4ef932d8ULL,
		0xe0155723be987d87ULL, 0xf76aea3b7d720a8eULL, 0xe42430051b01605bULL,
		0x8715d7ab4ef932d8ULL, 0xe0155723be987d87ULL, 0xc7d4a912ee75ceb7ULL,
		0x4fa78bbd999b3507ULL, 0x29126b8e93ee69a5ULL, 0xe27a7d61ef7d32cbULL,
		0xac234ee62f4adf02ULL, 0x4804d31d75353117ULL, 0x2316e0490676ef1dULL,
		0x2f5db93d2e639407ULL, 0xe81fa9918fb1a7d9ULL, 0xc2ca4308b0f978ddULL,
		0xe0060182ef855c94ULL, 0x1d7da6d8c9b1ae9fULL, 0xe81fa9918fb1a7d9ULL,
		0xc2ca4308b0f978ddULL, 0xe0060182ef855c94ULL, 0x1d7da6d8c9b1ae9fULL,
		0x943b3328c846bf17ULL, 0x5df5789bd6248cd7ULL, 0x2fd01591a5a6c7f1ULL,
		0x1b352fc9e8f20117ULL, 0x3949ad19c71bac23ULL, 0xc063227eef7e24f7ULL,
		0x67e8a9ee637ffd64ULL, 0x1b352fc9e8f20117ULL, 0x54880b5f2aca967bULL,
		0x479cedbeac5dec89ULL, 0x9fcca3ebc1f051f2ULL, 0x9666ec745fd942aeULL,
		0x54880b5f2aca967bULL, 0x479cedbeac5dec89ULL, 0x9fcca3ebc1f051f2ULL,
		0x9666ec745fd942aeULL, 0x148a2d4cc29c6080ULL, 0x0f83a297efb0e208ULL,
		0x866908fdef5fd85dULL, 0x8581aee460be974dULL, 0xf83e316558f8b00cULL,
		0xf40346814efb8234ULL, 0xfc7ed5593c6bf83cULL, 0x4a0543adc463ec1dULL,
		0x7fbf595fce140313ULL, 0x856922456f018fd9ULL, 0x4c3c77c4157d9e2dULL,
		0x768ffa1397631fccULL, 0x7fbf595fce140313ULL, 0x856922456f018fd9ULL,
		0x4c3c77c4157d9e2dULL, 0x768ffa1397631fccULL, 0xeff7a62e5bcf8dc5ULL,
		0x64b742556b292254ULL, 0x4b13b9b930c3160bULL, 0x49dc10ea0428d4ffULL,
		0x767038cc35a0a4d4ULL, 0x9846039f4b8250d1ULL, 0xb8efb6f76202bee6ULL,
		0x10081fcc0bd9e386ULL,
	},
};

START_TEST(test_pinned_outputs)
{
	int dense = _i / 64;
	unsigned cfg = (unsigned)_i % 64;
	uint64_t got;

	if (!dense && cfg >= 32)
		return; /* the table's simulator is not swept: 16-bit ticks */
	got = pin_run(dense, cfg);
#ifdef PIN_PRINT
	printf("%s %2u 0x%016llxULL\n", dense ? "dense" : "table", cfg, (unsigned long long)got);
#endif
	ck_assert_msg(got == pinned[dense][cfg],
		      "%s table, cfg %u (quiet %u, evict %u, shared %u, burst %u, staged %u, swept %u): "
		      "digest 0x%016llx, pinned 0x%016llx",
		      dense ? "dense" : "recency", cfg, cfg & PIN_QUIET, !!(cfg & PIN_EVICT),
		      !!(cfg & PIN_SHARED), !!(cfg & PIN_BURST), !!(cfg & PIN_STAGED),
		      !!(cfg & PIN_SWEPT), (unsigned long long)got,
		      (unsigned long long)pinned[dense][cfg]);
}
END_TEST

/*
 * Among a key's several entries (a fingerprint collision, or a burst's),
 * the youngest is a "future" one (written by a CPU whose clock is slightly
 * ahead) before one of age 0, and else the one of the smallest age; ties go
 * to the higher slot.  Both layouts, both lines.
 */
START_TEST(test_youngest_counts_future_first)
{
	uint64_t tick = 5000;
	uint32_t fp = 77;
	struct pacer_tbl_line t[2];
	struct pacer_dense_line dn[2];
	struct pacer_tbl_line *tl[2] = { &t[0], &t[1] };
	struct pacer_dense_line *dl[2] = { &dn[0], &dn[1] };

	memset(t, 0, sizeof(t));
	memset(dn, 0, sizeof(dn));
	/* Slot 20: age 0; slot 3: one tick in the future; slot 9: age 4. */
	pacer_tbl_set(tl, 20, pacer_tbl_entry(fp, tick));
	pacer_tbl_set(tl, 3, pacer_tbl_entry(fp, tick + 1));
	pacer_tbl_set(tl, 9, pacer_tbl_entry(fp, tick - 4));
	ck_assert_uint_eq(pacer_tbl_youngest(tl, 1u << 3 | 1u << 20 | 1u << 9, tick), 3);
	ck_assert_uint_eq(pacer_tbl_youngest(tl, 1u << 20 | 1u << 9, tick), 20);
	ck_assert_uint_eq(pacer_tbl_age(pacer_tbl_get(tl, 3), tick), 0);
	pacer_dense_set(dl, 40, pacer_dense_entry(fp, tick));
	pacer_dense_set(dl, 3, pacer_dense_entry(fp, tick + 1));
	pacer_dense_set(dl, 9, pacer_dense_entry(fp, tick - 4));
	ck_assert_uint_eq(pacer_dense_youngest(dl, 1ULL << 3 | 1ULL << 40 | 1ULL << 9, tick), 3);
	ck_assert_uint_eq(pacer_dense_youngest(dl, 1ULL << 40 | 1ULL << 9, tick), 40);
	/* Equal ages: the higher slot. */
	pacer_tbl_set(tl, 25, pacer_tbl_entry(fp, tick));
	ck_assert_uint_eq(pacer_tbl_youngest(tl, 1u << 20 | 1u << 25, tick), 25);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("two-choice engine");
	TCase *tc = tcase_create("pinned");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_pinned_outputs, 0, 128);
	tcase_add_test(tc, test_youngest_counts_future_first);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
