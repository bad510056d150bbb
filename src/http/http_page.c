/* SPDX-License-Identifier: Apache-2.0 */
/* http_page.c - a command request made from its parts, and its answer's page: for a
 * request that came alone (http_route.c) and for each of a batch's (http_batch.c). */
#include "http_page.h"

#include <netinet/in.h>
#include <string.h>
#include <strings.h>

#include "accept.h"
#include "answer.h"
#include "target.h"
#include "base/clock.h"
#include "base/stats.h"
#include "cmd/command.h"
#include "guard/csrf.h"
#include "http/reply.h"
#include "http_forward.h"

cluster_route_kind http_cluster_route(cluster *cl, unsigned *leader, char *url, size_t cap)
{
    *leader = 0;
    cluster_route_kind k = cluster_route(cl, leader, url, cap);
    if (k == CLUSTER_SERVE)
        *leader = cluster_self(cl);
    else if (k == CLUSTER_NO_LEADER)
        *leader = 0;                      /* whatever cluster_route left there */
    return k;
}

void http_request_free_parts(request *q)
{
    buf_free(&q->uri);
    buf_free(&q->body);
    buf_free(&q->path);
    buf_free(&q->page);
    buf_free(&q->hdrs);
    params_free(&q->prm);
    buf_free(&q->result.text);
    buf_free(&q->result.headers);
}

int http_result_page(const http_server *h, request *q, const struct sockaddr *addr,
                     socklen_t alen, unsigned *status, const char **ctype, const buf **extra)
{
    *status = MHD_HTTP_OK;
    /* The answer is final here, whether it waited for a line, an fsync or nothing. */
    if (h->srv->audit)
        command_audit(h->srv, &q->prm, &q->result, addr, alen);
    int rc = q->result.json ? reply_render_json(&q->result, &q->page, status)
                            : reply_render(&q->result, &q->page);
    if (!q->result.json && q->result.kind == REPLY_KO)
        *status = command_html_ko_status(h->conf, &q->result);
    stats_request(q->result.cmd + 1, q->result.kind == REPLY_KO, clock_now_ns() - q->t0);
    *ctype = q->result.json ? REPLY_JSON_CONTENT_TYPE : reply_content_type();
    *extra = q->result.kind == REPLY_KO ? NULL : &q->result.headers;
    return rc;
}

int http_refusal_page(request *q, auth_verdict v, unsigned *status, buf *hdrs)
{
    q->result.kind = REPLY_KO;
    buf_clear(&q->result.text);
    buf_puts(&q->result.text, auth_message(v));
    if (q->result.text.oom || reply_render(&q->result, &q->page) != 0)
        return -1;
    *status = auth_status(v);
    answer_header_str(hdrs, MHD_HTTP_HEADER_CONTENT_TYPE, reply_content_type());
    answer_header_str(hdrs, MHD_HTTP_HEADER_CACHE_CONTROL,
                      "no-cache, no-store, must-revalidate");
    if (v == AUTH_MISSING)
        answer_header_str(hdrs, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"stsd\"");
    else if (v == AUTH_WRONG)
        answer_header_str(hdrs, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                          "Bearer realm=\"stsd\", error=\"invalid_token\"");
    else if (v == AUTH_TOO_MANY)
        answer_header_str(hdrs, MHD_HTTP_HEADER_RETRY_AFTER, "10");
    answer_leader(hdrs, q->leader);
    return hdrs->oom ? -1 : 0;
}

void http_want_header(wanted_headers *w, const char *key, size_t key_len, const char *value)
{
#define TAKE(slot, name)                                                                   \
    if (!w->slot && key_len == sizeof name - 1 && strncasecmp(key, name, key_len) == 0)   \
        w->slot = value;
    TAKE(authorization, MHD_HTTP_HEADER_AUTHORIZATION);
    TAKE(origin, MHD_HTTP_HEADER_ORIGIN);
    TAKE(sec_fetch_site, "Sec-Fetch-Site");
    TAKE(ui_header, CSRF_HEADER);
    TAKE(accept, MHD_HTTP_HEADER_ACCEPT);
    TAKE(content_type, MHD_HTTP_HEADER_CONTENT_TYPE);
    TAKE(forwarded, FORWARD_HEADER);
    TAKE(forward_deadline, FORWARD_DEADLINE_HEADER);
#undef TAKE
}

void http_command_request(cmd_request *cq, const request *q, const char *method,
                          const struct sockaddr *addr, socklen_t alen,
                          const wanted_headers *w)
{
    *cq = (cmd_request){
        .path = q->path.data, .path_len = q->path.len,
        .method = strcmp(method, "GET") == 0    ? CMD_GET
                : strcmp(method, "POST") == 0 ? CMD_POST
                                                : CMD_OTHER,
        .prm = &q->prm, .addr = addr, .addr_len = alen,
        .authorization = w->authorization,
        .origin = w->origin,
        .sec_fetch_site = w->sec_fetch_site,
        .ui_header = w->ui_header,
    };
    cq->accept_json = accept_prefers_json(w->accept);
}

int http_decode_target(request *q)
{
    size_t off;
    int empty_path;
    if (target_origin(q->uri.data, q->uri.len, &off, &empty_path) != 0)
        return -1;
    /* From here on an absolute-form target is its origin form: the authority routes
     * nothing, and the access rules see the same path and parameters. */
    const char *raw = q->uri.data + off;
    size_t raw_len = q->uri.len - off;
    q->target = off;
    const char *qm = memchr(raw, '?', raw_len);
    params_reset(&q->prm);
    buf_clear(&q->path);
    if (!empty_path)
        return params_decode(raw, qm ? (size_t)(qm - raw) : raw_len, &q->path);
    /* "http://h:1" means "/" (RFC 9110) */
    return buf_puts(&q->path, "/") == 0 ? PARAMS_OK : PARAMS_NOMEM;
}

params_rc http_decode_params(request *q, const char *ctype)
{
    const char *raw = q->uri.data + q->target;
    size_t raw_len = q->uri.len - q->target;
    const char *qm = memchr(raw, '?', raw_len);
    params_rc prc = PARAMS_OK;
    if (qm)
        prc = params_parse_urlencoded(&q->prm, qm + 1, raw_len - (size_t)(qm - raw) - 1);
    if (prc == PARAMS_OK && q->body.len)
        prc = params_parse_body(&q->prm, ctype, q->body.data, q->body.len);
    return prc;
}

const char *http_decode_error(int rc, unsigned *status)
{
    *status = rc == PARAMS_NOMEM ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_REQUEST;
    return rc < 0                    ? "400 malformed absolute-form request target\n"
         : rc == PARAMS_BAD_ESCAPE ? "400 bad percent escape in the request\n"
         : rc == PARAMS_BAD_BODY   ? "400 malformed request body\n"
                                   : "503 out of memory\n";
}
