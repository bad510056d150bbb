/* SPDX-License-Identifier: Apache-2.0 */
/* http_batch.c - a follower's batch on the leader: each request decoded, checked and run
 * as http_route would run it alone, the batch held until its changes are committed, and
 * every answer written into one, with the bytes it would have had alone. */
#include "http_batch.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "answer.h"
#include "batch_frame.h"
#include "http_forward.h"
#include "http/http_loop.h"
#include "http_page.h"
#include "base/clock.h"
#include "cluster/cluster.h"
#include "cmd/command.h"
#include "guard/csrf.h"
#include "hold/commit.h"

typedef struct batch_item {
    request q;            /* the request as if it had come alone: uri, body, prm, result */
    uint64_t lsn;         /* its change, not committed yet: 0 when none */
    int made;             /* its answer is made already: status, headers and q.page */
    unsigned status;
    buf headers;
} batch_item;

struct http_batch {
    size_t n;
    struct sockaddr_storage addr;     /* the follower's: the audit log's client */
    socklen_t alen;
    batch_item items[];
};

void batch_free(http_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        http_request_free_parts(&b->items[i].q);
        buf_free(&b->items[i].headers);
    }
    free(b);
}

/* it's answer, made now: status, a plain-text page of ours (http_send_error's). */
static void made_text(batch_item *it, unsigned status, const char *text)
{
    it->made = 1;
    it->status = status;
    buf_clear(&it->headers);
    buf_clear(&it->q.page);
    buf_puts(&it->q.page, text);
    answer_page_headers(&it->headers, "text/plain; charset=UTF-8", NULL, -1);
}

/* What answer_command does with a command's result, but never parked: a refusal, or
 * held for its commit, or final now. */
static void item_answer(const http_server *h, batch_item *it)
{
    request *s = &it->q;
    if (s->result.refused == REFUSED_AUTH) {
        it->made = 1;
        if (http_refusal_page(s, (auth_verdict)s->result.verdict, &it->status,
                              &it->headers) != 0)
            made_text(it, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
        return;
    }
    if (s->result.refused == REFUSED_CSRF) {
        it->made = 1;
        it->status = CSRF_STATUS;
        buf_clear(&s->page);
        buf_puts(&s->page, CSRF_BODY);
        answer_page_headers(&it->headers, "application/json; charset=utf-8", NULL, s->leader);
        return;
    }
    uint64_t lsn;
    if (commit_begin(h->srv->j, &s->result, &lsn, !command_is_local(s->result.cmd)))
        it->lsn = lsn;
}

/* Runs request f as route_clustered would on the leader. */
static void item_run(const http_server *h, http_batch *b, batch_item *it, const frame_item *f)
{
    request *s = &it->q;
    wanted_headers w = {0};
    const char *name, *value;
    for (size_t off = 0; answer_next_header(f->headers, f->headers_len, &off, &name, &value);)
        http_want_header(&w, name, strlen(name), value);
    s->leader = -1;
    if (buf_append(&s->uri, f->target, f->target_len) != 0 ||
        buf_append(&s->body, f->body, f->body_len) != 0)
        return made_text(it, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    int rc = http_decode_target(s);
    if (rc == PARAMS_OK)
        rc = http_decode_params(s, w.content_type);
    if (rc != PARAMS_OK) {
        unsigned status;
        const char *text = http_decode_error(rc, &status);
        return made_text(it, status, text);
    }
    cmd_request cq;
    http_command_request(&cq, s, f->method, (const struct sockaddr *)&b->addr, b->alen, &w);
    s->t0 = clock_now_ns();
    char url[FORWARD_URL_MAX];
    unsigned leader;
    cluster_route_kind k = http_cluster_route(h->srv->cluster, &leader, url, sizeof url);
    s->leader = (int)leader;
    if (command_admit(h->srv, &cq, &s->result))
        return item_answer(h, it);
    if (k != CLUSTER_SERVE) {
        /* This node no longer leads: nothing runs, the follower's client tries again
         * (this node does not pass the request on a second time). */
        forward_unavailable(&s->result, leader, FORWARD_NO_LEADER, 1);
        return;
    }
    if (!command_batchable(s->result.cmd, &s->prm))
        return made_text(it, MHD_HTTP_BAD_REQUEST, "400 not a request for a batch\n");
    command_exec(h->srv, &cq, &s->result);
    item_answer(h, it);
}

enum MHD_Result batch_route(http_server *h, struct MHD_Connection *c, request *q,
                            const char *method, const struct sockaddr *addr, socklen_t alen)
{
    if (strcmp(method, "POST") != 0)
        return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "405 a batch is a POST\n");
    /* A page in a browser may post any bytes here, but not with this Content-Type unless
     * this node allowed it in a CORS preflight, which it never does: together with the
     * CSRF check of the batch's own headers, no foreign page gets a request run with the
     * headers it wrote into the batch. */
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_TYPE);
    if (!ctype || strcasecmp(ctype, BATCH_CONTENT_TYPE) != 0)
        return answer_text(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
                           "415 a batch is " BATCH_CONTENT_TYPE "\n");
    if (csrf_refuses(MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN),
                     MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"),
                     MHD_lookup_connection_value(c, MHD_HEADER_KIND, CSRF_HEADER)))
        return answer_text(c, CSRF_STATUS, "403 a batch from a browser\n");
    /* Late: the follower's clients may have given up on these requests (http_forward.c). */
    int in_time = forward_in_time(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                              FORWARD_DEADLINE_HEADER));
    if (in_time < 0)
        return answer_text(c, MHD_HTTP_BAD_REQUEST, "400 malformed deadline\n");
    if (in_time == 0) {
        /* With this node's clock: a follower whose sample is off (this process started
         * again, on another clock) gets its next deadlines right. */
        cluster_count_late(h->srv->cluster, 1);
        return answer_clocked(c, MHD_HTTP_SERVICE_UNAVAILABLE, BATCH_LATE_TEXT);
    }
    /* Read whole before any request runs: a malformed batch changes nothing. */
    size_t count, off;
    frame_item f[BATCH_MAX];
    int ok = frame_head(q->body.data, q->body.len, &count, &off) == 0;
    for (size_t i = 0; ok && i < count; i++)
        ok = frame_next(q->body.data, q->body.len, &off, 1, &f[i]) == 0;
    if (!ok || off != q->body.len)
        return answer_text(c, MHD_HTTP_BAD_REQUEST, "400 malformed batch\n");
    http_batch *b = calloc(1, sizeof *b + count * sizeof b->items[0]);
    if (!b)
        return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    b->n = count;
    if (addr && alen <= sizeof b->addr) {
        memcpy(&b->addr, addr, alen);
        b->alen = alen;
    }
    int held = 0;
    for (size_t i = 0; i < count; i++) {
        item_run(h, b, &b->items[i], &f[i]);
        held |= b->items[i].lsn != 0;
    }
    q->batch = b;
    if (held) {
        /* As one command's answer waits for its fsync (http_route.c, answer_command). */
        q->in_place = 1;
        http_loop_hold(http_loop_current());
        return MHD_YES;
    }
    return batch_send(h, c, q);
}

