// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer exporter: serve /metrics in the Prometheus text format for every
 * interface running the pacer, through libmicrohttpd.
 *
 * Hostile clients are expected: the server thread polls with epoll (no
 * FD_SETSIZE ceiling), each client address holds a few connections at
 * most, a request's header is capped in size, a request must arrive whole
 * within a deadline however slowly its bytes trickle in (an idle timeout
 * alone is reset by every byte), and when every slot is taken a new
 * connection evicts the oldest that has not sent a whole request, so a
 * crowd of slow or idle clients over many addresses cannot lock a scraper
 * out.  libmicrohttpd's complaints about
 * bad requests are rate-limited, so a flood of them cannot flood the log.
 */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <microhttpd.h>
#include "common.h"
#include "conn_slots.h"
#include "listen_addr.h"
#include "opts.h"
#include "prom.h"
#include "time_now.h"

#define MAX_PACERS 256
/*
 * Connections in all; a scraper needs one, and a client address gets
 * EXPORTER_PER_ADDRESS.  At the cap a new connection evicts an old one
 * (make_room()); libmicrohttpd's own limit sits above by the evicted
 * connections it has yet to close (at most the few it accepts per turn of
 * its loop), since at its limit it stops accepting altogether.
 */
#define EXPORTER_CONNECTIONS 256
#define EXPORTER_CLOSING_HEADROOM 64
#define EXPORTER_PER_ADDRESS 8
/* Per connection: the request's header must fit (larger: 431), with the reply's header. */
#define EXPORTER_CONN_MEMORY (16 * 1024)
/* A request must arrive whole this long after the connection opened or the last reply. */
#define EXPORTER_REQUEST_DEADLINE_S 5.0
/* Between requests on a kept-alive connection. */
#define EXPORTER_IDLE_TIMEOUT_S 10u
/* How often the main thread looks for connections past the deadline. */
#define EXPORTER_SWEEP_NS 200000000L
/* At most one libmicrohttpd message per this many seconds; the rest are counted. */
#define EXPORTER_LOG_PERIOD_S 10.0

struct listen_at {
	const char *text;
	struct sockaddr_storage ss;
};

static int listen_opt(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	struct listen_at *l = field;

	(void)s;
	l->text = arg;
	return listen_addr_parse(arg, &l->ss, why, len);
}

struct exporter_opts {
	struct listen_at listen;
	bool listen_set;
};

static const struct opt_spec exporter_specs[] = {
	{ .name = "listen", .type = OPT_CUSTOM, .flags = OPT_REQUIRED, .arg = "ADDR:PORT",
	  .parse = listen_opt, OPT_FIELD(struct exporter_opts, listen),
	  OPT_GIVEN(struct exporter_opts, listen_set),
	  .help = "numeric address and port: 127.0.0.1:9477, [::1]:9477,\n"
		  "0.0.0.0:9477 for every IPv4 address; port 0 takes a free\n"
		  "port and says which" },
	{ 0 },
};

static const struct opt_verb exporter_verb = {
	.name = "exporter",
	.synopsis = "--listen ADDR:PORT",
	.intro = "Serve the counters and live configuration of every interface running the\n"
		 "pacer at http://ADDR:PORT/metrics (Prometheus text format); other paths give\n"
		 "404. Each client address holds at most 8 connections, and a request must\n"
		 "arrive whole within 5 s. With 256 connections open, a new one closes the\n"
		 "oldest that has not sent a whole request (else the longest idle), so slow\n"
		 "clients cannot lock a scraper out. Runs until SIGINT or SIGTERM; SIGHUP and\n"
		 "SIGUSR1 are harmless (the maps are read at every scrape: nothing to reload).\n",
	.opts = exporter_specs,
};

/* ---- rate-limited logging of libmicrohttpd's messages ---- */

static struct {
	pthread_mutex_t lock;
	double last;        /* when the last message was printed; 0: never */
	uint64_t suppressed;
} mhd_log = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void flush_suppressed(void)
{
	if (mhd_log.suppressed)
		pr_err("exporter: %llu more libmicrohttpd messages suppressed",
			(unsigned long long)mhd_log.suppressed);
	mhd_log.suppressed = 0;
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
	char msg[256];
	double now = mono_s();
	size_t n;

	(void)cls;
	pthread_mutex_lock(&mhd_log.lock);
	if (mhd_log.last && now - mhd_log.last < EXPORTER_LOG_PERIOD_S) {
		mhd_log.suppressed++;
		pthread_mutex_unlock(&mhd_log.lock);
		return;
	}
	flush_suppressed();
	mhd_log.last = now;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = 0;
	pr_err("exporter: %s (similar messages held back for %.0f s)", msg,
		EXPORTER_LOG_PERIOD_S);
	pthread_mutex_unlock(&mhd_log.lock);
}

