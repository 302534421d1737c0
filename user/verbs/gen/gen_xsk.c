// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen, the AF_XDP engine (libxdp's xsk API): each thread an
 * AF_XDP socket on its own TX queue of IFNAME, transmit only (no XDP
 * program is loaded for it), zero-copy where the driver offers it, else
 * copy mode (veth, and any driver without AF_XDP support).  Frames are
 * written in the socket's memory, which holds the template, so a frame
 * costs only its source; the kernel takes them off the TX ring, and hands
 * each buffer back on the completion ring.
 *
 * What is sent: a frame the kernel took off the ring, unless the driver
 * dropped it (in copy mode the send call then says EBUSY; that frame is
 * the last completed one) - so sent is what the device accepted.  The
 * ring is full only when every buffer is out, which then waits for
 * completions: nothing is lost to backpressure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/if_xdp.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <xdp/xsk.h>
#include "common.h"
#include "gen.h"
#include "gen_sender.h"
#include "time_now.h"

#define XSK_FRAMES 2048 /* per thread; the TX and completion rings hold them all */
#define XSK_FRAME_SIZE 2048
#define XSK_BATCH 256
#define XSK_KICKS 4           /* send calls per batch at most (copy mode sends 32 a call) */
#define XSK_DRAIN_NS 200000000ULL /* at the end: how long to wait for completions */
/*
 * Copy mode sends at most this many frames a call where the kernel lets
 * the socket say so (XDP_MAX_TX_SKB_BUDGET, Linux 6.17), 32 before.
 */
#ifndef XDP_MAX_TX_SKB_BUDGET
#define XDP_MAX_TX_SKB_BUDGET 9
#endif
#define XSK_TX_BUDGET 512
#define XSK_BIND_TRIES 100
#define XSK_BIND_WAIT_US 10000

enum { SLOT_FREE, SLOT_OUT };

struct xsk_tx {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq;
	uint8_t *area;
	struct gen_sender s;
	uint32_t free[XSK_FRAMES], nfree;
	uint32_t produced;     /* descriptors put on the TX ring, ever */
	uint32_t out;          /* buffers on the ring or in the kernel */
	struct gen_pick picks[XSK_FRAMES];
	uint8_t slot_state[XSK_FRAMES];
};

struct xsk_state {
	uint32_t n;
	bool copy;
	struct xsk_tx *tx[];
};

static struct xsk_state *state_of(const struct gen_ctx *g)
{
	return g->engine_state;
}

/* IFNAME's TX queues (ethtool's channels), or 0 where the driver does not say. */
static uint32_t tx_queues(const char *ifname)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = { .ifr_data = (void *)&ch };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t n = 0;

	if (fd < 0)
		return 0;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		n = ch.tx_count + ch.combined_count;
	close(fd);
	return n;
}

static int xsk_tx_open(struct gen_ctx *g, struct xsk_tx *x, uint32_t queue, char *why, size_t len)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_PROD__DEFAULT_NUM_DESCS,
		.comp_size = XSK_FRAMES,
		.frame_size = XSK_FRAME_SIZE,
	};
	struct xsk_socket_config scfg = {
		.tx_size = XSK_FRAMES,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, /* transmit only */
		.bind_flags = XDP_USE_NEED_WAKEUP, /* neither COPY nor ZEROCOPY: zero-copy if it can */
	};
	size_t size = (size_t)XSK_FRAMES * XSK_FRAME_SIZE;
	uint32_t i;
	int err, budget;

	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		snprintf(why, len, "cannot map %zu bytes for AF_XDP: %s", size, strerror(errno));
		return -ENOMEM;
	}
	err = xsk_umem__create(&x->umem, x->area, size, &x->fq, &x->cq, &ucfg);
	if (err) {
		snprintf(why, len, "cannot register AF_XDP memory: %s", strerror(-err));
		return err;
	}
	/*
	 * The kernel frees an AF_XDP socket's hold on its queue after the
	 * socket is closed, in a work item: right after another generator's
	 * run the queue may still be taken (EBUSY) for a moment.
	 */
	for (i = 0; i < XSK_BIND_TRIES; i++) {
		err = xsk_socket__create(&x->xsk, g->o.ifname, queue, x->umem, NULL, &x->tx, &scfg);
		if (err != -EBUSY)
			break;
		usleep(XSK_BIND_WAIT_US);
	}
	if (err) {
		snprintf(why, len, "cannot bind an AF_XDP socket to %s queue %u: %s", g->o.ifname, queue,
			 strerror(-err));
		return err;
	}
	budget = XSK_TX_BUDGET;
	/* Older kernels refuse it (ENOPROTOOPT): 32 a call there. */
	(void)setsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
	for (i = 0; i < XSK_FRAMES; i++) {
		memcpy(x->area + (size_t)i * XSK_FRAME_SIZE, g->frame, g->len);
		x->free[x->nfree++] = XSK_FRAMES - 1 - i;
	}
	return 0;
}

