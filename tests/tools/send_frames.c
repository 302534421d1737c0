// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Send Ethernet/IP/UDP frames from many source addresses out of one
 * interface (AF_PACKET).  The integration tests run it inside a network
 * namespace they own; the frames go to the veth peer, where the limiter
 * under test runs.  Frames come from the library's builder (frame.h) and
 * options from an option table (opts.h), as the CLI's do.  Prints the
 * number of frames sent.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/if_packet.h>
#include "frame.h"
#include "opts.h"

struct send_opts {
	const char *iface, *dst_mac;
	struct opt_address src_base, dst;
	unsigned __int128 stride;
	uint32_t sources, per_source, rounds, vlan, payload, dport, ttl;
	double round_gap;
	bool iface_set, dst_mac_set, src_base_set, dst_set, bad_header;
};

/* A decimal up to 2^128 - 1 (an IPv6 step of 2^64 moves one /64). */
static int parse_u128(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	unsigned __int128 v = 0, prev;

	(void)s, (void)why, (void)len;
	if (!*arg)
		return -EINVAL;
	for (; *arg; arg++) {
		if (*arg < '0' || *arg > '9')
			return -EINVAL;
		prev = v;
		v = v * 10 + (unsigned)(*arg - '0');
		if (v / 10 != prev)
			return -ERANGE;
	}
	*(unsigned __int128 *)field = v;
	return 0;
}

static const struct opt_spec specs[] = {
	{ .name = "iface", .type = OPT_IFNAME, .flags = OPT_REQUIRED, .arg = "IFNAME",
	  OPT_FIELD(struct send_opts, iface), OPT_GIVEN(struct send_opts, iface_set),
	  .help = "interface to send on" },
	{ .name = "dst-mac", .type = OPT_STRING, .flags = OPT_REQUIRED, .arg = "MAC",
	  OPT_FIELD(struct send_opts, dst_mac), OPT_GIVEN(struct send_opts, dst_mac_set),
	  .help = "destination MAC" },
	{ .name = "src-base", .type = OPT_ADDRESS, .flags = OPT_REQUIRED, .arg = "ADDR",
	  OPT_FIELD(struct send_opts, src_base), OPT_GIVEN(struct send_opts, src_base_set),
	  .help = "first source address" },
	{ .name = "dst", .type = OPT_ADDRESS, .flags = OPT_REQUIRED, .arg = "ADDR",
	  OPT_FIELD(struct send_opts, dst), OPT_GIVEN(struct send_opts, dst_set),
	  .help = "destination address (the source's family)" },
	{ .name = "sources", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 24, .dflt = "1",
	  OPT_FIELD(struct send_opts, sources), .help = "number of sources" },
	{ .name = "stride", .type = OPT_CUSTOM, .arg = "K", .parse = parse_u128, .dflt = "1",
	  OPT_FIELD(struct send_opts, stride), .why = "expected a whole number below 2^128",
	  .help = "address step between sources" },
	{ .name = "per-source", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 20, .dflt = "1",
	  OPT_FIELD(struct send_opts, per_source), .help = "frames per source per round" },
	{ .name = "rounds", .type = OPT_U32, .arg = "N", .min = 1, .max = 1u << 20, .dflt = "1",
	  OPT_FIELD(struct send_opts, rounds), .help = "rounds over all sources" },
	{ .name = "round-gap", .type = OPT_DECIMAL, .arg = "SECONDS", .dmin = 0, .dmax = 3600,
	  .dflt = "0", OPT_FIELD(struct send_opts, round_gap), .help = "pause between rounds" },
	{ .name = "vlan", .type = OPT_U32, .arg = "TCI", .max = 4095, .dflt = "0",
	  OPT_FIELD(struct send_opts, vlan), .help = "one 802.1Q tag with this TCI (0: none)" },
	{ .name = "payload", .type = OPT_U32, .arg = "BYTES", .max = 1400, .dflt = "6",
	  OPT_FIELD(struct send_opts, payload), .help = "UDP payload bytes" },
	{ .name = "dport", .type = OPT_U32, .arg = "PORT", .max = 65535, .dflt = "9",
	  OPT_FIELD(struct send_opts, dport), .help = "UDP destination port (traffic classes match it)" },
	{ .name = "ttl", .type = OPT_U32, .arg = "N", .min = 1, .max = 255, .dflt = "64",
	  OPT_FIELD(struct send_opts, ttl), .help = "IPv4 TTL or IPv6 hop limit (1: a router's TTL exceeded)" },
	{ .name = "bad-header", .type = OPT_BOOL, OPT_FIELD(struct send_opts, bad_header),
	  .help = "an IP header the limiter calls malformed: IPv4 IHL 4, IPv6 version 5" },
	{ 0 },
};

