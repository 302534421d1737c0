// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#define _GNU_SOURCE /* asprintf */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "common.h"
#include "parse.h"
#include "prom.h"
#include "pacer_conf.h"
#include "pacer_budget.h"

int verbose;

const char *const pacer_map_names[PACER_MAP_MAX] = {
	[PACER_MAP_SK] = "pacer_sk",
	[PACER_MAP_STATS] = "pacer_stats",
	[PACER_MAP_EVENTS] = "pacer_events",
	[PACER_MAP_DATA] = ".data",
	[PACER_MAP_RODATA] = ".rodata",
	[PACER_MAP_CLOCK] = "pacer_clock",
	[PACER_MAP_BUDGET] = "pacer_budget",
	[PACER_MAP_BUDGET_CFG] = ".data.budget",
	[PACER_MAP_SEEN] = "pacer_seen",
};

static const uint32_t pacer_map_value_size[PACER_MAP_MAX] = {
	[PACER_MAP_SK] = sizeof(struct pacer_line),
	[PACER_MAP_STATS] = sizeof(struct pacer_counters),
	[PACER_MAP_EVENTS] = 0, /* ring buffer: no values */
	[PACER_MAP_DATA] = sizeof(struct pacer_config),
	[PACER_MAP_RODATA] = sizeof(struct pacer_layout),
	[PACER_MAP_CLOCK] = sizeof(struct pacer_clock_state),
	[PACER_MAP_BUDGET] = sizeof(struct pacer_budget_state),
	[PACER_MAP_BUDGET_CFG] = sizeof(struct pacer_budget_cfg),
	[PACER_MAP_SEEN] = sizeof(struct pacer_seen_line),
};

const char *const pacer_pin_names[PACER_MAP_MAX] = {
	[PACER_MAP_SK] = "sketch",
	[PACER_MAP_STATS] = "stats",
	[PACER_MAP_EVENTS] = "events",
	[PACER_MAP_DATA] = "config",
	[PACER_MAP_RODATA] = "layout",
	[PACER_MAP_CLOCK] = "clock",
	[PACER_MAP_BUDGET] = "budget",
	[PACER_MAP_BUDGET_CFG] = "budget_config",
	[PACER_MAP_SEEN] = "budget_seen",
};

const char *const pacer_stat_names[PACER_STAT_MAX] = {
	[PACER_STAT_SEEN] = "seen",
	[PACER_STAT_PASSED] = "passed",
	[PACER_STAT_DROPPED_RECENT] = "dropped_recent",
	[PACER_STAT_NONIP_PASSED] = "nonip_passed",
	[PACER_STAT_MALFORMED_PASSED] = "malformed_passed",
	[PACER_STAT_MALFORMED_DROPPED] = "malformed_dropped",
	[PACER_STAT_IPV4] = "ipv4",
	[PACER_STAT_IPV6] = "ipv6",
	[PACER_STAT_LINE_REFRESH] = "line_rebased",
	[PACER_STAT_RECORDED] = "recorded",
	[PACER_STAT_RECORD_LOST] = "record_lost",
	[PACER_STAT_KEY_INIT] = "key_init",
	[PACER_STAT_MAP_ERROR] = "map_error",
	[PACER_STAT_DROPPED_BUDGET] = "dropped_budget",
	[PACER_STAT_BUDGET_NO_BUCKET] = "budget_no_bucket",
	[PACER_STAT_BUDGET_RETURNING] = "budget_returning",
	[PACER_STAT_TABLE_FULL] = "table_full",
	[PACER_STAT_TABLE_EVICT] = "table_evict",
	[PACER_STAT_TABLE_RACE] = "table_race",
};

