// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The analysis behind `xdp-pacer analyze`: the audit on hand-made streams
 * with known false drops and passes (pace, quiet, per-CPU), the sizing
 * arithmetic and its scaling by the sampling rate, the Table 1 runner on a
 * small stream, and the report writers.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_audit.h"
#include "analyze_report.h"
#include "analyze_sizing.h"
#include "pacer_dense.h"
#include "analyze_stream.h"
#include "analyze_recency.h"
#include "layout.h"
#include "pacer_hash.h"
#include "pacer_ticks.h"
#include "pacer_rate.h"

#define S 1000000000ULL

static const __u64 sim_key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543211ULL };

static void header(struct pacer_file_header *h, uint32_t policy, uint32_t placement)
{
	pacer_file_header_init(h);
	h->interval_ns = S;
	h->tick_shift = 25;
	h->thresh_ticks = pacer_thresh_ticks(S, 25); /* 31 */
	h->rows = 4;
	h->lines_log2 = 10;
	h->kind = PACER_LAYOUT_ROWS;
	h->policy = policy;
	h->placement = placement;
	h->ncpus = 4;
	h->prefix4 = 32;
	h->prefix6 = 64;
	h->sample_src_thresh = 1ULL << 32;
	h->start_mono_ns = 10 * S;
	h->flags = PACER_FILE_F_COMPLETE;
}

/* One record: t in ms since boot, source 10.0.x.y from a number, verdict, cpu. */
static void add(struct an_stream *s, uint64_t t_ms, uint32_t src, int drop, uint32_t cpu,
		uint32_t est, uint8_t flags)
{
	struct pacer_record r = { 0 };

	r.ts_ns = t_ms * 1000000ULL;
	r.family = 4;
	r.prefix = 32;
	r.addr[0] = 10;
	r.addr[1] = (uint8_t)(src >> 16);
	r.addr[2] = (uint8_t)(src >> 8);
	r.addr[3] = (uint8_t)src;
	r.verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
	r.flags = flags;
	r.est_age_ticks = est;
	r.cpu = cpu;
	r.thresh_ticks = 31;
	ck_assert_int_eq(an_stream_add(s, &r), 0);
}

#define SRC PACER_REC_SAMPLED_SOURCE
#define PKT PACER_REC_SAMPLED_PACKET

/* The stream of the audit tests (see each test for what every record is). */
static void build_basic(struct an_stream *s)
{
	add(s, 10000, 1, 0, 0, PACER_AGE_NEVER, SRC); /* A: first, 0 s after start: unknown */
	add(s, 10500, 1, 1, 0, 14, SRC);              /* A: 0.5 s after its admit (14 ticks) */
	add(s, 11200, 1, 1, 0, 3, SRC);               /* A: 1.2 s: false drop, 35 ticks */
	add(s, 11250, 1, 0, 0, 37, SRC);              /* A: 1.25 s (37 ticks) */
	add(s, 12250, 1, 1, 0, 29, SRC);              /* A: 1.0 s, 30 ticks < 31 */
	add(s, 13000, 2, 0, 1, PACER_AGE_NEVER, SRC); /* B: first, 3 s after start */
	add(s, 13400, 2, 0, 1, 200, SRC);             /* B: 0.4 s: passed, estimate 200 ticks */
	add(s, 15000, 3, 1, 2, 1, SRC);               /* C: first, 5 s after start, dropped */
	add(s, 16000, 4, 1, 3, 1, PKT);               /* D: packet-sampled only */
	ck_assert_int_eq(an_stream_finish(s), 0);
}

START_TEST(test_audit_pace_shared)
{
	struct pacer_file_header h;
	struct audit_result a;
	struct an_stream s;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	build_basic(&s);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.judged_records, 8);
	ck_assert_uint_eq(a.packet_only, 1);
	ck_assert_uint_eq(a.sources, 3);
	ck_assert_uint_eq(a.passes, 4);
	ck_assert_uint_eq(a.drops, 4);
	ck_assert_uint_eq(a.unknown, 1);
	ck_assert_uint_eq(a.eligible, 5);
	ck_assert_uint_eq(a.correct_passes, 2);
	ck_assert_uint_eq(a.correct_drops, 1);
	ck_assert_uint_eq(a.false_drops, 3);
	ck_assert_uint_eq(a.false_drops_quant, 1);     /* A at 12.25 s */
	ck_assert_uint_eq(a.false_drops_collision, 2); /* A at 11.2 s, C at 15 s */
	ck_assert_uint_eq(a.false_passes, 1);          /* B at 13.4 s */
	ck_assert_uint_eq(a.false_passes_by_cpu[1], 1);
	ck_assert_uint_eq(a.false_passes_local, 0);
	ck_assert_uint_eq(a.est_older_than_truth, 1);  /* B's 200 ticks after 12 */
	ck_assert_double_eq_tol(audit_false_drop_rate(&a), 0.6, 1e-12);
	/* The examples say what the truth was. */
	ck_assert_uint_eq(a.n_examples[AUDIT_FALSE_DROP_QUANTISATION], 1);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_QUANTISATION][0].gap_ns, S);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_QUANTISATION][0].true_age_ticks, 30);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_COLLISION][0].true_age_ticks, 35);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_COLLISION][1].gap_known, 0);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_COLLISION][1].gap_ns, 5 * S);
	/* Timeline: one-interval bins from the first record. */
	ck_assert_uint_eq(a.bin_ns, S);
	ck_assert_uint_eq(a.nbins, 7);
	ck_assert_uint_eq(a.bins[1].false_drops_collision, 1);
	ck_assert_uint_eq(a.bins[2].false_drops_quant, 1);
	ck_assert_uint_eq(a.bins[3].false_passes, 1);
	audit_free(&a);
	an_stream_free(&s);
}
END_TEST

/*
 * A --rate 4/1s recording (tick 2^25 ns: emission 9 ticks, tolerance 28):
 * judged against the exact GCRA with bursts of N, T/N = 250 ms,
 * tau = 750 ms.
 */
