/* SPDX-License-Identifier: Apache-2.0 */
/* http.h - the HTTP side of stsd: libmicrohttpd glue that turns requests into commands
 * and sends their pages back. */
#ifndef STSD_HTTP_H
#define STSD_HTTP_H

#include "base/buf.h"
#include "guard/allow.h"
#include "guard/auth.h"
#include "cmd/command.h"
#include "config/config.h"
#include "http/tls.h"

typedef struct http_server http_server;

/* Who may connect and what they may do; each NULL when its keys are unset. The caller
 * keeps them alive until http_stop has returned. */
typedef struct http_access {
    auth *auth;                   /* tokens, roles, disabled commands */
    const allow_list *allow;      /* stsd.allow: refused at accept time */
    tls_ctx *tls;                 /* stsd.tls.*: the port speaks HTTPS */
} http_access;

/* Opens the listening socket on address bind and port (0: any free port) and sets
 * *bound to the port bound. "::" is one dual-stack socket (IPv4 clients arrive as
 * ::ffff:a.b.c.d), or 0.0.0.0 with a warning where the kernel has no IPv6 or no
 * dual-stack sockets. Returns the socket, or -1 with a message in err. */
int http_listen(const char *bind, int port, int *bound, buf *err);

/* http_listen in two steps, so that a busy port is known before the start loads any list
 * while clients still meet a refusal until the server is ready: http_bind binds without
 * listening (the port is held; the message of a port in use says how to choose another),
 * http_listen_bound then listens on that socket. Each returns as http_listen does; on
 * error http_listen_bound leaves fd to its caller to close. */
int http_bind(const char *bind, int port, int *bound, buf *err);
int http_listen_bound(int fd, const char *bind, int port, buf *err);

/* Starts serving on listening socket fd (which h then owns) with conf's threads and
 * limits and acc's rules (acc may be NULL: open to all, plain HTTP); commands run
 * against srv. on_stop is called (from an HTTP thread) once a STOP
 * answer has been sent. Returns NULL with a message in err (fd is closed). */
http_server *http_start(const config *conf, const cmd_server *srv, const http_access *acc,
                        int fd, void (*on_stop)(void), buf *err);

/* Stops accepting, lets requests in flight finish (up to timeout_ms), closes every
 * connection and frees h. */
void http_stop(http_server *h, int timeout_ms);

#endif
