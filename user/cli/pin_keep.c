// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What a load keeps of the one before it (pin_keep.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli_log.h"
#include "cli_values.h"
#include "pacer_class.h"
#include "pacer_place.h"
#include "pacer_names.h"
#include "layout.h"
#include "pacer_handle.h"
#include "pin_keep.h"
#include "map_carry.h"
#include "pin_ops.h"

_Static_assert(PACER_MAP_MAX <= PACER_PIN_META_SLOTS, "the stamp has a slot per map");

void pin_keep_init(struct pin_keep *k)
{
	int i;

	memset(k, 0, sizeof(*k));
	k->meta_fd = -1;
	for (i = 0; i < PACER_MAP_MAX; i++)
		k->fd[i] = -1;
	pin_meta_unstamped(&k->meta);
}

void pin_keep_close(struct pin_keep *k)
{
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++)
		if (k->fd[i] >= 0)
			close(k->fd[i]);
	if (k->meta_fd >= 0)
		close(k->meta_fd);
	pin_keep_init(k);
}

/* The stamp in dir, if any: unstamped pins keep 0.1.0's. */
static void read_meta(struct pin_keep *k, const char *dir)
{
	char path[320];
	struct pacer_pin_meta m;
	uint32_t size;

	snprintf(path, sizeof(path), "%s/%s", dir, PACER_PIN_META_NAME);
	k->meta_fd = bpf_obj_get(path);
	if (k->meta_fd < 0) {
		k->meta_fd = -1;
		return;
	}
	/* A later release's stamp may be longer: read what fits. */
	memset(&m, 0, sizeof(m));
	if (!map_read_first(k->meta_fd, &m, sizeof(m), &size) && size >= 8 &&
	    m.magic == PACER_PIN_META_MAGIC)
		k->meta = m;
}

static void read_layout(struct pin_keep *k)
{
	uint32_t zero = 0;

	k->layout_ok = k->fd[PACER_MAP_RODATA] >= 0 &&
		       !bpf_map_lookup_elem(k->fd[PACER_MAP_RODATA], &zero, &k->layout) &&
		       layout_readable(&k->layout);
}

/* The lists' entries that `deny|exempt add` made: what an unload would lose of the operator's work. */
static uint64_t count_added(int fd, uint32_t key_size)
{
	uint8_t key[32], next[32];
	struct pacer_list_value v;
	uint64_t n = 0;
	void *prev = NULL;

	if (fd < 0 || key_size > sizeof(key))
		return 0;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, &v) && v.origin == PACER_LIST_ADDED)
			n++;
	}
	return n;
}

static void count_lists(struct pin_keep *k)
{
	int i;

	for (i = PACER_MAP_LIST4; i <= PACER_MAP_LIST6; i++) {
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);

		if (k->fd[i] < 0 || bpf_obj_get_info_by_fd(k->fd[i], &info, &len))
			continue;
		*(i == PACER_MAP_LIST4 ? &k->added4 : &k->added6) = count_added(k->fd[i], info.key_size);
	}
}

int pin_keep_from_prog(struct pin_keep *k, int prog_fd, const char *dir)
{
	char eb[128];
	int err;

	pin_keep_init(k);
	err = pacer_prog_maps(prog_fd, k->fd);
	if (err) {
		pr_err("cannot list the running limiter's maps: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	k->have = true;
	if (dir)
		read_meta(k, dir);
	read_layout(k);
	count_lists(k);
	return 0;
}

int pin_keep_from_dir(struct pin_keep *k, const char *dir)
{
	struct stat st;
	char path[320];
	int i;

	pin_keep_init(k);
	if (stat(dir, &st))
		return 0;
	for (i = 0; i < PACER_MAP_MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pacer_maps[i].pin_name);
		k->fd[i] = bpf_obj_get(path);
		if (k->fd[i] < 0)
			k->fd[i] = -1;
		else
			k->have = true;
	}
	read_meta(k, dir);
	read_layout(k);
	count_lists(k);
	return 0;
}

static void differs(char *buf, size_t len, const char *what, const char *was, const char *now)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s %s (was %s)", used ? ", " : "", what, now, was);
}

