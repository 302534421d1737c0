/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A sampled record's source as `top` and `events` count it: its address
 * (already masked by the datapath to the key's prefix) masked again to an
 * aggregation prefix, its family, that prefix and its class, packed into a
 * heavy-hitter key (heavy_hitters.h); and the text those verbs print.
 */
#ifndef PACER_SAMPLE_KEY_H
#define PACER_SAMPLE_KEY_H

#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "heavy_hitters.h"

/*
 * The key of rec at the coarser of its own prefix and prefix4/prefix6
 * (0..32, 0..128; anything above the record's prefix leaves it as is).
 * Bytes 0-15 the masked address, 16 the family, 17 the prefix, 18-19 the
 * record's class_slot (little-endian).
 */
void sample_key_of(const struct pacer_record *rec, uint32_t prefix4, uint32_t prefix6,
		   struct hh_key *k);
uint32_t sample_key_family(const struct hh_key *k);
uint32_t sample_key_class_slot(const struct hh_key *k);
/* "203.0.113.0/24", "2001:db8::/48". */
const char *sample_key_str(const struct hh_key *k, char *buf, size_t len);
/* Wall-clock ns as ISO 8601 UTC with milliseconds: "2026-11-29T02:03:04.567Z". */
const char *format_utc_ms(uint64_t real_ns, char *buf, size_t len);

#endif
