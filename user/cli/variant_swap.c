// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Program variants on a running pacer (variant_swap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cli_log.h"
#include "common.h"
#include "cli_values.h"
#include "classes_map.h"
#include "map_carry.h"
#include "pacer_budget.h"
#include "pin_keep.h"
#include "pin_ops.h"
#include "writer_lock.h"
#include "variant.h"
#include "variant_swap.h"
#include "verifier_log.h"
#include "version.h"
#include "xdp_replace.h"

uint32_t variant_floor(void)
{
	static bool said;
	const char *v = getenv("XDP_PACER_VARIANT");
	char buf[128], *tok, *save = NULL;
	uint32_t bits = 0, b;

	if (!v || !*v)
		return 0;
	if (!strcmp(v, "all"))
		return PACER_VARIANT_ALL;
	snprintf(buf, sizeof(buf), "%s", v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (b = 1; b <= PACER_VARIANT_ALL; b <<= 1)
			if (!strcmp(tok, variant_feature_name(b)))
				break;
		if (b > PACER_VARIANT_ALL) {
			if (!said)
				pr_err("warning: XDP_PACER_VARIANT: '%s' is not a stage (classes, lists, budget, sampling, observe, or all): carrying every stage",
				       tok);
			said = true;
			return PACER_VARIANT_ALL;
		}
		bits |= b;
	}
	return bits;
}

uint32_t variant_running(const struct pacer_handle *h)
{
	uint32_t zero = 0, bits;

	if (h->map_fd[PACER_MAP_VARIANT] < 0 ||
	    bpf_map_lookup_elem(h->map_fd[PACER_MAP_VARIANT], &zero, &bits))
		return PACER_VARIANT_ALL;
	return bits & PACER_VARIANT_ALL;
}

int variant_in_use_of(const int fd[PACER_MAP_MAX], struct pacer_config *cfg, uint32_t *bits)
{
	static struct pacer_class cur[PACER_MAX_CLASSES];
	struct pacer_budget_cfg b = { 0 };
	struct pacer_class_maps m = { .cfg = NULL };
	uint32_t size;
	int n = 0, err;

	/* The budget's first fields are every release's: read what this one knows. */
	if (fd[PACER_MAP_BUDGET_CFG] >= 0) {
		err = map_read_first(fd[PACER_MAP_BUDGET_CFG], &b, sizeof(b), &size);
		if (!err && size < sizeof(b))
			err = -EPROTO;
		if (err)
			return err;
	}
	pacer_class_maps_set_fds(&m, fd);
	m.cfg = cfg;
	err = pacer_classes_read(&m, cur, &n);
	if (err)
		return err;
	*bits = variant_needed(cfg, b.limit, cur, n);
	return 0;
}

int variant_in_use(const struct pacer_handle *h, uint32_t *bits)
{
	int err = variant_in_use_of(h->map_fd, h->cfg, bits);

	if (err)
		pr_err("cannot read the settings of the limiter on %s: %s", h->ifname, strerror(-err));
	return err;
}

static int carry_before_swap(struct bpf_object *obj, void *arg)
{
	return pin_keep_carry(arg, obj);
}

/* The object with h's layout and the variant bits, its maps h's own: 0 or -errno (said). */
static int open_variant(const struct pacer_handle *h, struct pin_keep *keep, uint32_t bits,
			struct bpf_object **obj)
{
	struct bpf_map *rodata, *variant;
	const void *bytes;
	size_t size;
	char eb[128];
	int err, i;