/* ---- connections: the whole-request deadline and eviction at the cap ---- */

static struct {
	pthread_mutex_t lock;
	struct conn_slots slots;
	uint64_t cut;     /* closed for missing the request deadline */
	uint64_t evicted; /* closed to make room at the cap */
} conns = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * Under conns.lock: end c's connection, which already gave up its slot.  A
 * reset (SO_LINGER 0 at the close libmicrohttpd makes) rather than a FIN
 * leaves no TIME_WAIT or orphaned socket in the kernel per hostile
 * connection; the shutdown wakes libmicrohttpd, which closes the socket at
 * its next event.
 */
static void conn_end(struct conn *c)
{
	const struct linger reset = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
	shutdown(c->fd, SHUT_RDWR);
}

/*
 * libmicrohttpd calls this from its thread when a connection opens and
 * before it closes the socket, so the sweep, under the same lock, only
 * ever shuts down a socket the connection still owns.
 *
 * At the cap, the new connection evicts the oldest that has not sent a
 * whole request (conn_slots_open()).  A scraper sends its request as soon
 * as it connects, so it leaves the fresh list long before a cap's worth of
 * newer connections arrive; connections that sit or trickle are always
 * older.  So however many slow or idle clients there are, over however
 * many addresses, a new connection gets a slot and a prompt one is served.
 */
static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct conn *c, *victim;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
		c = calloc(1, sizeof(*c));
		*socket_context = c;
		if (!c || !ci) {
			/* Untracked, it could never be evicted: refuse it rather than risk the cap. */
			free(c);
			*socket_context = NULL;
			if (ci)
				shutdown(ci->connect_fd, SHUT_RDWR);
			return;
		}
		c->fd = ci->connect_fd;
		pthread_mutex_lock(&conns.lock);
		victim = conn_slots_open(&conns.slots, c, mono_s());
		if (victim) {
			conn_end(victim);
			conns.evicted++;
		}
		pthread_mutex_unlock(&conns.lock);
		return;
	}
	c = *socket_context;
	if (!c)
		return;
	pthread_mutex_lock(&conns.lock);
	conn_slots_close(&conns.slots, c);
	pthread_mutex_unlock(&conns.lock);
	free(c);
	*socket_context = NULL;
}

static void conn_now(struct MHD_Connection *connection, enum conn_state state)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *c = ci ? ci->socket_context : NULL;

	if (!c)
		return;
	pthread_mutex_lock(&conns.lock);
	conn_slots_enter(&conns.slots, c, state, mono_s());
	pthread_mutex_unlock(&conns.lock);
}

/* A reply went out (or the request failed): the next request's deadline starts now. */
static void on_completed(void *cls, struct MHD_Connection *connection, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)req_cls, (void)toe;
	conn_now(connection, CONN_IDLE);
}

/* Cut connections whose request did not arrive in time. */
static void sweep(void)
{
	double now = mono_s();
	struct conn *c;

	pthread_mutex_lock(&conns.lock);
	while ((c = conn_slots_expired(&conns.slots, now, EXPORTER_REQUEST_DEADLINE_S))) {
		conn_slots_cut(&conns.slots, c);
		conn_end(c);
		conns.cut++;
	}
	pthread_mutex_unlock(&conns.lock);
}

/* ---- the scrape ---- */

struct scrape {
	struct prom_pacer *p;
	size_t n;
};

static int collect(struct pacer_handle *h, void *ctx)
{
	struct scrape *sc = ctx;

	if (sc->n >= MAX_PACERS)
		return 0;
	if (pacer_prom_fill(h, &sc->p[sc->n]))
		return 0; /* unloaded while we looked: leave it out of this scrape */
	sc->n++;
	return 0;
}