static void vpr(const char *pfx, const char *fmt, va_list ap)
{
	fputs(pfx, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vpr("xdp-pacer: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stdout, fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vpr("xdp-pacer: debug: ", fmt, ap);
	va_end(ap);
}

static int lib_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBBPF_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (!verbose || (level == LIBXDP_DEBUG && verbose < 2))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void setup_lib_logging(void)
{
	libbpf_set_print(lib_print);
	libxdp_set_print(xdp_print);
}

const char *err_str(int err, char *buf, size_t len)
{
	if (err < 0)
		err = -err;
	if (libbpf_strerror(err, buf, len) < 0)
		snprintf(buf, len, "%s", strerror(err));
	return buf;
}

void usage_hint(const char *verb)
{
	fprintf(stderr, "Try 'xdp-pacer %s --help'.\n", verb);
}

int expect_positionals(int argc, char **argv, int want, const char *what)
{
	int have = argc - optind;

	if (have == want)
		return 0;
	if (have < want)
		pr_err("%s needs %s", argv[0], what);
	else
		pr_err("unexpected argument '%s'", argv[optind + want]);
	usage_hint(argv[0]);
	return 2;
}

int expect_ifname(int argc, char **argv, const char **ifname)
{
	if (expect_positionals(argc, argv, 1, "an interface name"))
		return 2;
	*ifname = argv[optind];
	return check_ifname_arg(*ifname);
}

/* Options expanded from a --config file: errors about their values name the file and line. */
static const struct pacer_conf *opt_conf;

int bad_value(const char *opt, const char *val, const char *why)
{
	unsigned line = pacer_conf_line_of(opt_conf, val);

	if (line)
		pr_err("%s:%u: invalid value '%s' for %s: %s", opt_conf->path, line, val, opt + 2,
		       why);
	else
		pr_err("invalid value '%s' for %s: %s", val, opt, why);
	return 2;
}

int parse_prefix_arg(const char *opt, const char *val, uint32_t max, uint32_t *out)
{
	char why[48];
	uint64_t v;

	if (!parse_u64_range(val, 0, max, &v)) {
		*out = (uint32_t)v;
		return 0;
	}
	snprintf(why, sizeof(why), "expected an integer from 0 to %u", max);
	return bad_value(opt, val, why);
}

/* Where --config FILE (or --config=FILE) is in argv: its index, and *file. */
static int find_config_arg(int argc, char **argv, const char **file)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strncmp(argv[i], "--config=", 9)) {
			*file = argv[i] + 9;
			return i;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			*file = argv[i + 1];
			return i;
		}
	}
	return 0;
}

char **conf_argv(const struct pacer_conf *conf, char *argv0, int live_only, int extra, int *n)
{
	const struct pacer_conf_key *k;
	const struct pacer_conf_entry *e;
	char **nv = calloc(2 * PACER_CONF_MAX_ENTRIES + (size_t)extra + 2, sizeof(*nv));

	if (!nv)
		return NULL;
	*n = 0;
	nv[(*n)++] = argv0;
	for (k = pacer_conf_keys; k->name; k++) {
		if (live_only && !k->live)
			continue;
		e = pacer_conf_get(conf, k->name);
		if (!e && !live_only)
			continue;
		if (asprintf(&nv[*n], "--%s", k->name) < 0)
			return NULL; /* exiting anyway */
		(*n)++;
		nv[(*n)++] = e ? e->value : (char *)k->dflt;
	}
	return nv;
}

int conf_expand_argv(int *argc, char ***argv, int live_only, struct pacer_conf *conf)
{
	const char *file = NULL;
	char err[512], **nv;
	int at = find_config_arg(*argc, *argv, &file), skip, n, i, ret;

	memset(conf, 0, sizeof(*conf));
	if (!at)
		return 0;
	ret = pacer_conf_read(file, conf, err, sizeof(err));
	if (ret) {
		pr_err("%s", err);
		pacer_conf_free(conf);
		return ret == -EINVAL ? 2 : 1;
	}
	/* The file first, so options on the command line override it. */
	nv = conf_argv(conf, (*argv)[0], live_only, *argc, &n);
	if (!nv) {
		pacer_conf_free(conf);
		return 1;
	}
	skip = strchr((*argv)[at], '=') ? 1 : 2;
	for (i = 1; i < *argc; i++)
		if (i < at || i >= at + skip)
			nv[n++] = (*argv)[i];
	opt_conf = conf;
	*argc = n;
	*argv = nv; /* lives until exit, as argv does */
	return 0;
}

int parse_duration_opt(const char *opt, const char *val, uint64_t max_ns, uint64_t *out)
{
	char why[128], d[32];

	if (!parse_duration_max(val, max_ns, out))
		return 0;
	snprintf(why, sizeof(why),
		 "expected a positive duration of at most %s (ns, us, ms or s, e.g. 250ms, 1.5s)",
		 format_duration(max_ns, d, sizeof(d)));
	return bad_value(opt, val, why);
}

