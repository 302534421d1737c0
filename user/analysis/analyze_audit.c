// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_audit.h"
#include "pacer_rate.h"
#include "pacer_ticks.h"

#define NO_TS UINT64_MAX

/*
 * What one view (global, or one CPU's) remembers of a source: the exact
 * per-source GCRA of the policy (pacer_rate.h), in ns and in ticks.  virt
 * is the virtual last admission V (GCRA's TAT - tau - T/N): a packet at t
 * conforms iff t - V >= T/N; an admission makes V = max(V + T/N, t - tau),
 * under quiet a drop makes V = t.  With N = 1, V is the last admission
 * (pace) or the last packet (quiet): the interval's audit.  vtick is the
 * same in whole ticks, the cell a collision-free sketch holds.
 */
struct view {
	uint64_t last_pkt, virt;
	int64_t vtick;
};

/* N * V and N * t: exact for T/N that is not a whole number of ns. */
typedef __int128 scaled_t;

static int view_conforms(const struct view *v, uint64_t t, uint32_t n, uint64_t period)
{
	return v->virt == NO_TS || (scaled_t)n * t - (scaled_t)n * v->virt >= (scaled_t)period;
}

/* The view after a packet at t (tick) with this verdict. */
static void view_step(struct view *v, uint64_t t, int64_t tick, int drop, uint32_t policy,
		      uint32_t n, uint64_t period, const struct pacer_rate *r)
{
	if (drop) {
		if (policy == PACER_POLICY_QUIET) {
			v->virt = t;
			v->vtick = tick;
		}
	} else {
		scaled_t next = (scaled_t)n * t - (scaled_t)(n - 1) * period;
		uint32_t a = v->virt == NO_TS || tick - v->vtick >= (int64_t)r->sat
				     ? r->sat : (uint32_t)(tick - v->vtick);

		if (v->virt != NO_TS && (scaled_t)n * v->virt + period > next)
			next = (scaled_t)n * v->virt + period;
		/* V = next / N, rounded up; N = 1: the admission itself, even a false pass. */
		v->virt = n == 1 ? t : (uint64_t)((next + n - 1) / n);
		v->vtick = tick - (int64_t)pacer_rate_next_age(a < r->thresh ? r->thresh : a, r);
	}
	v->last_pkt = t;
}

/* The limit one class (or the global one) promises. */
struct audit_limit {
	uint64_t interval_ns;
	uint32_t thresh_ticks, rate_n, policy, action, key_mode;
	struct pacer_rate rate;
	int known;   /* the slot names a class of the recording's table (or is the global limit) */
};

static uint64_t interval_for(uint64_t interval_ns, uint32_t thresh, uint32_t tick_shift,
			     uint32_t thresh_ticks)
{
	if (thresh_ticks == thresh || thresh_ticks < 2)
		return interval_ns;
	/* set --interval changed it live: the largest interval this threshold serves. */
	return pacer_ticks_ns(thresh_ticks - 1, tick_shift);
}

uint64_t audit_interval_for(const struct pacer_file_header *h, uint32_t thresh_ticks)
{
	return interval_for(h->interval_ns, h->thresh_ticks, h->tick_shift, thresh_ticks);
}

/* The limits of slot 0 (the header's) and of each class of the table, by class_slot. */
static void limits_of(const struct pacer_file_header *h, struct audit_limit lim[PACER_MAX_CLASSES + 1])
{
	uint32_t i;

	memset(lim, 0, (PACER_MAX_CLASSES + 1) * sizeof(*lim));
	lim[0].interval_ns = h->interval_ns;
	lim[0].thresh_ticks = h->thresh_ticks;
	lim[0].rate_n = h->rate_n > 1 ? h->rate_n : 1;
	lim[0].policy = h->policy;
	lim[0].rate = pacer_rate_of(h->thresh_ticks, lim[0].rate_n > 1 ? h->burst_ticks : 0);
	lim[0].known = 1;
	for (i = 0; i < h->n_classes && i < PACER_MAX_CLASSES; i++) {
		const struct pacer_class *c = &h->classes[i];
		struct audit_limit *l = &lim[c->stat_slot + 1]; /* the reader bounds stat_slot */

		l->interval_ns = c->interval_ns;
		l->thresh_ticks = c->thresh_ticks;
		l->rate_n = c->rate_n > 1 ? c->rate_n : 1;
		l->policy = c->policy;
		l->action = c->action;
		l->key_mode = c->key_mode;
		l->rate = pacer_rate_of(c->thresh_ticks, l->rate_n > 1 ? c->burst_ticks : 0);
		l->known = 1;
	}
}

