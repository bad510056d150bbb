/* SPDX-License-Identifier: Apache-2.0 */
/* http_route.h - what a request gets, once its body is in: the route table (the
 * dashboard, /metrics, the commands), and the sending of answers. Private to http/. */
#ifndef STSD_HTTP_ROUTE_H
#define STSD_HTTP_ROUTE_H

#include <microhttpd.h>

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

/* The answer to a request whose body came in after the stop began: it is not run, so
 * nothing is lost; 503 with BATCH_STOPPING_TEXT, and the connection closes (otherwise
 * keep-alive clients keep the stop waiting). A follower whose batch gets it knows that
 * none of the batch's requests ran (frame_refused). */
enum MHD_Result http_send_stopping(struct MHD_Connection *c);

#endif