int ifname_to_index(const char *ifname, int *ifindex)
{
	unsigned int idx;

	if (strlen(ifname) >= IF_NAMESIZE) {
		pr_err("interface name '%s' is longer than %d characters", ifname, IF_NAMESIZE - 1);
		return -EINVAL;
	}
	idx = if_nametoindex(ifname);
	if (!idx) {
		pr_err("no such interface '%s'", ifname);
		return -ENODEV;
	}
	*ifindex = (int)idx;
	return 0;
}

int check_ifname_arg(const char *ifname)
{
	if (ifname_valid(ifname))
		return 0;
	return bad_value("IFNAME", ifname,
			 "an interface name has 1 to 15 characters, none of them '/', ':' or white space");
}

int netns_self(uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int pin_dir(const char *ifname, char *buf, size_t len)
{
	uint64_t ns = 0;
	int err = netns_self(&ns);

	return err ? err : pin_if_dir(PACER_PIN_ROOT, ns, ifname, buf, len);
}

int pins_lock(void)
{
	int fd;

	if (mkdir(PACER_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	fd = open(PACER_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

void pins_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* closing drops the flock */
}

int pacer_remove_pin_dir(const char *dir)
{
	char path[320], *slash;
	int i, err = 0;

	for (i = 0; i <= PACER_MAP_MAX; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, i < PACER_MAP_MAX ? pacer_pin_names[i] : "prog");
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

uint32_t pinned_prog_id(const char *dir)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	char path[320];
	int fd;

	snprintf(path, sizeof(path), "%s/prog", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

/* Scans mountinfo (ip netns, container runtimes bind-mount namespaces) and /proc/PID/ns/net. */
bool netns_alive(uint64_t ino)
{
	char want[40], link[64], path[300], line[1024];
	struct dirent *de;
	bool alive = false;
	DIR *d;
	FILE *f;
	ssize_t n;

	snprintf(want, sizeof(want), "net:[%llu]", (unsigned long long)ino);
	f = fopen("/proc/self/mountinfo", "r");
	while (f && !alive && fgets(line, sizeof(line), f))
		alive = strstr(line, want) != NULL;
	if (f)
		fclose(f);
	d = opendir("/proc");
	while (d && !alive && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/net", de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			alive = !strcmp(link, want);
		}
	}
	if (d)
		closedir(d);
	return alive;
}

int ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		int err = -errno;

		pr_err("/sys/fs/bpf is not a BPF filesystem and mounting one failed: %s",
		       strerror(-err));
		return err;
	}
	pr_debug("mounted bpffs on /sys/fs/bpf");
	return 0;
}

int num_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}

static int find_prog_id(int ifindex, uint32_t *prog_id, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(ifindex, 0, &q);

	if (err)
		return err;
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV:
		*prog_id = q.prog_id;
		*mode = "native";
		return 0;
	case XDP_ATTACHED_SKB:
		*prog_id = q.prog_id;
		*mode = "skb";
		return 0;
	case XDP_ATTACHED_HW:
		*prog_id = q.prog_id;
		*mode = "hw";
		return 0;
	case XDP_ATTACHED_MULTI:
		*prog_id = q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
		*mode = q.drv_prog_id ? "native" : "skb";
		return 0;
	default:
		return -ENOENT;
	}
}

/* Behind libxdp's dispatcher our program is a component, not the attached one. */
static int resolve_dispatcher(int ifindex, uint32_t *prog_id)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p = NULL;
	long err = libxdp_get_error(mp);

	if (err)
		return (int)err;
	if (!mp)
		return -ENOENT;
	if (xdp_multiprog__is_legacy(mp)) {
		xdp_multiprog__close(mp);
		return 0;
	}
	while ((p = xdp_multiprog__next_prog(p, mp))) {
		if (!strcmp(xdp_program__name(p), PACER_PROG_NAME)) {
			*prog_id = xdp_program__id(p);
			xdp_multiprog__close(mp);
			return 0;
		}
	}
	xdp_multiprog__close(mp);
	return -ENOENT;
}

uint32_t attached_pacer_id(int ifindex)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info), id = 0;
	const char *mode;
	int fd;

	if (find_prog_id(ifindex, &id, &mode))
		return 0;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		id = 0;
	else if (!strcmp(info.name, "xdp_dispatcher") && resolve_dispatcher(ifindex, &id))
		id = 0;
	else if (strcmp(info.name, "xdp_dispatcher") && strcmp(info.name, PACER_PROG_NAME))
		id = 0;
	close(fd);
	return id;
}

