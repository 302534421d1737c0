// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp_replace_check: xdp_replace_program() (user/cli/xdp_replace.c) on one
 * interface.  Attaches program A (--old) through libxdp as load does (or by
 * a bpf_link, --link), after an optional neighbour (--neighbour, priority
 * 30: A, at 20, runs before it; what is already attached, xdp-filter at 10,
 * stays before both); then:
 *
 *   - replacements that must fail and leave everything as it was (program
 *     and dispatcher ids, order, priorities, actions, libxdp's pins): a
 *     new object the verifier refuses (--refused), no xdp-dispatcher.o
 *     (LIBXDP_OBJECT_PATH elsewhere), a program id not attached, the
 *     dispatcher's own id, the interface changed by another loader just
 *     before the swap (what it attached stays), a dispatcher of a version
 *     not understood (1, 3: what another loader attached stays);
 *   - the replacement of A by B (--new, A's maps reused), while a thread
 *     reads the interface in a loop (never without a program; in a
 *     dispatcher never A and B in one chain, read from the kernel's links)
 *     and, with --traffic, a command sends frames: A's and B's counts
 *     (replace_count.bpf.c) add up to the frames sent, each judged once;
 *   - B where A was: the same slot, priority and chain-call actions, the
 *     neighbours' ids in the same order, a new dispatcher, libxdp's pins
 *     for it alone, read back by libxdp; then B detached through libxdp
 *     (unless --keep), the neighbours staying.
 *
 *   xdp_replace_check --iface IF --old OBJ --new OBJ --refused OBJ
 *                     [--neighbour OBJ] [--skb] [--link] [--expect dispatcher|single]
 *                     [--traffic CMD] [--keep] [-v]
 *   xdp_replace_check --iface IF --detach NAME   (through libxdp)
 *
 * Prints "ok   - ..." and "FAIL - ..." lines; exit 0 when nothing failed,
 * 1 when a check failed, 2 when it could not run.  Root.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "cli_log.h"
#include "opts.h"
#include "xdp_replace.h"

#define MAX_PROGS 10
#define OLD_PRIO 20
#define NEIGHBOUR_PRIO 30
#define GEN_OLD 1 /* replace_count.bpf.c's generations: A counts under 1, B under 2 */
#define GEN_NEW 2

struct check_opts {
	const char *iface, *old_obj, *new_obj, *refused_obj, *neighbour_obj, *expect, *traffic,
		*detach;
	bool skb, link, keep, verbose, iface_set;
};

static const struct opt_spec specs[] = {
	{ .name = "iface", .type = OPT_IFNAME, .flags = OPT_REQUIRED, .arg = "IFNAME",
	  OPT_FIELD(struct check_opts, iface), OPT_GIVEN(struct check_opts, iface_set),
	  .help = "the interface" },
	{ .name = "old", .type = OPT_STRING, .arg = "OBJ", OPT_FIELD(struct check_opts, old_obj),
	  .help = "program A, attached through libxdp (replace_count.bpf.o)" },
	{ .name = "new", .type = OPT_STRING, .arg = "OBJ", OPT_FIELD(struct check_opts, new_obj),
	  .help = "program B, A's replacement (replace_count.bpf.o)" },
	{ .name = "refused", .type = OPT_STRING, .arg = "OBJ",
	  OPT_FIELD(struct check_opts, refused_obj),
	  .help = "a replacement the verifier refuses (replace_refused.bpf.o)" },
	{ .name = "neighbour", .type = OPT_STRING, .arg = "OBJ",
	  OPT_FIELD(struct check_opts, neighbour_obj),
	  .help = "attached first, through libxdp, at priority 30 (after A)" },
	{ .name = "skb", .type = OPT_BOOL, OPT_FIELD(struct check_opts, skb),
	  .help = "attach in skb mode (default native)" },
	{ .name = "link", .type = OPT_BOOL, OPT_FIELD(struct check_opts, link),
	  .help = "attach A by a bpf_link instead (not through libxdp)" },
	{ .name = "expect", .type = OPT_STRING, .arg = "dispatcher|single",
	  OPT_FIELD(struct check_opts, expect),
	  .help = "how libxdp must attach A here (default: either)" },
	{ .name = "traffic", .type = OPT_STRING, .arg = "CMD", OPT_FIELD(struct check_opts, traffic),
	  .help = "a shell command that sends frames to the interface during the\n"
		  "replacement and prints how many it sent" },
	{ .name = "keep", .type = OPT_BOOL, OPT_FIELD(struct check_opts, keep),
	  .help = "leave B (and the neighbour) attached" },
	{ .name = "detach", .type = OPT_STRING, .arg = "NAME", OPT_FIELD(struct check_opts, detach),
	  .help = "only detach the program named NAME through libxdp" },
	{ .name = "verbose", .short_name = 'v', .type = OPT_BOOL,
	  OPT_FIELD(struct check_opts, verbose), .help = "libbpf's and libxdp's messages" },
	{ 0 },
};

static const struct opt_verb verb = {
	.program = "xdp_replace_check",
	.name = "xdp_replace_check",
	.synopsis = "--iface IFNAME --old OBJ --new OBJ --refused OBJ [OPTIONS]",
	.intro = "Check xdp_replace_program() on IFNAME (alone or in libxdp's dispatcher).\n",
	.opts = specs,
};

static int n_fail;
static int ifindex;
static enum xdp_attach_mode mode;

static void ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void not_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("ok   - ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void not_ok(const char *fmt, ...)
{
	va_list ap;

	n_fail++;
	va_start(ap, fmt);
	printf("FAIL - ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* What libxdp reads on the interface, and libxdp's pins for it. */
struct xdp_state {
	uint32_t main_id; /* the dispatcher, or the program on its own; 0: none */
	bool dispatcher;
	int mode;
	int n;
	uint32_t ids[MAX_PROGS], prios[MAX_PROGS], actions[MAX_PROGS];
	char names[MAX_PROGS][BPF_OBJ_NAME_LEN];
	char pins[2048]; /* "dispatch-IFINDEX-ID/progN-link ..." sorted */
	int err;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* libxdp's pins for this interface: dispatch-IFINDEX-*, each directory's files. */
static void list_pins(char *buf, size_t len)
{
	char prefix[32], dir[512], *names[256];
	struct dirent *e, *f;
	size_t used = 0;
	int n = 0, i;
	DIR *root, *sub;

	buf[0] = 0;
	snprintf(prefix, sizeof(prefix), "dispatch-%d-", ifindex);
	root = opendir("/sys/fs/bpf/xdp");
	if (!root)
		return;
	while ((e = readdir(root)) && n < 256) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(dir, sizeof(dir), "/sys/fs/bpf/xdp/%s", e->d_name);
		sub = opendir(dir);
		if (!sub) {
			names[n++] = strdup(e->d_name);
			continue;
		}
		while ((f = readdir(sub)) && n < 256)
			if (f->d_name[0] != '.' && asprintf(&names[n], "%s/%s", e->d_name, f->d_name) > 0)
				n++;
		closedir(sub);
	}
	closedir(root);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
}

static void read_state(struct xdp_state *s)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	unsigned int a;

	memset(s, 0, sizeof(*s));
	list_pins(s->pins, sizeof(s->pins));
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	s->err = (int)libxdp_get_error(mp);
	if (s->err == -ENOENT || (!s->err && !mp)) {
		s->err = 0;
		return;
	}
	if (s->err)
		return;
	s->mode = xdp_multiprog__attach_mode(mp);
	s->main_id = xdp_program__id(xdp_multiprog__main_prog(mp));
	s->dispatcher = !xdp_multiprog__is_legacy(mp);
	if (!s->dispatcher) {
		p = xdp_multiprog__main_prog(mp);
		s->ids[0] = xdp_program__id(p);
		snprintf(s->names[0], sizeof(s->names[0]), "%s", xdp_program__name(p));
		s->n = 1;
	}
	while (s->dispatcher && (p = xdp_multiprog__next_prog(p, mp)) && s->n < MAX_PROGS) {
		s->ids[s->n] = xdp_program__id(p);
		s->prios[s->n] = xdp_program__run_prio(p);
		for (a = XDP_ABORTED; a <= XDP_REDIRECT; a++)
			if (xdp_program__chain_call_enabled(p, (enum xdp_action)a))
				s->actions[s->n] |= 1u << a;
		snprintf(s->names[s->n], sizeof(s->names[s->n]), "%s", xdp_program__name(p));
		s->n++;
	}
	xdp_multiprog__close(mp);
}

static const char *state_str(const struct xdp_state *s, char *buf, size_t len)
{
	size_t used;
	int i;

	if (s->err) {
		snprintf(buf, len, "libxdp cannot read it: %s", strerror(-s->err));
		return buf;
	}
	if (!s->main_id) {
		snprintf(buf, len, "nothing attached; pins [%s]", s->pins);
		return buf;
	}
	used = (size_t)snprintf(buf, len, "%s id %u (%s):", s->dispatcher ? "dispatcher" : "alone",
				s->main_id, s->mode == XDP_MODE_SKB ? "skb" : "native");
	for (i = 0; i < s->n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, " %d. %s id %u prio %u actions %#x;", i,
					 s->names[i], s->ids[i], s->prios[i], s->actions[i]);
	if (used < len)
		snprintf(buf + used, len - used, " pins [%s]", s->pins);
	return buf;
}

static bool same_state(const struct xdp_state *a, const struct xdp_state *b)
{
	int i;

	if (a->err || b->err || a->main_id != b->main_id || a->dispatcher != b->dispatcher ||
	    a->mode != b->mode || a->n != b->n || strcmp(a->pins, b->pins))
		return false;
	for (i = 0; i < a->n; i++)
		if (a->ids[i] != b->ids[i] || a->prios[i] != b->prios[i] ||
		    a->actions[i] != b->actions[i])
			return false;
	return true;
}

static void expect_unchanged(const char *what, const struct xdp_state *before)
{
	char b1[3072], b2[3072];
	struct xdp_state now;

	read_state(&now);
	if (same_state(before, &now))
		ok("%s: everything as it was (%s)", what, state_str(&now, b1, sizeof(b1)));
	else
		not_ok("%s: changed: before %s; now %s", what, state_str(before, b1, sizeof(b1)),
		       state_str(&now, b2, sizeof(b2)));
}

static int index_of(const struct xdp_state *s, uint32_t id)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return i;
	return -1;
}

/* The program attached in this mode (bpf_xdp_query), 0 if none. */
static uint32_t attached_id(void)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(ifindex, 0, &q))
		return 0;
	return mode == XDP_MODE_SKB ? q.skb_prog_id : q.drv_prog_id;
}

/* replace_count's generation, in its .rodata before load. */
static int set_generation(struct bpf_object *obj, uint32_t gen)
{
	uint8_t value[64];
	struct bpf_map *m;
	const void *v;
	size_t size;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t len = strlen(name);

		if (len < 7 || strcmp(name + len - 7, ".rodata"))
			continue;
		v = bpf_map__initial_value(m, &size);
		if (!v || size < sizeof(gen) || size > sizeof(value))
			return -EINVAL;
		memcpy(value, v, size);
		memcpy(value, &gen, sizeof(gen)); /* replace_generation, its only constant */
		return bpf_map__set_initial_value(m, value, size);
	}
	return -ENOENT;
}

/* The frames each generation judged: replace_seen, shared by A and B. */
static int seen_fd = -1;

static uint64_t seen_of(uint32_t gen)
{
	uint64_t n = 0;

	if (seen_fd >= 0)
		bpf_map_lookup_elem(seen_fd, &gen, &n);
	return n;
}

/* A replacement's object, opened: B (generation 2), A's counters reused. */
static struct bpf_object *open_new(const char *path, struct bpf_program **prog)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *seen;

	if (!obj) {
		fprintf(stderr, "xdp_replace_check: cannot open %s: %s\n", path, strerror(errno));
		return NULL;
	}
	*prog = bpf_object__next_program(obj, NULL);
	seen = bpf_object__find_map_by_name(obj, "replace_seen");
	if (seen && seen_fd >= 0)
		bpf_map__reuse_fd(seen, seen_fd);
	set_generation(obj, GEN_NEW);
	return obj;
}

