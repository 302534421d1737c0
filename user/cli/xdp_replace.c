// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Swapping the XDP program on an interface for a new one atomically.  On its
 * own: XDP_FLAGS_REPLACE (or a bpf_link's update).  In libxdp's dispatcher,
 * which has no call to replace one program (attach_multi adds, detach_multi
 * removes, each with a new dispatcher): a second dispatcher built as
 * libxdp 1.3's xdp_multiprog__generate() builds one, with the new program in
 * the old one's slot, pinned as xdp_multiprog__pin() pins, and swapped for
 * the old with XDP_FLAGS_REPLACE, as xdp_multiprog__attach() does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "cli_log.h"
#include "xdp_replace.h"

void (*xdp_replace_before_swap)(int ifindex);

/*
 * The dispatcher this file understands: version 2 (libxdp 1.3 to 1.5), its
 * configuration laid out as libxdp 1.3.1's headers/xdp/prog_dispatcher.h
 * has it.  Kept here rather than taken from the installed header, so that a
 * libxdp with another version (1.6 has 3) is refused at run time, by name,
 * instead of being read with the wrong layout.
 */
#define DISPATCHER_VERSION 2
#define DISPATCHER_MAGIC 236 /* 'X' + 'D' + 'P' */
#define DISPATCHER_SLOTS 10  /* MAX_DISPATCHER_ACTIONS */
#define DISPATCHER_PROG "xdp_dispatcher"
#define DISPATCHER_FILE "xdp-dispatcher.o"

struct dispatcher_config {
	uint8_t magic;
	uint8_t dispatcher_version;
	uint8_t num_progs_enabled;
	uint8_t is_xdp_frags;
	uint32_t chain_call_actions[DISPATCHER_SLOTS];
	uint32_t run_prios[DISPATCHER_SLOTS];
	uint32_t program_flags[DISPATCHER_SLOTS];
};
_Static_assert(sizeof(struct dispatcher_config) == 124, "libxdp's version 2 configuration");

/*
 * Where libxdp looks for its BPF objects when LIBXDP_OBJECT_PATH is not
 * set: its BPF_OBJECT_PATH, $(LIBDIR)/bpf as it was built (the Makefile
 * asks pkg-config for libxdp's libdir).
 */
#ifndef LIBXDP_OBJECT_DIR
#define LIBXDP_OBJECT_DIR "/usr/lib/x86_64-linux-gnu/bpf"
#endif

/* What is attached to the interface, as bpf_xdp_query says. */
struct xdp_attached {
	uint32_t id;    /* native or skb mode; 0: none */
	int mode;       /* XDP_MODE_NATIVE or XDP_MODE_SKB */
	uint32_t hw_id; /* offloaded */
};

/* libxdp's dispatcher on the interface, read back: what each slot runs. */
struct dispatcher {
	uint32_t id;
	int fd;
	struct dispatcher_config cfg;
	char pin_dir[PATH_MAX + 64];
	int nprogs;
	int prog_fd[DISPATCHER_SLOTS]; /* from libxdp's progN-prog pins */
	uint32_t prog_id[DISPATCHER_SLOTS];
	char prog_name[DISPATCHER_SLOTS][BPF_OBJ_NAME_LEN];
};

/* The dispatcher built to take its place. */
struct new_dispatcher {
	struct bpf_object *obj;
	int fd;
	uint32_t id;
	int link_fd[DISPATCHER_SLOTS];
	char pin_dir[PATH_MAX + 64];
	bool dir_made;
};

static const char *ifname_of(int ifindex, char *buf, size_t len)
{
	char name[IF_NAMESIZE];

	if (if_indextoname((unsigned int)ifindex, name))
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "ifindex %d", ifindex);
	return buf;
}

static int query_attached(int ifindex, struct xdp_attached *a)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	memset(a, 0, sizeof(*a));
	if (err)
		return err;
	/* Native and skb mode never hold programs at once; hw may beside either. */
	a->id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	a->mode = q.drv_prog_id ? XDP_MODE_NATIVE : XDP_MODE_SKB;
	a->hw_id = q.hw_prog_id;
	return 0;
}

