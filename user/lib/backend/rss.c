// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Per-CPU placement against the NIC's RSS hash: see rss.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/ethtool.h>
#include "pacer_abi.h"
#include "rss.h"

#define RSS_ADDR_BITS ((uint64_t)(RXH_IP_SRC | RXH_IP_DST))

static const char *const flow_names[RSS_NFLOWS] = { "tcp4", "udp4", "tcp6", "udp6" };

const char *rss_flow_name(enum rss_flow f)
{
	return f < RSS_NFLOWS ? flow_names[f] : "?";
}

/* Append to a fixed buffer; output past its end is cut, never overrun. */
static void put(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void put(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

void rss_fields_text(uint64_t fields, char *buf, size_t len)
{
	static const struct { uint64_t bit; const char *name; } names[] = {
		{ RXH_L2DA, "dst-mac" },   { RXH_VLAN, "vlan" },
		{ RXH_L3_PROTO, "l3-proto" }, { RXH_IP_SRC, "src" },
		{ RXH_IP_DST, "dst" },     { RXH_L4_B_0_1, "src-port" },
		{ RXH_L4_B_2_3, "dst-port" }, { RXH_DISCARD, "discard" },
	};
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (fields & names[i].bit)
			put(buf, len, "%s%s", buf[0] ? "," : "", names[i].name);
	if (!buf[0])
		snprintf(buf, len, "nothing");
}

/* A discarded flow type delivers nothing, so it cannot spread a source. */
static uint64_t hashed(const struct rss_info *in, int f)
{
	return in->fields[f] & RXH_DISCARD ? 0 : in->fields[f];
}

/* "run `ethtool -N IF rx-flow-hash A sd` (and the same for B, C)" for the flows not on sd. */
static void fix_text(const char *ifname, const struct rss_info *in, char *buf, size_t len)
{
	int f, n = 0;

	for (f = 0; f < RSS_NFLOWS; f++) {
		if (in->fields[f] & RXH_DISCARD || in->fields[f] == RSS_ADDR_BITS)
			continue;
		if (!n++)
			put(buf, len, "; run `ethtool -N %s rx-flow-hash %s sd`", ifname, flow_names[f]);
		else
			put(buf, len, "%s%s", n == 2 ? " (and the same for " : ", ", flow_names[f]);
	}
	put(buf, len, "%s or use --placement shared", n > 1 ? ")" : "");
}

static void list_flows(const struct rss_info *in, uint64_t select_mask, bool only_spreading,
		       char *buf, size_t len)
{
	char fields[96];
	int f, n = 0;

	for (f = 0; f < RSS_NFLOWS; f++) {
		if (only_spreading && !(hashed(in, f) & ~select_mask))
			continue;
		rss_fields_text(in->fields[f], fields, sizeof(fields));
		put(buf, len, "%s%s on %s", n++ ? "; " : "", flow_names[f], fields);
	}
}

static const char spread_tail[] =
	": a source may reach several CPUs; per-CPU placement then admits it up to once per CPU";

static void judge_no_hash(const char *ifname, const struct rss_info *in, struct rss_verdict *v)
{
	char eb[64], q[48];

	snprintf(eb, sizeof(eb), "%s", strerror(-in->hash_err[0]));
	if (in->queues_err)
		snprintf(q, sizeof(q), "an unknown number of RX queues");
	else
		snprintf(q, sizeof(q), "%u RX queue%s", in->rx_queues, in->rx_queues == 1 ? "" : "s");
	v->reason = RSS_NO_HASH;
	snprintf(v->text, sizeof(v->text),
		 "%s reports no RSS hash (ETHTOOL_GRXFH: %s) and %s: which CPU receives a packet "
		 "is not fixed by a hash of its addresses (veth and other software devices receive "
		 "on the sending CPU), so per-CPU placement may admit a source up to once per CPU",
		 ifname, eb, q);
}

/* All four flow types were read: ports, mixed address fields, or exact per address. */
static void judge_fields(const char *ifname, const struct rss_info *in, struct rss_verdict *v)
{
	bool more = false, mixed = false;
	int f;

	for (f = 0; f < RSS_NFLOWS; f++)
		more |= (hashed(in, f) & ~RSS_ADDR_BITS) != 0;
	/* TCP and UDP of one source must land together: same address fields per family. */
	for (f = 0; f < RSS_NFLOWS; f += 2)
		mixed |= (hashed(in, f) & RSS_ADDR_BITS) != (hashed(in, f + 1) & RSS_ADDR_BITS) &&
			 !(in->fields[f] & RXH_DISCARD) && !(in->fields[f + 1] & RXH_DISCARD);
	if (!more && !mixed)
		return;
	v->reason = more ? RSS_HASHES_MORE : RSS_MIXED;
	snprintf(v->text, sizeof(v->text), "RSS on %s hashes ", ifname);
	list_flows(in, RSS_ADDR_BITS, more, v->text, sizeof(v->text));
	put(v->text, sizeof(v->text), "%s",
	    more ? spread_tail
		 : ": one source's TCP and UDP packets may reach different CPUs; per-CPU placement "
		   "then admits it up to once per CPU");
	fix_text(ifname, in, v->text, sizeof(v->text));
}

static void judge_keys(const char *ifname, uint32_t prefix4, uint32_t prefix6,
		       struct rss_verdict *v)
{
	char p[64] = "";

	if (prefix4 < 32)
		put(p, sizeof(p), "/%u IPv4", prefix4);
	if (prefix6 < 128)
		put(p, sizeof(p), "%s/%u IPv6", p[0] ? " and " : "", prefix6);
	if (!p[0]) {
		v->exact = true;
		v->reason = RSS_EXACT_ADDRESSES;
		snprintf(v->text, sizeof(v->text),
			 "RSS on %s hashes tcp4, udp4, tcp6 and udp6 on addresses only: every packet "
			 "of a source reaches one CPU, so per-CPU placement is exact per source",
			 ifname);
		return;
	}
	v->reason = RSS_WIDE_KEYS;
	snprintf(v->text, sizeof(v->text),
		 "RSS on %s hashes tcp4, udp4, tcp6 and udp6 on addresses only, so each address "
		 "reaches one CPU, but keys are %s prefixes whose addresses RSS spreads over CPUs: "
		 "per-CPU placement admits such a key up to once per CPU; load with --prefix4 32 "
		 "--prefix6 128 or use --placement shared",
		 ifname, p);
}

/* The first flow type the driver reported nothing usable for, or -1. */
static int first_flow(const struct rss_info *in, bool empty)
{
	int f;

	for (f = 0; f < RSS_NFLOWS; f++)
		if (empty ? !in->hash_err[f] && !in->fields[f] : in->hash_err[f] != 0)
			return f;
	return -1;
}

static void judge_not_read(const char *ifname, const struct rss_info *in, int f, bool empty,
			   struct rss_verdict *v)
{
	char why[80];

	if (empty)
		snprintf(why, sizeof(why), "reports an empty RSS hash for %s (no fields)",
			 flow_names[f]);
	else
		snprintf(why, sizeof(why), "does not report its RSS hash for %s (ETHTOOL_GRXFH: %s)",
			 flow_names[f], strerror(-in->hash_err[f]));
	v->reason = empty ? RSS_HASH_EMPTY : RSS_HASH_UNKNOWN;
	snprintf(v->text, sizeof(v->text),
		 "%s %s: %s, so per-CPU placement may admit a source up to once per CPU", ifname, why,
		 empty ? "its queue is chosen some other way (virtio-net without the RSS feature "
			 "reports this; the host then picks the queue)"
		       : "cannot tell whether a source always reaches one CPU");
}

void rss_judge(const char *ifname, const struct rss_info *in, bool skb_mode, uint32_t prefix4,
	       uint32_t prefix6, struct rss_verdict *v)
{
	int f, unread = 0;

	memset(v, 0, sizeof(*v));
	v->rx_queues = in->queues_err ? 0 : in->rx_queues;
	for (f = 0; f < RSS_NFLOWS; f++)
		unread += in->hash_err[f] != 0;
	if (skb_mode) {
		v->reason = RSS_SKB_MODE;
		snprintf(v->text, sizeof(v->text),
			 "skb mode: generic XDP runs on whichever CPU the kernel stack receives a "
			 "packet on (after RPS, which may hash ports), not one fixed by %s's RSS hash, "
			 "so per-CPU placement may admit a source up to once per CPU", ifname);
	} else if (unread == RSS_NFLOWS) {
		judge_no_hash(ifname, in, v);
	} else if (!in->queues_err && in->rx_queues == 1) {
		v->exact = true;
		v->reason = RSS_EXACT_ONE_QUEUE;
		snprintf(v->text, sizeof(v->text),
			 "%s has one RX queue: every packet is received by the CPU that services it, "
			 "so per-CPU placement is exact per source", ifname);
	} else if (unread) {
		judge_not_read(ifname, in, first_flow(in, false), false, v);
	} else if (first_flow(in, true) >= 0) {
		judge_not_read(ifname, in, first_flow(in, true), true, v);
	} else {
		v->reason = RSS_EXACT_ADDRESSES;
		judge_fields(ifname, in, v);
		if (v->reason == RSS_EXACT_ADDRESSES)
			judge_keys(ifname, prefix4, prefix6, v);
	}
}

uint32_t rss_auto_placement(const struct rss_verdict *v)
{
	return v->exact ? PACER_PLACEMENT_PERCPU : PACER_PLACEMENT_SHARED;
}
