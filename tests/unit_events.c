// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Drop events (user/lib/out/drop_events.c): a source starts at its first
 * sampled drop (or its min_drops-th), stops hold after its last, once each; a drop stamped
 * earlier does not move it back; beyond the cap drops are counted as
 * untracked; the line cap allows at most per_sec lines in any second.
 * And the sampled records' keys (user/lib/out/sample_key.c): masking to the
 * coarser prefix, the text, the class.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <string.h>
#include "drop_events.h"
#include "sample_key.h"

#define S 1000000000ULL

static struct hh_key key4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint32_t slot)
{
	struct pacer_record r;
	struct hh_key k;

	memset(&r, 0, sizeof(r));
	r.addr[0] = a;
	r.addr[1] = b;
	r.addr[2] = c;
	r.addr[3] = d;
	r.family = 4;
	r.prefix = 32;
	r.class_slot = slot;
	sample_key_of(&r, 32, 128, &k);
	return k;
}

START_TEST(start_then_stop)
{
	struct de_tracker t;
	struct de_event ev;
	struct hh_key a = key4(10, 0, 0, 1, 0), b = key4(10, 0, 0, 2, 0);
	uint64_t ts;

	ck_assert_int_eq(de_init(&t, 16, 2 * S, 1), 0);
	ck_assert(de_drop(&t, &a, 100 * S, &ev));
	ck_assert_int_eq(ev.kind, DE_START);
	ck_assert_uint_eq(ev.at_ns, 100 * S);
	/* Drops every half second for 10 s: no second start, no stop. */
	for (ts = 100 * S + S / 2; ts <= 110 * S; ts += S / 2) {
		ck_assert(!de_drop(&t, &a, ts, &ev));
		ck_assert(!de_expire(&t, ts, &ev));
	}
	ck_assert(de_drop(&t, &b, 105 * S, &ev)); /* another source starts on its own */
	ck_assert(!de_expire(&t, 107 * S - 1, &ev));
	ck_assert(de_expire(&t, 107 * S, &ev)); /* b: hold after its only drop */
	ck_assert_int_eq(ev.kind, DE_STOP);
	ck_assert_mem_eq(ev.key.b, b.b, HH_KEY_BYTES);
	ck_assert(!de_expire(&t, 112 * S - 1, &ev));
	ck_assert(de_expire(&t, 112 * S, &ev));
	ck_assert_mem_eq(ev.key.b, a.b, HH_KEY_BYTES);
	ck_assert_uint_eq(ev.first_ns, 100 * S);
	ck_assert_uint_eq(ev.last_ns, 110 * S);
	ck_assert_uint_eq(ev.at_ns, 112 * S);
	ck_assert_uint_eq(ev.sampled, 21);
	ck_assert(!de_expire(&t, 200 * S, &ev));
	ck_assert_uint_eq(t.used, 0);
	/* After a stop, the next drop is a new start. */
	ck_assert(de_drop(&t, &a, 300 * S, &ev));
	ck_assert(de_flush(&t, &ev));
	ck_assert_int_eq(ev.kind, DE_STOP);
	ck_assert(!de_flush(&t, &ev));
	de_free(&t);
}
END_TEST

START_TEST(late_record_and_classes)
{
	struct de_tracker t;
	struct de_event ev;
	struct hh_key a = key4(10, 0, 0, 1, 0), a_dns = key4(10, 0, 0, 1, 3);

	ck_assert_int_eq(de_init(&t, 4, S, 1), 0);
	ck_assert(de_drop(&t, &a, 10 * S, &ev));
	/* The same source in a class is its own source. */
	ck_assert(de_drop(&t, &a_dns, 10 * S, &ev));
	ck_assert_uint_eq(sample_key_class_slot(&ev.key), 3);
	/* Another CPU's record, stamped before the last drop, arrives late: no move back. */
	ck_assert(!de_drop(&t, &a, 12 * S, &ev));
	ck_assert(!de_drop(&t, &a, 11 * S, &ev));
	ck_assert(de_expire(&t, 11 * S, &ev)); /* a_dns */
	ck_assert(!de_expire(&t, 13 * S - 1, &ev));
	ck_assert(de_expire(&t, 13 * S, &ev));
	ck_assert_uint_eq(ev.last_ns, 12 * S);
	ck_assert_uint_eq(ev.sampled, 3);
	de_free(&t);
}
END_TEST

START_TEST(cap_counts_untracked)
{
	struct de_tracker t;
	struct de_event ev;
	uint32_t i;

	ck_assert_int_eq(de_init(&t, 0, S, 1), -EINVAL);
	ck_assert_int_eq(de_init(&t, 4, 0, 1), -EINVAL);
	ck_assert_int_eq(de_init(&t, 3, S, 1), 0);
	for (i = 0; i < 5; i++) {
		struct hh_key k = key4(10, 0, 0, (uint8_t)i, 0);

		ck_assert_int_eq(de_drop(&t, &k, S, &ev), i < 3);
	}
	ck_assert_uint_eq(t.untracked, 2);
	ck_assert(de_expire(&t, 2 * S, &ev));
	{
		struct hh_key k = key4(10, 0, 0, 9, 0);

		ck_assert(de_drop(&t, &k, 2 * S, &ev)); /* room again */
	}
	de_free(&t);
}
END_TEST