START_TEST(test_audit_rate)
{
	static const struct {
		uint64_t t_ms;
		int drop;
	} recs[] = {
		{ 10000, 0 }, /* first, at the start: unknown */
		{ 10000, 0 }, /* the burst: V = 9250 ms before it, conforming */
		{ 10000, 0 },
		{ 10000, 0 }, /* the 4th at once: conforming, V = 10000 */
		{ 10150, 1 }, /* 150 ms after V: a right drop */
		{ 10260, 1 }, /* 260 ms: a false drop by the tick (cell age 8 < 10) */
		{ 10320, 0 }, /* 320 ms: conforming, V = 10250 */
		{ 10400, 0 }, /* 150 ms: a false pass */
	};
	struct pacer_file_header h;
	struct audit_result a;
	struct an_stream s;
	struct pacer_rate r;
	size_t i;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(pacer_rate_ticks(4, S, 25, PACER_RATE_TBL_MAX_SAT, &r), 0);
	h.rate_n = 4;
	h.thresh_ticks = r.thresh;
	h.burst_ticks = r.burst;
	ck_assert_uint_eq(r.emit, 9);
	ck_assert_uint_eq(r.burst, 28);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		struct pacer_record rec = { .ts_ns = recs[i].t_ms * 1000000ULL, .family = 4, .prefix = 32,
					    .addr = { 10, 0, 0, 1 }, .flags = SRC, .thresh_ticks = r.thresh,
					    .est_age_ticks = 1, .verdict = recs[i].drop ? PACER_REC_DROP : PACER_REC_PASS };

		ck_assert_int_eq(an_stream_add(&s, &rec), 0);
	}
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.judged_records, 8);
	ck_assert_uint_eq(a.unknown, 1);
	ck_assert_uint_eq(a.eligible, 5);
	ck_assert_uint_eq(a.correct_passes, 4); /* the burst of N: all of it conforms */
	ck_assert_uint_eq(a.false_drops, 1);
	ck_assert_uint_eq(a.false_drops_quant, 1);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_QUANTISATION][0].true_age_ticks, 8);
	ck_assert_uint_eq(a.correct_drops, 1);
	ck_assert_uint_eq(a.false_passes, 1);
	ck_assert_uint_eq(a.other_thresh, 0);
	ck_assert_uint_eq(a.max_admits_in_interval, 6); /* in one T: <= 2N - 1 */
	/* The exact greedy GCRA on the same packets: the burst, then 10260 (V 10000 + 260 ms). */
	ck_assert_uint_eq(a.exact_passes, 5);
	audit_free(&a);
	an_stream_free(&s);
}
END_TEST

/*
 * A rate at a fine tick has thresholds beyond 255 ticks (4 per 1 s at
 * 2^19 ns: 479): records keep theirs whole, so nothing reads as a live
 * change and a drop by the tick is quantisation, not a collision.
 */
START_TEST(test_audit_rate_fine_tick)
{
	static const struct {
		uint64_t t_ns;
		int drop;
	} recs[] = {
		{ 10000000000ULL, 0 }, { 10000000000ULL, 0 }, { 10000000000ULL, 0 },
		{ 10000000000ULL, 0 }, /* the burst of 4: V = 10000 ms, its cell 1 tick old */
		{ 10250200000ULL, 1 }, /* 250.2 ms on: owed, but 478 ticks < 479: quantisation */
	};
	struct pacer_file_header h;
	struct audit_result a;
	struct an_stream s;
	struct pacer_rate r;
	size_t i;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	h.tick_shift = 19;
	ck_assert_int_eq(pacer_rate_ticks(4, S, 19, PACER_RATE_TBL_MAX_SAT, &r), 0);
	ck_assert_uint_eq(r.thresh, 479);
	h.rate_n = 4;
	h.thresh_ticks = r.thresh;
	h.burst_ticks = r.burst;
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		struct pacer_record rec = { .ts_ns = recs[i].t_ns, .family = 4, .prefix = 32,
					    .addr = { 10, 0, 0, 1 }, .flags = SRC, .thresh_ticks = r.thresh,
					    .est_age_ticks = 1, .verdict = recs[i].drop ? PACER_REC_DROP : PACER_REC_PASS };

		ck_assert_int_eq(an_stream_add(&s, &rec), 0);
	}
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.other_thresh, 0);
	ck_assert_uint_eq(a.false_drops, 1);
	ck_assert_uint_eq(a.false_drops_quant, 1);
	ck_assert_uint_eq(a.false_drops_collision, 0);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_QUANTISATION][0].true_age_ticks, 478);
	audit_free(&a);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_audit_quiet_shared)
{
	struct pacer_file_header h;
	struct audit_result a;
	struct an_stream s;

	/* Under quiet the truth is the previous packet, admitted or not. */
	header(&h, PACER_POLICY_QUIET, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	build_basic(&s);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.unknown, 1);
	ck_assert_uint_eq(a.correct_drops, 2);         /* A at 10.5 and 11.2 s (0.7 s after 10.5) */
	ck_assert_uint_eq(a.false_passes, 2);          /* A at 11.25 s (0.05 s), B at 13.4 s */
	ck_assert_uint_eq(a.eligible, 3);              /* A at 12.25, B at 13, C at 15 */
	ck_assert_uint_eq(a.false_drops, 2);
	ck_assert_uint_eq(a.false_drops_quant, 1);
	ck_assert_uint_eq(a.false_drops_collision, 1);
	audit_free(&a);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_audit_percpu)
{
	struct pacer_file_header h;
	struct audit_result a;
	struct an_stream s;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_PERCPU);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	add(&s, 20000, 5, 0, 0, PACER_AGE_NEVER, SRC); /* owed: 10 s since start */
	add(&s, 20100, 5, 0, 1, PACER_AGE_NEVER, SRC); /* cpu1 has not seen it: global false pass */
	add(&s, 20200, 5, 0, 0, 6, SRC);               /* cpu0 saw it 0.2 s ago: local false pass too */
	add(&s, 21500, 5, 1, 1, 2, SRC);               /* 1.3 s after the last admit: false drop */
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.false_passes, 2);
	ck_assert_uint_eq(a.false_passes_by_cpu[0], 1);
	ck_assert_uint_eq(a.false_passes_by_cpu[1], 1);
	ck_assert_uint_eq(a.false_passes_local, 1);
	ck_assert_uint_eq(a.false_drops, 1);
	/* Classified on cpu1's own view: 20.1 s -> 21.5 s is 41 ticks, not a quantisation case. */
	ck_assert_uint_eq(a.false_drops_collision, 1);
	ck_assert_uint_eq(a.examples[AUDIT_FALSE_DROP_COLLISION][0].true_age_ticks, 41);
	ck_assert_uint_eq(a.sources_multi_cpu, 1);
	ck_assert_uint_eq(a.max_admits_in_interval, 3);
	audit_free(&a);
	an_stream_free(&s);
}
END_TEST

