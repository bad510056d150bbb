/* SPDX-License-Identifier: Apache-2.0 */
/* http_route.h - what a request gets, once its body is in: the route table (the
 * dashboard, /metrics, the commands), and the sending of answers. Private to http/. */
#ifndef STSD_HTTP_ROUTE_H
#define STSD_HTTP_ROUTE_H

#include <microhttpd.h>

#include "cmd/command.h"
#include "guard/auth.h"
#include "http_int.h"

/* Decodes q's target and parameters and answers it by the first route that owns its
 * path: queued now, parked (q->slot), or held in place for its fsync (q->in_place). */
enum MHD_Result http_route(http_server *h, struct MHD_Connection *c, request *q,
                           const char *method);

/* Sends the page of q's result (JSON if it asked for it; an HTML KO with the status h's
 * configuration gives it) and counts the request. */
enum MHD_Result http_send_result(const http_server *h, struct MHD_Connection *c, request *q);

/* The resumed call of a parked request: sends the answer its slot holds. */
enum MHD_Result http_send_parked(const http_server *h, struct MHD_Connection *c, request *q);

/* The pieces of http_route a batch's requests go through too (http_batch.c). */

/* Decodes q->uri: q->target (where its origin form starts) and q->path; q->prm emptied.
 * Returns PARAMS_OK, a params_rc, or -1 for a malformed absolute-form target. */
int http_decode_target(request *q);
/* Then its query string and body (ctype: the body's Content-Type) into q->prm. */
params_rc http_decode_params(request *q, const char *ctype);
/* The text of the plain-text error page for what the two returned, its status in *status. */
const char *http_decode_error(int rc, unsigned *status);

/* Takes header key (key_len bytes): value into w if it is one a command reads. */
void http_want_header(wanted_headers *w, const char *key, size_t key_len, const char *value);
/* The command request for q, decoded, from method, the client's address and headers w. */
void http_command_request(cmd_request *cq, const request *q, const char *method,
                          const struct sockaddr *addr, socklen_t alen,
                          const wanted_headers *w);

/* The answer to q's command as it goes out, now final: audited (the client at addr),
 * rendered into q->page and counted; *status, *ctype and the command's extra headers
 * (*extra, NULL for none) to send it with. Returns 0, or -1 if out of memory. */
int http_result_page(const http_server *h, request *q, const struct sockaddr *addr,
                     socklen_t alen, unsigned *status, const char **ctype, const buf **extra);

/* A refusal by the access rules (v): its KO page into q->page, its status, and its
 * headers into hdrs (for a 401 the challenge RFC 6750 asks for). 0, or -1 if out of
 * memory. */
int http_refusal_page(request *q, auth_verdict v, unsigned *status, buf *hdrs);

/* A plain-text error page with status. */
enum MHD_Result http_send_error(struct MHD_Connection *c, unsigned status, const char *text);

/* The answer to a request whose body came in after the stop began: it is not run, so
 * nothing is lost; 503, and the connection closes (otherwise keep-alive clients keep the
 * stop waiting). */
enum MHD_Result http_send_stopping(struct MHD_Connection *c);

#endif
