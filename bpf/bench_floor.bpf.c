// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark floor and its probes: what any structure that reads random
 * cache lines per packet must pay, one term at a time.  Each program
 * parses, computes one keyed 64-bit hash as the pacer does, then reads
 * random 64-byte lines of an aligned (BPF_F_MMAPABLE) array whose values
 * decide the verdict (so the reads are on the packet's critical path).
 * The bench sizes the array like the structure under test; line 0 holds
 * the index mask (word 0) and its bit count (word 1).
 *   bench_floor       one line, drop            (the floor)
 *   bench_floor_pass  one line, pass            (+ the cost of passing)
 *   bench_floor2      the table's two lines     (+ the second line)
 *   bench_floor4      four lines, as the sketch's rows (+ three lines)
 *   bench_scan2       two lines and the table's scan of both as an admission
 *                     reads them (+ the scan)
 *   bench_floor_any   one line of any line count, indexed by multiply-shift
 *                     as the dense table's (line 0: word 2 the line count)
 *   bench_floor2_any  the dense table's two lines (pacer_dense_lines), any count
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "pacer_sketch.h"
#include "pacer_parse.h"
#include "pacer_table.h"

struct floor_line {
	__u64 w[8];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, struct floor_line);
} floor_lines SEC(".maps");

static const __u64 floor_key[2] = { 0x1234567887654321ULL, 0x0fedcba987654321ULL };

/* Parse and hash into *h; 0 for a frame the probes pass untouched. */
static __always_inline int floor_hash(struct xdp_md *ctx, __u64 *h, __u64 *mask, __u32 *lg)
{
	struct floor_line *cfg;
	struct pacer_src src;
	__u32 zero = 0;
	int kind = pacer_parse((void *)(long)ctx->data, (void *)(long)ctx->data_end, &src);

	if (kind == PACER_PKT_NONIP || kind == PACER_PKT_MALFORMED)
		return 0;
	cfg = bpf_map_lookup_elem(&floor_lines, &zero); /* always cached */
	if (!cfg)
		return 0;
	*mask = cfg->w[0];
	*lg = (__u32)cfg->w[1] & 31;
	*h = kind == PACER_PKT_V4 ? pacer_hash_v4(floor_key, (__u32)src.lo)
				  : pacer_hash_v6(floor_key, src.lo, src.hi);
	return 1;
}

static __always_inline struct floor_line *floor_line_at(__u32 idx)
{
	return bpf_map_lookup_elem(&floor_lines, &idx);
}

/* One dependent line read: 1 if the word matches h (never, in practice), 0 if not, -1 no line. */
static __always_inline int floor_read(__u64 h, __u64 mask)
{
	struct floor_line *l = floor_line_at((__u32)(h & mask));

	if (!l)
		return -1;
	return l->w[h & 7] == h;
}

/* As floor_read, the line by multiply-shift over `lines` (any count, as pacer_dense_lines). */
static __always_inline int floor_read_any(__u64 h, __u64 lines)
{
	struct floor_line *l = floor_line_at((__u32)(((__u64)(__u32)h * lines) >> 32));

	if (!l)
		return -1;
	return l->w[h & 7] == h;
}

/* n lines at the indexes the table (n = 2) or n sketch rows would use, all read. */
static __always_inline int floor_read_n(__u64 h, __u64 mask, int n)
{
	__u64 acc = 0;
	int i;

#pragma unroll
	for (i = 0; i < n; i++) {
		struct floor_line *l = floor_line_at((__u32)((h >> (i * 16)) & mask));

		if (!l)
			return -1;
		acc |= l->w[(h >> (i * 3)) & 7] ^ h;
	}
	return acc == 0;
}

/* n lines read; the verdict when they do not match (always, in practice): drop or pass. */
static __always_inline int floor_probe(struct xdp_md *ctx, int n, int miss)
{
	__u64 h, mask;
	__u32 lg;
	int hit;

	if (!floor_hash(ctx, &h, &mask, &lg))
		return XDP_PASS;
	hit = n == 1 ? floor_read(h, mask) : floor_read_n(h, mask, n);
	return hit ? XDP_DROP + XDP_PASS - miss : miss;
}

