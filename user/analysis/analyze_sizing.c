// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_sizing.h"
#include "backend.h"
#include "layout.h"
#include "pacer_sketch.h"
#include "pacer_ticks.h"

#define NO_TICK UINT64_MAX
#define DEFAULT_MAX_SIM_BYTES (256ULL << 20)

double sizing_scale(uint64_t sample_src_thresh)
{
	if (!sample_src_thresh)
		return 0;
	return 4294967296.0 / (double)sample_src_thresh;
}

uint32_t sizing_target_lines_log2(uint32_t sim_lines_log2, double scale)
{
	/* The epsilon keeps an exact power of two (1/16 -> 4.0) from rounding up. */
	return (uint32_t)ceil((double)sim_lines_log2 + log2(scale) - 1e-9);
}

int sizing_sim_lines_log2(uint32_t target_lines_log2, double scale)
{
	double l = floor((double)target_lines_log2 - log2(scale) + 1e-9);

	return l < 0 ? -1 : (int)l;
}

uint64_t sizing_target_lines(uint32_t sim_lines, double scale)
{
	/* The epsilon keeps an exact product (3 x 64) from rounding up. */
	return (uint64_t)ceil((double)sim_lines * scale - 1e-6);
}

uint32_t sizing_sim_lines(uint32_t target_lines, double scale)
{
	return (uint32_t)floor((double)target_lines / scale + 1e-6);
}

/* ceil(log2(lines)): the magnitude pacer_layout.lines_log2 gives any line count. */
static uint32_t lines_log2_ceil(uint64_t lines)
{
	uint32_t lg = 0;

	while (lg < 63 && (1ULL << lg) < lines)
		lg++;
	return lg;
}

uint64_t sizing_header_width(const struct pacer_file_header *h)
{
	return backend_of(h->backend)->width(h->kind, h->rows, h->lines_log2, h->lines);
}

void sizing_params_from_header(struct sizing_params *p, const struct pacer_file_header *h)
{
	memset(p, 0, sizeof(*p));
	p->backend = h->backend;
	p->on_full = h->on_full;
	p->kind = h->kind;
	p->policy = h->policy;
	p->placement = h->placement;
	p->tick_shift = h->tick_shift;
	p->thresh = h->thresh_ticks;
	p->rate_n = h->rate_n;
	p->ncpus = h->ncpus;
	p->interval_ns = h->interval_ns;
	p->sample_src_thresh = h->sample_src_thresh;
	p->cur_rows = h->rows;
	p->cur_lines_log2 = h->lines_log2;
	p->cur_lines = h->lines;
}

/* The replayed stream: sampled-source packets only, with precomputed ids. */
struct replay {
	uint64_t n, nviews;
	uint64_t *ts;      /* shifted so epochs never alias at the start (see prepare) */
	uint64_t *hash;    /* per record: the source's hash under the simulation key */
	uint32_t *view;    /* per record: source (shared) or (source, CPU) (per-CPU) */
	uint16_t *cpu;
	uint32_t ncopies;  /* sketches simulated side by side: 1, or one per CPU */
	uint64_t *last;    /* per view: tick of the last update the exact table saw */
};

static void replay_free(struct replay *r)
{
	free(r->ts);
	free(r->hash);
	free(r->view);
	free(r->cpu);
	free(r->last);
}

static uint64_t source_hash(const struct an_source *src, const __u64 key[2])
{
	uint64_t lo, hi;
	uint32_t v4;

	if (src->family == 4) {
		memcpy(&v4, src->addr, 4);
		return pacer_hash_v4(key, v4);
	}
	memcpy(&lo, src->addr, 8);
	memcpy(&hi, src->addr + 8, 8);
	return pacer_hash_v6(key, lo, hi);
}

