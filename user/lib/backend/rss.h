/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whether per-CPU placement is exact per source on an interface: does the
 * NIC's RSS hash send every packet of a key to one receive queue (so one
 * CPU)?  Pure decision logic over what ETHTOOL_GRXFH and the queue count
 * report; the ioctls themselves are in user/cli/rss_probe.c.
 */
#ifndef PACER_RSS_H
#define PACER_RSS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The flow types whose hash decides where a source's packets go. */
enum rss_flow { RSS_TCP4, RSS_UDP4, RSS_TCP6, RSS_UDP6, RSS_NFLOWS };

/* What the driver reported (negative errno where it refused). */
struct rss_info {
	int hash_err[RSS_NFLOWS];    /* 0: fields[] is valid */
	uint64_t fields[RSS_NFLOWS]; /* RXH_* bits the hash covers */
	int queues_err;              /* 0: rx_queues is valid */
	uint32_t rx_queues;
};

enum rss_reason {
	RSS_EXACT_ONE_QUEUE, /* one queue: one CPU services it */
	RSS_EXACT_ADDRESSES, /* every flow type hashes addresses only, keys are addresses */
	RSS_SKB_MODE,        /* generic XDP: the stack's CPU (RPS), not the NIC's hash */
	RSS_NO_HASH,         /* the driver reports no RSS hash at all (veth, ...) */
	RSS_HASH_UNKNOWN,    /* some flow types' hash could not be read */
	RSS_HASH_EMPTY,      /* a flow type's hash has no fields: the queue is chosen otherwise */
	RSS_HASHES_MORE,     /* some flow type hashes ports (or other fields) */
	RSS_MIXED,           /* one family's flow types hash different address fields */
	RSS_WIDE_KEYS,       /* addresses stay on one CPU, but a key spans several */
};

struct rss_verdict {
	bool exact; /* per-CPU placement admits a key on one CPU only */
	enum rss_reason reason;
	uint32_t rx_queues; /* as the driver reported them; 0: unknown */
	char text[768];
};

/* "tcp4", "udp4", "tcp6", "udp6": ethtool's rx-flow-hash names. */
const char *rss_flow_name(enum rss_flow f);

/* The RXH_* bits as ethtool names them: "src,dst,src-port,dst-port". */
void rss_fields_text(uint64_t fields, char *buf, size_t len);

/*
 * Judge per-CPU placement on ifname: skb_mode for generic XDP; prefix4 and
 * prefix6 are the key widths (RSS hashes whole addresses, so a key wider
 * than one address can be spread even when each address is not).
 */
void rss_judge(const char *ifname, const struct rss_info *in, bool skb_mode, uint32_t prefix4,
	       uint32_t prefix6, struct rss_verdict *v);

/* Exactness alone: PACER_PLACEMENT_PERCPU where it is exact, SHARED otherwise (--placement
 * auto also asks place_cost.h whether per-CPU is the cheaper). */
uint32_t rss_auto_placement(const struct rss_verdict *v);

#endif
