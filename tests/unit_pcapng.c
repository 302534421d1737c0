// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Captures analyze --pcap must not take for good ones, built byte by byte:
 * pcapng with interfaces of several link types (dumpcap -i eth0 -i any),
 * packets naming no interface, packet blocks whose lengths do not add up,
 * blocks whose two lengths differ, big-endian sections, timestamp
 * resolutions; a classic pcap with a corrupt record; and inputs that are
 * not files (a FIFO must not block).
 */
#include <check.h>
#include "check_run.h"
#include <byteswap.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "analyze_pcap.h"
#include "pacer_abi.h"

#define LT_ETHERNET 1
#define LT_SLL2 276

/* A pcapng file in memory, in either byte order. */
struct ng {
	uint8_t b[8192];
	size_t n;
	int swap;
};

static void u16(struct ng *g, uint16_t v)
{
	v = g->swap ? bswap_16(v) : v;
	memcpy(g->b + g->n, &v, 2);
	g->n += 2;
}

static void u32(struct ng *g, uint32_t v)
{
	v = g->swap ? bswap_32(v) : v;
	memcpy(g->b + g->n, &v, 4);
	g->n += 4;
}

/* Start a block; end_block() writes both lengths.  The block's offset. */
static size_t begin_block(struct ng *g, uint32_t type)
{
	size_t at = g->n;

	u32(g, type);
	u32(g, 0);
	return at;
}

static void end_block(struct ng *g, size_t at)
{
	uint32_t len = (uint32_t)(g->n - at + 4), v = g->swap ? bswap_32(len) : len;

	memcpy(g->b + at + 4, &v, 4);
	u32(g, len);
}

static void shb(struct ng *g)
{
	size_t at = begin_block(g, 0x0A0D0D0A);

	u32(g, 0x1A2B3C4D);
	u16(g, 1);
	u16(g, 0);
	u32(g, 0xffffffff); /* section length unknown */
	u32(g, 0xffffffff);
	end_block(g, at);
}

static void idb(struct ng *g, uint16_t linktype, int tsresol)
{
	size_t at = begin_block(g, 1);

	u16(g, linktype);
	u16(g, 0);
	u32(g, 262144);
	if (tsresol >= 0) {
		u16(g, 9);
		u16(g, 1);
		g->b[g->n] = (uint8_t)tsresol;
		memset(g->b + g->n + 1, 0, 3);
		g->n += 4;
		u16(g, 0); /* opt_endofopt */
		u16(g, 0);
	}
	end_block(g, at);
}

/* An Ethernet/IPv4 frame from 10.0.0.src, 60 bytes. */
static void v4_frame(uint8_t *f, uint8_t src)
{
	memset(f, 0, 60);
	f[12] = 0x08;
	f[14] = 0x45;
	f[17] = 46;
	f[26] = 10;
	f[29] = src;
}

/* An Enhanced Packet Block; caplen_claim replaces the captured length when non-zero. */
static void epb(struct ng *g, uint32_t if_id, uint64_t ts, uint8_t src, uint32_t caplen_claim)
{
	size_t at = begin_block(g, 6);

	u32(g, if_id);
	u32(g, (uint32_t)(ts >> 32));
	u32(g, (uint32_t)ts);
	u32(g, caplen_claim ? caplen_claim : 60);
	u32(g, 60);
	v4_frame(g->b + g->n, src);
	g->n += 60;
	end_block(g, at);
}

static char path[64];

static void write_file(const void *b, size_t n)
{
	FILE *f;

	strcpy(path, "/tmp/unit_pcapng.XXXXXX");
	close(mkstemp(path));
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

static const struct pcap_params params = { .interval_ns = 1000000000ULL, .prefix4 = 32,
					   .prefix6 = 64, .policy = PACER_POLICY_PACE };

/* Analyse the file written last; pcap_load's return, err its message. */
static int load(struct an_stream *s, struct pcap_summary *m, char *err, size_t len)
{
	int ret;

	memset(s, 0, sizeof(*s));
	err[0] = 0;
	ret = pcap_load(path, &params, s, m, err, len);
	unlink(path);
	return ret;
}

/* dumpcap -i eth0 -i any: the Ethernet interface's frames are keyed, the others counted. */
START_TEST(test_mixed_link_types)
{
	struct ng g = { .n = 0 };
	struct pcap_summary m;
	struct an_stream s;
	char err[512], why[1024];

	shb(&g);
	idb(&g, LT_ETHERNET, -1);
	idb(&g, LT_SLL2, -1);
	epb(&g, 0, 1000000, 1, 0);
	epb(&g, 1, 1000100, 1, 0);
	epb(&g, 0, 2000000, 2, 0);
	epb(&g, 1, 2000100, 2, 0);
	epb(&g, 1, 2000200, 2, 0);
	epb(&g, 0, 3000000, 1, 0);
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert_str_eq(m.linktype, "EN10MB (1)");
	ck_assert_uint_eq(m.frames, 3);
	ck_assert_uint_eq(m.ipv4, 3);
	ck_assert_uint_eq(m.skipped_linktype, 3);
	ck_assert_str_eq(m.skipped_linktypes, "LINUX_SLL2 (276)");
	ck_assert(!m.truncated && !m.corrupt);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.rec[0].ts_ns, 1000000000ULL); /* microseconds by default */
	ck_assert_uint_eq(s.rec[2].ts_ns, 3000000000ULL);
	pcap_problems(&m, why, sizeof(why));
	ck_assert_ptr_nonnull(strstr(why, "3 frames skipped on interfaces of link type LINUX_SLL2 (276)"));
	an_stream_free(&s);
}
END_TEST

