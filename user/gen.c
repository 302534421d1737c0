// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen: a line-rate traffic generator.  An XDP program run with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES writes each frame's
 * headers and source and redirects it out of IFNAME (see bpf/gen.bpf.c).
 * One thread per CPU; each CPU has its own share of the structured sources,
 * so a source always leaves from the same CPU (as RSS would deliver it).
 */
#define _GNU_SOURCE /* CPU affinity */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "json_out.h"
#include "parse.h"
#include "gen_abi.h"
#include "gen.skel.h"

#define GEN_REPEAT_MAX 0x7fffffffULL /* runs per BPF_PROG_TEST_RUN call, at most */
#define GEN_ZIPF_MAX_SOURCES (1u << 26)
#define GEN_SPORT_FLOOD 40000
#define GEN_SPORT_GOOD 40001
#define GEN_DPORT 9 /* discard */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *const dist_names[] = { "uniform", "zipf", "spoofed", "mix" };

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-pacer gen IFNAME [OPTIONS]\n\n"
		"Send UDP frames out of IFNAME (e.g. the host end of a veth pair whose peer\n"
		"runs the limiter) as fast as BPF_PROG_TEST_RUN live frames go, or at --rate.\n"
		"A veth only delivers such frames if its peer has an XDP program (or GRO on);\n"
		"'sent' counts frames handed to IFNAME, not frames the peer received.\n\n"
		"Sources:\n"
		"  --dist uniform|zipf|spoofed|mix  source distribution (uniform)\n"
		"      uniform: --sources N, each thread cycling through its share\n"
		"      zipf:    Zipf(--zipf S) over --sources N (at most 2^26), drawn from a\n"
		"               2^16-slot table computed here\n"
		"      spoofed: a random source for every packet\n"
		"      mix:     --good N well-behaved sources, each sending one packet per\n"
		"               --good-period (UDP source port 40001), inside a spoofed\n"
		"               flood (port 40000)\n"
		"  --sources N          uniform/zipf: number of sources (1000)\n"
		"  --zipf S             Zipf exponent, 0 < S <= 10 (1.0)\n"
		"  --good N             mix: well-behaved sources (100)\n"
		"  --good-period DUR    mix: each well-behaved source's gap (2s)\n"
		"  --family 4|6         (4)\n"
		"  --src-base ADDR      structured source i is ADDR + i; IPv6: one /64 per source,\n"
		"                       the index added to the prefix (10.200.0.0 / fd00:200::)\n"
		"                       Spoofed sources are random in 128.0.0.0/2 (IPv4) or\n"
		"                       fc00::/8 (IPv6), apart from any base range below them\n"
		"  --dst ADDR           destination address (10.255.0.1 / fd00:255::1)\n"
		"  --dst-mac MAC        destination MAC (ff:ff:ff:ff:ff:ff)\n"
		"  --src-mac MAC        source MAC (IFNAME's own)\n\n"
		"How much and how fast:\n"
		"  --count N            frames to send (1000000 unless --duration)\n"
		"  --duration DUR       send for DUR instead, e.g. 3s, 500ms\n"
		"  --rate PPS           target rate over all threads (default: as fast as possible)\n"
		"  --threads N          generator threads, one per CPU this process may run on,\n"
		"                       in order (1); give IFNAME as many queues for parallel receive\n\n"
		"  --json               report as one JSON object\n"
		"  -h, --help           this text\n");
}

struct gen_opts {
	uint32_t dist, family, sources, good, threads;
	double zipf;
	uint64_t good_period_ns, count, duration_ns, rate;
	const char *src_base, *dst, *dst_mac, *src_mac;
	bool count_set, json;
};

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

static int iface_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

/* One's-complement sum of 16-bit words loaded little-endian, as the program does. */
static uint32_t sum_le16(const uint8_t *b, size_t len)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(b[i] | b[i + 1] << 8);
	return s;
}

