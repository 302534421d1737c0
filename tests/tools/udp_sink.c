// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A UDP receiver that counts what reaches it and the TTL each datagram
 * arrived with (IP_RECVTTL): the server behind the router of the
 * xdp-forward test (tests/qemu_forward.sh).  IPv4 only.  It prints
 * "listening on port P" once bound, then receives until a datagram from
 * --until (the marker: sent after the frames under test, from the same CPU,
 * so the frames before it were delivered or dropped by then; not counted),
 * --timeout or SIGTERM, and prints
 *
 *   datagrams N          counted (the marker aside)
 *   sources S            distinct source addresses among them
 *   ttl T N              per TTL seen, ascending
 *   marker ADDR|none     whether the marker came
 *
 * Exit 0 when the marker came, 1 when it did not, 2 on an error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "opts.h"

#define MAX_SOURCES 65536

struct sink_opts {
	uint32_t port;
	struct opt_address until;
	double timeout;
	bool port_set, until_set;
};

static const struct opt_spec specs[] = {
	{ .name = "port", .type = OPT_U32, .flags = OPT_REQUIRED, .arg = "PORT", .min = 1, .max = 65535,
	  OPT_FIELD(struct sink_opts, port), OPT_GIVEN(struct sink_opts, port_set), .help = "UDP port to receive on (any address)" },
	{ .name = "until", .type = OPT_ADDRESS, .arg = "ADDR",
	  OPT_FIELD(struct sink_opts, until), OPT_GIVEN(struct sink_opts, until_set),
	  .help = "stop at a datagram from this IPv4 source (the marker)" },
	{ .name = "timeout", .type = OPT_DECIMAL, .arg = "SECONDS", .dmin = 0, .dmax = 3600,
	  .flags = OPT_MIN_OPEN, .dflt = "30", OPT_FIELD(struct sink_opts, timeout),
	  .help = "stop after this long without the marker" },
	{ 0 },
};

static const struct opt_verb verb = {
	.program = "udp_sink",
	.name = "udp_sink",
	.synopsis = "--port PORT [--until ADDR] [--timeout SECONDS]",
	.intro = "Count the IPv4 UDP datagrams received on PORT, their sources and TTLs.\n",
	.opts = specs,
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t sources[MAX_SOURCES];
static unsigned n_sources;
static unsigned long long per_ttl[256];

static void note_source(uint32_t a)
{
	unsigned i;

	for (i = 0; i < n_sources; i++)
		if (sources[i] == a)
			return;
	if (n_sources < MAX_SOURCES)
		sources[n_sources++] = a;
}

int main(int argc, char **argv)
{
	struct sink_opts o = { 0 };
	struct sockaddr_in me = { .sin_family = AF_INET }, from;
	struct sigaction sa = { .sa_handler = on_term };
	unsigned long long datagrams = 0;
	char buf[2048], ctl[256], text[INET_ADDRSTRLEN];
	uint32_t marker = 0;
	bool marked = false;
	struct opt_error e;
	double end;
	int fd, one = 1, rcvbuf = 8 << 20, ttl, t, err = opts_parse(&verb, argc, argv, &o, stdout, &e);

	if (err == 2)
		fprintf(stderr, "udp_sink: %s\n", e.msg);
	if (err)
		return err == OPTS_HELP ? 0 : 2;
	if (o.until_set) {
		if (o.until.addr.family != 4) {
			fprintf(stderr, "udp_sink: --until must be an IPv4 address\n");
			return 2;
		}
		memcpy(&marker, o.until.addr.bytes, 4);
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	me.sin_port = htons((uint16_t)o.port);
	/* Room for a burst while this process waits for a CPU (root may exceed rmem_max). */
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (fd < 0 || setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		fprintf(stderr, "udp_sink: port %u: %s\n", o.port, strerror(errno));
		return 2;
	}
	printf("listening on port %u\n", o.port);
	fflush(stdout);
	end = now_s() + o.timeout;
	while (!stop && !marked) {
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr m = { .msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov,
				    .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		struct timeval tv;
		struct cmsghdr *c;
		double left = end - now_s();

		if (left <= 0)
			break;
		tv.tv_sec = (time_t)left;
		tv.tv_usec = (suseconds_t)((left - (double)tv.tv_sec) * 1e6) + 1;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (recvmsg(fd, &m, 0) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				continue;
			fprintf(stderr, "udp_sink: recvmsg: %s\n", strerror(errno));
			return 2;
		}
		if (o.until_set && from.sin_addr.s_addr == marker) {
			marked = true;
			break;
		}
		ttl = -1;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL)
				memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
		datagrams++;
		note_source(from.sin_addr.s_addr);
		if (ttl >= 0 && ttl < 256)
			per_ttl[ttl]++;
	}
	close(fd);
	printf("datagrams %llu\nsources %u\n", datagrams, n_sources);
	for (t = 0; t < 256; t++)
		if (per_ttl[t])
			printf("ttl %d %llu\n", t, per_ttl[t]);
	printf("marker %s\n", marked ? inet_ntop(AF_INET, &marker, text, sizeof(text)) : "none");
	return marked ? 0 : 1;
}
