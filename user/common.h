/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every CLI verb shares: logging, option errors, finding a loaded pacer. */
#ifndef PACER_COMMON_H
#define PACER_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "pacer_abi.h"

#define PACER_PIN_ROOT "/sys/fs/bpf/xdp-pacer"
#define PACER_PROG_NAME "xdp_pacer"

extern int verbose;

void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Route libbpf/libxdp logs to stderr, shown with -v. */
void setup_lib_logging(void);

/* Text for a negative errno from libbpf (or anything else). */
const char *err_str(int err, char *buf, size_t len);

/* After a usage error: point at the verb's --help instead of repeating it. */
void usage_hint(const char *verb);

/*
 * After getopt: exactly `want` positional arguments must remain, described
 * by `what` ("an interface name").  0, or 2 after saying what is wrong.
 */
int expect_positionals(int argc, char **argv, int want, const char *what);

/* Errors about options name the option and the value; return 2 (usage). */
int bad_value(const char *opt, const char *val, const char *why);

int ifname_to_index(const char *ifname, int *ifindex);
int pin_dir(const char *ifname, char *buf, size_t len);
int ensure_bpffs(void);
int num_cpus(void);

enum pacer_map_id {
	PACER_MAP_SK,
	PACER_MAP_STATS,
	PACER_MAP_EVENTS,
	PACER_MAP_DATA,
	PACER_MAP_RODATA,
	PACER_MAP_CLOCK,
	PACER_MAP_MAX,
};

extern const char *const pacer_map_names[PACER_MAP_MAX];
/* Pin file names under the per-interface directory. */
extern const char *const pacer_pin_names[PACER_MAP_MAX];

/* A pacer program found on an interface, with its maps. */
struct pacer_handle {
	char ifname[IF_NAMESIZE];
	int ifindex;
	uint32_t prog_id;
	int prog_fd;
	const char *mode;         /* "native", "skb", "hw" */
	bool pinned;              /* loaded by this CLI (pins present) */
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

/* Sum of the per-CPU counters. */
int pacer_read_counters(const struct pacer_handle *h, uint64_t out[PACER_STAT_MAX]);

/* Bytes of map memory behind the program. */
uint64_t pacer_map_bytes(const struct pacer_handle *h);

/* The datapath's clock now, in ns, as the program reads it. */
uint64_t pacer_clock_now(const struct pacer_handle *h);

extern const char *const pacer_stat_names[PACER_STAT_MAX];
const char *policy_name(uint32_t p);
const char *placement_name(uint32_t p);
const char *layout_name(uint32_t k);
const char *clock_name(uint32_t c);
const char *backend_name(uint32_t b);
const char *on_full_name(uint32_t f);
int parse_policy(const char *s, uint32_t *out);
int parse_placement(const char *s, uint32_t *out);
int parse_layout(const char *s, uint32_t *out);
int parse_clock(const char *s, uint32_t *out);
int parse_backend(const char *s, uint32_t *out);
int parse_on_full(const char *s, uint32_t *out);
int parse_malformed(const char *s, uint32_t *out);

/* Remove every pin load made for ifname (load.c). */
int pacer_remove_pins(const char *ifname);

/* Parse a verb's lone IFNAME argument with -h/--help; see common.c. */
int parse_ifname_only(int argc, char **argv, const char *usage_text, const char **ifname);

/* The valid live interval range for a loaded tick. */
void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns);

#endif
