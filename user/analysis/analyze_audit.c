// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analyze_audit.h"

#define NO_TS UINT64_MAX

/* What one view (global, or one CPU's) remembers of a source. */
struct view {
	uint64_t last_pkt, last_admit;
};

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

static uint64_t ref_of(uint32_t policy, const struct view *v)
{
	return policy == PACER_POLICY_QUIET ? v->last_pkt : v->last_admit;
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
		global[i].last_pkt = global[i].last_admit = NO_TS;
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
		uint64_t interval = audit_interval_for(h, a->thresh);
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
				local[*slot].last_pkt = local[*slot].last_admit = NO_TS;
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
		gref = ref_of(h->policy, g);
		gap_known = gref != NO_TS;
		if (gap_known)
			gap = a->ts_ns > gref ? a->ts_ns - gref : 0;
		else
			gap = a->ts_ns > start ? a->ts_ns - start : 0; /* a lower bound */

		/* What the datapath's sketch could know: the same view, or the CPU's own. */
		vref = ref_of(h->policy, v);
		view_known = vref != NO_TS;
		if (view_known)
			true_age = (uint32_t)(tick > (vref >> h->tick_shift) ? tick - (vref >> h->tick_shift) : 0);
		else
			true_age = (uint32_t)(tick > (start >> h->tick_shift) ? tick - (start >> h->tick_shift) : 0);
		if (view_known && a->est_age_ticks != PACER_AGE_NEVER && a->est_age_ticks > true_age)
			out->est_older_than_truth++;

		if (gap >= interval) {
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

			if (lgap < interval) {
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
			g->last_admit = a->ts_ns;
			if (v != g)
				v->last_admit = a->ts_ns;
		}
		g->last_pkt = a->ts_ns;
		if (v != g)
			v->last_pkt = a->ts_ns;
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
