// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the exporter and `stats --format prometheus` write: every counter of
 * `stats --json` exported once, the table's and the budget's gauges, the
 * build info; --listen's address parsed strictly (the port asked for, or an
 * error naming it); and the connection slots: who is evicted at the cap,
 * who missed the request deadline.
 */
#define _GNU_SOURCE /* open_memstream */
#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "conn_slots.h"
#include "listen_addr.h"
#include "pacer_names.h"
#include "prom.h"
#include "class_conf.h"
#include "prom_text.h"
#include "version.h"

/* The sample line ending in " value\n": exactly one, returned (a copy), or NULL. */
static char *line_with_value(const char *t, unsigned long long v)
{
	char want[32], *line = NULL;
	const char *p, *start;
	int found = 0;

	snprintf(want, sizeof(want), " %llu\n", v);
	for (p = t; (p = strstr(p, want)); p++) {
		for (start = p; start > t && start[-1] != '\n'; start--)
			;
		free(line);
		line = strndup(start, (size_t)(p - start));
		found++;
	}
	if (found != 1) {
		free(line);
		return NULL;
	}
	return line;
}

START_TEST(test_every_counter_exported_once)
{
	struct prom_pacer p = { 0 };
	char *t, *line, label[64];
	int i;

	snprintf(p.ifname, sizeof(p.ifname), "eth0");
	for (i = 0; i < PACER_STAT_MAX; i++)
		p.counters[i] = 7000000001ULL + (unsigned long long)i * 1000003ULL;
	t = prom_text(&p, 1);
	for (i = 0; i < PACER_STAT_MAX; i++) {
		const char *fam = prom_counter_family((unsigned)i);

		ck_assert_msg(fam != NULL, "counter %s has no metric family", pacer_stat_names[i]);
		line = line_with_value(t, p.counters[i]);
		ck_assert_msg(line != NULL, "counter %s is not exported exactly once", pacer_stat_names[i]);
		ck_assert_msg(!strncmp(line, fam, strlen(fam)) && line[strlen(fam)] == '{',
			      "counter %s: '%s' is not in family %s", pacer_stat_names[i], line, fam);
		/*
		 * Labelled families name the counter as stats --json does; an
		 * observed verdict by its enforced twin's name, with mode="observe".
		 */
		if (pacer_stat_observes((unsigned)i) >= 0) {
			snprintf(label, sizeof(label), "verdict=\"%s\",mode=\"observe\"}",
				 pacer_stat_names[pacer_stat_observes((unsigned)i)]);
			ck_assert_msg(strstr(line, label) != NULL, "%s lacks %s", line, label);
		} else if (strchr(line, ',')) {
			snprintf(label, sizeof(label), "=\"%s\"}", pacer_stat_names[i]);
			ck_assert_msg(strstr(line, label) != NULL, "%s lacks %s", line, label);
		}
		free(line);
	}
	ck_assert_ptr_null(prom_counter_family(PACER_STAT_MAX));
	free(t);
}
END_TEST

/* Every verdict a frame can get is a value of xdp_pacer_packets_total's verdict label. */
START_TEST(test_verdicts_are_one_family)
{
	static const enum pacer_stat verdicts[] = {
		PACER_STAT_PASSED, PACER_STAT_DROPPED_RECENT, PACER_STAT_DROPPED_BUDGET,
		PACER_STAT_MAP_ERROR, PACER_STAT_NONIP_PASSED, PACER_STAT_MALFORMED_PASSED,
		PACER_STAT_MALFORMED_DROPPED, PACER_STAT_EXEMPT_PASSED, PACER_STAT_DENY_DROPPED,
		PACER_STAT_UNCLASSIFIED, PACER_STAT_CLASS_DROPPED,
	};
	struct prom_pacer p = { 0 };
	char want[128], *t;
	size_t i;

	snprintf(p.ifname, sizeof(p.ifname), "eth0");
	t = prom_text(&p, 1);
	for (i = 0; i < sizeof(verdicts) / sizeof(verdicts[0]); i++) {
		ck_assert_str_eq(prom_counter_family(verdicts[i]), "xdp_pacer_packets_total");
		snprintf(want, sizeof(want), "xdp_pacer_packets_total{ifname=\"eth0\",verdict=\"%s\"} 0\n",
			 pacer_stat_names[verdicts[i]]);
		ck_assert_msg(strstr(t, want) != NULL, "missing %s", want);
	}
	for (i = 0; i < PACER_STAT_MAX; i++) {
		int twin = pacer_stat_observes((unsigned)i);

		if (twin < 0)
			continue;
		ck_assert_str_eq(prom_counter_family((unsigned)i), "xdp_pacer_packets_total");
		snprintf(want, sizeof(want),
			 "xdp_pacer_packets_total{ifname=\"eth0\",verdict=\"%s\",mode=\"observe\"} 0\n",
			 pacer_stat_names[twin]);
		ck_assert_msg(strstr(t, want) != NULL, "missing %s", want);
	}
	/* Each drop verdict and its observed twin: the five of observe mode. */
	ck_assert_uint_eq(count(t, "xdp_pacer_packets_total{"), sizeof(verdicts) / sizeof(verdicts[0]) + 5);
	ck_assert_uint_eq(count(t, ",mode=\"observe\"} 0\n"), 5);
	free(t);
}
END_TEST

