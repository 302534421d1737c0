/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The global budget: at most K admitted packets in any window of length T,
 * over all sources and CPUs, kept with O(buckets) state (the bucket
 * throttler of docs/bucket-throttler.md).  Shared verbatim by the XDP
 * program (which draws from it under a bpf_spin_lock, in batches: below),
 * the CLI and the tests.
 *
 * Buckets.  Admissions go into the newest ("active") bucket.  A bucket is
 * sealed once it holds slack_count admissions (requirement B), or once
 * slack_ns have passed since its first admission (requirement A), or both
 * (AB); the next admission then opens a new bucket.  A bucket is released,
 * and its admissions returned to the budget, once window_ns have passed
 * since its *last* admission: from then on none of its packets is inside a
 * window of length T ending now.  `inflight` (the admissions in held
 * buckets) is therefore never below the true count of admissions in
 * (now - T, now], and a packet is admitted only while inflight < K: never
 * more than K in any window of length T (no false positive, whatever the
 * slack).  False negatives are bounded by the slack:
 *  A: a held packet p was admitted less than slack_ns before its bucket's
 *     last admission, so a refusal at t means K admissions in
 *     (t - T - slack_ns, t];
 *  B: every held bucket but the oldest opened after the oldest one's last
 *     admission, inside the window; only the oldest can hold packets older
 *     than T, at most slack_count - 1, so a refusal means fewer than
 *     slack_count would truly be free;
 *  AB: both at once.  tests/unit_budget.c checks each against an exact
 *  sliding window of time stamps.
 *
 * Ring size.  pacer_budget_ring_size() is the exact number of buckets the
 * rule above can hold at once (proof in docs/design.md; tests/unit_budget.c checks
 * it by exhaustive search over small parameters).
 *
 * Time.  The ring keeps the latest time it has seen and never moves back:
 * a CPU whose clock reading is older than another's admission is treated as
 * admitting at that later time, so the guarantee holds in the ring's time,
 * which the datapath records for each admitted packet.
 *
 * Batches across CPUs.  The datapath does not take the ring's lock for each
 * admission: a CPU draws a batch of up to `batch` (B) admissions at once
 * (pacer_budget_draw(), one ring admission each, at the time of the draw)
 * and spends them alone (struct pacer_budget_local).  The ring still holds
 * at most K drawn in any window of length T, so the admissions in a window
 * are those drawn in it plus what CPUs still held when it began: at most
 * B - 1 per CPU (a draw spends one at once).  Slack: at most
 * ncpus * (B - 1) admissions above K in any window; pacer_budget_batch()
 * keeps that under K / PACER_BUDGET_BATCH_SHARE, and B = 1 (small K) is
 * exact.  Refusals take no lock either: after each locked operation the
 * ring leaves, per limit, the time until which it must refuse
 * (pacer_budget_full_until()), and a CPU that reads a time before it
 * refuses without writing anything shared.
 */
#ifndef PACER_BUDGET_H
#define PACER_BUDGET_H

#include <linux/types.h>
#include <linux/bpf.h>
#include "pacer_hash.h"

#define PACER_BUDGET_MAX_BUCKETS 128u /* ring capacity; a power of two */
#define PACER_BUDGET_MASK (PACER_BUDGET_MAX_BUCKETS - 1)

/* pacer_budget_take() verdicts */
#define PACER_BUDGET_ADMIT 0
#define PACER_BUDGET_EMPTY 1     /* K (or the new sources' share) in flight */
#define PACER_BUDGET_NO_BUCKET 2 /* ring full: only after a live change shrank it */

struct pacer_budget_bucket {
	__u64 open_ns;  /* first admission */
	__u64 last_ns;  /* latest admission: released at last_ns + window_ns */
	__u64 count;
};

struct pacer_budget_ring {
	__u64 clock_ns;  /* latest time seen: the ring's time never runs back */
	__u64 inflight;  /* admissions in held buckets */
	__u32 head;      /* oldest held bucket */
	__u32 len;       /* held buckets */
	struct pacer_budget_bucket b[PACER_BUDGET_MAX_BUCKETS];
};

/* full_until[] slots: which limit a request is under */
#define PACER_BUDGET_NEW 0       /* new sources: new_limit (K - reserve) */
#define PACER_BUDGET_RETURNING 1 /* returning sources: K */