/* --- the reader beside the replacement --- */

/* One reading of the interface: what runs, as the kernel says. */
struct reading {
	uint32_t main_id;
	int n;
	uint32_t ids[MAX_PROGS + 2]; /* the programs linked to the dispatcher; the program alone */
};

#define MAX_READINGS 64

struct poller {
	atomic_bool stop;
	bool dispatcher;
	atomic_ulong reads; /* consistent readings taken */
	unsigned long zero_reads; /* readings with no program attached */
	int nseen;
	struct reading seen[MAX_READINGS]; /* each distinct one, in order */
	bool overflow;
};

/*
 * The programs linked to dispatcher main_id: the kernel's extension links
 * whose target is it (libxdp's pins are not read: they change around the
 * swap, the links do not while the dispatcher is attached).
 */
static int linked_to(uint32_t main_id, uint32_t *ids, int max)
{
	struct bpf_link_info info;
	uint32_t id = 0, len;
	int fd, n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_TRACING &&
		    info.tracing.target_obj_id == main_id && n < max)
			ids[n++] = info.prog_id;
		close(fd);
	}
	return n;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void *poll_loop(void *arg)
{
	struct poller *p = arg;
	struct reading r, *last;

	while (!atomic_load(&p->stop)) {
		memset(&r, 0, sizeof(r));
		r.main_id = attached_id();
		if (!r.main_id) {
			p->zero_reads++;
			atomic_fetch_add(&p->reads, 1);
			continue;
		}
		if (p->dispatcher) {
			r.n = linked_to(r.main_id, r.ids, MAX_PROGS + 2);
			/* Swapped while the links were read: not one state, read again. */
			if (attached_id() != r.main_id)
				continue;
			qsort(r.ids, (size_t)r.n, sizeof(r.ids[0]), cmp_u32);
		} else {
			r.n = 1;
			r.ids[0] = r.main_id;
		}
		atomic_fetch_add(&p->reads, 1);
		last = p->nseen ? &p->seen[p->nseen - 1] : NULL;
		if (last && !memcmp(last, &r, sizeof(r)))
			continue;
		if (p->nseen < MAX_READINGS)
			p->seen[p->nseen++] = r;
		else
			p->overflow = true;
	}
	return NULL;
}