double audit_false_drop_rate(const struct audit_result *r)
{
	return r->eligible ? (double)r->false_drops / (double)r->eligible : 0.0;
}

static void example(struct audit_result *out, enum audit_kind k, const struct an_record *a,
		    uint64_t gap, int gap_known, uint32_t true_age, int age_known)
{
	struct audit_example *e;

	if (out->n_examples[k] >= AUDIT_MAX_EXAMPLES)
		return;
	e = &out->examples[k][out->n_examples[k]++];
	e->ts_ns = a->ts_ns;
	e->gap_ns = gap;
	e->gap_known = (uint8_t)gap_known;
	e->src = a->src;
	e->true_age_ticks = true_age;
	e->age_known = (uint8_t)age_known;
	e->est_age_ticks = a->est_age_ticks;
	e->thresh = a->thresh;
	e->cpu = a->cpu;
}


void audit_free(struct audit_result *r)
{
	free(r->packets_by_cpu);
	free(r->false_passes_by_cpu);
	free(r->false_drops_by_cpu);
	r->packets_by_cpu = r->false_passes_by_cpu = r->false_drops_by_cpu = NULL;
}

/* The audit's state beside its result: the exact views and the greedy windows. */
struct auditor {
	const struct an_stream *s;
	const struct pacer_file_header *h;
	struct audit_result *out;
	struct view *global, *local;   /* per source; per source and CPU (per-CPU placement) */
	struct view *greedy;           /* per source: the exact GCRA fed every packet, its own verdicts */
	struct an_map local_index;
	uint64_t nlocal, *win_start, *win_count, start;
	uint64_t *key_win;            /* per source: the last tumbling window it was counted in, + 1 */
	uint64_t cur_win, cur_keys, sum_keys, first_win; /* the window being counted (index + 1) */
	struct audit_limit lim[PACER_MAX_CLASSES + 1]; /* by class_slot */
	int only_slot;   /* judge only this class_slot; -1: every record */
	int percpu;
};

/*
 * Does a source of this class stand for several keys?  When its key is more
 * than the source and some of its records do not carry the rest of it.
 */
static int slot_merged(const struct an_stream *s, const struct audit_limit *l, uint32_t slot)
{
	return l->key_mode != PACER_KEY_SRC && !s->exact_keys && s->class_unkeyed[slot];
}

static int keys_merged(const struct auditor *au, const struct audit_limit *l)
{
	return slot_merged(au->s, l, (uint32_t)(l - au->lim));
}

static int auditor_init(struct auditor *au, const struct an_stream *s, int only_slot,
			struct audit_result *out)
{
	const struct pacer_file_header *h = &s->hdr;
	const struct audit_limit *l;
	uint64_t nsrc = s->nsrc ? s->nsrc : 1, span, i;