/* The source-sampled packets as the replay needs them: time, hash, view, copy. */
static int replay_items(const struct an_stream *s, const struct sizing_params *p,
			struct replay *r)
{
	int percpu = p->placement == PACER_PLACEMENT_PERCPU, ins, ret = -ENOMEM;
	uint64_t *src_hash, i, n = 0, len = s->n ? s->n : 1;
	struct an_map views = { 0 };

	r->ncopies = percpu ? (uint32_t)s->max_cpu + 1 : 1;
	src_hash = malloc((s->nsrc ? s->nsrc : 1) * sizeof(*src_hash));
	r->ts = malloc(len * sizeof(*r->ts));
	r->hash = malloc(len * sizeof(*r->hash));
	r->view = malloc(len * sizeof(*r->view));
	r->cpu = malloc(len * sizeof(*r->cpu));
	if (!src_hash || !r->ts || !r->hash || !r->view || !r->cpu || an_map_init(&views, s->nsrc))
		goto out;
	for (i = 0; i < s->nsrc; i++)
		src_hash[i] = source_hash(&s->src[i], p->key);
	for (i = 0; i < s->n; i++) {
		const struct an_record *a = &s->rec[i];
		uint64_t *v;

		if (!(a->flags & PACER_REC_SAMPLED_SOURCE))
			continue;
		v = an_map_get(&views, percpu ? (uint64_t)a->src << 16 | a->cpu : a->src, views.n, &ins);
		if (!v)
			goto out;
		r->ts[n] = a->ts_ns;
		r->hash[n] = src_hash[a->src];
		r->view[n] = (uint32_t)*v;
		r->cpu[n] = percpu ? a->cpu : 0;
		n++;
	}
	r->n = n;
	r->nviews = views.n;
	r->last = malloc((r->nviews ? r->nviews : 1) * sizeof(*r->last));
	ret = r->last ? 0 : -ENOMEM;
out:
	free(src_hash);
	an_map_free(&views);
	return ret;
}

/* The load: distinct views per interval-long tumbling window, per copy (peak and mean). */
static int measure_load(const struct replay *r, uint64_t interval_ns, struct sizing_result *out)
{
	uint64_t *seen = malloc((r->nviews ? r->nviews : 1) * sizeof(*seen));
	uint64_t *per_copy = calloc(r->ncopies, sizeof(*per_copy));
	uint64_t i, window = NO_TICK, windows = 0, sum = 0;

	if (!seen || !per_copy) {
		free(seen);
		free(per_copy);
		return -ENOMEM;
	}
	for (i = 0; i < r->nviews; i++)
		seen[i] = NO_TICK;
	out->n_peak = 0;
	for (i = 0; i <= r->n; i++) {
		uint64_t w = i < r->n ? (r->ts[i] - r->ts[0]) / interval_ns : NO_TICK;
		uint64_t active = 0, total = 0;
		uint32_t c;

		if (w != window && window != NO_TICK) {
			for (c = 0; c < r->ncopies; c++) {
				active += per_copy[c] != 0;
				total += per_copy[c];
				if ((double)per_copy[c] > out->n_peak)
					out->n_peak = (double)per_copy[c];
				per_copy[c] = 0;
			}
			if (active) {
				windows++;
				sum += total / active;
			}
		}
		window = w;
		if (i == r->n)
			break;
		if (seen[r->view[i]] != w) {
			seen[r->view[i]] = w;
			per_copy[r->cpu[i]]++;
		}
	}
	out->n_mean = windows ? (double)sum / (double)windows : 0;
	free(seen);
	free(per_copy);
	return 0;
}

static int prepare(const struct an_stream *s, const struct sizing_params *p, struct replay *r,
		   struct sizing_result *out)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = replay_items(s, p, r);
	return ret ? ret : measure_load(r, p->interval_ns, out);
}

/* Copy c of the simulated structure (each d->sim_size bytes). */
static void *sim_copy(void *sims, const struct backend_desc *d, uint32_t c)
{
	return (char *)sims + (size_t)c * d->sim_size;
}

