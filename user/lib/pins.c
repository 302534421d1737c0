// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "parse.h"
#include "pins.h"

#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */

bool ifname_valid(const char *name)
{
	size_t n = strlen(name), i;

	if (!n || n > IFNAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (i = 0; i < n; i++)
		if (name[i] == '/' || name[i] == ':' || isspace((unsigned char)name[i]))
			return false;
	return true;
}

int pin_netns_dir(const char *root, uint64_t netns_ino, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/" PACER_NETNS_DIR_PREFIX "%llu", root,
			 (unsigned long long)netns_ino);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin_if_dir(const char *root, uint64_t netns_ino, const char *ifname, char *buf, size_t len)
{
	int n;

	if (!ifname_valid(ifname))
		return -EINVAL;
	n = snprintf(buf, len, "%s/" PACER_NETNS_DIR_PREFIX "%llu/%s", root,
		     (unsigned long long)netns_ino, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int pin_netns_parse(const char *dirname, uint64_t *netns_ino)
{
	size_t plen = strlen(PACER_NETNS_DIR_PREFIX);

	if (strncmp(dirname, PACER_NETNS_DIR_PREFIX, plen) ||
	    parse_u64_range(dirname + plen, 1, UINT64_MAX, netns_ino))
		return -EINVAL;
	return 0;
}