static bool reading_has(const struct reading *r, uint32_t id)
{
	int i;

	for (i = 0; i < r->n; i++)
		if (r->ids[i] == id)
			return true;
	return false;
}

/* Every reading: a program attached, A or B in it, never both. */
static void judge_readings(const struct poller *p, uint32_t a_id, uint32_t b_id)
{
	unsigned long reads = atomic_load(&p->reads);
	bool bad = false, saw_a = false, saw_b = false;
	int i;

	if (p->zero_reads)
		not_ok("reader: %lu of %lu readings found no XDP program attached", p->zero_reads, reads);
	for (i = 0; i < p->nseen; i++) {
		const struct reading *r = &p->seen[i];
		bool a = reading_has(r, a_id), b = reading_has(r, b_id);

		saw_a |= a;
		saw_b |= b;
		if (a && b) {
			not_ok("reader: A (id %u) and B (id %u) both in one chain (dispatcher id %u)", a_id,
			       b_id, r->main_id);
			bad = true;
		} else if (!a && !b) {
			not_ok("reader: neither A (id %u) nor B (id %u) runs (attached id %u, %d programs linked)",
			       a_id, b_id, r->main_id, r->n);
			bad = true;
		}
	}
	if (!saw_a || !saw_b || reads < 2)
		not_ok("reader: did not see the swap (%lu readings, A seen %d, B seen %d)", reads, saw_a,
		       saw_b);
	else if (!bad && !p->zero_reads)
		ok("reader: %lu readings during the replacement, %d distinct: always a program attached, A (id %u) then B (id %u)%s",
		   reads, p->nseen, a_id, b_id,
		   p->dispatcher ? ", never both in one chain (the dispatcher's links)" : "");
	if (p->overflow)
		not_ok("reader: more than %d distinct readings", MAX_READINGS);
}

