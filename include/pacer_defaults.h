/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Defaults, written once: the object as compiled uses them (so
 * `ip link set dev X xdp obj` works without the loader), and so does the
 * loader for every option not given.  Rows of 2^20 one-byte cells: 4 MiB
 * per copy.  Tick 2^25 ns (33.6 ms) gives a 1 s interval a threshold of 31
 * ticks (unit_sketch checks it against pacer_thresh_ticks()).
 */
#ifndef PACER_DEFAULTS_H
#define PACER_DEFAULTS_H

#include "pacer_abi.h"

#define PACER_DEFAULT_INTERVAL_NS 1000000000ULL
#define PACER_DEFAULT_ROWS 4
#define PACER_DEFAULT_LINES_LOG2 14
#define PACER_DEFAULT_TICK_SHIFT 25
#define PACER_DEFAULT_THRESH 31
#define PACER_DEFAULT_PREFIX4 32
#define PACER_DEFAULT_PREFIX6 64
/*
 * The same defaults as the loader's options spell them (its usage shows
 * them); unit_layout parses each and checks it against the numbers above.
 */
#define PACER_DEFAULT_INTERVAL_TEXT "1s"
#define PACER_DEFAULT_ROWS_TEXT "4"
#define PACER_DEFAULT_WIDTH_TEXT "1048576" /* 2^LINES_LOG2 lines of 64 cells */
#define PACER_DEFAULT_PREFIX4_TEXT "32"
#define PACER_DEFAULT_PREFIX6_TEXT "64"
#define PACER_DEFAULT_RINGBUF_BYTES (1u << 20)
/*
 * The limiter's place in libxdp's dispatcher (lower runs first): after
 * xdp-filter (priority 10), so a source a filter denies costs the limiter
 * nothing and takes none of its state or budget; before programs at
 * libxdp's default (50), which may redirect or transmit a packet, so it is
 * paced before it leaves the chain.  Overridden by `load --priority`.
 */
#define PACER_DEFAULT_RUN_PRIO 20
#define PACER_DEFAULT_RUN_PRIO_TEXT "20"
/* Per-CPU copies the object carries as compiled; CPUs beyond share them (see pacer_place.h). */
#define PACER_DEFAULT_COPIES 4

/* The fixed layout (struct pacer_layout) of the object as compiled. */
#define PACER_DEFAULT_LAYOUT {                          \
	.magic = PACER_LAYOUT_MAGIC,                    \
	.abi_version = PACER_ABI_VERSION,               \
	.rows = PACER_DEFAULT_ROWS,                     \
	.kind = PACER_LAYOUT_ROWS,                      \
	.placement = PACER_PLACEMENT_PERCPU,            \
	.clock = PACER_CLOCK_CACHED,                    \
	.tick_shift = PACER_DEFAULT_TICK_SHIFT,         \
	.lines_log2 = PACER_DEFAULT_LINES_LOG2,         \
	.copies = PACER_DEFAULT_COPIES,                 \
	.backend = PACER_BACKEND_SKETCH,                \
	.on_full = PACER_TBL_FULL_DROP,                 \
}

/* The live configuration (struct pacer_config) of the object as compiled. */
#define PACER_DEFAULT_CONFIG {                          \
	.interval_ns = PACER_DEFAULT_INTERVAL_NS,       \
	.thresh_ticks = PACER_DEFAULT_THRESH,           \
	.policy = PACER_POLICY_PACE,                    \
	.malformed = PACER_MALFORMED_PASS,              \
	.prefix4 = PACER_DEFAULT_PREFIX4,               \
	.prefix6 = PACER_DEFAULT_PREFIX6,               \
	.rate_n = 1,                                    \
}

#endif /* PACER_DEFAULTS_H */