	au->s = s;
	au->h = h;
	au->out = out;
	au->start = h->start_mono_ns;
	au->percpu = h->placement == PACER_PLACEMENT_PERCPU;
	limits_of(h, au->lim);
	au->only_slot = only_slot;
	l = &au->lim[only_slot > 0 ? only_slot : 0];
	out->class_slot = only_slot > 0 ? (uint32_t)only_slot : 0;
	out->policy = l->policy;
	out->placement = h->placement;
	out->interval_ns = l->interval_ns;
	out->rate_n = l->rate_n;
	out->key_mode = l->key_mode;
	out->action = l->action;
	out->key_merged = only_slot >= 0 && slot_merged(s, l, (uint32_t)only_slot);
	out->ncpus = (uint32_t)s->max_cpu + 1 > h->ncpus ? (uint32_t)s->max_cpu + 1 : h->ncpus;
	out->packets_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	out->false_passes_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	out->false_drops_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	au->global = malloc(nsrc * sizeof(*au->global));
	au->greedy = malloc(nsrc * sizeof(*au->greedy));
	au->win_start = calloc(nsrc, sizeof(uint64_t));
	au->win_count = calloc(nsrc, sizeof(uint64_t));
	au->key_win = calloc(nsrc, sizeof(uint64_t));
	if (!out->packets_by_cpu || !out->false_passes_by_cpu || !out->false_drops_by_cpu ||
	    !au->global || !au->greedy || !au->win_start || !au->win_count || !au->key_win)
		return -ENOMEM;
	for (i = 0; i < s->nsrc; i++)
		au->global[i].last_pkt = au->global[i].virt = au->greedy[i].last_pkt = au->greedy[i].virt = NO_TS;
	if (au->percpu) {
		if (an_map_init(&au->local_index, s->nsrc))
			return -ENOMEM;
		au->nlocal = nsrc * 2;
		au->local = malloc(au->nlocal * sizeof(*au->local));
		if (!au->local)
			return -ENOMEM;
	}
	span = s->n ? s->last_ts - s->first_ts : 0;
	out->t0 = s->first_ts;
	out->bin_ns = l->interval_ns ? l->interval_ns : 1;
	if (span / out->bin_ns >= AUDIT_MAX_BINS)
		out->bin_ns = span / AUDIT_MAX_BINS + 1;
	out->nbins = s->n ? (uint32_t)(span / out->bin_ns) + 1 : 0;
	return 0;
}

static void auditor_free(struct auditor *au)
{
	free(au->global);
	free(au->greedy);
	free(au->local);
	free(au->win_start);
	free(au->win_count);
	free(au->key_win);
	an_map_free(&au->local_index);
}

/* The view of a's source on a's CPU, made on first use: NULL without memory. */
static struct view *local_view(struct auditor *au, const struct an_record *a)
{
	uint64_t *slot;
	int ins;

	slot = an_map_get(&au->local_index, (uint64_t)a->src << 16 | a->cpu, au->local_index.n, &ins);
	if (!slot)
		return NULL;
	if (ins) {
		if (*slot >= au->nlocal) {
			struct view *n = realloc(au->local, au->nlocal * 2 * sizeof(*n));

			if (!n)
				return NULL;
			au->local = n;
			au->nlocal *= 2;
		}
		au->local[*slot].last_pkt = au->local[*slot].virt = NO_TS;
	}
	return &au->local[*slot];
}

static void count_record(struct audit_result *out, struct audit_bin *bin,
			 const struct an_record *a, uint32_t thresh_ticks, int drop)
{
	out->judged_records++;
	out->packets_by_cpu[a->cpu]++;
	bin->packets++;
	if (a->thresh != thresh_ticks)
		out->other_thresh++;
	if (drop) {
		out->drops++;
		out->observed_drops += !!(a->flags & PACER_REC_OBSERVED);
		bin->drops++;
	} else {
		out->passes++;
	}
}