/*
 * The template frame: Ethernet, IP, UDP, zero payload; 64 bytes (IPv4) or
 * 80 (IPv6).  Source address, UDP source port and the checksums covering
 * them are left zero: the program fills them per frame from csum_base.
 */
static size_t build_template(uint8_t *b, size_t cap, const struct gen_opts *o,
			     const uint8_t dmac[6], const uint8_t smac[6],
			     const struct pacer_addr *dst, uint32_t *csum_base)
{
	const size_t l3 = GEN_L3_OFF;
	size_t len = o->family == 4 ? 64 : 80, l4;

	memset(b, 0, cap);
	memcpy(b, dmac, 6);
	memcpy(b + 6, smac, 6);
	if (o->family == 4) {
		l4 = l3 + 20;
		b[12] = 0x08;
		b[13] = 0x00;
		b[l3] = 0x45;
		b[l3 + 2] = (uint8_t)((len - l3) >> 8);
		b[l3 + 3] = (uint8_t)(len - l3);
		b[l3 + 6] = 0x40; /* DF */
		b[l3 + 8] = 64;   /* TTL */
		b[l3 + 9] = 17;   /* UDP */
		memcpy(b + l3 + 16, dst->bytes, 4);
		*csum_base = sum_le16(b + l3, 20);
	} else {
		uint8_t pseudo[40] = {};

		l4 = l3 + 40;
		b[12] = 0x86;
		b[13] = 0xdd;
		b[l3] = 0x60;
		b[l3 + 4] = (uint8_t)((len - l4) >> 8);
		b[l3 + 5] = (uint8_t)(len - l4);
		b[l3 + 6] = 17;
		b[l3 + 7] = 64;
		memcpy(b + l3 + 24, dst->bytes, 16);
		/* Pseudo-header: source (zero here), destination, UDP length, next header. */
		memcpy(pseudo + 16, dst->bytes, 16);
		pseudo[34] = (uint8_t)((len - l4) >> 8);
		pseudo[35] = (uint8_t)(len - l4);
		pseudo[39] = 17;
		*csum_base = sum_le16(pseudo, sizeof(pseudo));
	}
	b[l4 + 2] = GEN_DPORT >> 8;
	b[l4 + 3] = GEN_DPORT & 0xff;
	b[l4 + 4] = (uint8_t)((len - l4) >> 8);
	b[l4 + 5] = (uint8_t)(len - l4);
	if (o->family == 6)
		*csum_base += sum_le16(b + l4, len - l4);
	return len;
}

/* Zipf(s) over n: the slot table (see gen_abi.h) and the per-source probability. */
struct zipf {
	uint32_t n;
	double s, norm; /* P(source k) = (k + 1)^-s / norm */
	struct gen_zipf_slot *slots;
};

static double zipf_p(const struct zipf *z, uint32_t k)
{
	return pow((double)k + 1, -z->s) / z->norm;
}

static int zipf_build(struct zipf *z, uint32_t n, double s)
{
	const uint32_t nslots = 1u << GEN_ZIPF_SLOTS_LOG2;
	double cdf, lo, hi;
	uint32_t j, k;

	z->n = n;
	z->s = s;
	z->norm = 0;
	for (k = 0; k < n; k++)
		z->norm += pow((double)k + 1, -s);
	z->slots = calloc(nslots, sizeof(*z->slots));
	if (!z->slots)
		return -ENOMEM;
	/* Walk sources and slots together; cdf is P(source <= k). */
	k = 0;
	cdf = zipf_p(z, 0);
	for (j = 0; j < nslots; j++) {
		lo = (double)j / nslots;
		hi = (double)(j + 1) / nslots;
		while (k + 1 < n && cdf <= lo)
			cdf += zipf_p(z, ++k);
		z->slots[j].first = k;
		while (k + 1 < n && cdf < hi)
			cdf += zipf_p(z, ++k);
		z->slots[j].span = k - z->slots[j].first + 1;
	}
	return 0;
}

