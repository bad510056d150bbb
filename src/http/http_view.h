/* SPDX-License-Identifier: Apache-2.0 */
/* http_view.h - a follower's reads (http_view.c): a read that changes nothing and reads
 * only lists and keys (command_viewable) is answered by the follower asked, from its hot
 * standby, once it has applied what the leader had applied when the read came: one
 * READINDEX question to the leader for all the reads that came while the last one was
 * out. Private to http/. */
#ifndef STSD_HTTP_VIEW_H
#define STSD_HTTP_VIEW_H

#include <microhttpd.h>

#include "base/buf.h"
#include "hold/park.h"
#include "http_int.h"

typedef struct http_view http_view;

/* Starts the `stsd-reads` thread of node srv (srv->cluster and srv->j set). Returns NULL
 * with a message in err. */
http_view *view_start(const config *conf, const cmd_server *srv, buf *err);

/* Stops the thread; reads still queued get the 503 "No leader" (retry). Call once no
 * HTTP thread can call view_send. NULL is fine. */
void view_stop(http_view *v);

/* Parks q (of connection c, its leader's id leader) in lot until the next ReadIndex
 * round ends: its slot then ends with a REPLY_VIEW result (run the command against the
 * standby now: view_run) or with a 503 "No leader" that may be retried (no leader, it
 * could not be asked, this node does not apply as far in time). Returns 0 (q->result.park
 * set), or -1 when nothing was parked (out of memory, the lot shut): forward q instead. */
int view_send(http_view *v, park_lot *lot, struct MHD_Connection *c, request *q,
              unsigned leader);

/* After a REPLY_VIEW: runs q's command against srv's standby into q->result (srv is the
 * node's; the command reads through a copy with view set), headed X-STS-Leader: the
 * leader that answered the round. A standby that no longer follows (this node leads
 * now) gets the 503 "No leader" (retry). */
void view_run(const http_view *v, request *q);

#endif
