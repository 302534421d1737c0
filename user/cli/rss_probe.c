// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The ethtool ioctls behind the RSS verdict (the decision is in lib/rss.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "common.h"
#include "rss_probe.h"

static const uint32_t flow_types[RSS_NFLOWS] = {
	[RSS_TCP4] = TCP_V4_FLOW, [RSS_UDP4] = UDP_V4_FLOW,
	[RSS_TCP6] = TCP_V6_FLOW, [RSS_UDP6] = UDP_V6_FLOW,
};

/* One SIOCETHTOOL request; 0 or negative errno. */
static int ethtool_ioctl(int fd, const char *ifname, void *cmd)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

static void probe_queues(int fd, const char *ifname, struct rss_info *out)
{
	struct ethtool_rxnfc rings = { .cmd = ETHTOOL_GRXRINGS };
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };

	/* GRXRINGS: the queues RSS spreads over; GCHANNELS where the driver lacks it. */
	out->queues_err = ethtool_ioctl(fd, ifname, &rings);
	if (!out->queues_err && rings.data) {
		out->rx_queues = (uint32_t)rings.data;
		return;
	}
	out->queues_err = ethtool_ioctl(fd, ifname, &ch);
	if (!out->queues_err)
		out->rx_queues = ch.rx_count + ch.combined_count;
	if (!out->queues_err && !out->rx_queues)
		out->queues_err = -ENODATA;
}

int rss_probe(const char *ifname, struct rss_info *out)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), f;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return -errno;
	for (f = 0; f < RSS_NFLOWS; f++) {
		struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXFH, .flow_type = flow_types[f] };

		out->hash_err[f] = ethtool_ioctl(fd, ifname, &nfc);
		out->fields[f] = out->hash_err[f] ? 0 : nfc.data;
	}
	probe_queues(fd, ifname, out);
	close(fd);
	return 0;
}

void rss_verdict_for(const char *ifname, bool skb_mode, uint32_t prefix4, uint32_t prefix6,
		     struct rss_verdict *v)
{
	struct rss_info in;
	int err = rss_probe(ifname, &in);

	if (err) {
		memset(v, 0, sizeof(*v));
		v->reason = RSS_HASH_UNKNOWN;
		snprintf(v->text, sizeof(v->text),
			 "cannot ask %s for its RSS hash (socket: %s), so cannot tell whether a source "
			 "always reaches one CPU; per-CPU placement may admit it up to once per CPU",
			 ifname, strerror(-err));
		return;
	}
	rss_judge(ifname, &in, skb_mode, prefix4, prefix6, v);
}

void rss_verdict_of(const struct pacer_handle *h, struct rss_verdict *v)
{
	rss_verdict_for(h->ifname, !strcmp(h->mode, "skb"), h->cfg->prefix4, h->cfg->prefix6, v);
}
