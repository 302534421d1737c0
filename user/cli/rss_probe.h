/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the NIC's RSS configuration with the ethtool ioctl (SIOCETHTOOL). */
#ifndef PACER_RSS_PROBE_H
#define PACER_RSS_PROBE_H

#include "rss.h"

/*
 * Fill in what ifname's driver reports: ETHTOOL_GRXFH for tcp4, udp4, tcp6,
 * udp6, and the RX queue count (ETHTOOL_GRXRINGS, else ETHTOOL_GCHANNELS).
 * A driver's refusal is recorded in the info, not returned: 0, or negative
 * errno when no ioctl could be made at all.
 */
int rss_probe(const char *ifname, struct rss_info *out);

/* Probe and judge in one: the verdict for per-CPU placement on ifname. */
void rss_verdict_for(const char *ifname, bool skb_mode, uint32_t prefix4, uint32_t prefix6,
		     struct rss_verdict *v);

/* The verdict for a running pacer: its interface, attach mode and live key widths. */
struct pacer_handle;
void rss_verdict_of(const struct pacer_handle *h, struct rss_verdict *v);

#endif
