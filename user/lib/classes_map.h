/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Traffic classes and the exempt/deny lists on a loaded pacer, at the
 * level of its maps (include/pacer_class.h): install and read the class
 * list, apply the lists, read the per-class counters.  The one file of
 * this library that calls into the kernel: through the map fds and the
 * mapped live configuration it is given (pacer_class_maps_of() in
 * user/cli/pacer_handle.h fills them from a handle; the BPF_PROG_TEST_RUN
 * tests from a skeleton).  No option parsing: the CLI's.
 */
#ifndef PACER_CLASSES_MAP_H
#define PACER_CLASSES_MAP_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pins.h"

struct pacer_class_maps {
	int classes_fd, class_stats_fd, list4_fd, list6_fd;
	int list_filter_fd;       /* mmappable: the lists' filter (pacer_class.h) */
	int class_index_fd;       /* the walk's index of each bank (pacer_class.h) */
	struct pacer_config *cfg; /* the live .data, mapped */
	uint32_t backend;         /* the loaded layout's: the limits its cells hold */
	int ncpus;                /* possible CPUs: the per-CPU counters' rows */
};

/*
 * The class and list maps' fds from a pacer's maps, indexed by enum
 * pacer_map_id (pins.h) as pacer_handle and load keep them; cfg, backend
 * and ncpus are left to the caller.
 */
void pacer_class_maps_set_fds(struct pacer_class_maps *m, const int fd[PACER_MAP_MAX]);

/* A source prefix of the exempt or deny list: addr in network byte order (4 or 16 bytes used). */
struct pacer_prefix {
	uint32_t family; /* 4 or 6 */
	uint32_t len;    /* 0..32 or 0..128 */
	uint8_t addr[16];
};

/*
 * Whether c[0..n) is a list the datapath can run: n <= PACER_MAX_CLASSES,
 * every match sound (pacer_match_problem), known action, key mode and
 * policy, prefixes in range, a pace class's limit within what the loaded
 * backend's cells hold, names valid and distinct, stat slots below
 * PACER_MAX_CLASSES and distinct.  0, or -EINVAL with the first problem,
 * naming the class, in err.
 */
int pacer_classes_check(const struct pacer_class *c, int n, uint32_t backend, char *err,
			size_t len);

/*
 * Install c[0..n) (checked as above): written into the bank not in use,
 * with the bank's index, then selected by one 32-bit store of class_sel, so a packet runs the old
 * list or the new one.  n = 0 selects no classes (the classless limit).
 * 0, or a negative errno with why in err; on error the running list is
 * unchanged.
 */
int pacer_classes_install(const struct pacer_class_maps *m, const struct pacer_class *c, int n,
			  char *err, size_t len);

/* The running list into out[PACER_MAX_CLASSES], its length into *n (0: no classes).  0 or -errno. */
int pacer_classes_read(const struct pacer_class_maps *m, struct pacer_class *out, int *n);

/*
 * Make the lists exactly exempt[0..ne) and deny[0..nd): host bits are
 * cleared, duplicates within a list merged.  The tries are diffed against
 * what they hold: additions and changes first, then list_sel, then
 * removals, so a source on both the old and the new list never falls off
 * it.  A prefix on both lists, a bad family or length, or more than
 * PACER_LIST_MAX_ENTRIES of a family is -EINVAL with the prefix in err and
 * nothing changed; a map error part-way is undone as far as the kernel
 * lets.
 */
int pacer_lists_apply(const struct pacer_class_maps *m, const struct pacer_prefix *exempt, int ne,
		      const struct pacer_prefix *deny, int nd, char *err, size_t len);

/*
 * The lists' prefixes into out[0..max) with their verdicts in verdict[]
 * (enum pacer_list_verdict), IPv4 first; the count into *n.  -ENOSPC when
 * more than max.
 */
int pacer_lists_read(const struct pacer_class_maps *m, struct pacer_prefix *out, uint32_t *verdict,
		     int max, int *n);

/* A class stat slot's counters, summed over the CPUs.  0 or -errno. */
int pacer_class_counters_read(const struct pacer_class_maps *m, uint32_t slot,
			      uint64_t out[PACER_CSTAT_MAX]);

/* Zero a stat slot's counters (a slot given to a new class starts at 0).  0 or -errno. */
int pacer_class_counters_reset(const struct pacer_class_maps *m, uint32_t slot);

/* "192.0.2.0/24" or "2001:db8::/32" into buf. */
const char *pacer_prefix_str(const struct pacer_prefix *p, char *buf, size_t len);

#endif