/*
 * Four classes (tick 2^25 ns) and one source, 10.0.0.1, in each:
 *   web: 100 ms, key src, stat slot 0 (class_slot 1);
 *   dns: 4 per 1 s, stat slot 1 (class_slot 2);
 *   bad: action drop, stat slot 2 (class_slot 3);
 *   syn: 1 s, key src+dport, stat slot 5 (class_slot 6).
 */
static void class_header(struct pacer_file_header *h)
{
	struct pacer_class c[4];
	struct pacer_rate r;

	header(h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	h->backend = PACER_BACKEND_TABLE;
	memset(c, 0, sizeof(c));
	snprintf(c[0].name, sizeof(c[0].name), "web");
	c[0].rate_n = 1;
	c[0].interval_ns = S / 10;
	c[0].thresh_ticks = pacer_thresh_ticks(S / 10, 25);
	c[0].stat_slot = 0;
	snprintf(c[1].name, sizeof(c[1].name), "dns");
	ck_assert_int_eq(pacer_rate_ticks(4, S, 25, PACER_RATE_TBL_MAX_SAT, &r), 0);
	c[1].rate_n = 4;
	c[1].interval_ns = S;
	c[1].thresh_ticks = r.thresh;
	c[1].burst_ticks = r.burst;
	c[1].stat_slot = 1;
	snprintf(c[2].name, sizeof(c[2].name), "bad");
	c[2].action = PACER_ACTION_DROP;
	c[2].stat_slot = 2;
	snprintf(c[3].name, sizeof(c[3].name), "syn");
	c[3].rate_n = 1;
	c[3].interval_ns = S;
	c[3].thresh_ticks = pacer_thresh_ticks(S, 25);
	c[3].key_mode = PACER_KEY_SRC_DPORT;
	c[3].stat_slot = 5;
	pacer_file_header_set_classes(h, c, 4);
}

static void add_class(struct an_stream *s, uint64_t t_ms, uint32_t slot, int drop)
{
	const struct pacer_class *c = pacer_file_class_of(&s->hdr, slot);
	struct pacer_record r = { 0 };

	r.ts_ns = t_ms * 1000000ULL;
	r.family = 4;
	r.prefix = 32;
	r.addr[0] = 10;
	r.addr[3] = 1;
	r.verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
	r.flags = SRC;
	r.est_age_ticks = 3;
	r.thresh_ticks = c ? c->thresh_ticks : 31;
	r.class_slot = slot;
	ck_assert_int_eq(an_stream_add(s, &r), 0);
}

/* Each record is judged against its own class's limit; classes never share a source. */
START_TEST(test_audit_classes)
{
	struct pacer_file_header h;
	struct audit_result a, web, dns, bad, syn;
	struct an_stream s;

	class_header(&h);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	add_class(&s, 10000, 1, 0); /* web: first, at the start: unknown */
	add_class(&s, 10000, 6, 0); /* syn: first: unknown */
	add_class(&s, 10000, 3, 1); /* bad: dropped, as its action says */
	add_class(&s, 10010, 2, 0); /* dns: first (4 * 10 ms < 1 s since the start): unknown */
	add_class(&s, 10020, 2, 0); /* dns: within its burst of 4 (a false pass under web's 100 ms) */
	add_class(&s, 10050, 1, 0); /* web: 50 ms after its admission: a false pass */
	add_class(&s, 10100, 6, 0); /* syn: 100 ms: another port's key, perhaps: not judged */
	add_class(&s, 10120, 1, 1); /* web: 70 ms: a right drop */
	add_class(&s, 10300, 1, 1); /* web: 250 ms: a false drop */
	add_class(&s, 10500, 3, 0); /* bad: passed although its action is drop: a false pass */
	add_class(&s, 12000, 6, 1); /* syn: 1.9 s after the source's last admission: a proven false drop */
	add_class(&s, 12100, 6, 0); /* syn: owed a pass, passed */
	add_class(&s, 12200, 6, 1); /* syn: 100 ms: not judged */
	add_class(&s, 12300, 9, 0); /* a class added during the recording: not judged */
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_uint_eq(s.nsrc, 5); /* one address, five classes */

	ck_assert_int_eq(audit_run_class(&s, 1, &web), 0);
	ck_assert_uint_eq(web.judged_records, 4);
	ck_assert_uint_eq(web.sources, 1);
	ck_assert_uint_eq(web.interval_ns, S / 10);
	ck_assert_uint_eq(web.unknown, 1);
	ck_assert_uint_eq(web.false_passes, 1);
	ck_assert_uint_eq(web.correct_drops, 1);
	ck_assert_uint_eq(web.false_drops, 1);
	ck_assert_int_eq(web.key_merged, 0);
	/* One source in three of the four 100 ms windows from 10.0 s to 10.3 s. */
	ck_assert_uint_eq(web.keys_per_interval_peak, 1);
	ck_assert_double_eq_tol(web.keys_per_interval_mean, 0.75, 1e-12);

	ck_assert_int_eq(audit_run_class(&s, 2, &dns), 0);
	ck_assert_uint_eq(dns.judged_records, 2);
	ck_assert_uint_eq(dns.rate_n, 4);
	ck_assert_uint_eq(dns.false_passes, 0);
	ck_assert_uint_eq(dns.false_drops, 0);
	ck_assert_uint_eq(dns.correct_passes, 1);
	ck_assert_uint_eq(dns.unknown, 1);

	ck_assert_int_eq(audit_run_class(&s, 3, &bad), 0);
	ck_assert_uint_eq(bad.action, PACER_ACTION_DROP);
	ck_assert_uint_eq(bad.judged_records, 2);
	ck_assert_uint_eq(bad.correct_drops, 1);
	ck_assert_uint_eq(bad.false_passes, 1);

	ck_assert_int_eq(audit_run_class(&s, 6, &syn), 0);
	ck_assert_int_eq(syn.key_merged, 1);
	ck_assert_uint_eq(syn.key_mode, PACER_KEY_SRC_DPORT);
	ck_assert_uint_eq(syn.judged_records, 5);
	ck_assert_uint_eq(syn.false_passes, 0);
	ck_assert_uint_eq(syn.false_drops, 1);
	ck_assert_uint_eq(syn.correct_passes, 1);
	ck_assert_uint_eq(syn.unknown, 3);

	/* The class list changed at 12.05 s: the records after it are not judged. */
	s.hdr.classes_changed_ns = 12050 * 1000000ULL;
	ck_assert_int_eq(audit_run_class(&s, 6, &a), 0);
	ck_assert_uint_eq(a.judged_records, 3);
	ck_assert_uint_eq(a.after_class_change, 2);
	audit_free(&a);
	s.hdr.classes_changed_ns = 0;

	/* All classes at once: the sums, and the record of no known class set apart. */
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.judged_records, 13);
	ck_assert_uint_eq(a.false_passes, 2);
	ck_assert_uint_eq(a.false_drops, 2);
	ck_assert_uint_eq(a.unknown, 5);
	ck_assert_uint_eq(a.unknown_class, 1);
	ck_assert_uint_eq(a.sources, 4);
	audit_free(&a);
	audit_free(&web);
	audit_free(&dns);
	audit_free(&bad);
	audit_free(&syn);
	an_stream_free(&s);
}
END_TEST

