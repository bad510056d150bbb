/* SPDX-License-Identifier: Apache-2.0 */
/* http_route.c - what a request gets: the route table, and the answers' bytes and headers
 * (pages, refusals, the dashboard's files); parking and holding for the commands. */
#include "http_route.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "accept.h"
#include "answer.h"
#include "batch_frame.h"
#include "http_batch.h"
#include "http_page.h"
#include "http_forward.h"
#include "http_view.h"
#include "target.h"
#include "base/clock.h"
#include "base/stats.h"
#include "cluster/cluster.h"
#include "cmd/command.h"
#include "hold/commit.h"
#include "guard/csrf.h"
#include "http/metrics.h"
#include "http/reply.h"
#include "http/ui.h"

/* Queues page with our headers, and the command's own when extra is not NULL (a
 * result's headers: "Name\0value\0" each), and X-STS-Leader when leader >= 0; the
 * headers are made in q->hdrs, which the connection keeps for its next answer. */
static enum MHD_Result send_page_with(struct MHD_Connection *c, request *q, unsigned status,
                                      const char *page, size_t len, const char *ctype,
                                      const buf *extra, int leader)
{
    buf_clear(&q->hdrs);
    answer_page_headers(&q->hdrs, ctype, extra, leader);
    return answer_queue(c, status, &q->hdrs, page, len);
}

/* Queues q's page with our headers and no other, as send_page_with does, through the
 * response kept in q when it has the same length and content type. MHD answers a
 * connection's requests one after another and lets go of a response once it is sent, so
 * when the next request runs no one reads q->sent any more: its bytes can change under
 * the same response (created PERSISTENT over them: MHD sends from them, never copies). */
static enum MHD_Result send_reused(struct MHD_Connection *c, request *q, unsigned status,
                                   const char *ctype)
{
    if (!q->resp || q->resp_ctype != ctype || q->sent.len != q->page.len) {
        if (q->resp)
            MHD_destroy_response(q->resp);
        q->resp = NULL;
        buf_clear(&q->sent);
        if (buf_append(&q->sent, q->page.data, q->page.len) != 0)
            return send_page_with(c, q, status, q->page.data, q->page.len, ctype, NULL, -1);
        struct MHD_Response *r = MHD_create_response_from_buffer(
            q->sent.len, q->sent.data, MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) != MHD_YES ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                                    "no-cache, no-store, must-revalidate") != MHD_YES ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_PRAGMA, "no-cache") != MHD_YES ||
            MHD_add_response_header(r, MHD_HTTP_HEADER_EXPIRES, "0") != MHD_YES) {
            MHD_destroy_response(r);
            return MHD_NO;
        }
        q->resp = r;
        q->resp_ctype = ctype;
    } else {
        memcpy(q->sent.data, q->page.data, q->page.len);
    }
    return MHD_queue_response(c, status, q->resp);
}

enum MHD_Result http_send_stopping(struct MHD_Connection *c)
{
    static const char text[] = BATCH_STOPPING_TEXT;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof text - 1, (void *)text, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=UTF-8");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
    MHD_destroy_response(r);
    return ret;
}

/* The resume callback of a suspended connection (park_arm's: the connection and the
 * loop it runs on, never its request, which its thread may free once it has taken the
 * answer). Its loop is woken as well: libmicrohttpd's own wake-up may be consumed by a
 * turn already past the point where it resumes connections, and its timeout does not
 * tell that one is pending. */
static void resume_connection(void *conn, void *loop)
{
    MHD_resume_connection(conn);
    http_loop_wake(loop);
}

/* An answer made whole elsewhere (REPLY_RAW: a cluster node's, http_forward.c): its
 * status, its body and exactly its headers. */
static enum MHD_Result send_raw(struct MHD_Connection *c, request *q)
{
    cmd_result *res = &q->result;
    stats_request(res->cmd + 1, res->status >= 400, clock_now_ns() - q->t0);
    if (res->text.oom)
        return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    /* The body goes from q->page, which stays as it is until the answer is sent. */
    buf body = res->text;
    res->text = q->page;
    q->page = body;
    return answer_queue(c, res->status, &res->headers, q->page.data, q->page.len);
}