/* Whether the socket's driver took it in zero-copy mode. */
static bool xsk_zerocopy(const struct xsk_tx *x)
{
	struct xdp_options opts = {};
	socklen_t optlen = sizeof(opts);

	return !getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_OPTIONS, &opts, &optlen) &&
	       (opts.flags & XDP_OPTIONS_ZEROCOPY);
}

static int xsk_open(struct gen_ctx *g, char *why, size_t len)
{
	struct xsk_state *xs = calloc(1, sizeof(*xs) + g->o.threads * sizeof(xs->tx[0]));
	uint32_t i, queues = tx_queues(g->o.ifname);
	int err;

	if (!xs) {
		snprintf(why, len, "out of memory");
		return -ENOMEM;
	}
	g->engine_state = xs;
	if (queues && g->o.threads > queues) {
		snprintf(why, len, "--threads %u needs as many TX queues, one AF_XDP socket each; %s has %u",
			 g->o.threads, g->o.ifname, queues);
		return -EINVAL;
	}
	for (i = 0; i < g->o.threads; i++) {
		struct xsk_tx *x = calloc(1, sizeof(*x));

		if (!x) {
			snprintf(why, len, "out of memory");
			return -ENOMEM;
		}
		xs->tx[xs->n++] = x;
		err = xsk_tx_open(g, x, i, why, len);
		if (err)
			return err;
	}
	xs->copy = !xsk_zerocopy(xs->tx[0]);
	if (g->o.threads == 1)
		snprintf(g->engine_mode, sizeof(g->engine_mode), "AF_XDP %s, queue 0",
			 xs->copy ? "copy mode" : "zero-copy");
	else
		snprintf(g->engine_mode, sizeof(g->engine_mode), "AF_XDP %s, queues 0-%u",
			 xs->copy ? "copy mode" : "zero-copy", g->o.threads - 1);
	return 0;
}

/*
 * Buffers the kernel is done with come back; each counts as sent, except
 * the last one when the send call said the driver dropped it.
 */
static void xsk_reclaim(struct xsk_tx *x, bool last_dropped)
{
	uint32_t idx, n = xsk_ring_cons__peek(&x->cq, XSK_FRAMES, &idx), i;

	for (i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)(*xsk_ring_cons__comp_addr(&x->cq, idx + i) / XSK_FRAME_SIZE) %
				XSK_FRAMES;

		if (last_dropped && i == n - 1)
			gen_sender_unsent(&x->s);
		else
			gen_sender_sent(&x->s, x->picks[slot]);
		x->slot_state[slot] = SLOT_FREE;
		x->free[x->nfree++] = slot;
	}
	xsk_ring_cons__release(&x->cq, n);
	x->out -= n;
}

/* Fill what is due into free buffers and put them on the TX ring. */
static void xsk_produce(struct xsk_tx *x, uint32_t len, uint64_t *wake)
{
	uint32_t slots[XSK_BATCH], n = 0, k, idx, i;

	k = gen_sender_due(&x->s, x->nfree < XSK_BATCH ? x->nfree : XSK_BATCH, wake);
	while (k--) {
		uint32_t slot = x->free[--x->nfree];
		struct gen_pick pick = gen_sender_fill(&x->s, x->area + (size_t)slot * XSK_FRAME_SIZE);

		if (pick.kind < 0) {
			x->free[x->nfree++] = slot;
			continue;
		}
		x->picks[slot] = pick;
		x->slot_state[slot] = SLOT_OUT;
		slots[n++] = slot;
	}
	/* The ring holds every buffer: there is room for the ones just filled. */
	if (!n || xsk_ring_prod__reserve(&x->tx, n, &idx) != n)
		return;
	for (i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = (uint64_t)slots[i] * XSK_FRAME_SIZE;
		d->len = len;
		d->options = 0;
	}
	xsk_ring_prod__submit(&x->tx, n);
	x->produced += n;
	x->out += n;
}

