// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit tests of the RSS verdict (user/lib/backend/rss.c): for every field set a
 * driver can report, whether per-CPU placement is exact per source, what
 * --placement auto picks, and what the operator is told.
 */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <string.h>
#include <linux/ethtool.h>
#include "pacer_abi.h"
#include "rss.h"

#define SD ((uint64_t)(RXH_IP_SRC | RXH_IP_DST))
#define SDFN (SD | RXH_L4_B_0_1 | RXH_L4_B_2_3)

static struct rss_info all(uint64_t fields, uint32_t queues)
{
	struct rss_info in = { .rx_queues = queues };
	int f;

	for (f = 0; f < RSS_NFLOWS; f++)
		in.fields[f] = fields;
	return in;
}

static struct rss_verdict judge(const struct rss_info *in)
{
	struct rss_verdict v;

	rss_judge("eth9", in, false, 32, 128, &v);
	return v;
}

static void assert_has(const struct rss_verdict *v, const char *what)
{
	ck_assert_msg(strstr(v->text, what), "'%s' not in: %s", what, v->text);
}

START_TEST(test_addresses_only_is_exact)
{
	/* src+dst, src only, dst only: no field that differs inside a source */
	const uint64_t sets[] = { SD, RXH_IP_SRC, RXH_IP_DST };
	size_t i;

	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		struct rss_info in = all(sets[i], 4);
		struct rss_verdict v = judge(&in);

		ck_assert_msg(v.exact, "fields %#llx: %s", (unsigned long long)sets[i], v.text);
		ck_assert_int_eq(v.reason, RSS_EXACT_ADDRESSES);
		ck_assert_uint_eq(rss_auto_placement(&v), PACER_PLACEMENT_PERCPU);
		assert_has(&v, "per-CPU placement is exact per source");
	}
}
END_TEST

START_TEST(test_any_port_bit_is_not_exact)
{
	/* Every non-empty combination of the other RXH bits, on each flow type alone. */
	const uint64_t other[] = { RXH_L4_B_0_1, RXH_L4_B_2_3, RXH_L2DA, RXH_VLAN, RXH_L3_PROTO };
	unsigned mask;
	int f;

	for (f = 0; f < RSS_NFLOWS; f++) {
		for (mask = 1; mask < 1u << 5; mask++) {
			struct rss_info in = all(SD, 8);
			struct rss_verdict v;
			unsigned b;

			for (b = 0; b < 5; b++)
				if (mask & 1u << b)
					in.fields[f] |= other[b];
			v = judge(&in);
			ck_assert_msg(!v.exact, "flow %d mask %#x judged exact", f, mask);
			ck_assert_int_eq(v.reason, RSS_HASHES_MORE);
			ck_assert_uint_eq(rss_auto_placement(&v), PACER_PLACEMENT_SHARED);
			assert_has(&v, rss_flow_name(f));
		}
	}
}
END_TEST

START_TEST(test_default_4tuple_message)
{
	struct rss_info in = all(SD, 4);
	struct rss_verdict v;

	in.fields[RSS_UDP4] = SDFN;
	v = judge(&in);
	ck_assert_str_eq(v.text,
			 "RSS on eth9 hashes udp4 on src,dst,src-port,dst-port: a source may reach "
			 "several CPUs; per-CPU placement then admits it up to once per CPU; run "
			 "`ethtool -N eth9 rx-flow-hash udp4 sd` or use --placement shared");
	in.fields[RSS_TCP4] = SDFN;
	in.fields[RSS_TCP6] = SDFN;
	v = judge(&in);
	assert_has(&v, "hashes tcp4 on src,dst,src-port,dst-port; udp4 on src,dst,src-port,dst-port; "
		       "tcp6 on src,dst,src-port,dst-port:");
	assert_has(&v, "`ethtool -N eth9 rx-flow-hash tcp4 sd` (and the same for udp4, tcp6) or use "
		       "--placement shared");
}
END_TEST

START_TEST(test_mixed_address_fields_per_family)
{
	/* tcp4 on src, udp4 on src+dst: one source's TCP and UDP differ in hash. */
	struct rss_info in = all(SD, 4);
	struct rss_verdict v;

	in.fields[RSS_TCP4] = RXH_IP_SRC;
	v = judge(&in);
	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_MIXED);
	assert_has(&v, "tcp4 on src; udp4 on src,dst");
	assert_has(&v, "TCP and UDP packets may reach different CPUs");
	assert_has(&v, "rx-flow-hash tcp4 sd");
	/* Across families it does not matter: IPv4 and IPv6 keys never meet. */
	in = all(SD, 4);
	in.fields[RSS_TCP6] = RXH_IP_SRC;
	in.fields[RSS_UDP6] = RXH_IP_SRC;
	v = judge(&in);
	ck_assert_msg(v.exact, "%s", v.text);
	/* A discarded flow type delivers nothing: it neither spreads nor mixes. */
	in = all(SD, 4);
	in.fields[RSS_UDP6] = RXH_DISCARD | SDFN;
	in.fields[RSS_TCP6] = RXH_IP_SRC;
	v = judge(&in);
	ck_assert_msg(v.exact, "%s", v.text);
}
END_TEST

START_TEST(test_one_queue_is_exact_whatever_the_hash)
{
	struct rss_info in = all(SDFN, 1);
	struct rss_verdict v = judge(&in);

	ck_assert(v.exact);
	ck_assert_int_eq(v.reason, RSS_EXACT_ONE_QUEUE);
	ck_assert_str_eq(v.text, "eth9 has one RX queue: every packet is received by the CPU that "
				 "services it, so per-CPU placement is exact per source");
	ck_assert_uint_eq(rss_auto_placement(&v), PACER_PLACEMENT_PERCPU);
	/* ...even with a flow type unreadable, and with wide keys. */
	in.hash_err[RSS_TCP6] = -EINVAL;
	rss_judge("eth9", &in, false, 24, 64, &v);
	ck_assert(v.exact);
}
END_TEST