/* A src+dport class whose records carry their key: each (source, port) audited as its own key. */
START_TEST(test_audit_class_keyed)
{
	static const struct {
		uint64_t t_ms;
		uint16_t dport;
		int drop;
	} recs[] = {
		{ 10000, 1000, 0 }, /* first of its key: unknown */
		{ 10010, 1001, 0 }, /* another key: unknown, not a false pass */
		{ 10100, 1000, 0 }, /* 100 ms after its key's admission: a false pass */
		{ 12000, 1001, 1 }, /* 2 s after its key's: a false drop */
		{ 12500, 1000, 1 }, /* 2.4 s after its key's: a false drop */
	};
	struct pacer_file_header h;
	struct audit_result syn;
	struct pacer_record r;
	struct an_stream s;
	unsigned i;

	class_header(&h);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.ts_ns = recs[i].t_ms * 1000000ULL;
		r.family = 4;
		r.prefix = 32;
		r.addr[0] = 10;
		r.addr[3] = 1;
		r.verdict = recs[i].drop ? PACER_REC_DROP : PACER_REC_PASS;
		r.flags = SRC | PACER_REC_KEY;
		r.est_age_ticks = 3;
		r.thresh_ticks = pacer_thresh_ticks(S, 25);
		r.class_slot = 6;
		r.key_dport = recs[i].dport;
		ck_assert_int_eq(an_stream_add(&s, &r), 0);
	}
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_uint_eq(s.nsrc, 2);
	ck_assert_int_eq(audit_run_class(&s, 6, &syn), 0);
	ck_assert_int_eq(syn.key_merged, 0);
	ck_assert_uint_eq(syn.sources, 2);
	ck_assert_uint_eq(syn.unknown, 2);
	ck_assert_uint_eq(syn.false_passes, 1);
	ck_assert_uint_eq(syn.false_drops, 2);
	audit_free(&syn);
	/* One record without its key: nothing of the class can be judged. */
	r.flags = SRC;
	r.key_dport = 0;
	r.ts_ns = 13000 * 1000000ULL;
	ck_assert_int_eq(an_stream_add(&s, &r), 0);
	ck_assert_int_eq(audit_run_class(&s, 6, &syn), 0);
	ck_assert_int_eq(syn.key_merged, 1);
	ck_assert_uint_eq(syn.false_passes, 0);
	ck_assert_uint_eq(syn.false_drops, 0);
	ck_assert_uint_eq(syn.unknown, 6);
	audit_free(&syn);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_stream_sorts_and_interns)
{
	struct pacer_file_header h;
	struct an_stream s;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	add(&s, 1002, 7, 0, 0, 1, SRC);
	add(&s, 1000, 8, 0, 1, 1, SRC); /* another CPU's earlier timestamp, queued later */
	add(&s, 1000, 7, 1, 0, 1, SRC); /* same time as the previous: keeps file order */
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_uint_eq(s.nsrc, 2);
	ck_assert_uint_eq(s.out_of_order, 1);
	ck_assert_uint_eq(s.max_backstep_ns, 2000000);
	ck_assert_uint_eq(s.rec[0].seq, 1);
	ck_assert_uint_eq(s.rec[1].seq, 2);
	ck_assert_uint_eq(s.rec[2].seq, 0);
	ck_assert_uint_eq(s.rec[0].src, s.rec[2].src == 0 ? 1 : 0);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_sizing_arithmetic)
{
	/* 1 in N sources: a sketch N times narrower stands for the full one. */
	ck_assert_double_eq(sizing_scale(1ULL << 32), 1.0);
	ck_assert_double_eq(sizing_scale(1ULL << 28), 16.0);
	ck_assert_double_eq(sizing_scale(0), 0.0);
	ck_assert_uint_eq(sizing_target_lines_log2(6, 16.0), 10);
	ck_assert_uint_eq(sizing_target_lines_log2(6, 1.0), 6);
	/* 1/3: 6 + log2(3) = 7.58 rounds up to 8 (wider: conservative). */
	ck_assert_uint_eq(sizing_target_lines_log2(6, sizing_scale((1ULL << 32) / 3)), 8);
	ck_assert_int_eq(sizing_sim_lines_log2(14, 16.0), 10);
	ck_assert_int_eq(sizing_sim_lines_log2(14, 3.0), 12); /* 12.4 rounds down: narrower */
	ck_assert_int_eq(sizing_sim_lines_log2(3, 16.0), -1);
	ck_assert_uint_eq(geom_bytes(PACER_LAYOUT_ROWS, 4, 14, PACER_PLACEMENT_SHARED, 8), 4ULL << 20);
	ck_assert_uint_eq(geom_bytes(PACER_LAYOUT_ROWS, 4, 14, PACER_PLACEMENT_PERCPU, 8), 32ULL << 20);
	ck_assert_uint_eq(geom_bytes(PACER_LAYOUT_BLOCKED, 4, 16, PACER_PLACEMENT_SHARED, 8), 4ULL << 20);
	ck_assert_uint_eq(geom_width_cells(PACER_LAYOUT_ROWS, 4, 14), 1ULL << 20);
	ck_assert_uint_eq(geom_width_cells(PACER_LAYOUT_BLOCKED, 4, 16), 1ULL << 20);
	ck_assert_uint_eq(geom_max_lines_log2(PACER_LAYOUT_ROWS, 4), 24);
	ck_assert_uint_eq(geom_max_lines_log2(PACER_LAYOUT_ROWS, 8), 24);
	ck_assert_uint_eq(geom_max_lines_log2(PACER_LAYOUT_BLOCKED, 1), 30);
	/* Any line count scales exactly: up for the full-scale geometry, down for the simulated one. */
	ck_assert_uint_eq(sizing_target_lines(3, 64.0), 192);
	/* 1/3 is 2^32 / 1431655765 = 3.0000000007: 21 lines, not 22 from the thresholds rounding */
	ck_assert_uint_eq(sizing_target_lines(7, sizing_scale((1ULL << 32) / 3)), 21);
	ck_assert_uint_eq(sizing_target_lines(7, 3.01), 22);
	ck_assert_uint_eq(sizing_sim_lines(192, 64.0), 3);
	ck_assert_uint_eq(sizing_sim_lines(468750, 64.0), 7324); /* 7324.2 */
	ck_assert_uint_eq(geom_bytes_lines(PACER_LAYOUT_ROWS, 1, 19, 468750, PACER_PLACEMENT_SHARED, 8),
			  30000000);
	ck_assert_uint_eq(geom_bytes_lines(PACER_LAYOUT_ROWS, 1, 19, 468750, PACER_PLACEMENT_PERCPU, 2),
			  60000000);
	ck_assert_uint_eq(geom_bytes_lines(PACER_LAYOUT_ROWS, 4, 14, 0, PACER_PLACEMENT_SHARED, 8),
			  4ULL << 20);
}
END_TEST