/* Replay at one geometry (pt's rows, sim_lines_log2, sim_lines): fills packets, eligible, false_drops, evictions. */
static int simulate(const struct replay *r, const struct sizing_params *p, struct sizing_point *pt)
{
	const struct backend_desc *d = backend_of(p->backend);
	const struct backend_sim_cfg cfg = {
		.rows = pt->rows, .kind = p->kind, .lines_log2 = pt->sim_lines_log2,
		.lines = pt->sim_lines, .tick_shift = p->tick_shift, .thresh = p->thresh,
		.policy = p->policy, .on_full = p->on_full, .key = p->key,
	};
	void *sims = calloc(r->ncopies, d->sim_size);
	uint32_t c, inited = 0;
	uint64_t i;
	int ret = 0;

	if (!sims)
		return -ENOMEM;
	for (c = 0; c < r->ncopies; c++, inited++) {
		ret = d->sim_init(sim_copy(sims, d, c), &cfg);
		if (ret)
			goto out;
	}
	for (i = 0; i < r->nviews; i++)
		r->last[i] = NO_TICK;
	pt->packets = pt->eligible = pt->false_drops = pt->evictions = 0;
	for (i = 0; i < r->n; i++) {
		uint64_t tick = pacer_now_tick(r->ts[i], p->tick_shift), *last = &r->last[r->view[i]];
		int drop = d->sim_packet(sim_copy(sims, d, r->cpu[i]), r->hash[i], r->ts[i]);
		int eligible = *last == NO_TICK || tick - *last >= p->thresh;

		pt->packets++;
		if (eligible) {
			pt->eligible++;
			pt->false_drops += drop;
		}
		if (pacer_should_update(p->policy, drop))
			*last = tick;
	}
	for (c = 0; c < r->ncopies; c++)
		pt->evictions += d->sim_evictions(sim_copy(sims, d, c));
out:
	for (c = 0; c < inited; c++)
		d->sim_free(sim_copy(sims, d, c));
	free(sims);
	return ret;
}

/* Whether load would take the point's geometry at full scale (its own checks). */
static int point_loadable(const struct sizing_params *p, const struct backend_desc *d,
			  const struct sizing_point *pt)
{
	struct layout_req r = {
		.width = pt->width_cells, .rows = d->sized_by_rows ? pt->rows : 1,
		.kind = p->kind, .placement = p->placement, .backend = p->backend,
		.ncpus = p->ncpus ? p->ncpus : 1,
	};
	char why[160];

	return !layout_check_geometry(&r, why, sizeof(why));
}

static void finish_point(const struct sizing_params *p, const struct sizing_result *out,
			 struct sizing_point *pt)
{
	const struct backend_desc *d = backend_of(p->backend);
	uint64_t errors = pt->false_drops + pt->evictions;

	pt->rate = pt->eligible ? (double)errors / (double)pt->eligible : 0;
	/* Zero events in E trials: 3/E is the 95 % upper bound ("rule of three"). */
	if (!pt->eligible)
		pt->rate_upper95 = 1;
	else if (!errors)
		pt->rate_upper95 = 3.0 / (double)pt->eligible;
	else
		pt->rate_upper95 = pt->rate + 2.0 * sqrt((double)errors) / (double)pt->eligible;
	pt->model_rate = d->model_rate(p->kind, pt->rows, pt->sim_lines_log2, pt->sim_lines, out->n_peak);
	if (pt->sim_lines) {
		uint64_t t = sizing_target_lines(pt->sim_lines, out->scale);

		pt->target_lines = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
		pt->target_lines_exact = log2((double)pt->sim_lines) + out->log2_scale;
		pt->target_lines_log2 = lines_log2_ceil(pt->target_lines);
	} else {
		pt->target_lines_exact = pt->sim_lines_log2 + out->log2_scale;
		pt->target_lines_log2 = sizing_target_lines_log2(pt->sim_lines_log2, out->scale);
	}
	pt->target_bytes = geom_bytes_lines(p->kind, pt->rows, pt->target_lines_log2, pt->target_lines,
					    p->placement, p->ncpus);
	pt->width_cells = d->width(p->kind, pt->rows, pt->target_lines_log2, pt->target_lines);
	pt->loadable = point_loadable(p, d, pt);
	if (pt->simulated)
		pt->meets = pt->eligible && pt->rate <= p->target &&
			    (pt->rate_upper95 <= p->target || pt->model_rate <= p->target);
	else
		pt->meets = pt->model_rate <= p->target;
	/* What is recommended is what load takes: a narrower sketch is no advice. */
	pt->meets = pt->meets && pt->loadable;
}