/* Per traffic class: a class label on each family, grouped over interfaces, escaped. */
START_TEST(test_class_families)
{
	static struct prom_pacer p[2];
	char err[256], *t;

	memset(p, 0, sizeof(p));
	snprintf(p[0].ifname, sizeof(p[0].ifname), "eth0");
	snprintf(p[1].ifname, sizeof(p[1].ifname), "eth1");
	ck_assert_int_eq(class_match_parse("udp dport 53", &p[0].classes[0].c.m, err, sizeof(err)), 0);
	snprintf(p[0].classes[0].c.name, sizeof(p[0].classes[0].c.name), "dns");
	p[0].classes[0].c.rate_n = 20;
	p[0].classes[0].c.interval_ns = 1000000000ULL;
	p[0].classes[0].counters[PACER_CSTAT_SEEN] = 30;
	p[0].classes[0].counters[PACER_CSTAT_PASSED] = 20;
	p[0].classes[0].counters[PACER_CSTAT_DROPPED] = 10;
	ck_assert_int_eq(class_match_parse("icmp", &p[0].classes[1].c.m, err, sizeof(err)), 0);
	snprintf(p[0].classes[1].c.name, sizeof(p[0].classes[1].c.name), "ping");
	p[0].classes[1].c.action = PACER_ACTION_DROP;
	p[0].classes[1].c.mode = PACER_MODE_OBSERVE;
	p[0].classes[1].counters[PACER_CSTAT_OBSERVED] = 6;
	p[0].nclasses = 2;
	p[1].classes[0] = p[0].classes[0];
	p[1].nclasses = 1;
	t = prom_text(p, 2);
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_seen_total{ifname=\"eth0\",class=\"dns\"} 30\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_packets_total{ifname=\"eth0\",class=\"dns\",verdict=\"passed\"} 20\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_packets_total{ifname=\"eth0\",class=\"dns\",verdict=\"dropped\"} 10\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_packets_total{ifname=\"eth1\",class=\"dns\",verdict=\"dropped_budget\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_info{ifname=\"eth0\",class=\"ping\",match=\"icmp\",action=\"drop\",key=\"\",mode=\"observe\"} 2\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_info{ifname=\"eth0\",class=\"dns\",match=\"udp dport 53\",action=\"pace\",key=\"src\",mode=\"global\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_packets_total{ifname=\"eth0\",class=\"ping\",verdict=\"dropped\",mode=\"observe\"} 6\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_packets_total{ifname=\"eth0\",class=\"ping\",verdict=\"dropped\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_class_rate_packets{ifname=\"eth0\",class=\"dns\"} 20\n"));
	ck_assert_ptr_null(strstr(t, "xdp_pacer_class_rate_packets{ifname=\"eth0\",class=\"ping\"}")); /* no limit */
	ck_assert_uint_eq(count(t, "# TYPE xdp_pacer_class_packets_total counter"), 1);
	ck_assert_uint_eq(count(t, "xdp_pacer_class_packets_total{"), 3 * 5);
	free(t);
}
END_TEST