/*
 * The map value: one ring for all CPUs, behind a lock (bpf/lib/budget.h).
 * full_until and full_seq are written under the lock and read without it,
 * next to the ring's header so that a refusal reads one cache line.
 */
struct pacer_budget_state {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 full_until[2]; /* per limit: draws before this ring time are refused; 0: none */
	__u64 full_seq;      /* the configuration (its seq) full_until was computed under */
	struct pacer_budget_ring ring;
	__u64 draws;         /* batches drawn */
	__u64 locked;        /* critical sections (draws and refusals that took the lock) */
};

/*
 * One CPU's batch (a per-CPU map value): admissions drawn from the ring
 * and not yet spent, valid only under the configuration they were drawn
 * under (a live change drops them).
 */
struct pacer_budget_local {
	__u64 seq;      /* the configuration's seq at the draw */
	__u64 credits;  /* admissions left */
	__u64 time_ns;  /* latest admission on this CPU: its time never runs back */
	__u32 open;     /* drawn within new_limit: new sources may spend them too */
	__u32 pad;
};

/*
 * Live configuration (written by load/set under a sequence count: odd while
 * being written; the datapath retries or, if it cannot get a stable copy,
 * drops the packet).  limit == 0: budget off.
 */
struct pacer_budget_cfg {
	__u64 seq;
	__u64 limit;        /* K */
	__u64 window_ns;    /* T */
	__u64 slack_ns;     /* A: a bucket takes admissions for less than this; 0: no time seal */
	__u64 slack_count;  /* B: at most this many admissions per bucket; 0: no count seal */
	__u64 new_limit;    /* new sources are admitted only while inflight < new_limit (K - reserve) */
	__u64 horizon_ns;   /* H: a source admitted within H is "returning" */
	__u32 buckets;      /* ring size in force (pacer_budget_ring_size) */
	__u32 reserve_pct;  /* the reserve as asked: new_limit = K - floor(K * pct / 100) */
	__u32 seen_cells_log2; /* size of the returning-source filter (fixed at load) */
	__u32 batch;        /* B: admissions a CPU draws at once (pacer_budget_batch); 0 reads as 1 */
};

#define PACER_BUDGET_DEFAULT_SEEN_LOG2 18 /* 2^18 cells of 2 bytes: 512 KiB */
#define PACER_BUDGET_DEFAULT_SEEN_LINES (1u << (PACER_BUDGET_DEFAULT_SEEN_LOG2 - 5))
#define PACER_BUDGET_MAX_SEEN_LOG2 25     /* 64 MiB */

/* Values derived from a configuration, used under the lock. */
struct pacer_budget_params {
	__u64 limit, window_ns, slack_ns, slack_count;
	__u32 buckets;
};

PACER_INLINE __u64 pacer_budget_div_up(__u64 a, __u64 b)
{
	return a / b + (a % b != 0);
}

/*
 * Buckets held at once (the new one included) if the oldest held bucket
 * holds n1 admissions and at most a_max later held buckets were sealed by
 * time: those cost one admission each, buckets sealed by count C each, all
 * within the K - 1 in flight before the admission that opens the new one.
 * 0 if that case cannot happen.
 */
PACER_INLINE __u64 pacer_budget_case(__u64 limit, __u64 slack_count, __u64 n1, __s64 a_max)
{
	__u64 a;

	if (a_max < 0 || n1 > limit - 1)
		return 0;
	a = (__u64)a_max < limit - 1 - n1 ? (__u64)a_max : limit - 1 - n1;
	return 2 + a + (slack_count ? (limit - 1 - n1 - a) / slack_count : 0);
}

/*
 * The oldest held bucket sealed by time, its admissions spanning d ns
 * (0 <= d < S).  Its gaps are under T (a longer one would have released it),
 * so it holds at least 1 + ceil(d / (T - 1)).  It is still held, so the
 * later buckets opened within T - 1 of its last admission and at least S
 * after its opening: within d + T - 1 - S, which fits
 * floor((d + T - 1 - S) / S) buckets sealed by time.
 */
