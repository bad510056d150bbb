/* SPDX-License-Identifier: Apache-2.0 */
/* http_int.h - the types http.c (connections, the daemons) and http_route.c (what a
 * request gets) share: a connection's request state and the server. Types only. */
#ifndef STSD_HTTP_INT_H
#define STSD_HTTP_INT_H

#include <stdatomic.h>
#include <stdint.h>

#include "cmd/params.h"
#include "hold/park.h"
#include "cmd/result.h"
#include "guard/iplimit.h"
#include "http/http.h"
#include "http/http_loop.h"

/* One per connection, from its start to its close (MHD pairs those two notifications
 * even when a request fails to parse); it holds the connection's current request. */
typedef struct request {
    struct request *next_free;
    buf uri;          /* the raw request target, query string included */
    size_t target;    /* where its origin form starts in uri (http_route) */
    buf body;         /* a POST body, up to maxBodySize */
    buf path;         /* decoded path */
    buf page;         /* the answer's bytes; MHD sends them from here (or from sent) */
    buf hdrs;         /* the answer's headers while it is queued (answer.h), kept for the
                       * connection's next answer */
    params prm;
    cmd_result result;
    park_slot *slot;  /* the request is parked (suspended) on this slot */
    int in_place;     /* waits in place (http_loop.h) for wait_lsn to be durable, or for
                       * every change of batch */
    struct http_batch *batch; /* a follower's requests run here (http_batch.h), NULL: none */
    uint64_t wait_lsn;
    int ip_counted;   /* its connection is counted in the server's iplimit */
    int started;      /* the access handler has seen this request */
    int counted;      /* its body is in: counted in in_flight, which a stop waits for */
    int body_too_big;
    uint64_t t0;      /* when the command started, for stsd_request_duration_seconds */
    int leader;       /* a cluster node's X-STS-Leader on the answers made here: the
                       * leader's id, 0 when none is known; -1: no such header (stsd
                       * alone, the dashboard, /metrics) */
    /* The last command answer with only our fixed headers, kept for the connection's
     * next one of the same length and content type (http_route.c, send_reused): its
     * bytes are copied into sent, which the response sends from, so that a keep-alive
     * READ costs no response, header or allocation. NULL: none kept. */
    struct MHD_Response *resp;
    const char *resp_ctype;
    buf sent;
} request;

/* The request headers a command reads, taken in one pass over them (every lookup walks
 * the whole list); the first of each name wins, as MHD_lookup_connection_value's. */
typedef struct wanted_headers {
    const char *authorization, *origin, *sec_fetch_site, *ui_header, *accept, *content_type;
    const char *forwarded;    /* FORWARD_HEADER: a node sent it (http_forward.h) */
    const char *forward_deadline;  /* FORWARD_DEADLINE_HEADER, with it */
} wanted_headers;

struct http_server {
    http_loops *loops;
    int listen_fd;
    const cmd_server *srv;
    struct http_forward *fwd; /* a cluster node's requests for the leader (NULL: alone) */
    struct http_view *view;   /* a follower's reads (NULL: alone, or
                               * stsd.cluster.followerReads=false) */
    const config *conf;
    unsigned threads;         /* stsd.threads, 0 resolved to the cores */
    http_access acc;
    iplimit *per_ip;          /* stsd.maxConnectionsPerIp, NULL for none */
    void (*on_stop)(void);
    atomic_int in_flight;
    atomic_int stopping;      /* http_stop has begun: no new request runs */
};

#endif
