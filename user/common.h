/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every CLI verb shares: logging, option errors, finding a loaded pacer. */
#ifndef PACER_COMMON_H
#define PACER_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "pacer_abi.h"
#include "pins.h"

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

/* The same for a verb whose one positional argument is an interface name, checked. */
int expect_ifname(int argc, char **argv, const char **ifname);

/* Errors about options name the option and the value; return 2 (usage). */
int bad_value(const char *opt, const char *val, const char *why);
/* Parse a positive duration of at most max_ns for opt: 0, or 2 after saying why not. */
int parse_duration_opt(const char *opt, const char *val, uint64_t max_ns, uint64_t *out);

/* --prefix4 (max 32) / --prefix6 (max 128): 0, or 2 after bad_value(). */
int parse_prefix_arg(const char *opt, const char *val, uint32_t max, uint32_t *out);

struct pacer_conf;
/*
 * When argv holds --config FILE: read FILE (user/lib/pacer_conf.h) and
 * rewrite argv as "--key value" pairs from the file followed by the other
 * arguments (so the command line overrides the file).  live_only: only the
 * keys `set` can change, each one the file omits at its default.  Values
 * from the file keep pointing into *conf, so bad_value() names their line.
 * 0 (also without --config), 2 for a bad file, 1 when it cannot be read.
 */
int conf_expand_argv(int *argc, char ***argv, int live_only, struct pacer_conf *conf);
/* argv0 and the file's "--key value" pairs (as above), with room for `extra` more; NULL on ENOMEM. */
char **conf_argv(const struct pacer_conf *conf, char *argv0, int live_only, int extra, int *n);

/*
 * (load.c) Check load options as `load` would (same messages), and list in
 * `differ` the fixed-at-load settings they give that the running layout
 * does not have.  0, or 2 after printing what is wrong.
 */
int load_check_fixed(int argc, char **argv, const struct pacer_layout *running, char *differ,
		     size_t len);

int ifname_to_index(const char *ifname, int *ifindex);
/* 0, or 2 after saying why ifname cannot name an interface (usage error). */
int check_ifname_arg(const char *ifname);

/* Pins (see pins.h for the layout). */
int netns_self(uint64_t *ino);                      /* this process's network namespace */
int pin_dir(const char *ifname, char *buf, size_t len); /* ifname's pins in this namespace */
/* Serialise everything that makes or removes pins: an flock on the pin root. fd or -errno. */
int pins_lock(void);
void pins_unlock(int fd);
/* Remove a pin directory (and its namespace's directory once empty). 0 or -errno. */
int pacer_remove_pin_dir(const char *dir);
/* Id of the program pinned in dir, 0 if none. */
uint32_t pinned_prog_id(const char *dir);
/* Whether a process or a mount (ip netns, containers) still holds network namespace ino. */
bool netns_alive(uint64_t ino);
/* Id of the xdp-pacer program attached to ifindex (behind libxdp's dispatcher too), or 0. */
uint32_t attached_pacer_id(int ifindex);
int ensure_bpffs(void);
int num_cpus(void);

enum pacer_map_id {
	PACER_MAP_SK,
	PACER_MAP_STATS,
	PACER_MAP_EVENTS,
	PACER_MAP_DATA,
	PACER_MAP_RODATA,
	PACER_MAP_CLOCK,
	PACER_MAP_BUDGET,
	PACER_MAP_BUDGET_CFG,
	PACER_MAP_SEEN,
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

/*
 * Call fn on every interface whose XDP program is the pacer (opened, closed
 * after).  A non-zero return from fn stops the walk and is returned;
 * otherwise the number of interfaces, or a negative errno.
 */
int pacer_for_each(int (*fn)(struct pacer_handle *h, void *ctx), void *ctx);

struct prom_pacer;
/* What the Prometheus formatter needs from an open handle.  0 or negative errno. */
int pacer_prom_fill(const struct pacer_handle *h, struct prom_pacer *out);

/* Parse a verb's lone IFNAME argument with -h/--help; see common.c. */
int parse_ifname_only(int argc, char **argv, const char *usage_text, const char **ifname);

/* The valid live interval range for a loaded tick. */
void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns);

#endif
