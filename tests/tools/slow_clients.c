// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hostile HTTP clients for the exporter's tests (IPv4 only).
 *
 *   slow_clients slow ADDR PORT FROM COUNT EVERY_S HOLD_S
 *     COUNT connections from address FROM, each sending a partial request
 *     and one more header line every EVERY_S seconds, for HOLD_S seconds.
 *     Prints "opened N refused N closed_by_server N still_open N".
 *   slow_clients garbage ADDR PORT COUNT
 *     COUNT connections one after another, each sending a malformed
 *     request.  Prints "answered N".
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(const char *addr, int port, const char *from)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct timeval tv = { 1, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1 ||
	    (from && (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
		      bind(fd, (struct sockaddr *)&src, sizeof(src)))) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether the server ended fd (EOF, reset, or a reply to the unfinished request), without blocking. */
static int server_closed(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char b[512];
	ssize_t n;

	if (poll(&p, 1, 0) <= 0)
		return 0;
	n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || n > 0;
}

static int slow(const char *addr, int port, const char *from, int count, double every, double hold)
{
	static const char start[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
	struct rlimit rl = { (rlim_t)count + 64, (rlim_t)count + 64 };
	int *fd = calloc((size_t)count, sizeof(int));
	int i, opened = 0, refused = 0, closed = 0, open_now;
	double t0 = now_s(), next;

	if (!fd || setrlimit(RLIMIT_NOFILE, &rl)) {
		perror("slow_clients: setrlimit");
		return 1;
	}
	for (i = 0; i < count; i++) {
		fd[i] = dial(addr, port, from);
		if (fd[i] < 0) {
			refused++;
			continue;
		}
		opened++;
		if (send(fd[i], start, sizeof(start) - 1, MSG_NOSIGNAL) < 0) {
			close(fd[i]);
			fd[i] = -1;
			closed++;
		}
	}
	printf("opened after %.1f s\n", now_s() - t0);
	fflush(stdout);
	next = now_s() + every;
	while (now_s() - t0 < hold) {
		usleep(50000);
		for (i = 0; i < count; i++) {
			if (fd[i] >= 0 && server_closed(fd[i])) {
				close(fd[i]);
				fd[i] = -1;
				closed++;
			}
		}
		if (now_s() < next)
			continue;
		next += every;
		for (i = 0; i < count; i++) {
			if (fd[i] >= 0 && send(fd[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0) {
				close(fd[i]);
				fd[i] = -1;
				closed++;
			}
		}
	}
	for (i = 0, open_now = 0; i < count; i++) {
		if (fd[i] >= 0) {
			open_now++;
			close(fd[i]);
		}
	}
	printf("opened %d refused %d closed_by_server %d still_open %d\n", opened, refused, closed,
	       open_now);
	free(fd);
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
		int fd = dial(addr, port, NULL);
		struct timeval tv = { 2, 0 };

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) >= 0 && recv(fd, b, sizeof(b), 0) >= 0)
			answered++;
		close(fd);
	}
	printf("answered %d\n", answered);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 8 && !strcmp(argv[1], "slow"))
		return slow(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]), atof(argv[6]),
			    atof(argv[7]));
	if (argc == 5 && !strcmp(argv[1], "garbage"))
		return garbage(argv[2], atoi(argv[3]), atoi(argv[4]));
	fprintf(stderr, "usage: slow_clients slow ADDR PORT FROM COUNT EVERY_S HOLD_S\n"
			"       slow_clients garbage ADDR PORT COUNT\n");
	return 2;
}
