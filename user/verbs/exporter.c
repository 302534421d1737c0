// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer exporter: serve /metrics in the Prometheus text format for every
 * interface running the pacer, through libmicrohttpd.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "common.h"
#include "opts.h"
#include "prom.h"

#define MAX_PACERS 256

/* "127.0.0.1:9477" or "[::1]:9477" into a socket address.  0 or -EINVAL. */
static int parse_listen(const char *s, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t hl;

	if (!colon || !colon[1] || colon == s)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (s[0] == '[') {
		if (hl < 3 || s[hl - 1] != ']')
			return -EINVAL;
		s++;
		hl -= 2;
	}
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = 0;
	if (getaddrinfo(host, colon + 1, &hints, &res) || !res)
		return -EINVAL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

struct listen_at {
	const char *text;
	struct sockaddr_storage ss;
};

static int listen_opt(const struct opt_spec *s, const char *arg, void *field, char *why, size_t len)
{
	struct listen_at *l = field;

	(void)s;
	l->text = arg;
	if (!parse_listen(arg, &l->ss))
		return 0;
	snprintf(why, len, "expected a numeric ADDR:PORT such as 127.0.0.1:9477 or [::1]:9477");
	return -EINVAL;
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
		  "0.0.0.0:9477 for every IPv4 address" },
	{ 0 },
};

static const struct opt_verb exporter_verb = {
	.name = "exporter",
	.synopsis = "--listen ADDR:PORT",
	.intro = "Serve the counters and live configuration of every interface running the\n"
		 "pacer at http://ADDR:PORT/metrics (Prometheus text format); other paths give\n"
		 "404. Runs until SIGINT or SIGTERM.\n",
	.opts = exporter_specs,
};

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

/* The whole exposition text, or NULL. */
static char *render(size_t *len)
{
	struct scrape sc = { .p = calloc(MAX_PACERS, sizeof(struct prom_pacer)) };
	char *buf = NULL;
	FILE *f;
	int err;

	if (!sc.p)
		return NULL;
	err = pacer_for_each(collect, &sc);
	f = err < 0 ? NULL : open_memstream(&buf, len);
	if (f) {
		err = prom_write(f, sc.p, sc.n);
		if (fclose(f) || err) {
			free(buf);
			buf = NULL;
		}
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_size, void **req_cls)
{
	size_t len = 0;
	char *body;

	(void)cls, (void)version, (void)upload_data, (void)upload_size, (void)req_cls;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, strdup("only GET and HEAD\n"),
			     strlen("only GET and HEAD\n"), "text/plain");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, strdup("not found: try /metrics\n"),
			     strlen("not found: try /metrics\n"), "text/plain");
	body = render(&len);
	if (!body)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, strdup("cannot read the pacer maps\n"),
			     strlen("cannot read the pacer maps\n"), "text/plain");
	return reply(conn, MHD_HTTP_OK, body, len, PROM_CONTENT_TYPE);
}

/* Block until SIGINT or SIGTERM; the server thread does the work meanwhile. */
static int wait_for_stop(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	return sigwait(&set, &sig) ? -1 : sig;
}

int cmd_exporter(int argc, char **argv)
{
	struct exporter_opts o = { 0 };
	struct MHD_Daemon *d;
	sigset_t set;
	int sig, err = parse_verb_opts(&exporter_verb, argc, argv, &o);

	if (err)
		return err == OPTS_HELP ? 0 : err;
	/* Blocked before the server thread starts, so only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				     (o.listen.ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&o.listen.ss,
			     MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	if (!d) {
		pr_err("cannot listen on %s (address in use, or not local?)", o.listen.text);
		return 1;
	}
	pr_info("xdp-pacer exporter: serving http://%s/metrics", o.listen.text);
	fflush(stdout);
	sig = wait_for_stop();
	MHD_stop_daemon(d);
	pr_info("xdp-pacer exporter: stopped by %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	return 0;
}