static int add_point(struct sizing_result *out, size_t *cap, const struct sizing_point *pt)
{
	if (out->npts == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct sizing_point *np = realloc(out->pts, n * sizeof(*np));

		if (!np)
			return -ENOMEM;
		out->pts = np;
		*cap = n;
	}
	out->pts[out->npts++] = *pt;
	return 0;
}

static int rows_ok(uint32_t kind, uint32_t rows)
{
	/* The blocked layout splits a line into rows segments: powers of two only. */
	return kind == PACER_LAYOUT_ROWS || !(rows & (rows - 1));
}

/* The sweep's progress reporting and its simulation budget. */
struct sizing_progress {
	an_progress_fn progress;
	void *ctx;
	uint64_t max_sim;
	size_t done, todo;
};

/* Parameters no recording produces, or a recording sizing cannot replay: -EINVAL, -ENODATA. */
static int sizing_refuse(const struct an_stream *s, const struct sizing_params *p,
			 struct sizing_result *out)
{
	const struct backend_desc *d = backend_of(p->backend);

	if (!d || p->on_full >= PACER_TBL_FULL_MAX || (!d->sized_by_rows && p->kind != PACER_LAYOUT_ROWS) ||
	    p->kind > PACER_LAYOUT_BLOCKED || p->thresh < PACER_MIN_THRESH ||
	    p->thresh > PACER_MAX_THRESH || !p->interval_ns || p->target <= 0 || p->target >= 1)
		return -EINVAL;
	if (p->rate_n > 1) {
		snprintf(out->note, sizeof(out->note),
			 "sizing replays --interval pacing; this recording is --rate %u per %" PRIu64 " ns, which it does not model (the audit above does)",
			 p->rate_n, p->interval_ns);
		return -ENODATA;
	}
	out->scale = sizing_scale(p->sample_src_thresh);
	if (!out->scale || !s->n_source_sampled) {
		snprintf(out->note, sizeof(out->note),
			 "no source-sampled packets (record with --sample-sources 1/N): nothing to replay");
		return -ENODATA;
	}
	return 0;
}

/* Simulate one point (it is then `simulated`) and count it done for the progress report. */
static int simulate_point(struct replay *r, const struct sizing_params *p, struct sizing_point *pt,
			  struct sizing_progress *sp)
{
	int ret;

	pt->simulated = 1;
	ret = simulate(r, p, pt);
	if (ret)
		return ret;
	sp->done++;
	if (sp->progress)
		sp->progress(sp->ctx, "sizing", sp->done, sp->todo > sp->done ? sp->todo : sp->done + 1);
	return 0;
}

/* Widths for rows from start up, simulated while affordable, until one meets the target. */
static int sweep_rows(struct replay *r, const struct sizing_params *p, struct sizing_result *out,
		      uint32_t rows, uint32_t start, size_t *cap, struct sizing_progress *sp)
{
	uint32_t lmax = backend_of(p->backend)->max_lines_log2(p->kind, rows), l;
	int zero_seen = 0, ret;

	for (l = start; sizing_target_lines_log2(l, out->scale) <= lmax; l++) {
		struct sizing_point pt = { .rows = rows, .sim_lines_log2 = l };
		uint64_t sim_bytes = pacer_total_lines(p->kind, rows, l) * PACER_LINE_BYTES * r->ncopies;

		if (!zero_seen && sim_bytes <= sp->max_sim) {
			ret = simulate_point(r, p, &pt, sp);
			if (ret)
				return ret;
		}
		finish_point(p, out, &pt);
		ret = add_point(out, cap, &pt);
		if (ret)
			return ret;
		if (pt.simulated && !pt.false_drops)
			zero_seen = 1;
		/* Past a zero-drop width the model carries on; stop once it meets the target. */
		if ((zero_seen || !pt.simulated) && pt.meets)
			break;
	}
	return 0;
}

