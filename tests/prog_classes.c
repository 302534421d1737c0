// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic classes and the exempt/deny lists on the real XDP object under
 * BPF_PROG_TEST_RUN: every match term and action, the key modes, the lists
 * before the classes, unmatched traffic never paced, a live bank flip; then
 * each class's one-sided guarantee against an exact oracle on random
 * streams (every backend, both placements, each key mode).  Classes and
 * lists are written through user/lib/policy/classes_map.c, as the CLI writes
 * them.  Time is the cached clock's value, written by hand (armed, never
 * refreshed), never a sleep.
 */
#define _GNU_SOURCE
#include <check.h>
#include <sched.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "budget_cfg.h"
#include "classes_map.h"
#include "lib_opts.h"
#include "pacer_classify.h"
#include "pacer_budget.h"
#include "pacer_dense.h"
#include "pacer_place.h"
#include "pacer_names.h"
#include "lib_frames.h"
#include "lib_classgen.h"
#include "class_compile.h"
#include "pacer_rate.h"
#include "pacer_sketch.h"
#include "pacer_ticks.h"
#include "xdp_pacer.skel.h"
#include "prog_skel.h"
#include "lib_rng.h"

#define TICK_SHIFT 20 /* ~1.05 ms: class intervals of tens of ms fit the sketch's 64 ticks */
#define MS 1000000ULL

static const __u64 test_key[2] = { 0x1111222233334445ULL, 0x5555666677778889ULL };

struct fixture {
	struct xdp_pacer_bpf *skel;
	struct pacer_class_maps m;
	struct pacer_layout lay;
	int prog_fd;
	uint64_t now_ns, swept_ns;
};

static struct fixture fx;

/*
 * The dense table's 8-bit ticks wrap every 256 ticks (268 ms here): its
 * sweep must keep pace with the test's clock, which runs far faster than
 * the sweep timer's real one.  So each time the test's clock has moved half
 * the sweep's span, every line is swept once through the probe program
 * (the timer's round, on demand).
 */
static void sweep_keep_pace(void)
{
	uint64_t lines = PACER_LAYOUT_LINES(fx.lay) *
			 (fx.lay.placement == PACER_PLACEMENT_PERCPU ? fx.lay.copies : 1), k;
	struct pacer_tbl_sweep plan;
	uint8_t f[64];

	if (fx.lay.backend != PACER_BACKEND_DENSE ||
	    fx.now_ns - fx.swept_ns < ((uint64_t)PACER_DENSE_SWEEP_TICKS << TICK_SHIFT) / 2)
		return;
	fx.swept_ns = fx.now_ns;
	pacer_dense_sweep_plan(lines, TICK_SHIFT, &plan);
	frame_v4(f, htonl(0x0a630001u));
	for (k = 0; k < (lines + plan.chunk - 1) / plan.chunk; k++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f, .data_size_in = sizeof(f));

		ck_assert_int_eq(bpf_prog_test_run_opts(bpf_program__fd(fx.skel->progs.pacer_sweep_probe),
							&o), 0);
		ck_assert_int_eq(o.retval, XDP_PASS);
	}
}

static void set_clock(uint64_t ns)
{
	struct pacer_clock_state cs;
	uint32_t zero = 0;

	memset(&cs, 0, sizeof(cs));
	cs.armed = 1; /* running: packets read now_ns; no timer ever rewrites it */
	cs.now_ns = ns;
	fx.now_ns = ns;
	ck_assert_int_eq(bpf_map_update_elem(bpf_map__fd(fx.skel->maps.pacer_clock), &zero, &cs,
					     BPF_ANY), 0);
	sweep_keep_pace();
}

/* Set before fixture_load(): a global budget ("K/T"), and records of every packet. */
static const char *fx_budget;
static int fx_record;

static void fixture_load(uint32_t backend, uint32_t placement)
{
	struct pacer_layout lay = {
		.magic = PACER_LAYOUT_MAGIC, .abi_version = PACER_ABI_VERSION,
		.rows = backend == PACER_BACKEND_SKETCH ? 4 : 1, .kind = PACER_LAYOUT_ROWS,
		.placement = placement, .clock = PACER_CLOCK_CACHED, .tick_shift = TICK_SHIFT,
		.lines_log2 = 10,
		.copies = placement == PACER_PLACEMENT_PERCPU ? (uint32_t)libbpf_num_possible_cpus() : 1,
		.backend = backend, .on_full = PACER_TBL_FULL_DROP,
		.lines = backend == PACER_BACKEND_DENSE ? 1021 : 0, /* the dense table: any count */
	};
	struct pacer_config *cfg;
	uint32_t lines = (uint32_t)PACER_LAYOUT_LINES(lay);

	memset(&fx, 0, sizeof(fx));
	fx.skel = xdp_pacer_bpf__open();
	ck_assert_ptr_nonnull(fx.skel);
	fx.skel->rodata->pacer_layout = lay;
	cfg = &fx.skel->data->pacer_cfg;
	cfg->interval_ns = 1000 * MS;
	cfg->thresh_ticks = PACER_MAX_THRESH; /* the classless limit: 64 ticks */
	cfg->policy = PACER_POLICY_PACE;
	cfg->malformed = PACER_MALFORMED_DROP;
	cfg->prefix4 = 32;
	cfg->prefix6 = 64;
	cfg->rate_n = 1;
	cfg->hash_key[0] = test_key[0];
	cfg->hash_key[1] = test_key[1];
	if (fx_budget) {
		fx.skel->data_budget->pacer_budget_cfg.seen_cells_log2 = PACER_BUDGET_DEFAULT_SEEN_LOG2;
		budget_cfg(&fx.skel->data_budget->pacer_budget_cfg, fx_budget, NULL, NULL, "0");
	}
	if (fx_record)
		cfg->sample_pkt_thresh = 0xffffffffu;
	ck_assert_int_eq(bpf_map__set_max_entries(fx.skel->maps.pacer_sk, lines * lay.copies), 0);
	if (backend == PACER_BACKEND_DENSE)
		ck_assert_int_eq(bpf_program__set_autoload(fx.skel->progs.pacer_sweep_probe, true), 0);
	ck_assert_int_eq(xdp_pacer_bpf__load(fx.skel), 0);
	fx.prog_fd = bpf_program__fd(fx.skel->progs.xdp_pacer);
	fx.lay = lay;
	skel_class_maps(fx.skel, &fx.m);
	fx.m.cfg = cfg;
	fx.m.backend = backend;
	fx.m.ncpus = libbpf_num_possible_cpus();
	fx.swept_ns = 1000000 * MS;
	set_clock(1000000 * MS);
}

static void fixture_unload(void)
{
	xdp_pacer_bpf__destroy(fx.skel);
	fx.skel = NULL;
}

/* ---- frames ---- */

struct pk {
	const char *src, *dst;
	uint8_t proto;
	uint16_t sport, dport;
	uint8_t flags;
	int vlan;          /* outer VLAN id, or -1 */
	uint16_t frag_off; /* IPv4 fragment offset field (host order) */
};

struct frame {
	uint8_t b[160];
	size_t len;
};

static struct frame build(const struct pk *p)
{
	struct frame f;
	size_t o = 12, l4;
	int v6 = strchr(p->src, ':') != NULL;
	uint8_t proto = p->proto;

	memset(&f, 0, sizeof(f));
	f.b[0] = 0x02;
	f.b[6] = 0x02;
	if (p->vlan >= 0) {
		f.b[o] = 0x81;
		f.b[o + 2] = (uint8_t)(p->vlan >> 8);
		f.b[o + 3] = (uint8_t)p->vlan;
		o += 4;
	}
	f.b[o] = v6 ? 0x86 : 0x08;
	f.b[o + 1] = v6 ? 0xdd : 0x00;
	o += 2;
	if (v6) {
		f.b[o] = 0x60;
		f.b[o + 6] = proto;
		f.b[o + 7] = 64;
		ck_assert_int_eq(inet_pton(AF_INET6, p->src, f.b + o + 8), 1);
		ck_assert_int_eq(inet_pton(AF_INET6, p->dst, f.b + o + 24), 1);
		l4 = o + 40;
	} else {
		f.b[o] = 0x45;
		f.b[o + 6] = (uint8_t)(p->frag_off >> 8);
		f.b[o + 7] = (uint8_t)p->frag_off;
		f.b[o + 8] = 64;
		f.b[o + 9] = proto;
		ck_assert_int_eq(inet_pton(AF_INET, p->src, f.b + o + 12), 1);
		ck_assert_int_eq(inet_pton(AF_INET, p->dst, f.b + o + 16), 1);
		l4 = o + 20;
	}
	f.b[l4] = (uint8_t)(p->sport >> 8);
	f.b[l4 + 1] = (uint8_t)p->sport;
	f.b[l4 + 2] = (uint8_t)(p->dport >> 8);
	f.b[l4 + 3] = (uint8_t)p->dport;
	if (proto == PACER_IPPROTO_TCP) {
		f.b[l4 + 12] = 0x50;
		f.b[l4 + 13] = p->flags;
	}
	f.len = l4 + (proto == PACER_IPPROTO_TCP ? 20 : 8) + 6;
	if (!v6) {
		uint16_t tot = (uint16_t)(f.len - o);

		f.b[o + 2] = (uint8_t)(tot >> 8);
		f.b[o + 3] = (uint8_t)tot;
	} else {
		uint16_t pl = (uint16_t)(f.len - l4);

		f.b[o + 4] = (uint8_t)(pl >> 8);
		f.b[o + 5] = (uint8_t)pl;
	}
	return f;
}

