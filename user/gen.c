// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen: a line-rate traffic generator.  An XDP program run with
 * BPF_PROG_TEST_RUN and BPF_F_TEST_XDP_LIVE_FRAMES rewrites the source of
 * each frame and redirects it out of IFNAME (see bpf/gen.bpf.c).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
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
#include <linux/if_ether.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "parse.h"
#include "gen_abi.h"
#include "gen.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xdp-pacer gen IFNAME [OPTIONS]\n\n"
		"Send frames out of IFNAME (e.g. one end of a veth pair whose peer runs the\n"
		"limiter) at line rate from chosen source distributions.\n"
		"  --dist uniform|zipf|spoofed|mix  source distribution (uniform)\n"
		"  --sources N          uniform/zipf: number of sources (1000)\n"
		"  --zipf S             zipf exponent (1.0)\n"
		"  --good N             mix: well-behaved sources (100), one packet each per --good-period\n"
		"  --good-period DUR    mix: each well-behaved source's gap (2s)\n"
		"  --family 4|6         (4)\n"
		"  --src-base ADDR      first source (10.200.0.0 / fd00:200::); source i is base + i\n"
		"                       (IPv6: one /64 per source); spoofed sources are random\n"
		"                       (IPv4: within 128.0.0.0/1, apart from the base range)\n"
		"  --dst ADDR           destination (10.255.0.1 / fd00:255::1)\n"
		"  --dst-mac MAC        destination MAC (ff:ff:ff:ff:ff:ff)\n"
		"  --count N | --duration DUR  how much to send (count 1000000)\n"
		"  --rate PPS           target rate (default: as fast as possible)\n"
		"  --json               report as JSON\n");
}

struct gen_opts {
	uint32_t dist, family, sources, good;
	double zipf;
	uint64_t good_period_ns, count, duration_ns, rate;
	const char *src_base, *dst, *dst_mac;
	bool json;
};

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int iface_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = {};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

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

/* The template frame: Ethernet, IP, UDP with an 18-byte payload (64 bytes for IPv4). */
static size_t build_template(uint8_t *b, const struct gen_opts *o, const uint8_t dmac[6],
			     const uint8_t smac[6], const struct pacer_addr *dst,
			     const struct pacer_addr *src)
{
	size_t l3 = 14, l4, n;

	memset(b, 0, 128);
	memcpy(b, dmac, 6);
	memcpy(b + 6, smac, 6);
	if (o->family == 4) {
		uint32_t sum = 0;
		int i;

		b[12] = 0x08;
		b[13] = 0x00;
		b[l3] = 0x45;
		b[l3 + 3] = 46; /* 20 + 8 + 18 */
		b[l3 + 8] = 64;
		b[l3 + 9] = 17;
		memcpy(b + l3 + 12, src->bytes, 4);
		memcpy(b + l3 + 16, dst->bytes, 4);
		for (i = 0; i < 20; i += 2)
			sum += (uint32_t)(b[l3 + i] << 8 | b[l3 + i + 1]);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		b[l3 + 10] = (uint8_t)(~sum >> 8);
		b[l3 + 11] = (uint8_t)~sum;
		l4 = l3 + 20;
	} else {
		b[12] = 0x86;
		b[13] = 0xdd;
		b[l3] = 0x60;
		b[l3 + 5] = 26;
		b[l3 + 6] = 17;
		b[l3 + 7] = 64;
		memcpy(b + l3 + 8, src->bytes, 16);
		memcpy(b + l3 + 24, dst->bytes, 16);
		l4 = l3 + 40;
	}
	b[l4] = 0x9c; /* sport 40000 */
	b[l4 + 1] = 0x40;
	b[l4 + 3] = 9; /* discard */
	b[l4 + 5] = 26;
	n = l4 + 26;
	return n;
}

