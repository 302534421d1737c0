// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp_watch IFNAME SECONDS: asks the kernel which XDP program IFNAME runs
 * (bpf_xdp_query), as often as it can for SECONDS, and prints how many
 * answers it got, how many said no program, and each program id seen in
 * order: a replace must never leave the interface without one.  Exit 0,
 * or 2 on an error.
 */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long samples = 0, none = 0;
	uint32_t seen[64], nseen = 0, last = UINT32_MAX;
	double end;
	int ifindex;

	if (argc != 3 || !(ifindex = (int)if_nametoindex(argv[1]))) {
		fprintf(stderr, "usage: xdp_watch IFNAME SECONDS\n");
		return 2;
	}
	end = now_s() + atof(argv[2]);
	while (now_s() < end) {
		LIBBPF_OPTS(bpf_xdp_query_opts, q);
		uint32_t id;

		if (bpf_xdp_query(ifindex, 0, &q)) {
			fprintf(stderr, "xdp_watch: bpf_xdp_query: %s\n", strerror(errno));
			return 2;
		}
		id = q.attach_mode == XDP_ATTACHED_NONE ? 0
		     : q.attach_mode == XDP_ATTACHED_SKB ? q.skb_prog_id
		     : q.attach_mode == XDP_ATTACHED_HW ? q.hw_prog_id : q.drv_prog_id;
		samples++;
		none += !id;
		if (id != last && nseen < 64)
			seen[nseen++] = id;
		last = id;
	}
	printf("samples %llu none %llu ids", samples, none);
	for (uint32_t i = 0; i < nseen; i++)
		printf(" %u", seen[i]);
	printf("\n");
	return 0;
}
