/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Program variants on a running pacer (docs/design.md, Program variants):
 * the program built for the stages its settings use, swapped in place
 * (xdp_replace.h) with every map kept, when a writer turns a stage on or
 * off.  A writer holds the pacer's writer lock (writer_lock.h) around
 *
 *     variant_ensure(h, stages it is about to turn on);
 *     ... its change ...
 *     variant_settle(h);
 *
 * so a stage is never on in the settings while the program lacks it, and
 * the program keeps no stage the settings no longer use.  A program
 * attached without `xdp-pacer load` (no pins: `ip link ... xdp obj`) carries
 * every stage and is never swapped.
 */
#ifndef PACER_VARIANT_SWAP_H
#define PACER_VARIANT_SWAP_H

#include <stdint.h>
#include "pacer_handle.h"

/* The stages the program on h carries (PACER_VARIANT_ALL for one without the word). */
uint32_t variant_running(const struct pacer_handle *h);

/*
 * The stages the settings in a pacer's maps use: fd[] its maps (by enum
 * pacer_map_id; the budget's of an earlier release read as far as this one
 * knows them), cfg its live configuration.  0, or -errno with *bits unset.
 */
int variant_in_use_of(const int fd[PACER_MAP_MAX], struct pacer_config *cfg, uint32_t *bits);

/* The same for h's live settings: 0, or -errno after saying why. */
int variant_in_use(const struct pacer_handle *h, uint32_t *bits);

/*
 * Swap in, in place of h's program, the variant with bits, keeping every
 * map; h then describes the new program.  0, or -errno after saying why
 * (the program running is then unchanged).
 */
int variant_swap(struct pacer_handle *h, uint32_t bits);

/* Make h's program carry the stages need too (swapping if it lacks one).  0 or -errno (said). */
int variant_ensure(struct pacer_handle *h, uint32_t need);

/* Swap in the variant of the stages the settings use now, if the program differs.  0 or -errno (said). */
int variant_settle(struct pacer_handle *h);

/*
 * A sampling reader's switch (top, events, record): store the thresholds
 * src and pkt in h's live settings under the writer lock, the program made
 * to carry sampling first when either is non-zero, the variant settled
 * after.  0, or -1 after saying why (nothing stored).
 */
int variant_store_sampling(struct pacer_handle *h, uint64_t src, uint64_t pkt);

/*
 * What the program on h carries and why, in words: "lists, budget (what
 * the settings use)", or the stages it carries beyond them and why.
 */
const char *variant_explain(const struct pacer_handle *h, char *buf, size_t len);

/*
 * The stages every program carries whatever the settings use: from
 * XDP_PACER_VARIANT, "all" or a comma-separated list of stage names (for
 * measuring a variant, or keeping swaps away); 0 when unset.  A word that
 * names no stage is said once and reads as "all".
 */
uint32_t variant_floor(void);

#endif