/* --- the replacements that must fail --- */

static void expect_refused(const char *what, const char *path, uint32_t old_id, int want_err,
			   const struct xdp_state *before)
{
	struct bpf_program *prog;
	struct bpf_object *obj = open_new(path, &prog);
	uint32_t new_id;
	int new_fd, rc;

	if (!obj) {
		not_ok("%s: cannot open %s", what, path);
		return;
	}
	rc = xdp_replace_program(ifindex, old_id, obj, prog, NULL, NULL, &new_fd, &new_id);
	bpf_object__close(obj);
	if (rc >= 0 || (want_err && rc != want_err))
		not_ok("%s: returned %d (%s), expected %s", what, rc, rc < 0 ? strerror(-rc) : "success",
		       want_err ? strerror(-want_err) : "an error");
	else
		ok("%s: refused (%s)", what, strerror(-rc));
	expect_unchanged(what, before);
}

/* The interface changed by another loader just before the swap (xdp_replace_before_swap). */
static int squatter_fd = -1, displaced_fd = -1;

static uint32_t mode_flag(void)
{
	return mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

/* A's bpf_link (--link), else -1: what another loader swaps through. */
static int a_link_fd = -1;

/* from_fd's program for to_fd's, as another loader would: by netlink, or A's link. */
static int swap_as_another_loader(int to_fd, int from_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = from_fd);
	LIBBPF_OPTS(bpf_link_update_opts, lo, .flags = BPF_F_REPLACE, .old_prog_fd = from_fd);

	if (a_link_fd >= 0)
		return bpf_link_update(a_link_fd, to_fd, &lo) ? -errno : 0;
	return bpf_xdp_attach(ifindex, to_fd, XDP_FLAGS_REPLACE | mode_flag(), &o);
}

static void swap_in_squatter(int idx)
{
	(void)idx;
	if (swap_as_another_loader(squatter_fd, displaced_fd))
		not_ok("changed meanwhile: the other loader's swap failed: %s", strerror(errno));
}

/* A copy of path loaded as a plain XDP program, not attached (its own counters). */
static struct bpf_object *load_plain(const char *path, int *fd, uint32_t *id)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);

	if (!obj || bpf_object__load(obj)) {
		bpf_object__close(obj);
		return NULL;
	}
	*fd = bpf_program__fd(bpf_object__next_program(obj, NULL));
	bpf_obj_get_info_by_fd(*fd, &info, &len);
	*id = info.id;
	return obj;
}

