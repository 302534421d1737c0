// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp-pacer status: what is attached where, and how it is configured. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "parse.h"
#include "pacer_sketch.h"
#include "pacer_table.h"

static const char usage_text[] =
	"Usage: xdp-pacer status [IFNAME]\n\n"
	"Show the xdp-pacer program on IFNAME, or on every interface that has one:\n"
	"attach mode, sketch geometry (fixed at load), live configuration, map memory.\n";

static void show(const struct pacer_handle *h)
{
	const struct pacer_layout *l = &h->layout;
	const struct pacer_config *c = h->cfg;
	uint64_t cells = (PACER_LINE_BYTES << l->lines_log2) /
			 (l->kind == PACER_LAYOUT_BLOCKED ? l->rows : 1);
	uint64_t min_ns, max_ns;
	char a[32], b[32], d[32], e[32];

	interval_range(l->tick_shift, &min_ns, &max_ns);
	printf("%s (ifindex %d): program id %u, %s mode, %s%s\n", h->ifname, h->ifindex, h->prog_id,
	       h->mode, h->pinned ? "loaded by xdp-pacer, pins in " PACER_PIN_ROOT "/" : "attached by another loader (no pins)",
	       h->pinned ? h->ifname : "");
	if (l->backend == PACER_BACKEND_TABLE)
		printf("  table (fixed at load): %llu entries, on full: %s, %s, tick %s, clock %s\n",
		       (unsigned long long)PACER_TBL_WAYS << l->lines_log2, on_full_name(l->on_full),
		       placement_name(l->placement), format_duration(1ULL << l->tick_shift, a, sizeof(a)),
		       clock_name(l->clock));
	else
		printf("  sketch (fixed at load): %u rows x %llu cells, %s layout, %s, tick %s, clock %s\n",
		       l->rows, (unsigned long long)cells, layout_name(l->kind),
		       placement_name(l->placement), format_duration(1ULL << l->tick_shift, a, sizeof(a)),
		       clock_name(l->clock));
	printf("  live: interval %s (threshold %u ticks; settable within [%s, %s]), policy %s\n",
	       format_duration(c->interval_ns, b, sizeof(b)), c->thresh_ticks,
	       format_duration(min_ns, d, sizeof(d)), format_duration(max_ns, e, sizeof(e)),
	       policy_name(c->policy));
	printf("  live: prefix4 /%u, prefix6 /%u, malformed %s, hash key %s\n", c->prefix4,
	       c->prefix6, c->malformed ? "drop" : "pass",
	       c->hash_key[0] && c->hash_key[1] ? "set" : "not yet drawn (no packet seen)");
	if (c->sample_src_thresh || c->sample_pkt_thresh)
		printf("  sampling: sources 1/%llu, packets 1/%llu\n",
		       c->sample_src_thresh ? (unsigned long long)((1ULL << 32) / c->sample_src_thresh) : 0ULL,
		       c->sample_pkt_thresh ? (unsigned long long)((1ULL << 32) / c->sample_pkt_thresh) : 0ULL);
	else
		printf("  sampling: off\n");
	printf("  map memory: %s (%d CPUs)\n", format_bytes(pacer_map_bytes(h), a, sizeof(a)),
	       h->ncpus);
}

/* Whether an interface's attached XDP program is named like ours. */
static int has_pacer(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), id;
	int fd, ok;

	if (bpf_xdp_query(ifindex, 0, &q) || q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	id = q.prog_id ? q.prog_id : (q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id);
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return 0;
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	     (!strcmp(info.name, PACER_PROG_NAME) || !strcmp(info.name, "xdp_dispatcher"));
	close(fd);
	return ok;
}

int cmd_status(int argc, char **argv)
{
	struct if_nameindex *ifs, *i;
	struct pacer_handle h;
	int found = 0;

	if (argc > 1) {
		const char *ifname;
		int err = parse_ifname_only(argc, argv, usage_text, &ifname);

		if (err)
			return err < 0 ? 0 : err;
		if (pacer_handle_open(ifname, &h))
			return 1;
		show(&h);
		pacer_handle_close(&h);
		return 0;
	}
	ifs = if_nameindex();
	if (!ifs) {
		pr_err("cannot list interfaces: %s", strerror(errno));
		return 1;
	}
	for (i = ifs; i->if_index; i++) {
		if (!has_pacer((int)i->if_index))
			continue;
		if (pacer_handle_open(i->if_name, &h))
			continue;
		show(&h);
		pacer_handle_close(&h);
		found++;
	}
	if_freenameindex(ifs);
	if (!found)
		printf("xdp-pacer is not attached to any interface\n");
	return 0;
}