/* One verdict against the global guarantee (g: the source's exact view). */
static void judge(struct auditor *au, struct audit_bin *bin, const struct an_record *a,
		  const struct audit_limit *l, const struct view *g, uint64_t interval,
		  uint32_t true_age, int view_known)
{
	struct audit_result *out = au->out;
	int gap_known = g->virt != NO_TS, drop = a->verdict == PACER_REC_DROP;
	/* Without a packet in view the gap since the start is a lower bound. */
	uint64_t ref = gap_known ? g->virt : au->start, gap = a->ts_ns > ref ? a->ts_ns - ref : 0;

	/*
	 * Some of the class's records carry their key and some do not: a
	 * source's recorded stream is then neither one key's nor all of them.
	 */
	if (keys_merged(au, l) && au->s->class_keyed[a->class_slot]) {
		out->unknown++;
		return;
	}
	if (gap_known ? view_conforms(g, a->ts_ns, l->rate_n, interval)
		      : (scaled_t)l->rate_n * gap >= (scaled_t)interval) {
		out->eligible++;
		if (!drop) {
			out->correct_passes++;
			return;
		}
		out->false_drops++;
		out->false_drops_by_cpu[a->cpu]++;
		/* Without a packet in view, the exact age is only bounded below. */
		if (true_age >= a->thresh) {
			out->false_drops_collision++;
			bin->false_drops_collision++;
			example(out, AUDIT_FALSE_DROP_COLLISION, a, gap, gap_known, true_age, view_known);
		} else {
			out->false_drops_quant++;
			bin->false_drops_quant++;
			example(out, AUDIT_FALSE_DROP_QUANTISATION, a, gap, gap_known, true_age, view_known);
		}
	} else if (!gap_known || keys_merged(au, l)) {
		/* A merged key (src+dport, src+dst): its own stream may have owed this packet nothing. */
		out->unknown++;
	} else if (drop) {
		out->correct_drops++;
	} else {
		out->false_passes++;
		out->false_passes_by_cpu[a->cpu]++;
		bin->false_passes++;
		example(out, AUDIT_FALSE_PASS, a, gap, 1, true_age, view_known);
	}
}

/* Distinct sources per tumbling window of the audited limit's interval. */
static void count_key(struct auditor *au, const struct an_record *a)
{
	uint64_t w = (a->ts_ns - au->s->first_ts) / (au->out->interval_ns ? au->out->interval_ns : 1) + 1;

	if (w != au->cur_win) {
		if (!au->first_win)
			au->first_win = w;
		au->sum_keys += au->cur_keys;
		au->cur_win = w;
		au->cur_keys = 0;
	}
	if (au->key_win[a->src] != w) {
		au->key_win[a->src] = w;
		if (++au->cur_keys > au->out->keys_per_interval_peak)
			au->out->keys_per_interval_peak = au->cur_keys;
	}
}

/* Greedy windows of one interval: how many admits a source got in one. */
static void count_window(struct auditor *au, const struct an_record *a, uint64_t interval)
{
	uint64_t *start = &au->win_start[a->src], *count = &au->win_count[a->src];

	if (*count && a->ts_ns - *start < interval) {
		(*count)++;
	} else {
		*start = a->ts_ns;
		*count = 1;
	}
	if (*count > au->out->max_admits_in_interval)
		au->out->max_admits_in_interval = *count;
}

/*
 * A class whose action is pass or drop: every verdict must be that action
 * (a wrong one is a false pass or drop, not split by cause: no sketch decides).
 */
static void audit_action(struct auditor *au, struct audit_bin *bin, const struct an_record *a,
			 const struct audit_limit *l)
{
	struct audit_result *out = au->out;
	int drop = a->verdict == PACER_REC_DROP;

	count_record(out, bin, a, a->thresh, drop);
	au->global[a->src].last_pkt = a->ts_ns; /* counted among the sources */
	if (l->action == PACER_ACTION_PASS && drop) {
		out->false_drops++;
		out->false_drops_by_cpu[a->cpu]++;
	} else if (l->action == PACER_ACTION_DROP && !drop) {
		out->false_passes++;
		out->false_passes_by_cpu[a->cpu]++;
		bin->false_passes++;
	} else if (drop) {
		out->correct_drops++;
	} else {
		out->eligible++;
		out->correct_passes++;
	}
}

