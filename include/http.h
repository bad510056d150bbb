/* http.h - the HTTP side of stsd: libmicrohttpd glue that turns requests into commands
 * and sends their pages back. */
#ifndef STSD_HTTP_H
#define STSD_HTTP_H

#include "buf.h"
#include "command.h"
#include "config.h"

typedef struct http_server http_server;

/* Starts serving on conf's address and port with conf's threads and limits; commands run
 * against srv. on_stop is called (from a worker thread) once a STOP answer has been sent.
 * Returns NULL with a message in err. */
http_server *http_start(const config *conf, const cmd_server *srv, void (*on_stop)(void),
                        buf *err);

/* The TCP port actually bound (useful with port 0). */
int http_port(const http_server *h);

/* Stops accepting, lets requests in flight finish (up to timeout_ms), closes every
 * connection and frees h. */
void http_stop(http_server *h, int timeout_ms);

#endif