static const struct sockaddr *peer(struct MHD_Connection *c, socklen_t *len);

/* The page of q's result (JSON if it asked for it), audited and counted. */
enum MHD_Result http_send_result(const http_server *h, struct MHD_Connection *c, request *q)
{
    /* A forwarding node's answer (relayed, 503, 307): no command ran here to audit. */
    if (q->result.kind == REPLY_RAW)
        return send_raw(c, q);
    socklen_t alen = 0;
    const struct sockaddr *addr = h->srv->audit ? peer(c, &alen) : NULL;
    unsigned status;
    const char *ctype;
    const buf *extra;
    if (http_result_page(h, q, addr, alen, &status, &ctype, &extra) != 0)
        return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    if (q->leader < 0 && (!extra || extra->len == 0))
        return send_reused(c, q, status, ctype);
    return send_page_with(c, q, status, q->page.data, q->page.len, ctype, extra, q->leader);
}

/* Suspends c until q's slot ends (park.h); the slot may end before or during this. */
static enum MHD_Result park_connection(struct MHD_Connection *c, request *q)
{
    q->slot = q->result.park;
    q->result.park = NULL;
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    MHD_suspend_connection(c);
    park_arm(q->slot, i ? i->connect_fd : -1, resume_connection, c, http_loop_current());
    return MHD_YES;
}

/* The resumed call of a parked request: its answer is in the slot. */
enum MHD_Result http_send_parked(const http_server *h, struct MHD_Connection *c, request *q)
{
    cmd_result *ended = park_take(q->slot);
    cmd_result mine = q->result;
    q->result = *ended;
    *ended = mine;
    /* How to answer is the request's, whatever the ender left. */
    q->result.json = mine.json;
    q->result.cmd = mine.cmd;
    q->result.field = mine.field;
    memcpy(q->result.who, mine.who, sizeof q->result.who);
    park_unref(q->slot);
    q->slot = NULL;
    if (q->result.kind == REPLY_VIEW)     /* a follower's read, its round done */
        view_run(h->view, q);
    return http_send_result(h, c, q);
}

/* A refusal by the access rules: its status, a KO page saying why, and for a 401 the
 * challenge RFC 6750 asks for. */
static enum MHD_Result send_refusal(struct MHD_Connection *c, request *q, auth_verdict v)
{
    unsigned status;
    buf_clear(&q->hdrs);
    if (http_refusal_page(q, v, &status, &q->hdrs) != 0)
        return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    return answer_queue(c, status, &q->hdrs, q->page.data, q->page.len);
}

/* The dashboard's answer for path: its files, the redirect from /, their headers. */
static enum MHD_Result send_ui(struct MHD_Connection *c, const char *method, const buf *path)
{
    ui_reply u;
    ui_route(method, path->data, path->len,
             MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING),
             MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
             &u);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(u.len, (void *)u.body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    for (int i = 0; i < u.nheaders; i++)
        MHD_add_response_header(r, u.headers[i][0], u.headers[i][1]);
    enum MHD_Result ret = MHD_queue_response(c, u.status, r);
    MHD_destroy_response(r);
    return ret;
}

/* The client's address and its length, for the access rules (NULL, 0 if unknown). */
static const struct sockaddr *peer(struct MHD_Connection *c, socklen_t *len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *a = ci ? ci->client_addr : NULL;
    *len = !a ? 0 : a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                            : sizeof(struct sockaddr_in);
    return a;
}