/*
 * n sources, each sending one packet every 1.5 intervals from a random
 * phase, for `rounds` periods.  Sources whose keyed sample hash falls under
 * src_thresh are kept (2^32: all), as the datapath's source sampling does.
 */
static void build_load(struct an_stream *s, struct pacer_file_header *h, uint32_t n, uint32_t rounds,
		       uint64_t src_thresh)
{
	uint64_t period = 3 * S / 2, r, x = 42;
	uint32_t i;

	header(h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	h->sample_src_thresh = src_thresh;
	ck_assert_int_eq(an_stream_init(s, h), 0);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < n; i++) {
			uint64_t phase = pacer_mix64(i + 1) % period;

			if ((pacer_mix64((uint64_t)i ^ PACER_SAMPLE_SALT) >> 32) >= src_thresh)
				continue;
			x = pacer_mix64(x);
			add(s, (h->start_mono_ns + r * period + phase) / 1000000, i, (int)(x & 1), 0, 1, SRC);
		}
	}
	ck_assert_int_eq(an_stream_finish(s), 0);
}

static const struct sizing_point *point(const struct sizing_result *z, uint32_t rows, uint32_t lines)
{
	size_t i;

	for (i = 0; i < z->npts; i++)
		if (z->pts[i].rows == rows && z->pts[i].target_lines_log2 == lines && z->pts[i].simulated)
			return &z->pts[i];
	return NULL;
}

START_TEST(test_sizing_scales_with_sampling)
{
	struct pacer_file_header hf, hs;
	struct an_stream full, sampled;
	struct sizing_result zf, zs;
	struct sizing_params p;
	const struct sizing_point *pf, *ps;
	uint32_t l;

	build_load(&full, &hf, 8192, 8, 1ULL << 32);
	build_load(&sampled, &hs, 8192, 8, 1ULL << 28);
	ck_assert_uint_gt(sampled.nsrc, 400);
	ck_assert_uint_lt(sampled.nsrc, 640);

	sizing_params_from_header(&p, &hf);
	p.target = 0.02;
	memcpy(p.key, sim_key, sizeof(p.key));
	ck_assert_int_eq(sizing_run(&full, &p, &zf, NULL, NULL), 0);
	sizing_params_from_header(&p, &hs);
	p.target = 0.02;
	memcpy(p.key, sim_key, sizeof(p.key));
	ck_assert_int_eq(sizing_run(&sampled, &p, &zs, NULL, NULL), 0);
	ck_assert_double_eq(zs.scale, 16.0);
	/* Load per sketch copy, and scaled back to the full stream. */
	ck_assert_double_gt(zf.n_peak, 5000);
	ck_assert_double_lt(fabs(zs.n_peak * zs.scale - zf.n_peak) / zf.n_peak, 0.25);

	/* The same full-scale width gives about the same rate, and both about the model's. */
	for (l = 8; l <= 10; l++) {
		pf = point(&zf, 2, l);
		ps = point(&zs, 2, l);
		ck_assert_ptr_nonnull(pf);
		ck_assert_ptr_nonnull(ps);
		ck_assert_uint_eq(ps->sim_lines_log2 + 4, pf->sim_lines_log2);
		ck_assert_msg(fabs(ps->rate - pf->rate) <= 0.35 * pf->rate + 0.005,
			      "lines 2^%u: full %.4f, 1/16 sample %.4f", l, pf->rate, ps->rate);
		ck_assert_msg(pf->rate < 2 * pf->model_rate && pf->rate > pf->model_rate / 2,
			      "lines 2^%u: simulated %.4f, model %.4f", l, pf->rate, pf->model_rate);
	}
	/* Both recommend a geometry; at the same row count the width agrees within a factor 2. */
	ck_assert_int_ge(zf.best, 0);
	ck_assert_int_ge(zs.best, 0);
	{
		uint32_t rows;

		for (rows = 1; rows <= 4; rows++) {
			int lf = -1, ls = -1;
			size_t i;

			for (i = 0; i < zf.npts; i++)
				if (zf.pts[i].rows == rows && zf.pts[i].meets && lf < 0)
					lf = (int)zf.pts[i].target_lines_log2;
			for (i = 0; i < zs.npts; i++)
				if (zs.pts[i].rows == rows && zs.pts[i].meets && ls < 0)
					ls = (int)zs.pts[i].target_lines_log2;
			ck_assert_int_ge(lf, 0);
			ck_assert_int_ge(ls, 0);
			ck_assert_msg(abs(lf - ls) <= 1, "rows %u: full 2^%d lines, sample 2^%d", rows, lf, ls);
		}
	}
	/* The recorded geometry (4 x 2^10) is simulated too. */
	ck_assert_int_eq(zf.current.simulated, 1);
	ck_assert_uint_eq(zf.current.sim_lines_log2, 10);
	ck_assert_uint_eq(zs.current.sim_lines_log2, 6);
	sizing_free(&zf);
	sizing_free(&zs);
	an_stream_free(&full);
	an_stream_free(&sampled);
}
END_TEST

