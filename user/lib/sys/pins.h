/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where `load` pins a pacer's maps: one directory per network namespace,
 * one per interface inside it,
 *     <root>/netns-<inode of the namespace>/<ifname>/
 * so that two namespaces (containers) with an interface of the same name
 * never share, and never clean up, each other's pins.
 */
#ifndef PACER_PINS_H
#define PACER_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PACER_NETNS_DIR_PREFIX "netns-"

/*
 * A name the kernel would accept for a network interface (dev_valid_name):
 * 1..15 bytes, not "." or "..", no '/', ':' or white space.  Pin paths are
 * built from it, so this also keeps them inside their directory.
 */
bool ifname_valid(const char *name);

/* "<root>/netns-<ino>": 0 or -ENAMETOOLONG. */
int pin_netns_dir(const char *root, uint64_t netns_ino, char *buf, size_t len);

/* "<root>/netns-<ino>/<ifname>": 0, -EINVAL (bad name) or -ENAMETOOLONG. */
int pin_if_dir(const char *root, uint64_t netns_ino, const char *ifname, char *buf, size_t len);

/* The namespace inode a "netns-<ino>" directory name stands for: 0 or -EINVAL. */
int pin_netns_parse(const char *dirname, uint64_t *netns_ino);

/* The maps of a pacer program, in the order the CLI keeps their fds. */
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
	PACER_MAP_CLASSES,
	PACER_MAP_CLASS_STATS,
	PACER_MAP_LIST4,
	PACER_MAP_LIST6,
	PACER_MAP_LIST_FILTER,
	PACER_MAP_CLS_SETS,
	PACER_MAP_CLS_PORTS,
	PACER_MAP_CLS_ADDRS,
	PACER_MAP_CLS_VLAN,
	PACER_MAP_VARIANT,
	PACER_MAP_MAX,
};

/*
 * What a replace, an upgrade or a load over kept pins does with each map
 * (docs/operating.md, Restart, upgrade and purge):
 *   STATE: the sources' state (the sketch or table, the budget's windows and
 *     returning-source filter): kept where the geometry and backend are
 *     the same, else made afresh (said, and only with --reset-state or
 *     across an upgrade that changed the map);
 *   DATA: the operator's data and the running settings (counters, lists and
 *     their added entries, classes, the live configuration, the sampling
 *     ring its readers hold): always kept, migrated where a release changed
 *     the map's definition;
 *   LOAD: made from the options at every load (the fixed layout, the
 *     datapath's timers, which belong to the program that armed them).
 */
enum pacer_map_keep {
	PACER_KEEP_STATE,
	PACER_KEEP_DATA,
	PACER_KEEP_LOAD,
};

/*
 * Each map: its name in the object, its pin file's name (beside "prog"),
 * its value size (0: not a value map), what a reload does with it, and the
 * version of its definition and meaning.  A release that changes a map's
 * key, value or what its bytes mean bumps its version (and teaches
 * pin_migrate.c to carry the older one over, or says the map is made
 * afresh): pinned maps are never read under another meaning.
 */
struct pacer_map_info {
	const char *map_name, *pin_name;
	uint32_t value_size;
	enum pacer_map_keep keep;
	uint32_t version;
	bool optional; /* a program of an earlier release may lack it (then it reads as its default) */
};
extern const struct pacer_map_info pacer_maps[PACER_MAP_MAX];

/* The slot of a map by the name the kernel reports for it, or -1. */
int pacer_map_slot(const char *name);

/*
 * The pins' stamp: a one-element array pinned as "meta" beside the maps,
 * written by every load and replace.  Pins without it were made by 0.1.0,
 * whose maps are every map at version 1.
 */
#define PACER_PIN_META_NAME "meta"
#define PACER_PIN_META_MAGIC 0x6d657461u /* "meta" */
#define PACER_PIN_META_SLOTS 32
struct pacer_pin_meta {
	uint32_t magic;                  /* PACER_PIN_META_MAGIC */
	uint32_t meta_size;              /* sizeof(struct pacer_pin_meta) of the writer */
	char release[24];                /* the writer's release, e.g. "0.2.0" */
	uint32_t map_version[PACER_PIN_META_SLOTS]; /* by enum pacer_map_id; 0: no such map */
	/*
	 * The writer's network namespace (SO_NETNS_COOKIE, never reused while
	 * the machine runs; 0: unknown): pins of a namespace that is gone can
	 * sit under the inode of a new one, which they are not.
	 */
	uint64_t netns_cookie;
};
/* The stamp of pins that have none: 0.1.0's, every map at version 1. */
void pin_meta_unstamped(struct pacer_pin_meta *m);
/* This build's stamp, for the network namespace netns_cookie. */
void pin_meta_current(struct pacer_pin_meta *m, const char *release, uint64_t netns_cookie);

/*
 * Remove a pin directory: its map and program pins, the directory, and its
 * namespace's directory once that is empty.  Other files are left (the
 * directory then stays).  0 or -errno.
 */
int pacer_remove_pin_dir(const char *dir);

#endif