/* Zipf(s) over n: inverse-CDF samples into the table the program draws from. */
static int fill_zipf(int fd, uint32_t n, double s)
{
	uint32_t size = 1u << GEN_ZIPF_TABLE_LOG2, k, i = 0;
	double *cdf = malloc(sizeof(double) * n), total = 0, acc = 0;
	uint32_t *vals = malloc(sizeof(uint32_t) * size), *keys = malloc(sizeof(uint32_t) * size);
	uint32_t count = size;
	int err;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);

	if (!cdf || !vals || !keys) {
		free(cdf);
		free(vals);
		free(keys);
		return -ENOMEM;
	}
	for (k = 0; k < n; k++)
		total += 1.0 / pow((double)k + 1, s);
	for (k = 0; k < n; k++) {
		acc += 1.0 / pow((double)k + 1, s) / total;
		cdf[k] = acc;
	}
	/* Stratified quantiles: slot j gets the source at CDF (j + 0.5) / size. */
	for (k = 0; k < size; k++) {
		double u = ((double)k + 0.5) / size;

		while (i + 1 < n && cdf[i] < u)
			i++;
		keys[k] = k;
		vals[k] = i;
	}
	err = bpf_map_update_batch(fd, keys, vals, &count, &bo);
	free(cdf);
	free(vals);
	free(keys);
	return err;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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
		{ "count", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 't' },
		{ "rate", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const dists[] = { "uniform", "zipf", "spoofed", "mix" };
	uint64_t v;
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			for (i = 0; i < 4 && strcmp(optarg, dists[i]); i++)
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
			o->zipf = strtod(optarg, &end);
			if (*end || !(o->zipf > 0 && o->zipf <= 10))
				return bad_value("--zipf", optarg, "expected an exponent in (0, 10]");
			break;
		case 'G':
			if (parse_duration_ns(optarg, &o->good_period_ns) || !o->good_period_ns)
				return bad_value("--good-period", optarg, "expected a positive duration");
			break;
		case 'f':
			if (strcmp(optarg, "4") && strcmp(optarg, "6"))
				return bad_value("--family", optarg, "expected 4 or 6");
			o->family = (uint32_t)atoi(optarg);
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
		case 'c':
			if (parse_u64_range(optarg, 1, UINT64_MAX / 2, &o->count))
				return bad_value("--count", optarg, "expected a positive integer");
			o->duration_ns = 0;
			break;
		case 't':
			if (parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns)
				return bad_value("--duration", optarg, "expected a positive duration");
			break;
		case 'r':
			if (parse_u64_range(optarg, 1, 1000000000, &o->rate))
				return bad_value("--rate", optarg, "expected packets per second, 1 to 1e9");
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
	return expect_positionals(argc, argv, 1, "an interface name");
}