static void check_changed_meanwhile(const char *new_obj, const char *plain_obj, uint32_t old_id,
				    const struct xdp_state *before)
{
	const char *what = "the interface changed just before the swap";
	struct bpf_object *obj, *sq;
	struct bpf_program *prog;
	uint32_t new_id, sq_id, now;
	char pins[2048];
	int rc, new_fd;

	sq = load_plain(plain_obj, &squatter_fd, &sq_id);
	displaced_fd = bpf_prog_get_fd_by_id(before->main_id);
	obj = open_new(new_obj, &prog);
	if (!sq || displaced_fd < 0 || !obj) {
		not_ok("%s: cannot set up (%s)", what, strerror(errno));
		goto out;
	}
	xdp_replace_before_swap = swap_in_squatter;
	rc = xdp_replace_program(ifindex, old_id, obj, prog, NULL, NULL, &new_fd, &new_id);
	xdp_replace_before_swap = NULL;
	now = attached_id();
	list_pins(pins, sizeof(pins));
	if (rc == -EAGAIN)
		ok("%s: refused (%s)", what, strerror(-rc));
	else
		not_ok("%s: returned %d, expected %d (EAGAIN)", what, rc, -EAGAIN);
	if (now == sq_id && !strcmp(pins, before->pins))
		ok("%s: the other loader's program (id %u) stays, libxdp's pins as they were", what, sq_id);
	else
		not_ok("%s: attached id %u (the other loader's: %u); pins [%s], before [%s]", what, now,
		       sq_id, pins, before->pins);
	/* Put back what was there, as it was. */
	if (swap_as_another_loader(displaced_fd, squatter_fd))
		not_ok("%s: cannot put the displaced program back: %s", what, strerror(errno));
	expect_unchanged("the displaced program put back", before);
out:
	bpf_object__close(obj);
	bpf_object__close(sq);
	if (displaced_fd >= 0)
		close(displaced_fd);
	displaced_fd = squatter_fd = -1;
}

/*
 * A program that looks like libxdp's dispatcher of another version (its
 * name, one read-only map holding the configuration), attached in place of
 * what is there: the replacement must refuse to read it.  Version 1 has no
 * magic byte (libxdp before 1.3); 3 is libxdp 1.6's.
 */
static int load_fake_dispatcher(uint8_t version, int *map_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_RDONLY_PROG);
	uint8_t value[124] = { 0 };
	uint32_t zero = 0, size = version == 1 ? 84 : sizeof(value);
	int fd;

	if (version == 1) {
		value[0] = 1; /* num_progs_enabled first, no magic */
	} else {
		value[0] = 236; /* XDP_DISPATCHER_MAGIC */
		value[1] = version;
		value[2] = 1;
	}
	*map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xdp_disp.rodata", 4, size, 1, &mo);
	if (*map_fd < 0 || bpf_map_update_elem(*map_fd, &zero, value, 0) || bpf_map_freeze(*map_fd))
		return -1;
	{
		struct bpf_insn insns[] = {
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
			  .src_reg = BPF_PSEUDO_MAP_FD, .imm = *map_fd },
			{ 0 },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
			{ .code = BPF_JMP | BPF_EXIT },
		};

		LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_XDP); /* as libbpf's xdp */

		fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xdp_dispatcher", "GPL", insns, 4, &po);
	}
	return fd;
}

static void check_other_version(uint8_t version, const char *new_obj, uint32_t old_id,
				const struct xdp_state *before)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_prog_info info = { 0 };
	uint32_t new_id, len = sizeof(info);
	char what[96];
	int map_fd = -1, rc, new_fd;

	snprintf(what, sizeof(what), "libxdp's dispatcher of version %u", version);
	squatter_fd = load_fake_dispatcher(version, &map_fd);
	displaced_fd = bpf_prog_get_fd_by_id(before->main_id);
	obj = open_new(new_obj, &prog);
	if (squatter_fd < 0 || displaced_fd < 0 || !obj ||
	    swap_as_another_loader(squatter_fd, displaced_fd)) {
		not_ok("%s: cannot set up (%s)", what, strerror(errno));
		goto out;
	}
	bpf_obj_get_info_by_fd(squatter_fd, &info, &len);
	rc = xdp_replace_program(ifindex, old_id, obj, prog, NULL, NULL, &new_fd, &new_id);
	if (rc == -EOPNOTSUPP && attached_id() == info.id)
		ok("%s: refused (%s), left attached", what, strerror(-rc));
	else
		not_ok("%s: returned %d, expected %d (EOPNOTSUPP); attached id %u (it: %u)", what, rc,
		       -EOPNOTSUPP, attached_id(), info.id);
	if (swap_as_another_loader(displaced_fd, squatter_fd))
		not_ok("%s: cannot put the displaced program back: %s", what, strerror(errno));
	expect_unchanged("the displaced program put back", before);
out:
	bpf_object__close(obj);
	if (squatter_fd >= 0)
		close(squatter_fd);
	if (map_fd >= 0)
		close(map_fd);
	if (displaced_fd >= 0)
		close(displaced_fd);
	displaced_fd = squatter_fd = -1;
}

/* --- the replacement --- */