START_TEST(test_table_gauges)
{
	struct prom_pacer p[2] = { 0 };
	char *t;

	snprintf(p[0].ifname, sizeof(p[0].ifname), "tbl0");
	snprintf(p[1].ifname, sizeof(p[1].ifname), "sk0");
	/* A table of 1048576 entries: 16 per line, 2^16 lines. */
	p[0].layout = (struct pacer_layout){ .backend = PACER_BACKEND_TABLE, .lines_log2 = 16,
					     .on_full = PACER_TBL_FULL_EVICT, .tick_shift = 20 };
	p[1].layout = (struct pacer_layout){ .rows = 4, .lines_log2 = 14, .tick_shift = 25 };
	t = prom_text(p, 2);
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_table_entries{ifname=\"tbl0\"} 1048576\n"));
	ck_assert_ptr_null(strstr(t, "xdp_pacer_sketch_width_cells{ifname=\"tbl0\"}"));
	ck_assert_ptr_null(strstr(t, "xdp_pacer_sketch_rows{ifname=\"tbl0\"}"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_info{ifname=\"tbl0\",prog_id=\"0\",backend=\"table\","));
	ck_assert_ptr_nonnull(strstr(t, "on_full=\"evict-oldest\""));
	ck_assert_uint_eq(count(t, "layout="), 1); /* the sketch's only */
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_sketch_width_cells{ifname=\"sk0\"} 1048576\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_sketch_rows{ifname=\"sk0\"} 4\n"));
	ck_assert_ptr_null(strstr(t, "xdp_pacer_table_entries{ifname=\"sk0\"}"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_info{ifname=\"sk0\",prog_id=\"0\",backend=\"sketch\","));
	ck_assert_ptr_nonnull(strstr(t, ",layout=\"rows\","));
	free(t);
}
END_TEST

START_TEST(test_budget_gauges)
{
	struct prom_pacer p = { 0 };
	char *t;

	snprintf(p.ifname, sizeof(p.ifname), "eth0");
	p.budget = (struct pacer_budget_cfg){ .limit = 50000, .window_ns = 1000000000,
					      .slack_ns = 100000000, .slack_count = 5000,
					      .new_limit = 40000, .horizon_ns = 10000000000ULL,
					      .buckets = 12, .seen_cells_log2 = 18, .batch = 39 };
	t = prom_text(&p, 1);
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_limit_packets{ifname=\"eth0\"} 50000\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_window_seconds{ifname=\"eth0\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_slack_seconds{ifname=\"eth0\"} 0.1\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_slack_packets{ifname=\"eth0\"} 5000\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_new_sources_limit_packets{ifname=\"eth0\"} 40000\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_horizon_seconds{ifname=\"eth0\"} 10\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_buckets{ifname=\"eth0\"} 12\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_filter_cells{ifname=\"eth0\"} 262144\n"));
	ck_assert_ptr_nonnull(strstr(t, "xdp_pacer_budget_batch_packets{ifname=\"eth0\"} 39\n"));
	free(t);
}
END_TEST

START_TEST(test_build_info)
{
	char want[128], *t = prom_text(NULL, 0);

	ck_assert(pacer_version[0] >= '0' && pacer_version[0] <= '9');
	snprintf(want, sizeof(want), "xdp_pacer_build_info{version=\"%s\",abi=\"%d\"} 1\n",
		 pacer_version, PACER_ABI_VERSION);
	ck_assert_ptr_nonnull(strstr(t, want));
	ck_assert_ptr_nonnull(strstr(t, "# TYPE xdp_pacer_build_info gauge\n"));
	free(t);
}
END_TEST

static const struct {
	const char *text;
	int family;
	const char *addr;
	unsigned port;
} good_listen[] = {
	{ "127.0.0.1:9477", AF_INET, "127.0.0.1", 9477 },
	{ "0.0.0.0:65535", AF_INET, "0.0.0.0", 65535 },
	{ "127.0.0.1:0", AF_INET, "127.0.0.1", 0 },
	{ "[::1]:9477", AF_INET6, "::1", 9477 },
	{ "[::]:1", AF_INET6, "::", 1 },
	{ "127.0.0.1:00080", AF_INET, "127.0.0.1", 80 },
};

