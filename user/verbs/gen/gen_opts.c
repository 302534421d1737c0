// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer gen: the option table and the checks of their combinations. */
#define _GNU_SOURCE /* CPU affinity */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "common.h"
#include "gen.h"

const char *const gen_dist_names[] = { "uniform", "zipf", "spoofed", "mix", "heavy" };

static int mac_opt(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	(void)s;
	if (!parse_mac(arg, ((struct gen_mac *)field)->b))
		return 0;
	snprintf(why, len, "expected six hex bytes such as 02:00:00:00:00:01");
	return -EINVAL;
}

static const struct opt_choice dist_choices[] = {
	{ "uniform", GEN_DIST_UNIFORM },
	{ "zipf", GEN_DIST_ZIPF },
	{ "spoofed", GEN_DIST_SPOOFED },
	{ "mix", GEN_DIST_MIX },
	{ "heavy", GEN_DIST_HEAVY },
	{ NULL, 0 },
};

static const struct opt_choice engine_choices[] = {
	{ "auto", GEN_ENGINE_AUTO },
	{ "live", GEN_ENGINE_LIVE },
	{ "xsk", GEN_ENGINE_XSK },
	{ "packet", GEN_ENGINE_PACKET },
	{ NULL, 0 },
};

static const struct opt_choice family_choices[] = { { "4", 4 }, { "6", 6 }, { NULL, 0 } };
static const struct opt_choice affinity_choices[] = { { "spread", 0 }, { "source", 1 }, { NULL, 0 } };

