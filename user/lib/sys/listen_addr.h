/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The exporter's --listen ADDR:PORT: a numeric address and a port, parsed strictly. */
#ifndef PACER_LISTEN_ADDR_H
#define PACER_LISTEN_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/*
 * "127.0.0.1:9477", "0.0.0.0:9477" or "[::1]:9477" into *ss.  The port is
 * decimal digits only, 0..65535 (0: the kernel picks a free one).  0, or
 * -EINVAL with why (naming the bad part) in why.
 */
int listen_addr_parse(const char *s, struct sockaddr_storage *ss, char *why, size_t len);

/* "127.0.0.1:PORT" or "[::1]:PORT" for ss with another port (the one bound). */
void listen_addr_format(const struct sockaddr_storage *ss, uint16_t port, char *buf, size_t len);

#endif