/*
 * Expected distinct sources in m draws from the table as the program uses
 * it: slot j gives each of its span sources 1/(2^16 span); a source shared
 * by neighbouring slots sums their shares.
 */
static double zipf_expected_distinct(const struct zipf *z, double m)
{
	const double slot_p = 1.0 / (1u << GEN_ZIPF_SLOTS_LOG2);
	double total = 0, pending_p = 0;
	int64_t pending = -1;
	uint32_t j;

#define SEEN(p) (1.0 - exp(-m * (p)))
	for (j = 0; j < 1u << GEN_ZIPF_SLOTS_LOG2; j++) {
		uint32_t a = z->slots[j].first, b = a + z->slots[j].span - 1;
		double c = slot_p / z->slots[j].span;

		if (pending == (int64_t)a) {
			pending_p += c;
		} else {
			if (pending >= 0)
				total += SEEN(pending_p);
			pending = a;
			pending_p = c;
		}
		if (b > a) {
			total += SEEN(pending_p) + (double)(b - a - 1) * SEEN(c);
			pending = b;
			pending_p = c;
		}
	}
	if (pending >= 0)
		total += SEEN(pending_p);
#undef SEEN
	return total;
}

static int parse_gen_opts(int argc, char **argv, struct gen_opts *o)
{
	static const struct option longopts[] = {
		{ "dist", required_argument, NULL, 'd' },
		{ "sources", required_argument, NULL, 'n' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "good", required_argument, NULL, 'g' },
		{ "good-period", required_argument, NULL, 'G' },
		{ "family", required_argument, NULL, 'f' },
		{ "src-base", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'D' },
		{ "dst-mac", required_argument, NULL, 'M' },
		{ "src-mac", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ifname;
	uint64_t v;
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			for (i = 0; i < 4 && strcmp(optarg, dist_names[i]); i++)
				;
			if (i == 4)
				return bad_value("--dist", optarg, "expected uniform, zipf, spoofed or mix");
			o->dist = (uint32_t)i;
			break;
		case 'n':
			if (parse_u64_range(optarg, 1, 1u << 30, &v))
				return bad_value("--sources", optarg, "expected 1 to 1073741824");
			o->sources = (uint32_t)v;
			break;
		case 'g':
			if (parse_u64_range(optarg, 1, 1u << 24, &v))
				return bad_value("--good", optarg, "expected 1 to 16777216");
			o->good = (uint32_t)v;
			break;
		case 'z':
			errno = 0;
			o->zipf = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->zipf > 0 && o->zipf <= 10))
				return bad_value("--zipf", optarg, "expected an exponent in (0, 10]");
			break;
		case 'G':
			if (parse_duration_ns(optarg, &o->good_period_ns) || !o->good_period_ns)
				return bad_value("--good-period", optarg,
						 "expected a positive duration such as 2s or 500ms");
			break;
		case 'f':
			if (strcmp(optarg, "4") && strcmp(optarg, "6"))
				return bad_value("--family", optarg, "expected 4 or 6");
			o->family = (uint32_t)(optarg[0] - '0');
			break;
		case 's':
			o->src_base = optarg;
			break;
		case 'D':
			o->dst = optarg;
			break;
		case 'M':
			o->dst_mac = optarg;
			break;
		case 'S':
			o->src_mac = optarg;
			break;
		case 'c':
			if (parse_u64_range(optarg, 1, UINT64_MAX / 2, &o->count))
				return bad_value("--count", optarg, "expected a positive integer");
			o->count_set = true;
			break;
		case 't':
			if (parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns)
				return bad_value("--duration", optarg,
						 "expected a positive duration such as 3s or 500ms");
			break;
		case 'r':
			if (parse_u64_range(optarg, 1, 1000000000, &o->rate))
				return bad_value("--rate", optarg, "expected packets per second, 1 to 1000000000");
			break;
		case 'T':
			if (parse_u64_range(optarg, 1, 1024, &v))
				return bad_value("--threads", optarg, "expected 1 to 1024");
			o->threads = (uint32_t)v;
			break;
		case 'j':
			o->json = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage_hint(argv[0]);
			return 2;
		}
	}
	if (o->count_set && o->duration_ns) {
		pr_err("--count and --duration exclude each other");
		usage_hint(argv[0]);
		return 2;
	}
	return expect_ifname(argc, argv, &ifname);
}

