/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Parsing of operator input: durations, bounded integers, addresses. */
#ifndef PACER_CLI_VALUES_H
#define PACER_CLI_VALUES_H

#include <stdint.h>
#include <stddef.h>

/*
 * "1s", "250ms", "10us", "500ns", "1.5s"; a bare number is rejected
 * because its unit would be a guess.  Returns 0 or -EINVAL / -ERANGE.
 */
int parse_duration_ns(const char *s, uint64_t *out);

/* A duration in [1 ns, max_ns]: -EINVAL on junk or zero, -ERANGE above max_ns. */
int parse_duration_max(const char *s, uint64_t max_ns, uint64_t *out);

/* Decimal integer in [min, max]; -EINVAL on junk, -ERANGE outside. */
int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/*
 * A list entry's timeout as nftables writes one: "30s", "5m", "1h", "1d",
 * combined "1h30m" (units d, h, m, s, each once, largest first); a bare
 * number is seconds.  1 s to 2^32 - 1 s (136 years).  0, -EINVAL or -ERANGE.
 */
int parse_timeout_s(const char *s, uint32_t *out);
/* "1h30m", "59m58s", "0s": the form parse_timeout_s reads. */
const char *format_timeout_s(uint64_t secs, char *buf, size_t len);

/* Human form of a duration: "1s", "33.554ms", ... into buf. */
const char *format_duration(uint64_t ns, char *buf, size_t len);

/* "[lo, hi]" in format_duration's form, e.g. "[33.554 ms, 528.482 ms]". */
const char *format_duration_range(uint64_t lo_ns, uint64_t hi_ns, char *buf, size_t len);

/*
 * Sampling settings as status and record print them: "off" when both are
 * off, else "sources 1/N, packets 1/M" with "off" for a zero threshold.
 */
const char *format_sampling(uint64_t src_thresh, uint64_t pkt_thresh, char *buf, size_t len);

/* Human form of a byte count: "4.0 MiB". */
const char *format_bytes(uint64_t bytes, char *buf, size_t len);

/*
 * An IPv4 or IPv6 address as the datapath sees it: family 4 or 6, and the
 * two address words as little-endian loads of the packet bytes.
 */
struct pacer_addr {
	int family;
	uint8_t bytes[16];
	uint64_t lo, hi;
};

int parse_address(const char *s, struct pacer_addr *out);
const char *format_address(const struct pacer_addr *a, char *buf, size_t len);

/*
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it
 * stands for: such a host reaches the datapath as an IPv4 source.  Returns
 * whether it was one.
 */
int pacer_addr_unmap_v4(struct pacer_addr *a);

/* Apply a prefix mask in place (same masks as the datapath). */
void pacer_addr_mask(struct pacer_addr *a, unsigned prefix);

/* 1/N sampling threshold against a 32-bit hash: 2^32 / N. */
uint64_t sample_thresh_one_in(uint64_t n);

/* Parse "1/N" or "N" (meaning 1/N); N >= 1. */
int parse_one_in(const char *s, uint64_t *n);

/* "N/T": a count from 1 to max_count and a positive duration; 0 or -EINVAL. */
int parse_count_per(const char *s, uint64_t max_count, uint64_t *count, uint64_t *window_ns);

/* "02:00:00:00:00:01": six hex bytes separated by ':'.  0 or -EINVAL. */
int parse_mac(const char *s, uint8_t mac[6]);

#endif
