/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes on the command line of load and set: the file's sections
 * and the command line's --class/--exempt/--deny made one list
 * (class_conf.h), their limits put in ticks of the loaded (or chosen)
 * tick, and the lists installed on a running pacer through
 * user/lib/policy/classes_map.h (ids kept for unchanged classes, stat slots by
 * name).  Errors are printed here, naming the file and line.
 */
#ifndef PACER_CLASSES_CLI_H
#define PACER_CLASSES_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include "class_conf.h"

struct pacer_conf;
struct pacer_class_maps;

/*
 * The classes and lists that apply: the file's (conf, may be NULL or have
 * no sections) with the command line's kinds over them (cli).  Returns the
 * merged set (conf's, or cli itself without a file) in *out; 0 or 2.
 */
int classes_merge(struct pacer_conf *conf, struct class_conf *cli, struct class_conf **out);

/* Whether the set paces any class (its limits then need the tick). */
bool classes_pace(const struct class_conf *cc);

/*
 * load: the tick every pacing class's limit and the global one (n, T)
 * fit; tick_ns the --tick asked for (0: none).  0 or 2 (said why).
 */
int classes_choose_tick(const struct class_conf *cc, uint32_t n, uint64_t interval_ns,
			uint64_t tick_ns, uint32_t backend, uint32_t *tick_shift);

/*
 * The datapath's classes for the set at a tick: limits in ticks (say why
 * for one that does not fit, with hint after it), prefixes defaulted from
 * the global ones.  0 or 2.
 */
int classes_build(struct class_conf *cc, uint32_t tick_shift, uint32_t backend, uint32_t prefix4,
		  uint32_t prefix6, const char *hint, struct pacer_class out[PACER_MAX_CLASSES]);

/*
 * Install on a running pacer: the classes when cc->classes_given (ids kept
 * for classes that behave as running ones, stat slots by name), the lists
 * each when given.  0, or 1 after saying why (the running list then
 * unchanged, as classes_map.h promises).
 */
int classes_install(const struct pacer_class_maps *m, const struct class_conf *cc,
		    struct pacer_class want[PACER_MAX_CLASSES]);

/* classes_install, and what it changed: CLASSES_CHANGED_* bits into *changed. */
#define CLASSES_CHANGED_CLASSES (1u << 0) /* the class list differs from the running one */
#define CLASSES_CHANGED_EXEMPT (1u << 1)  /* the configuration's exempt prefixes differ */
#define CLASSES_CHANGED_DENY (1u << 2)    /* ... its deny prefixes */
int classes_install_changes(const struct pacer_class_maps *m, const struct class_conf *cc,
			    struct pacer_class want[PACER_MAX_CLASSES], unsigned *changed);

struct prom_class;
/* The running classes and their counters summed over CPUs (prom.h's form): 0 or -errno. */
int classes_fill(const struct pacer_class_maps *m, struct prom_class *out, int *n);

/* load's and set's lines on what runs now: each class, the lists' sizes, the range set may use. */
void classes_report(const struct pacer_class_maps *m, uint32_t tick_shift, uint32_t backend);

/* One line on the lists' sizes by origin (nothing while both are empty), after indent. */
void lists_report(const struct pacer_class_maps *m, const char *indent);

#endif