/* dumpcap -i any alone, in pcapng: nothing can be keyed, which is an error naming why. */
START_TEST(test_nothing_keyable_is_an_error)
{
	struct ng g = { .n = 0 };
	struct pcap_summary m;
	struct an_stream s;
	char err[512];

	shb(&g);
	idb(&g, LT_SLL2, -1);
	epb(&g, 0, 1, 1, 0);
	epb(&g, 0, 2, 1, 0);
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no frame could be keyed"));
	ck_assert_ptr_nonnull(strstr(err, "2 frames skipped on interfaces of link type LINUX_SLL2 (276)"));
	an_stream_free(&s);
}
END_TEST

/* A packet naming no interface, and one claiming more bytes than its block holds: skipped, the rest read. */
START_TEST(test_bad_packets_skipped)
{
	struct ng g = { .n = 0 };
	struct pcap_summary m;
	struct an_stream s;
	char err[512];

	shb(&g);
	idb(&g, LT_ETHERNET, 9); /* nanoseconds */
	epb(&g, 0, 5, 1, 0);
	epb(&g, 7, 6, 1, 0);
	epb(&g, 0, 7, 2, 4000);
	epb(&g, 0, 8, 3, 0);
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.frames, 2);
	ck_assert_uint_eq(m.skipped_no_interface, 1);
	ck_assert_uint_eq(m.skipped_corrupt, 1);
	ck_assert_ptr_nonnull(strstr(m.first_skip, "captured length 4000, more than the block's 60 bytes"));
	ck_assert_uint_eq(s.rec[0].ts_ns, 5);
	ck_assert_uint_eq(s.rec[1].ts_ns, 8);
	ck_assert(!m.corrupt && !m.truncated);
	an_stream_free(&s);
}
END_TEST

/* Two lengths of a block that differ: reading stops there, corrupt, what came before analysed. */
START_TEST(test_block_length_mismatch)
{
	struct ng g = { .n = 0 };
	struct pcap_summary m;
	struct an_stream s;
	char err[512];
	size_t at;

	shb(&g);
	idb(&g, LT_ETHERNET, -1);
	epb(&g, 0, 1, 1, 0);
	at = g.n;
	epb(&g, 0, 2, 2, 0);
	g.b[g.n - 4] ^= 8; /* the trailing length */
	epb(&g, 0, 3, 3, 0);
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.frames, 1);
	ck_assert(m.corrupt && !m.truncated);
	ck_assert_ptr_nonnull(strstr(m.corruption, "its length is 92 at the start and 84 at the end"));
	ck_assert_uint_eq(strtoull(strstr(m.corruption, "offset ") + 7, NULL, 10), at);
	an_stream_free(&s);

	/* ... and with nothing before it, an error. */
	g.n = 0;
	shb(&g);
	idb(&g, LT_ETHERNET, -1);
	epb(&g, 0, 2, 2, 0);
	g.b[g.n - 4] ^= 8;
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "no frame could be keyed (0 whole Ethernet frames read): corrupt (block at offset"));
	an_stream_free(&s);

	/* A block length that is not a multiple of 4: corrupt. */
	g.n = 0;
	shb(&g);
	idb(&g, LT_ETHERNET, -1);
	epb(&g, 0, 1, 1, 0);
	at = g.n;
	epb(&g, 0, 2, 2, 0);
	g.b[at + 4] += 1;
	write_file(g.b, g.n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert(m.corrupt);
	ck_assert_ptr_nonnull(strstr(m.corruption, "a block length of 93 bytes"));
	an_stream_free(&s);
}
END_TEST

