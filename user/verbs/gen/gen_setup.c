// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer gen: the frame's parameters and template, the Zipf table and each sender's share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/libbpf.h> /* libbpf_num_possible_cpus */
#include "common.h"
#include "frame.h"
#include "gen.h"

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

/*
 * The template frame: Ethernet, IP, UDP, zero payload; 64 bytes (IPv4) or
 * 80 (IPv6).  Source address, UDP source port and the checksums covering
 * them are left zero: the program fills them per frame from csum_base.
 */
static void build_template(struct gen_ctx *g, struct gen_params *p)
{
	const struct gen_opts *o = &g->o;
	struct frame_spec s = { .dst = o->dst.addr, .dport = GEN_DPORT, .df = true };
	size_t l3;

	s.src.family = o->dst.addr.family;
	s.payload = o->family == 4 ? 64 - 14 - 20 - 8 : 80 - 14 - 40 - 8;
	memcpy(s.dmac, o->dst_mac.b, 6);
	if (o->src_mac_set) {
		memcpy(s.smac, o->src_mac.b, 6);
	} else if (iface_mac(o->ifname, s.smac)) {
		memset(s.smac, 0, 6);
		s.smac[0] = 0x02; /* locally administered */
	}
	g->len = frame_build(g->frame, sizeof(g->frame), &s, &l3);
	p->csum_base = frame_csum_base(g->frame, g->len, l3, (int)o->family);
	memcpy(p->hdr, g->frame, GEN_HDR_BYTES);
}

static void set_params(struct gen_ctx *g, struct gen_params *p)
{
	const struct gen_opts *o = &g->o;
	const struct pacer_addr *src = &o->src_base.addr;

	p->dist = o->dist;
	p->family = o->family;
	p->ifindex = (uint32_t)g->ifindex;
	memcpy(&p->src_base4, src->bytes, 4);
	p->spoof_mask4 = 0xffffff3fu; /* little-endian load: the first byte is the low one */
	p->spoof_bits4 = 0x00000080u; /* 128.0.0.0/2: unicast, clear of 10/8 */
	p->src_base6[0] = src->lo;
	p->src_base6[1] = src->hi;
	p->spoof_mask6 = ~0xffULL; /* first address byte fc, the rest random */
	p->spoof_bits6 = 0xfcULL;
	p->sport_flood = htons(GEN_SPORT_FLOOD);
	p->sport_good = htons(o->dist == GEN_DIST_MIX || o->dist == GEN_DIST_HEAVY ? GEN_SPORT_GOOD
									       : GEN_SPORT_FLOOD);
	if (o->dist == GEN_DIST_HEAVY) {
		double t = o->heavy_share / 100 * 4294967296.0;

		p->heavy_count = o->heavy;
		p->heavy_thresh = t >= 4294967295.0 ? 0xffffffffu : (uint32_t)t;
	}
	build_template(g, p);
}

static int build_zipf(struct gen_ctx *g)
{
	if (zipf_build(&g->z, g->o.sources, g->o.zipf)) {
		pr_err("cannot build the Zipf table: out of memory");
		return 1;
	}
	return 0;
}

/* Thread i's share of the frames, the rate and the sources. */
static void cpu_share(const struct gen_opts *o, uint32_t i, struct gen_cpu_state *st)
{
	uint64_t n = o->sources, g = o->good, t = o->threads;

	st->quota = o->duration_ns ? UINT64_MAX : o->count / t + (i < o->count % t ? 1 : 0);
	if (o->rate) {
		/* ns per frame for this CPU's share of the rate, in 32.32 fixed point */
		uint64_t share = o->rate / t + (i < o->rate % t ? 1 : 0);
		unsigned __int128 gap = ((unsigned __int128)1000000000ULL << 32) / share;

		st->gap_ns = (uint64_t)(gap >> 32);
		st->gap_frac = (uint32_t)gap;
	}
	if (o->affinity_source) {
		st->aff_index = i;
		st->aff_count = o->threads;
	}
	st->src_first = (uint32_t)(n * i / t);
	st->src_count = (uint32_t)(n * (i + 1) / t) - st->src_first;
	if (o->dist == GEN_DIST_MIX) {
		st->good_first = (uint32_t)(g * i / t);
		st->good_count = (uint32_t)(g * (i + 1) / t) - st->good_first;
		if (st->good_count)
			st->good_gap_ns = o->good_period_ns / st->good_count;
	}
}

/* Each thread's CPU gets its share of the structured and well-behaved sources. */
static int fill_shares(struct gen_ctx *g)
{
	uint32_t i;
	char eb[128];
	int n = libbpf_num_possible_cpus();

	if (n < 0) {
		pr_err("cannot count CPUs: %s", err_str(n, eb, sizeof(eb)));
		return 1;
	}
	g->ncpus_possible = (uint32_t)n;
	g->states = calloc((size_t)n, sizeof(*g->states));
	if (!g->states) {
		pr_err("out of memory");
		return 1;
	}
	for (i = 0; i < g->o.threads; i++) {
		if ((uint32_t)g->cpus[i] >= g->ncpus_possible) {
			pr_err("CPU %d is beyond the %u possible CPUs", g->cpus[i], g->ncpus_possible);
			return 1;
		}
		cpu_share(&g->o, i, &g->states[g->cpus[i]]);
	}
	return 0;
}

int gen_setup(struct gen_ctx *g)
{
	if (ifname_to_index(g->o.ifname, &g->ifindex))
		return 1;
	set_params(g, &g->params);
	if (g->o.dist == GEN_DIST_ZIPF && build_zipf(g))
		return 1;
	return fill_shares(g);
}

void gen_teardown(struct gen_ctx *g)
{
	if (g->engine)
		g->engine->close(g);
	zipf_free(&g->z);
	free(g->states);
}