/* Sim lines of the k-th step of 1/8 octave above 2^start. */
static uint32_t eighth_octave(uint32_t start, uint32_t k)
{
	return (uint32_t)llround(exp2((double)start + (double)k / 8.0));
}

/* One point of any line count: simulated if affordable and not past a zero, then judged. */
static int lines_point(struct replay *r, const struct sizing_params *p, struct sizing_result *out,
		       uint32_t sim_lines, int zero_seen, size_t *cap, struct sizing_progress *sp,
		       struct sizing_point *pt)
{
	int ret;

	*pt = (struct sizing_point){ .rows = 1, .sim_lines = sim_lines,
				     .sim_lines_log2 = lines_log2_ceil(sim_lines) };
	if (!zero_seen && (uint64_t)sim_lines * PACER_LINE_BYTES * r->ncopies <= sp->max_sim) {
		ret = simulate_point(r, p, pt, sp);
		if (ret)
			return ret;
	}
	finish_point(p, out, pt);
	return add_point(out, cap, pt);
}

/*
 * Any line count (one row): sim lines in steps of 1/8 octave from 2^start
 * until one meets the target, then bisection between the last simulated
 * count that missed and the first that met, down to 1/64 octave, so the
 * recommendation is within about 1 % of the smallest size that meets it.
 */
static int sweep_lines(struct replay *r, const struct sizing_params *p, struct sizing_result *out,
		       uint32_t start, size_t *cap, struct sizing_progress *sp)
{
	uint32_t max_lines = 1u << backend_of(p->backend)->max_lines_log2(p->kind, 1);
	uint32_t k, lines, prev = 0, miss = 0, hit = 0;
	int zero_seen = 0, ret;
	struct sizing_point pt;

	for (k = 0;; k++) {
		lines = eighth_octave(start, k);
		if (lines < 2 || lines == prev)
			continue;
		if (sizing_target_lines(lines, out->scale) > max_lines)
			break;
		prev = lines;
		ret = lines_point(r, p, out, lines, zero_seen, cap, sp, &pt);
		if (ret)
			return ret;
		if (pt.simulated && !pt.false_drops && !pt.evictions)
			zero_seen = 1;
		if (pt.simulated && !pt.meets)
			miss = lines;
		if (pt.meets) {
			hit = pt.simulated ? lines : 0;
			break;
		}
	}
	/* Bisect (miss, hit) while the gap is above 1/64 octave (1.1 %). */
	while (miss && hit && hit - miss > 1 && (double)hit / (double)miss > 1.011) {
		lines = miss + (hit - miss) / 2;
		ret = lines_point(r, p, out, lines, 0, cap, sp, &pt);
		if (ret)
			return ret;
		if (pt.meets)
			hit = lines;
		else
			miss = lines;
	}
	return 0;
}

static int point_order(const void *a, const void *b)
{
	const struct sizing_point *x = a, *y = b;

	if (x->rows != y->rows)
		return x->rows < y->rows ? -1 : 1;
	return x->target_bytes < y->target_bytes ? -1 : x->target_bytes > y->target_bytes;
}

