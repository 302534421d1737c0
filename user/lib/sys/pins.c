// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli_values.h"
#include "pacer_abi.h"
#include "pacer_budget.h"
#include "pacer_cls.h"
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

#define STATE PACER_KEEP_STATE
#define DATA PACER_KEEP_DATA
#define LOAD PACER_KEEP_LOAD
const struct pacer_map_info pacer_maps[PACER_MAP_MAX] = {
	[PACER_MAP_SK] = { "pacer_sk", "sketch", sizeof(struct pacer_line), STATE, 1 },
	[PACER_MAP_STATS] = { "pacer_stats", "stats", sizeof(struct pacer_counters), DATA, 1 },
	[PACER_MAP_EVENTS] = { "pacer_events", "events", 0, DATA, 1 },
	[PACER_MAP_DATA] = { ".data", "config", sizeof(struct pacer_config), DATA, 1 },
	[PACER_MAP_RODATA] = { ".rodata", "layout", sizeof(struct pacer_layout), LOAD, 1 },
	[PACER_MAP_CLOCK] = { "pacer_clock", "clock", sizeof(struct pacer_clock_state), LOAD, 1 },
	[PACER_MAP_BUDGET] = { "pacer_budget", "budget", sizeof(struct pacer_budget_state), STATE, 1 },
	[PACER_MAP_BUDGET_CFG] = { ".data.budget", "budget_config", sizeof(struct pacer_budget_cfg), DATA, 1 },
	[PACER_MAP_SEEN] = { "pacer_seen", "budget_seen", sizeof(struct pacer_seen_line), STATE, 1 },
	[PACER_MAP_CLASSES] = { "pacer_classes", "classes", sizeof(struct pacer_class), DATA, 1 },
	[PACER_MAP_CLASS_STATS] = { "pacer_class_stats", "class_stats", sizeof(struct pacer_class_counters), DATA, 1 },
	[PACER_MAP_LIST4] = { "pacer_list4", "list4", sizeof(struct pacer_list_value), DATA, 1 },
	[PACER_MAP_LIST6] = { "pacer_list6", "list6", sizeof(struct pacer_list_value), DATA, 1 },
	[PACER_MAP_LIST_FILTER] = { "pacer_list_filter", "list_filter", sizeof(__u64), DATA, 1 },
	[PACER_MAP_CLS_SETS] = { "pacer_cls_sets", "cls_sets", sizeof(struct pacer_cls_set), DATA, 1 },
	[PACER_MAP_CLS_PORTS] = { "pacer_cls_ports", "cls_ports", sizeof(struct pacer_cls_port_chunk), DATA, 1 },
	[PACER_MAP_CLS_ADDRS] = { "pacer_cls_addrs", "cls_addrs", sizeof(__u32), DATA, 1 },
	[PACER_MAP_CLS_VLAN] = { "pacer_cls_vlan", "cls_vlan", sizeof(__u32), DATA, 1 },
	/* 0.1.0's program has none: it carries every stage (PACER_VARIANT_ALL). */
	[PACER_MAP_VARIANT] = { ".rodata.variant", "variant", sizeof(__u32), LOAD, 1, true },
};
#undef STATE
#undef DATA
#undef LOAD

int pacer_map_slot(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const char *want = pacer_maps[i].map_name;
		size_t w = strlen(want);

		/*
		 * Global-data maps carry a truncated object-name prefix; the
		 * kernel keeps the first BPF_OBJ_NAME_LEN - 1 bytes of a name.
		 */
		if (want[0] == '.' ? (n >= w && !strcmp(name + n - w, want))
				   : (n == (w < BPF_OBJ_NAME_LEN ? w : BPF_OBJ_NAME_LEN - 1) &&
				      !strncmp(name, want, n)))
			return i;
	}
	return -1;
}

void pin_meta_unstamped(struct pacer_pin_meta *m)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->magic = PACER_PIN_META_MAGIC;
	m->meta_size = sizeof(*m);
	snprintf(m->release, sizeof(m->release), "0.1.0");
	for (i = 0; i < PACER_MAP_MAX; i++)
		m->map_version[i] = 1;
}

void pin_meta_current(struct pacer_pin_meta *m, const char *release, uint64_t netns_cookie)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->magic = PACER_PIN_META_MAGIC;
	m->meta_size = sizeof(*m);
	snprintf(m->release, sizeof(m->release), "%s", release);
	for (i = 0; i < PACER_MAP_MAX; i++)
		m->map_version[i] = pacer_maps[i].version;
	m->netns_cookie = netns_cookie;
}

int pacer_remove_pin_dir(const char *dir)
{
	char path[320], *slash;
	int i, err = 0;

	for (i = 0; i <= PACER_MAP_MAX + 1; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir,
			 i < PACER_MAP_MAX ? pacer_maps[i].pin_name
			 : i == PACER_MAP_MAX ? "prog" : PACER_PIN_META_NAME);
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	if (rmdir(dir) && errno != ENOENT)
		err = -errno;
	/* The namespace's directory goes with its last interface. */
	snprintf(path, sizeof(path), "%s", dir);
	slash = strrchr(path, '/');
	if (!err && slash) {
		*slash = 0;
		if (rmdir(path) && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
			err = -errno;
	}
	return err;
}