/* fd's program info, and its first map's id (when map_id is given). */
static int prog_info_of(int fd, struct bpf_prog_info *info, uint32_t *map_id)
{
	uint32_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (map_id) {
		*map_id = 0;
		info->nr_map_ids = 1;
		info->map_ids = (uint64_t)(unsigned long)map_id;
	}
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

static int loaded_id(int fd, uint32_t *id)
{
	struct bpf_prog_info info;
	int err = prog_info_of(fd, &info, NULL);

	*id = err ? 0 : info.id;
	return err;
}

/* A load's error: EACCES is the verifier's refusal. */
static const char *load_error(int err, char *buf, size_t len)
{
	if (err == -EACCES)
		return "the verifier refused it";
	return err_str(err, buf, len);
}

static const char *mode_word(int mode)
{
	return mode == XDP_MODE_SKB ? "skb" : "native";
}

/*
 * Whether the program behind fd is libxdp's dispatcher, and its
 * configuration: 0, 1 (not a dispatcher: libxdp's own test, the name and one
 * map), or -errno having said why (a dispatcher this file does not
 * understand).
 */
static int read_dispatcher_config(const char *ifname, int fd, struct dispatcher_config *cfg)
{
	struct bpf_map_info minfo = { 0 };
	uint32_t map_id, key = 0, mlen = sizeof(minfo);
	struct bpf_prog_info info;
	char eb[128];
	uint8_t buf[256];
	int err, map_fd;

	err = prog_info_of(fd, &info, &map_id);
	if (err)
		return err;
	if (strcmp(info.name, DISPATCHER_PROG) || info.nr_map_ids != 1)
		return 1;
	map_fd = bpf_map_get_fd_by_id(map_id);
	if (map_fd < 0) {
		err = -errno;
		pr_err("cannot open the configuration of libxdp's dispatcher (id %u) on %s: %s", info.id,
		       ifname, err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = bpf_obj_get_info_by_fd(map_fd, &minfo, &mlen) ? -errno : 0;
	if (!err && (minfo.key_size != sizeof(key) || minfo.max_entries != 1 ||
		     minfo.value_size < 2 || minfo.value_size > sizeof(buf)))
		err = -EINVAL;
	if (!err && bpf_map_lookup_elem(map_fd, &key, buf))
		err = -errno;
	close(map_fd);
	if (err) {
		pr_err("cannot read the configuration of libxdp's dispatcher (id %u) on %s: %s", info.id,
		       ifname, err == -EINVAL ? "its map is not a dispatcher's" : err_str(err, eb, sizeof(eb)));
		return err;
	}
	/* Version 1 (libxdp before 1.3) has no magic byte: its version is in its BTF. */
	if (buf[0] != DISPATCHER_MAGIC || buf[1] != DISPATCHER_VERSION ||
	    minfo.value_size != sizeof(*cfg)) {
		char version[48];

		if (buf[0] != DISPATCHER_MAGIC)
			snprintf(version, sizeof(version), "1 (libxdp before 1.3)");
		else
			snprintf(version, sizeof(version), "%u (%u configuration bytes)", buf[1],
				 minfo.value_size);
		pr_err("cannot replace a program in libxdp's dispatcher (id %u) on %s: it is version %s, and only version %d (libxdp 1.3 to 1.5, %zu bytes) is understood here; unload its programs and load them again",
		       info.id, ifname, version, DISPATCHER_VERSION, sizeof(*cfg));
		return -EOPNOTSUPP;
	}
	memcpy(cfg, buf, sizeof(*cfg));
	if (!cfg->num_progs_enabled || cfg->num_progs_enabled > DISPATCHER_SLOTS) {
		pr_err("libxdp's dispatcher (id %u) on %s says it runs %u programs, outside 1..%d",
		       info.id, ifname, cfg->num_progs_enabled, DISPATCHER_SLOTS);
		return -EINVAL;
	}
	return 0;
}

/* libxdp's directory in bpffs: LIBXDP_BPFFS (else /sys/fs/bpf), /xdp; -ENOENT without bpffs. */
static int libxdp_pin_root(char *buf, size_t len)
{
	const char *mnt = secure_getenv(XDP_BPFFS_ENVVAR);
	struct statfs st;

	if (!mnt)
		mnt = "/sys/fs/bpf";
	if (statfs(mnt, &st) || st.f_type != BPF_FS_MAGIC)
		return -ENOENT;
	snprintf(buf, len, "%s/xdp", mnt);
	return 0;
}

/*
 * libxdp's lock, taken as xdp_lock_acquire() takes it (not exported by
 * libxdp 1.3): an exclusive flock on its bpffs directory, or on /run/xdp
 * without bpffs.  Every libxdp attach and detach reads and pins under it.
 */
static int libxdp_lock(void)
{
	char dir[PATH_MAX];
	int fd, err;

	if (libxdp_pin_root(dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "/run/xdp");
	if (mkdir(dir, S_IRWXU) && errno != EEXIST)
		return -errno;
	fd = open(dir, O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static void libxdp_unlock(int fd)
{
	flock(fd, LOCK_UN);
	close(fd);
}

/* The function slot i runs: with one program, libxdp replaces the dispatcher's own. */
static const char *slot_func(const struct dispatcher_config *cfg, int i, char *buf, size_t len)
{
	if (cfg->num_progs_enabled == 1)
		return DISPATCHER_PROG;
	snprintf(buf, len, "prog%d", i);
	return buf;
}

static void close_dispatcher(struct dispatcher *d)
{
	int i;

	if (d->fd >= 0)
		close(d->fd);
	for (i = 0; i < d->nprogs; i++)
		if (d->prog_fd[i] >= 0)
			close(d->prog_fd[i]);
	d->fd = -1;
	d->nprogs = 0;
}

/*
 * The programs in the dispatcher's slots, from libxdp's pins (as
 * xdp_multiprog__link_pinned_progs() reads them), each checked against
 * the kernel: its progN-link links that program to this dispatcher.
 */
static int read_dispatcher_slots(int ifindex, const char *ifname, struct dispatcher *d)
{
	char root[PATH_MAX], path[PATH_MAX + 128], eb[128];
	struct bpf_link_info linfo;
	struct bpf_prog_info info;
	int i, err, lfd;
	uint32_t len;

	if (libxdp_pin_root(root, sizeof(root))) {
		pr_err("cannot read libxdp's dispatcher (id %u) on %s: no bpffs for its pins", d->id, ifname);
		return -ENOENT;
	}
	snprintf(d->pin_dir, sizeof(d->pin_dir), "%s/dispatch-%d-%u", root, ifindex, d->id);
	for (i = 0; i < d->cfg.num_progs_enabled; i++) {
		snprintf(path, sizeof(path), "%s/prog%d-prog", d->pin_dir, i);
		d->prog_fd[i] = bpf_obj_get(path);
		if (d->prog_fd[i] < 0) {
			err = -errno;
			pr_err("cannot read libxdp's pin %s of its dispatcher on %s: %s", path, ifname,
			       err_str(err, eb, sizeof(eb)));
			return err;
		}
		d->nprogs = i + 1;
		err = prog_info_of(d->prog_fd[i], &info, NULL);
		if (err)
			return err;
		d->prog_id[i] = info.id;
		snprintf(d->prog_name[i], sizeof(d->prog_name[i]), "%s", info.name);
		snprintf(path, sizeof(path), "%s/prog%d-link", d->pin_dir, i);
		lfd = bpf_obj_get(path);
		if (lfd < 0) {
			err = -errno;
			pr_err("cannot read libxdp's pin %s of its dispatcher on %s: %s", path, ifname,
			       err_str(err, eb, sizeof(eb)));
			return err;
		}
		memset(&linfo, 0, sizeof(linfo));
		len = sizeof(linfo);
		err = bpf_obj_get_info_by_fd(lfd, &linfo, &len) ? -errno : 0;
		close(lfd);
		if (err)
			return err;
		/* target_obj_id: 0 on kernels before 5.13, which do not say. */
		if (linfo.prog_id != info.id ||
		    (linfo.tracing.target_obj_id && linfo.tracing.target_obj_id != d->id)) {
			pr_err("libxdp's pins of its dispatcher (id %u) on %s disagree with the kernel: prog%d-prog is program id %u, prog%d-link links id %u to program id %u",
			       d->id, ifname, i, info.id, i, linfo.prog_id, linfo.tracing.target_obj_id);
			return -EINVAL;
		}
	}
	return 0;
}

/* "the dispatcher (id 7) runs ids 5 'a', 6 'b'": what is there, for a refusal. */
static void describe_slots(const struct dispatcher *d, char *buf, size_t len)
{
	size_t used;
	int i;

	used = (size_t)snprintf(buf, len, "libxdp's dispatcher (id %u) runs", d->id);
	for (i = 0; i < d->nprogs && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s id %u '%s'", i ? "," : "",
					 d->prog_id[i], d->prog_name[i]);
}

/* Where libxdp would find xdp-dispatcher.o (find_bpf_file()): LIBXDP_OBJECT_PATH alone if set. */
static int find_dispatcher_object(char *path, size_t len)
{
	const char *dir = secure_getenv(XDP_OBJECT_ENVVAR);
	struct stat st;

	snprintf(path, len, "%s/%s", dir ? dir : LIBXDP_OBJECT_DIR, DISPATCHER_FILE);
	return stat(path, &st) ? -ENOENT : 0;
}

/* The version in an xdp-dispatcher.o's BTF: __uint(dispatcher_version, N) SEC("xdp_metadata"). */
static int object_dispatcher_version(struct bpf_object *obj, uint32_t *version)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t;
	int id;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, "dispatcher_version", BTF_KIND_VAR);
	if (id <= 0)
		return -ENOENT;
	t = btf__type_by_id(btf, btf__type_by_id(btf, (uint32_t)id)->type);
	if (!t || !btf_is_ptr(t))
		return -ENOENT;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_array(t))
		return -ENOENT;
	*version = btf_array(t)->nelems;
	return 0;
}

/* The BTF id of func in the loaded program prog_fd (find_prog_btf_id()). */
static int btf_func_id(int prog_fd, const char *func)
{
	struct bpf_prog_info info;
	struct btf *btf;
	int err, id;

	err = prog_info_of(prog_fd, &info, NULL);
	if (err)
		return err;
	if (!info.btf_id)
		return -ENOENT;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return -errno;
	id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	btf__free(btf);
	return id > 0 ? id : -ENOENT;
}

static void unpin_slots(const char *dir, int nprogs)
{
	char path[PATH_MAX + 128];
	int i;

	for (i = 0; i < nprogs; i++) {
		snprintf(path, sizeof(path), "%s/prog%d-link", dir, i);
		unlink(path);
		snprintf(path, sizeof(path), "%s/prog%d-prog", dir, i);
		unlink(path);
	}
}

static void close_new_dispatcher(struct new_dispatcher *nd, int nprogs, bool unpin)
{
	int i;

	if (unpin && nd->dir_made) {
		unpin_slots(nd->pin_dir, nprogs);
		rmdir(nd->pin_dir);
	}
	for (i = 0; i < DISPATCHER_SLOTS; i++)
		if (nd->link_fd[i] >= 0)
			close(nd->link_fd[i]);
	bpf_object__close(nd->obj); /* the dispatcher goes with it unless attached */
	nd->obj = NULL;
}

/* libxdp's xdp-dispatcher.o, loaded with cfg (xdp_multiprog__generate()). */
static int load_dispatcher(const char *ifname, const struct dispatcher_config *cfg,
			   struct new_dispatcher *nd)
{
	struct bpf_program *main_prog, *p;
	struct bpf_prog_info info;
	char path[PATH_MAX], eb[128];
	struct bpf_map *rodata;
	uint32_t version = 0;
	int err;

	err = find_dispatcher_object(path, sizeof(path));
	if (err) {
		pr_err("cannot build libxdp's dispatcher for %s: %s not found (%s)", ifname, path,
		       secure_getenv(XDP_OBJECT_ENVVAR) ? "LIBXDP_OBJECT_PATH names its directory"
							: "libxdp's directory; LIBXDP_OBJECT_PATH names another");
		return err;
	}
	nd->obj = bpf_object__open_file(path, NULL);
	if (!nd->obj) {
		err = -errno;
		pr_err("cannot open %s: %s", path, err_str(err, eb, sizeof(eb)));
		return err;
	}
	main_prog = bpf_object__find_program_by_name(nd->obj, DISPATCHER_PROG);
	rodata = bpf_object__next_map(nd->obj, NULL); /* its one map, as libxdp takes it */
	if (object_dispatcher_version(nd->obj, &version) || version != DISPATCHER_VERSION || !main_prog ||
	    !rodata || bpf_map__value_size(rodata) != sizeof(*cfg)) {
		pr_err("cannot build libxdp's dispatcher for %s: %s is not a version %d dispatcher (%s %u)",
		       ifname, path, DISPATCHER_VERSION, version ? "version" : "no version, no program or map",
		       version);
		return -EOPNOTSUPP;
	}
	bpf_object__for_each_program(p, nd->obj)
		bpf_program__set_autoload(p, p == main_prog);
	bpf_program__set_type(main_prog, BPF_PROG_TYPE_XDP);
	if (cfg->is_xdp_frags)
		bpf_program__set_flags(main_prog, bpf_program__flags(main_prog) | BPF_F_XDP_HAS_FRAGS);
	err = bpf_map__set_initial_value(rodata, cfg, sizeof(*cfg));
	if (!err)
		err = bpf_object__load(nd->obj);
	if (err) {
		pr_err("cannot load libxdp's dispatcher %s for %s: %s", path, ifname,
		       err_str(err, eb, sizeof(eb)));
		return err;
	}
	nd->fd = bpf_program__fd(main_prog);
	err = prog_info_of(nd->fd, &info, NULL);
	nd->id = info.id;
	return err;
}

/*
 * The XDP link on ifindex, what owns a program netlink cannot replace: one
 * running prog_id first (a link's ifindex does not say which namespace),
 * else any; or -ENOENT.
 */
static int find_xdp_link(int ifindex, uint32_t prog_id)
{
	struct bpf_link_info info;
	uint32_t id = 0, len;
	int fd, other = -ENOENT;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_XDP &&
		    (int)info.xdp.ifindex == ifindex) {
			if (info.prog_id == prog_id) {
				if (other >= 0)
					close(other);
				return fd;
			}
			if (other < 0) {
				other = fd;
				continue;
			}
		}
		close(fd);
	}
	return other;
}

/*
 * The one atomic step: what runs on ifindex goes from old (old_fd, old_id)
 * to new_fd, or nothing changes.  Netlink's XDP_FLAGS_REPLACE compares
 * with what is attached in the kernel; a program owned by a bpf_link
 * (-EBUSY there) is swapped by the link's update, BPF_F_REPLACE the same
 * comparison.
 */
static int swap_attached(int ifindex, const char *ifname, int mode, int old_fd, uint32_t old_id,
			 int new_fd, const char *what)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, xo, .old_prog_fd = old_fd);
	LIBBPF_OPTS(bpf_link_update_opts, lo, .flags = BPF_F_REPLACE, .old_prog_fd = old_fd);
	uint32_t flags = XDP_FLAGS_REPLACE |
			 (mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	struct bpf_prog_info info;
	struct xdp_attached now;
	char eb[128];
	int err, link_fd;

	err = bpf_xdp_attach(ifindex, new_fd, flags, &xo);
	if (err != -EBUSY)
		goto out;
	link_fd = find_xdp_link(ifindex, old_id);
	if (link_fd < 0)
		goto out;
	err = bpf_link_update(link_fd, new_fd, &lo) ? -errno : 0;
	/*
	 * A link's ifindex does not say which namespace: were this another
	 * namespace's link to the same program, the interface here would not
	 * have changed.  Put that one back and refuse.
	 */
	if (!err && (query_attached(ifindex, &now) || prog_info_of(new_fd, &info, NULL) ||
		     now.id != info.id)) {
		LIBBPF_OPTS(bpf_link_update_opts, back, .flags = BPF_F_REPLACE, .old_prog_fd = new_fd);

		bpf_link_update(link_fd, old_fd, &back);
		close(link_fd);
		pr_err("cannot replace %s on %s: the bpf_link that runs program id %u is not this interface's",
		       what, ifname, old_id);
		return -ENOENT;
	}
	close(link_fd);
out:
	if (err == -EEXIST || err == -EPERM) {
		/* EEXIST from netlink, EPERM from a link: no longer old_id there. */
		pr_err("cannot replace %s on %s: what is attached there changed while its replacement was built; nothing was replaced, try again",
		       what, ifname);
		return -EAGAIN;
	}
	if (err)
		pr_err("cannot replace %s on %s in %s mode: %s", what, ifname, mode_word(mode),
		       err_str(err, eb, sizeof(eb)));
	return err;
}

