// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One map's contents into a map of another definition (map_carry.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "map_carry.h"

/* Bytes per value as the syscalls copy it: per-CPU maps a rounded value per possible CPU. */
static size_t value_bytes(const struct bpf_map_info *m, uint32_t *per, int *ncpus)
{
	bool percpu = m->type == BPF_MAP_TYPE_PERCPU_ARRAY || m->type == BPF_MAP_TYPE_PERCPU_HASH ||
		      m->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;

	*ncpus = percpu ? libbpf_num_possible_cpus() : 1;
	*per = percpu ? (m->value_size + 7) / 8 * 8 : m->value_size;
	return (size_t)*per * (size_t)(*ncpus > 0 ? *ncpus : 1);
}

/* One value of from (per CPU) into the layout of to: each CPU's prefix, the rest zero. */
static void convert_value(const uint8_t *src, uint32_t src_per, uint32_t src_size, uint8_t *dst,
			  uint32_t dst_per, uint32_t dst_size, int ncpus)
{
	int c;

	for (c = 0; c < ncpus; c++)
		memcpy(dst + (size_t)c * dst_per, src + (size_t)c * src_per,
		       src_size < dst_size ? src_size : dst_size);
}

int map_carry(int from_fd, int to_fd)
{
	struct bpf_map_info fi = {}, ti = {};
	uint32_t fl = sizeof(fi), tl = sizeof(ti), fper, tper, i;
	uint8_t *fv = NULL, *tv = NULL, key[64], next[64];
	void *prev = NULL;
	int fc, tc, err = 0;

	if (bpf_obj_get_info_by_fd(from_fd, &fi, &fl) || bpf_obj_get_info_by_fd(to_fd, &ti, &tl))
		return -errno;
	if (fi.type != ti.type || fi.key_size != ti.key_size || fi.key_size > sizeof(key))
		return -EOPNOTSUPP;
	fv = calloc(1, value_bytes(&fi, &fper, &fc));
	tv = calloc(1, value_bytes(&ti, &tper, &tc));
	if (!fv || !tv) {
		err = -ENOMEM;
		goto out;
	}
	switch (fi.type) {
	case BPF_MAP_TYPE_ARRAY:
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		for (i = 0; i < fi.max_entries && i < ti.max_entries && !err; i++) {
			if (bpf_map_lookup_elem(from_fd, &i, fv))
				continue;
			memset(tv, 0, (size_t)tper * tc);
			convert_value(fv, fper, fi.value_size, tv, tper, ti.value_size, fc < tc ? fc : tc);
			err = bpf_map_update_elem(to_fd, &i, tv, BPF_ANY) ? -errno : 0;
		}
		break;
	case BPF_MAP_TYPE_LPM_TRIE:
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
		while (!err && !bpf_map_get_next_key(from_fd, prev, next)) {
			memcpy(key, next, fi.key_size);
			prev = key;
			if (bpf_map_lookup_elem(from_fd, key, fv))
				continue;
			memset(tv, 0, (size_t)tper * tc);
			convert_value(fv, fper, fi.value_size, tv, tper, ti.value_size, fc < tc ? fc : tc);
			err = bpf_map_update_elem(to_fd, key, tv, BPF_ANY) ? -errno : 0;
		}
		break;
	default:
		err = -EOPNOTSUPP;
	}
out:
	free(fv);
	free(tv);
	return err;
}

int map_read_first(int fd, void *out, size_t len, uint32_t *value_size)
{
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info), zero = 0;
	void *buf;
	int err;

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return -errno;
	*value_size = info.value_size;
	buf = calloc(1, info.value_size ? info.value_size : 1);
	if (!buf)
		return -ENOMEM;
	err = bpf_map_lookup_elem(fd, &zero, buf) ? -errno : 0;
	if (!err)
		memcpy(out, buf, info.value_size < len ? info.value_size : len);
	free(buf);
	return err;
}
