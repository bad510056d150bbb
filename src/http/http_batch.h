/* SPDX-License-Identifier: Apache-2.0 */
/* http_batch.h - the leader's side of a follower's batch (POST /_stsd/batch): its
 * requests run here one after another, each as it would alone, and their answers go
 * back together once every change among them is committed. Private to http/.
 *
 * The follower puts in a batch only requests answered at once (command_batchable): no
 * request of a batch ever parks. */
#ifndef STSD_HTTP_BATCH_H
#define STSD_HTTP_BATCH_H

#include <microhttpd.h>
#include <sys/socket.h>

#include "http_int.h"

typedef struct http_batch http_batch;

/* Runs the batch in q's body from the client at addr, then answers it now, or holds q in
 * place (q->in_place, q->batch) until its changes are committed. Refused whole before
 * any of its requests runs: another method (405), another Content-Type than
 * BATCH_CONTENT_TYPE (415), a browser's (403, guard/csrf.h), a malformed batch (400). */
enum MHD_Result batch_route(http_server *h, struct MHD_Connection *c, request *q,
                            const char *method, const struct sockaddr *addr, socklen_t alen);

/* Asked at each turn of q's thread, as commit_ready is: 1 while a change of q's batch is
 * not committed yet; 0 once every answer is final. */
int batch_pending(const http_server *h, request *q);

/* Sends the answers of q's batch, in order, and frees the batch. */
enum MHD_Result batch_send(const http_server *h, struct MHD_Connection *c, request *q);

/* Frees b (a connection closed with its batch held). NULL: nothing. */
void batch_free(http_batch *b);

#endif
