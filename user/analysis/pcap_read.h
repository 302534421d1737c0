/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frames of a pcap or pcapng file through libpcap, kept apart from the
 * kernel's BPF headers (libpcap's <pcap/bpf.h> defines the same names).
 */
#ifndef PACER_PCAP_READ_H
#define PACER_PCAP_READ_H

#include <stddef.h>
#include <stdint.h>

struct pcap_read_info {
	char linktype[32];
	int ethernet;        /* link type is Ethernet (DLT_EN10MB) */
	int pcapng;
	uint32_t snaplen;
	int truncated;       /* the file ends inside a frame or its header */
	char truncation[256];
};

/* Called for every whole frame; a non-zero return stops the walk and is returned. */
typedef int (*pcap_frame_fn)(void *ctx, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
			     uint32_t len);

/*
 * Open path, fill *info, and (if `frame` is not NULL and the link type is
 * Ethernet) call frame() on each frame with nanosecond timestamps.
 * 0 (a truncated file included: see info), -EINVAL with err when libpcap
 * cannot read it, or frame()'s return.
 */
int pcap_read_frames(const char *path, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
		     char *err, size_t errlen);

#endif