	bytes = pacer_object_bytes(&size);
	*obj = bpf_object__open_mem(bytes, size, NULL);
	if (!*obj) {
		err = -errno;
		pr_err("cannot open the BPF object: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	rodata = bpf_object__find_map_by_name(*obj, ".rodata");
	variant = bpf_object__find_map_by_name(*obj, ".rodata.variant");
	if (!rodata || !variant || bpf_map__value_size(variant) != sizeof(bits) ||
	    bpf_map__set_initial_value(rodata, &h->layout, sizeof(h->layout)) ||
	    bpf_map__set_initial_value(variant, &bits, sizeof(bits))) {
		pr_err("the BPF object has no layout or variant this CLI can set");
		return -EPROTO;
	}
	/* The sizes load chose (the sketch's lines, the filter's cells) are the kept maps'. */
	for (i = 0; i < PACER_MAP_MAX; i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(*obj, pacer_maps[i].map_name);
		struct bpf_map_info info = {};
		uint32_t len = sizeof(info);

		if (map && keep->fd[i] >= 0 && pacer_maps[i].keep != PACER_KEEP_LOAD &&
		    !bpf_obj_get_info_by_fd(keep->fd[i], &info, &len) &&
		    bpf_map__set_max_entries(map, info.max_entries))
			return -EINVAL;
	}
	err = pin_keep_plan(keep, *obj, true);
	if (err)
		return err;
	/* A variant keeps every map as it is; an earlier release's pins take a load --replace. */
	for (i = 0; i < PACER_MAP_MAX; i++)
		if (keep->how[i] == PIN_KEEP_CARRY || keep->how[i] == PIN_KEEP_FRESH) {
			pr_err("the limiter on %s runs maps of release %.24s ('%s' would not be kept as it is): run 'xdp-pacer load %s --replace' first",
			       h->ifname, keep->meta.release, pacer_maps[i].pin_name, h->ifname);
			return -EPROTO;
		}
	return 0;
}

int variant_swap(struct pacer_handle *h, uint32_t bits)
{
	static char log[64 * 1024];
	struct bpf_object *obj = NULL;
	struct bpf_program *prog;
	struct pacer_handle n;
	struct pin_keep keep;
	char dir[256], was[96], now[96], cause[512];
	uint32_t new_id = 0, old_id = h->prog_id;
	int new_fd = -1, err;

	pin_keep_init(&keep);
	if (pin_dir(h->ifname, dir, sizeof(dir))) {
		pr_err("cannot name the pin directory of %s", h->ifname);
		return -ENAMETOOLONG;
	}
	err = pin_keep_from_prog(&keep, h->prog_fd, dir);
	if (!err && !keep.layout_ok) {
		pr_err("the limiter on %s has no layout this release reads", h->ifname);
		err = -EPROTO;
	}
	if (!err)
		err = open_variant(h, &keep, bits, &obj);
	if (err)
		goto out;
	prog = bpf_object__find_program_by_name(obj, "xdp_pacer");
	if (!prog) {
		pr_err("the BPF object has no program xdp_pacer");
		err = -ENOENT;
		goto out;
	}
	log[0] = 0;
	prog_load_prepare(prog, log, sizeof(log), VERIFIER_LOG_STATS);
	err = xdp_replace_program(h->ifindex, h->prog_id, obj, prog, carry_before_swap, &keep,
				  &new_fd, &new_id);
	if (err) {
		if (bpf_program__fd(prog) < 0 && !prog_refusal_cause(log, cause, sizeof(cause)))
			pr_err("cannot load the variant (%s) for %s: %s",
			       variant_describe(bits, now, sizeof(now)), h->ifname, cause);
		pr_err("the limiter on %s is unchanged (program id %u, stages: %s)", h->ifname,
		       h->prog_id, variant_describe(variant_running(h), was, sizeof(was)));
		goto out;
	}
	/* Swapped: from here the new program runs; the pins follow it. */
	err = pin_keep_pin(obj, new_fd, dir, pacer_version);
	/* On stderr: readers (events --json, top) keep their standard output their own. */
	pr_err("%s: program id %u swapped for id %u, every map kept; stages: %s (were: %s)",
		h->ifname, old_id, new_id, variant_describe(bits, now, sizeof(now)),
		variant_describe(variant_running(h), was, sizeof(was)));
	if (!pacer_handle_open(h->ifname, &n)) {
		pacer_handle_close(h);
		*h = n;
	} else if (!err) {
		err = -ENOENT;
	}
out:
	pin_keep_close(&keep);
	bpf_object__close(obj);
	return err;
}

int variant_ensure(struct pacer_handle *h, uint32_t need)
{
	uint32_t run;

	if (!h->pinned)
		return 0;
	/* Another writer may have swapped it since h was opened: go on with the new one. */
	if (!pacer_handle_follow(h))
		return -ENOENT;
	need |= variant_floor();
	run = variant_running(h);
	if ((run & need) == need)
		return 0;
	return variant_swap(h, run | need);
}

int variant_settle(struct pacer_handle *h)
{
	uint32_t want, run;
	int err;

	if (!h->pinned)
		return 0;
	if (!pacer_handle_follow(h))
		return -ENOENT;
	err = variant_in_use(h, &want);
	if (err)
		return err;
	want |= variant_floor();
	run = variant_running(h);
	return run == want ? 0 : variant_swap(h, want);
}

int variant_store_sampling(struct pacer_handle *h, uint64_t src, uint64_t pkt)
{
	int lock = pins_writer_lock(h->ifname, PACER_LOCK_WAIT_DEFAULT_S);

	if (lock < 0 && (src | pkt))
		return -1;
	if ((src | pkt) && variant_ensure(h, PACER_F_SAMPLING)) {
		pins_writer_unlock(lock);
		return -1;
	}
	/* Word-sized stores into the live .data, as set makes them. */
	h->cfg->sample_src_thresh = src;
	h->cfg->sample_pkt_thresh = pkt;
	__sync_synchronize();
	/* Switching off without the lock (its holder is stuck) leaves the stage: a superset. */
	if (lock >= 0)
		variant_settle(h);
	pins_writer_unlock(lock);
	return 0;
}

const char *variant_explain(const struct pacer_handle *h, char *buf, size_t len)
{
	uint32_t run = variant_running(h), use = 0;
	char r[96], u[96];

	variant_describe(run, r, sizeof(r));
	if (variant_in_use(h, &use))
		snprintf(buf, len, "%s", r);
	else if (run == use)
		snprintf(buf, len, "%s (what the settings use)", r);
	else if (h->map_fd[PACER_MAP_VARIANT] < 0)
		snprintf(buf, len, "%s (a program of an earlier release carries every stage; the settings use: %s)",
			 r, variant_describe(use, u, sizeof(u)));
	else if (!h->pinned)
		snprintf(buf, len, "%s (the compiled defaults of an object attached without xdp-pacer load; the settings use: %s)",
			 r, variant_describe(use, u, sizeof(u)));
	else if ((use | variant_floor()) == run)
		snprintf(buf, len, "%s (XDP_PACER_VARIANT=%s; the settings use: %s)", r,
			 getenv("XDP_PACER_VARIANT"), variant_describe(use, u, sizeof(u)));
	else
		snprintf(buf, len, "%s (the settings use: %s; the next change settles it)", r,
			 variant_describe(use, u, sizeof(u)));
	return buf;
}
