/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The names of the pacer's settings and counters, one table each, for the
 * CLI's options and output, the recording file's text forms and the
 * Prometheus labels.
 */
#ifndef PACER_NAMES_H
#define PACER_NAMES_H

#include <stdint.h>
#include "pacer_abi.h"

/* Counter names (stats, --json keys, prometheus labels), indexed by enum pacer_stat. */
extern const char *const pacer_stat_names[PACER_STAT_MAX];

/*
 * The enforced counter whose verdict an observed one (PACER_STAT_OBSERVED_*)
 * would have been, or -1 for a counter that is not an observed verdict.
 */
int pacer_stat_observes(unsigned stat);

/* Per-class counter names (stats, --json keys), indexed by enum pacer_class_stat. */
extern const char *const pacer_class_stat_names[PACER_CSTAT_MAX];

/* The name of a setting's value ("pace", "percpu", ...), "?" when out of range. */
const char *policy_name(uint32_t p);
const char *placement_name(uint32_t p);
const char *layout_name(uint32_t k);
const char *clock_name(uint32_t c);
const char *malformed_name(uint32_t m);
const char *backend_name(uint32_t b);
const char *on_full_name(uint32_t f);
/* The global mode (enforce, observe); a class's or the deny list's own (global, enforce, observe). */
const char *mode_name(uint32_t m);
const char *own_mode_name(uint32_t m);

/* The value a name stands for: 0, or -EINVAL for a name not in the table. */
int parse_policy(const char *s, uint32_t *out);
int parse_placement(const char *s, uint32_t *out);
int parse_layout(const char *s, uint32_t *out);
int parse_clock(const char *s, uint32_t *out);
int parse_malformed(const char *s, uint32_t *out);
int parse_backend(const char *s, uint32_t *out);
int parse_on_full(const char *s, uint32_t *out);
/* enforce|observe (the global mode); parse_own_mode also takes global (follow it). */
int parse_mode(const char *s, uint32_t *out);
int parse_own_mode(const char *s, uint32_t *out);

#endif