/* The smallest point that meets the target (fewer rows on a tie). */
static void pick_best(const struct sizing_params *p, struct sizing_result *out)
{
	size_t i;

	for (i = 0; i < out->npts; i++) {
		const struct sizing_point *pt = &out->pts[i];

		if (!pt->meets)
			continue;
		if (out->best < 0 || pt->target_bytes < out->pts[out->best].target_bytes ||
		    (pt->target_bytes == out->pts[out->best].target_bytes &&
		     pt->rows < out->pts[out->best].rows))
			out->best = (int)i;
	}
	if (out->best >= 0) {
		const struct sizing_point *b = &out->pts[out->best];

		out->best_by_model = !b->simulated || b->rate_upper95 > p->target;
	}
}

/* The recorded geometry, for comparison with the audit's measured false drops. */
static int size_current(struct replay *r, const struct sizing_params *p,
			struct sizing_result *out, uint64_t max_sim)
{
	int cur_l = sizing_sim_lines_log2(p->cur_lines_log2, out->scale), ret;

	out->current.rows = p->cur_rows;
	if (p->cur_lines) {
		uint32_t l = sizing_sim_lines(p->cur_lines, out->scale);

		if (l < 2 || (uint64_t)l * PACER_LINE_BYTES * r->ncopies > max_sim)
			return 0;
		out->current.sim_lines = l;
		out->current.sim_lines_log2 = lines_log2_ceil(l);
		out->current.simulated = 1;
		ret = simulate(r, p, &out->current);
		if (!ret)
			finish_point(p, out, &out->current);
		return ret;
	}
	if (cur_l < 0 || !rows_ok(p->kind, p->cur_rows) ||
	    pacer_total_lines(p->kind, p->cur_rows, (uint32_t)cur_l) * PACER_LINE_BYTES * r->ncopies >
		    max_sim)
		return 0;
	out->current.sim_lines_log2 = (uint32_t)cur_l;
	out->current.simulated = 1;
	ret = simulate(r, p, &out->current);
	if (!ret)
		finish_point(p, out, &out->current);
	return ret;
}

int sizing_run(const struct an_stream *s, const struct sizing_params *p, struct sizing_result *out,
	       an_progress_fn progress, void *ctx)
{
	const struct backend_desc *d = backend_of(p->backend);
	struct sizing_progress sp = { .progress = progress, .ctx = ctx,
				      .max_sim = p->max_sim_bytes ? p->max_sim_bytes
								  : DEFAULT_MAX_SIM_BYTES };
	uint32_t rows, start = 0, max_rows;
	size_t cap = 0;
	struct replay r;
	int ret;

	memset(out, 0, sizeof(*out));
	out->best = -1;
	ret = sizing_refuse(s, p, out);
	if (ret)
		return ret;
	max_rows = d->max_rows;
	out->log2_scale = log2(out->scale);
	ret = prepare(s, p, &r, out);
	if (ret)
		goto out;
	out->packets = r.n;
	/*
	 * Start where the load is ~4 keys per cell (the table: 2 per entry):
	 * narrower only repeats "everything collides".  The table has one row.
	 */
	while (start < 30 && (double)((uint64_t)d->sweep_from_per_line << (start + 1)) < out->n_peak)
		start++;
	if (d->any_line_count) {
		sp.todo = 40;
		ret = sweep_lines(&r, p, out, start, &cap, &sp);
		if (!ret && out->npts)
			qsort(out->pts, out->npts, sizeof(*out->pts), point_order);
	} else {
		sp.todo = max_rows * 12;
		for (rows = 1; rows <= max_rows && !ret; rows++)
			if (rows_ok(p->kind, rows))
				ret = sweep_rows(&r, p, out, rows, start, &cap, &sp);
	}
	if (ret)
		goto out;
	pick_best(p, out);
	ret = size_current(&r, p, out, sp.max_sim);
	if (!ret && progress)
		progress(ctx, "sizing", 1, 1);
out:
	replay_free(&r);
	if (ret)
		sizing_free(out);
	return ret;
}

void sizing_free(struct sizing_result *r)
{
	free(r->pts);
	r->pts = NULL;
	r->npts = 0;
}