static int map_slot(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		const char *want = pacer_map_names[i];
		size_t w = strlen(want);

		/* Global-data maps carry a truncated object-name prefix. */
		if (want[0] == '.' ? (n >= w && !strcmp(name + n - w, want)) : !strcmp(name, want))
			return i;
	}
	return -1;
}

int pacer_handle_open(const char *ifname, struct pacer_handle *h)
{
	struct bpf_prog_info info = {};
	uint32_t info_len = sizeof(info), map_ids[32], i, zero = 0;
	char path[256], eb[128];
	struct stat stt;
	int err, fd;

	memset(h, 0, sizeof(*h));
	h->prog_fd = -1;
	for (i = 0; i < PACER_MAP_MAX; i++)
		h->map_fd[i] = -1;
	h->ncpus = num_cpus();
	snprintf(h->ifname, sizeof(h->ifname), "%s", ifname);
	err = ifname_to_index(ifname, &h->ifindex);
	if (err) {
		if (!pin_dir(ifname, path, sizeof(path)) && !stat(path, &stt))
			pr_err("pins for %s remain in %s (orphaned: the interface is gone); remove them with 'xdp-pacer unload %s'",
			       ifname, path, ifname);
		return err;
	}

	err = find_prog_id(h->ifindex, &h->prog_id, &h->mode);
	if (err) {
		if (!pin_dir(ifname, path, sizeof(path)) && !stat(path, &stt))
			pr_err("no XDP program on %s, but stale pins remain in %s: run 'xdp-pacer unload %s'",
			       ifname, path, ifname);
		else
			pr_err("no XDP program is attached to %s", ifname);
		return -ENOENT;
	}
	fd = bpf_prog_get_fd_by_id(h->prog_id);
	if (fd < 0) {
		pr_err("cannot open XDP program id %u on %s: %s", h->prog_id, ifname,
		       err_str(fd, eb, sizeof(eb)));
		return fd;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	if (!err && !strcmp(info.name, "xdp_dispatcher")) {
		uint32_t inner = 0;

		close(fd);
		err = resolve_dispatcher(h->ifindex, &inner);
		if (err || !inner) {
			pr_err("libxdp dispatcher on %s holds no %s program", ifname, PACER_PROG_NAME);
			return -ENOENT;
		}
		h->prog_id = inner;
		fd = bpf_prog_get_fd_by_id(inner);
		if (fd < 0)
			return fd;
		memset(&info, 0, sizeof(info));
		err = bpf_obj_get_info_by_fd(fd, &info, &info_len);
	}
	h->prog_fd = fd;
	if (err) {
		pr_err("cannot read program info on %s: %s", ifname, err_str(err, eb, sizeof(eb)));
		goto fail;
	}
	if (strcmp(info.name, PACER_PROG_NAME)) {
		pr_err("%s has XDP program id %u '%s' attached, not %s", ifname, h->prog_id,
		       info.name, PACER_PROG_NAME);
		err = -ENOENT;
		goto fail;
	}
	if (info.nr_map_ids > sizeof(map_ids) / sizeof(map_ids[0])) {
		pr_err("program id %u uses %u maps; not an xdp-pacer build this CLI knows",
		       h->prog_id, info.nr_map_ids);
		err = -EINVAL;
		goto fail;
	}
	{
		struct bpf_prog_info mi = {};
		uint32_t n = info.nr_map_ids;

		mi.nr_map_ids = n;
		mi.map_ids = (uint64_t)(unsigned long)map_ids;
		info_len = sizeof(mi);
		err = bpf_obj_get_info_by_fd(fd, &mi, &info_len);
		if (err) {
			pr_err("cannot list maps of program id %u: %s", h->prog_id,
			       err_str(err, eb, sizeof(eb)));
			goto fail;
		}
		for (i = 0; i < n; i++) {
			struct bpf_map_info m = {};
			uint32_t ml = sizeof(m);
			int mfd = bpf_map_get_fd_by_id(map_ids[i]), slot;

			if (mfd < 0)
				continue;
			if (bpf_obj_get_info_by_fd(mfd, &m, &ml) || (slot = map_slot(m.name)) < 0 ||
			    h->map_fd[slot] >= 0) {
				close(mfd);
				continue;
			}
			h->map_fd[slot] = mfd;
		}
	}
	for (i = 0; i < PACER_MAP_MAX; i++) {
		struct bpf_map_info m = {};
		uint32_t ml = sizeof(m);

		if (h->map_fd[i] < 0) {
			pr_err("program id %u on %s has no '%s' map: not an xdp-pacer build this CLI knows",
			       h->prog_id, ifname, pacer_map_names[i]);
			err = -ENOENT;
			goto fail;
		}
		/* Reads copy value_size bytes: a foreign layout must not reach them. */
		if (bpf_obj_get_info_by_fd(h->map_fd[i], &m, &ml) ||
		    (pacer_map_value_size[i] && m.value_size != pacer_map_value_size[i])) {
			pr_err("program id %u on %s: map '%s' has values of %u bytes, this CLI expects %u (ABI mismatch)",
			       h->prog_id, ifname, m.name, m.value_size, pacer_map_value_size[i]);
			err = -EPROTO;
			goto fail;
		}
	}
	err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_RODATA], &zero, &h->layout);
	if (err || h->layout.magic != PACER_LAYOUT_MAGIC ||
	    h->layout.abi_version != PACER_ABI_VERSION || h->layout.tick_shift > PACER_TICK_SHIFT_MAX) {
		pr_err("program id %u on %s: layout ABI mismatch (want version %d)", h->prog_id,
		       ifname, PACER_ABI_VERSION);
		err = -EPROTO;
		goto fail;
	}
	h->cfg_map_len = (size_t)sysconf(_SC_PAGESIZE);
	h->cfg = mmap(NULL, h->cfg_map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      h->map_fd[PACER_MAP_DATA], 0);
	if (h->cfg == MAP_FAILED) {
		err = -errno;
		h->cfg = NULL;
		pr_err("cannot map the live configuration of program id %u: %s", h->prog_id,
		       strerror(-err));
		goto fail;
	}
	/* Pins of an earlier load that another loader replaced are not this program's. */
	if (!pin_dir(ifname, path, sizeof(path)) && pinned_prog_id(path) == h->prog_id)
		h->pinned = true;
	return 0;
