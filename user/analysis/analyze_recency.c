// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Table 1 runner.  The ground truth is computed here from the stream itself
 * (position of each source's previous item), independently of the exact
 * oracle under test, so the oracle's own row is checked too.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "analyze_recency.h"
#include "analyze_recency_structs.h"
#include "pacer_hash.h"
#include "time_now.h"
#include "pacer_ticks.h"

#define ABSENT UINT64_MAX

unsigned t1_hist_bin(uint64_t gap_ns)
{
	double l;
	unsigned b;

	if (gap_ns == ABSENT)
		return T1_HIST_BINS - 1;
	if (gap_ns < (1ULL << T1_HIST_MIN_LOG2))
		return 0;
	l = log2((double)gap_ns);
	if (l >= T1_HIST_MAX_LOG2)
		return T1_HIST_BINS - 1;
	b = 1 + (unsigned)((l - T1_HIST_MIN_LOG2) * T1_BINS_PER_OCTAVE);
	return b < T1_HIST_BINS - 1 ? b : T1_HIST_BINS - 2;
}

double t1_hist_edge(unsigned bin)
{
	if (bin == 0)
		return 0;
	return pow(2.0, T1_HIST_MIN_LOG2 + (double)(bin - 1) / T1_BINS_PER_OCTAVE);
}

uint64_t t1_default_window(const struct an_stream *s, uint64_t interval_ns)
{
	uint64_t lo = 0, hi, best = 0, n = 0;
	uint64_t *ts = malloc((s->n ? s->n : 1) * sizeof(*ts));

	if (!ts)
		return 64;
	for (hi = 0; hi < s->n; hi++)
		if (s->rec[hi].flags & PACER_REC_SAMPLED_SOURCE)
			ts[n++] = s->rec[hi].ts_ns;
	/* Two pointers over the time-sorted items: the most inside [t, t + interval). */
	for (hi = 0; hi < n; hi++) {
		while (ts[hi] - ts[lo] >= interval_ns)
			lo++;
		if (hi - lo + 1 > best)
			best = hi - lo + 1;
	}
	free(ts);
	return best < 64 ? 64 : best;
}

/* log2 C(N, W) for W << N, by Stirling: W log2(N/W) + W log2(e), minus a small term. */
static double log2_binom(double log2_n, double w)
{
	if (w <= 0)
		return 0;
	return w * (log2_n - log2(w)) + w * log2(exp(1.0)) - 0.5 * log2(2 * M_PI * w);
}

/*
 * The key a structure sees: on IPv4-only streams the masked address itself
 * (below 2^max_prefix, the universe the bounds use), else the source id's
 * 64-bit mix (ids are dense; structures may hash).
 */
static uint64_t item_key(const struct an_stream *s, uint32_t src, unsigned key_bits)
{
	const uint8_t *a = s->src[src].addr;
	uint32_t v4 = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 | (uint32_t)a[2] << 8 | a[3];

	if (key_bits == 64)
		return pacer_mix64((uint64_t)src + 0x9e3779b97f4a7c15ULL);
	return key_bits ? v4 >> (32 - key_bits) : 0;
}

/*
 * Distinct sources among the last W + 1 items (what a recency structure
 * must hold), kept as item i arrives; last_pos holds positions before i.
 */
static void distinct_step(struct t1_result *out, const uint32_t *item_src, const uint64_t *last_pos,
			  uint64_t i, uint64_t *count, double *sum)
{
	uint64_t w = out->window;

	if (i > w && last_pos[item_src[i - w - 1]] == i - w - 1)
		(*count)--;  /* the item leaving was its source's last */
	if (last_pos[item_src[i]] == ABSENT || last_pos[item_src[i]] + w < i)
		(*count)++;
	if (*count > out->distinct_max)
		out->distinct_max = *count;
	if (i >= w)
		*sum += (double)*count;
}

/*
 * Each structure's own promise for an item in the window (r <= W):
 * HistoricalMembership underestimates by at most a 1/k share of its
 * estimate, r_hat <= r <= (1 + 1/k) r_hat (so r = 0 needs r_hat = 0); the
 * block baseline is off by less than one block, |r_hat - r| <= D - 1; the
 * oracle is exact.
 */
static int within_promise(enum t1_kind k, uint64_t r, uint64_t est, uint32_t inv_eps, uint64_t d)
{
	switch (k) {
	case T1_HM:
		return est <= r && (r - est) * inv_eps <= est;
	case T1_BLOCK:
		return (est > r ? est - r : r - est) < d;
	default:
		return est == r;
	}
}

struct judged {
	double sum_rel, max_rel;
	uint64_t max_abs;
};

/* One run of Table 1: the sampled items and each structure's state while judging. */
struct t1_state {
	uint64_t n, *pos_ts, *last_pos, *last_admit, *keys;
	uint32_t *item_src, *item_est;
	uint8_t *item_drop;
	struct t1_struct st[T1_NSTRUCT];
	struct judged jd[T1_NSTRUCT];
	uint64_t slack[T1_NSTRUCT];
	int built[T1_NSTRUCT];
	uint64_t span_sum, span_n, distinct;
	double distinct_sum;
};

static void t1_state_free(struct t1_state *t)
{
	uint64_t k;

	for (k = 0; k < T1_NSTRUCT; k++)
		if (t->built[k])
			t1_struct_free(&t->st[k]);
	free(t->keys);
	free(t->pos_ts);
	free(t->item_src);
	free(t->item_drop);
	free(t->item_est);
	free(t->last_pos);
	free(t->last_admit);
}

/* The source-sampled records as items, their keys, and the universe they come from. */
static int t1_items(const struct an_stream *s, struct t1_state *t, struct t1_result *out)
{
	uint64_t nsrc = s->nsrc ? s->nsrc : 1, i;
	int v4_only = 1, max_prefix = 0;

	t->pos_ts = malloc(s->n * sizeof(*t->pos_ts));
	t->item_src = malloc(s->n * sizeof(*t->item_src));
	t->item_drop = malloc(s->n);
	t->item_est = malloc(s->n * sizeof(*t->item_est));
	t->last_pos = malloc(nsrc * sizeof(*t->last_pos));
	t->last_admit = malloc(nsrc * sizeof(*t->last_admit));
	t->keys = malloc(s->n * sizeof(*t->keys));
	if (!t->pos_ts || !t->item_src || !t->item_drop || !t->item_est || !t->last_pos ||
	    !t->last_admit || !t->keys)
		return -ENOMEM;
	for (i = 0; i < s->n; i++) {
		const struct an_record *a = &s->rec[i];

		if (!(a->flags & PACER_REC_SAMPLED_SOURCE))
			continue;
		t->pos_ts[t->n] = a->ts_ns;
		t->item_src[t->n] = a->src;
		t->item_drop[t->n] = a->verdict == PACER_REC_DROP;
		t->item_est[t->n] = a->est_age_ticks;
		t->n++;
		if (s->src[a->src].family == 6)
			v4_only = 0;
		if (s->src[a->src].prefix > max_prefix)
			max_prefix = s->src[a->src].prefix;
	}
	out->items = t->n;
	out->key_bits = v4_only ? (max_prefix ? (unsigned)max_prefix : 32) : 64;
	for (i = 0; i < t->n; i++)
		t->keys[i] = item_key(s, t->item_src[i], out->key_bits);
	for (i = 0; i < s->nsrc; i++)
		t->last_pos[i] = t->last_admit[i] = ABSENT;
	/* The universe: keys are prefixes of the recorded families (2^32 or 2^128 + 2^32). */
	out->universe_log2 = v4_only ? (max_prefix ? max_prefix : 32) : 128;
	return 0;
}

/* The paper's space bounds for the window, HistoricalMembership's and the block structure's. */
static void t1_paper_bounds(struct t1_result *out, uint32_t inv_eps)
{
	out->b_bits = log2_binom(out->universe_log2, (double)out->window);
	out->paper_hm_bits = (1 + 1.0 / inv_eps) *
			     (out->b_bits + (double)out->window * log2((double)inv_eps));
	out->paper_block_bits = (1 + (double)out->block_d / (double)out->window) *
				(out->b_bits + (double)out->window *
						       log2((double)out->window / (double)out->block_d));
}

static void t1_build(struct t1_state *t, struct t1_result *out, uint32_t inv_eps)
{
	uint64_t k;
	int ret;

	for (k = 0; k < T1_NSTRUCT; k++) {
		ret = t1_struct_init(&t->st[k], (enum t1_kind)k, out->window, inv_eps, out->block_d,
				     out->key_bits);
		out->row[k].name = t1_struct_name((enum t1_kind)k);
		if (ret) {
			snprintf(out->note, sizeof(out->note), "%s could not be built: %s",
				 out->row[k].name, strerror(-ret));
			continue;
		}
		t->built[k] = 1;
		out->row[k].ok = 1;
		t->slack[k] = t1_struct_slack(&t->st[k]);
	}
	out->slack_hm = t->built[T1_HM] ? t->slack[T1_HM] : 0;
	out->slack_block = t->built[T1_BLOCK] ? t->slack[T1_BLOCK] : 0;
}

/* Structure k's answer for item i against the exact recency (ABSENT: not seen before). */
static void t1_judge(struct t1_state *t, struct t1_result *out, const struct t1_params *p,
		     uint64_t k, uint64_t i, uint64_t exact, int exact_beyond)
{
	struct t1_row *row = &out->row[k];
	struct judged *jd = &t->jd[k];
	uint64_t est_gap, err;
	int64_t est;
	double rel;

	if (t1_struct_query_insert(&t->st[k], t->keys[i], &est))
		row->insert_failures++;
	/*
	 * Positions to time: recency r puts the previous occurrence at
	 * position i - 1 - r; one reaching before the stream clamps to its start.
	 */
	est_gap = est < 0 ? ABSENT
			  : t->pos_ts[i] - t->pos_ts[(uint64_t)est >= i ? 0 : i - 1 - (uint64_t)est];
	if (k == T1_HM)
		out->hist[T1_H_HM][t1_hist_bin(est_gap)]++;
	if ((est_gap == ABSENT || est_gap >= p->interval_ns) != exact_beyond)
		row->verdict_diff++;
	if (exact == ABSENT || exact > out->window) {
		if (est >= 0 && (exact == ABSENT || exact > out->window + t->slack[k]))
			row->stale++;
		return;
	}
	row->in_window++;
	if (est < 0) {
		row->missed++;
		return;
	}
	err = (uint64_t)est > exact ? (uint64_t)est - exact : exact - (uint64_t)est;
	/* r = 0 promises an exact 0 from every structure: any error counts in full. */
	rel = (double)err / (double)(exact ? exact : 1);
	jd->sum_rel += rel;
	if (rel > jd->max_rel)
		jd->max_rel = rel;
	if (err > jd->max_abs)
		jd->max_abs = err;
	if (within_promise((enum t1_kind)k, exact, (uint64_t)est, p->inv_eps, out->block_d))
		row->within_bound++;
}

/* Item i through every structure, with the exact and policy histograms. */
static void t1_item(struct t1_state *t, struct t1_result *out, const struct t1_params *p,
		    uint64_t i)
{
	uint32_t src = t->item_src[i];
	/* The paper's recency: items since the previous occurrence, not counting it (0: just seen). */
	uint64_t exact = t->last_pos[src] == ABSENT ? ABSENT : i - t->last_pos[src] - 1;
	uint64_t exact_gap = exact == ABSENT ? ABSENT : t->pos_ts[i] - t->pos_ts[t->last_pos[src]];
	uint64_t policy_ref = p->policy == PACER_POLICY_QUIET ? t->last_pos[src] : t->last_admit[src];
	int exact_beyond = exact == ABSENT || exact_gap >= p->interval_ns;
	uint64_t k;

	distinct_step(out, t->item_src, t->last_pos, i, &t->distinct, &t->distinct_sum);
	if (exact != ABSENT && exact <= out->window) {
		t->span_sum += exact_gap;
		t->span_n += exact + 1;
	}
	out->hist[T1_H_EXACT][t1_hist_bin(exact_gap)]++;
	out->hist[T1_H_POLICY][t1_hist_bin(policy_ref == ABSENT ? ABSENT :
					   t->pos_ts[i] - t->pos_ts[policy_ref])]++;
	out->hist[T1_H_SKETCH][t1_hist_bin(t->item_est[i] == PACER_AGE_NEVER ? ABSENT :
					   pacer_ticks_ns(t->item_est[i], p->tick_shift))]++;
	for (k = 0; k < T1_NSTRUCT; k++)
		if (t->built[k])
			t1_judge(t, out, p, k, i, exact, exact_beyond);
	t->last_pos[src] = i;
	if (!t->item_drop[i])
		t->last_admit[src] = i;
}

/*
 * Row k's errors and memory from the judging pass, then its time on a fresh
 * structure with nothing else in the loop (the judging does too much per
 * item to time fairly): the first T1_TIMED_ITEMS items, many windows long.
 */
static void t1_finish_row(struct t1_state *t, struct t1_result *out, const struct t1_params *p,
			  uint64_t k)
{
	struct t1_row *row = &out->row[k];
	uint64_t timed = out->timed_items, i;
	volatile int64_t sink = 0;
	double t0;

	row->bytes = t1_struct_bytes(&t->st[k]);
	row->bits_per_item = (double)row->bytes * 8 / (double)out->window;
	row->mean_rel_err = row->in_window - row->missed ?
			    t->jd[k].sum_rel / (double)(row->in_window - row->missed) : 0;
	row->max_rel_err = t->jd[k].max_rel;
	row->max_abs_err = t->jd[k].max_abs;
	t1_struct_free(&t->st[k]);
	if (t1_struct_init(&t->st[k], (enum t1_kind)k, out->window, p->inv_eps, out->block_d,
			   out->key_bits)) {
		t->built[k] = 0; /* judged above, but no memory left to time it */
		return;
	}
	t0 = mono_s();
	for (i = 0; i < timed; i++) {
		int64_t est;

		t1_struct_query_insert(&t->st[k], t->keys[i], &est);
		sink += est;
	}
	(void)sink;
	row->ns_per_item = timed ? (mono_s() - t0) * 1e9 / (double)timed : 0;
}

int t1_run(const struct an_stream *s, const struct t1_params *p, struct t1_result *out,
	   an_progress_fn progress, void *ctx)
{
	struct t1_state *t;
	uint64_t i, k;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!p->inv_eps || !p->interval_ns)
		return -EINVAL;
	if (!s->n_source_sampled)
		return -ENODATA;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	out->inv_eps = p->inv_eps;
	out->window = p->window ? p->window : t1_default_window(s, p->interval_ns);
	out->block_d = out->window / p->inv_eps ? out->window / p->inv_eps : 1;
	ret = t1_items(s, t, out);
	if (ret)
		goto out;
	t1_paper_bounds(out, p->inv_eps);
	t1_build(t, out, p->inv_eps);
	for (i = 0; i < t->n; i++) {
		t1_item(t, out, p, i);
		if (progress && !(i & 0x3fff))
			progress(ctx, "table 1", i, t->n);
	}
	out->timed_items = t->n < T1_TIMED_ITEMS ? t->n : T1_TIMED_ITEMS;
	for (k = 0; k < T1_NSTRUCT; k++) {
		if (!t->built[k])
			continue;
		t1_finish_row(t, out, p, k);
		if (progress)
			progress(ctx, "timing", k + 1, T1_NSTRUCT);
	}
	out->distinct_mean = t->n > out->window ? t->distinct_sum / (double)(t->n - out->window)
						: (double)t->distinct;
	out->paper_hm_distinct_bits = (1 + 1.0 / p->inv_eps) *
				      (log2_binom(out->universe_log2, (double)out->distinct_max) +
				       (double)out->distinct_max * log2((double)p->inv_eps));
	out->window_span_s = t->span_n ? (double)t->span_sum / (double)t->span_n *
						 (double)out->window / 1e9 : 0;
	if (progress)
		progress(ctx, "table 1", t->n, t->n);
out:
	t1_state_free(t);
	free(t);
	return ret;
}