static const char *header(struct MHD_Connection *c, const char *name)
{
    return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

static enum MHD_Result route_ui(http_server *h, struct MHD_Connection *c, request *q,
                                const char *method)
{
    return send_ui(c, method, &q->path);
}

/* GET /metrics: the Prometheus text, behind the same tokens as the commands. */
static enum MHD_Result route_metrics(http_server *h, struct MHD_Connection *c, request *q,
                                     const char *method)
{
    if (auth_active(h->acc.auth)) {
        size_t tlen = 0;
        const char *tok = params_get(&q->prm, PARAM_TOKEN, &tlen);
        socklen_t alen;
        const struct sockaddr *addr = peer(c, &alen);
        auth_verdict v = auth_check(h->acc.auth, addr, alen, NULL, 0,
                                    header(c, MHD_HTTP_HEADER_AUTHORIZATION), tok, tlen);
        if (v != AUTH_OK)
            return send_refusal(c, q, v);
    }
    if (metrics_render(h->srv, &q->page) != 0)
        return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    return send_page_with(c, q, MHD_HTTP_OK, q->page.data, q->page.len, METRICS_CONTENT_TYPE,
                          NULL, -1);
}

/* Sends the answer command_run (or command_admit, or command_exec) left in q->result:
 * a refusal, or parked, or held for its fsync, or now. */
static enum MHD_Result answer_command(http_server *h, struct MHD_Connection *c, request *q)
{
    if (q->result.refused == REFUSED_AUTH)
        return send_refusal(c, q, (auth_verdict)q->result.verdict);
    if (q->result.refused == REFUSED_CSRF)
        return send_page_with(c, q, CSRF_STATUS, CSRF_BODY, strlen(CSRF_BODY),
                              "application/json; charset=utf-8", NULL, q->leader);
    if (q->result.park)
        return park_connection(c, q);     /* waits for a line or a deadline: seconds */
    if (commit_begin(h->srv->j, &q->result, &q->wait_lsn, !command_is_local(q->result.cmd))) {
        /* Waits for an fsync, a millisecond: in place, not suspended (http_loop.h). */
        q->in_place = 1;
        http_loop_hold(http_loop_current());
        return MHD_YES;
    }
    return http_send_result(h, c, q);
}

/* A cluster node's command: the access checks here, then run here (this node leads, or
 * the command is this node's own: forward_local), or sent to the leader and parked
 * until its answer comes back, or redirected to it, or refused while none is known. */
static enum MHD_Result route_clustered(http_server *h, struct MHD_Connection *c, request *q,
                                       const cmd_request *cq, const char *method,
                                       const wanted_headers *w)
{
    cluster *cl = h->srv->cluster;
    char url[FORWARD_URL_MAX];
    unsigned leader;
    cluster_route_kind k = http_cluster_route(cl, &leader, url, sizeof url);
    q->leader = (int)leader;
    if (command_admit(h->srv, cq, &q->result))
        return answer_command(h, c, q);
    if (k == CLUSTER_SERVE && w->forwarded) {
        /* A follower's request alone: run only in its time (http_forward.c), and the
         * answer samples this node's clock for the follower's next deadlines. */
        int in_time = forward_in_time(w->forward_deadline);
        if (in_time <= 0) {
            if (in_time == 0)
                cluster_count_late(cl, 1);
            forward_unavailable(&q->result, leader,
                                in_time ? "Malformed deadline !" : FORWARD_LATE, in_time == 0);
            if (in_time < 0)
                q->result.status = MHD_HTTP_BAD_REQUEST;
            answer_clock(&q->result.headers);     /* the follower's next sample */
            return http_send_result(h, c, q);
        }
        command_exec(h->srv, cq, &q->result);
        if (!q->result.park)
            answer_clock(&q->result.headers);
        return answer_command(h, c, q);
    }
    if (k == CLUSTER_SERVE || forward_local(q->path.data, q->path.len)) {
        command_exec(h->srv, cq, &q->result);
        return answer_command(h, c, q);
    }
    /* A read this node can answer itself, as fresh as the leader would (http_view.h). */
    if (k == CLUSTER_FORWARD && h->view &&
        command_viewable(q->result.cmd, &q->prm, q->result.json) &&
        view_send(h->view, h->srv->lot, c, q, leader) == 0)
        return park_connection(c, q);     /* until the round ends: a round trip */
    const char *target = q->uri.data + q->target;
    size_t target_len = q->uri.len - q->target;
    if (k == CLUSTER_NO_LEADER)
        forward_unavailable(&q->result, 0, FORWARD_NO_LEADER, 1);
    else if (w->forwarded)                /* sent by a node that took this one for the leader */
        forward_unavailable(&q->result, leader, FORWARD_NO_LEADER, 1);
    else if (cluster_redirects(cl))
        forward_redirect(&q->result, leader, url, target, target_len);
    else if (forward_send(h->fwd, h->srv->lot, c, q, method, url, leader,
                          command_batchable(q->result.cmd, &q->prm)) == 0)
        return park_connection(c, q);     /* until the leader answers: seconds, maybe */
    else                                  /* nothing went out: out of memory, stopping */
        forward_unavailable(&q->result, leader, FORWARD_NO_LEADER, 1);
    return http_send_result(h, c, q);
}

static enum MHD_Result on_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_len, const char *value, size_t value_len)
{
    http_want_header(cls, key, key_len, value);
    return MHD_YES;
}