fail:
	pacer_handle_close(h);
	return err;
}

void pacer_handle_close(struct pacer_handle *h)
{
	int i;

	if (h->cfg)
		munmap(h->cfg, h->cfg_map_len);
	h->cfg = NULL;
	for (i = 0; i < PACER_MAP_MAX; i++) {
		if (h->map_fd[i] >= 0)
			close(h->map_fd[i]);
		h->map_fd[i] = -1;
	}
	if (h->prog_fd >= 0)
		close(h->prog_fd);
	h->prog_fd = -1;
}

int pacer_read_counters(const struct pacer_handle *h, uint64_t out[PACER_STAT_MAX])
{
	struct pacer_counters *pc;
	uint32_t zero = 0;
	int cpu, i, err;

	pc = calloc((size_t)h->ncpus, sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	err = bpf_map_lookup_elem(h->map_fd[PACER_MAP_STATS], &zero, pc);
	if (err) {
		free(pc);
		return err;
	}
	memset(out, 0, sizeof(uint64_t) * PACER_STAT_MAX);
	for (cpu = 0; cpu < h->ncpus; cpu++)
		for (i = 0; i < PACER_STAT_MAX; i++)
			out[i] += pc[cpu].c[i];
	free(pc);
	return 0;
}

uint64_t pacer_map_bytes(const struct pacer_handle *h)
{
	uint64_t total = 0;
	int i;

	for (i = 0; i < PACER_MAP_MAX; i++) {
		struct bpf_map_info m = {};
		uint32_t ml = sizeof(m);
		uint64_t v;

		if (bpf_obj_get_info_by_fd(h->map_fd[i], &m, &ml))
			continue;
		if (m.type == BPF_MAP_TYPE_RINGBUF) {
			total += m.max_entries;
			continue;
		}
		v = (uint64_t)((m.value_size + 7) & ~7u) * m.max_entries;
		if (m.type == BPF_MAP_TYPE_PERCPU_ARRAY || m.type == BPF_MAP_TYPE_PERCPU_HASH)
			v *= (uint64_t)h->ncpus;
		total += v;
	}
	return total;
}

uint64_t pacer_clock_now(const struct pacer_handle *h)
{
	struct pacer_clock_state cs = {};
	struct timespec ts;
	uint32_t zero = 0;

	/* The cached clock is what the datapath compares against: use it once armed. */
	if (h->layout.clock == PACER_CLOCK_CACHED &&
	    !bpf_map_lookup_elem(h->map_fd[PACER_MAP_CLOCK], &zero, &cs) && cs.armed == 1 && cs.now_ns)
		return cs.now_ns;
	clock_gettime(h->layout.clock == PACER_CLOCK_PRECISE ? CLOCK_MONOTONIC : CLOCK_MONOTONIC_COARSE,
		      &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *const policy_names[] = { "pace", "quiet" };
static const char *const placement_names[] = { "percpu", "shared" };
static const char *const layout_names[] = { "rows", "blocked" };
static const char *const clock_names[] = { "coarse", "precise", "cached" };
static const char *const malformed_names[] = { "pass", "drop" };
static const char *const backend_names[] = { "sketch", "table" };
static const char *const on_full_names[] = { "drop", "evict-oldest" };

#define NAME_OF(tab, v) ((v) < sizeof(tab) / sizeof(tab[0]) ? tab[v] : "?")

const char *policy_name(uint32_t p) { return NAME_OF(policy_names, p); }
const char *placement_name(uint32_t p) { return NAME_OF(placement_names, p); }
const char *layout_name(uint32_t k) { return NAME_OF(layout_names, k); }
const char *clock_name(uint32_t c) { return NAME_OF(clock_names, c); }
const char *backend_name(uint32_t b) { return NAME_OF(backend_names, b); }
const char *on_full_name(uint32_t f) { return NAME_OF(on_full_names, f); }

static int lookup_name(const char *const *tab, size_t n, const char *s, uint32_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (!strcmp(tab[i], s)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	return -EINVAL;
}

#define LOOKUP(tab, s, out) lookup_name(tab, sizeof(tab) / sizeof(tab[0]), s, out)

int parse_policy(const char *s, uint32_t *out) { return LOOKUP(policy_names, s, out); }
int parse_placement(const char *s, uint32_t *out) { return LOOKUP(placement_names, s, out); }
int parse_layout(const char *s, uint32_t *out) { return LOOKUP(layout_names, s, out); }
int parse_clock(const char *s, uint32_t *out) { return LOOKUP(clock_names, s, out); }
int parse_malformed(const char *s, uint32_t *out) { return LOOKUP(malformed_names, s, out); }
int parse_backend(const char *s, uint32_t *out) { return LOOKUP(backend_names, s, out); }
int parse_on_full(const char *s, uint32_t *out) { return LOOKUP(on_full_names, s, out); }

void interval_range(uint32_t tick_shift, uint64_t *min_ns, uint64_t *max_ns)
{
	uint64_t q = 1ULL << tick_shift;

	/* Below 4 ticks the quantisation error would exceed 25 %. */
	*min_ns = 4 * q;
	*max_ns = (uint64_t)(PACER_MAX_THRESH - 1) * q;
}

int parse_ifname_only(int argc, char **argv, const char *usage_text, const char **ifname)
{
	int i;

	*ifname = NULL;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return -1;
		}
		if (argv[i][0] == '-' || *ifname) {
			pr_err("%s '%s'", argv[i][0] == '-' ? "unknown option" : "unexpected argument",
			       argv[i]);
			usage_hint(argv[0]);
			return 2;
		}
		*ifname = argv[i];
	}
	if (!*ifname) {
		pr_err("%s needs an interface name", argv[0]);
		usage_hint(argv[0]);
		return 2;
	}
	return check_ifname_arg(*ifname);
}

int pacer_for_each(int (*fn)(struct pacer_handle *h, void *ctx), void *ctx)
{
	struct if_nameindex *ifs, *i;
	struct pacer_handle h;
	int found = 0, ret = 0;

	ifs = if_nameindex();
	if (!ifs) {
		pr_err("cannot list interfaces: %s", strerror(errno));
		return -errno;
	}
	for (i = ifs; i->if_index && !ret; i++) {
		if (!attached_pacer_id((int)i->if_index))
			continue;
		if (pacer_handle_open(i->if_name, &h))
			continue;
		ret = fn(&h, ctx);
		pacer_handle_close(&h);
		found++;
	}
	if_freenameindex(ifs);
	return ret ? ret : found;
}

int pacer_prom_fill(const struct pacer_handle *h, struct prom_pacer *out)
{
	snprintf(out->ifname, sizeof(out->ifname), "%s", h->ifname);
	out->prog_id = h->prog_id;
	out->cfg = *h->cfg;
	out->layout = h->layout;
	out->map_bytes = pacer_map_bytes(h);
	return pacer_read_counters(h, out->counters);
}