PACER_INLINE __u64 pacer_budget_case_oldest_by_time(__u64 limit, __u64 window_ns, __u64 slack_ns,
						    __u64 slack_count, __u64 d)
{
	__u64 n1 = 1 + (d ? pacer_budget_div_up(d, window_ns - 1) : 0);

	if (d >= slack_ns || d + window_ns - 1 < slack_ns || (slack_count && n1 >= slack_count))
		return 0;
	return pacer_budget_case(limit, slack_count, n1,
				 (__s64)((d + window_ns - 1 - slack_ns) / slack_ns));
}

/*
 * The exact number of buckets the ring can hold at once, the new one
 * included, in integer time (ns); K >= 1, at least one of S (slack_ns) and
 * C (slack_count) set.  Every held bucket but the oldest opened at or after
 * the oldest one's last admission, which is inside the window, so the later
 * ones span at most T - 1 ns, each one sealed by time at least S of it.
 * The oldest is sealed by count (C admissions; floor((T - 1) / S) later
 * ones sealed by time), or by time (above: the count of later buckets steps
 * up once as d grows, and admissions grow with d, so only the smallest d
 * of each step, 0 and d*, can be best).  With C = 1 every bucket is sealed
 * by count.  docs/design.md, "Global budget", has the argument; tests/unit_budget.c
 * checks by exhaustive search over small parameters that it is exact.
 */
PACER_INLINE __u64 pacer_budget_ring_size(__u64 limit, __u64 window_ns, __u64 slack_ns,
					  __u64 slack_count)
{
	__u64 best = 1, n, dstar;
	int by_time = slack_ns && slack_count != 1;

	if (!limit)
		return 0;
	if (slack_count) {
		n = pacer_budget_case(limit, slack_count, slack_count,
				      by_time ? (__s64)((window_ns - 1) / slack_ns) : 0);
		best = n > best ? n : best;
	}
	if (by_time && window_ns >= 2) {
		dstar = slack_ns * ((window_ns - 2) / slack_ns) + slack_ns + 1 - window_ns;
		n = pacer_budget_case_oldest_by_time(limit, window_ns, slack_ns, slack_count, 0);
		best = n > best ? n : best;
		n = pacer_budget_case_oldest_by_time(limit, window_ns, slack_ns, slack_count, dstar);
		best = n > best ? n : best;
	}
	return best;
}

/* The document's guess for AB (buckets_A + buckets_B), for comparison. */
PACER_INLINE __u64 pacer_budget_doc_guess(__u64 limit, __u64 window_ns, __u64 slack_ns,
					  __u64 slack_count)
{
	return (slack_ns ? pacer_budget_div_up(window_ns, slack_ns) : 0) +
	       (slack_count ? pacer_budget_div_up(limit, slack_count) : 0);
}

PACER_INLINE void pacer_budget_release(struct pacer_budget_ring *r, __u64 now, __u64 window_ns)
{
	__u32 i;

	for (i = 0; i < PACER_BUDGET_MAX_BUCKETS; i++) {
		struct pacer_budget_bucket *b = &r->b[r->head & PACER_BUDGET_MASK];

		if (!r->len || now - b->last_ns < window_ns)
			break;
		r->inflight -= b->count;
		r->head = (r->head + 1) & PACER_BUDGET_MASK;
		r->len--;
	}
}

PACER_INLINE int pacer_budget_sealed(const struct pacer_budget_bucket *b, __u64 now,
				     const struct pacer_budget_params *p)
{
	return (p->slack_count && b->count >= p->slack_count) ||
	       (p->slack_ns && now - b->open_ns >= p->slack_ns);
}

/*
 * A draw of up to `want` admissions at time *now (moved up to the ring's
 * time if it is behind; the time used is written back): *got of them
 * (at least 1 on PACER_BUDGET_ADMIT) go into the active bucket as
 * admissions at that time, never past `limit` in flight nor past the
 * bucket's slack count, so the ring's rule and its size are those of
 * single admissions.  `limit` is K for returning sources and K - reserve
 * for new ones.  Returns PACER_BUDGET_*.
 */