static int run_len(const struct frame *f, size_t len)
{
	uint8_t out[256];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = f->b, .data_size_in = (uint32_t)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int err = bpf_prog_test_run_opts(fx.prog_fd, &o);

	ck_assert_msg(err == 0, "BPF_PROG_TEST_RUN failed: %d (%s)", err, strerror(errno));
	return (int)o.retval;
}

static int run_pk(const struct pk *p)
{
	struct frame f = build(p);

	return run_len(&f, f.len);
}

static uint64_t counter(enum pacer_stat s)
{
	return skel_counter(fx.skel, s);
}

static uint64_t class_counter(uint32_t slot, enum pacer_class_stat s)
{
	uint64_t c[PACER_CSTAT_MAX];

	ck_assert_int_eq(pacer_class_counters_read(&fx.m, slot, c), 0);
	return c[s];
}

/* ---- classes ---- */

static struct pacer_class cls(const char *name, uint32_t slot, uint32_t action, uint64_t interval_ns)
{
	struct pacer_class c;

	memset(&c, 0, sizeof(c));
	snprintf(c.name, sizeof(c.name), "%s", name);
	c.action = action;
	c.key_mode = PACER_KEY_SRC;
	c.prefix4 = 32;
	c.prefix6 = 128;
	c.policy = PACER_POLICY_PACE;
	c.interval_ns = interval_ns;
	c.rate_n = 1;
	c.thresh_ticks = action == PACER_ACTION_PACE ? pacer_thresh_ticks(interval_ns, TICK_SHIFT) : 0;
	c.id = 100 + slot;
	c.stat_slot = slot;
	return c;
}

static void proto_port(struct pacer_class *c, uint8_t proto, uint32_t term, uint16_t lo, uint16_t hi)
{
	c->m.terms |= PACER_M_PROTO | term;
	c->m.proto = proto;
	if (term == PACER_M_DPORT) {
		c->m.dport_lo = lo;
		c->m.dport_hi = hi;
	} else if (term == PACER_M_SPORT) {
		c->m.sport_lo = lo;
		c->m.sport_hi = hi;
	}
}

static void prefix(struct pacer_class *c, uint32_t term, const char *addr, uint32_t len)
{
	uint8_t a[16];
	uint32_t fam = strchr(addr, ':') ? 6 : 4;

	ck_assert_int_eq(inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, a), 1);
	ck_assert_int_eq(pacer_match_set_prefix(&c->m, term, fam, a, len), 0);
}

static void install(const struct pacer_class *c, int n)
{
	char err[160] = "";

	ck_assert_msg(pacer_classes_install(&fx.m, c, n, err, sizeof(err)) == 0, "install: %s", err);
}

static struct pacer_prefix pfx(const char *addr, uint32_t len)
{
	struct pacer_prefix p;

	memset(&p, 0, sizeof(p));
	p.family = strchr(addr, ':') ? 6 : 4;
	p.len = len;
	ck_assert_int_eq(inet_pton(p.family == 4 ? AF_INET : AF_INET6, addr, p.addr), 1);
	return p;
}

/* The classes of the table-driven tests, by stat slot. */
enum { C_VLAN_DROP, C_DNS, C_SYN, C_NTP_PASS, C_WEB6, C_ICMP, C_SRC_DROP, C_UDP_ANY, C_N };

static int table_classes(struct pacer_class *c)
{
	c[C_VLAN_DROP] = cls("vlan7", C_VLAN_DROP, PACER_ACTION_DROP, 0);
	c[C_VLAN_DROP].m.terms = PACER_M_VLAN;
	c[C_VLAN_DROP].m.vlan = 7;
	c[C_DNS] = cls("dns", C_DNS, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[C_DNS], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[C_SYN] = cls("syn", C_SYN, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[C_SYN], PACER_IPPROTO_TCP, PACER_M_SYN, 0, 0);
	c[C_NTP_PASS] = cls("ntp", C_NTP_PASS, PACER_ACTION_PASS, 0);
	proto_port(&c[C_NTP_PASS], PACER_IPPROTO_UDP, PACER_M_SPORT, 123, 123);
	c[C_WEB6] = cls("web6", C_WEB6, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[C_WEB6], PACER_IPPROTO_TCP, PACER_M_DPORT, 80, 89);
	prefix(&c[C_WEB6], PACER_M_DST, "2001:db8:1::", 48);
	c[C_ICMP] = cls("icmp", C_ICMP, PACER_ACTION_PACE, 20 * MS);
	c[C_ICMP].m.terms = PACER_M_PROTO | PACER_M_FAMILY;
	c[C_ICMP].m.proto = PACER_IPPROTO_ICMP;
	c[C_ICMP].m.family = 4;
	c[C_SRC_DROP] = cls("bad-net", C_SRC_DROP, PACER_ACTION_DROP, 0);
	prefix(&c[C_SRC_DROP], PACER_M_SRC, "198.51.100.0", 24);
	c[C_UDP_ANY] = cls("udp", C_UDP_ANY, PACER_ACTION_PACE, 20 * MS);
	c[C_UDP_ANY].m.terms = PACER_M_PROTO;
	c[C_UDP_ANY].m.proto = PACER_IPPROTO_UDP;
	return C_N;
}

#define PASS XDP_PASS
#define DROP XDP_DROP
#define NONE (-1) /* unclassified */

/*
 * Every term and action: each packet (a source of its own) sent three
 * times in one instant; which class decides it, and its three verdicts.
 */
START_TEST(test_terms_and_actions)
{
	static const struct {
		struct pk p;
		int cls, v[3];
	} cases[] = {
		{ { "10.1.0.1", "192.0.2.1", 17, 999, 53, 0, -1, 0 }, C_DNS, { PASS, DROP, DROP } },
		{ { "10.1.0.2", "192.0.2.1", 17, 999, 53, 0, 7, 0 }, C_VLAN_DROP, { DROP, DROP, DROP } },
		{ { "10.1.0.3", "192.0.2.1", 17, 999, 53, 0, 8, 0 }, C_DNS, { PASS, DROP, DROP } },
		{ { "10.1.0.4", "192.0.2.1", 17, 999, 54, 0, -1, 0 }, C_UDP_ANY, { PASS, DROP, DROP } },
		{ { "10.1.0.5", "192.0.2.1", 6, 999, 22, PACER_TCP_SYN, -1, 0 }, C_SYN, { PASS, DROP, DROP } },
		{ { "10.1.0.6", "192.0.2.1", 6, 999, 22, PACER_TCP_SYN | PACER_TCP_ACK, -1, 0 }, NONE, { PASS, PASS, PASS } },
		{ { "10.1.0.7", "192.0.2.1", 6, 999, 22, PACER_TCP_ACK, -1, 0 }, NONE, { PASS, PASS, PASS } },
		{ { "10.1.0.8", "192.0.2.1", 17, 123, 5000, 0, -1, 0 }, C_NTP_PASS, { PASS, PASS, PASS } },
		{ { "10.1.0.9", "192.0.2.1", 17, 124, 5000, 0, -1, 0 }, C_UDP_ANY, { PASS, DROP, DROP } },
		{ { "2001:db8::9", "2001:db8:1:5::1", 6, 999, 80, PACER_TCP_ACK, -1, 0 }, C_WEB6, { PASS, DROP, DROP } },
		{ { "2001:db8::a", "2001:db8:1:5::1", 6, 999, 89, PACER_TCP_ACK, -1, 0 }, C_WEB6, { PASS, DROP, DROP } },
		{ { "2001:db8::b", "2001:db8:1:5::1", 6, 999, 90, PACER_TCP_ACK, -1, 0 }, NONE, { PASS, PASS, PASS } },
		{ { "2001:db8::c", "2001:db8:2::1", 6, 999, 80, PACER_TCP_ACK, -1, 0 }, NONE, { PASS, PASS, PASS } },
		{ { "2001:db8::d", "2001:db8:2::1", 6, 999, 80, PACER_TCP_SYN, -1, 0 }, C_SYN, { PASS, DROP, DROP } },
		{ { "10.1.0.10", "192.0.2.1", 1, 0, 0, 0, -1, 0 }, C_ICMP, { PASS, DROP, DROP } },
		{ { "2001:db8::e", "2001:db8:2::1", 58, 0, 0, 0, -1, 0 }, NONE, { PASS, PASS, PASS } },
		{ { "198.51.100.77", "192.0.2.1", 17, 999, 53, 0, -1, 0 }, C_DNS, { PASS, DROP, DROP } },
		{ { "198.51.100.78", "192.0.2.1", 6, 999, 443, PACER_TCP_ACK, -1, 0 }, C_SRC_DROP, { DROP, DROP, DROP } },
		/* a non-first fragment of a DNS query: no port, so the catch-all udp class */
		{ { "10.1.0.11", "192.0.2.1", 17, 0, 0, 0, -1, 0x0010 }, C_UDP_ANY, { PASS, DROP, DROP } },
		{ { "10.1.0.12", "192.0.2.1", 47 /* GRE */, 0, 0, 0, -1, 0 }, NONE, { PASS, PASS, PASS } },
	};
	struct pacer_class c[PACER_MAX_CLASSES];
	uint64_t seen[C_N] = { 0 }, passed[C_N] = { 0 }, dropped[C_N] = { 0 };
	uint64_t unclassified = 0, class_dropped = 0;
	size_t i;
	int n, k;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	n = table_classes(c);
	install(c, n);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (k = 0; k < 3; k++) {
			int got = run_pk(&cases[i].p);

			ck_assert_msg(got == cases[i].v[k], "case %zu (%s) packet %d: verdict %d", i,
				      cases[i].p.src, k, got);
			if (cases[i].cls == NONE) {
				unclassified++;
				continue;
			}
			seen[cases[i].cls]++;
			(got == PASS ? passed : dropped)[cases[i].cls]++;
			class_dropped += got == DROP && c[cases[i].cls].action == PACER_ACTION_DROP;
		}
	}
	for (i = 0; i < C_N; i++) {
		ck_assert_msg(class_counter((uint32_t)i, PACER_CSTAT_SEEN) == seen[i], "class %zu seen", i);
		ck_assert_msg(class_counter((uint32_t)i, PACER_CSTAT_PASSED) == passed[i], "class %zu passed", i);
		ck_assert_msg(class_counter((uint32_t)i, PACER_CSTAT_DROPPED) == dropped[i], "class %zu dropped", i);
		ck_assert_uint_eq(class_counter((uint32_t)i, PACER_CSTAT_DROPPED_BUDGET), 0);
	}
	ck_assert_uint_eq(counter(PACER_STAT_UNCLASSIFIED), unclassified);
	ck_assert_uint_eq(counter(PACER_STAT_CLASS_DROPPED), class_dropped);
	ck_assert_uint_eq(counter(PACER_STAT_SEEN), 3 * sizeof(cases) / sizeof(cases[0]));
	ck_assert_uint_eq(counter(PACER_STAT_IPV4) + counter(PACER_STAT_IPV6), counter(PACER_STAT_SEEN));
	fixture_unload();
}
END_TEST

