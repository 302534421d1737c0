// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_audit.h"
#include "pacer_rate.h"

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

uint64_t audit_interval_for(const struct pacer_file_header *h, uint32_t thresh_ticks)
{
	if (thresh_ticks == h->thresh_ticks || thresh_ticks < 2)
		return h->interval_ns;
	/* set --interval changed it live: the largest interval this threshold serves. */
	return (uint64_t)(thresh_ticks - 1) << h->tick_shift;
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

int audit_run(const struct an_stream *s, struct audit_result *out)
{
	const struct pacer_file_header *h = &s->hdr;
	struct view *global = NULL, *local = NULL;
	uint64_t *win_start = NULL, *win_count = NULL, span, i;
	struct an_map local_index = { 0 };
	uint64_t start = h->start_mono_ns;
	int percpu = h->placement == PACER_PLACEMENT_PERCPU, ret = -ENOMEM, ins;
	uint32_t rate_n = h->rate_n > 1 ? h->rate_n : 1;
	struct pacer_rate rate = pacer_rate_of(h->thresh_ticks, rate_n > 1 ? h->burst_ticks : 0);
	uint64_t nlocal = 0;

	memset(out, 0, sizeof(*out));
	out->policy = h->policy;
	out->placement = h->placement;
	out->interval_ns = h->interval_ns;
	out->ncpus = (uint32_t)s->max_cpu + 1 > h->ncpus ? (uint32_t)s->max_cpu + 1 : h->ncpus;
	out->packets_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	out->false_passes_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	out->false_drops_by_cpu = calloc(out->ncpus, sizeof(uint64_t));
	global = malloc((s->nsrc ? s->nsrc : 1) * sizeof(*global));
	win_start = calloc(s->nsrc ? s->nsrc : 1, sizeof(uint64_t));
	win_count = calloc(s->nsrc ? s->nsrc : 1, sizeof(uint64_t));
	if (!out->packets_by_cpu || !out->false_passes_by_cpu || !out->false_drops_by_cpu ||
	    !global || !win_start || !win_count)
		goto out;
	for (i = 0; i < s->nsrc; i++)
		global[i].last_pkt = global[i].virt = NO_TS;
	if (percpu) {
		if (an_map_init(&local_index, s->nsrc))
			goto out;
		local = malloc((s->nsrc ? s->nsrc : 1) * sizeof(*local) * 2);
		if (!local)
			goto out;
		nlocal = (s->nsrc ? s->nsrc : 1) * 2;
	}

	span = s->n ? s->last_ts - s->first_ts : 0;
	out->t0 = s->first_ts;
	out->bin_ns = h->interval_ns ? h->interval_ns : 1;
	if (span / out->bin_ns >= AUDIT_MAX_BINS)
		out->bin_ns = span / AUDIT_MAX_BINS + 1;
	out->nbins = s->n ? (uint32_t)(span / out->bin_ns) + 1 : 0;

	for (i = 0; i < s->n; i++) {
		const struct an_record *a = &s->rec[i];
		struct view *g = &global[a->src], *v = g;
		/* With a rate, the rate of the header (a live change is counted in other_thresh). */
		uint64_t interval = rate_n > 1 ? h->interval_ns : audit_interval_for(h, a->thresh);
		uint64_t gref, vref, gap, tick = a->ts_ns >> h->tick_shift;
		uint32_t true_age = 0;
		int gap_known, view_known, drop = a->verdict == PACER_REC_DROP;
		struct audit_bin *bin = &out->bins[(a->ts_ns - s->first_ts) / out->bin_ns];

		if (!(a->flags & PACER_REC_SAMPLED_SOURCE)) {
			out->packet_only++;
			continue;
		}
		if (percpu) {
			uint64_t *slot = an_map_get(&local_index, (uint64_t)a->src << 16 | a->cpu,
						    local_index.n, &ins);

			if (!slot)
				goto out;
			if (ins) {
				if (*slot >= nlocal) {
					struct view *n = realloc(local, nlocal * 2 * sizeof(*n));

					if (!n)
						goto out;
					local = n;
					nlocal *= 2;
				}
				local[*slot].last_pkt = local[*slot].virt = NO_TS;
			}
			v = &local[*slot];
		}
		out->judged_records++;
		out->packets_by_cpu[a->cpu]++;
		bin->packets++;
		if (a->thresh != h->thresh_ticks)
			out->other_thresh++;
		if (drop) {
			out->drops++;
			bin->drops++;
		} else {
			out->passes++;
		}

		/* The truth against the global guarantee. */
		gref = g->virt;
		gap_known = gref != NO_TS;
		if (gap_known)
			gap = a->ts_ns > gref ? a->ts_ns - gref : 0;
		else
			gap = a->ts_ns > start ? a->ts_ns - start : 0; /* a lower bound */

		/* What the datapath's sketch could know: the same view, or the CPU's own. */
		vref = v->virt;
		view_known = vref != NO_TS;
		if (view_known)
			true_age = (uint32_t)((int64_t)tick > v->vtick ? (int64_t)tick - v->vtick : 0);
		else
			true_age = (uint32_t)(tick > (start >> h->tick_shift) ? tick - (start >> h->tick_shift) : 0);
		if (view_known && a->est_age_ticks != PACER_AGE_NEVER && a->est_age_ticks > true_age)
			out->est_older_than_truth++;

		if (gap_known ? view_conforms(g, a->ts_ns, rate_n, interval)
			      : (scaled_t)rate_n * gap >= (scaled_t)interval) {
			out->eligible++;
			if (!drop) {
				out->correct_passes++;
			} else {
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
			}
		} else if (!gap_known) {
			out->unknown++;
		} else if (drop) {
			out->correct_drops++;
		} else {
			out->false_passes++;
			out->false_passes_by_cpu[a->cpu]++;
			bin->false_passes++;
			example(out, AUDIT_FALSE_PASS, a, gap, 1, true_age, view_known);
		}
		if (percpu && !drop && view_known) {
			uint64_t lgap = a->ts_ns > vref ? a->ts_ns - vref : 0;

			if (!view_conforms(v, a->ts_ns, rate_n, interval)) {
				out->false_passes_local++;
				example(out, AUDIT_FALSE_PASS_LOCAL, a, lgap, 1, true_age, 1);
			}
		}

		if (!drop) {
			/* Greedy windows of one interval: how many admits a source got in one. */
			if (win_count[a->src] && a->ts_ns - win_start[a->src] < interval) {
				win_count[a->src]++;
			} else {
				win_start[a->src] = a->ts_ns;
				win_count[a->src] = 1;
			}
			if (win_count[a->src] > out->max_admits_in_interval)
				out->max_admits_in_interval = win_count[a->src];
		}
		view_step(g, a->ts_ns, (int64_t)tick, drop, h->policy, rate_n, interval, &rate);
		if (v != g)
			view_step(v, a->ts_ns, (int64_t)tick, drop, h->policy, rate_n, interval, &rate);
	}
	for (i = 0; i < s->nsrc; i++) {
		if (global[i].last_pkt == NO_TS)
			continue;
		out->sources++;
		if (s->src[i].ncpus_seen > 1)
			out->sources_multi_cpu++;
	}
	ret = 0;
out:
	free(global);
	free(local);
	free(win_start);
	free(win_count);
	an_map_free(&local_index);
	if (ret)
		audit_free(out);
	return ret;
}
