/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled packet records (`record`, `set --sample-*`): chosen by a hash of
 * the source (every packet of a sampled source) or per packet at random,
 * written to a ring buffer the CLI drains.
 */
#ifndef PACER_BPF_RECORD_H
#define PACER_BPF_RECORD_H

#include "config.h"
#include "pacer_parse.h"
#include "pacer_sketch.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PACER_DEFAULT_RINGBUF_BYTES);
} pacer_events SEC(".maps");

static __always_inline int record_wanted(void)
{
	return (pacer_cfg.sample_src_thresh | pacer_cfg.sample_pkt_thresh) != 0;
}

static __always_inline void record(__u64 h, const struct pacer_src *src, int kind, __u32 prefix,
				   __u64 now_ns, __u32 age, __u32 thresh, int drop, __u32 class_slot,
				   struct pacer_counters *st)
{
	struct pacer_record *rec;
	__u8 flags = 0;

	if (pacer_cfg.sample_src_thresh &&
	    (pacer_mix64(h ^ PACER_SAMPLE_SALT) >> 32) < pacer_cfg.sample_src_thresh)
		flags |= PACER_REC_SAMPLED_SOURCE;
	if (pacer_cfg.sample_pkt_thresh && bpf_get_prandom_u32() < pacer_cfg.sample_pkt_thresh)
		flags |= PACER_REC_SAMPLED_PACKET;
	if (!flags)
		return;

	rec = bpf_ringbuf_reserve(&pacer_events, sizeof(*rec), 0);
	if (!rec) {
		st->c[PACER_STAT_RECORD_LOST]++;
		return;
	}
	rec->ts_ns = now_ns;
	__builtin_memcpy(&rec->addr[0], &src->lo, 8);
	__builtin_memcpy(&rec->addr[8], &src->hi, 8);
	rec->family = kind == PACER_PKT_V4 ? 4 : 6;
	rec->prefix = prefix;
	rec->verdict = drop ? PACER_REC_DROP : PACER_REC_PASS;
	rec->flags = flags;
	rec->est_age_ticks = age >= PACER_AGE_STALE ? PACER_AGE_NEVER : age;
	rec->cpu = bpf_get_smp_processor_id();
	rec->thresh_ticks = thresh;
	rec->class_slot = class_slot;
	rec->pad = 0;
	bpf_ringbuf_submit(rec, 0);
	st->c[PACER_STAT_RECORDED]++;
}

#endif /* PACER_BPF_RECORD_H */