/* A big-endian section reads the same; a file cut inside a block is cut short, not corrupt. */
START_TEST(test_big_endian_and_cut)
{
	struct ng g = { .n = 0, .swap = 1 };
	struct pcap_summary m;
	struct an_stream s;
	char err[512];

	shb(&g);
	idb(&g, LT_ETHERNET, 0x80 | 10); /* 2^-10 s */
	epb(&g, 0, 1024, 1, 0);
	epb(&g, 0, 2048, 2, 0);
	write_file(g.b, g.n - 10);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.frames, 1);
	ck_assert_uint_eq(s.rec[0].ts_ns, 1000000000ULL);
	ck_assert(m.truncated && !m.corrupt);
	ck_assert_ptr_nonnull(strstr(m.truncation, "the file ends inside the block at offset"));
	an_stream_free(&s);
}
END_TEST

/* A classic pcap whose third record claims an impossible length: corrupt, two frames analysed. */
START_TEST(test_classic_corrupt_record)
{
	uint8_t b[512];
	uint32_t gh[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 }, rh[4];
	size_t n = 0;
	struct pcap_summary m;
	struct an_stream s;
	char err[512];
	int i;

	memcpy(b, gh, sizeof(gh));
	n = sizeof(gh);
	for (i = 0; i < 4; i++) {
		rh[0] = (uint32_t)i, rh[1] = 0, rh[2] = i == 2 ? 0x7ffffff0 : 60, rh[3] = 60;
		memcpy(b + n, rh, sizeof(rh));
		n += sizeof(rh);
		v4_frame(b + n, (uint8_t)(i + 1));
		n += 60;
	}
	write_file(b, n);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.frames, 2);
	ck_assert(m.corrupt && !m.truncated);
	ck_assert_ptr_nonnull(strstr(m.corruption, "record 3: "));
	an_stream_free(&s);
}
END_TEST

/* A FIFO is refused at once (opening it would wait for a writer), and so is a device. */
START_TEST(test_not_a_file)
{
	struct pcap_summary m;
	struct an_stream s;
	char err[512], dir[] = "/tmp/unit_pcapng.XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(load(&s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "not a regular file (a FIFO): a capture is a file");
	an_stream_free(&s);
	rmdir(dir);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(pcap_load("/dev/zero", &params, &s, &m, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "not a regular file (a character device): a capture is a file");
	an_stream_free(&s);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

/*
 * Mutated captures (bytes overwritten, lengths set to edge values, cuts,
 * spliced blocks): each is analysed up to what it holds or refused with a
 * reason, never a crash or a hang (the UBSan build also fails on undefined
 * behaviour).
 */
START_TEST(test_mutations_never_crash)
{
	static const uint32_t edges[] = { 0, 1, 4, 12, 13, 16, 28, 0x7ffffff0, 0xffffffff };
	struct ng base = { .n = 0 };
	static uint8_t m[sizeof(base.b) * 2];
	struct pcap_summary sum;
	struct an_stream s;
	char err[512];
	size_t n, i, j, k;
	int round, ret, loaded = 0;

	shb(&base);
	idb(&base, LT_ETHERNET, 9);
	idb(&base, LT_SLL2, -1);
	for (i = 0; i < 12; i++)
		epb(&base, (uint32_t)(i % 3 == 2), 1000 * i, (uint8_t)(i % 5), 0);
	for (round = 0; round < 1500; round++) {
		memcpy(m, base.b, base.n);
		n = base.n;
		switch (rnd(4)) {
		case 0:
			for (k = rnd(8) + 1; k; k--)
				m[rnd((uint32_t)n)] = (uint8_t)rnd(256);
			break;
		case 1:
			i = rnd((uint32_t)n - 4) & ~3u;
			memcpy(m + i, &edges[rnd(sizeof(edges) / sizeof(edges[0]))], 4);
			break;
		case 2:
			n = rnd((uint32_t)n);
			break;
		default: /* a run of bytes copied over another place */
			i = rnd((uint32_t)n);
			j = rnd((uint32_t)n);
			k = rnd(100) + 1;
			memmove(m + i, base.b + j, j + k < base.n && i + k < sizeof(m) ? k : 0);
			break;
		}
		write_file(m, n);
		ret = load(&s, &sum, err, sizeof(err));
		ck_assert_msg(!ret || err[0], "round %d: error %d without a reason", round, ret);
		ck_assert_uint_le(sum.frames + pcap_skipped(&sum), 12);
		loaded += !ret;
		an_stream_free(&s);
	}
	ck_assert_int_gt(loaded, 100); /* most mutations leave something to analyse */
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("pcapng");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_mixed_link_types);
	tcase_add_test(tc, test_nothing_keyable_is_an_error);
	tcase_add_test(tc, test_bad_packets_skipped);
	tcase_add_test(tc, test_block_length_mismatch);
	tcase_add_test(tc, test_big_endian_and_cut);
	tcase_add_test(tc, test_classic_corrupt_record);
	tcase_add_test(tc, test_not_a_file);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_mutations_never_crash);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
