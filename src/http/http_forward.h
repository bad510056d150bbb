/* SPDX-License-Identifier: Apache-2.0 */
/* http_forward.h - a cluster node's requests that the leader must answer: relayed to it
 * on one thread of libcurl transfers (its answer sent back byte for byte), redirected to
 * it (307), or refused while no leader is known (503). Private to http/.
 *
 * Only a node with srv->cluster set uses any of this; stsd alone starts no thread. */
#ifndef STSD_HTTP_FORWARD_H
#define STSD_HTTP_FORWARD_H

#include <microhttpd.h>
#include <stdint.h>

#include "base/buf.h"
#include "cluster/cluster.h"
#include "config/config.h"
#include "hold/park.h"
#include "http_int.h"

/* The KO messages of a forwarding node's 503s. No leader: nothing was sent to any
 * leader, the request may be sent again. Outcome unknown: the leader got the request
 * and was lost before its answer came back, so a change may or may not be made. */
#define FORWARD_NO_LEADER "No leader: the cluster is electing one, retry !"
#define FORWARD_UNKNOWN   "Outcome unknown: the leader was lost before it answered; " \
                          "the change may or may not have been made !"

/* The header a node puts on a request it sends the leader alone. A node that gets one
 * and does not lead answers FORWARD_NO_LEADER rather than send it on a second time: a
 * chain of nodes, each with its view of who leads, would hold a request longer than its
 * client waits for it, and a BARRIER arrival (or a READ) would reach the leader after
 * its client left. */
#define FORWARD_HEADER "X-STS-Forwarded"

/* A request that reached the leader after stsd.cluster.forwardWithin: not run. */
#define FORWARD_LATE "Too late: the request reached the leader after its time and was not " \
                     "run, retry !"

/* The leader's time, on its clock (ANSWER_CLOCK_HEADER, on its answers to a follower),
 * past which it must not start what a follower sent, on the follower's requests
 * (http_forward.c says how a follower reckons it). Between nodes only: a client's own
 * deadline and clock are dropped on the way, and a follower never relays the clock. */
#define FORWARD_DEADLINE_HEADER "X-STS-Forward-Deadline"

/* Whether a follower's request (or batch) with deadline header value dl (NULL: none)
 * may still start on this leader: 1 yes, 0 too late, -1 malformed. */
int forward_in_time(const char *dl);

/* Room for a leader's URL (cluster_route's, no trailing slash). */
#define FORWARD_URL_MAX 256

typedef struct http_forward http_forward;

/* Starts the forwarding thread (stsd-forward) with conf's connection timeout; what it
 * sends is counted in cl (cluster_count_forward). Returns NULL with a message in err. */
http_forward *forward_start(const config *conf, cluster *cl, buf *err);

/* Stops the thread: every transfer still going is cut (the leader sees its client
 * gone), and a request not answered yet gets the 503 FORWARD_UNKNOWN (once the parked
 * requests have been answered by park_lot_shutdown, none is left). Call once no thread
 * can call forward_send any more (the HTTP loops have stopped). Frees f; NULL: none. */
void forward_stop(http_forward *f);

/* 1 if the request for path (decoded, len bytes) is answered by the node that gets it,
 * whoever leads: every path outside /sts/ (the dashboard and /metrics are routed before
 * this is asked), STOP (it stops this node) and CLUSTER (this node's view of the
 * cluster). 0: the leader's. */
int forward_local(const char *path, size_t len);

/* Makes r a 503 whose body is a KO with msg (JSON when r->json, else the HTML KO page),
 * headed X-STS-Leader: leader and, with retry, Retry-After: 1. r's buffers are reused;
 * out of memory leaves r->text.oom set (the edge then answers its plain 503). */
void forward_unavailable(cmd_result *r, unsigned leader, const char *msg, int retry);

/* Makes r a 307 to url followed by the request's target (origin form, target_len
 * bytes, as the client sent it), headed X-STS-Leader: leader; its body is empty. */
void forward_redirect(cmd_result *r, unsigned leader, const char *url, const char *target,
                      size_t target_len);

/* Sends request q of connection c (its method, its target as the client wrote it, its
 * body, which moves out of q, and the headers the leader's answer depends on) to url,
 * the leader's (id leader), on f's thread, and parks q in lot: q->result.park is then
 * set, and the slot ends with the leader's answer (REPLY_RAW: its status, body and
 * headers) or a 503 (FORWARD_NO_LEADER when the leader could not be reached,
 * FORWARD_UNKNOWN when it was lost after the request went out, or at shutdown). Returns
 * 0, or -1 when nothing could be sent (out of memory, the lot shut): q->result is
 * unchanged, the caller answers it now.
 *
 * batchable (command_batchable: answered at once): a GET or POST goes with the others
 * that wait meanwhile, in one request to the leader (BATCH_PATH, http_batch.h), and
 * comes back with the same answer it would have had alone. */
int forward_send(http_forward *f, park_lot *lot, struct MHD_Connection *c, request *q,
                 const char *method, const char *url, unsigned leader, int batchable);


#endif