/* The first class that fits decides: the same two classes in either order. */
START_TEST(test_first_match_wins)
{
	struct pacer_class c[2];
	struct pk p = { "10.2.0.1", "192.0.2.1", 17, 999, 53, 0, -1, 0 };

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	c[0] = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[1] = cls("all", 1, PACER_ACTION_PASS, 0);
	install(c, 2);
	ck_assert_int_eq(run_pk(&p), PASS);
	ck_assert_int_eq(run_pk(&p), DROP);
	c[1] = c[0];
	c[0] = cls("all", 1, PACER_ACTION_PASS, 0);
	install(c, 2);
	ck_assert_int_eq(run_pk(&p), PASS);
	ck_assert_int_eq(run_pk(&p), PASS);
	ck_assert_uint_eq(class_counter(0, PACER_CSTAT_SEEN), 2);
	ck_assert_uint_eq(class_counter(1, PACER_CSTAT_SEEN), 2);
	fixture_unload();
}
END_TEST

/*
 * Key modes and the class's own prefix: which second packet shares the
 * first one's key (dropped) and which does not (passed).  _i: backend.
 */
START_TEST(test_key_modes)
{
	static const struct {
		uint32_t mode, prefix4;
		struct pk second;
		int v;
	} cases[] = {
		{ PACER_KEY_SRC, 32, { "10.3.0.1", "192.0.2.2", 17, 1, 5001, 0, -1, 0 }, DROP },
		{ PACER_KEY_SRC, 32, { "10.3.0.2", "192.0.2.1", 17, 1, 5000, 0, -1, 0 }, PASS },
		{ PACER_KEY_SRC, 24, { "10.3.0.2", "192.0.2.1", 17, 1, 5000, 0, -1, 0 }, DROP },
		{ PACER_KEY_SRC, 24, { "10.3.1.1", "192.0.2.1", 17, 1, 5000, 0, -1, 0 }, PASS },
		{ PACER_KEY_SRC_DPORT, 32, { "10.3.0.1", "192.0.2.2", 17, 2, 5000, 0, -1, 0 }, DROP },
		{ PACER_KEY_SRC_DPORT, 32, { "10.3.0.1", "192.0.2.1", 17, 1, 5001, 0, -1, 0 }, PASS },
		{ PACER_KEY_SRC_DPORT, 24, { "10.3.0.9", "192.0.2.1", 17, 1, 5000, 0, -1, 0 }, DROP },
		{ PACER_KEY_SRC_DST, 32, { "10.3.0.1", "192.0.2.1", 17, 2, 5001, 0, -1, 0 }, DROP },
		{ PACER_KEY_SRC_DST, 32, { "10.3.0.1", "192.0.2.2", 17, 1, 5000, 0, -1, 0 }, PASS },
		{ PACER_KEY_SRC_DST, 32, { "10.3.0.2", "192.0.2.1", 17, 1, 5000, 0, -1, 0 }, PASS },
	};
	const struct pk first = { "10.3.0.1", "192.0.2.1", 17, 1, 5000, 0, -1, 0 };
	uint32_t backend = (uint32_t)_i;
	struct pacer_class c;
	size_t i;

	fixture_load(backend, PACER_PLACEMENT_SHARED);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = cls("udp", 0, PACER_ACTION_PACE, 20 * MS);
		c.m.terms = PACER_M_PROTO;
		c.m.proto = PACER_IPPROTO_UDP;
		c.key_mode = cases[i].mode;
		c.prefix4 = cases[i].prefix4;
		c.id = (uint32_t)i + 1; /* a fresh class: no state from the case before */
		install(&c, 1);
		ck_assert_int_eq(run_pk(&first), PASS);
		ck_assert_msg(run_pk(&cases[i].second) == cases[i].v, "case %zu", i);
		/* an interval and more later both keys are free again */
		set_clock(fx.now_ns + 30 * MS);
		ck_assert_int_eq(run_pk(&first), PASS);
	}
	fixture_unload();
}
END_TEST

/*
 * The lists come first: exempt passes and deny drops whatever the classes
 * say, never paced, in both paths (classes and none); the longest prefix
 * wins; a family with no prefixes skips its trie.
 */
