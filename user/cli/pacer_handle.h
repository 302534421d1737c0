/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A loaded pacer found on an interface: its program, maps, counters and clock. */
#ifndef PACER_HANDLE_H
#define PACER_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>
#include "pacer_abi.h"
#include "pins.h"

#define PACER_PROG_NAME "xdp_pacer"

/* ifname's index: 0, or -EINVAL / -ENODEV after saying why. */
int ifname_to_index(const char *ifname, int *ifindex);
/* Id of the xdp-pacer program attached to ifindex (behind libxdp's dispatcher too), or 0. */
uint32_t attached_pacer_id(int ifindex);
int pacer_prog_maps(int prog_fd, int fd[PACER_MAP_MAX]);
int num_cpus(void);

/* A pacer program found on an interface, with its maps. */
struct pacer_handle {
	char ifname[IF_NAMESIZE];
	int ifindex;
	uint32_t prog_id;
	int prog_fd;
	const char *mode;         /* "native", "skb", "hw" */
	bool pinned;              /* loaded by this CLI (pins present) */
	bool chained;             /* a program in libxdp's dispatcher (xdp_chain.h) */
	uint32_t dispatcher_id;   /* chained: the dispatcher's program id */
	uint32_t run_prio;        /* chained: its priority there (lower runs first) */
	uint32_t chain_actions;   /* chained: verdicts (1 << XDP_x) that go on to the next */
	int map_fd[PACER_MAP_MAX];
	struct pacer_layout layout;
	struct pacer_config *cfg; /* mmap of the live .data map */
	size_t cfg_map_len;
	int ncpus;
};

/*
 * Find the xdp-pacer program attached to ifname, whoever attached it:
 * XDP query -> program -> its map ids -> maps by name.  0, or negative errno
 * after printing why.
 */
int pacer_handle_open(const char *ifname, struct pacer_handle *h);
void pacer_handle_close(struct pacer_handle *h);

/*
 * Whether the pacer h has open still runs on its interface: true as it
 * was, and true when a replace (load --replace) put a program in its place
 * that kept its maps (h then holds the new one, said on stderr); false
 * when it went away or was replaced by one with other maps (said why).
 */
bool pacer_handle_follow(struct pacer_handle *h);

/* Sum of the per-CPU counters. */
int pacer_read_counters(const struct pacer_handle *h, uint64_t out[PACER_STAT_MAX]);

/* Bytes of map memory behind the program: preallocated maps at capacity (the lists' tries, allocated per entry, left out). */
uint64_t pacer_map_bytes(const struct pacer_handle *h);

/* The datapath's clock now, in ns, as the program reads it. */
uint64_t pacer_clock_now(const struct pacer_handle *h);
/* The same for a layout and its clock map (-1: none), without a handle. */
uint64_t pacer_layout_clock_now(const struct pacer_layout *lay, int clock_fd);

/*
 * Call fn on every interface whose XDP program is the pacer (opened, closed
 * after).  A non-zero return from fn stops the walk and is returned;
 * otherwise the number of interfaces, or a negative errno.
 */
int pacer_for_each(int (*fn)(struct pacer_handle *h, void *ctx), void *ctx);

struct pacer_class_maps;
/* The class and list maps of an open handle, for classes_map.h. */
void pacer_class_maps_of(const struct pacer_handle *h, struct pacer_class_maps *m);

struct prom_pacer;
/* What the Prometheus formatter needs from an open handle.  0 or negative errno. */
int pacer_prom_fill(const struct pacer_handle *h, struct prom_pacer *out);

#endif