START_TEST(test_listen_good)
{
	struct sockaddr_storage ss;
	char why[256] = "", host[64], fmt[80], want[80];

	ck_assert_int_eq(listen_addr_parse(good_listen[_i].text, &ss, why, sizeof(why)), 0);
	ck_assert_int_eq(ss.ss_family, good_listen[_i].family);
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		ck_assert_uint_eq(ntohs(a->sin_port), good_listen[_i].port);
		snprintf(want, sizeof(want), "%s:4464", good_listen[_i].addr);
	} else {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		ck_assert_uint_eq(ntohs(a->sin6_port), good_listen[_i].port);
		snprintf(want, sizeof(want), "[%s]:4464", good_listen[_i].addr);
	}
	ck_assert_str_eq(host, good_listen[_i].addr);
	listen_addr_format(&ss, 4464, fmt, sizeof(fmt));
	ck_assert_str_eq(fmt, want);
}
END_TEST

static const struct {
	const char *text, *names;
} bad_listen[] = {
	{ "127.0.0.1:70000", "port '70000'" },
	{ "127.0.0.1:65536", "port '65536'" },
	{ "127.0.0.1:4294967297", "port '4294967297'" },
	{ "127.0.0.1:-1", "port '-1'" },
	{ "127.0.0.1:+80", "port '+80'" },
	{ "127.0.0.1: 80", "port ' 80'" },
	{ "127.0.0.1:80 ", "port '80 '" },
	{ "127.0.0.1:0x50", "port '0x50'" },
	{ "127.0.0.1:", "port ''" },
	{ "127.0.0.1:http", "port 'http'" },
	{ ":9477", "ADDR:PORT" },
	{ "9477", "ADDR:PORT" },
	{ "localhost:9477", "address 'localhost'" },
	{ "300.1.1.1:9477", "address '300.1.1.1'" },
	{ "::1:9477", "address '::1'" },
	{ "[::1:9477", "address '[::1'" },
	{ "[127.0.0.1]:9477", "address '[127.0.0.1]'" },
	{ "[]:9477", "address '[]'" },
};

START_TEST(test_listen_bad)
{
	struct sockaddr_storage ss;
	char why[256] = "";

	ck_assert_int_eq(listen_addr_parse(bad_listen[_i].text, &ss, why, sizeof(why)), -EINVAL);
	ck_assert_msg(strstr(why, bad_listen[_i].names) != NULL, "'%s': '%s' does not name '%s'",
		      bad_listen[_i].text, why, bad_listen[_i].names);
}
END_TEST


/* ---- connection slots ---- */

#define SLOTS 4

/* Slots full of fresh connections opened at t = 1, 2, 3, 4. */
static void fill(struct conn_slots *s, struct conn *c)
{
	int i;

	conn_slots_init(s, SLOTS);
	for (i = 0; i < SLOTS; i++) {
		c[i].fd = i;
		ck_assert_ptr_null(conn_slots_open(s, &c[i], 1.0 + i));
	}
	ck_assert_uint_eq(s->live, SLOTS);
}

/* At the cap, a newcomer evicts the oldest fresh connection, and keeps evicting in age order. */
START_TEST(test_slots_evict_oldest_fresh)
{
	struct conn c[SLOTS + 3] = { { 0 } };
	struct conn_slots s;
	struct conn *v;

	fill(&s, c);
	conn_slots_enter(&s, &c[0], CONN_SERVING, 5.0); /* the scraper's request is in */
	v = conn_slots_open(&s, &c[4], 6.0);
	ck_assert_ptr_eq(v, &c[1]);
	ck_assert_int_eq(v->state, CONN_CUT);
	ck_assert_uint_eq(s.live, SLOTS);
	ck_assert_ptr_eq(conn_slots_open(&s, &c[5], 7.0), &c[2]);
	ck_assert_ptr_eq(conn_slots_open(&s, &c[6], 8.0), &c[3]);
	/* The one being served is kept while a fresh one is left: c[4] goes next. */
	conn_slots_close(&s, &c[1]);
	conn_slots_close(&s, &c[2]);
	ck_assert_uint_eq(s.live, SLOTS); /* closing a cut connection frees nothing more */
}
END_TEST