static const struct opt_verb verb = {
	.program = "send_frames",
	.name = "send_frames",
	.synopsis = "--iface IFNAME --dst-mac MAC --src-base ADDR --dst ADDR [OPTIONS]",
	.intro = "Send UDP frames from --sources addresses counting up from --src-base.\n",
	.opts = specs,
};

/* base + i * stride, as a big-endian integer of the family's width. */
static void nth_address(const struct pacer_addr *base, unsigned __int128 step, struct pacer_addr *out)
{
	int n = base->family == 4 ? 4 : 16, b;
	unsigned __int128 v = 0;

	*out = *base;
	for (b = 0; b < n; b++)
		v = v << 8 | base->bytes[b];
	v += step;
	for (b = n - 1; b >= 0; b--, v >>= 8)
		out->bytes[b] = (uint8_t)v;
}

static int open_iface(const char *iface, uint8_t smac[6])
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	sll.sll_ifindex = (int)if_nametoindex(iface);
	if (!sll.sll_ifindex || ioctl(fd, SIOCGIFHWADDR, &ifr) ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		close(fd);
		return -errno;
	}
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	return fd;
}

static int send_rounds(int fd, const struct send_opts *o, struct frame_spec *s, uint64_t *sent)
{
	struct timespec gap = { .tv_sec = (time_t)o->round_gap,
				.tv_nsec = (long)((o->round_gap - (double)(time_t)o->round_gap) * 1e9) };
	uint8_t f[1514];
	uint32_t r, i, k;
	size_t len, l3;

	for (r = 0; r < o->rounds; r++) {
		if (r && o->round_gap > 0)
			nanosleep(&gap, NULL);
		for (i = 0; i < o->sources; i++) {
			nth_address(&o->src_base.addr, o->stride * i, &s->src);
			len = frame_build(f, sizeof(f), s, &l3);
			/* IHL 4 (checked before the header's checksum) or version 5. */
			if (o->bad_header)
				f[l3] = s->src.family == 4 ? 0x44 : (uint8_t)(0x50 | (f[l3] & 0xf));
			for (k = 0; k < o->per_source; k++, (*sent)++)
				if (send(fd, f, len, 0) != (ssize_t)len)
					return -errno;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct send_opts o = { 0 };
	struct frame_spec s = { .sport = 40000, .dport = 9, .fill = 'p', .csum = true };
	struct opt_error e;
	uint64_t sent = 0;
	int fd, err = opts_parse(&verb, argc, argv, &o, stdout, &e);

	if (err == 2)
		fprintf(stderr, "send_frames: %s\n", e.msg);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	if (parse_mac(o.dst_mac, s.dmac) || o.dst.addr.family != o.src_base.addr.family) {
		fprintf(stderr, "send_frames: bad --dst-mac, or --dst and --src-base differ in family\n");
		return 2;
	}
	s.dst = o.dst.addr;
	s.payload = o.payload;
	s.dport = (uint16_t)o.dport;
	s.ttl = (uint8_t)o.ttl;
	s.n_vlans = o.vlan ? 1 : 0;
	s.vlan_tci[0] = (uint16_t)o.vlan;
	fd = open_iface(o.iface, s.smac);
	if (fd < 0) {
		fprintf(stderr, "send_frames: %s: %s\n", o.iface, strerror(-fd));
		return 1;
	}
	err = send_rounds(fd, &o, &s, &sent);
	close(fd);
	if (err)
		fprintf(stderr, "send_frames: send: %s\n", strerror(-err));
	printf("%llu\n", (unsigned long long)sent);
	return err ? 1 : 0;
}
