/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What every CLI verb shares: option errors and --config; the headers of logging, pins and the handle. */
#ifndef PACER_COMMON_H
#define PACER_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>
#include "pacer_abi.h"
#include "layout.h"
#include "cli_log.h"
#include "pacer_handle.h"
#include "pacer_names.h"
#include "pin_ops.h"

/* After a usage error: point at the verb's --help instead of repeating it. */
void usage_hint(const char *verb);

struct opt_verb;
/*
 * Parse argv (argv[0] is the verb) into opts by v's option table (opts.h),
 * printing what is wrong.  0; OPTS_HELP after printing the usage; 2.
 */
int parse_verb_opts(const struct opt_verb *v, int argc, char **argv, void *opts);

/* A usage error: say what is wrong, point at the verb's --help, return 2. */
int usage_error(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Errors about options name the option and the value; return 2 (usage). */
int bad_value(const char *opt, const char *val, const char *why);

struct live_opts;
/* Warn when the interval (or T/N) is finer than the datapath clock's steps. */
void warn_coarse_clock(const struct live_opts *l, uint32_t clock);

struct pacer_conf;
/*
 * When argv holds --config FILE: read FILE (user/lib/opts/pacer_conf.h) and
 * rewrite argv as "--key value" pairs from the file followed by the other
 * arguments (so the command line overrides the file).  live_only: only the
 * keys `set` can change, each one the file omits at its default.  Values
 * from the file keep pointing into *conf, so bad_value() names their line.
 * 0 (also without --config), 2 for a bad file, 1 when it cannot be read.
 * live_only CONF_KEYS_CAPTURE: only the limit's keys (interval, rate,
 * policy, prefix4, prefix6) the file gives, for analyze --pcap.
 */
#define CONF_KEYS_CAPTURE 2
int conf_expand_argv(int *argc, char ***argv, int live_only, struct pacer_conf *conf);
/*
 * Two options that cannot go together (b may be NULL when a alone is
 * wrong): say why, naming the --config file's line for each one the file
 * set (and the command line did not override).  Returns 2.
 */
int conf_conflict(const char *verb, const char *a, const char *b, const char *why);
/* Whether --name was given on the command line itself (not only by its --config file). */
bool cli_gives(const char *name);
/* argv0 and the file's "--key value" pairs (as above), with room for `extra` more; NULL on ENOMEM. */
char **conf_argv(const struct pacer_conf *conf, char *argv0, int live_only, int extra, int *n);

/*
 * (load.c) Check load options as `load` would (same messages), and list in
 * `differ` the fixed-at-load settings they give that the running layout
 * (and returning-source filter of 2^running_seen_log2 cells; -1: unknown;
 * and dispatcher priority running_prio; -1: not in a dispatcher)
 * does not have; cls: the file's classes, whose limits choose the tick (NULL: none).  0, or 2 after printing what is wrong.
 */
struct class_conf;
int load_check_fixed(int argc, char **argv, const struct class_conf *cls,
		     const struct pacer_layout *running, int running_seen_log2,
		     int64_t running_prio, char *differ, size_t len);

/* (load.c) The datapath's object as the CLI embeds it (its skeleton's bytes). */
const void *pacer_object_bytes(size_t *size);

struct bpf_program;
/*
 * Before the datapath's program loads (load, a replace, a variant swap):
 * the verifier's log into log[0..len) at level (VERIFIER_LOG_STATS, | 1 for
 * its whole trace), and the tests' way to have the verifier refuse it
 * (XDP_PACER_FAULT=verifier: a sleepable XDP program, which no kernel
 * takes): what a load, a replace or a swap then leaves must be what was
 * there (docs/hacking.md, Fault injection).
 */
void prog_load_prepare(struct bpf_program *prog, char *log, size_t len, uint32_t level);
/* Why the verifier refused a program, in one line, from its log: 0, or -1 when it said nothing. */
int prog_refusal_cause(const char *log, char *out, size_t len);


#endif