/*
 * A handful of sources needs the narrowest sketch: what sizing recommends
 * (every point it says meets the target) is still a geometry load takes,
 * for both cell layouts and both placements.
 */
START_TEST(test_sizing_advice_is_loadable)
{
	static const uint32_t kinds[] = { PACER_LAYOUT_ROWS, PACER_LAYOUT_BLOCKED };
	static const uint32_t placements[] = { PACER_PLACEMENT_SHARED, PACER_PLACEMENT_PERCPU };
	struct pacer_file_header h;
	struct sizing_params p;
	struct sizing_result z;
	struct an_stream s;
	size_t k, pl, i;
	char why[160] = "";

	for (k = 0; k < 2; k++) {
		for (pl = 0; pl < 2; pl++) {
			build_load(&s, &h, 3, 20, 1ULL << 32);
			sizing_params_from_header(&p, &h);
			p.kind = kinds[k];
			p.placement = placements[pl];
			p.target = 0.001;
			memcpy(p.key, sim_key, sizeof(p.key));
			ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), 0);
			ck_assert_int_ge(z.best, 0);
			for (i = 0; i < z.npts; i++) {
				const struct sizing_point *pt = &z.pts[i];
				struct layout_req r = { .width = pt->width_cells, .rows = pt->rows,
							.kind = p.kind, .placement = p.placement,
							.ncpus = p.ncpus };

				if (!pt->meets)
					continue;
				ck_assert_msg(pt->width_cells >= PACER_MIN_WIDTH &&
						      !layout_check_geometry(&r, why, sizeof(why)),
					      "layout %u: --rows %u --width %llu recommended: %s", p.kind,
					      pt->rows, (unsigned long long)pt->width_cells, why);
			}
			ck_assert_uint_eq(z.pts[z.best].width_cells, PACER_MIN_WIDTH);
			sizing_free(&z);
			an_stream_free(&s);
		}
	}
}
END_TEST

/*
 * The dense table's size is any number of lines: sizing steps through line
 * counts that are not powers of two, scales them exactly by the sampling
 * rate, bisects down to about 1 % between the last miss and the first hit,
 * and recommends a --width of whole lines that meets the target.
 */