static uint64_t ns_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Until cond(arg) or ms milliseconds: whether it came true. */
static bool wait_for(bool (*cond)(void *), void *arg, unsigned int ms)
{
	uint64_t end = ns_now() + (uint64_t)ms * 1000000ull;

	while (!cond(arg)) {
		if (ns_now() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static bool poller_read(void *arg)
{
	return atomic_load(&((struct poller *)arg)->reads) > 0;
}

static bool poller_read_more(void *arg)
{
	struct poller *p = arg;

	return atomic_load(&p->reads) > p->zero_reads + 200;
}

static uint64_t seen_base_old;

/* A has judged a share of the traffic: the swap comes in mid-stream. */
#define OLD_SHARE 100

static bool old_judged(void *arg)
{
	(void)arg;
	return seen_of(GEN_OLD) >= seen_base_old + OLD_SHARE;
}

static uint64_t sent_frames;

static bool all_judged(void *arg)
{
	(void)arg;
	return seen_of(GEN_OLD) - seen_base_old + seen_of(GEN_NEW) >= sent_frames;
}

/* A replaced by B with the reader, and the traffic, running: B's id, or 0. */
static uint32_t check_replace(const struct check_opts *o, uint32_t a_id,
			      const struct xdp_state *before)
{
	static struct poller p;
	struct bpf_program *prog;
	struct bpf_object *obj;
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info), b_id = 0;
	FILE *traffic = NULL;
	pthread_t reader;
	int rc, b_fd = -1;
	char line[64] = "";
	uint64_t a_seen, b_seen;

	memset(&p, 0, sizeof(p));
	p.dispatcher = before->dispatcher;
	obj = open_new(o->new_obj, &prog);
	if (!obj) {
		not_ok("replace: cannot open %s", o->new_obj);
		return 0;
	}
	seen_base_old = seen_of(GEN_OLD);
	if (pthread_create(&reader, NULL, poll_loop, &p)) {
		not_ok("replace: cannot start the reader");
		return 0;
	}
	wait_for(poller_read, &p, 5000);
	if (o->traffic) {
		traffic = popen(o->traffic, "r");
		if (!traffic || !wait_for(old_judged, NULL, 20000))
			not_ok("replace: the traffic (%s) did not reach A", o->traffic);
	}
	rc = xdp_replace_program(ifindex, a_id, obj, prog, NULL, NULL, &b_fd, &b_id);
	if (traffic) {
		if (!fgets(line, sizeof(line), traffic))
			line[0] = 0;
		if (pclose(traffic))
			not_ok("replace: the traffic command failed");
		sent_frames = strtoull(line, NULL, 10);
		wait_for(all_judged, NULL, 5000);
	}
	wait_for(poller_read_more, &p, 2000);
	atomic_store(&p.stop, true);
	pthread_join(reader, NULL);
	if (rc) {
		not_ok("replace: xdp_replace_program returned %d (%s)", rc, strerror(-rc));
		bpf_object__close(obj);
		return 0;
	}
	if (b_fd < 0 || bpf_obj_get_info_by_fd(b_fd, &info, &len) || info.id != b_id)
		not_ok("replace: *new_fd %d is not *new_id %u", b_fd, b_id);
	else
		ok("replace: A (id %u) replaced by B (id %u, '%s')", a_id, b_id, info.name);
	judge_readings(&p, a_id, b_id);
	if (traffic) {
		a_seen = seen_of(GEN_OLD) - seen_base_old;
		b_seen = seen_of(GEN_NEW);
		if (sent_frames && a_seen && b_seen && a_seen + b_seen == sent_frames)
			ok("traffic: %llu frames sent during the replacement, A judged %llu and B %llu: each exactly once",
			   (unsigned long long)sent_frames, (unsigned long long)a_seen,
			   (unsigned long long)b_seen);
		else
			not_ok("traffic: %llu frames sent, A judged %llu and B %llu (together %llu)",
			       (unsigned long long)sent_frames, (unsigned long long)a_seen,
			       (unsigned long long)b_seen, (unsigned long long)(a_seen + b_seen));
	}
	/* B stays loaded through its attachment (and pins); the object can go. */
	bpf_object__close(obj);
	return b_id;
}

/* B where A was: the same slot and configuration, the neighbours unmoved, the new pins alone. */
static void check_after(uint32_t a_id, uint32_t b_id, const struct xdp_state *before)
{
	char b1[3072], b2[3072], want[2048];
	struct xdp_state after;
	int slot = index_of(before, a_id), i;
	size_t used = 0;
	bool same = true;

	read_state(&after);
	state_str(&after, b2, sizeof(b2));
	if (after.err) {
		not_ok("after: %s", b2);
		return;
	}
	if (after.mode != before->mode || after.dispatcher != before->dispatcher) {
		not_ok("after: the mode or the kind of attachment changed: before %s; after %s",
		       state_str(before, b1, sizeof(b1)), b2);
		return;
	}
	if (!before->dispatcher) {
		if (after.main_id == b_id && !strcmp(after.pins, before->pins))
			ok("after: B (id %u) attached on its own in %s mode, as A was", b_id,
			   after.mode == XDP_MODE_SKB ? "skb" : "native");
		else
			not_ok("after: expected B (id %u) alone: %s", b_id, b2);
		return;
	}
	if (after.main_id != before->main_id)
		ok("after: a new dispatcher (id %u, was %u), in %s mode as before", after.main_id,
		   before->main_id, after.mode == XDP_MODE_SKB ? "skb" : "native");
	else
		not_ok("after: the dispatcher is still id %u", after.main_id);
	same = after.n == before->n && slot >= 0;
	for (i = 0; same && i < after.n; i++)
		same = after.ids[i] == (i == slot ? b_id : before->ids[i]) &&
		       after.prios[i] == before->prios[i] && after.actions[i] == before->actions[i];
	if (same)
		ok("after: B in A's slot %d of %d, priority %u, chain-call actions %#x; the neighbours' ids, order, priorities and actions unchanged (libxdp reads it: %s)",
		   slot, after.n, after.prios[slot], after.actions[slot], b2);
	else
		not_ok("after: expected B (id %u) in slot %d, the rest as before: before %s; after %s", b_id,
		       slot, state_str(before, b1, sizeof(b1)), b2);
	for (i = 0; i < after.n && used < sizeof(want); i++)
		used += (size_t)snprintf(want + used, sizeof(want) - used,
					 "%sdispatch-%d-%u/prog%d-link dispatch-%d-%u/prog%d-prog", i ? " " : "",
					 ifindex, after.main_id, i, ifindex, after.main_id, i);
	if (!strcmp(after.pins, want))
		ok("after: libxdp's pins are the new dispatcher's alone (%s)", after.pins);
	else
		not_ok("after: libxdp's pins [%s], expected [%s]", after.pins, want);
}

/* Detach the program of this id (or name) through libxdp. */
static int detach_through_libxdp(uint32_t id, const char *name)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p = NULL, *found = NULL;
	int err = (int)libxdp_get_error(mp);

	if (err || !mp)
		return err ? err : -ENOENT;
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if ((id && xdp_program__id(p) == id) || (name && !strcmp(xdp_program__name(p), name)))
			found = p;
	}
	while (!found && !xdp_multiprog__is_legacy(mp) && (p = xdp_multiprog__next_prog(p, mp)))
		if ((id && xdp_program__id(p) == id) || (name && !strcmp(xdp_program__name(p), name)))
			found = p;
	err = found ? xdp_program__detach(found, ifindex, xdp_multiprog__attach_mode(mp), 0) : -ENOENT;
	xdp_multiprog__close(mp);
	return err;
}