/* The whole exposition text, or NULL with *err set (negative errno). */
static char *render(size_t *len, int *err)
{
	struct scrape sc = { .p = calloc(MAX_PACERS, sizeof(struct prom_pacer)) };
	char *buf = NULL;
	FILE *f;

	*err = -ENOMEM;
	if (!sc.p)
		return NULL;
	*err = pacer_for_each(collect, &sc);
	f = *err < 0 ? NULL : open_memstream(&buf, len);
	if (f) {
		*err = prom_write(f, sc.p, sc.n);
		if (fclose(f) && !*err)
			*err = -EIO;
		if (*err) {
			free(buf);
			buf = NULL;
		}
	} else if (*err >= 0) {
		*err = -errno;
	}
	free(sc.p);
	return buf;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned code, char *body, size_t len,
			     const char *type)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned code, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		return MHD_NO;
	return reply(conn, code, body, (size_t)n, "text/plain");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **req_cls)
{
	size_t len = 0;
	char *body;
	int err;

	(void)cls, (void)version, (void)upload_data, (void)upload_size, (void)req_cls;
	conn_now(conn, CONN_SERVING); /* the request's header is in */
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	body = render(&len, &err);
	if (!body)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot read the pacer maps: %s%s\n", strerror(-err),
				  err == -EPERM || err == -EACCES
					  ? " (the exporter needs root, or CAP_SYS_ADMIN / CAP_BPF)"
					  : "");
	return reply(conn, MHD_HTTP_OK, body, len, PROM_CONTENT_TYPE);
}

/* ---- running ---- */

/*
 * The kernel hands over a connection only once its first bytes arrive
 * (TCP_DEFER_ACCEPT, as nginx's "deferred"): a flood of connections that
 * send nothing never reaches the accept queue, so it neither takes slots
 * nor delays a scraper's connection queued behind it.  One still silent
 * after the request deadline is handed over then, and meets the deadline.
 */
static void defer_accept(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_LISTEN_FD);
	int seconds = (int)EXPORTER_REQUEST_DEADLINE_S;

	if (!di || setsockopt(di->listen_fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds,
			      sizeof(seconds)))
		pr_err("exporter: warning: cannot defer accepting until a request arrives (TCP_DEFER_ACCEPT): %s; idle connections will take slots",
			strerror(errno));
}

static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1);
}

/*
 * Until SIGINT or SIGTERM (returned), sweep the connections; SIGHUP and
 * SIGUSR1 only say what the exporter is doing.
 */
static int serve_until_stopped(const sigset_t *set)
{
	const struct timespec tick = { 0, EXPORTER_SWEEP_NS };
	siginfo_t si;
	int sig;

	for (;;) {
		sig = sigtimedwait(set, &si, &tick);
		if (sig == SIGINT || sig == SIGTERM)
			return sig;
		if (sig == SIGHUP || sig == SIGUSR1) {
			pthread_mutex_lock(&conns.lock);
			pr_info("xdp-pacer exporter: %s: nothing to reload (the maps are read at every scrape); so far %llu connections cut at the %.0f s request deadline, %llu evicted at %u open",
				sig == SIGHUP ? "SIGHUP" : "SIGUSR1", (unsigned long long)conns.cut,
				EXPORTER_REQUEST_DEADLINE_S, (unsigned long long)conns.evicted,
				EXPORTER_CONNECTIONS);
			pthread_mutex_unlock(&conns.lock);
			fflush(stdout);
		}
		sweep();
	}
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter_opts o = { 0 };
	const union MHD_DaemonInfo *di;
	struct MHD_Daemon *d;
	char where[INET6_ADDRSTRLEN + 16];
	sigset_t set;
	int sig, err = parse_verb_opts(&exporter_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	conn_slots_init(&conns.slots, EXPORTER_CONNECTIONS);
	/* Blocked before the server thread starts, so only the main thread takes them. */
	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG |
				     (o.listen.ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, handle, NULL,
			     /* First, or libmicrohttpd says so on stderr through its own logger. */
			     MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&o.listen.ss,
			     MHD_OPTION_CONNECTION_TIMEOUT, EXPORTER_IDLE_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_LIMIT,
			     (unsigned)(EXPORTER_CONNECTIONS + EXPORTER_CLOSING_HEADROOM),
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)EXPORTER_PER_ADDRESS,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)EXPORTER_CONN_MEMORY,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
			     MHD_OPTION_END);
	if (!d) {
		pr_err("cannot listen on %s (address in use, or not local?)", o.listen.text);
		return 1;
	}
	defer_accept(d);
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	listen_addr_format(&o.listen.ss, di ? di->port : 0, where, sizeof(where));
	pr_info("xdp-pacer exporter: serving http://%s/metrics", where);
	fflush(stdout);
	sig = serve_until_stopped(&set);
	MHD_stop_daemon(d);
	pthread_mutex_lock(&mhd_log.lock);
	flush_suppressed();
	pthread_mutex_unlock(&mhd_log.lock);
	pr_info("xdp-pacer exporter: stopped by %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	return 0;
}
