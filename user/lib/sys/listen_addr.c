// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "listen_addr.h"

/* getaddrinfo() would take "70000" as port 4464 and " 80" or "+80" too: digits only. */
static int parse_port(const char *p, uint16_t *port)
{
	unsigned long v = 0;
	size_t i, n = strlen(p);

	if (!n || n > 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(p[i] - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int listen_addr_parse(const char *s, struct sockaddr_storage *ss, char *why, size_t len)
{
	const char *colon = strrchr(s, ':');
	char host[INET6_ADDRSTRLEN + 2];
	uint16_t port;
	size_t hl;

	if (!colon || colon == s) {
		snprintf(why, len, "expected a numeric ADDR:PORT such as 127.0.0.1:9477 or [::1]:9477");
		return -EINVAL;
	}
	if (parse_port(colon + 1, &port)) {
		snprintf(why, len, "port '%s' is not a number from 0 to 65535", colon + 1);
		return -EINVAL;
	}
	hl = (size_t)(colon - s);
	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (hl < 3 || s[hl - 1] != ']' || hl - 2 >= sizeof(host))
			goto bad_host;
		memcpy(host, s + 1, hl - 2);
		host[hl - 2] = 0;
		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			goto bad_host;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return 0;
	}
	if (hl >= sizeof(host))
		goto bad_host;
	memcpy(host, s, hl);
	host[hl] = 0;
	{
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			goto bad_host;
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
	}
	return 0;
bad_host:
	snprintf(why, len, "address '%.*s' is not a numeric IPv4 address or a bracketed IPv6 one ([::1])",
		 (int)(hl > 64 ? 64 : hl), s);
	return -EINVAL;
}

void listen_addr_format(const struct sockaddr_storage *ss, uint16_t port, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, port);
	}
}
