// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile HTTP clients for the exporter's tests (IPv4 only).  FROM is one
 * source address, or BASE+N: N consecutive addresses from BASE, client i
 * on address i mod N (127.0.0.0/8 loopback addresses in the tests).
 *
 *   slow_clients slow ADDR PORT FROM COUNT EVERY_S HOLD_S [reconnect]
 *     COUNT connections, each sending a partial request and one more
 *     header line every EVERY_S seconds, for HOLD_S seconds.  With
 *     reconnect, a client the server closes connects again at once (from
 *     the same address), so COUNT stay at the server's door throughout.
 *     Prints "opened after N s" once the first COUNT are open, then
 *     "opened N refused N closed_by_server N still_open N".
 *   slow_clients flood ADDR PORT FROM RATE HOLD_S
 *     RATE connection attempts per second for HOLD_S seconds, each holding
 *     its connection idle (nothing sent) until 1 024 newer ones were made.
 *     Prints "attempts N failed N rate N/s".
 *   slow_clients garbage ADDR PORT COUNT
 *     COUNT connections one after another, each sending a malformed
 *     request.  Prints "answered N".
 *
 * Sockets close with a reset (SO_LINGER 0), so hundreds of thousands of
 * connections leave no TIME_WAIT behind to exhaust the ports.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

#define FLOOD_HELD 1024

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct sources {
	uint32_t base; /* host order */
	uint32_t n;
};

static int sources_parse(const char *arg, struct sources *s)
{
	char buf[64];
	struct in_addr a;
	char *plus, *end;
	unsigned long n = 1;

	snprintf(buf, sizeof(buf), "%s", arg);
	plus = strchr(buf, '+');
	if (plus) {
		*plus = 0;
		n = strtoul(plus + 1, &end, 10);
		if (*end || !n || n > 1 << 20)
			return -1;
	}
	if (inet_pton(AF_INET, buf, &a) != 1)
		return -1;
	s->base = ntohl(a.s_addr);
	s->n = (uint32_t)n;
	return 0;
}

static void close_reset(int fd)
{
	const struct linger reset = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	close(fd);
}

/* A non-blocking connect from source i of src (NULL: any): the socket, or -1. */
static int dial(const char *addr, int port, const struct sources *src, unsigned i)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in from = { .sin_family = AF_INET };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (src) {
		from.sin_addr.s_addr = htonl(src->base + i % src->n);
		/* The port is picked at connect, per destination: no ephemeral port shortage. */
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&from, sizeof(from)))
			goto fail;
	}
	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		goto fail;
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) && errno != EINPROGRESS)
		goto fail;
	return fd;
fail:
	close_reset(fd);
	return -1;
}

static int raise_nofile(int want)
{
	struct rlimit rl = { (rlim_t)want + 64, (rlim_t)want + 64 };

	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		perror("slow_clients: setrlimit");
		return -1;
	}
	return 0;
}

struct client {
	int fd;
	int connected; /* the partial request went out */
};