static const struct opt_spec gen_specs[] = {
	{ .name = "IFNAME", .type = OPT_IFNAME, .flags = OPT_POSITIONAL,
	  OPT_FIELD(struct gen_opts, ifname) },
	{ .type = OPT_SECTION, .help = "Sources:" },
	{ .name = "dist", .type = OPT_ENUM, .choices = dist_choices, .dflt = "uniform",
	  OPT_FIELD(struct gen_opts, dist),
	  .help = "source distribution:\n"
		  "uniform: --sources N, each thread cycling through its share\n"
		  "zipf: Zipf(--zipf S) over --sources N (at most 2^26), drawn\n"
		  "from a 2^16-slot table computed here\n"
		  "spoofed: a random source for every packet\n"
		  "mix: --good N well-behaved sources, each sending one packet\n"
		  "per --good-period (UDP source port 40001), inside a spoofed\n"
		  "flood (port 40000)\n"
		  "heavy: --heavy N sources sending --heavy-share of the frames\n"
		  "between them, at random (port 40001), inside a spoofed flood;\n"
		  "the report counts each heavy source's frames" },
	{ .name = "sources", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 30, .dflt = "1000",
	  OPT_FIELD(struct gen_opts, sources), .help = "uniform/zipf: number of sources" },
	{ .name = "zipf", .type = OPT_DECIMAL, .flags = OPT_MIN_OPEN, .arg = "S", .dmin = 0,
	  .dmax = 10, .dflt = "1.0", OPT_FIELD(struct gen_opts, zipf),
	  .why = "expected an exponent in (0, 10]", .help = "Zipf exponent, 0 < S <= 10" },
	{ .name = "good", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 24, .dflt = "100",
	  OPT_FIELD(struct gen_opts, good), .help = "mix: well-behaved sources" },
	{ .name = "good-period", .type = OPT_DURATION, .arg = "DUR", .dflt = "2s",
	  OPT_FIELD(struct gen_opts, good_period_ns), .help = "mix: each well-behaved source's gap" },
	{ .name = "heavy", .type = OPT_U32, .arg = "N", .min = 1, .max = GEN_MAX_HEAVY, .dflt = "20",
	  OPT_FIELD(struct gen_opts, heavy), .help = "heavy: heavy sources (at most 1024)" },
	{ .name = "heavy-share", .type = OPT_DECIMAL, .flags = OPT_MIN_OPEN, .arg = "PCT", .dmin = 0,
	  .dmax = 100, .dflt = "10", OPT_FIELD(struct gen_opts, heavy_share),
	  .why = "expected a percentage in (0, 100]",
	  .help = "heavy: their share of the frames, in percent" },
	{ .name = "family", .type = OPT_ENUM, .choices = family_choices, .dflt = "4",
	  OPT_FIELD(struct gen_opts, family), .help = "IP version" },
	{ .name = "src-base", .type = OPT_ADDRESS, .arg = "ADDR", OPT_FIELD(struct gen_opts, src_base),
	  .help = "structured source i is ADDR + i; IPv6: one /64 per source,\n"
		  "the index added to the prefix (10.200.0.0 / fd00:200::)\n"
		  "Spoofed sources are random in 128.0.0.0/2 (IPv4) or\n"
		  "fc00::/8 (IPv6), apart from any base range below them" },
	{ .name = "dst", .type = OPT_ADDRESS, .arg = "ADDR", OPT_FIELD(struct gen_opts, dst),
	  .help = "destination address (10.255.0.1 / fd00:255::1)" },
	{ .name = "dst-mac", .type = OPT_CUSTOM, .arg = "MAC", .parse = mac_opt,
	  .dflt = "ff:ff:ff:ff:ff:ff", OPT_FIELD(struct gen_opts, dst_mac),
	  .help = "destination MAC" },
	{ .name = "src-mac", .type = OPT_CUSTOM, .arg = "MAC", .parse = mac_opt,
	  OPT_FIELD(struct gen_opts, src_mac), OPT_GIVEN(struct gen_opts, src_mac_set),
	  .help = "source MAC (IFNAME's own)" },
	{ .type = OPT_SECTION, .help = "How much and how fast:" },
	{ .name = "engine", .type = OPT_ENUM, .choices = engine_choices, .dflt = "auto",
	  OPT_FIELD(struct gen_opts, engine),
	  .help = "how frames are sent:\n"
		  "live: BPF_PROG_TEST_RUN live frames, redirected out of\n"
		  "IFNAME by an XDP program (the fastest; some kernels refuse it)\n"
		  "xsk: AF_XDP, one socket per thread on TX queues 0.., zero-copy\n"
		  "where the driver offers it, else copy mode\n"
		  "packet: AF_PACKET sockets, sendmmsg, the qdisc bypassed\n"
		  "auto: the first of these that works here, said on stderr" },
	{ .name = "count", .type = OPT_U64, .arg = "N", .min = 1, .max = UINT64_MAX / 2,
	  .dflt = "1000000", OPT_FIELD(struct gen_opts, count), OPT_GIVEN(struct gen_opts, count_set),
	  .help = "frames to send (unless --duration)" },
	{ .name = "duration", .type = OPT_DURATION, .arg = "DUR",
	  OPT_FIELD(struct gen_opts, duration_ns), .help = "send for DUR instead, e.g. 3s, 500ms" },
	{ .name = "pps", .type = OPT_U64, .arg = "PPS", .min = 1, .max = 1000000000,
	  OPT_FIELD(struct gen_opts, rate),
	  .help = "target packets per second over all threads (default: as fast as possible)" },
	{ .name = "threads", .type = OPT_U32, .arg = "N", .min = 1, .max = GEN_MAX_THREADS, .dflt = "1",
	  OPT_FIELD(struct gen_opts, threads),
	  .help = "generator threads, one per CPU this process may run on,\n"
		  "in order; give IFNAME as many queues for parallel receive" },
	{ .name = "affinity", .type = OPT_ENUM, .choices = affinity_choices, .dflt = "spread",
	  OPT_FIELD(struct gen_opts, affinity_source),
	  .help = "spread: every thread draws Zipf and spoofed\n"
		  "sources from the whole population, so a source leaves from\n"
		  "every thread; source: a thread sends only the sources whose\n"
		  "address hashes to it, as RSS on the source address would\n"
		  "deliver them (uniform and well-behaved sources are split by\n"
		  "index either way)" },
	{ .type = OPT_SECTION, .help = "" },
	{ .name = "json", .type = OPT_BOOL, OPT_FIELD(struct gen_opts, json),
	  .help = "report as one JSON object" },
	{ 0 },
};

static const struct opt_verb gen_verb = {
	.name = "gen",
	.synopsis = "IFNAME [OPTIONS]",
	.intro = "Send UDP frames out of IFNAME (e.g. the host end of a veth pair whose peer\n"
		 "runs the limiter) as fast as the engine goes, or at --pps.  Every engine\n"
		 "sends the same frames: valid IPv4 header checksums (UDP checksum 0) or IPv6\n"
		 "UDP checksums.  'sent' counts frames IFNAME's driver accepted; a frame it\n"
		 "refused is sent again, not counted.  Live frames reach a veth peer only if\n"
		 "it has an XDP program (or GRO on); socket engines' frames always do.\n",
	.args = "an interface name",
	.opts = gen_specs,
};