/* With no fresh connection left, the longest idle goes, then the oldest being served. */
START_TEST(test_slots_then_idle_then_serving)
{
	struct conn c[SLOTS + 3] = { { 0 } };
	struct conn_slots s;

	fill(&s, c);
	conn_slots_enter(&s, &c[3], CONN_IDLE, 5.0);
	conn_slots_enter(&s, &c[1], CONN_IDLE, 6.0);
	conn_slots_enter(&s, &c[2], CONN_SERVING, 7.0);
	conn_slots_enter(&s, &c[0], CONN_SERVING, 8.0);
	ck_assert_ptr_eq(conn_slots_open(&s, &c[4], 9.0), &c[3]);  /* idle since 5 */
	ck_assert_ptr_eq(conn_slots_open(&s, &c[5], 10.0), &c[4]); /* fresh beats idle */
	conn_slots_enter(&s, &c[5], CONN_SERVING, 11.0);
	ck_assert_ptr_eq(conn_slots_open(&s, &c[6], 12.0), &c[1]); /* idle since 6 */
	conn_slots_enter(&s, &c[6], CONN_SERVING, 13.0);
	/* All four serving: the oldest of them (c[2], since 7) makes room. */
	ck_assert_ptr_eq(conn_slots_open(&s, &c[3], 14.0), &c[2]);
	ck_assert_uint_eq(s.live, SLOTS);
}
END_TEST

/* Below the cap nobody is evicted; a closed slot is free again; a cut one stays cut. */
START_TEST(test_slots_close_frees)
{
	struct conn c[SLOTS + 1] = { { 0 } };
	struct conn_slots s;

	fill(&s, c);
	conn_slots_close(&s, &c[2]);
	ck_assert_uint_eq(s.live, SLOTS - 1);
	ck_assert_ptr_null(conn_slots_open(&s, &c[4], 5.0));
	conn_slots_cut(&s, &c[0]);
	ck_assert_uint_eq(s.live, SLOTS - 1);
	conn_slots_enter(&s, &c[0], CONN_SERVING, 6.0); /* a late event on a cut connection */
	ck_assert_int_eq(c[0].state, CONN_CUT);
	conn_slots_cut(&s, &c[0]);
	ck_assert_uint_eq(s.live, SLOTS - 1);
	ck_assert_ptr_null(conn_slots_open(&s, &c[0], 7.0));
	ck_assert_uint_eq(s.live, SLOTS);
}
END_TEST

/* The deadline: fresh and idle connections past it, oldest first; serving ones never. */
START_TEST(test_slots_expired)
{
	struct conn c[SLOTS] = { { 0 } };
	struct conn_slots s;
	struct conn *e;
	int n = 0;

	fill(&s, c);                                   /* fresh since 1, 2, 3, 4 */
	conn_slots_enter(&s, &c[0], CONN_SERVING, 1.5);
	conn_slots_enter(&s, &c[1], CONN_IDLE, 4.5);
	ck_assert_ptr_null(conn_slots_expired(&s, 7.9, 5.0)); /* c[2]: 4.9 s */
	while ((e = conn_slots_expired(&s, 9.2, 5.0))) {
		ck_assert_msg(e == &c[2] || e == &c[3], "expired: c[%d]", e->fd);
		conn_slots_cut(&s, e);
		n++;
	}
	ck_assert_int_eq(n, 2); /* c[1], idle since 4.5, and c[0], serving, are in time */
	ck_assert_ptr_eq(conn_slots_expired(&s, 9.6, 5.0), &c[1]);
	conn_slots_cut(&s, &c[1]);
	ck_assert_ptr_null(conn_slots_expired(&s, 1000.0, 5.0)); /* c[0] is being served */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("exporter");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_every_counter_exported_once);
	tcase_add_test(tc, test_verdicts_are_one_family);
	tcase_add_test(tc, test_class_families);
	tcase_add_test(tc, test_table_gauges);
	tcase_add_test(tc, test_budget_gauges);
	tcase_add_test(tc, test_build_info);
	tcase_add_loop_test(tc, test_listen_good, 0, (int)(sizeof(good_listen) / sizeof(good_listen[0])));
	tcase_add_loop_test(tc, test_listen_bad, 0, (int)(sizeof(bad_listen) / sizeof(bad_listen[0])));
	tcase_add_test(tc, test_slots_evict_oldest_fresh);
	tcase_add_test(tc, test_slots_then_idle_then_serving);
	tcase_add_test(tc, test_slots_close_frees);
	tcase_add_test(tc, test_slots_expired);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