/* B detached through libxdp: the neighbours stay, in order, with their ids. */
static void check_detach(uint32_t b_id, const struct xdp_state *before, int slot)
{
	char b1[3072], b2[3072];
	struct xdp_state after;
	int err, i, j;
	bool same;

	if (a_link_fd >= 0) { /* B runs through A's link now: it goes with the link */
		close(a_link_fd);
		a_link_fd = -1;
		read_state(&after);
		if (!after.err && !after.main_id)
			ok("detach: B went with A's bpf_link, nothing left attached");
		else
			not_ok("detach: A's bpf_link closed, but %s", state_str(&after, b2, sizeof(b2)));
		return;
	}
	err = detach_through_libxdp(b_id, NULL);
	read_state(&after);
	state_str(&after, b2, sizeof(b2));
	if (err) {
		not_ok("detach: libxdp cannot detach B (id %u): %s; %s", b_id, strerror(-err), b2);
		return;
	}
	/* Nothing left, or the neighbours in the same mode. */
	same = !after.err && after.n == before->n - 1 && (!after.n || after.mode == before->mode);
	for (i = 0, j = 0; same && i < before->n; i++)
		if (i != slot)
			same = after.ids[j++] == before->ids[i];
	if (same && before->n == 1 && !after.main_id)
		ok("detach: libxdp detached B; nothing left attached");
	else if (same && before->n > 1)
		ok("detach: libxdp detached B; the neighbours stay in order with their ids (%s)", b2);
	else
		not_ok("detach: after libxdp detached B: before %s; after %s",
		       state_str(before, b1, sizeof(b1)), b2);
}

