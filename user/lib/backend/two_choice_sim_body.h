/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One table's simulator functions (two_choice_sim.h), a template as the
 * engine is: two_choice_sim.c includes it once per layout with
 *   TCS_PREFIX      the simulator's prefix (table_, dense_)
 *   TCS_ENGINE      the engine's prefix (pacer_tbl_, pacer_dense_)
 *   TCS_LINE        the layout's line type
 *   TCS_STORE       the simulator's field holding its lines (tl, dl)
 *   TCS_LINES(s, h, idx)   the key's two lines
 *   TCS_SWEEP_TICKS, TCS_SWEEP_SAT  the datapath sweep's pace and age
 * and #undefs them.
 */
#define TCS_CAT2(a, b) a##b
#define TCS_CAT(a, b) TCS_CAT2(a, b)
#define TCS(name) TCS_CAT(TCS_PREFIX, name)
#define TCE(name) TCS_CAT(TCS_ENGINE, name)

void TCS(sim_free)(struct two_choice_sim *s)
{
	free(s->TCS_STORE);
	s->TCS_STORE = NULL;
}

static void TCS(sim_key)(const struct two_choice_sim *s, uint64_t h, TCS_LINE *l[2])
{
	uint32_t idx[2];

	TCS_LINES(s, h, idx);
	l[0] = &s->TCS_STORE[idx[0]];
	l[1] = &s->TCS_STORE[idx[1]];
}

int TCS(sim_verdict)(const struct two_choice_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age,
		     uint32_t *event)
{
	TCS_LINE *l[2];
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);

	TCS(sim_key)(s, h, l);
	return TCE(verdict)(l, TCE(fp)(h), pacer_now_tick(now_ns, s->tick_shift), &rate, s->policy,
			    s->on_full, s->placement, 1, age, event);
}

void TCS(sim_sweep_key)(const struct two_choice_sim *s, uint64_t h, uint64_t now_ns)
{
	TCS_LINE *l[2];
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);

	TCS(sim_key)(s, h, l);
	TCE(sweep_line)(l[0], tick, TCS_SWEEP_SAT);
	TCE(sweep_line)(l[1], tick, TCS_SWEEP_SAT);
}

void TCS(sim_sweep)(struct two_choice_sim *s, uint64_t now_ns)
{
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	uint32_t i;

	for (i = 0; i < s->lines; i++)
		TCE(sweep_line)(&s->TCS_STORE[i], tick, TCS_SWEEP_SAT);
}

/* With `sweep`: the whole table swept whenever the last sweep is the datapath's pace old. */
static void TCS(sim_keep_swept)(struct two_choice_sim *s, uint64_t now_ns)
{
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);

	if (s->sweep && (tick - s->swept_tick >= TCS_SWEEP_TICKS || tick < s->swept_tick)) {
		TCS(sim_sweep)(s, now_ns);
		s->swept_tick = tick;
	}
}

int TCS(sim_packet)(struct two_choice_sim *s, uint64_t h, uint64_t now_ns, uint32_t *age_out)
{
	uint32_t age, event;
	int drop;

	TCS(sim_keep_swept)(s, now_ns);
	drop = TCS(sim_verdict)(s, h, now_ns, &age, &event);
	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return drop;
}

int TCS(sim_staged)(struct two_choice_sim *s, uint64_t h, uint64_t now_ns, int later_admits,
		    uint32_t *age_out)
{
	TCS_LINE *l[2];
	struct pacer_rate rate = pacer_rate_of(s->thresh, s->burst);
	uint64_t tick = pacer_now_tick(now_ns, s->tick_shift);
	uint32_t age, event, slot = 0, fp = TCE(fp)(h);
	int v = SIM_ADMITTED;

	TCS(sim_keep_swept)(s, now_ns);
	TCS(sim_key)(s, h, l);
	if (TCE(judge)(l, fp, tick, &rate, s->policy, s->on_full, s->placement, 1, &age, &event,
		       &slot))
		v = SIM_PACED;
	else if (!later_admits)
		v = SIM_REFUSED_LATER;
	else if (TCE(commit)(l, fp, tick, &rate, s->placement, slot, &event))
		v = SIM_PACED;
	s->full += event == PACER_TBL_EV_FULL;
	s->evicted += v == SIM_ADMITTED && event == PACER_TBL_EV_EVICT;
	if (age_out)
		*age_out = age;
	return v;
}

#undef TCS
#undef TCE
#undef TCS_PREFIX
#undef TCS_ENGINE
#undef TCS_LINE
#undef TCS_STORE
#undef TCS_LINES
#undef TCS_SWEEP_TICKS
#undef TCS_SWEEP_SAT