/* Everything else: a command under /sts/ (or the help page, or "unknown command"). */
static enum MHD_Result route_command(http_server *h, struct MHD_Connection *c, request *q,
                                     const char *method)
{
    socklen_t alen;
    const struct sockaddr *addr = peer(c, &alen);
    wanted_headers w = {0};
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, on_header, &w);
    cmd_request cq;
    http_command_request(&cq, q, method, addr, alen, &w);
    q->t0 = clock_now_ns();
    if (h->srv->cluster)
        return route_clustered(h, c, q, &cq, method, &w);
    command_run(h->srv, &cq, &q->result);
    return answer_command(h, c, q);
}

/* POST /_stsd/batch on a cluster node: a follower's requests, run here one by one
 * (http_batch.c). Elsewhere, the path is a command's like any other. */
static enum MHD_Result route_batch(http_server *h, struct MHD_Connection *c, request *q,
                                   const char *method)
{
    if (!h->srv->cluster)
        return route_command(h, c, q, method);
    socklen_t alen;
    const struct sockaddr *addr = peer(c, &alen);
    return batch_route(h, c, q, method, addr, alen);
}

/* GET /_stsd/clock on a cluster node: its clock, for a follower's deadlines
 * (http_forward.c); nothing else is said or done. Elsewhere, a command's path. */
static enum MHD_Result route_clock(http_server *h, struct MHD_Connection *c, request *q,
                                   const char *method)
{
    if (!h->srv->cluster || strcmp(method, "GET") != 0)
        return route_command(h, c, q, method);
    return answer_clocked(c, MHD_HTTP_OK, "");
}

static int is_clock(const char *path, size_t len, const char *method)
{
    return len == sizeof CLOCK_PATH - 1 && memcmp(path, CLOCK_PATH, len) == 0;
}

static int is_batch(const char *path, size_t len, const char *method)
{
    return len == sizeof BATCH_PATH - 1 && memcmp(path, BATCH_PATH, len) == 0;
}

static int is_metrics(const char *path, size_t len, const char *method)
{
    return len == 8 && memcmp(path, "/metrics", 8) == 0 && strcmp(method, "GET") == 0;
}

static int is_ui(const char *path, size_t len, const char *method)
{
    return ui_owns(path, len);
}

typedef enum MHD_Result (*route_fn)(http_server *h, struct MHD_Connection *c, request *q,
                                    const char *method);

/* The routes, first match wins; the last owns every path. raw: answered from the path
 * alone, before the query and body are parsed. */
static const struct route {
    int (*owns)(const char *path, size_t len, const char *method);
    route_fn run;
    int raw;
} routes[] = {
    {is_ui,      route_ui,      1},
    {is_metrics, route_metrics, 0},
    {is_batch,   route_batch,   1},     /* its body is a batch, not parameters */
    {is_clock,   route_clock,   1},
    {NULL,       route_command, 0},
};

enum MHD_Result http_route(http_server *h, struct MHD_Connection *c, request *q,
                           const char *method)
{
    q->leader = -1;
    int rc = http_decode_target(q);
    const struct route *r = routes;
    while (rc == PARAMS_OK && r->owns && !r->owns(q->path.data, q->path.len, method))
        r++;
    if (rc == PARAMS_OK && r->raw)
        return r->run(h, c, q, method);
    if (rc == PARAMS_OK)
        rc = http_decode_params(q, header(c, MHD_HTTP_HEADER_CONTENT_TYPE));
    unsigned status;
    if (rc != PARAMS_OK) {
        const char *text = http_decode_error(rc, &status);
        return answer_text(c, status, text);
    }
    return r->run(h, c, q, method);
}
