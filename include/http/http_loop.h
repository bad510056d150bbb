/* SPDX-License-Identifier: Apache-2.0 */
/* http_loop.h - the threads that drive the HTTP server: each runs the turns of its own
 * libmicrohttpd daemon (all of them on one listening socket) and sleeps until a socket
 * or a request waiting in place needs it.
 *
 * Why our own loop rather than libmicrohttpd's thread pool: a change that waits for its
 * fsync (milliseconds) stays in place, unanswered, instead of being suspended. The
 * daemon calls its handler again at each turn; the loop sleeps between turns until the
 * journal's writer wakes it, once per batch. Suspending and resuming cost four system
 * calls per request and a wake-up each; this costs none. Long waits (a READ with
 * TIMEOUT) still suspend: waiting in place is only for what ends within a sync. */
#ifndef STSD_HTTP_LOOP_H
#define STSD_HTTP_LOOP_H

#include "base/buf.h"

struct MHD_Daemon;
typedef struct http_loops http_loops;
typedef struct http_loop http_loop;

/* Starts daemon i of n: libmicrohttpd's external epoll mode, no thread of its own.
 * Called on the thread of http_loops_start. Returns NULL on failure (it logged why). */
typedef struct MHD_Daemon *(*http_loop_daemon_fn)(void *ctx, unsigned i);

/* Starts n threads, each with the daemon make(ctx, i) returns. NULL with a message in
 * err if a daemon or a thread could not start (the ones started are stopped). */
http_loops *http_loops_start(unsigned n, http_loop_daemon_fn make, void *ctx, buf *err);

/* Stops accepting connections: each thread takes its daemon off the listening socket
 * listen_fd; the last one takes the connections the kernel completed meanwhile, then
 * closes listen_fd. Returns once all of them have. Requests in flight go on. */
void http_loops_quiesce(http_loops *ls, int listen_fd);

/* Closes every connection (each thread stops its own daemon), joins the threads and
 * frees ls. */
void http_loops_stop(http_loops *ls);

/* The loop of the calling thread, or NULL if it is not a loop thread. */
http_loop *http_loop_current(void);

/* A request of l waits in place (http_loop_hold) or no longer does (http_loop_release).
 * Only l's own thread calls these; others may read the count. */
void http_loop_hold(http_loop *l);
void http_loop_release(http_loop *l);

/* This turn did something besides asking a waiting request whether it has ended: the
 * next turn comes at once. Only l's own thread calls this. */
void http_loop_busy(http_loop *l);

/* Wakes l: a request waiting on it, suspended or in place, may be answered now. Any
 * thread; wakes the loop once however many such calls come before its next turn. */
void http_loop_wake(http_loop *l);

/* Wakes every loop of ls with requests waiting in place (the journal's answer hook).
 * Any thread. */
void http_loops_wake_holding(http_loops *ls);

#endif
