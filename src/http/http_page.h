/* SPDX-License-Identifier: Apache-2.0 */
/* http_page.h - the steps a command request goes through that know no connection: its
 * target and parameters decoded, the command request made from its headers, its answer's
 * page. For one that came alone (http_route.c) and each of a batch's (http_batch.c).
 * Private to http/. */
#ifndef STSD_HTTP_PAGE_H
#define STSD_HTTP_PAGE_H

#include <sys/socket.h>

#include "cluster/cluster.h"
#include "cmd/command.h"
#include "guard/auth.h"
#include "http_int.h"

/* cluster_route for a request: *leader is the id its answers name in X-STS-Leader (this
 * node's when it serves, 0 when no leader is known), url the leader's when forwarding. */
cluster_route_kind http_cluster_route(cluster *cl, unsigned *leader, char *url, size_t cap);

/* Frees the buffers of q, not q itself (every owner of a request: http.c's pool, a
 * batch's items). */
void http_request_free_parts(request *q);

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

#endif