/*
 * Ask the kernel to send what is on the ring (copy mode sends only when
 * asked, a batch a call).  0, or the errno of a failure that is not
 * backpressure.
 */
static int xsk_kick(struct xsk_tx *x, bool copy)
{
	int k;

	if (!copy && !xsk_ring_prod__needs_wakeup(&x->tx))
		return 0;
	for (k = 0; k < XSK_KICKS; k++) {
		if (sendto(xsk_socket__fd(x->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
			return 0;
		switch (errno) {
		case EAGAIN: /* more on the ring than one call sends, or no room to complete */
			xsk_reclaim(x, false);
			continue;
		case EBUSY: /* the driver dropped one: completed, not sent */
			xsk_reclaim(x, true);
			return 0;
		case ENOBUFS:
		case EINTR:
			return 0;
		default:
			return errno;
		}
	}
	return 0;
}

/*
 * The run is over: wait a little for the buffers still out.  Any still
 * out after that is sent if the kernel took it off the ring (a receiver
 * holds it), unsent if it is still on the ring.
 */
static void xsk_drain(struct xsk_tx *x, bool copy)
{
	uint64_t deadline = mono_ns() + XSK_DRAIN_NS;
	uint32_t consumed, i;

	while (x->out && mono_ns() < deadline) {
		uint32_t before = x->out;

		if (xsk_kick(x, copy))
			break;
		xsk_reclaim(x, false);
		if (x->out == before)
			usleep(100);
	}
	if (!x->out)
		return;
	consumed = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
	for (i = consumed; i != x->produced; i++) {
		const struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, i);
		uint32_t slot = (uint32_t)(d->addr / XSK_FRAME_SIZE) % XSK_FRAMES;

		x->slot_state[slot] = SLOT_FREE;
		gen_sender_unsent(&x->s);
	}
	for (i = 0; i < XSK_FRAMES; i++) {
		if (x->slot_state[i] == SLOT_OUT)
			gen_sender_sent(&x->s, x->picks[i]);
	}
}

static void xsk_send(struct gen_thread *t)
{
	struct xsk_state *xs = state_of(t->g);
	struct xsk_tx *x = xs->tx[t->index];
	uint32_t len = (uint32_t)t->g->len;
	int err = gen_sender_init(&x->s, t);

	if (err) {
		gen_thread_fail(t, err, "cannot seed the source draws");
		return;
	}
	while (!gen_thread_stopping(t)) {
		uint64_t wake = 0;

		xsk_reclaim(x, false);
		xsk_produce(x, len, &wake);
		if (!x->out) {
			if (gen_sender_done(&x->s))
				break;
			if (wake)
				gen_sender_wait(t, wake);
			continue;
		}
		err = xsk_kick(x, xs->copy);
		if (err) {
			gen_thread_fail(t, -err, "sending on an AF_XDP socket");
			break;
		}
	}
	xsk_drain(x, xs->copy);
}

static int xsk_collect(struct gen_ctx *g)
{
	struct xsk_state *xs = state_of(g);
	uint32_t i;

	for (i = 0; i < xs->n; i++)
		gen_sender_collect(&xs->tx[i]->s, g);
	return 0;
}

static void xsk_close(struct gen_ctx *g)
{
	struct xsk_state *xs = state_of(g);
	uint32_t i;

	if (!xs)
		return;
	for (i = 0; i < xs->n; i++) {
		struct xsk_tx *x = xs->tx[i];

		xsk_socket__delete(x->xsk);
		if (x->umem)
			xsk_umem__delete(x->umem);
		if (x->area)
			munmap(x->area, (size_t)XSK_FRAMES * XSK_FRAME_SIZE);
		free(x);
	}
	free(xs);
	g->engine_state = NULL;
}

const struct gen_engine gen_engine_xsk = {
	.name = "xsk",
	.open = xsk_open,
	.send = xsk_send,
	.collect = xsk_collect,
	.close = xsk_close,
};
