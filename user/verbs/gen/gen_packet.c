// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen, the AF_PACKET engine: each thread a packet socket bound
 * to IFNAME with the qdisc bypassed (PACKET_QDISC_BYPASS: the frame goes
 * straight to the driver, on the queue of the sending CPU, as live frames
 * do), frames handed over by sendmmsg in batches.  A frame counts as sent
 * when the driver took it: sendmmsg stops at the first it refused
 * (ENOBUFS: the driver's queue was full or it dropped the frame; EAGAIN:
 * the socket's buffer is full), which is sent again.  Works wherever
 * packet sockets do; slower than AF_XDP (a socket buffer per frame).
 */
#define _GNU_SOURCE /* sendmmsg */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <sys/socket.h>
#include "common.h"
#include "gen.h"
#include "gen_sender.h"

#define PACKET_BATCH 64

struct packet_tx {
	int fd;
	struct gen_sender s;
	uint8_t frames[PACKET_BATCH][GEN_FRAME_MAX];
	struct gen_pick picks[PACKET_BATCH];
	struct iovec iov[PACKET_BATCH];
	struct mmsghdr msgs[PACKET_BATCH];
};

struct packet_state {
	uint32_t n;
	struct packet_tx *tx[];
};

static struct packet_state *state_of(const struct gen_ctx *g)
{
	return g->engine_state;
}

static int packet_socket(const struct gen_ctx *g, char *why, size_t len)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = g->ifindex };
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), one = 1, err;

	/* Protocol 0: this socket receives nothing. */
	if (fd < 0) {
		err = -errno;
		snprintf(why, len, "cannot open a packet socket: %s", strerror(-err));
		return err;
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		snprintf(why, len, "cannot bind a packet socket to %s: %s", g->o.ifname, strerror(-err));
		close(fd);
		return err;
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one))) {
		err = -errno;
		snprintf(why, len, "PACKET_QDISC_BYPASS: %s", strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

static int packet_open(struct gen_ctx *g, char *why, size_t len)
{
	struct packet_state *ps = calloc(1, sizeof(*ps) + g->o.threads * sizeof(ps->tx[0]));
	uint32_t i, j;

	if (!ps) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	g->engine_state = ps;
	for (i = 0; i < g->o.threads; i++) {
		struct packet_tx *tx = calloc(1, sizeof(*tx));
		int fd;

		if (!tx) {
			snprintf(why, len, "out of memory");
			return -ENOMEM;
		}
		ps->tx[ps->n++] = tx;
		tx->fd = -1;
		fd = packet_socket(g, why, len);
		if (fd < 0)
			return fd;
		tx->fd = fd;
		for (j = 0; j < PACKET_BATCH; j++) {
			memcpy(tx->frames[j], g->frame, g->len);
			tx->iov[j].iov_base = tx->frames[j];
			tx->iov[j].iov_len = g->len;
			tx->msgs[j].msg_hdr.msg_iov = &tx->iov[j];
			tx->msgs[j].msg_hdr.msg_iovlen = 1;
		}
	}
	snprintf(g->engine_mode, sizeof(g->engine_mode), "AF_PACKET, qdisc bypassed");
	return 0;
}

/* The device refused for now: wait for room (EAGAIN) or give its queue a moment (ENOBUFS). */
static void packet_backoff(int fd, int err)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };

	if (err == EAGAIN)
		poll(&pfd, 1, 10);
	else
		sched_yield();
}

static void packet_send(struct gen_thread *t)
{
	struct packet_tx *tx = state_of(t->g)->tx[t->index];
	struct gen_sender *s = &tx->s;
	uint32_t n = 0; /* frames filled, not yet taken: 0 .. n - 1 */
	int err = gen_sender_init(s, t);

	if (err) {
		gen_thread_fail(t, err, "cannot seed the source draws");
		return;
	}
	for (;;) {
		uint64_t wake = 0;
		int r;

		if (!gen_thread_stopping(t)) {
			uint32_t k = gen_sender_due(s, PACKET_BATCH - n, &wake);

			while (k--) {
				struct gen_pick pick = gen_sender_fill(s, tx->frames[n]);

				if (pick.kind >= 0)
					tx->picks[n++] = pick;
			}
		}
		if (!n) {
			if (gen_thread_stopping(t) || gen_sender_done(s))
				break;
			if (wake)
				gen_sender_wait(t, wake);
			continue;
		}
		r = sendmmsg(tx->fd, tx->msgs, n, MSG_DONTWAIT);
		if (r < 0) {
			if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
				gen_thread_fail(t, -errno, "sendmmsg on a packet socket");
				break;
			}
			if (gen_thread_stopping(t))
				break;
			packet_backoff(tx->fd, errno);
			continue;
		}
		for (uint32_t i = 0; i < (uint32_t)r; i++)
			gen_sender_sent(s, tx->picks[i]);
		/* The ones the device did not take yet go first next time. */
		n -= (uint32_t)r;
		if (n && r) {
			memmove(tx->frames[0], tx->frames[r], n * sizeof(tx->frames[0]));
			memmove(tx->picks, tx->picks + r, n * sizeof(tx->picks[0]));
		}
	}
	while (n--)
		gen_sender_unsent(s);
}

static int packet_collect(struct gen_ctx *g)
{
	struct packet_state *ps = state_of(g);
	uint32_t i;

	for (i = 0; i < ps->n; i++)
		gen_sender_collect(&ps->tx[i]->s, g);
	return 0;
}

static void packet_close(struct gen_ctx *g)
{
	struct packet_state *ps = state_of(g);
	uint32_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->n; i++) {
		if (ps->tx[i]->fd >= 0)
			close(ps->tx[i]->fd);
		free(ps->tx[i]);
	}
	free(ps);
	g->engine_state = NULL;
}

const struct gen_engine gen_engine_packet = {
	.name = "packet",
	.open = packet_open,
	.send = packet_send,
	.collect = packet_collect,
	.close = packet_close,
};
