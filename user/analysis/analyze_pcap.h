/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `xdp-pacer analyze --pcap`: an operator's own capture (pcap or pcapng,
 * read through libpcap) turned into the stream a recording gives, so the
 * same report applies.  Frames are classified and keyed by the datapath's
 * own parser (include/pacer_parse.h) and prefix masks; every source is "sampled"
 * (the capture has all of them); the verdicts are those of an exact
 * limiter: a last-seen table per key with the datapath's tick arithmetic,
 * i.e. what the pacer does without collisions.
 *
 * With traffic classes (pcap_params.classes) every frame goes the
 * datapath's way, through its own code (include/pacer_pkt.h's parser,
 * include/pacer_classify.h's match and keys): the exempt and deny lists
 * (longest source prefix), then the first class whose match fits; a pace
 * class's packets join the stream under the class's key (the masked
 * source, the destination port or address for src+dport and src+dst, the
 * class) and its own limit (interval or GCRA in ticks, as the table runs
 * it); pass and drop classes, unclassified, exempt and denied frames are
 * counted.
 */
#ifndef PACER_ANALYZE_PCAP_H
#define PACER_ANALYZE_PCAP_H

#include <stdint.h>
#include <stdio.h>
#include "analyze_stream.h"

struct conf_prefix;

struct pcap_params {
	uint64_t interval_ns;
	uint32_t prefix4, prefix6, policy;
	/* Traffic classes (n_classes 0: none), their limits in ticks of 2^tick_shift ns. */
	const struct pacer_class *classes;
	uint32_t n_classes, tick_shift;
	const struct conf_prefix *exempt, *deny;
	size_t n_exempt, n_deny;
};

struct pcap_summary {
	char linktype[32];
	uint32_t snaplen;
	int pcapng;
	uint64_t frames;           /* whole frames read */
	uint64_t ipv4, ipv6;       /* keyed: these are the stream's records */
	uint64_t nonip;            /* the datapath passes them, uncounted by the sketch */
	uint64_t malformed;        /* the datapath gives them the --malformed verdict */
	uint64_t snap_cut;         /* frames captured shorter than they were on the wire */
	uint64_t snap_unkeyed;     /* ... whose headers the snap length cut: not keyed, not malformed */
	uint64_t admitted, dropped;        /* the exact limiter's verdicts on the keyed frames */
	/* With classes: frames the lists decided, that no class matched, and per class_slot. */
	uint64_t exempt, denied, unclassified;
	uint64_t class_frames[PACER_MAX_CLASSES + 1], class_admitted[PACER_MAX_CLASSES + 1];
	uint64_t class_dropped[PACER_MAX_CLASSES + 1];
	uint64_t dropped_quantisation;     /* drops whose gap was >= the interval (tick rounding, by design) */
	int truncated;             /* the file ends inside a frame or header */
	char truncation[256];      /* the reader's words for it */
	int corrupt;               /* reading stopped at bytes no capture holds */
	char corruption[256];      /* where, and what */
	uint64_t skipped_linktype;  /* frames of interfaces that are not Ethernet (pcapng) */
	char skipped_linktypes[96]; /* ... their link types */
	uint64_t skipped_no_interface; /* frames naming no interface block */
	uint64_t skipped_corrupt;   /* packet blocks whose lengths do not add up */
	char first_skip[160];       /* ... the first of them */
};

/* Frames of the file that were not analysed (not Ethernet, no interface, corrupt). */
uint64_t pcap_skipped(const struct pcap_summary *m);
/* What is wrong with the capture, one clause per problem ("" when nothing is). */
void pcap_problems(const struct pcap_summary *m, char *buf, size_t len);

/*
 * Read path into s (initialised here from a header describing the assumed
 * pacer: interval, default tick and geometry, shared placement, all sources
 * sampled) and decide each packet's exact verdict.  0, or a negative errno
 * with err saying what is wrong (not a capture, unsupported link type).  A
 * capture cut short or corrupt part way, or with frames that cannot be
 * keyed, is analysed up to what it holds (sum says what was wrong); it is
 * an error (-EINVAL) only when not one frame of it could be keyed.
 */
int pcap_load(const char *path, const struct pcap_params *p, struct an_stream *s,
	      struct pcap_summary *sum, char *err, size_t errlen);

#endif