PACER_INLINE int pacer_budget_draw(struct pacer_budget_ring *r, const struct pacer_budget_params *p,
				   __u64 limit, __u64 want, __u64 *now, __u64 *got)
{
	struct pacer_budget_bucket *tail;
	__u64 t = *now, n;

	*got = 0;
	if (t < r->clock_ns)
		t = r->clock_ns;
	r->clock_ns = t;
	*now = t;
	pacer_budget_release(r, t, p->window_ns);
	if (r->inflight >= limit)
		return PACER_BUDGET_EMPTY;
	tail = &r->b[(r->head + r->len - 1) & PACER_BUDGET_MASK];
	if (!r->len || pacer_budget_sealed(tail, t, p)) {
		if (r->len >= p->buckets || r->len >= PACER_BUDGET_MAX_BUCKETS)
			return PACER_BUDGET_NO_BUCKET;
		tail = &r->b[(r->head + r->len) & PACER_BUDGET_MASK];
		r->len++;
		tail->open_ns = t;
		tail->count = 0;
	}
	n = want ? want : 1;
	if (n > limit - r->inflight)
		n = limit - r->inflight;
	if (p->slack_count && n > p->slack_count - tail->count) /* not sealed: count < C */
		n = p->slack_count - tail->count;
	tail->count += n;
	tail->last_ns = t;
	r->inflight += n;
	*got = n;
	return PACER_BUDGET_ADMIT;
}

/* One admission decision: a draw of one. */
PACER_INLINE int pacer_budget_take(struct pacer_budget_ring *r, const struct pacer_budget_params *p,
				   __u64 limit, __u64 *now)
{
	__u64 got;

	return pacer_budget_draw(r, p, limit, 1, now, &got);
}

/*
 * After a draw or refusal (the release done at the ring's time): the ring
 * time before which every draw under `limit` is refused, 0 if none is.
 * Until the oldest held bucket is released nothing leaves the ring, and
 * draws only add to it, so while inflight >= limit that holds until then.
 */
PACER_INLINE __u64 pacer_budget_full_until(const struct pacer_budget_ring *r, __u64 limit,
					   __u64 window_ns)
{
	if (!r->len || r->inflight < limit)
		return 0;
	return r->b[r->head & PACER_BUDGET_MASK].last_ns + window_ns;
}

/*
 * Admissions a CPU draws at once: K / (PACER_BUDGET_BATCH_SHARE * ncpus),
 * at least 1, at most PACER_BUDGET_MAX_BATCH (the lock is then amortised
 * well enough) and at most the slack count (a bucket never takes more).
 * The slack ncpus * (B - 1) is then below K / PACER_BUDGET_BATCH_SHARE.
 */
#define PACER_BUDGET_BATCH_SHARE 64u
#define PACER_BUDGET_MAX_BATCH 64u

PACER_INLINE __u32 pacer_budget_batch(__u64 limit, __u64 slack_count, __u32 ncpus)
{
	__u64 b = limit / ((__u64)PACER_BUDGET_BATCH_SHARE * (ncpus ? ncpus : 1));

	if (b > PACER_BUDGET_MAX_BATCH)
		b = PACER_BUDGET_MAX_BATCH;
	if (slack_count && b > slack_count)
		b = slack_count;
	return b ? (__u32)b : 1;
}

/* The most admissions above K in any window of length T, batches of B on ncpus CPUs. */
PACER_INLINE __u64 pacer_budget_batch_slack(__u32 batch, __u32 ncpus)
{
	return batch > 1 ? (__u64)ncpus * (batch - 1) : 0;
}

/*
 * Spend one of this CPU's drawn admissions: 1 if there was one valid under
 * configuration `seq` that this request may use (new sources only from a
 * batch drawn within new_limit), *now moved up to the CPU's latest
 * admission; 0 if the CPU must draw.
 */
PACER_INLINE int pacer_budget_spend(struct pacer_budget_local *l, __u64 seq, int returning,
				    __u64 *now)
{
	if (l->seq != seq || !l->credits || (!returning && !l->open))
		return 0;
	l->credits--;
	if (*now < l->time_ns)
		*now = l->time_ns;
	l->time_ns = *now;
	return 1;
}

/* After a draw of got >= 1 at ring time now: one spent at once, the rest kept. */
PACER_INLINE void pacer_budget_keep(struct pacer_budget_local *l, __u64 seq, __u64 got, int open,
				    __u64 now)
{
	l->seq = seq;
	l->credits = got - 1;
	l->open = (__u32)open;
	l->time_ns = now;
}