SEC("xdp")
int bench_floor(struct xdp_md *ctx) { return floor_probe(ctx, 1, XDP_DROP); }

SEC("xdp")
int bench_floor_pass(struct xdp_md *ctx) { return floor_probe(ctx, 1, XDP_PASS); }

SEC("xdp")
int bench_floor2(struct xdp_md *ctx) { return floor_probe(ctx, 2, XDP_DROP); }

SEC("xdp")
int bench_floor4(struct xdp_md *ctx) { return floor_probe(ctx, 4, XDP_DROP); }

/* The floor of a structure of any line count (the dense table's): one line, drop. */
SEC("xdp")
int bench_floor_any(struct xdp_md *ctx)
{
	struct floor_line *cfg;
	__u64 h, mask;
	__u32 lg, zero = 0;

	if (!floor_hash(ctx, &h, &mask, &lg))
		return XDP_PASS;
	cfg = bpf_map_lookup_elem(&floor_lines, &zero);
	if (!cfg)
		return XDP_PASS;
	return floor_read_any(h, cfg->w[2]) ? XDP_PASS : XDP_DROP;
}

/* The dense table's two lines (multiply-shift of each half of h), both read. */
SEC("xdp")
int bench_floor2_any(struct xdp_md *ctx)
{
	struct floor_line *cfg, *l0, *l1;
	__u64 h, mask, lines;
	__u32 lg, zero = 0, i0, i1;

	if (!floor_hash(ctx, &h, &mask, &lg))
		return XDP_PASS;
	cfg = bpf_map_lookup_elem(&floor_lines, &zero);
	if (!cfg)
		return XDP_PASS;
	lines = cfg->w[2];
	i0 = (__u32)(((__u64)(__u32)h * lines) >> 32);
	i1 = (__u32)(((h >> 32) * lines) >> 32);
	l0 = floor_line_at(i0);
	l1 = floor_line_at(i1);
	if (!l0 || !l1)
		return XDP_PASS;
	return ((l0->w[h & 7] ^ h) | (l1->w[(h >> 3) & 7] ^ h)) == 0 ? XDP_PASS : XDP_DROP;
}

/*
 * The table's two lines (pacer_tbl_lines) and what the judgement of a key
 * with no entry reads of both, as it reads them (the second line touched
 * first, the fingerprints, then the free and idle entries); nothing
 * written.
 */
SEC("xdp")
int bench_scan2(struct xdp_md *ctx)
{
	struct pacer_tbl_line *l[2];
	struct pacer_tbl_scan s;
	struct pacer_rate rate;
	__u64 h, mask;
	__u32 idx[2], lg;

	if (!floor_hash(ctx, &h, &mask, &lg))
		return XDP_PASS;
	pacer_tbl_lines(h, lg, idx);
	l[0] = (struct pacer_tbl_line *)floor_line_at(idx[0]);
	l[1] = (struct pacer_tbl_line *)floor_line_at(idx[1]);
	if (!l[0] || !l[1])
		return XDP_PASS;
	rate = pacer_rate_of(lg + 30, 0);
	pacer_tbl_scan_init(&s, pacer_tbl_fp(h), &rate);
	pacer_tbl_touch(l[1]);
	pacer_tbl_judge_line(l[0], 0, h >> 40, &s);
	pacer_tbl_judge_line(l[1], 1, h >> 40, &s);
	pacer_tbl_free_line(l[0], 0, h >> 40, &s);
	pacer_tbl_free_line(l[1], 1, h >> 40, &s);
	/* Every mask decides the verdict, or the compiler would drop the ones unused. */
	return (s.fresh_mask ^ s.own_mask ^ s.held_mask ^ s.free_mask ^ s.idle_mask) == (__u32)h
		       ? XDP_PASS
		       : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
