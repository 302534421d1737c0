/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frames of a pcap or pcapng file.  Classic pcap is read through libpcap;
 * pcapng by this file's own reader, because libpcap refuses a whole file
 * whose interfaces have different link types (dumpcap -i eth0 -i any) and
 * stops at the first bad block, where the blocks' lengths let a reader
 * skip one packet it cannot use and go on.  Kept apart from the kernel's
 * BPF headers (libpcap's <pcap/bpf.h> defines the same names).
 */
#ifndef PACER_PCAP_READ_H
#define PACER_PCAP_READ_H

#include <stddef.h>
#include <stdint.h>

struct pcap_read_info {
	char linktype[32];   /* pcapng: the first Ethernet interface's, else the first's */
	int ethernet;        /* some interface is Ethernet (DLT_EN10MB): its frames can be keyed */
	int pcapng;
	uint32_t snaplen;
	int truncated;       /* the file ends inside a frame or a header */
	char truncation[256];
	int corrupt;         /* reading stopped at bytes no capture holds */
	char corruption[256];
	/* Frames passed over, the reading going on (pcapng): */
	uint64_t skipped_linktype;    /* on an interface whose link type is not Ethernet */
	char skipped_linktypes[96];   /* ... those link types, e.g. "LINUX_SLL (113)" */
	uint64_t skipped_no_interface; /* naming an interface no block described */
	uint64_t skipped_corrupt;     /* a packet block whose lengths do not add up */
	char first_skip[160];         /* what the first corrupt packet block was */
};

/* Called for every whole frame; a non-zero return stops the walk and is returned. */
typedef int (*pcap_frame_fn)(void *ctx, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
			     uint32_t len);

/*
 * Open path (a regular file only: a FIFO or a device is refused before any
 * read), fill *info, and (if `frame` is not NULL) call frame() on each
 * Ethernet frame with nanosecond timestamps.  0 (a file cut short or
 * corrupt part way included: see info), -EINVAL with err when it is not a
 * capture, another negative errno with err when it cannot be read, or
 * frame()'s return.
 */
int pcap_read_frames(const char *path, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
		     char *err, size_t errlen);

#endif