int batch_pending(const http_server *h, request *q)
{
    http_batch *b = q->batch;
    for (size_t i = 0; i < b->n; i++) {
        batch_item *it = &b->items[i];
        if (!it->lsn)
            continue;
        if (commit_ready(h->srv->j, &it->q.result, it->lsn))
            return 1;
        it->lsn = 0;
    }
    return 0;
}

/* it's answer, final, into the batch's answer out. */
static void item_put(const http_server *h, http_batch *b, batch_item *it, buf *out)
{
    request *s = &it->q;
    if (!it->made && s->result.kind == REPLY_RAW) {
        frame_put_answer(out, s->result.status, &s->result.headers, s->result.text.data,
                         s->result.text.len);
        return;
    }
    if (!it->made) {
        const char *ctype;
        const buf *extra;
        if (http_result_page(h, s, (const struct sockaddr *)&b->addr, b->alen, &it->status,
                             &ctype, &extra) != 0)
            made_text(it, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
        else
            answer_page_headers(&it->headers, ctype, extra, s->leader);
    }
    frame_put_answer(out, it->status, &it->headers, s->page.data, s->page.len);
}

enum MHD_Result batch_send(const http_server *h, struct MHD_Connection *c, request *q)
{
    http_batch *b = q->batch;
    q->batch = NULL;
    buf_clear(&q->page);
    frame_begin(&q->page, b->n);
    for (size_t i = 0; i < b->n; i++)
        item_put(h, b, &b->items[i], &q->page);
    batch_free(b);
    buf hdrs = BUF_INIT;
    answer_header_str(&hdrs, MHD_HTTP_HEADER_CONTENT_TYPE, BATCH_CONTENT_TYPE);
    answer_header_str(&hdrs, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    answer_clock(&hdrs);
    /* Out of memory once the requests ran: an answer that is no batch, which the follower
     * takes for an outcome unknown (never for "nothing was done"). */
    enum MHD_Result ret =
        q->page.oom || hdrs.oom
            ? answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n")
            : answer_queue(c, MHD_HTTP_OK, &hdrs, q->page.data, q->page.len);
    buf_free(&hdrs);
    return ret;
}