/* --min-drops 3: a source starts at its third sampled drop; one that stops short says nothing. */
START_TEST(min_drops)
{
	struct de_tracker t;
	struct de_event ev;
	struct hh_key a = key4(10, 0, 0, 1, 0), b = key4(10, 0, 0, 2, 0);

	ck_assert_int_eq(de_init(&t, 8, 2 * S, 0), -EINVAL);
	ck_assert_int_eq(de_init(&t, 8, 2 * S, 3), 0);
	ck_assert(!de_drop(&t, &a, 10 * S, &ev));
	ck_assert(!de_drop(&t, &b, 10 * S, &ev));
	ck_assert(!de_drop(&t, &a, 11 * S, &ev));
	ck_assert(!de_drop(&t, &b, 11 * S, &ev));
	ck_assert(de_drop(&t, &a, 12 * S, &ev)); /* a's third */
	ck_assert_int_eq(ev.kind, DE_START);
	ck_assert_uint_eq(ev.first_ns, 10 * S);
	ck_assert_uint_eq(ev.at_ns, 12 * S);
	ck_assert_uint_eq(ev.sampled, 3);
	ck_assert(!de_drop(&t, &a, 13 * S, &ev)); /* no second start */
	/* b stops short: its hold runs out at 13 s, silently; a's at 15 s with its stop. */
	ck_assert(!de_expire(&t, 14 * S, &ev));
	ck_assert_uint_eq(t.used, 1);
	ck_assert(de_expire(&t, 15 * S, &ev));
	ck_assert_int_eq(ev.kind, DE_STOP);
	ck_assert_mem_eq(ev.key.b, a.b, HH_KEY_BYTES);
	ck_assert_uint_eq(ev.sampled, 4);
	/* Two drops more than a hold apart do not add up. */
	ck_assert(!de_drop(&t, &b, 20 * S, &ev));
	ck_assert(!de_drop(&t, &b, 21 * S, &ev));
	ck_assert(!de_expire(&t, 23 * S, &ev));
	ck_assert(!de_drop(&t, &b, 24 * S, &ev));
	/* On exit an unstarted source says nothing either. */
	ck_assert(!de_flush(&t, &ev));
	ck_assert_uint_eq(t.used, 0);
	de_free(&t);
}
END_TEST

START_TEST(rate_window)
{
	struct de_rate r;
	uint64_t t, ok = 0, first_second = 0;

	ck_assert_int_eq(de_rate_init(&r, 0), -EINVAL);
	ck_assert_int_eq(de_rate_init(&r, 5), 0);
	/* 100 lines in 0.99 s: 5 go out. */
	for (t = 0; t < 100; t++)
		ok += de_rate_take(&r, S + t * (S / 101), t & 1 ? DE_STOP : DE_START);
	ck_assert_uint_eq(ok, 5);
	ck_assert_uint_eq(r.refused[DE_START] + r.refused[DE_STOP], 95);
	/* A second after the first line, one more. */
	ck_assert(!de_rate_take(&r, 2 * S - 1, DE_START));
	ck_assert(de_rate_take(&r, 2 * S, DE_START));
	de_rate_free(&r);
	/* Any window of one second holds at most 5: a line every 10 ms for 10 s. */
	ck_assert_int_eq(de_rate_init(&r, 5), 0);
	{
		uint64_t sent[1000];
		uint32_t n = 0, i, j;

		for (t = 0; t < 1000; t++)
			if (de_rate_take(&r, t * (S / 100), DE_START))
				sent[n++] = t * (S / 100);
		for (i = 0; i < n; i++) {
			for (j = i; j < n && sent[j] < sent[i] + S; j++)
				;
			ck_assert_uint_le(j - i, 5);
			if (sent[i] < S)
				first_second++;
		}
		ck_assert_uint_eq(first_second, 5);
		ck_assert_uint_ge(n, 45);
	}
	de_rate_free(&r);
}
END_TEST

START_TEST(keys_masked_and_printed)
{
	struct pacer_record r;
	struct hh_key k;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.family = 4;
	r.prefix = 32;
	memcpy(r.addr, (uint8_t[]){ 203, 0, 113, 77 }, 4);
	sample_key_of(&r, 24, 128, &k);
	ck_assert_str_eq(sample_key_str(&k, buf, sizeof(buf)), "203.0.113.0/24");
	sample_key_of(&r, 21, 128, &k);
	ck_assert_str_eq(sample_key_str(&k, buf, sizeof(buf)), "203.0.112.0/21");
	/* A key the pacer masked coarser stays as it is. */
	r.prefix = 16;
	memcpy(r.addr, (uint8_t[]){ 203, 0, 0, 0 }, 4);
	sample_key_of(&r, 24, 128, &k);
	ck_assert_str_eq(sample_key_str(&k, buf, sizeof(buf)), "203.0.0.0/16");
	ck_assert_uint_eq(sample_key_family(&k), 4);
	memset(&r, 0, sizeof(r));
	r.family = 6;
	r.prefix = 64;
	r.class_slot = 300;
	memcpy(r.addr, (uint8_t[]){ 0x20, 0x01, 0x0d, 0xb8, 0x12, 0x34, 0x56, 0x78 }, 8);
	sample_key_of(&r, 32, 48, &k);
	ck_assert_str_eq(sample_key_str(&k, buf, sizeof(buf)), "2001:db8:1234::/48");
	ck_assert_uint_eq(sample_key_class_slot(&k), 300);
	ck_assert_str_eq(format_utc_ms(1796436184123456789ULL, buf, sizeof(buf)),
			 "2026-12-05T02:03:04.123Z");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("drop_events");
	TCase *tc = tcase_create("events");

	tcase_add_test(tc, start_then_stop);
	tcase_add_test(tc, late_record_and_classes);
	tcase_add_test(tc, cap_counts_untracked);
	tcase_add_test(tc, min_drops);
	tcase_add_test(tc, rate_window);
	tcase_add_test(tc, keys_masked_and_printed);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