START_TEST(test_lists_before_classes)
{
	struct pacer_prefix ex[3] = { pfx("10.4.0.0", 16), pfx("2001:db8:4::", 48),
				      pfx("10.5.0.7", 32) };
	struct pacer_prefix deny[2] = { pfx("10.4.9.0", 24), pfx("10.5.0.0", 16) };
	const struct pk exempt4 = { "10.4.1.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk exempt6 = { "2001:db8:4::1", "2001:db8::1", 17, 1, 53, 0, -1, 0 };
	const struct pk denied = { "10.4.9.1", "192.0.2.1", 17, 1, 123, 0, -1, 0 };
	const struct pk exempt_in_deny = { "10.5.0.7", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk denied2 = { "10.5.0.8", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk other = { "10.6.0.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	struct pacer_class c[2];
	char err[160];
	int with_classes, k;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(pacer_lists_apply(&fx.m, ex, 3, deny, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.m.cfg->list_sel, PACER_LIST_V4 | PACER_LIST_V6);
	c[0] = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[1] = cls("ntp", 1, PACER_ACTION_PASS, 0);
	proto_port(&c[1], PACER_IPPROTO_UDP, PACER_M_DPORT, 123, 123);
	for (with_classes = 0; with_classes < 2; with_classes++) {
		install(c, with_classes ? 2 : 0);
		for (k = 0; k < 5; k++) {
			ck_assert_int_eq(run_pk(&exempt4), PASS);
			ck_assert_int_eq(run_pk(&exempt6), PASS);
			ck_assert_int_eq(run_pk(&exempt_in_deny), PASS);
			ck_assert_int_eq(run_pk(&denied), DROP);
			ck_assert_int_eq(run_pk(&denied2), DROP);
		}
		ck_assert_int_eq(run_pk(&other), PASS);
		ck_assert_int_eq(run_pk(&other), DROP);
		set_clock(fx.now_ns + 100 * MS);
	}
	ck_assert_uint_eq(counter(PACER_STAT_EXEMPT_PASSED), 30);
	ck_assert_uint_eq(counter(PACER_STAT_DENY_DROPPED), 20);
	/*
	 * ipv4 and ipv6 count every well-formed IP frame by family, the listed
	 * ones too, in both paths: 22 IPv4 and 5 IPv6 frames a round (so with
	 * the non-IP and malformed counters they sum to seen).
	 */
	ck_assert_uint_eq(counter(PACER_STAT_IPV4), 44);
	ck_assert_uint_eq(counter(PACER_STAT_IPV6), 10);
	ck_assert_uint_eq(counter(PACER_STAT_IPV4) + counter(PACER_STAT_IPV6), counter(PACER_STAT_SEEN));
	ck_assert_uint_eq(class_counter(0, PACER_CSTAT_SEEN), 2);
	ck_assert_uint_eq(class_counter(1, PACER_CSTAT_SEEN), 0);
	/* A source on both lists is refused, and nothing changes. */
	deny[1] = pfx("10.5.0.7", 32);
	ck_assert_int_eq(pacer_lists_apply(&fx.m, ex, 3, deny, 2, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "10.5.0.7/32 is on both the exempt and the deny list");
	ck_assert_int_eq(run_pk(&denied2), DROP);
	/* Only IPv6 left: the IPv4 trie is skipped, then emptied. */
	ck_assert_int_eq(pacer_lists_apply(&fx.m, ex + 1, 1, NULL, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.m.cfg->list_sel, PACER_LIST_V6);
	ck_assert_int_eq(run_pk(&denied2), PASS);
	ck_assert_int_eq(run_pk(&exempt6), PASS);
	{
		struct pacer_prefix out[4];
		uint32_t verdict[4];
		int n;

		ck_assert_int_eq(pacer_lists_read(&fx.m, PACER_LIST_ORIGINS_ALL, out, verdict, 4, &n), 0);
		ck_assert_int_eq(n, 1);
		ck_assert_uint_eq(out[0].family, 6);
		ck_assert_uint_eq(verdict[0], PACER_LIST_EXEMPT);
	}
	ck_assert_int_eq(pacer_lists_apply(&fx.m, NULL, 0, NULL, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(fx.m.cfg->list_sel, 0);
	{
		/* a trie entry whose filter bit is clear is not looked for: the filter gates the walk */
		struct pacer_list4_key k = { .prefixlen = 16, .addr = { 10, 4, 0, 0 } };
		struct pacer_list_value v = { .verdict = PACER_LIST_DENY, .prefixlen = 16 };

		ck_assert_int_eq(bpf_map_update_elem(fx.m.list4_fd, &k, &v, BPF_ANY), 0);
		fx.m.cfg->list_sel = PACER_LIST_V4;
		ck_assert_int_eq(run_pk(&exempt4), PASS);
	}
	fixture_unload();
}
END_TEST

/* Set the expiry of the IPv4 entry a/len in the trie directly (1: long past). */
static void expire_at(const char *a, uint32_t len, uint64_t expires_ns)
{
	struct pacer_list4_key k = { .prefixlen = len };
	struct pacer_list_value v;

	ck_assert_int_eq(inet_pton(AF_INET, a, k.addr), 1);
	ck_assert_int_eq(bpf_map_lookup_elem(fx.m.list4_fd, &k, &v), 0);
	ck_assert_uint_eq(v.prefixlen, len);
	v.expires_ns = expires_ns;
	ck_assert_int_eq(bpf_map_update_elem(fx.m.list4_fd, &k, &v, BPF_EXIST), 0);
}

/*
 * add/del/flush with timeouts: an expired entry reads as absent and the
 * trie is asked again below it (at most PACER_LIST_LOOKUPS lookups); a
 * reload keeps add's entries; the configuration's entries are not add's
 * to change.
 */
START_TEST(test_lists_incremental_expiry)
{
	struct pacer_prefix conf_ex = pfx("10.7.0.0", 16), conf_deny = pfx("192.0.2.0", 24);
	struct pacer_prefix host = pfx("10.7.1.1", 32), net24 = pfx("10.7.1.0", 24);
	struct pacer_prefix nest[4] = { pfx("10.7.2.1", 32), pfx("10.7.2.0", 31), pfx("10.7.2.0", 30),
					pfx("10.7.2.0", 29) };
	const struct pk from_host = { "10.7.1.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk from_nest = { "10.7.2.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	struct pacer_list_change r;
	struct pacer_list_entry *all = NULL;
	struct pacer_list_counts c;
	size_t n = 0, collected = 0;
	uint64_t exempted, denied;
	char err[256];
	int i;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	ck_assert_int_eq(pacer_lists_apply(&fx.m, &conf_ex, 1, &conf_deny, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, &host, 1, 3600, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.added, 1);
	ck_assert_int_eq(run_pk(&from_host), DROP);
	/* expired: absent, the /16 exempt below it decides */
	expire_at("10.7.1.1", 32, 1);
	exempted = counter(PACER_STAT_EXEMPT_PASSED);
	ck_assert_int_eq(run_pk(&from_host), PASS);
	ck_assert_uint_eq(counter(PACER_STAT_EXEMPT_PASSED), exempted + 1);
	/* ... or a live /24 deny between them */
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, &net24, 1, 0, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(run_pk(&from_host), DROP);
	/* adding the expired prefix again: a new entry; again while live: its timeout anew */
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, &host, 1, 60, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.added, 1);
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, &host, 1, 120, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.refreshed, 1);
	/* four nested expired entries: the lookups end there, the source reads as on no list */
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, nest, 4, 3600, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.added, 4);
	ck_assert_int_eq(run_pk(&from_nest), DROP);
	expire_at("10.7.2.1", 32, 1);
	expire_at("10.7.2.0", 31, 1);
	expire_at("10.7.2.0", 30, 1);
	ck_assert_int_eq(run_pk(&from_nest), DROP); /* the /29, fourth lookup */
	expire_at("10.7.2.0", 29, 1);
	exempted = counter(PACER_STAT_EXEMPT_PASSED);
	denied = counter(PACER_STAT_DENY_DROPPED);
	ck_assert_int_eq(run_pk(&from_nest), PASS); /* paced: first packet of its source */
	ck_assert_uint_eq(counter(PACER_STAT_EXEMPT_PASSED), exempted);
	ck_assert_uint_eq(counter(PACER_STAT_DENY_DROPPED), denied);
	/* collected: then the /16 exempt decides */
	ck_assert_int_eq(pacer_lists_collect(&fx.m, &collected), 0);
	ck_assert_uint_eq(collected, 4);
	ck_assert_int_eq(run_pk(&from_nest), PASS);
	ck_assert_uint_eq(counter(PACER_STAT_EXEMPT_PASSED), exempted + 1);
	/* the other list's prefix, the configuration's entries: refused, nothing changed */
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_EXEMPT, &net24, 1, 0, &r, err, sizeof(err)), -EEXIST);
	ck_assert_str_eq(err, "10.7.1.0/24 is on the deny list: delete it there first");
	ck_assert_int_eq(pacer_lists_del(&fx.m, PACER_LIST_DENY, &conf_deny, 1, false, &r, err, sizeof(err)), -EPERM);
	ck_assert_int_eq(pacer_lists_del(&fx.m, PACER_LIST_DENY, nest, 1, false, &r, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(pacer_lists_del(&fx.m, PACER_LIST_DENY, nest, 1, true, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.missing, 1);
	ck_assert_int_eq(pacer_lists_add(&fx.m, PACER_LIST_DENY, &conf_deny, 1, 60, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.kept_conf, 1);
	/* a reload: the configuration's entries replaced, add's kept */
	ck_assert_int_eq(pacer_lists_apply(&fx.m, &conf_ex, 1, NULL, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_lists_dump(&fx.m, &all, &n), 0);
	pacer_lists_count(all, n, pacer_list_clock_ns(), &c);
	free(all);
	ck_assert_uint_eq(c.n[0][PACER_LIST_CONF], 1);
	ck_assert_uint_eq(c.n[1][PACER_LIST_CONF], 0);
	ck_assert_uint_eq(c.n[1][PACER_LIST_ADDED], 2);
	ck_assert_uint_eq(c.timed[1], 1);
	ck_assert_int_eq(run_pk(&from_host), DROP);
	/* del, then flush: the configuration's exempt stays */
	ck_assert_int_eq(pacer_lists_del(&fx.m, PACER_LIST_DENY, &host, 1, false, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.removed, 1);
	ck_assert_int_eq(run_pk(&from_host), DROP); /* the /24 */
	ck_assert_int_eq(pacer_lists_flush(&fx.m, PACER_LIST_DENY, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.removed, 1);
	exempted = counter(PACER_STAT_EXEMPT_PASSED);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(run_pk(&from_host), PASS);
	ck_assert_uint_eq(counter(PACER_STAT_EXEMPT_PASSED), exempted + 3);
	ck_assert_uint_eq(fx.m.cfg->list_sel, PACER_LIST_V4);
	fixture_unload();
}
END_TEST

/* 10 000 exempt prefixes in, half of them swapped for others: the tries hold exactly the new lists. */
START_TEST(test_lists_diff_many)
{
	static struct pacer_prefix ex[10000], out[20001];
	static uint32_t verdict[20001];
	char err[160];
	int i, n;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	for (i = 0; i < 10000; i++) {
		char a[32];

		snprintf(a, sizeof(a), "10.%d.%d.0", i / 256, i % 256);
		ex[i] = pfx(a, 24);
	}
	ck_assert_int_eq(pacer_lists_apply(&fx.m, ex, 10000, NULL, 0, err, sizeof(err)), 0);
	for (i = 0; i < 5000; i++) {
		char a[32];

		snprintf(a, sizeof(a), "172.16.%d.%d", i / 256, i % 256);
		ex[i] = pfx(a, 32);
	}
	ck_assert_int_eq(pacer_lists_apply(&fx.m, ex, 10000, NULL, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(pacer_lists_read(&fx.m, PACER_LIST_ORIGINS_ALL, out, verdict, 20001, &n), 0);
	ck_assert_int_eq(n, 10000);
	{
		/* the filter holds exactly the new lists' bits: the removed prefixes' are gone */
		static __u64 want[2 * PACER_LIST_FILTER_WORDS];
		size_t bytes = sizeof(want);
		__u64 *live = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fx.m.list_filter_fd, 0);

		ck_assert_ptr_ne(live, MAP_FAILED);
		memset(want, 0, bytes);
		for (i = 0; i < 10000; i++)
			pacer_list_filter_set(want, ex[i].family, ex[i].len, ex[i].addr);
		ck_assert_mem_eq(live, want, bytes);
		munmap(live, bytes);
	}
	{
		const struct pk in_new = { "172.16.19.135", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
		const struct pk gone = { "10.0.3.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
		const struct pk kept = { "10.39.15.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };

		ck_assert_int_eq(run_pk(&in_new), PASS);
		ck_assert_int_eq(run_pk(&in_new), PASS);
		ck_assert_int_eq(run_pk(&kept), PASS);
		ck_assert_int_eq(run_pk(&kept), PASS);
		ck_assert_int_eq(run_pk(&gone), PASS);
		ck_assert_int_eq(run_pk(&gone), DROP);
	}
	fixture_unload();
}
END_TEST

/* Traffic no class matches passes, however much of it: never paced, counted. */
START_TEST(test_unmatched_never_paced)
{
	struct pacer_class c = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
	struct pk p = { "10.7.0.1", "192.0.2.1", 17, 1, 5353, 0, -1, 0 };
	struct pk q = { "2001:db8:7::1", "2001:db8::1", 6, 1, 53, PACER_TCP_SYN, -1, 0 };
	int k;

	fixture_load(PACER_BACKEND_TABLE, PACER_PLACEMENT_SHARED);
	proto_port(&c, PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	install(&c, 1);
	for (k = 0; k < 200; k++) {
		ck_assert_int_eq(run_pk(&p), PASS);
		ck_assert_int_eq(run_pk(&q), PASS);
	}
	ck_assert_uint_eq(counter(PACER_STAT_UNCLASSIFIED), 400);
	ck_assert_uint_eq(counter(PACER_STAT_PASSED), 0);
	ck_assert_uint_eq(class_counter(0, PACER_CSTAT_SEEN), 0);
	fixture_unload();
}
END_TEST

/*
 * A live change: the new list runs from the flip on; a class installed
 * again unchanged (same id) keeps its sources' state, a changed one (new
 * id) starts afresh; no classes is the classless limit again.
 */
START_TEST(test_live_bank_flip)
{
	struct pacer_class c[2], got[PACER_MAX_CLASSES];
	struct pk dns = { "10.8.0.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	struct pk ntp = { "10.8.0.1", "192.0.2.1", 17, 1, 123, 0, -1, 0 };
	int n;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	c[0] = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	install(c, 1);
	ck_assert_uint_eq(PACER_CLASS_SEL_BANK(fx.m.cfg->class_sel), 0);
	ck_assert_int_eq(run_pk(&dns), PASS);
	ck_assert_int_eq(run_pk(&ntp), PASS);
	ck_assert_int_eq(run_pk(&ntp), PASS);
	/* + a drop class for NTP, dns unchanged: its source is still within its interval */
	c[1] = cls("ntp", 1, PACER_ACTION_DROP, 0);
	proto_port(&c[1], PACER_IPPROTO_UDP, PACER_M_DPORT, 123, 123);
	install(c, 2);
	ck_assert_uint_eq(PACER_CLASS_SEL_BANK(fx.m.cfg->class_sel), 1);
	ck_assert_uint_eq(PACER_CLASS_SEL_COUNT(fx.m.cfg->class_sel), 2);
	ck_assert_uint_eq(PACER_CLASS_SEL_GEN_OF(fx.m.cfg->class_sel), 2);
	ck_assert_int_eq(run_pk(&ntp), DROP);
	ck_assert_int_eq(run_pk(&dns), DROP);
	ck_assert_int_eq(pacer_classes_read(&fx.m, got, &n), 0);
	ck_assert_int_eq(n, 2);
	ck_assert_mem_eq(got, c, 2 * sizeof(c[0]));
	/* dns changed (new id): fresh state */
	c[0].id = 7;
	install(c, 2);
	ck_assert_uint_eq(PACER_CLASS_SEL_BANK(fx.m.cfg->class_sel), 0);
	ck_assert_uint_eq(PACER_CLASS_SEL_COUNT(fx.m.cfg->class_sel), 2);
	ck_assert_uint_eq(PACER_CLASS_SEL_GEN_OF(fx.m.cfg->class_sel), 3);
	ck_assert_int_eq(run_pk(&dns), PASS);
	ck_assert_int_eq(run_pk(&dns), DROP);
	/* no classes: the classless limit (prefix /32, 64 ticks) keys this source afresh */
	install(c, 0);
	ck_assert_uint_eq(fx.m.cfg->class_sel, PACER_CLASS_SEL_GEN(0, 4));
	ck_assert_int_eq(pacer_classes_read(&fx.m, got, &n), 0);
	ck_assert_int_eq(n, 0);
	ck_assert_int_eq(run_pk(&ntp), PASS);
	ck_assert_int_eq(run_pk(&dns), DROP);
	/* a refused list changes nothing */
	{
		char err[160];

		c[0].thresh_ticks = 1;
		ck_assert_int_eq(pacer_classes_install(&fx.m, c, 2, err, sizeof(err)), -EINVAL);
		ck_assert_uint_eq(fx.m.cfg->class_sel, PACER_CLASS_SEL_GEN(0, 4));
	}
	fixture_unload();
}
END_TEST

/* With classes, a TCP header cut short is malformed (its configured verdict: drop here). */
START_TEST(test_cut_l4_is_malformed)
{
	struct pacer_class c = cls("any", 0, PACER_ACTION_PASS, 0);
	struct pk p = { "10.9.0.1", "192.0.2.1", 6, 1, 80, PACER_TCP_SYN, -1, 0 };
	struct frame f;

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	install(&c, 1);
	f = build(&p);
	ck_assert_int_eq(run_len(&f, f.len), PASS);
	ck_assert_int_eq(run_len(&f, 14 + 20 + 13), DROP);
	ck_assert_uint_eq(counter(PACER_STAT_MALFORMED_DROPPED), 1);
	fixture_unload();
}
END_TEST

/*
 * The global budget sees only what a pace class admitted: pass classes,
 * unclassified and exempt traffic never reach it; a class's admission it
 * refuses is counted for the class.
 */
START_TEST(test_budget_only_after_pace_classes)
{
	struct pacer_class c[2];
	struct pacer_prefix ex = pfx("10.10.9.0", 24);
	const struct pk dns1 = { "10.10.0.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk dns2 = { "10.10.0.2", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk ntp = { "10.10.0.3", "192.0.2.1", 17, 1, 123, 0, -1, 0 };
	const struct pk other = { "10.10.0.4", "192.0.2.1", 17, 1, 5000, 0, -1, 0 };
	const struct pk exempt = { "10.10.9.9", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	char err[160];
	int k;

	fx_budget = "1/60s";
	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	fx_budget = NULL;
	c[0] = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[1] = cls("ntp", 1, PACER_ACTION_PASS, 0);
	proto_port(&c[1], PACER_IPPROTO_UDP, PACER_M_DPORT, 123, 123);
	install(c, 2);
	ck_assert_int_eq(pacer_lists_apply(&fx.m, &ex, 1, NULL, 0, err, sizeof(err)), 0);
	for (k = 0; k < 10; k++) {
		ck_assert_int_eq(run_pk(&ntp), PASS);
		ck_assert_int_eq(run_pk(&other), PASS);
		ck_assert_int_eq(run_pk(&exempt), PASS);
	}
	ck_assert_int_eq(run_pk(&dns1), PASS); /* the budget's one admission */
	ck_assert_int_eq(run_pk(&dns2), DROP); /* the class admits it, the budget does not */
	ck_assert_uint_eq(counter(PACER_STAT_DROPPED_BUDGET), 1);
	ck_assert_uint_eq(class_counter(0, PACER_CSTAT_DROPPED_BUDGET), 1);
	ck_assert_uint_eq(class_counter(0, PACER_CSTAT_PASSED), 1);
	ck_assert_uint_eq(class_counter(1, PACER_CSTAT_PASSED), 10);
	fixture_unload();
}
END_TEST

struct recs {
	struct pacer_record r[16];
	int n;
};

static int on_record(void *ctx, void *data, size_t len)
{
	struct recs *c = ctx;

	if (len == sizeof(struct pacer_record) && c->n < 16)
		memcpy(&c->r[c->n++], data, len);
	return 0;
}

/*
 * A record names the class that paced its packet (stat slot + 1), and its
 * key: prefix, and the dport or destination its key mode adds.
 */
START_TEST(test_record_names_the_class)
{
	struct pacer_class c[2];
	const struct pk dns = { "10.11.0.1", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk syn = { "2001:db8:11::1", "2001:db8::1", 6, 1, 22, PACER_TCP_SYN, -1, 0 };
	struct ring_buffer *rb;
	struct recs got = { .n = 0 };

	fx_record = 1;
	fixture_load(PACER_BACKEND_TABLE, PACER_PLACEMENT_SHARED);
	fx_record = 0;
	c[0] = cls("dns", 5, PACER_ACTION_PACE, 20 * MS);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[0].prefix4 = 24;
	c[0].key_mode = PACER_KEY_SRC_DPORT;
	c[1] = cls("syn", 9, PACER_ACTION_PACE, 20 * MS);
	c[1].key_mode = PACER_KEY_SRC_DST;
	proto_port(&c[1], PACER_IPPROTO_TCP, PACER_M_SYN, 0, 0);
	c[1].policy = PACER_POLICY_QUIET;
	c[1].prefix6 = 48;
	install(c, 2);
	ck_assert_int_eq(run_pk(&dns), PASS);
	ck_assert_int_eq(run_pk(&syn), PASS);
	ck_assert_int_eq(run_pk(&syn), DROP);
	rb = ring_buffer__new(bpf_map__fd(fx.skel->maps.pacer_events), on_record, &got, NULL);
	ck_assert_ptr_nonnull(rb);
	while (ring_buffer__consume(rb) > 0)
		;
	ring_buffer__free(rb);
	ck_assert_int_eq(got.n, 3);
	ck_assert_uint_eq(got.r[0].class_slot, 6);
	ck_assert_uint_eq(got.r[0].family, 4);
	ck_assert_uint_eq(got.r[0].prefix, 24);
	ck_assert_uint_eq(got.r[0].verdict, PACER_REC_PASS);
	ck_assert(got.r[0].flags & PACER_REC_KEY);
	ck_assert_uint_eq(got.r[0].key_dport, 53);
	ck_assert_mem_eq(got.r[0].key_dst, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
	ck_assert(got.r[1].flags & PACER_REC_KEY);
	ck_assert_uint_eq(got.r[1].key_dport, 0);
	{
		uint8_t dst[16];

		ck_assert_int_eq(inet_pton(AF_INET6, "2001:db8::1", dst), 1);
		ck_assert_mem_eq(got.r[1].key_dst, dst, 16);
	}
	ck_assert_uint_eq(got.r[1].class_slot, 10);
	ck_assert_uint_eq(got.r[1].family, 6);
	ck_assert_uint_eq(got.r[1].prefix, 48);
	ck_assert_uint_eq(got.r[2].verdict, PACER_REC_DROP);
	ck_assert_uint_eq(got.r[2].thresh_ticks, c[1].thresh_ticks);
	fixture_unload();
}
END_TEST

/* ---- observe mode ---- */

/* A map's whole contents (every CPU's copy of a per-CPU map), malloc'd; *len its bytes. */
static uint8_t *map_dump(const struct bpf_map *m, size_t *len)
{
	bool percpu = bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_ARRAY;
	size_t vs = bpf_map__value_size(m), one, k;
	uint32_t n = bpf_map__max_entries(m);
	uint8_t *out;

	one = percpu ? ((vs + 7) & ~(size_t)7) * (size_t)libbpf_num_possible_cpus() : vs;
	out = calloc(n, one);
	ck_assert_ptr_nonnull(out);
	for (k = 0; k < n; k++) {
		uint32_t key = (uint32_t)k;

		ck_assert_int_eq(bpf_map_lookup_elem(bpf_map__fd(m), &key, out + k * one), 0);
	}
	*len = n * one;
	return out;
}

#define OBS_MAPS 4
#define OBS_RECS 512

/* What one run of the observe test's sequence left behind. */
struct obs_run {
	int verdict[256];
	int n;
	uint64_t stats[PACER_STAT_MAX];
	uint64_t cstats[2][PACER_CSTAT_MAX];
	uint8_t *state[OBS_MAPS]; /* pacer_sk, pacer_budget, pacer_budget_local, pacer_seen */
	size_t state_len[OBS_MAPS];
	struct pacer_record rec[OBS_RECS];
	int nrec;
};

static int on_obs_record(void *ctx, void *data, size_t len)
{
	struct obs_run *r = ctx;

	if (len == sizeof(struct pacer_record) && r->nrec < OBS_RECS)
		memcpy(&r->rec[r->nrec++], data, len);
	return 0;
}

/*
 * The observe test's sequence under one mode setting: dns sources paced
 * (20 ms; three packets each per 30 ms round, so pacing refuses two of
 * three), a class that drops ICMP, a denied source, a malformed frame,
 * unmatched traffic; with budget, a global budget of 6 per minute refuses
 * most admissions after the first round.  Without classes the global limit
 * (64 ticks) paces every source.  mode: the global mode; dns_mode, the
 * dns class's own.
 */
static uint32_t obs_deny_mode; /* the deny list's mode in obs_sequence() */

static void obs_sequence(struct obs_run *r, uint32_t backend, int classes, int budget,
			 uint32_t mode, uint32_t dns_mode)
{
	static const char *const srcs[] = { "10.20.0.1", "10.20.0.2", "10.20.0.3", "2001:db8:20::1" };
	struct pacer_prefix deny = pfx("10.20.9.0", 24);
	const struct pk ping = { "10.20.1.1", "192.0.2.1", PACER_IPPROTO_ICMP, 0, 0, 0, -1, 0 };
	const struct pk denied = { "10.20.9.9", "192.0.2.1", 17, 1, 53, 0, -1, 0 };
	const struct pk other = { "10.20.2.1", "192.0.2.1", 17, 1, 5000, 0, -1, 0 };
	const struct bpf_map *maps[OBS_MAPS];
	struct pacer_class c[2];
	struct ring_buffer *rb;
	struct frame f;
	char err[160];
	int round, i, k;

	memset(r, 0, sizeof(*r));
	fx_budget = budget ? "6/60s" : NULL;
	fx_record = budget; /* records take the full path: with the budget's variant */
	fixture_load(backend, PACER_PLACEMENT_SHARED);
	fx_budget = NULL;
	fx_record = 0;
	fx.m.cfg->mode = mode;
	fx.m.cfg->deny_mode = obs_deny_mode;
	if (classes) {
		c[0] = cls("dns", 0, PACER_ACTION_PACE, 20 * MS);
		proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
		c[0].mode = dns_mode;
		c[1] = cls("ping", 1, PACER_ACTION_DROP, 0);
		c[1].m.terms = PACER_M_PROTO;
		c[1].m.proto = PACER_IPPROTO_ICMP;
		install(c, 2);
	}
	ck_assert_int_eq(pacer_lists_apply(&fx.m, NULL, 0, &deny, 1, err, sizeof(err)), 0);
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 3; i++)
			for (k = 0; k < (int)(sizeof(srcs) / sizeof(srcs[0])); k++) {
				const struct pk dns = { srcs[k], strchr(srcs[k], ':') ? "2001:db8::1" : "192.0.2.1",
							17, 1, 53, 0, -1, 0 };

				r->verdict[r->n++] = run_pk(&dns);
				set_clock(fx.now_ns + MS);
			}
		r->verdict[r->n++] = run_pk(&ping);
		r->verdict[r->n++] = run_pk(&ping);
		r->verdict[r->n++] = run_pk(&denied);
		r->verdict[r->n++] = run_pk(&other);
		f = build(&other);
		r->verdict[r->n++] = run_len(&f, 14 + 10); /* IPv4 header cut short: malformed */
		set_clock(fx.now_ns + 30 * MS + (uint64_t)round * 100 * MS);
	}
	for (i = 0; i < PACER_STAT_MAX; i++)
		r->stats[i] = counter((enum pacer_stat)i);
	for (i = 0; classes && i < 2; i++)
		for (k = 0; k < PACER_CSTAT_MAX; k++)
			r->cstats[i][k] = class_counter((uint32_t)i, (enum pacer_class_stat)k);
	maps[0] = fx.skel->maps.pacer_sk;
	maps[1] = fx.skel->maps.pacer_budget;
	maps[2] = fx.skel->maps.pacer_budget_local;
	maps[3] = fx.skel->maps.pacer_seen;
	for (i = 0; i < OBS_MAPS; i++)
		r->state[i] = map_dump(maps[i], &r->state_len[i]);
	rb = ring_buffer__new(bpf_map__fd(fx.skel->maps.pacer_events), on_obs_record, r, NULL);
	ck_assert_ptr_nonnull(rb);
	while (ring_buffer__consume(rb) > 0)
		;
	ring_buffer__free(rb);
	fixture_unload();
}

static void obs_free(struct obs_run *r)
{
	int i;

	for (i = 0; i < OBS_MAPS; i++)
		free(r->state[i]);
}

/* The same state, byte for byte, in every map a verdict writes. */
static void obs_same_state(const struct obs_run *a, const struct obs_run *b)
{
	static const char *const names[OBS_MAPS] = { "pacer_sk", "pacer_budget", "pacer_budget_local",
						     "pacer_seen" };
	int i;

	for (i = 0; i < OBS_MAPS; i++) {
		ck_assert_uint_eq(a->state_len[i], b->state_len[i]);
		ck_assert_msg(!memcmp(a->state[i], b->state[i], a->state_len[i]),
			      "%s differs between enforce and observe", names[i]);
	}
}

/*
 * _i: backend x (classes, budget with records).  Observe judges and writes
 * state exactly as enforce: the same packet sequence run twice, on fresh
 * programs with the same hash key and clock, once enforcing and once
 * observing, leaves identical bytes in the per-source state and the
 * budget's maps; each drop counter of the enforced run is the observed
 * run's would-drop counter of that verdict (and the class's); every other
 * counter is equal; every packet of the observed run passed; the records
 * carry the same verdicts, the observed run's drops flagged observed.
 */
START_TEST(test_observe_judges_as_enforce)
{
	static struct obs_run enf, obs;
	uint32_t backend = (uint32_t)_i % PACER_BACKEND_MAX;
	int classes = (_i / PACER_BACKEND_MAX) & 1, budget = (_i / PACER_BACKEND_MAX) >> 1, i;
	uint64_t drops = 0;
	cpu_set_t one;

	/* Both runs on one CPU: per-CPU state (the budget's batches) compared byte for byte. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	obs_sequence(&enf, backend, classes, budget, PACER_MODE_ENFORCE, PACER_MODE_GLOBAL);
	obs_sequence(&obs, backend, classes, budget, PACER_MODE_OBSERVE, PACER_MODE_GLOBAL);
	ck_assert_int_eq(enf.n, obs.n);
	for (i = 0; i < enf.n; i++) {
		ck_assert_int_eq(obs.verdict[i], PASS);
		drops += enf.verdict[i] == DROP;
	}
	obs_same_state(&enf, &obs);
	for (i = 0; i < PACER_STAT_MAX; i++) {
		int twin = pacer_stat_observes((unsigned)i);

		if (twin >= 0) {
			ck_assert_msg(obs.stats[i] == enf.stats[twin], "%s %llu, enforced %s %llu",
				      pacer_stat_names[i], (unsigned long long)obs.stats[i],
				      pacer_stat_names[twin], (unsigned long long)enf.stats[twin]);
			ck_assert_uint_eq(obs.stats[twin], 0);
			ck_assert_uint_eq(enf.stats[i], 0);
		} else if (i != PACER_STAT_DROPPED_RECENT && i != PACER_STAT_DROPPED_BUDGET &&
			   i != PACER_STAT_CLASS_DROPPED && i != PACER_STAT_DENY_DROPPED &&
			   i != PACER_STAT_MALFORMED_DROPPED &&
			   /* the sweep's: its timer's rounds, not the packets' */
			   i != PACER_STAT_SWEEP_ROUNDS && i != PACER_STAT_SWEEP_LINES &&
			   i != PACER_STAT_SWEEP_CLEARED) {
			ck_assert_msg(obs.stats[i] == enf.stats[i], "%s: observed %llu, enforced %llu",
				      pacer_stat_names[i], (unsigned long long)obs.stats[i],
				      (unsigned long long)enf.stats[i]);
		}
	}
	/* The sequence exercises every verdict it can: recent, deny, malformed; class drop; budget. */
	ck_assert_uint_gt(enf.stats[PACER_STAT_DROPPED_RECENT], 0);
	ck_assert_uint_gt(enf.stats[PACER_STAT_DENY_DROPPED], 0);
	ck_assert_uint_gt(enf.stats[PACER_STAT_MALFORMED_DROPPED], 0);
	if (classes)
		ck_assert_uint_gt(enf.stats[PACER_STAT_CLASS_DROPPED], 0);
	if (budget)
		ck_assert_uint_gt(enf.stats[PACER_STAT_DROPPED_BUDGET], 0);
	ck_assert_uint_eq(enf.stats[PACER_STAT_DROPPED_RECENT] + enf.stats[PACER_STAT_DROPPED_BUDGET] +
			  enf.stats[PACER_STAT_CLASS_DROPPED] + enf.stats[PACER_STAT_DENY_DROPPED] +
			  enf.stats[PACER_STAT_MALFORMED_DROPPED], drops);
	for (i = 0; classes && i < 2; i++) {
		ck_assert_uint_eq(obs.cstats[i][PACER_CSTAT_SEEN], enf.cstats[i][PACER_CSTAT_SEEN]);
		ck_assert_uint_eq(obs.cstats[i][PACER_CSTAT_PASSED], enf.cstats[i][PACER_CSTAT_PASSED]);
		ck_assert_uint_eq(obs.cstats[i][PACER_CSTAT_OBSERVED], enf.cstats[i][PACER_CSTAT_DROPPED]);
		ck_assert_uint_eq(obs.cstats[i][PACER_CSTAT_OBSERVED_BUDGET],
				  enf.cstats[i][PACER_CSTAT_DROPPED_BUDGET]);
		ck_assert_uint_eq(obs.cstats[i][PACER_CSTAT_DROPPED] + obs.cstats[i][PACER_CSTAT_DROPPED_BUDGET], 0);
	}
	ck_assert_int_eq(enf.nrec, obs.nrec);
	if (budget)
		ck_assert_int_gt(enf.nrec, 0);
	for (i = 0; i < enf.nrec; i++) {
		ck_assert_uint_eq(enf.rec[i].verdict, obs.rec[i].verdict);
		ck_assert_uint_eq(enf.rec[i].est_age_ticks, obs.rec[i].est_age_ticks);
		ck_assert(!(enf.rec[i].flags & PACER_REC_OBSERVED));
		ck_assert_int_eq(!!(obs.rec[i].flags & PACER_REC_OBSERVED),
				 obs.rec[i].verdict == PACER_REC_DROP);
	}
	obs_free(&enf);
	obs_free(&obs);
}
END_TEST

/*
 * A class's own mode overrides the global one, and the deny list's: a dns
 * class that enforces under a global observe drops as an enforced run
 * does, while the ICMP drop class and the deny list follow the global
 * observe; the deny list's own mode likewise.
 */
START_TEST(test_observe_class_overrides)
{
	static struct obs_run enf, mix;

	obs_sequence(&enf, PACER_BACKEND_SKETCH, 1, 0, PACER_MODE_ENFORCE, PACER_MODE_GLOBAL);
	obs_sequence(&mix, PACER_BACKEND_SKETCH, 1, 0, PACER_MODE_OBSERVE, PACER_MODE_ENFORCE);
	obs_same_state(&enf, &mix);
	ck_assert_uint_eq(mix.stats[PACER_STAT_DROPPED_RECENT], enf.stats[PACER_STAT_DROPPED_RECENT]);
	ck_assert_uint_eq(mix.cstats[0][PACER_CSTAT_DROPPED], enf.cstats[0][PACER_CSTAT_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_RECENT], 0);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_CLASS], enf.stats[PACER_STAT_CLASS_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_DENY], enf.stats[PACER_STAT_DENY_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_MALFORMED], enf.stats[PACER_STAT_MALFORMED_DROPPED]);
	obs_free(&mix);
	/* Global enforce, the dns class observing: only its verdicts pass. */
	obs_sequence(&mix, PACER_BACKEND_SKETCH, 1, 0, PACER_MODE_ENFORCE, PACER_MODE_OBSERVE);
	obs_same_state(&enf, &mix);
	ck_assert_uint_eq(mix.stats[PACER_STAT_DROPPED_RECENT], 0);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_RECENT], enf.stats[PACER_STAT_DROPPED_RECENT]);
	ck_assert_uint_eq(mix.cstats[0][PACER_CSTAT_OBSERVED], enf.cstats[0][PACER_CSTAT_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_CLASS_DROPPED], enf.stats[PACER_STAT_CLASS_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_DENY_DROPPED], enf.stats[PACER_STAT_DENY_DROPPED]);
	obs_free(&mix);
	/* Global observe, the deny list enforcing: only denied sources drop. */
	obs_deny_mode = PACER_MODE_ENFORCE;
	obs_sequence(&mix, PACER_BACKEND_SKETCH, 1, 0, PACER_MODE_OBSERVE, PACER_MODE_GLOBAL);
	obs_deny_mode = PACER_MODE_GLOBAL;
	obs_same_state(&enf, &mix);
	ck_assert_uint_eq(mix.stats[PACER_STAT_DENY_DROPPED], enf.stats[PACER_STAT_DENY_DROPPED]);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_DENY], 0);
	ck_assert_uint_eq(mix.stats[PACER_STAT_OBSERVED_RECENT], enf.stats[PACER_STAT_DROPPED_RECENT]);
	obs_free(&mix);
	obs_free(&enf);
}
END_TEST

/* ---- each class's guarantee against an exact oracle ---- */

#define P_SRC4 24 /* 10.60.G.H: 3 /24 groups x 8 */
#define P_SRC6 8  /* 2001:db8:60:G::H: 2 /64 groups x 4 */
#define P_SRCS (P_SRC4 + P_SRC6)
#define P_PORTS 3
#define P_DSTS 2
#define P_CLASSES 3
#define P_KEYS (P_CLASSES * P_SRCS * P_PORTS * P_DSTS)
#define P_HIST 64

/* Per exact key: admission times (a ring) and the last packet's time. */
struct oracle_key {
	uint64_t admits[P_HIST];
	uint32_t n_admits;
	uint64_t last_seen;
	int seen;
};

/*
 * _i: backend x placement x key mode.  Three pace classes, each under the
 * key mode: "dns" udp dport 53 interval 10 ms (prefix /24, /64); "syn" tcp
 * syn 30 ms policy quiet; "web" tcp dport 80 rate 3/30ms.  Then udp dport
 * 123 passes and the rest is unclassified.  Per exact key: pace classes
 * never admit twice within the interval, quiet admits only after a quiet
 * interval, the rate class keeps the GCRA bound; pass and unclassified
 * traffic always passes.  The classes must also admit most of what an
 * exact limiter admits (so dropping everything fails).
 */
START_TEST(test_property_per_class)
{
	static struct oracle_key keys[P_KEYS];
	static const uint16_t dports[P_PORTS] = { 53, 80, 123 };
	uint32_t backend = (uint32_t)(_i / 6), placement = (uint32_t)(_i / 3 % 2);
	uint32_t mode = (uint32_t)(_i % 3);
	uint64_t interval[P_CLASSES] = { 10 * MS, 30 * MS, 30 * MS }, emit_ns = 10 * MS;
	uint64_t packets = 0, violations = 0, admits[P_CLASSES] = { 0 }, owed = 0, false_drops = 0;
	struct pacer_class c[4];
	struct pacer_rate r;
	struct rng rng = { 0x5eed0000ULL + (uint64_t)_i };
	cpu_set_t one;
	int k;

	/* Per-CPU placement limits per CPU: this stream runs on one. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	memset(keys, 0, sizeof(keys));
	fixture_load(backend, placement);
	c[0] = cls("dns", 0, PACER_ACTION_PACE, interval[0]);
	proto_port(&c[0], PACER_IPPROTO_UDP, PACER_M_DPORT, 53, 53);
	c[0].prefix4 = 24;
	c[0].prefix6 = 64;
	c[1] = cls("syn", 1, PACER_ACTION_PACE, interval[1]);
	proto_port(&c[1], PACER_IPPROTO_TCP, PACER_M_SYN, 0, 0);
	c[1].policy = PACER_POLICY_QUIET;
	c[2] = cls("web", 2, PACER_ACTION_PACE, interval[2]);
	proto_port(&c[2], PACER_IPPROTO_TCP, PACER_M_DPORT, 80, 80);
	ck_assert_int_eq(pacer_rate_ticks(3, interval[2], TICK_SHIFT, pacer_rate_max_sat(backend), &r), 0);
	c[2].thresh_ticks = r.thresh;
	c[2].burst_ticks = r.burst;
	c[2].rate_n = 3;
	c[3] = cls("ntp", 3, PACER_ACTION_PASS, 0);
	proto_port(&c[3], PACER_IPPROTO_UDP, PACER_M_DPORT, 123, 123);
	for (k = 0; k < 3; k++)
		c[k].key_mode = mode;
	install(c, 4);

	for (k = 0; k < 6000; k++) {
		uint32_t s = (uint32_t)(rnd(&rng) % P_SRCS), pi = (uint32_t)(rnd(&rng) % P_PORTS);
		uint32_t di = (uint32_t)(rnd(&rng) % P_DSTS), syn = (uint32_t)(rnd(&rng) % 3 == 0);
		uint32_t tcp = pi == 1 || syn, cl, src_part, key;
		char src[48], dst[48];
		struct pk p;
		struct oracle_key *o;
		int got;

		if (s < P_SRC4) {
			snprintf(src, sizeof(src), "10.60.%u.%u", s / 8, s % 8 + 1);
			snprintf(dst, sizeof(dst), "192.0.2.%u", di + 1);
		} else {
			snprintf(src, sizeof(src), "2001:db8:60:%u::%u", (s - P_SRC4) / 4, (s - P_SRC4) % 4 + 1);
			snprintf(dst, sizeof(dst), "2001:db8::%u", di + 1);
		}
		p = (struct pk){ src, dst, (uint8_t)(tcp ? 6 : 17), 1000, dports[pi],
				 (uint8_t)(syn ? PACER_TCP_SYN : PACER_TCP_ACK), -1, 0 };
		/* time moves 0..2 ms a packet, now and then a long pause */
		set_clock(fx.now_ns + rnd(&rng) % (2 * MS) + (rnd(&rng) % 50 == 0 ? 40 * MS : 0));
		got = run_pk(&p);
		packets++;
		/* the oracle: which class, which exact key */
		if (tcp && syn)
			cl = 1;
		else if (tcp && pi == 1)
			cl = 2;
		else if (!tcp && pi == 0)
			cl = 0;
		else {
			ck_assert_msg(got == PASS, "packet %d: pass/unclassified traffic dropped", k);
			continue;
		}
		src_part = s;
		if (cl == 0) /* the /24 or /64 group */
			src_part = s < P_SRC4 ? s / 8 : P_SRC4 + (s - P_SRC4) / 4;
		key = ((cl * P_SRCS + src_part) * P_PORTS + (mode == PACER_KEY_SRC_DPORT ? pi : 0)) * P_DSTS +
		      (mode == PACER_KEY_SRC_DST ? di : 0);
		o = &keys[key];
		if (cl == 2) {
			/* GCRA: any run of admissions i..j spans at least (count - N) emission intervals */
			if (got == PASS) {
				uint32_t back;

				o->admits[o->n_admits % P_HIST] = fx.now_ns;
				o->n_admits++;
				for (back = 1; back < o->n_admits && back < P_HIST; back++) {
					uint64_t t0 = o->admits[(o->n_admits - 1 - back) % P_HIST];

					if (back + 1 > (fx.now_ns - t0) / emit_ns + 3)
						violations++;
				}
				admits[cl]++;
			}
			continue;
		}
		if (cl == 1) {
			/* quiet: an admission only after a quiet interval since the key's last packet */
			if (got == PASS && o->seen && fx.now_ns - o->last_seen < interval[cl])
				violations++;
			if (o->seen && fx.now_ns - o->last_seen >= interval[cl] + 2 * (1ULL << TICK_SHIFT)) {
				owed++;
				false_drops += got == DROP;
			}
			o->last_seen = fx.now_ns;
			o->seen = 1;
			admits[cl] += got == PASS;
			continue;
		}
		/* pace: no two admissions of a key within the interval */
		if (!o->n_admits || fx.now_ns - o->admits[0] >= interval[cl] + 2 * (1ULL << TICK_SHIFT)) {
			owed++;
			false_drops += got == DROP;
		}
		if (got == PASS) {
			if (o->n_admits && fx.now_ns - o->admits[0] < interval[cl])
				violations++;
			o->admits[0] = fx.now_ns;
			o->n_admits = 1;
			admits[cl]++;
		}
	}
	ck_assert_msg(violations == 0, "%llu violations of a class's limit",
		      (unsigned long long)violations);
	for (k = 0; k < P_CLASSES; k++) {
		ck_assert_msg(admits[k] > 50, "class %d admitted only %llu", k,
			      (unsigned long long)admits[k]);
		ck_assert_uint_eq(class_counter((uint32_t)k, PACER_CSTAT_PASSED), admits[k]);
	}
	/* a small sketch and the tick's rounding cost some; dropping everything would cost all */
	ck_assert_msg(false_drops * 10 <= owed, "false drops %llu of %llu owed",
		      (unsigned long long)false_drops, (unsigned long long)owed);
	ck_assert_uint_eq(counter(PACER_STAT_SEEN), packets);
	fixture_unload();
}
END_TEST


/*
 * The compiled classifier in the datapath against the ordered walk: random
 * lists of 1 to PACER_MAX_CLASSES classes (lib_classgen.h; those the
 * checks refuse drawn again), installed live bank after bank, and random
 * frames on their edges.  The walk's answer comes from the frame parsed
 * here by the datapath's own parser; the program's from the counters: the
 * walk's class counts the packet as seen, or the packet is unclassified.
 */
START_TEST(test_compiled_is_the_walk)
{
	static struct pacer_class c[PACER_MAX_CLASSES];
	int list, k, i, lists = 24, per_list = 150, matched = 0, total = 0;
	char err[160];

	fixture_load(PACER_BACKEND_SKETCH, PACER_PLACEMENT_SHARED);
	classgen_seed(0x9e3779b97f4a7c15ULL);
	for (list = 0; list < lists; list++) {
		int n = list % 4 == 0 ? PACER_MAX_CLASSES : 1 + (int)classgen_below(list < 8 ? 8 : PACER_MAX_CLASSES);

		for (i = 0; i < n; i++) {
			do {
				classgen_class(&c[i], i);
				c[i].action = PACER_ACTION_PASS;
				c[i].stat_slot = (__u32)i;
				c[i].id = (__u32)(1000 + i);
			} while (pacer_classes_check(&c[i], 1, PACER_BACKEND_SKETCH, err, sizeof(err)));
		}
		install(c, n);
		for (k = 0; k < per_list; k++) {
			struct pacer_pkt want_p, gen;
			char src[64], dst[64];
			struct frame f;
			struct pk pk;
			uint64_t before, after;
			int v6, want;

			classgen_pkt(&gen);
			v6 = gen.kind == PACER_PKT_V6;
			inet_ntop(v6 ? AF_INET6 : AF_INET, &gen.src, src, sizeof(src));
			inet_ntop(v6 ? AF_INET6 : AF_INET, &gen.dst, dst, sizeof(dst));
			memset(&pk, 0, sizeof(pk));
			pk.src = src;
			pk.dst = dst;
			pk.proto = gen.proto == PACER_IPPROTO_ICMPV6 && !v6 ? PACER_IPPROTO_ICMP : gen.proto;
			pk.sport = gen.sport;
			pk.dport = gen.dport;
			pk.flags = gen.tcp_flags;
			pk.vlan = gen.vlan == PACER_VLAN_NONE ? -1 : gen.vlan;
			/* A TCP or UDP packet without ports: an IPv4 non-first fragment. */
			if (!v6 && !gen.l4 && (gen.proto == PACER_IPPROTO_TCP || gen.proto == PACER_IPPROTO_UDP))
				pk.frag_off = 0x0010;
			f = build(&pk);
			ck_assert_int_eq(pacer_parse_pkt(f.b, f.b + f.len, &want_p), gen.kind);
			want = pacer_cls_walk(c, n, &want_p);
			before = want < 0 ? counter(PACER_STAT_UNCLASSIFIED) : class_counter((__u32)want, PACER_CSTAT_SEEN);
			ck_assert_int_eq(run_len(&f, f.len), XDP_PASS);
			after = want < 0 ? counter(PACER_STAT_UNCLASSIFIED) : class_counter((__u32)want, PACER_CSTAT_SEEN);
			ck_assert_msg(after == before + 1, "list %d (%d classes), packet %d (%s > %s proto %u): the walk says %d, the program did not count it there",
				      list, n, k, src, dst, pk.proto, want);
			matched += want >= 0;
			total++;
		}
	}
	/* Both outcomes drawn, or the agreement says little. */
	ck_assert_int_gt(matched, total / 10);
	ck_assert_int_gt(total - matched, total / 50);
	fixture_unload();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("classes (BPF_PROG_TEST_RUN)");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_terms_and_actions);
	tcase_add_test(tc, test_first_match_wins);
	tcase_add_loop_test(tc, test_key_modes, 0, PACER_BACKEND_MAX);
	tcase_add_test(tc, test_lists_before_classes);
	tcase_add_test(tc, test_lists_diff_many);
	tcase_add_test(tc, test_lists_incremental_expiry);
	tcase_add_test(tc, test_unmatched_never_paced);
	tcase_add_test(tc, test_live_bank_flip);
	tcase_add_test(tc, test_cut_l4_is_malformed);
	tcase_add_test(tc, test_budget_only_after_pace_classes);
	tcase_add_test(tc, test_record_names_the_class);
	tcase_add_loop_test(tc, test_observe_judges_as_enforce, 0, 4 * PACER_BACKEND_MAX);
	tcase_add_test(tc, test_observe_class_overrides);
	tcase_add_loop_test(tc, test_property_per_class, 0, 6 * PACER_BACKEND_MAX);
	tcase_add_test(tc, test_compiled_is_the_walk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	skel_stay_on_one_cpu();
	return run_suite(suite());
}
