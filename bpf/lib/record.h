/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Sampled packet records (`record`, `top`, `events`, `set --sample-*`):
 * chosen by a hash of the source (every packet of a sampled source) or per
 * packet, written to a ring buffer the CLI drains.
 */
#ifndef PACER_BPF_RECORD_H
#define PACER_BPF_RECORD_H

#include "config.h"
#include "pacer_pkt.h"
#include "pacer_sketch.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, PACER_DEFAULT_RINGBUF_BYTES);
} pacer_events SEC(".maps");

/*
 * The deciding class's key beyond its source (its dport or destination),
 * noted by the class path for the record stage of the same packet: a
 * per-CPU slot, since the program's frame has no room to carry it and a
 * CPU runs one packet at a time.
 */
struct pacer_rec_key {
	__u64 h; /* the key's hash: a note left by an earlier packet is not this one's */
	__u32 key_mode;
	__u16 dport;
	__u16 pad;
	struct pacer_src dst;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct pacer_rec_key);
} pacer_rec_key SEC(".maps");

static __always_inline void record_key_note(__u64 h, __u32 key_mode, const struct pacer_pkt *p)
{
	__u32 zero = 0;
	struct pacer_rec_key *k = bpf_map_lookup_elem(&pacer_rec_key, &zero);

	if (!k)
		return;
	k->h = h;
	k->key_mode = key_mode;
	k->dport = key_mode == PACER_KEY_SRC_DPORT ? p->dport : 0;
	k->pad = 0;
	k->dst.lo = key_mode == PACER_KEY_SRC_DST ? p->dst.lo : 0;
	k->dst.hi = key_mode == PACER_KEY_SRC_DST ? p->dst.hi : 0;
}

/*
 * Which sampling picks the packet whose key hashes to h: 0 (none), or
 * PACER_REC_SAMPLED_SOURCE (a hash of the key is below the source
 * threshold) | PACER_REC_SAMPLED_PACKET (a keyed hash of this CPU's packet
 * count, st's seen, is below the packet threshold).  The count is new on
 * every packet and unknown outside, so the packets picked are a uniform
 * sample that no sender can aim at or dodge; and no helper runs per
 * packet: with `top` or `events` on, a packet not picked costs two loads,
 * a hash and a compare more than with sampling off (docs/benchmark.md).
 * Within a packet the answer is the same wherever it is asked.
 */
static __always_inline __u32 record_pick(__u64 h, const struct pacer_counters *st)
{
	__u64 src_thresh = pacer_cfg.sample_src_thresh, pkt_thresh = pacer_cfg.sample_pkt_thresh;
	__u32 flags = 0;

	if (!PACER_HAS(PACER_F_SAMPLING) || !(src_thresh | pkt_thresh))
		return 0;
	if (src_thresh && (pacer_mix64(h ^ PACER_SAMPLE_SALT) >> 32) < src_thresh)
		flags |= PACER_REC_SAMPLED_SOURCE;
	if (pkt_thresh &&
	    (pacer_mix64(st->c[PACER_STAT_SEEN] ^ pacer_cfg.hash_key[1] ^ PACER_SAMPLE_SALT) >> 32) <
		    pkt_thresh)
		flags |= PACER_REC_SAMPLED_PACKET;
	return flags;
}

/* A record of the packet record_pick() picked (flags, not 0). */
static __always_inline void record(__u64 h, const struct pacer_src *src, int kind, __u32 prefix,
				   __u64 now_ns, __u32 age, __u32 thresh, __u32 drop, __u32 class_slot,
				   __u32 key_mode, __u32 flags, struct pacer_counters *st)
{
	struct pacer_record *rec;
	const struct pacer_rec_key *k = NULL;
	__u32 zero = 0;

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
	/* drop: bit 0 the verdict judged; bit 1 observe mode passed it (PACER_REC_OBSERVED). */
	rec->verdict = drop & 1 ? PACER_REC_DROP : PACER_REC_PASS;
	if (drop & 2)
		flags |= PACER_REC_OBSERVED;
	rec->est_age_ticks = age >= PACER_AGE_STALE ? PACER_AGE_NEVER : age;
	rec->cpu = bpf_get_smp_processor_id();
	rec->thresh_ticks = thresh;
	rec->class_slot = class_slot;
	rec->pad = 0;
	rec->key_dport = 0;
	__builtin_memset(rec->key_dst, 0, sizeof(rec->key_dst));
	/* A class's key: its dport or destination, as the class path noted it for this packet. */
	if (class_slot)
		k = bpf_map_lookup_elem(&pacer_rec_key, &zero);
	if (k && k->h == h && k->key_mode == key_mode) {
		rec->key_dport = key_mode == PACER_KEY_SRC_DPORT ? k->dport : 0;
		if (key_mode == PACER_KEY_SRC_DST) {
			__builtin_memcpy(&rec->key_dst[0], &k->dst.lo, 8);
			__builtin_memcpy(&rec->key_dst[8], &k->dst.hi, 8);
		}
		flags |= PACER_REC_KEY;
	}
	rec->flags = (__u8)flags;
	bpf_ringbuf_submit(rec, 0);
	st->c[PACER_STAT_RECORDED]++;
}

#endif /* PACER_BPF_RECORD_H */