/* a->id (open as old_fd) attached on its own: load prog as XDP and swap it in. */
/* The caller's step between the load and the swap (xdp_replace_program's after_load). */
struct after_load {
	int (*fn)(struct bpf_object *obj, void *arg);
	void *arg;
};

static int run_after_load(const struct after_load *al, struct bpf_object *obj, const char *ifname)
{
	int err = al->fn ? al->fn(obj, al->arg) : 0;

	if (err)
		pr_err("the new program for %s was loaded but not put in place: the step before the swap failed",
		       ifname);
	return err;
}

static int replace_single(int ifindex, const char *ifname, const struct xdp_attached *a, int old_fd,
			  struct bpf_object *obj, struct bpf_program *prog, const struct after_load *al,
			  int *new_fd, uint32_t *new_id)
{
	char what[64], eb[128];
	int err;

	bpf_program__set_type(prog, BPF_PROG_TYPE_XDP);
	err = bpf_object__load(obj);
	if (err) {
		pr_err("cannot load the new program '%s' for %s: %s%s", bpf_program__name(prog), ifname,
		       load_error(err, eb, sizeof(eb)), verbose ? "" : " (-v shows the loader's log)");
		return err;
	}
	*new_fd = bpf_program__fd(prog);
	err = loaded_id(*new_fd, new_id);
	if (!err)
		err = run_after_load(al, obj, ifname);
	if (err)
		return err;
	if (xdp_replace_before_swap)
		xdp_replace_before_swap(ifindex);
	snprintf(what, sizeof(what), "program id %u", a->id);
	return swap_attached(ifindex, ifname, a->mode, old_fd, a->id, *new_fd, what);
}