START_TEST(test_sizing_dense_any_line_count)
{
	struct pacer_file_header h;
	struct sizing_params p;
	struct sizing_result z;
	struct an_stream s;
	const struct sizing_point *b, *miss = NULL;
	struct pacer_file_reader rd = { 0 };
	struct an_report rep = { 0 };
	char *buf = NULL;
	size_t i, len = 0;
	int odd = 0;
	FILE *f;

	build_load(&s, &h, 20000, 8, 1ULL << 30); /* 1 in 4 sources: ~5000 sampled */
	sizing_params_from_header(&p, &h);
	p.backend = PACER_BACKEND_DENSE;
	p.on_full = PACER_TBL_FULL_DROP;
	p.cur_rows = 1;
	p.cur_lines = 937;
	p.cur_lines_log2 = 10;
	p.target = 0.02;
	memcpy(p.key, sim_key, sizeof(p.key));
	ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), 0);
	ck_assert_double_eq(z.scale, 4.0);
	ck_assert_int_ge(z.best, 0);
	for (i = 0; i < z.npts; i++) {
		const struct sizing_point *pt = &z.pts[i];

		ck_assert_uint_eq(pt->rows, 1);
		ck_assert_uint_ge(pt->sim_lines, 2);
		/* Scaled exactly: ceil(sim lines x 4), entries a whole number of lines. */
		ck_assert_uint_eq(pt->target_lines, 4 * pt->sim_lines);
		ck_assert_uint_eq(pt->width_cells, (uint64_t)pt->target_lines * PACER_DENSE_WAYS);
		ck_assert_uint_eq(pt->target_bytes, (uint64_t)pt->target_lines * 64);
		odd += (pt->target_lines & (pt->target_lines - 1)) != 0;
		if (i)
			ck_assert_uint_ge(pt->target_bytes, z.pts[i - 1].target_bytes);
	}
	ck_assert_int_gt(odd, z.npts / 2);
	b = &z.pts[z.best];
	ck_assert(b->simulated && b->meets && b->rate <= p.target);
	/* The largest simulated size below the best misses, within 1/64 octave of it. */
	for (i = 0; i < (size_t)z.best; i++)
		if (z.pts[i].simulated && !z.pts[i].meets)
			miss = &z.pts[i];
	ck_assert_ptr_nonnull(miss);
	ck_assert_double_le((double)b->sim_lines / (double)miss->sim_lines, 1.0 + 1.0 / 64);
	/* The recorded 937 lines: simulated at floor(937 / 4). */
	ck_assert_int_eq(z.current.simulated, 1);
	ck_assert_uint_eq(z.current.sim_lines, 234);
	/* The text report sizes it in lines and names the dense table, not the sketch. */
	h.backend = PACER_BACKEND_DENSE;
	h.on_full = PACER_TBL_FULL_DROP;
	h.rows = 1;
	h.kind = PACER_LAYOUT_ROWS;
	h.lines_log2 = 10;
	pacer_file_header_set_lines(&h, 937);
	rd.hdr = h;
	rep.path = "dense.xpr";
	rep.rd = &rd;
	rep.s = &s;
	rep.t1_note = "skipped in this test";
	rep.sizing = &z;
	rep.target = p.target;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_text(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "per dense table copy"));
	ck_assert_ptr_nonnull(strstr(buf, " lines: --width "));
	ck_assert_ptr_nonnull(strstr(buf, "of dense table\n"));
	ck_assert_ptr_null(strstr(strstr(buf, "Sizing for"), "sketch"));
	ck_assert_ptr_null(strstr(buf, "e^(-n/w)"));
	ck_assert_ptr_null(strstr(buf, "rows 1:"));
	ck_assert_ptr_null(strstr(buf, "in the rows layout"));
	free(buf);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_html(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "per dense table copy"));
	ck_assert_ptr_nonnull(strstr(buf, "replayed through the datapath's dense table code"));
	free(buf);
	sizing_free(&z);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_sizing_needs_source_sampling)
{
	struct pacer_file_header h;
	struct sizing_result z;
	struct sizing_params p;
	struct an_stream s;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	h.sample_src_thresh = 0;
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	add(&s, 10000, 1, 0, 0, 1, PKT);
	sizing_params_from_header(&p, &h);
	p.target = 0.01;
	ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), -ENODATA);
	ck_assert_ptr_nonnull(strstr(z.note, "--sample-sources"));
	p.target = 0;
	ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), -EINVAL);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_table1_histogram_and_window)
{
	struct pacer_file_header h;
	struct an_stream s;
	int i;

	ck_assert_uint_eq(t1_hist_bin(0), 0);
	ck_assert_uint_eq(t1_hist_bin(1023), 0);
	ck_assert_uint_eq(t1_hist_bin(1024), 1);
	ck_assert_uint_eq(t1_hist_bin(1448), 1);
	ck_assert_uint_eq(t1_hist_bin(1449), 2);      /* 2^10.5 */
	ck_assert_uint_eq(t1_hist_bin(UINT64_MAX), T1_HIST_BINS - 1);
	ck_assert_uint_eq(t1_hist_bin(1ULL << 41), T1_HIST_BINS - 1);
	ck_assert_double_eq(t1_hist_edge(1), 1024.0);
	ck_assert_double_eq(t1_hist_edge(3), 2048.0);

	/* 100 items per second for 3 s, then a burst of 300 in 0.5 s: at most 350 in 1 s. */
	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	for (i = 0; i < 300; i++)
		add(&s, 10000 + (uint64_t)i * 10, (uint32_t)i % 37, 0, 0, 1, SRC);
	for (i = 0; i < 300; i++)
		add(&s, 13000 + (uint64_t)i * 5 / 3, (uint32_t)i % 37, 0, 0, 1, SRC);
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_uint_eq(t1_default_window(&s, S), 350);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_table1_runner)
{
	struct pacer_file_header h;
	struct t1_params p = { 0 };
	struct t1_result *t = calloc(1, sizeof(*t));
	struct an_stream s;
	uint64_t x = 7;
	int i;

	/* A skewed stream: 4000 items over 200 sources, 1 ms apart. */
	ck_assert_ptr_nonnull(t);
	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	for (i = 0; i < 4000; i++) {
		uint32_t src;

		x = pacer_mix64(x);
		src = (uint32_t)((x & 0xffff) * (x >> 48 & 0xff) / (256 * 65536 / 200));
		add(&s, 10000 + (uint64_t)i, src, (int)(x >> 40 & 1), 0, 3, SRC);
	}
	ck_assert_int_eq(an_stream_finish(&s), 0);
	p.window = 512;
	p.inv_eps = 4;
	p.interval_ns = 100000000; /* 100 ms = 100 items */
	p.tick_shift = 20;
	p.policy = PACER_POLICY_PACE;
	ck_assert_int_eq(t1_run(&s, &p, t, NULL, NULL), 0);
	ck_assert_uint_eq(t->items, 4000);
	ck_assert_uint_eq(t->window, 512);
	ck_assert_uint_eq(t->block_d, 128);
	ck_assert_msg(t->row[T1_HM].ok, "HistoricalMembership not built: %s", t->note);
	/* HistoricalMembership keeps its promise on every item in the window. */
	ck_assert_uint_gt(t->row[T1_HM].in_window, 3000);
	ck_assert_uint_eq(t->row[T1_HM].within_bound, t->row[T1_HM].in_window);
	ck_assert_uint_eq(t->row[T1_HM].missed, 0);
	ck_assert_uint_eq(t->row[T1_HM].stale, 0);
	ck_assert_double_le(t->row[T1_HM].max_rel_err, 0.25 + 1e-9);
	ck_assert_uint_gt(t->row[T1_HM].bytes, 0);
	ck_assert_double_gt(t->row[T1_HM].ns_per_item, 0);
	if (t->row[T1_EXACT].ok) {
		ck_assert_uint_eq(t->row[T1_EXACT].max_abs_err, 0);
		ck_assert_uint_eq(t->row[T1_EXACT].within_bound, t->row[T1_EXACT].in_window);
		ck_assert_uint_eq(t->row[T1_EXACT].verdict_diff, 0);
	}
	if (t->row[T1_BLOCK].ok) {
		ck_assert_uint_lt(t->row[T1_BLOCK].max_abs_err, t->block_d);
		ck_assert_uint_eq(t->row[T1_BLOCK].missed, 0);
	}
	/* Histograms cover every item once each. */
	{
		uint64_t sum = 0;
		unsigned b;

		for (b = 0; b < T1_HIST_BINS; b++)
			sum += t->hist[T1_H_EXACT][b];
		ck_assert_uint_eq(sum, 4000);
	}
	ck_assert_double_gt(t->paper_hm_bits, t->b_bits);
	free(t);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_reports)
{
	struct pacer_file_header h;
	struct pacer_file_reader rd = { 0 };
	struct audit_result a;
	struct sizing_result z;
	struct sizing_params p;
	struct an_report rep = { 0 };
	struct an_stream s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	build_load(&s, &h, 2000, 4, 1ULL << 32);
	rd.hdr = h;
	snprintf(rd.hdr.hostname, sizeof(rd.hdr.hostname), "h\xff\x01\"st\xc3\xa9");
	ck_assert_int_eq(audit_run(&s, &a), 0);
	sizing_params_from_header(&p, &h);
	p.target = 0.01;
	memcpy(p.key, sim_key, sizeof(p.key));
	ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), 0);
	rep.path = "test<&>.xpr";
	rep.rd = &rd;
	rep.s = &s;
	rep.audit = &a;
	rep.t1_note = "skipped in this test";
	rep.sizing = &z;
	rep.target = 0.01;

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_text(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "false passes: "));
	ck_assert_ptr_nonnull(strstr(buf, "recommended: xdp-pacer load IFNAME --rows"));
	ck_assert_ptr_nonnull(strstr(buf, "not run: skipped in this test"));
	free(buf);

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_json(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"file\":\"test<&>.xpr\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"table1\":null"));
	/* A hostname's raw bytes: not UTF-8, a control byte, a quote; valid UTF-8 kept. */
	ck_assert_ptr_nonnull(strstr(buf, "\"hostname\":\"h\\ufffd\\u0001\\\"st\xc3\xa9\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"false_passes\":"));
	ck_assert_ptr_null(strstr(buf, "nan"));
	ck_assert_ptr_null(strstr(buf, "inf"));
	free(buf);

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_html(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "test&lt;&amp;&gt;.xpr"));
	ck_assert_ptr_null(strstr(buf, "test<&>"));
	ck_assert_ptr_nonnull(strstr(buf, "<svg"));
	ck_assert_ptr_nonnull(strstr(strstr(buf, "<svg") + 1, "<svg"));
	ck_assert_ptr_null(strstr(buf, "nan"));
	free(buf);

	audit_free(&a);
	sizing_free(&z);
	an_stream_free(&s);
}
END_TEST