int cmd_gen(int argc, char **argv)
{
	struct gen_opts o = {
		.dist = GEN_DIST_UNIFORM, .family = 4, .sources = 1000, .good = 100, .zipf = 1.0,
		.good_period_ns = 2000000000ULL, .count = 1000000,
	};
	struct pacer_addr src, dst;
	struct gen_params *p;
	struct gen_bpf *skel = NULL;
	uint8_t frame[128], dmac[6], smac[6];
	const char *ifname;
	uint64_t sent = 0, target;
	size_t len;
	int ifindex, err, prog_fd;
	double t0, t1, elapsed;
	char eb[128];

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
		return bad_value("--src-base", o.src_base, "expected an address of the chosen --family");
	if (parse_address(o.dst, &dst) || dst.family != (int)o.family)
		return bad_value("--dst", o.dst, "expected an address of the chosen --family");
	if (parse_mac(o.dst_mac ? o.dst_mac : "ff:ff:ff:ff:ff:ff", dmac))
		return bad_value("--dst-mac", o.dst_mac, "expected six hex bytes such as 02:00:00:00:00:01");
	if (ifname_to_index(ifname, &ifindex))
		return 1;
	if (iface_mac(ifname, smac))
		memset(smac, 0x02, 6);

	skel = gen_bpf__open();
	if (!skel) {
		pr_err("cannot open the generator object: %s", err_str(-errno, eb, sizeof(eb)));
		return 1;
	}
	p = (struct gen_params *)&skel->rodata->gen_params;
	p->dist = o.dist;
	p->family = o.family;
	p->nsources = o.dist == GEN_DIST_MIX ? o.good : o.sources;
	p->ifindex = (uint32_t)ifindex;
	p->l3_off = 14;
	memcpy(&p->src_base4, src.bytes, 4);
	p->spoof_mask4 = 0xffffff7fu; /* first byte's top bit set: 128.0.0.0/1 */
	p->spoof_bits4 = 0x00000080u;
	p->src_base6[0] = src.lo;
	p->src_base6[1] = src.hi;
	p->good_gap_ns = o.good_period_ns / o.good;
	if (o.dist == GEN_DIST_MIX && o.family == 4 && (src.bytes[0] & 0x80)) {
		pr_err("--src-base %s overlaps the spoofed range 128.0.0.0/1", o.src_base);
		err = 2;
		goto out;
	}
	err = gen_bpf__load(skel);
	if (err) {
		pr_err("cannot load the generator: %s", err_str(err, eb, sizeof(eb)));
		err = 1;
		goto out;
	}
	if (o.dist == GEN_DIST_ZIPF) {
		err = fill_zipf(bpf_map__fd(skel->maps.gen_zipf), o.sources, o.zipf);
		if (err) {
			pr_err("cannot fill the Zipf table: %s", err_str(err, eb, sizeof(eb)));
			err = 1;
			goto out;
		}
	}
	len = build_template(frame, &o, dmac, smac, &dst, &src);
	prog_fd = bpf_program__fd(skel->progs.xdp_gen);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	target = o.duration_ns ? UINT64_MAX : o.count;
	t0 = now_s();
	while (!stop && sent < target) {
		struct xdp_md ctx_in = { .data_end = (uint32_t)len, .ingress_ifindex = (uint32_t)ifindex };
		uint64_t batch = o.rate ? (o.rate / 100 ? o.rate / 100 : 1) : 1u << 18;
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = frame, .data_size_in = (uint32_t)len,
			    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);

		if (batch > target - sent)
			batch = target - sent;
		r.repeat = (int)batch;
		err = bpf_prog_test_run_opts(prog_fd, &r);
		if (err) {
			pr_err("BPF_PROG_TEST_RUN (live frames) into %s failed: %s", ifname,
			       err_str(err, eb, sizeof(eb)));
			err = 1;
			goto out;
		}
		sent += batch;
		t1 = now_s();
		if (o.duration_ns && (t1 - t0) * 1e9 >= (double)o.duration_ns)
			break;
		if (o.rate) {
			double due = t0 + (double)sent / (double)o.rate;

			if (due > t1)
				usleep((useconds_t)((due - t1) * 1e6));
		}
	}
	elapsed = now_s() - t0;
	sent = skel->bss->gen_counters.sent;
	{
		static const char *const dn[] = { "uniform", "zipf", "spoofed", "mix" };
		uint64_t good = skel->bss->gen_counters.good_sent;
		char srcs[64];

		if (o.dist == GEN_DIST_SPOOFED)
			snprintf(srcs, sizeof(srcs), "one random source per packet");
		else if (o.dist == GEN_DIST_MIX)
			snprintf(srcs, sizeof(srcs), "%u well-behaved + random flood sources", o.good);
		else
			snprintf(srcs, sizeof(srcs), "%u", o.sources);
		if (o.json)
			printf("{\"dist\":\"%s\",\"family\":%u,\"sent\":%llu,\"good_sent\":%llu,"
			       "\"sources\":%u,\"seconds\":%.3f,\"pps\":%.0f}\n",
			       dn[o.dist], o.family, (unsigned long long)sent, (unsigned long long)good,
			       o.dist == GEN_DIST_MIX ? o.good : o.sources, elapsed,
			       (double)sent / elapsed);
		else
			printf("sent %llu IPv%u frames (%s) from %s in %.3f s: %.2f Mpps%s\n",
			       (unsigned long long)sent, o.family, dn[o.dist], srcs, elapsed,
			       (double)sent / elapsed / 1e6,
			       o.dist == GEN_DIST_MIX ? "" : "");
		if (!o.json && o.dist == GEN_DIST_MIX)
			printf("well-behaved packets sent: %llu (sources %s + 0..%u)\n",
			       (unsigned long long)good, o.src_base, o.good - 1);
	}
	err = 0;
out:
	gen_bpf__destroy(skel);
	return err;
}