void pin_keep_state_differs(const struct pin_keep *k, const struct pacer_layout *lay,
			    char *differ, size_t len)
{
	const struct pacer_layout *o = &k->layout;
	char a[64], b[64];

	differ[0] = 0;
	if (!k->layout_ok) {
		snprintf(differ, len, "the earlier layout (unreadable, or of another release's ABI)");
		return;
	}
	if (o->backend != lay->backend)
		differs(differ, len, "backend", backend_name(o->backend), backend_name(lay->backend));
	if (o->rows != lay->rows) {
		snprintf(a, sizeof(a), "%u", o->rows);
		snprintf(b, sizeof(b), "%u", lay->rows);
		differs(differ, len, "rows", a, b);
	}
	if (o->lines_log2 != lay->lines_log2 || o->lines != lay->lines) {
		snprintf(a, sizeof(a), "%llu lines", (unsigned long long)PACER_LAYOUT_LINES(*o));
		snprintf(b, sizeof(b), "%llu lines", (unsigned long long)PACER_LAYOUT_LINES(*lay));
		differs(differ, len, "width", a, b);
	}
	if (o->kind != lay->kind)
		differs(differ, len, "layout", o->kind ? "blocked" : "rows", lay->kind ? "blocked" : "rows");
	if (o->placement != lay->placement || o->copies != lay->copies)
		differs(differ, len, "placement", placement_name(o->placement),
			placement_name(lay->placement));
	if (o->tick_shift != lay->tick_shift)
		differs(differ, len, "tick", format_duration(1ULL << o->tick_shift, a, sizeof(a)),
			format_duration(1ULL << lay->tick_shift, b, sizeof(b)));
	if (o->on_full != lay->on_full && o->backend != PACER_BACKEND_SKETCH)
		differs(differ, len, "on-full", o->on_full ? "evict-oldest" : "drop",
			lay->on_full ? "evict-oldest" : "drop");
}

/* Whether the earlier map fd has the definition map has in the new object. */
static bool same_definition(int fd, const struct bpf_map *map)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == bpf_map__type(map) &&
	       info.key_size == bpf_map__key_size(map) && info.value_size == bpf_map__value_size(map) &&
	       info.max_entries == bpf_map__max_entries(map) && info.map_flags == bpf_map__map_flags(map);
}

/* A global-data map (.data, .data.budget): carried through the object's initial image. */
static int carry_image(int fd, struct bpf_map *map, char *why, size_t len)
{
	size_t size;
	uint32_t was;
	/* libbpf 1.1 hands the image out const; it is the object's own, written before load. */
	void *image = (void *)bpf_map__initial_value(map, &size);

	if (!image) {
		snprintf(why, len, "its initial image cannot be read");
		return -EINVAL;
	}
	return map_read_first(fd, image, size, &was);
}

int pin_keep_plan(struct pin_keep *k, struct bpf_object *obj, bool keep_state)
{
	char eb[128];
	int i, err;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const struct pacer_map_info *pm = &pacer_maps[i];
		struct bpf_map *map = bpf_object__find_map_by_name(obj, pm->map_name);
		uint32_t was = k->meta.map_version[i];

		k->how[i] = PIN_KEEP_NONE;
		k->why[i][0] = 0;
		if (!map) {
			pr_err("the BPF object has no map %s", pm->map_name);
			return -ENOENT;
		}
		if (k->fd[i] < 0 || pm->keep == PACER_KEEP_LOAD)
			continue;
		k->how[i] = PIN_KEEP_FRESH;
		if (pm->keep == PACER_KEEP_STATE && !keep_state) {
			snprintf(k->why[i], sizeof(k->why[i]), "the geometry is new");
			continue;
		}
		if (was != pm->version && pm->keep == PACER_KEEP_STATE) {
			/* No release has changed a map's meaning yet: nothing to convert from. */
			snprintf(k->why[i], sizeof(k->why[i]), "its meaning changed (version %u, now %u)",
				 was, pm->version);
			continue;
		}
		if (was != pm->version) {
			/* The operator's data is never dropped, nor read under another meaning. */
			pr_err("the pins' %s map was written by release %.24s at version %u of its definition, which this release (version %u) cannot carry over: load it with that release, or remove the pins ('xdp-pacer unload IFNAME', discarding them)",
			       pm->pin_name, k->meta.release, was, pm->version);
			return -EPROTO;
		}
		if (same_definition(k->fd[i], map)) {
			err = bpf_map__reuse_fd(map, k->fd[i]);
			if (err) {
				pr_err("cannot give the map %s to the new program: %s", pm->map_name,
				       err_str(err, eb, sizeof(eb)));
				return err;
			}
			k->how[i] = PIN_KEEP_REUSE;
			continue;
		}
		/* The same meaning, another size (a release appended fields or grew it). */
		if (pm->keep == PACER_KEEP_STATE || bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF) {
			snprintf(k->why[i], sizeof(k->why[i]), "its definition changed in this release");
			continue;
		}
		if (pm->map_name[0] == '.') {
			err = carry_image(k->fd[i], map, k->why[i], sizeof(k->why[i]));
			if (err) {
				pr_err("cannot carry %s over: %s", pm->map_name, err_str(err, eb, sizeof(eb)));
				return err;
			}
		}
		k->how[i] = PIN_KEEP_CARRY;
	}
	return 0;
}

int pin_keep_carry(struct pin_keep *k, struct bpf_object *obj)
{
	char eb[128];
	int i, err;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const struct bpf_map *map;

		if (k->how[i] != PIN_KEEP_CARRY || pacer_maps[i].map_name[0] == '.')
			continue; /* global data went in as the initial image */
		map = bpf_object__find_map_by_name(obj, pacer_maps[i].map_name);
		err = map ? map_carry(k->fd[i], bpf_map__fd(map)) : -ENOENT;
		if (err) {
			pr_err("cannot carry the map %s over to this release's definition: %s",
			       pacer_maps[i].map_name, err_str(err, eb, sizeof(eb)));
			return err;
		}
	}
	return 0;
}

