// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <ctype.h>
#include <arpa/inet.h>
#include "cli_values.h"
#include "pacer_abi.h"
#include "pacer_hash.h"

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{ "ns", 1ULL }, { "us", 1000ULL }, { "ms", 1000000ULL }, { "s", 1000000000ULL },
};

int parse_duration_ns(const char *s, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, frac_div = 1, unit = 0;
	const char *p = s;
	size_t i;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	while (isdigit((unsigned char)*p)) {
		uint64_t d = (uint64_t)(*p++ - '0');

		if (whole > (UINT64_MAX - d) / 10)
			return -ERANGE;
		whole = whole * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p)) {
			if (frac_div >= 1000000000ULL)
				return -EINVAL; /* finer than 1 ns at any unit */
			frac = frac * 10 + (uint64_t)(*p++ - '0');
			frac_div *= 10;
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(p, units[i].name)) {
			unit = units[i].ns;
			break;
		}
	}
	if (!unit)
		return -EINVAL;
	if (frac * unit % frac_div)
		return -EINVAL; /* not a whole number of nanoseconds */
	/* The fraction too must fit: 18446744073.9s is beyond 2^64 ns, not 190 ms. */
	if (whole > UINT64_MAX / unit || whole * unit > UINT64_MAX - frac * unit / frac_div)
		return -ERANGE;
	*out = whole * unit + frac * unit / frac_div;
	return 0;
}

int parse_duration_max(const char *s, uint64_t max_ns, uint64_t *out)
{
	uint64_t v;
	int err = parse_duration_ns(s, &v);

	if (err)
		return err;
	if (!v)
		return -EINVAL;
	if (v > max_ns)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *format_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000000ULL && ns % 1000000ULL == 0)
		snprintf(buf, len, "%g s", (double)ns / 1e9);
	else if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, len, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

const char *format_duration_range(uint64_t lo_ns, uint64_t hi_ns, char *buf, size_t len)
{
	char lo[32], hi[32];

	snprintf(buf, len, "[%s, %s]", format_duration(lo_ns, lo, sizeof(lo)),
		 format_duration(hi_ns, hi, sizeof(hi)));
	return buf;
}

static const char *one_in(uint64_t thresh, char *buf, size_t len)
{
	if (!thresh)
		return "off";
	snprintf(buf, len, "1/%llu", (unsigned long long)((1ULL << 32) / thresh));
	return buf;
}

const char *format_sampling(uint64_t src_thresh, uint64_t pkt_thresh, char *buf, size_t len)
{
	char a[32], b[32];

	if (!src_thresh && !pkt_thresh)
		snprintf(buf, len, "off");
	else
		snprintf(buf, len, "sources %s, packets %s", one_in(src_thresh, a, sizeof(a)),
			 one_in(pkt_thresh, b, sizeof(b)));
	return buf;
}

const char *format_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ULL << 30))
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ULL << 30));
	else if (bytes >= (1ULL << 20))
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1ULL << 20));
	else if (bytes >= (1ULL << 10))
		snprintf(buf, len, "%.1f KiB", (double)bytes / (1ULL << 10));
	else
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	return buf;
}

static void addr_words(struct pacer_addr *a)
{
	a->lo = 0;
	a->hi = 0;
	if (a->family == 4) {
		uint32_t v;

		memcpy(&v, a->bytes, 4);
		a->lo = v;
	} else {
		memcpy(&a->lo, a->bytes, 8);
		memcpy(&a->hi, a->bytes + 8, 8);
	}
}

int parse_address(const char *s, struct pacer_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->bytes) == 1)
		out->family = 4;
	else if (inet_pton(AF_INET6, s, out->bytes) == 1)
		out->family = 6;
	else
		return -EINVAL;
	addr_words(out);
	return 0;
}

const char *format_address(const struct pacer_addr *a, char *buf, size_t len)
{
	if (!inet_ntop(a->family == 4 ? AF_INET : AF_INET6, a->bytes, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

int pacer_addr_unmap_v4(struct pacer_addr *a)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	uint8_t v4[4];

	if (a->family != 6 || memcmp(a->bytes, mapped, sizeof(mapped)))
		return 0;
	memcpy(v4, a->bytes + 12, 4);
	memset(a->bytes, 0, sizeof(a->bytes));
	memcpy(a->bytes, v4, 4);
	a->family = 4;
	addr_words(a);
	return 1;
}

void pacer_addr_mask(struct pacer_addr *a, unsigned prefix)
{
	if (a->family == 4) {
		uint32_t v = (uint32_t)a->lo & pacer_mask4(prefix);

		a->lo = v;
		memcpy(a->bytes, &v, 4);
	} else {
		a->lo &= pacer_mask6_lo(prefix);
		a->hi &= pacer_mask6_hi(prefix);
		memcpy(a->bytes, &a->lo, 8);
		memcpy(a->bytes + 8, &a->hi, 8);
	}
}

uint64_t sample_thresh_one_in(uint64_t n)
{
	return n ? (1ULL << 32) / n : 0;
}

int parse_one_in(const char *s, uint64_t *n)
{
	if (!strncmp(s, "1/", 2))
		s += 2;
	return parse_u64_range(s, 1, 1ULL << 32, n);
}

int parse_count_per(const char *s, uint64_t max_count, uint64_t *count, uint64_t *window_ns)
{
	const char *slash = strchr(s, '/');
	char num[32];
	size_t n;

	if (!slash || slash == s || (n = (size_t)(slash - s)) >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_u64_range(num, 1, max_count, count))
		return -EINVAL;
	if (parse_duration_ns(slash + 1, window_ns) || !*window_ns)
		return -EINVAL;
	return 0;
}

int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

int parse_timeout_s(const char *s, uint32_t *out)
{
	static const struct {
		char unit;
		uint64_t secs;
	} units[] = { { 'd', 86400 }, { 'h', 3600 }, { 'm', 60 }, { 's', 1 } };
	uint64_t total = 0, v;
	size_t next = 0, i;
	const char *p = s;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || v > 0xffffffffULL)
			return -ERANGE;
		if (!*end && p == s) { /* a bare number: seconds */
			total = v;
			p = end;
			break;
		}
		for (i = next; i < sizeof(units) / sizeof(units[0]) && units[i].unit != *end; i++)
			;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL; /* unknown unit, or one out of order or repeated */
		total += v * units[i].secs;
		if (total > 0xffffffffULL)
			return -ERANGE;
		next = i + 1;
		p = end + 1;
	}
	if (!total)
		return -EINVAL;
	*out = (uint32_t)total;
	return 0;
}

const char *format_timeout_s(uint64_t secs, char *buf, size_t len)
{
	uint64_t d = secs / 86400, h = secs / 3600 % 24, m = secs / 60 % 60, sec = secs % 60;
	size_t at = 0;

	buf[0] = 0;
	if (d)
		at += (size_t)snprintf(buf + at, len - at, "%llud", (unsigned long long)d);
	if (h && at < len)
		at += (size_t)snprintf(buf + at, len - at, "%lluh", (unsigned long long)h);
	if (m && at < len)
		at += (size_t)snprintf(buf + at, len - at, "%llum", (unsigned long long)m);
	if ((sec || !secs) && at < len)
		snprintf(buf + at, len - at, "%llus", (unsigned long long)sec);
	return buf;
}