static int audit_record(struct auditor *au, const struct an_record *a)
{
	const struct pacer_file_header *h = au->h;
	const struct audit_limit *l = &au->lim[a->class_slot];
	struct audit_result *out = au->out;
	struct view *g = &au->global[a->src], *v = g;
	/* With a rate, the class's rate (a live change is counted in other_thresh). */
	uint64_t interval = l->rate_n > 1 ? l->interval_ns
					  : interval_for(l->interval_ns, l->thresh_ticks, h->tick_shift, a->thresh);
	uint64_t tick = pacer_now_tick(a->ts_ns, h->tick_shift);
	uint64_t start_tick = pacer_now_tick(au->start, h->tick_shift);
	int view_known, drop = a->verdict == PACER_REC_DROP;
	struct audit_bin *bin = &out->bins[(a->ts_ns - au->s->first_ts) / out->bin_ns];
	uint32_t true_age;

	if (au->only_slot >= 0 && a->class_slot != au->only_slot)
		return 0;
	if (!(a->flags & PACER_REC_SAMPLED_SOURCE)) {
		out->packet_only++;
		return 0;
	}
	if (!l->known) {
		out->unknown_class++;
		return 0;
	}
	if (h->classes_changed_ns && a->ts_ns > h->classes_changed_ns) {
		out->after_class_change++;
		return 0;
	}
	if (l->action != PACER_ACTION_PACE) {
		audit_action(au, bin, a, l);
		return 0;
	}
	if (au->percpu && !(v = local_view(au, a)))
		return -ENOMEM;
	count_record(out, bin, a, l->thresh_ticks, drop);
	if (au->only_slot >= 0)
		count_key(au, a);
	/* What the datapath's sketch could know: the same view, or the CPU's own. */
	view_known = v->virt != NO_TS;
	if (view_known)
		true_age = (uint32_t)((int64_t)tick > v->vtick ? (int64_t)tick - v->vtick : 0);
	else
		true_age = (uint32_t)(tick > start_tick ? tick - start_tick : 0);
	if (view_known && a->est_age_ticks != PACER_AGE_NEVER && a->est_age_ticks > true_age)
		out->est_older_than_truth++;
	judge(au, bin, a, l, g, interval, true_age, view_known);
	if (au->percpu && !drop && view_known && !keys_merged(au, l) &&
	    !view_conforms(v, a->ts_ns, l->rate_n, interval)) {
		out->false_passes_local++;
		example(out, AUDIT_FALSE_PASS_LOCAL, a, a->ts_ns > v->virt ? a->ts_ns - v->virt : 0, 1,
			true_age, 1);
	}
	if (!drop && !keys_merged(au, l))
		count_window(au, a, interval);
	/* What the exact GCRA would have admitted: the measure of the limiter's accuracy. */
	if (!keys_merged(au, l)) {
		struct view *x = &au->greedy[a->src];
		int conforms = view_conforms(x, a->ts_ns, l->rate_n, interval);

		out->exact_passes += conforms;
		view_step(x, a->ts_ns, (int64_t)tick, !conforms, l->policy, l->rate_n, interval, &l->rate);
	}
	view_step(g, a->ts_ns, (int64_t)tick, drop, l->policy, l->rate_n, interval, &l->rate);
	if (v != g)
		view_step(v, a->ts_ns, (int64_t)tick, drop, l->policy, l->rate_n, interval, &l->rate);
	return 0;
}

static int run(const struct an_stream *s, int only_slot, struct audit_result *out)
{
	struct auditor au = { 0 };
	uint64_t i;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = auditor_init(&au, s, only_slot, out);
	for (i = 0; !ret && i < s->n; i++)
		ret = audit_record(&au, &s->rec[i]);
	if (au.cur_win) {
		au.sum_keys += au.cur_keys;
		out->keys_per_interval_mean = (double)au.sum_keys / (double)(au.cur_win - au.first_win + 1);
	}
	for (i = 0; !ret && i < s->nsrc; i++) {
		if (au.global[i].last_pkt == NO_TS)
			continue;
		out->sources++;
		if (s->src[i].ncpus_seen > 1)
			out->sources_multi_cpu++;
	}
	auditor_free(&au);
	if (ret)
		audit_free(out);
	return ret;
}

int audit_run(const struct an_stream *s, struct audit_result *out)
{
	return run(s, -1, out);
}

int audit_run_class(const struct an_stream *s, uint32_t class_slot, struct audit_result *out)
{
	return run(s, class_slot <= PACER_MAX_CLASSES ? (int)class_slot : -1, out);
}