static int slow(const char *addr, int port, const char *from, int count, double every, double hold,
		int reconnect)
{
	static const char start[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	struct client *c = calloc((size_t)count, sizeof(*c));
	struct pollfd *p = calloc((size_t)count, sizeof(*p));
	int i, opened = 0, refused = 0, closed = 0, open_now, first_open = 0;
	double t0 = now_s(), next = t0 + every;
	struct sources src;
	char b[512];

	if (!c || !p || sources_parse(from, &src) || raise_nofile(count)) {
		fprintf(stderr, "slow_clients: bad source '%s' or out of memory\n", from);
		return 1;
	}
	for (i = 0; i < count; i++)
		c[i].fd = -1;
	while (now_s() - t0 < hold) {
		for (i = 0; i < count; i++) {
			if (c[i].fd < 0 && (reconnect || !first_open)) {
				c[i].fd = dial(addr, port, &src, (unsigned)i);
				c[i].connected = 0;
				if (c[i].fd < 0)
					refused++;
			}
			p[i].fd = c[i].fd;
			p[i].events = c[i].connected ? POLLIN : POLLOUT;
			p[i].revents = 0;
		}
		poll(p, (nfds_t)count, 50);
		for (i = 0; i < count; i++) {
			int err = 0;
			socklen_t len = sizeof(err);

			if (c[i].fd < 0 || !p[i].revents)
				continue;
			if (!c[i].connected && (p[i].revents & POLLOUT) &&
			    !getsockopt(c[i].fd, SOL_SOCKET, SO_ERROR, &err, &len) && !err &&
			    send(c[i].fd, start, sizeof(start) - 1, MSG_NOSIGNAL) > 0) {
				c[i].connected = 1;
				opened++;
				continue;
			}
			if (c[i].connected && recv(c[i].fd, b, sizeof(b), MSG_DONTWAIT) < 0 &&
			    (errno == EAGAIN || errno == EWOULDBLOCK))
				continue; /* a spurious wake-up */
			/* Refused, reset, closed, or answered before the request was whole. */
			if (c[i].connected)
				closed++;
			else
				refused++;
			close_reset(c[i].fd);
			c[i].fd = -1;
		}
		if (!first_open) {
			first_open = 1;
			printf("opened after %.1f s\n", now_s() - t0);
			fflush(stdout);
		}
		if (now_s() < next)
			continue;
		next += every;
		for (i = 0; i < count; i++) {
			if (c[i].fd >= 0 && c[i].connected &&
			    send(c[i].fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0) {
				close_reset(c[i].fd);
				c[i].fd = -1;
				closed++;
			}
		}
	}
	for (i = 0, open_now = 0; i < count; i++) {
		if (c[i].fd < 0)
			continue;
		/* Still open: the server has not closed it, as far as a last look tells. */
		p[0].fd = c[i].fd;
		p[0].events = POLLIN;
		if (c[i].connected && poll(p, 1, 0) == 0)
			open_now++;
		close_reset(c[i].fd);
	}
	printf("opened %d refused %d closed_by_server %d still_open %d\n", opened, refused, closed,
	       open_now);
	free(c);
	free(p);
	return 0;
}

static int flood(const char *addr, int port, const char *from, double rate, double hold)
{
	int held[FLOOD_HELD];
	unsigned long attempts = 0, failed = 0;
	double t0 = now_s(), t;
	struct sources src;
	unsigned i;

	if (sources_parse(from, &src) || rate <= 0 || raise_nofile(FLOOD_HELD)) {
		fprintf(stderr, "slow_clients: bad source '%s' or rate\n", from);
		return 1;
	}
	for (i = 0; i < FLOOD_HELD; i++)
		held[i] = -1;
	while ((t = now_s() - t0) < hold) {
		/* Catch up with the schedule, a millisecond's worth at most behind. */
		unsigned long due = (unsigned long)(t * rate);

		if (due > attempts + (unsigned long)(rate / 1000) + 1)
			attempts = due - (unsigned long)(rate / 1000) - 1;
		while (attempts < due) {
			i = (unsigned)(attempts % FLOOD_HELD);
			if (held[i] >= 0)
				close_reset(held[i]);
			held[i] = dial(addr, port, &src, (unsigned)attempts);
			if (held[i] < 0)
				failed++;
			attempts++;
		}
		usleep(1000);
	}
	for (i = 0; i < FLOOD_HELD; i++)
		if (held[i] >= 0)
			close_reset(held[i]);
	t = now_s() - t0;
	printf("attempts %lu failed %lu rate %.0f/s\n", attempts, failed, (double)attempts / t);
	return 0;
}

static int garbage(const char *addr, int port, int count)
{
	static const char *const bad[] = {
		"GET\r\n\r\n", "GET /metrics HTTP/9.9\r\n\r\n", "\x01\x02\x03\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nNo colon here\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
	};
	int i, answered = 0;
	char b[256];

	for (i = 0; i < count; i++) {
		const char *req = bad[i % (int)(sizeof(bad) / sizeof(bad[0]))];
		int fd = dial(addr, port, NULL, 0);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (fd < 0)
			continue;
		/* Blocking from here on, with a 2 s limit on the answer. */
		if (poll(&p, 1, 2000) == 1 && !fcntl(fd, F_SETFL, 0)) {
			struct timeval tv = { 2, 0 };

			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			if (send(fd, req, strlen(req), MSG_NOSIGNAL) >= 0 &&
			    recv(fd, b, sizeof(b), 0) >= 0)
				answered++;
		}
		close(fd);
	}
	printf("answered %d\n", answered);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 8 || (argc == 9 && !strcmp(argv[8], "reconnect"))) && !strcmp(argv[1], "slow"))
		return slow(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]), atof(argv[6]),
			    atof(argv[7]), argc == 9);
	if (argc == 7 && !strcmp(argv[1], "flood"))
		return flood(argv[2], atoi(argv[3]), argv[4], atof(argv[5]), atof(argv[6]));
	if (argc == 5 && !strcmp(argv[1], "garbage"))
		return garbage(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: slow_clients slow ADDR PORT FROM[+N] COUNT EVERY_S HOLD_S [reconnect]\n"
			"       slow_clients flood ADDR PORT FROM[+N] RATE HOLD_S\n"
			"       slow_clients garbage ADDR PORT COUNT\n");
	return 2;
}