/*
 * old_id in the dispatcher d, slot: a new dispatcher with the same
 * configuration but for the slot's program flags, the neighbours' programs
 * linked to it again (the kernel lets an extension program link to several
 * targets), prog loaded as an extension of the slot's function and linked,
 * all pinned; then the swap, and the old dispatcher's pins go.
 */
static int replace_in_dispatcher(int ifindex, const char *ifname, const struct xdp_attached *a,
				 struct dispatcher *d, int slot, struct bpf_object *obj,
				 struct bpf_program *prog, const struct after_load *al, int *new_fd,
				 uint32_t *new_id)
{
	struct new_dispatcher nd = { .fd = -1 };
	struct dispatcher_config cfg = d->cfg;
	char fn[16], path[PATH_MAX + 128], root[PATH_MAX], what[96], eb[128];
	bool frags = bpf_program__flags(prog) & BPF_F_XDP_HAS_FRAGS;
	int i, err, btf_id, prog_fd;

	for (i = 0; i < DISPATCHER_SLOTS; i++)
		nd.link_fd[i] = -1;
	/*
	 * As libxdp sets them: the slot's flag from the program; frags for the
	 * dispatcher only while every program has them (kept off when it was
	 * off: libxdp's probe of the kernel is not repeated here).
	 */
	cfg.program_flags[slot] = frags ? BPF_F_XDP_HAS_FRAGS : 0;
	if (!frags)
		cfg.is_xdp_frags = 0;
	err = load_dispatcher(ifname, &cfg, &nd);
	if (err)
		goto fail;

	/* The new program: an extension of the slot's function, as libxdp loads one (no frags flag). */
	bpf_program__set_type(prog, BPF_PROG_TYPE_EXT);
	bpf_program__set_expected_attach_type(prog, 0);
	bpf_program__set_flags(prog, bpf_program__flags(prog) & ~BPF_F_XDP_HAS_FRAGS);
	err = bpf_program__set_attach_target(prog, nd.fd, slot_func(&cfg, slot, fn, sizeof(fn)));
	if (!err)
		err = bpf_object__load(obj);
	if (err) {
		pr_err("cannot load the new program '%s' into libxdp's dispatcher on %s: %s%s",
		       bpf_program__name(prog), ifname, load_error(err, eb, sizeof(eb)),
		       verbose ? "" : " (-v shows the loader's log)");
		goto fail;
	}
	*new_fd = bpf_program__fd(prog);
	err = loaded_id(*new_fd, new_id);
	if (!err)
		err = run_after_load(al, obj, ifname);
	if (err)
		goto fail;

	for (i = 0; i < cfg.num_progs_enabled; i++) {
		LIBBPF_OPTS(bpf_link_create_opts, lo);

		btf_id = btf_func_id(nd.fd, slot_func(&cfg, i, fn, sizeof(fn)));
		if (btf_id < 0) {
			err = btf_id;
			pr_err("cannot find %s in the BTF of libxdp's new dispatcher for %s", fn, ifname);
			goto fail;
		}
		lo.target_btf_id = (uint32_t)btf_id;
		prog_fd = i == slot ? *new_fd : d->prog_fd[i];
		nd.link_fd[i] = bpf_link_create(prog_fd, nd.fd, 0, &lo);
		if (nd.link_fd[i] < 0) {
			err = -errno;
			pr_err("cannot link %s (id %u) to libxdp's new dispatcher on %s: %s",
			       i == slot ? bpf_program__name(prog) : d->prog_name[i],
			       i == slot ? 0 : d->prog_id[i], ifname, err_str(err, eb, sizeof(eb)));
			goto fail;
		}
	}

	/* Pinned as xdp_multiprog__pin() pins, so that libxdp reads it back. */
	err = libxdp_pin_root(root, sizeof(root));
	if (err)
		snprintf(root, sizeof(root), "(no bpffs)");
	snprintf(nd.pin_dir, sizeof(nd.pin_dir), "%s/dispatch-%d-%u", root, ifindex, nd.id);
	if (!err && mkdir(nd.pin_dir, S_IRWXU))
		err = -errno;
	if (err) {
		pr_err("cannot make libxdp's pin directory %s: %s", nd.pin_dir, err_str(err, eb, sizeof(eb)));
		goto fail;
	}
	nd.dir_made = true;
	for (i = 0; i < cfg.num_progs_enabled; i++) {
		snprintf(path, sizeof(path), "%s/prog%d-link", nd.pin_dir, i);
		err = bpf_obj_pin(nd.link_fd[i], path);
		if (!err) {
			snprintf(path, sizeof(path), "%s/prog%d-prog", nd.pin_dir, i);
			err = bpf_obj_pin(i == slot ? *new_fd : d->prog_fd[i], path);
		}
		if (err) {
			pr_err("cannot pin %s: %s", path, err_str(err, eb, sizeof(eb)));
			goto fail;
		}
	}

	if (xdp_replace_before_swap)
		xdp_replace_before_swap(ifindex);
	snprintf(what, sizeof(what), "program id %u in libxdp's dispatcher (id %u)", d->prog_id[slot],
		 d->id);
	err = swap_attached(ifindex, ifname, a->mode, d->fd, d->id, nd.fd, what);
	if (err)
		goto fail;

	/* Swapped: the old dispatcher's pins go, as libxdp removes them after its own swap. */
	unpin_slots(d->pin_dir, d->nprogs);
	if (rmdir(d->pin_dir))
		pr_err("warning: cannot remove the old dispatcher's pins in %s: %s (the new one runs)",
		       d->pin_dir, strerror(errno));
	close_new_dispatcher(&nd, cfg.num_progs_enabled, false);
	return 0;
fail:
	close_new_dispatcher(&nd, cfg.num_progs_enabled, true);
	return err;
}