START_TEST(test_no_rss_has_its_own_message)
{
	struct rss_info in = all(0, 1);
	struct rss_verdict v;
	int f;

	for (f = 0; f < RSS_NFLOWS; f++)
		in.hash_err[f] = -EOPNOTSUPP;
	v = judge(&in);
	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_NO_HASH);
	ck_assert_uint_eq(rss_auto_placement(&v), PACER_PLACEMENT_SHARED);
	assert_has(&v, "eth9 reports no RSS hash (ETHTOOL_GRXFH: Operation not supported) and 1 RX "
		       "queue:");
	assert_has(&v, "veth");
	ck_assert_uint_eq(v.rx_queues, 1);
	in.queues_err = -EOPNOTSUPP;
	v = judge(&in);
	assert_has(&v, "an unknown number of RX queues");
	ck_assert_uint_eq(v.rx_queues, 0); /* unknown, for the cost rule */
	in.queues_err = 0;
	in.rx_queues = 2;
	v = judge(&in);
	assert_has(&v, "and 2 RX queues:");
	ck_assert_uint_eq(v.rx_queues, 2);
}
END_TEST

START_TEST(test_some_flow_types_unreadable)
{
	struct rss_info in = all(SD, 4);
	struct rss_verdict v;

	in.hash_err[RSS_UDP6] = -EINVAL;
	v = judge(&in);
	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_HASH_UNKNOWN);
	assert_has(&v, "for udp6 (ETHTOOL_GRXFH: Invalid argument)");
	/* Queue count unknown does not matter when the hash says it all. */
	in = all(SD, 0);
	in.queues_err = -EOPNOTSUPP;
	v = judge(&in);
	ck_assert(v.exact);
}
END_TEST

START_TEST(test_empty_hash_is_not_exact)
{
	/* virtio-net without RSS answers GRXFH with no fields; the host picks the queue. */
	struct rss_info in = all(0, 4);
	struct rss_verdict v = judge(&in);

	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_HASH_EMPTY);
	ck_assert_str_eq(v.text, "eth9 reports an empty RSS hash for tcp4 (no fields): its queue is "
				 "chosen some other way (virtio-net without the RSS feature reports "
				 "this; the host then picks the queue), so per-CPU placement may admit "
				 "a source up to once per CPU");
	in = all(SD, 4);
	in.fields[RSS_UDP6] = 0;
	v = judge(&in);
	ck_assert_int_eq(v.reason, RSS_HASH_EMPTY);
	assert_has(&v, "for udp6 (no fields)");
	/* One queue (a plain virtio-net NIC): exact whatever the hash says. */
	in = all(0, 1);
	v = judge(&in);
	ck_assert(v.exact);
}
END_TEST

START_TEST(test_skb_mode_is_never_exact)
{
	struct rss_info in = all(SD, 1);
	struct rss_verdict v;

	rss_judge("eth9", &in, true, 32, 128, &v);
	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_SKB_MODE);
	assert_has(&v, "skb mode: generic XDP");
}
END_TEST

START_TEST(test_keys_wider_than_an_address)
{
	struct rss_info in = all(SD, 4);
	struct rss_verdict v;

	rss_judge("eth9", &in, false, 32, 64, &v);
	ck_assert(!v.exact);
	ck_assert_int_eq(v.reason, RSS_WIDE_KEYS);
	assert_has(&v, "keys are /64 IPv6 prefixes");
	assert_has(&v, "--prefix6 128");
	rss_judge("eth9", &in, false, 24, 64, &v);
	assert_has(&v, "keys are /24 IPv4 and /64 IPv6 prefixes");
	rss_judge("eth9", &in, false, 24, 128, &v);
	assert_has(&v, "keys are /24 IPv4 prefixes");
	ck_assert_uint_eq(rss_auto_placement(&v), PACER_PLACEMENT_SHARED);
}
END_TEST

START_TEST(test_fields_text)
{
	char b[128];

	rss_fields_text(SDFN, b, sizeof(b));
	ck_assert_str_eq(b, "src,dst,src-port,dst-port");
	rss_fields_text(0, b, sizeof(b));
	ck_assert_str_eq(b, "nothing");
	rss_fields_text(RXH_L2DA | RXH_VLAN | RXH_L3_PROTO | RXH_DISCARD, b, sizeof(b));
	ck_assert_str_eq(b, "dst-mac,vlan,l3-proto,discard");
	rss_fields_text(SDFN, b, 8); /* cut, terminated */
	ck_assert_uint_lt(strlen(b), 8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rss");
	TCase *tc = tcase_create("verdict");

	tcase_add_test(tc, test_addresses_only_is_exact);
	tcase_add_test(tc, test_any_port_bit_is_not_exact);
	tcase_add_test(tc, test_default_4tuple_message);
	tcase_add_test(tc, test_mixed_address_fields_per_family);
	tcase_add_test(tc, test_one_queue_is_exact_whatever_the_hash);
	tcase_add_test(tc, test_no_rss_has_its_own_message);
	tcase_add_test(tc, test_some_flow_types_unreadable);
	tcase_add_test(tc, test_empty_hash_is_not_exact);
	tcase_add_test(tc, test_skb_mode_is_never_exact);
	tcase_add_test(tc, test_keys_wider_than_an_address);
	tcase_add_test(tc, test_fields_text);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