struct gen_thread {
	pthread_t tid;
	int cpu, prog_fd, ifindex, err;
	bool counted;              /* unpaced --count: exactly repeat_total runs */
	uint64_t repeat_total;
	const uint8_t *frame;
	size_t len;
	volatile int stop;         /* set by the main thread, then SIGUSR1 */
	volatile int finished;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void on_wakeup(int sig)
{
	(void)sig; /* only there to interrupt BPF_PROG_TEST_RUN with -EINTR */
}

/*
 * One long BPF_PROG_TEST_RUN per thread: each call costs ~25 ms of set-up
 * and tear-down (page pool, RCU grace period) on this VM, so short calls
 * would halve the rate.  The program itself enforces quota and pace; the
 * main thread ends a call early with SIGUSR1 (-EINTR).
 */
static void *gen_thread_main(void *arg)
{
	struct gen_thread *t = arg;
	uint64_t left = t->repeat_total;
	sigset_t block;
	cpu_set_t set;

	/* Ctrl-C goes to the main thread, which stops the workers. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	CPU_ZERO(&set);
	CPU_SET(t->cpu, &set);
	t->err = -pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!t->err && !t->stop && (!t->counted || left)) {
		struct xdp_md ctx_in = { .data_end = (uint32_t)t->len,
					 .ingress_ifindex = (uint32_t)t->ifindex };
		uint64_t n = t->counted && left < GEN_REPEAT_MAX ? left : GEN_REPEAT_MAX;
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = t->frame,
			    .data_size_in = (uint32_t)t->len, .ctx_in = &ctx_in,
			    .ctx_size_in = sizeof(ctx_in), .repeat = (int)n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		int err = bpf_prog_test_run_opts(t->prog_fd, &r);

		if (err == -EINTR)
			continue; /* t->stop says whether that was the end */
		if (err)
			t->err = err;
		left -= t->counted ? n : 0;
	}
	t->finished = 1;
	return NULL;
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

struct gen_report {
	uint64_t sent, good_sent;
	double seconds, distinct;
	bool distinct_exact;
	char sources_text[160];
};

static void print_report(const struct gen_opts *o, const struct gen_report *r,
			 const char *good_first, const char *good_last)
{
	double pps = r->seconds > 0 ? (double)r->sent / r->seconds : 0;

	if (o->json) {
		printf("{\"dist\":");
		json_string(stdout, dist_names[o->dist]);
		printf(",\"family\":%u,\"threads\":%u,\"sent\":%llu,"
		       "\"seconds\":%.6f,\"pps\":%.0f,\"sources\":%u,\"distinct_sources\":%.0f,"
		       "\"distinct_exact\":%s,\"good_sent\":%llu",
		       o->family, o->threads, (unsigned long long)r->sent,
		       r->seconds, pps, o->dist == GEN_DIST_MIX ? o->good : o->sources, r->distinct,
		       r->distinct_exact ? "true" : "false", (unsigned long long)r->good_sent);
		if (o->dist == GEN_DIST_MIX) {
			printf(",\"good_sources\":%u,\"good_first\":", o->good);
			json_string(stdout, good_first);
			printf(",\"good_last\":");
			json_string(stdout, good_last);
			printf(",\"good_sport\":%u,\"flood_sport\":%u,\"flood_sent\":%llu", GEN_SPORT_GOOD,
			       GEN_SPORT_FLOOD, (unsigned long long)(r->sent - r->good_sent));
		}
		printf("}\n");
		return;
	}
	printf("sent %llu IPv%u frames (%s) in %.3f s: %.2f Mpps, %u thread%s\n",
	       (unsigned long long)r->sent, o->family, dist_names[o->dist], r->seconds, pps / 1e6,
	       o->threads, o->threads == 1 ? "" : "s");
	printf("sources: %s\n", r->sources_text);
	if (o->dist == GEN_DIST_MIX)
		printf("well-behaved: %llu packets from %u sources %s .. %s (UDP source port %u), "
		       "one each per period; flood: %llu packets (port %u)\n",
		       (unsigned long long)r->good_sent, o->good, good_first, good_last,
		       GEN_SPORT_GOOD, (unsigned long long)(r->sent - r->good_sent),
		       GEN_SPORT_FLOOD);
}

/* Structured source i as text (IPv4 base + i, IPv6 prefix + i). */
static void source_text(const struct pacer_addr *base, uint32_t i, char *buf, size_t len)
{
	struct pacer_addr a = *base;
	uint64_t prefix = 0;
	int b;

	if (a.family == 4) {
		uint32_t v = ((uint32_t)a.bytes[0] << 24 | a.bytes[1] << 16 | a.bytes[2] << 8 |
			      a.bytes[3]) + i;

		for (b = 0; b < 4; b++)
			a.bytes[b] = (uint8_t)(v >> (24 - 8 * b));
	} else {
		for (b = 0; b < 8; b++)
			prefix = prefix << 8 | a.bytes[b];
		prefix += i;
		for (b = 0; b < 8; b++)
			a.bytes[b] = (uint8_t)(prefix >> (56 - 8 * b));
	}
	format_address(&a, buf, len);
}

int cmd_gen(int argc, char **argv)
{
	struct gen_opts o = {
		.dist = GEN_DIST_UNIFORM, .family = 4, .sources = 1000, .good = 100, .zipf = 1.0,
		.good_period_ns = 2000000000ULL, .count = 1000000, .threads = 1,
	};
	struct gen_thread *threads = NULL;
	struct gen_cpu_state *states = NULL;
	struct gen_report rep = {};
	struct zipf z = {};
	struct pacer_addr src, dst;
	struct gen_params *p;
	struct gen_bpf *skel = NULL;
	uint8_t frame[128], dmac[6], smac[6];
	char eb[128], good_first[64] = "", good_last[64] = "";
	const char *ifname;
	uint64_t t0, t1;
	uint32_t i, ncpus_possible;
	int cpus[1024], avail = 0, ifindex, err, ret = 1;
	size_t len;

	optind = 1;
	err = parse_gen_opts(argc, argv, &o);
	if (err)
		return err < 0 ? 0 : err;
	ifname = argv[optind];
	if (!o.src_base)
		o.src_base = o.family == 4 ? "10.200.0.0" : "fd00:200::";
	if (!o.dst)
		o.dst = o.family == 4 ? "10.255.0.1" : "fd00:255::1";
	if (parse_address(o.src_base, &src) || src.family != (int)o.family)
		return bad_value("--src-base", o.src_base, o.family == 4 ? "expected an IPv4 address"
									  : "expected an IPv6 address");
	if (parse_address(o.dst, &dst) || dst.family != (int)o.family)
		return bad_value("--dst", o.dst, o.family == 4 ? "expected an IPv4 address"
							       : "expected an IPv6 address");
	if (o.dst_mac && parse_mac(o.dst_mac, dmac))
		return bad_value("--dst-mac", o.dst_mac, "expected six hex bytes such as 02:00:00:00:00:01");
	if (!o.dst_mac)
		memset(dmac, 0xff, 6);
	if (o.src_mac && parse_mac(o.src_mac, smac))
		return bad_value("--src-mac", o.src_mac, "expected six hex bytes such as 02:00:00:00:00:01");
	if (o.dist == GEN_DIST_ZIPF && o.sources > GEN_ZIPF_MAX_SOURCES) {
		char v[16];

		snprintf(v, sizeof(v), "%u", o.sources);
		return bad_value("--sources", v, "zipf takes at most 67108864 sources");
	}
	if (o.dist == GEN_DIST_UNIFORM && o.threads > o.sources) {
		pr_err("--threads %u exceeds --sources %u: every thread needs a source of its own",
		       o.threads, o.sources);
		return 2;
	}
	if (o.rate && o.rate < o.threads) {
		pr_err("--rate %llu is below one packet per second per thread (--threads %u)",
		       (unsigned long long)o.rate, o.threads);
		return 2;
	}
	if (o.dist == GEN_DIST_MIX) {
		uint32_t per = (o.good + o.threads - 1) / o.threads;

		if (o.good_period_ns / per == 0) {
			pr_err("--good-period %llu ns is shorter than one ns per well-behaved packet",
			       (unsigned long long)o.good_period_ns);
			return 2;
		}
	}
	/* The flood lives in 128.0.0.0/2 and fc00::/8: keep the well-behaved range out of it. */
	if (o.dist == GEN_DIST_MIX) {
		uint64_t first = (uint64_t)src.bytes[0] << 24 | src.bytes[1] << 16 | src.bytes[2] << 8 |
				 src.bytes[3];
		bool clash = o.family == 4 ? first + o.good - 1 >= 0x80000000ULL && first <= 0xbfffffffULL
					   : src.bytes[0] == 0xfc;

		if (clash) {
			pr_err("--src-base %s: the %u well-behaved sources would overlap the flood's "
			       "range %s", o.src_base, o.good, o.family == 4 ? "128.0.0.0/2" : "fc00::/8");
			return 2;
		}
	}
	if (pick_cpus(o.threads, cpus, &avail)) {
		char v[16];

		snprintf(v, sizeof(v), "%u", o.threads);
		pr_err("invalid value '%s' for --threads: this process may run on %d CPU%s", v,
		       avail, avail == 1 ? "" : "s");
		return 2;
	}
	if (ifname_to_index(ifname, &ifindex))
		return 1;
	if (!o.src_mac && iface_mac(ifname, smac)) {
		memset(smac, 0, 6);
		smac[0] = 0x02; /* locally administered */
	}

	skel = gen_bpf__open();
	if (!skel) {
		pr_err("cannot open the generator object: %s", err_str(-errno, eb, sizeof(eb)));
		return 1;
	}
	p = (struct gen_params *)&skel->rodata->gen_params;
	p->dist = o.dist;
	p->family = o.family;
	p->ifindex = (uint32_t)ifindex;
	memcpy(&p->src_base4, src.bytes, 4);
	p->spoof_mask4 = 0xffffff3fu; /* little-endian load: the first byte is the low one */
	p->spoof_bits4 = 0x00000080u; /* 128.0.0.0/2: unicast, clear of 10/8 */
	p->src_base6[0] = src.lo;
	p->src_base6[1] = src.hi;
	p->spoof_mask6 = ~0xffULL; /* first address byte fc, the rest random */
	p->spoof_bits6 = 0xfcULL;
	p->sport_flood = htons(GEN_SPORT_FLOOD);
	p->sport_good = htons(o.dist == GEN_DIST_MIX ? GEN_SPORT_GOOD : GEN_SPORT_FLOOD);
	len = build_template(frame, sizeof(frame), &o, dmac, smac, &dst, &p->csum_base);
	memcpy(p->hdr, frame, GEN_HDR_BYTES);

	err = gen_bpf__load(skel);
	if (err) {
		pr_err("cannot load the generator: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}
	if (o.dist == GEN_DIST_ZIPF) {
		uint32_t nslots = 1u << GEN_ZIPF_SLOTS_LOG2, *keys;
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		err = zipf_build(&z, o.sources, o.zipf);
		keys = malloc(sizeof(*keys) * nslots);
		if (err || !keys) {
			free(keys);
			pr_err("cannot build the Zipf table: out of memory");
			goto out;
		}
		for (i = 0; i < nslots; i++)
			keys[i] = i;
		err = bpf_map_update_batch(bpf_map__fd(skel->maps.gen_zipf), keys, z.slots, &nslots, &bo);
		free(keys);
		if (err) {
			pr_err("cannot fill the Zipf table: %s", err_str(err, eb, sizeof(eb)));
			goto out;
		}
	}

	/* Each thread's CPU gets its share of the structured and well-behaved sources. */
	err = libbpf_num_possible_cpus();
	if (err < 0) {
		pr_err("cannot count CPUs: %s", err_str(err, eb, sizeof(eb)));
		goto out;
	}
	ncpus_possible = (uint32_t)err;
	states = calloc(ncpus_possible, sizeof(*states));
	threads = calloc(o.threads, sizeof(*threads));
	if (!states || !threads) {
		pr_err("out of memory");
		goto out;
	}
	for (i = 0; i < o.threads; i++) {
		struct gen_cpu_state *st = &states[cpus[i]];
		uint64_t n = o.sources, g = o.good;

		if ((uint32_t)cpus[i] >= ncpus_possible) {
			pr_err("CPU %d is beyond the %u possible CPUs", cpus[i], ncpus_possible);
			goto out;
		}
		st->quota = o.duration_ns ? UINT64_MAX
					  : o.count / o.threads + (i < o.count % o.threads ? 1 : 0);
		if (o.rate) {
			/* ns per frame for this CPU's share of the rate, in 32.32 fixed point */
			uint64_t share = o.rate / o.threads + (i < o.rate % o.threads ? 1 : 0);
			unsigned __int128 gap = ((unsigned __int128)1000000000ULL << 32) / share;

			st->gap_ns = (uint64_t)(gap >> 32);
			st->gap_frac = (uint32_t)gap;
		}
		st->src_first = (uint32_t)(n * i / o.threads);
		st->src_count = (uint32_t)(n * (i + 1) / o.threads) - st->src_first;
		if (o.dist == GEN_DIST_MIX) {
			st->good_first = (uint32_t)(g * i / o.threads);
			st->good_count = (uint32_t)(g * (i + 1) / o.threads) - st->good_first;
			if (st->good_count)
				st->good_gap_ns = o.good_period_ns / st->good_count;
		}
	}
	{
		uint32_t zero = 0;

		err = bpf_map_update_elem(bpf_map__fd(skel->maps.gen_state), &zero, states, 0);
		if (err) {
			pr_err("cannot set the per-CPU source shares: %s", err_str(-errno, eb, sizeof(eb)));
			goto out;
		}
	}

	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sa.sa_handler = on_wakeup; /* no SA_RESTART: the syscall must return */
		sigaction(SIGUSR1, &sa, NULL);
	}
	t0 = mono_ns();
	for (i = 0; i < o.threads; i++) {
		struct gen_thread *t = &threads[i];

		t->cpu = cpus[i];
		t->prog_fd = bpf_program__fd(skel->progs.xdp_gen);
		t->frame = frame;
		t->len = len;
		t->ifindex = ifindex;
		/* Unpaced with a count: the runs are the frames; otherwise run until told. */
		t->counted = !o.duration_ns && !o.rate;
		t->repeat_total = t->counted ? states[cpus[i]].quota : 0;
		err = pthread_create(&t->tid, NULL, gen_thread_main, t);
		if (err) {
			pr_err("cannot start generator thread %u: %s", i, strerror(err));
			o.threads = i;
			break;
		}
	}
	/* Stop the workers at the deadline, at their quota, or on Ctrl-C. */
	for (;;) {
		struct timespec tick = { .tv_nsec = 2000000 };
		uint32_t zero = 0, running = 0;
		bool quota_met = !o.duration_ns;

		for (i = 0; i < o.threads; i++)
			running += !threads[i].finished;
		if (!running)
			break;
		if (!o.duration_ns && o.rate &&
		    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.gen_state), &zero, states)) {
			for (i = 0; i < o.threads; i++)
				quota_met &= states[cpus[i]].sent >= states[cpus[i]].quota;
		} else {
			quota_met = false;
		}
		if (stop || err || quota_met || (o.duration_ns && mono_ns() - t0 >= o.duration_ns)) {
			for (i = 0; i < o.threads; i++) {
				threads[i].stop = 1;
				if (!threads[i].finished)
					pthread_kill(threads[i].tid, SIGUSR1);
			}
		}
		nanosleep(&tick, NULL);
	}
	for (i = 0; i < o.threads; i++)
		pthread_join(threads[i].tid, NULL);
	t1 = mono_ns();
	if (err)
		goto out;
	for (i = 0; i < o.threads; i++) {
		if (threads[i].err) {
			pr_err("BPF_PROG_TEST_RUN (live frames) into %s on CPU %d failed: %s", ifname,
			       threads[i].cpu, err_str(threads[i].err, eb, sizeof(eb)));
			goto out;
		}
	}

