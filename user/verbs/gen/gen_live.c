// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen, the live-frames engine: bpf/gen.bpf.c run by
 * BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES writes each frame and
 * redirects it out of IFNAME.  The fastest engine where the kernel allows
 * it; hardened and sandboxed kernels refuse live frames (EPERM), which
 * open finds out with one run that sends nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "gen.h"
#include "gen.skel.h"

#define GEN_REPEAT_MAX 0x7fffffffULL /* runs per BPF_PROG_TEST_RUN call, at most */

static struct gen_bpf *skel_of(const struct gen_ctx *g)
{
	return g->engine_state;
}

/* One live run of the program with every quota 0: it sends nothing, but the kernel must allow it. */
static int probe_live(struct gen_ctx *g, char *why, size_t len)
{
	struct xdp_md ctx_in = { .data_end = (uint32_t)g->len, .ingress_ifindex = (uint32_t)g->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = g->frame, .data_size_in = (uint32_t)g->len,
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in), .repeat = 1,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	char eb[128];
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel_of(g)->progs.xdp_gen), &r);

	if (err)
		snprintf(why, len, "BPF_PROG_TEST_RUN with live frames: %s", err_str(err, eb, sizeof(eb)));
	return err;
}

static int fill_zipf(struct gen_ctx *g, char *why, size_t len)
{
	uint32_t nslots = 1u << GEN_ZIPF_SLOTS_LOG2, *keys, i;
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	char eb[128];
	int err;

	keys = malloc(sizeof(*keys) * nslots);
	if (!keys) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < nslots; i++)
		keys[i] = i;
	err = bpf_map_update_batch(bpf_map__fd(skel_of(g)->maps.gen_zipf), keys, g->z.slots, &nslots, &bo);
	free(keys);
	if (err)
		snprintf(why, len, "cannot fill the Zipf table: %s", err_str(err, eb, sizeof(eb)));
	return err;
}

static int live_open(struct gen_ctx *g, char *why, size_t len)
{
	struct gen_bpf *skel = gen_bpf__open();
	uint32_t zero = 0;
	char eb[128];
	int err;

	if (!skel) {
		err = -errno;
		snprintf(why, len, "cannot open the generator object: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	g->engine_state = skel;
	memcpy((void *)&skel->rodata->gen_params, &g->params, sizeof(g->params));
	err = gen_bpf__load(skel);
	if (err) {
		snprintf(why, len, "cannot load the generator: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	err = probe_live(g, why, len);
	if (err)
		return err;
	if (g->o.dist == GEN_DIST_ZIPF) {
		err = fill_zipf(g, why, len);
		if (err)
			return err;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.gen_state), &zero, g->states, 0)) {
		err = -errno;
		snprintf(why, len, "cannot set the per-CPU source shares: %s", err_str(err, eb, sizeof(eb)));
		return err;
	}
	snprintf(g->engine_mode, sizeof(g->engine_mode), "BPF_PROG_TEST_RUN live frames");
	return 0;
}

/*
 * One long BPF_PROG_TEST_RUN per thread: each call pays tens of
 * milliseconds of set-up and tear-down (page pool, RCU grace period), so
 * short calls would halve the rate.  The program itself enforces quota and
 * pace; the main thread ends a call early with SIGUSR1 (-EINTR).
 */
static void live_send(struct gen_thread *t)
{
	struct gen_ctx *g = t->g;
	int prog_fd = bpf_program__fd(skel_of(g)->progs.xdp_gen);
	/* Unpaced with a count: the runs are the frames; otherwise run until told. */
	bool counted = !g->o.duration_ns && !g->o.rate;
	uint64_t left = counted ? g->states[t->cpu].quota : 0;

	while (!gen_thread_stopping(t) && (!counted || left)) {
		struct xdp_md ctx_in = { .data_end = (uint32_t)g->len,
					 .ingress_ifindex = (uint32_t)g->ifindex };
		uint64_t n = counted && left < GEN_REPEAT_MAX ? left : GEN_REPEAT_MAX;
		LIBBPF_OPTS(bpf_test_run_opts, r, .data_in = g->frame,
			    .data_size_in = (uint32_t)g->len, .ctx_in = &ctx_in,
			    .ctx_size_in = sizeof(ctx_in), .repeat = (int)n,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		int err = bpf_prog_test_run_opts(prog_fd, &r);

		if (err == -EINTR)
			continue; /* stopping says whether that was the end */
		if (err) {
			gen_thread_fail(t, err, "BPF_PROG_TEST_RUN (live frames)");
			return;
		}
		left -= counted ? n : 0;
	}
}

/* Paced with a count: whether every CPU has sent its quota (the program counts). */
static bool live_done(struct gen_ctx *g)
{
	uint32_t i, zero = 0;
	bool met = true;

	if (g->o.duration_ns || !g->o.rate ||
	    bpf_map_lookup_elem(bpf_map__fd(skel_of(g)->maps.gen_state), &zero, g->states))
		return false;
	for (i = 0; i < g->o.threads; i++)
		met &= g->states[g->cpus[i]].sent >= g->states[g->cpus[i]].quota;
	return met;
}

/* The counters, from the per-CPU maps: 0, or 1 after saying why. */
static int live_collect(struct gen_ctx *g)
{
	uint32_t zero = 0, k, c;
	uint64_t *v;
	char eb[128];

	if (bpf_map_lookup_elem(bpf_map__fd(skel_of(g)->maps.gen_state), &zero, g->states)) {
		pr_err("cannot read the generator's counters: %s", err_str(-errno, eb, sizeof(eb)));
		return 1;
	}
	if (g->o.dist != GEN_DIST_HEAVY)
		return 0;
	v = calloc(g->ncpus_possible, sizeof(*v));
	if (!v) {
		pr_err("out of memory");
		return 1;
	}
	for (k = 0; k < g->o.heavy; k++) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel_of(g)->maps.gen_heavy_sent), &k, v)) {
			pr_err("cannot read the heavy sources' counters: %s", err_str(-errno, eb, sizeof(eb)));
			free(v);
			return 1;
		}
		g->heavy_sent[k] = 0;
		for (c = 0; c < g->ncpus_possible; c++)
			g->heavy_sent[k] += v[c];
	}
	free(v);
	return 0;
}

static void live_close(struct gen_ctx *g)
{
	gen_bpf__destroy(skel_of(g));
	g->engine_state = NULL;
}

const struct gen_engine gen_engine_live = {
	.name = "live",
	.open = live_open,
	.send = live_send,
	.done = live_done,
	.collect = live_collect,
	.close = live_close,
};
