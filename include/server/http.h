/* http.h - the HTTP side of stsd: libmicrohttpd glue that turns requests into commands
 * and sends their pages back. */
#ifndef STSD_HTTP_H
#define STSD_HTTP_H

#include "base/buf.h"
#include "server/command.h"
#include "base/config.h"

typedef struct http_server http_server;

/* Opens the listening socket on address bind and port (0: any free port) and sets
 * *bound to the port bound. Returns the socket, or -1 with a message in err. */
int http_listen(const char *bind, int port, int *bound, buf *err);

/* Starts serving on listening socket fd (which h then owns) with conf's threads and
 * limits; commands run against srv. on_stop is called (from a worker thread) once a STOP
 * answer has been sent. Returns NULL with a message in err (fd is closed). */
http_server *http_start(const config *conf, const cmd_server *srv, int fd,
                        void (*on_stop)(void), buf *err);

/* Stops accepting, lets requests in flight finish (up to timeout_ms), closes every
 * connection and frees h. */
void http_stop(http_server *h, int timeout_ms);

#endif