int main(int argc, char **argv)
{
	struct check_opts o = { 0 };
	struct xdp_program *a = NULL, *neighbour = NULL;
	struct bpf_object *plain, *a_obj;
	struct xdp_state before;
	struct opt_error e;
	char b1[3072];
	uint32_t a_id, b_id, plain_id;
	int err = opts_parse(&verb, argc, argv, &o, stdout, &e), plain_fd, slot;

	if (err == 2)
		fprintf(stderr, "xdp_replace_check: %s\n", e.msg);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	verbose = o.verbose;
	setup_lib_logging();
	ifindex = (int)if_nametoindex(o.iface);
	if (!ifindex) {
		fprintf(stderr, "xdp_replace_check: no interface %s\n", o.iface);
		return 2;
	}
	if (o.detach) {
		err = detach_through_libxdp(0, o.detach);
		read_state(&before);
		if (err)
			not_ok("detach %s through libxdp: %s", o.detach, strerror(-err));
		else
			ok("detach %s through libxdp; left: %s", o.detach, state_str(&before, b1, sizeof(b1)));
		return n_fail ? 1 : 0;
	}
	if (!o.old_obj || !o.new_obj || !o.refused_obj) {
		fprintf(stderr, "xdp_replace_check: --old, --new and --refused are needed\n");
		return 2;
	}
	mode = o.skb ? XDP_MODE_SKB : XDP_MODE_NATIVE;

	/* A (and the neighbour first), through libxdp as load attaches. */
	if (o.neighbour_obj) {
		neighbour = xdp_program__open_file(o.neighbour_obj, "xdp", NULL);
		if (libxdp_get_error(neighbour) || xdp_program__set_run_prio(neighbour, NEIGHBOUR_PRIO) ||
		    xdp_program__attach(neighbour, ifindex, mode, 0)) {
			fprintf(stderr, "xdp_replace_check: cannot attach the neighbour %s\n", o.neighbour_obj);
			return 2;
		}
	}
	if (o.link) {
		LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode_flag());

		a_obj = bpf_object__open_file(o.old_obj, NULL);
		if (!a_obj || set_generation(a_obj, GEN_OLD) || bpf_object__load(a_obj) ||
		    (a_link_fd = bpf_link_create(bpf_program__fd(bpf_object__next_program(a_obj, NULL)),
						 ifindex, BPF_XDP, &lo)) < 0) {
			fprintf(stderr, "xdp_replace_check: cannot attach A %s by a bpf_link: %s\n", o.old_obj,
				strerror(errno));
			return 2;
		}
	} else {
		a = xdp_program__open_file(o.old_obj, "xdp", NULL);
		if (libxdp_get_error(a) || set_generation(xdp_program__bpf_obj(a), GEN_OLD) ||
		    xdp_program__set_run_prio(a, OLD_PRIO) || xdp_program__attach(a, ifindex, mode, 0)) {
			fprintf(stderr, "xdp_replace_check: cannot attach A %s\n", o.old_obj);
			return 2;
		}
		a_obj = xdp_program__bpf_obj(a);
	}
	a_id = a ? xdp_program__id(a) : attached_id();
	seen_fd = bpf_map__fd(bpf_object__find_map_by_name(a_obj, "replace_seen"));
	read_state(&before);
	state_str(&before, b1, sizeof(b1));
	slot = index_of(&before, a_id);
	if (before.err || slot < 0 ||
	    (o.expect && strcmp(o.expect, before.dispatcher ? "dispatcher" : "single"))) {
		not_ok("A (id %u) attached, expected %s: %s", a_id, o.expect ? o.expect : "it there", b1);
		return 1;
	}
	ok("A (id %u) attached %s: %s", a_id,
	   o.link ? "by a bpf_link" : before.dispatcher ? "through libxdp, in its dispatcher"
							 : "through libxdp, on its own (no dispatcher here)", b1);

	/* What must fail, leaving everything as it was. */
	expect_refused("a replacement the verifier refuses", o.refused_obj, a_id, 0, &before);
	plain = load_plain(o.old_obj, &plain_fd, &plain_id);
	expect_refused("a program id loaded but not attached here", o.new_obj, plain_id, -ENOENT, &before);
	bpf_object__close(plain);
	if (before.dispatcher) {
		setenv(XDP_OBJECT_ENVVAR, "/nonexistent/xdp-replace-check", 1);
		expect_refused("no xdp-dispatcher.o where LIBXDP_OBJECT_PATH says", o.new_obj, a_id, -ENOENT,
			       &before);
		unsetenv(XDP_OBJECT_ENVVAR);
		expect_refused("the dispatcher's own id", o.new_obj, before.main_id, -EINVAL, &before);
	}
	check_changed_meanwhile(o.new_obj, o.old_obj, a_id, &before);
	check_other_version(1, o.new_obj, a_id, &before);
	check_other_version(3, o.new_obj, a_id, &before);

	/* The replacement. */
	b_id = check_replace(&o, a_id, &before);
	if (b_id) {
		check_after(a_id, b_id, &before);
		if (!o.keep)
			check_detach(b_id, &before, slot);
	}
	if (a)
		xdp_program__close(a);
	else
		bpf_object__close(a_obj);
	if (a_link_fd >= 0 && !o.keep)
		close(a_link_fd);
	if (neighbour && !o.keep) {
		err = xdp_program__detach(neighbour, ifindex, mode, 0);
		if (err)
			not_ok("cannot detach the neighbour through libxdp: %s", strerror(-err));
	}
	xdp_program__close(neighbour);
	return n_fail ? 1 : 0;
}