/* The reports of a recording with classes: a section per class, in text, JSON and HTML. */
START_TEST(test_reports_classes)
{
	struct pacer_file_header h;
	struct pacer_file_reader rd = { 0 };
	struct audit_result a, per[4];
	struct an_class_audit ca[4];
	struct an_report rep = { 0 };
	struct an_stream s;
	char *buf = NULL;
	size_t len = 0;
	uint32_t i;
	FILE *f;

	class_header(&h);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	add_class(&s, 10000, 1, 0);
	add_class(&s, 10050, 1, 0); /* web: a false pass */
	add_class(&s, 10000, 6, 0);
	add_class(&s, 12000, 6, 1); /* syn: a proven false drop */
	add_class(&s, 10500, 3, 0); /* bad: a false pass against its action */
	ck_assert_int_eq(an_stream_finish(&s), 0);
	rd.hdr = h;
	ck_assert_int_eq(audit_run(&s, &a), 0);
	for (i = 0; i < 4; i++) {
		ca[i].c = &h.classes[i];
		ca[i].slot = h.classes[i].stat_slot + 1;
		ck_assert_int_eq(audit_run_class(&s, ca[i].slot, &per[i]), 0);
		ca[i].audit = &per[i];
	}
	rep.path = "classes.xpr";
	rep.rd = &rd;
	rep.s = &s;
	rep.audit = &a;
	rep.classes = ca;
	rep.n_classes = 4;
	rep.t1_note = rep.sizing_note = "skipped in this test";
	rep.target = 0.01;

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_text(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "Audit per class"));
	ck_assert_ptr_nonnull(strstr(buf, "  class web: interval 100.000 ms, key src, policy pace\n"
					  "    2 packets of 1 sources: 2 admitted, 0 dropped\n"));
	ck_assert_ptr_nonnull(strstr(buf, "    false passes: 1\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  class dns: rate 4 per 1 s, key src, policy pace\n    no source-sampled packets\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  class bad: action drop\n"));
	ck_assert_ptr_nonnull(strstr(buf, "    against its action: false passes 1, false drops 0\n"));
	ck_assert_ptr_nonnull(strstr(buf, "  class syn: interval 1 s, key src+dport, policy pace\n"));
	ck_assert_ptr_nonnull(strstr(buf, "false drops 1 "));
	ck_assert_ptr_nonnull(strstr(buf, "    false passes: not checked (records hold the source, not the destination port"));
	free(buf);

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_json(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"classes\":[{\"name\":\"web\",\"class_slot\":1,\"action\":\"pace\",\"key\":\"src\",\"policy\":\"pace\",\"rate_n\":1,\"interval_ns\":100000000,"));
	ck_assert_ptr_nonnull(strstr(buf, "{\"name\":\"syn\",\"class_slot\":6,\"action\":\"pace\",\"key\":\"src+dport\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"false_passes_checked\":false"));
	ck_assert_ptr_nonnull(strstr(buf, "\"unknown_class_packets\":0"));
	ck_assert_ptr_null(strstr(buf, "nan"));
	free(buf);

	f = open_memstream(&buf, &len);
	ck_assert_int_eq(an_report_html(f, &rep), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "<h2>Audit per class</h2>"));
	ck_assert_ptr_nonnull(strstr(buf, "<td>syn</td>"));
	ck_assert_ptr_nonnull(strstr(buf, "<td>not checked</td>"));
	free(buf);

	audit_free(&a);
	for (i = 0; i < 4; i++)
		audit_free(&per[i]);
	an_stream_free(&s);
}
END_TEST

START_TEST(test_empty_stream)
{
	struct pacer_file_header h;
	struct audit_result a;
	struct sizing_result z;
	struct sizing_params p;
	struct t1_result *t = calloc(1, sizeof(*t));
	struct t1_params tp = { .inv_eps = 8, .interval_ns = S, .tick_shift = 25 };
	struct an_stream s;

	header(&h, PACER_POLICY_PACE, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(an_stream_init(&s, &h), 0);
	ck_assert_int_eq(an_stream_finish(&s), 0);
	ck_assert_int_eq(audit_run(&s, &a), 0);
	ck_assert_uint_eq(a.judged_records, 0);
	ck_assert_uint_eq(a.nbins, 0);
	audit_free(&a);
	sizing_params_from_header(&p, &h);
	p.target = 0.01;
	ck_assert_int_eq(sizing_run(&s, &p, &z, NULL, NULL), -ENODATA);
	ck_assert_int_eq(t1_run(&s, &tp, t, NULL, NULL), -ENODATA);
	free(t);
	an_stream_free(&s);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("analyze");
	TCase *audit = tcase_create("audit"), *sizing = tcase_create("sizing"),
	      *t1 = tcase_create("table1"), *rep = tcase_create("report");

	tcase_add_test(audit, test_audit_pace_shared);
	tcase_add_test(audit, test_audit_quiet_shared);
	tcase_add_test(audit, test_audit_percpu);
	tcase_add_test(audit, test_audit_rate);
	tcase_add_test(audit, test_audit_rate_fine_tick);
	tcase_add_test(audit, test_audit_classes);
	tcase_add_test(audit, test_audit_class_keyed);
	tcase_add_test(audit, test_stream_sorts_and_interns);
	tcase_add_test(audit, test_empty_stream);
	tcase_set_timeout(sizing, 120);
	tcase_add_test(sizing, test_sizing_arithmetic);
	tcase_add_test(sizing, test_sizing_scales_with_sampling);
	tcase_add_test(sizing, test_sizing_advice_is_loadable);
	tcase_add_test(sizing, test_sizing_needs_source_sampling);
	tcase_add_test(sizing, test_sizing_dense_any_line_count);
	tcase_add_test(t1, test_table1_histogram_and_window);
	tcase_add_test(t1, test_table1_runner);
	tcase_set_timeout(rep, 60);
	tcase_add_test(rep, test_reports);
	tcase_add_test(rep, test_reports_classes);
	suite_add_tcase(s, audit);
	suite_add_tcase(s, sizing);
	suite_add_tcase(s, t1);
	suite_add_tcase(s, rep);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