	/* What the program counted, per CPU. */
	{
		uint32_t zero = 0;

		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.gen_state), &zero, states)) {
			pr_err("cannot read the generator's counters: %s", err_str(-errno, eb, sizeof(eb)));
			goto out;
		}
	}
	for (i = 0; i < o.threads; i++) {
		const struct gen_cpu_state *st = &states[cpus[i]];

		rep.sent += st->sent;
		rep.good_sent += st->good_sent;
		if (o.dist == GEN_DIST_UNIFORM)
			rep.distinct += (double)(st->sent < st->src_count ? st->sent : st->src_count);
		if (o.dist == GEN_DIST_MIX)
			rep.distinct += (double)(st->good_sent < st->good_count ? st->good_sent
										: st->good_count);
	}
	rep.seconds = (double)(t1 - t0) / 1e9;
	if (o.dist == GEN_DIST_MIX) {
		source_text(&src, 0, good_first, sizeof(good_first));
		source_text(&src, o.good - 1, good_last, sizeof(good_last));
	}
	{
		/* Random sources: expected distinct draws from the spoofed space. */
		double space = o.family == 4 ? 1073741824.0 : 0x1p120;
		double flood = (double)(rep.sent - rep.good_sent);
		double spoofed = space * -expm1(-flood / space);

		switch (o.dist) {
		case GEN_DIST_UNIFORM:
			rep.distinct_exact = true;
			snprintf(rep.sources_text, sizeof(rep.sources_text),
				 "%.0f distinct of %u (exact: each thread cycles through its share)",
				 rep.distinct, o.sources);
			break;
		case GEN_DIST_ZIPF:
			rep.distinct = zipf_expected_distinct(&z, (double)rep.sent);
			snprintf(rep.sources_text, sizeof(rep.sources_text),
				 "~%.0f distinct of %u (expected for Zipf(%g) with this many draws)",
				 rep.distinct, o.sources, o.zipf);
			break;
		case GEN_DIST_SPOOFED:
			rep.distinct = spoofed;
			snprintf(rep.sources_text, sizeof(rep.sources_text),
				 "~%.0f distinct (expected: uniform random in %s)", rep.distinct,
				 o.family == 4 ? "128.0.0.0/2" : "fc00::/8");
			break;
		default:
			snprintf(rep.sources_text, sizeof(rep.sources_text),
				 "%.0f well-behaved (exact) + ~%.0f flood (expected: random in %s)",
				 rep.distinct, spoofed, o.family == 4 ? "128.0.0.0/2" : "fc00::/8");
			rep.distinct += spoofed;
			break;
		}
	}
	print_report(&o, &rep, good_first, good_last);
	ret = 0;
out:
	free(z.slots);
	free(states);
	free(threads);
	gen_bpf__destroy(skel);
	return ret;
}
