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

#endif
