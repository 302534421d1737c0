// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <pcap/pcap.h>
#include "pcap_read.h"

static void describe(pcap_t *pc, struct pcap_read_info *info)
{
	const char *lt = pcap_datalink_val_to_name(pcap_datalink(pc));

	snprintf(info->linktype, sizeof(info->linktype), "%s (%d)", lt ? lt : "unknown",
		 pcap_datalink(pc));
	info->ethernet = pcap_datalink(pc) == DLT_EN10MB;
	info->snaplen = (uint32_t)pcap_snapshot(pc);
	/* libpcap reports major version 1 for pcapng sections, 2 for classic pcap. */
	info->pcapng = pcap_major_version(pc) == 1;
}

int pcap_read_frames(const char *path, struct pcap_read_info *info, pcap_frame_fn frame, void *ctx,
		     char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *ph;
	const u_char *data;
	pcap_t *pc;
	int ret = 0, got;

	*info = (struct pcap_read_info){ 0 };
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!pc) {
		snprintf(err, errlen, "not a capture libpcap can read: %s", ebuf);
		return -EINVAL;
	}
	describe(pc, info);
	while (frame && info->ethernet && (got = pcap_next_ex(pc, &ph, &data)) != PCAP_ERROR_BREAK) {
		if (got == PCAP_ERROR) {
			info->truncated = 1;
			snprintf(info->truncation, sizeof(info->truncation), "%s", pcap_geterr(pc));
			break;
		}
		ret = frame(ctx, (uint64_t)ph->ts.tv_sec * 1000000000ULL + (uint64_t)ph->ts.tv_usec, data,
			    ph->caplen, ph->len);
		if (ret)
			break;
	}
	pcap_close(pc);
	return ret;
}
