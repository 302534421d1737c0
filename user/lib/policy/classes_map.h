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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "classes_check.h"
#include "pins.h"
#include "prefix_sets.h"

struct pacer_class_maps {
	int classes_fd, class_stats_fd, list4_fd, list6_fd;
	int list_filter_fd;       /* mmappable: the lists' filter (pacer_class.h) */
	int cls_sets_fd, cls_ports_fd, cls_addrs_fd, cls_vlan_fd; /* the compiled classifier (pacer_cls.h) */
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

/*
 * Install c[0..n) (checked: classes_check.h): written into the bank not in use,
 * after a grace period (pacer_wait_packets_in_flight: no packet still
 * walks it), with the bank's index, then selected by one 32-bit store of
 * class_sel, so a packet runs the old list or the new one.  n = 0 selects
 * no classes (the classless limit).  The caller holds the writer lock
 * (writer_lock.h).  0, or a negative errno with why in err; on error the
 * running list is unchanged.
 */
int pacer_classes_install(const struct pacer_class_maps *m, const struct pacer_class *c, int n,
			  char *err, size_t len);

/*
 * Wait until every run of an XDP program that began before the call has
 * ended (an RCU grace period, through a map-in-map update): 0 or -errno.
 */
int pacer_wait_packets_in_flight(void);

/* The running list into out[PACER_MAX_CLASSES], its length into *n (0: no classes).  0 or -errno. */
int pacer_classes_read(const struct pacer_class_maps *m, struct pacer_class *out, int *n);

/*
 * The lists.  Every writer below must hold the pacer's writer lock
 * (writer_lock.h): the order of its writes keeps each packet on the old or
 * the new lists (docs/design.md, Live changes), which two writers at once
 * would undo.  Entries carry their origin: the configuration's
 * (pacer_lists_apply) or `add`'s (pacer_lists_add), which a reload keeps;
 * an entry with a timeout expires on its own: the datapath treats it as
 * absent from its deadline on, and writers collect it.
 */

/* CLOCK_MONOTONIC now in ns: the clock of struct pacer_list_value's expires_ns. */
uint64_t pacer_list_clock_ns(void);
/* Whether an entry's deadline has passed at now_ns. */
bool pacer_list_expired(const struct pacer_list_value *v, uint64_t now_ns);

/*
 * Make the configuration's entries exactly exempt[0..ne) and deny[0..nd):
 * host bits are cleared, duplicates within a list merged.  Entries `add`
 * made stay (a prefix the configuration names becomes the
 * configuration's), expired ones go.  The tries are diffed against what
 * they hold: additions and changes first, longest prefix first, then
 * removals, shortest first, so a packet meets the old or the new lists.
 * A prefix on both lists, a bad family or length, or more than
 * PACER_LIST_MAX_ENTRIES of a family is -EINVAL with the prefix in err and
 * nothing changed; a map error part-way is undone as far as the kernel
 * lets.
 */
int pacer_lists_apply(const struct pacer_class_maps *m, const struct pacer_prefix *exempt, int ne,
		      const struct pacer_prefix *deny, int nd, char *err, size_t len);

/* What an incremental change did. */
struct pacer_list_change {
	size_t added;     /* new entries (an expired one's prefix included) */
	size_t refreshed; /* entries `add` had made, their timeout set anew */
	size_t untimed;   /* of those, entries that had a timeout and now have none (add without one) */
	size_t kept_conf; /* already the configuration's, of the same list: left as they are */
	size_t removed;
	size_t missing;   /* del: not on the list (or expired), with missing_ok */
	size_t collected; /* expired entries removed on the way */
};

/*
 * Add p[0..n) to the list of verdict (PACER_LIST_EXEMPT or _DENY) as
 * `add`'s entries, expiring timeout_s seconds from now (0: never).  A
 * prefix `add` had put there gets the new timeout, or none with
 * timeout_s 0 (it becomes permanent, counted in untimed: the last add
 * says what the entry is, as `nft add element` on Linux 6.12 and later);
 * one the configuration put there stays the configuration's.  A prefix
 * on the other list is -EEXIST, naming it, and nothing changes; a full
 * trie collects expired entries and tries again, then is -ENOSPC with
 * this call's entries taken back.  0 or -errno with err.
 */
int pacer_lists_add(const struct pacer_class_maps *m, uint32_t verdict,
		    const struct pacer_prefix *p, size_t n, uint32_t timeout_s,
		    struct pacer_list_change *r, char *err, size_t len);

/*
 * Remove p[0..n), `add`'s entries, from the list of verdict.  A prefix not
 * on it (or expired) is -ENOENT unless missing_ok; one on the other list
 * -EEXIST, one the configuration put there -EPERM: then nothing changes.
 */
int pacer_lists_del(const struct pacer_class_maps *m, uint32_t verdict,
		    const struct pacer_prefix *p, size_t n, bool missing_ok,
		    struct pacer_list_change *r, char *err, size_t len);

/* Remove every entry `add` made on the list of verdict, and expired ones; the configuration's stay. */
int pacer_lists_flush(const struct pacer_class_maps *m, uint32_t verdict,
		      struct pacer_list_change *r, char *err, size_t len);

/* Remove expired entries (their count into *collected), the filter then what is left needs.  0 or -errno. */
int pacer_lists_collect(const struct pacer_class_maps *m, size_t *collected);

/* An entry as `list` shows it. */
struct pacer_list_entry {
	struct pacer_prefix p;
	struct pacer_list_value v;
};

/* Every entry, expired ones too, IPv4 first, shortest prefix first, into a fresh array.  0 or -errno. */
int pacer_lists_dump(const struct pacer_class_maps *m, struct pacer_list_entry **out, size_t *n);

/* Entries by list (0 exempt, 1 deny) and origin (enum pacer_list_origin), live at now_ns. */
struct pacer_list_counts {
	uint64_t n[2][PACER_LIST_ORIGIN_MAX];
	uint64_t timed[2]; /* of them, with a timeout */
	uint64_t expired;  /* not yet collected */
};
void pacer_lists_count(const struct pacer_list_entry *v, size_t n, uint64_t now_ns,
		       struct pacer_list_counts *c);

/* pacer_lists_read's origins: (1u << enum pacer_list_origin) */
#define PACER_LIST_ORIGINS_ALL ((1u << PACER_LIST_ORIGIN_MAX) - 1)

/*
 * The live (unexpired) prefixes of the given origins into out[0..max)
 * with their verdicts in verdict[] (enum pacer_list_verdict), IPv4 first;
 * the count into *n.  -ENOSPC when more than max.
 */
int pacer_lists_read(const struct pacer_class_maps *m, unsigned origins, struct pacer_prefix *out,
		     uint32_t *verdict, int max, int *n);

/* A class stat slot's counters, summed over the CPUs.  0 or -errno. */
int pacer_class_counters_read(const struct pacer_class_maps *m, uint32_t slot,
			      uint64_t out[PACER_CSTAT_MAX]);

/* Zero a stat slot's counters (a slot given to a new class starts at 0).  0 or -errno. */
int pacer_class_counters_reset(const struct pacer_class_maps *m, uint32_t slot);

/* "192.0.2.0/24" or "2001:db8::/32" into buf. */
const char *pacer_prefix_str(const struct pacer_prefix *p, char *buf, size_t len);

#endif
