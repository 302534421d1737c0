// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A sampled record's source as a heavy-hitter key, and its text (sample_key.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "sample_key.h"

void sample_key_of(const struct pacer_record *rec, uint32_t prefix4, uint32_t prefix6,
		   struct hh_key *k)
{
	uint32_t want = rec->family == 4 ? prefix4 : prefix6, bits = rec->family == 4 ? 32 : 128;
	uint32_t prefix = rec->prefix < want ? rec->prefix : want, i;

	if (prefix > bits)
		prefix = bits;
	memset(k, 0, sizeof(*k));
	memcpy(k->b, rec->addr, 16);
	for (i = 0; i < 16; i++) {
		if (8 * i >= prefix)
			k->b[i] = 0;
		else if (8 * i + 8 > prefix)
			k->b[i] &= (uint8_t)(0xff00 >> (prefix - 8 * i));
	}
	k->b[16] = rec->family;
	k->b[17] = (uint8_t)prefix;
	k->b[18] = (uint8_t)rec->class_slot;
	k->b[19] = (uint8_t)(rec->class_slot >> 8);
}

uint32_t sample_key_family(const struct hh_key *k)
{
	return k->b[16];
}

uint32_t sample_key_class_slot(const struct hh_key *k)
{
	return (uint32_t)k->b[18] | (uint32_t)k->b[19] << 8;
}

const char *sample_key_str(const struct hh_key *k, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(k->b[16] == 4 ? AF_INET : AF_INET6, k->b, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, len, "%s/%u", a, k->b[17]);
	return buf;
}

const char *format_utc_ms(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000ULL);
	struct tm tm;
	char s[32];

	if (!gmtime_r(&t, &tm) || !strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(s, sizeof(s), "?");
	snprintf(buf, len, "%s.%03uZ", s, (unsigned)(real_ns / 1000000ULL % 1000));
	return buf;
}