/* An address option of the generator's family, or the family's default: 0 or 2. */
static int family_address(const char *opt, struct opt_address *a, uint32_t family,
			  const char *dflt4, const char *dflt6)
{
	if (!a->text) {
		a->text = family == 4 ? dflt4 : dflt6;
		parse_address(a->text, &a->addr);
	}
	if (a->addr.family == (int)family)
		return 0;
	return bad_value(opt, a->text, family == 4 ? "expected an IPv4 address" : "expected an IPv6 address");
}

/* The flood lives in 128.0.0.0/2 and fc00::/8: the well-behaved range must stay out of it. */
static bool good_range_clashes(const struct gen_opts *o, uint32_t count)
{
	const uint8_t *b = o->src_base.addr.bytes;
	uint64_t first = (uint64_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];

	if (o->family == 6)
		return b[0] == 0xfc;
	return first + count - 1 >= 0x80000000ULL && first <= 0xbfffffffULL;
}

/* The combinations the table cannot check alone: 0 or 2 (said why). */
static int check_sources(const struct gen_opts *o)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", o->sources);
	if (o->dist == GEN_DIST_ZIPF && o->sources > GEN_ZIPF_MAX_SOURCES)
		return bad_value("--sources", v, "zipf takes at most 67108864 sources");
	if (o->dist == GEN_DIST_UNIFORM && o->threads > o->sources)
		return usage_error("gen", "--threads %u exceeds --sources %u: every thread needs a source of its own",
				   o->threads, o->sources);
	if (o->rate && o->rate < o->threads)
		return usage_error("gen", "--pps %llu is below one packet per second per thread (--threads %u)",
				   (unsigned long long)o->rate, o->threads);
	if (o->dist == GEN_DIST_HEAVY) {
		if (o->affinity_source)
			return usage_error("gen", "--affinity source does not apply to --dist heavy: every thread sends every heavy source");
		if (good_range_clashes(o, o->heavy))
			return usage_error("gen", "--src-base %s: the %u heavy sources would overlap the flood's range %s",
					   o->src_base.text, o->heavy, o->family == 4 ? "128.0.0.0/2" : "fc00::/8");
		return 0;
	}
	if (o->dist != GEN_DIST_MIX)
		return 0;
	if (o->good_period_ns / ((o->good + o->threads - 1) / o->threads) == 0)
		return usage_error("gen", "--good-period %llu ns is shorter than one ns per well-behaved packet",
				   (unsigned long long)o->good_period_ns);
	if (good_range_clashes(o, o->good))
		return usage_error("gen", "--src-base %s: the %u well-behaved sources would overlap the flood's range %s",
				   o->src_base.text, o->good, o->family == 4 ? "128.0.0.0/2" : "fc00::/8");
	return 0;
}

/* The first n CPUs this process may run on, in order; -1 if there are fewer. */
static int pick_cpus(uint32_t n, int *cpus, int *avail)
{
	cpu_set_t set;
	uint32_t got = 0;
	int c;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	*avail = CPU_COUNT(&set);
	for (c = 0; c < CPU_SETSIZE && got < n; c++) {
		if (CPU_ISSET(c, &set))
			cpus[got++] = c;
	}
	return got == n ? 0 : -1;
}

int gen_parse(int argc, char **argv, struct gen_ctx *g)
{
	struct gen_opts *o = &g->o;
	int avail = 0, err = parse_verb_opts(&gen_verb, argc, argv, o);

	if (err)
		return err;
	if (o->count_set && o->duration_ns)
		return usage_error("gen", "--count and --duration exclude each other");
	if (family_address("--src-base", &o->src_base, o->family, "10.200.0.0", "fd00:200::") ||
	    family_address("--dst", &o->dst, o->family, "10.255.0.1", "fd00:255::1") ||
	    check_sources(o))
		return 2;
	if (pick_cpus(o->threads, g->cpus, &avail)) {
		pr_err("invalid value '%u' for --threads: this process may run on %d CPU%s", o->threads,
		       avail, avail == 1 ? "" : "s");
		return 2;
	}
	return 0;
}
