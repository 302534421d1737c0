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
	PACER_MAP_MAX,
};

/* Each map: its name in the object, its pin file's name (beside "prog"), its value size (0: not a value map). */
struct pacer_map_info {
	const char *map_name, *pin_name;
	uint32_t value_size;
};
extern const struct pacer_map_info pacer_maps[PACER_MAP_MAX];

/*
 * Remove a pin directory: its map and program pins, the directory, and its
 * namespace's directory once that is empty.  Other files are left (the
 * directory then stays).  0 or -errno.
 */
int pacer_remove_pin_dir(const char *dir);

#endif