int xdp_replace_program(int ifindex, uint32_t old_prog_id, struct bpf_object *obj,
			struct bpf_program *prog, int (*after_load)(struct bpf_object *obj, void *arg),
			void *arg, int *new_fd, uint32_t *new_id)
{
	struct after_load al = { after_load, arg };
	struct dispatcher d = { .fd = -1 };
	char ifname[IF_NAMESIZE + 16], there[512], eb[128];
	struct bpf_prog_info info;
	struct xdp_attached a;
	int lock_fd, err, slot = -1, i;

	*new_fd = -1;
	*new_id = 0;
	ifname_of(ifindex, ifname, sizeof(ifname));
	if (!old_prog_id || !prog) {
		pr_err("cannot replace a program on %s: no program id or no new program given", ifname);
		return -EINVAL;
	}
	/*
	 * libxdp's lock from the first read to the last pin: no libxdp attach
	 * or detach on any interface reads or pins meanwhile.  One that read
	 * before it pins after us, and its swap then fails and retries.
	 */
	lock_fd = libxdp_lock();
	if (lock_fd < 0) {
		pr_err("cannot take libxdp's lock: %s", err_str(lock_fd, eb, sizeof(eb)));
		return lock_fd;
	}
	err = query_attached(ifindex, &a);
	if (err) {
		pr_err("cannot read the XDP state of %s: %s", ifname, err_str(err, eb, sizeof(eb)));
		goto out;
	}
	if (a.hw_id == old_prog_id) {
		pr_err("cannot replace program id %u on %s: it is offloaded (hw mode), which is not replaced in place",
		       old_prog_id, ifname);
		err = -EOPNOTSUPP;
		goto out;
	}
	if (!a.id) {
		pr_err("cannot replace program id %u on %s: no XDP program is attached there", old_prog_id,
		       ifname);
		err = -ENOENT;
		goto out;
	}
	d.fd = bpf_prog_get_fd_by_id(a.id);
	if (d.fd < 0) {
		err = -errno;
		pr_err("cannot open program id %u on %s: %s", a.id, ifname, err_str(err, eb, sizeof(eb)));
		goto out;
	}
	d.id = a.id;
	err = read_dispatcher_config(ifname, d.fd, &d.cfg);
	if (err < 0)
		goto out;
	if (err == 1) { /* attached on its own */
		if (a.id != old_prog_id) {
			err = prog_info_of(d.fd, &info, NULL);
			pr_err("cannot replace program id %u on %s: it is not attached there (program id %u '%s' is, on its own, in %s mode)",
			       old_prog_id, ifname, a.id, err ? "?" : info.name, mode_word(a.mode));
			err = -ENOENT;
			goto out;
		}
		err = replace_single(ifindex, ifname, &a, d.fd, obj, prog, &al, new_fd, new_id);
		goto out;
	}
	if (a.id == old_prog_id) {
		pr_err("cannot replace program id %u on %s: it is libxdp's dispatcher; name the program in it to replace",
		       old_prog_id, ifname);
		err = -EINVAL;
		goto out;
	}
	err = read_dispatcher_slots(ifindex, ifname, &d);
	if (err)
		goto out;
	for (i = 0; i < d.nprogs; i++)
		if (d.prog_id[i] == old_prog_id)
			slot = i;
	if (slot < 0) {
		describe_slots(&d, there, sizeof(there));
		pr_err("cannot replace program id %u on %s: it is not attached there (%s, in %s mode)",
		       old_prog_id, ifname, there, mode_word(a.mode));
		err = -ENOENT;
		goto out;
	}
	err = replace_in_dispatcher(ifindex, ifname, &a, &d, slot, obj, prog, &al, new_fd, new_id);
out:
	close_dispatcher(&d);
	libxdp_unlock(lock_fd);
	if (err) {
		*new_fd = -1;
		*new_id = 0;
	}
	return err;
}