/* fd pinned at dir/name, unless that pin is the same object already: a new pin, then a rename. */
static int pin_over(int fd, const char *dir, const char *name)
{
	char path[320], tmp[330];
	int old;
	bool same = false;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	old = bpf_obj_get(path);
	if (old >= 0) {
		struct bpf_map_info a = {}, b = {};
		uint32_t la = sizeof(a), lb = sizeof(b);

		/* Maps and programs alike carry their id first in the info. */
		same = !bpf_obj_get_info_by_fd(old, &a, &la) && !bpf_obj_get_info_by_fd(fd, &b, &lb) &&
		       a.id == b.id;
		close(old);
	}
	if (same)
		return 0;
	/* bpffs refuses names with a dot. */
	snprintf(tmp, sizeof(tmp), "%s/new-%s", dir, name);
	unlink(tmp);
	if (bpf_obj_pin(fd, tmp))
		return -errno;
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

static int make_meta(const char *release)
{
	struct pacer_pin_meta m;
	uint32_t zero = 0;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pacer_meta", sizeof(zero), sizeof(m), 1, NULL);

	if (fd < 0)
		return -errno;
	pin_meta_current(&m, release, netns_cookie_self());
	if (bpf_map_update_elem(fd, &zero, &m, BPF_ANY)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int pin_keep_pin(struct bpf_object *obj, int prog_fd, const char *dir, const char *release)
{
	char path[320], eb[128], *slash;
	int i, err = 0, meta;

	snprintf(path, sizeof(path), "%s", dir);
	slash = strrchr(path, '/');
	if (slash) {
		*slash = 0;
		if (mkdir(path, 0700) && errno != EEXIST)
			err = -errno;
	}
	if (!err && mkdir(dir, 0700) && errno != EEXIST)
		err = -errno;
	for (i = 0; !err && i < PACER_MAP_MAX; i++) {
		const struct bpf_map *map = bpf_object__find_map_by_name(obj, pacer_maps[i].map_name);

		err = map ? pin_over(bpf_map__fd(map), dir, pacer_maps[i].pin_name) : -ENOENT;
		if (err)
			snprintf(path, sizeof(path), "%s/%s", dir, pacer_maps[i].pin_name);
	}
	if (!err) {
		err = pin_over(prog_fd, dir, "prog");
		if (err)
			snprintf(path, sizeof(path), "%s/prog", dir);
	}
	if (!err) {
		meta = make_meta(release);
		err = meta < 0 ? meta : pin_over(meta, dir, PACER_PIN_META_NAME);
		if (meta >= 0)
			close(meta);
		if (err)
			snprintf(path, sizeof(path), "%s/%s", dir, PACER_PIN_META_NAME);
	}
	if (err)
		pr_err("cannot pin %s: %s", path, err_str(err, eb, sizeof(eb)));
	return err;
}

static void add_word(char *buf, size_t len, const char *w)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? ", " : "", w);
}

/* A map's part in the report: maps that go together are named once. */
static const char *report_name(int i)
{
	switch (i) {
	case PACER_MAP_SK:
		return "the sources' state";
	case PACER_MAP_STATS:
		return "the counters";
	case PACER_MAP_EVENTS:
		return "the sampling ring (its readers go on)";
	case PACER_MAP_DATA:
		return "the live settings";
	case PACER_MAP_BUDGET:
		return "the budget's windows";
	case PACER_MAP_SEEN:
		return "the returning sources";
	case PACER_MAP_CLASSES:
		return "the classes";
	case PACER_MAP_CLASS_STATS:
		return "the classes' counters";
	case PACER_MAP_LIST4:
		return "the lists";
	default:
		return NULL; /* with one of the above */
	}
}

void pin_keep_report(const struct pin_keep *k, const char *source)
{
	char kept[512] = "", carried[256] = "", fresh[512] = "", lists[96], w[224];
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const char *name = report_name(i);

		if (!name && k->how[i] == PIN_KEEP_FRESH)
			name = pacer_maps[i].pin_name; /* say every map dropped */
		if (!name)
			continue;
		if (i == PACER_MAP_LIST4) {
			snprintf(lists, sizeof(lists), "the lists (%llu added entries, their deadlines)",
				 (unsigned long long)(k->added4 + k->added6));
			name = lists;
		}
		switch (k->how[i]) {
		case PIN_KEEP_REUSE:
			add_word(kept, sizeof(kept), name);
			break;
		case PIN_KEEP_CARRY:
			add_word(carried, sizeof(carried), name);
			break;
		case PIN_KEEP_FRESH:
			snprintf(w, sizeof(w), "%.96s (%.96s)", name, k->why[i]);
			add_word(fresh, sizeof(fresh), w);
			break;
		default:
			break;
		}
	}
	pr_info("  kept from %s: %s", source, kept[0] ? kept : "nothing");
	if (carried[0])
		pr_info("  carried over to this release's definitions: %s", carried);
	if (fresh[0])
		pr_info("  made afresh: %s", fresh);
}