PACER_INLINE void pacer_budget_params_of(const struct pacer_budget_cfg *c,
					 struct pacer_budget_params *p)
{
	p->limit = c->limit;
	p->window_ns = c->window_ns;
	p->slack_ns = c->slack_ns;
	p->slack_count = c->slack_count;
	p->buckets = c->buckets;
}

/* The batch a CPU draws under c (0 in a configuration written without one reads as 1). */
PACER_INLINE __u64 pacer_budget_cfg_batch(const struct pacer_budget_cfg *c)
{
	return c->batch ? c->batch : 1;
}

/*
 * The datapath's steps on the shared value, the lock left to the caller
 * (bpf/lib/budget.h; tests/unit_budget.c runs them on simulated CPUs).
 *
 * Without the lock: whether a draw under `slot`'s limit at time t must be
 * refused, from what the last locked operation under configuration `seq`
 * left.  Reads may race with a draw on another CPU: what they read was
 * true of the ring at some point, and the ring only refuses more until
 * full_until passes.
 */
PACER_INLINE int pacer_budget_full(const struct pacer_budget_state *s, __u64 seq, __u32 slot,
				   __u64 t)
{
	__u64 rt = *(volatile const __u64 *)&s->ring.clock_ns;

	if (rt < t)
		rt = t;
	return *(volatile const __u64 *)&s->full_seq == seq &&
	       rt < *(volatile const __u64 *)&s->full_until[slot & 1];
}

/* Under the lock: a draw of the configured batch, then full_until for both limits. */
PACER_INLINE int pacer_budget_draw_locked(struct pacer_budget_state *s,
					  const struct pacer_budget_cfg *c, __u64 limit, __u64 *now,
					  __u64 *got)
{
	struct pacer_budget_params p;
	int verdict;

	pacer_budget_params_of(c, &p);
	verdict = pacer_budget_draw(&s->ring, &p, limit, pacer_budget_cfg_batch(c), now, got);
	s->full_until[PACER_BUDGET_NEW] = pacer_budget_full_until(&s->ring, c->new_limit,
								   c->window_ns);
	s->full_until[PACER_BUDGET_RETURNING] = pacer_budget_full_until(&s->ring, c->limit,
									 c->window_ns);
	s->full_seq = c->seq;
	s->locked++;
	s->draws += *got != 0;
	return verdict;
}

/*
 * The returning-source filter: 16-bit time stamps (quanta of 2^26 ns,
 * 67 ms) in lines of 32; a source is hashed to PACER_SEEN_PROBES cells and
 * is "returning" when every one of them was stamped within the horizon.
 * Stamps are written only for packets the budget admitted.  Collisions and
 * the 16-bit wrap (every 73 minutes) can only make a new source look
 * returning: that lets it into the reserve, never past K.
 */
#define PACER_SEEN_QUANTUM_SHIFT 26
#define PACER_SEEN_CELLS_PER_LINE 32
#define PACER_SEEN_PROBES 3
#define PACER_SEEN_MAX_HORIZON_NS (60ULL * 60 * 1000000000) /* well inside the wrap */
#define PACER_SEEN_SALT 0x5eed5eed0b0e5ULL

struct pacer_seen_line {
	__u16 stamp[PACER_SEEN_CELLS_PER_LINE];
};

PACER_INLINE __u16 pacer_seen_stamp(__u64 now_ns)
{
	__u16 s = (__u16)(now_ns >> PACER_SEEN_QUANTUM_SHIFT);

	return s ? s : 1; /* 0 means never written */
}

/* Cell index of probe i of hash h in a filter of 2^cells_log2 cells: one mix per probe. */
PACER_INLINE __u32 pacer_seen_cell(__u64 h, __u32 i, __u32 cells_log2)
{
	return (__u32)pacer_mix64(h ^ (PACER_SEEN_SALT + i)) & ((1u << cells_log2) - 1);
}

/* Whether a stamp is within the horizon (in quanta, rounded up) of now. */
PACER_INLINE int pacer_seen_recent(__u16 stamp, __u64 now_ns, __u64 horizon_ns)
{
	__u16 age = (__u16)(pacer_seen_stamp(now_ns) - stamp);
	__u64 h = (horizon_ns >> PACER_SEEN_QUANTUM_SHIFT) + 1;

	return stamp && age <= h;
}

#endif /* PACER_BUDGET_H */
