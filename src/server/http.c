/* http.c - libmicrohttpd glue: raw request -> (path, method, parameters) -> command ->
 * page bytes, one buffer per request reused from a per-thread pool. */
#include "server/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "journal/journal.h"
#include "server/commit.h"
#include "server/csrf.h"
#include "server/http_loop.h"
#include "server/iplimit.h"
#include "server/metrics.h"
#include "server/params.h"
#include "server/park.h"
#include "server/reply.h"
#include "server/stats.h"
#include "server/ui.h"

/* Room MHD gives one connection for its headers and the request line. A GET carries the
 * LINE in its URL, so this bounds a GET's LINE; POST bodies are bounded by maxBodySize. */
#define HTTP_CONNECTION_MEMORY (32 * 1024)
#define HTTP_LISTEN_BACKLOG 4096

/* One per connection, from its start to its close (MHD pairs those two notifications
 * even when a request fails to parse); it holds the connection's current request. */
typedef struct request {
    struct request *next_free;
    buf uri;          /* the raw request target, query string included */
    buf body;         /* a POST body, up to maxBodySize */
    buf path;         /* decoded path */
    buf page;         /* the answer's bytes; MHD sends them from here */
    params prm;
    cmd_result result;
    park_slot *slot;  /* the request is parked (suspended) on this slot */
    int in_place;     /* waits in place (http_loop.h) for wait_lsn to be durable */
    uint64_t wait_lsn;
    struct MHD_Connection *conn;  /* while suspended: to resume it */
    http_loop *loop;  /* while parked: the thread it waits on */
    int ip_counted;   /* its connection is counted in the server's iplimit */
    int started;      /* the access handler has seen this request */
    int counted;      /* its body is in: counted in in_flight, which a stop waits for */
    int body_too_big;
    uint64_t t0;      /* when the command started, for stsd_request_duration_seconds */
} request;

struct http_server {
    http_loops *loops;
    int listen_fd;
    const cmd_server *srv;
    const config *conf;
    unsigned threads;         /* stsd.threads, 0 resolved to the cores */
    http_access acc;
    iplimit *per_ip;          /* stsd.maxConnectionsPerIp, NULL for none */
    void (*on_stop)(void);
    atomic_int in_flight;
    atomic_int stopping;      /* http_stop has begun: no new request runs */
};

/* Connection states are recycled per HTTP thread: a connection lives on one thread, so
 * it is started and closed there, and the pool needs no lock. The thread's key holds the
 * same head as free_requests, so that the key's destructor frees the pool at thread
 * exit: pool_set changes both together, so the key never names a request handed out
 * (or freed) since. */
static __thread request *free_requests;
static pthread_key_t pool_key;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_set(request *head)
{
    free_requests = head;
    pthread_setspecific(pool_key, head);
}

static void request_destroy(request *q)
{
    buf_free(&q->uri);
    buf_free(&q->body);
    buf_free(&q->path);
    buf_free(&q->page);
    params_free(&q->prm);
    buf_free(&q->result.text);
    buf_free(&q->result.lease);
    free(q);
}

static void pool_destroy(void *head)
{
    for (request *q = head; q;) {
        request *next = q->next_free;
        request_destroy(q);
        q = next;
    }
}

static void pool_key_init(void)
{
    pthread_key_create(&pool_key, pool_destroy);
}

static request *request_get(void)
{
    request *q = free_requests;
    if (q) {
        pool_set(q->next_free);
        q->next_free = NULL;
    } else {
        q = calloc(1, sizeof *q);
        if (!q)
            return NULL;
    }
    return q;
}

static void request_put(request *q)
{
    /* Don't let one huge request pin its buffers for the thread's lifetime. */
    if (q->body.cap > 65536 || q->page.cap > 65536 || q->result.text.cap > 65536 ||
        q->prm.store.cap > 65536 || q->uri.cap > 65536) {
        request_destroy(q);
        return;
    }
    q->next_free = free_requests;
    pool_set(q);
}

/* c's client address and its length (NULL, 0 if unknown). */
static const struct sockaddr *client_address(struct MHD_Connection *c, socklen_t *len)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *a = i ? i->client_addr : NULL;
    *len = !a ? 0 : a->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                            : sizeof(struct sockaddr_in);
    return a;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    http_server *h = cls;
    socklen_t len;
    http_loop_busy(http_loop_current());
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        stats_connection(1);
        request *q = request_get();
        *socket_context = q;
        if (q && h->per_ip) {
            const struct sockaddr *a = client_address(c, &len);
            q->ip_counted = iplimit_open(h->per_ip, a, len) == 0;
        }
    } else {
        stats_connection(-1);
        request *q = *socket_context;
        if (q) {
            if (q->ip_counted) {
                const struct sockaddr *a = client_address(c, &len);
                iplimit_close(h->per_ip, a, len);
            }
            q->ip_counted = 0;
            request_put(q);
            *socket_context = NULL;
        }
    }
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    request *q = i ? i->socket_context : NULL;
    if (!q)
        return NULL;
    buf_clear(&q->uri);
    buf_clear(&q->body);
    q->started = 0;
    q->counted = 0;
    q->body_too_big = 0;
    q->result.stop = 0;
    return buf_puts(&q->uri, uri) == 0 ? q : NULL;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    http_server *h = cls;
    request *q = *req_cls;
    if (!q)
        return;
    *req_cls = NULL;
    if (q->slot) {
        /* Closed while parked: only when the server stops with the request still parked. */
        park_abandon(q->slot);
        q->slot = NULL;
    }
    if (q->in_place) {
        /* Closed while its change was being synced: the server stops, the client went
         * away, or the sync outlasted stsd.connectionTimeout. No answer went out. */
        http_loop_release(http_loop_current());
        q->in_place = 0;
    }
    if (!q->counted)
        return;
    q->counted = 0;
    atomic_fetch_sub(&h->in_flight, 1);
    if (q->result.stop && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && h->on_stop)
        h->on_stop();
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

/* 1 if the command is a change from a browser context without the dashboard's header. */
static int csrf_refused(struct MHD_Connection *c, const buf *path)
{
    return csrf_refuses(path->data, path->len,
                        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN),
                        MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site"),
                        MHD_lookup_connection_value(c, MHD_HEADER_KIND, CSRF_HEADER));
}

/* Queues page with our headers; lease, when not NULL, is the X-STS-Lease value. */
static enum MHD_Result send_page_lease(struct MHD_Connection *c, unsigned status,
                                       const char *page, size_t len, const char *ctype,
                                       const char *lease)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)page, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                            "no-cache, no-store, must-revalidate");
    MHD_add_response_header(r, MHD_HTTP_HEADER_PRAGMA, "no-cache");
    MHD_add_response_header(r, MHD_HTTP_HEADER_EXPIRES, "0");
    if (lease)
        MHD_add_response_header(r, "X-STS-Lease", lease);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_page(struct MHD_Connection *c, unsigned status, const char *page,
                                 size_t len, const char *ctype)
{
    return send_page_lease(c, status, page, len, ctype, NULL);
}

static enum MHD_Result send_error(struct MHD_Connection *c, unsigned status, const char *text)
{
    return send_page(c, status, text, strlen(text), "text/plain; charset=UTF-8");
}

/* A request whose body came in after the stop began: not run, so nothing is lost; 503,
 * and the connection closes (otherwise keep-alive clients keep the stop waiting). */
static enum MHD_Result send_stopping(struct MHD_Connection *c)
{
    static const char text[] = "503 stopping\n";
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

/* Accept: application/json asks for JSON answers (FORMAT= may still say otherwise). */
static int wants_json(struct MHD_Connection *c)
{
    const char *a = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    return a && strcasestr(a, "application/json") != NULL;
}

/* The resume callback of a suspended request (park_arm's, with q). Its loop is woken
 * as well: libmicrohttpd's own wake-up may be consumed by a turn already past the point
 * where it resumes connections, and its timeout does not tell that one is pending. */
static void resume_connection(void *arg)
{
    request *q = arg;
    MHD_resume_connection(q->conn);
    http_loop_wake(q->loop);
}

/* Sends the page of q's result (JSON if it asked for it) and counts the request. */
static enum MHD_Result send_result(struct MHD_Connection *c, request *q)
{
    unsigned status = MHD_HTTP_OK;
    int rc = q->result.json ? reply_render_json(&q->result, &q->page, &status)
                            : reply_render(&q->result, &q->page);
    stats_request(q->result.cmd + 1, q->result.kind == REPLY_KO, clock_now_ns() - q->t0);
    if (rc != 0)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    return send_page_lease(c, status, q->page.data, q->page.len,
                           q->result.json ? REPLY_JSON_CONTENT_TYPE : reply_content_type(),
                           q->result.lease.len ? q->result.lease.data : NULL);
}

/* Suspends c until q's slot ends (park.h); the slot may end before or during this. */
static enum MHD_Result park_connection(struct MHD_Connection *c, request *q)
{
    q->slot = q->result.park;
    q->result.park = NULL;
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    q->conn = c;
    q->loop = http_loop_current();
    MHD_suspend_connection(c);
    park_arm(q->slot, i ? i->connect_fd : -1, resume_connection, q);
    return MHD_YES;
}

/* The journal's answer hook: changes became durable, threads with requests waiting in
 * place ask them again. */
static void on_answerable(void *ctx)
{
    http_server *h = ctx;
    http_loops_wake_holding(h->loops);
}

/* The resumed call of a parked request: its answer is in the slot. */
static enum MHD_Result send_parked(struct MHD_Connection *c, request *q)
{
    cmd_result *ended = park_result(q->slot);
    cmd_result mine = q->result;
    q->result = *ended;
    *ended = mine;
    /* How to answer is the request's, whatever the ender left. */
    q->result.json = mine.json;
    q->result.cmd = mine.cmd;
    q->result.field = mine.field;
    park_unref(q->slot);
    q->slot = NULL;
    return send_result(c, q);
}

/* A refusal by the access rules: its status, a KO page saying why, and for a 401 the
 * challenge RFC 6750 asks for. */
static enum MHD_Result send_refusal(struct MHD_Connection *c, request *q, auth_verdict v)
{
    q->result.kind = REPLY_KO;
    buf_clear(&q->result.text);
    buf_puts(&q->result.text, auth_message(v));
    if (q->result.text.oom || reply_render(&q->result, &q->page) != 0)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    struct MHD_Response *r = MHD_create_response_from_buffer(q->page.len, q->page.data,
                                                             MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, reply_content_type());
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
                            "no-cache, no-store, must-revalidate");
    if (v == AUTH_MISSING)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"stsd\"");
    else if (v == AUTH_WRONG)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"stsd\", error=\"invalid_token\"");
    else if (v == AUTH_TOO_MANY)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "10");
    enum MHD_Result ret = MHD_queue_response(c, auth_status(v), r);
    MHD_destroy_response(r);
    return ret;
}

/* Runs the access rules for q; MHD_YES with *denied set when an answer was queued. */
static enum MHD_Result check_access(http_server *h, struct MHD_Connection *c, request *q,
                                    int *denied)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    size_t tlen = 0;
    const char *tok = params_get(&q->prm, PARAM_TOKEN, &tlen);
    auth_verdict v = auth_check(h->acc.auth, ci ? ci->client_addr : NULL, q->path.data,
                                q->path.len,
                                MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                            MHD_HTTP_HEADER_AUTHORIZATION),
                                tok, tlen);
    *denied = v != AUTH_OK;
    return *denied ? send_refusal(c, q, v) : MHD_YES;
}

/* stsd.allow and stsd.maxConnectionsPerIp: a client outside every range, or with as
 * many connections open as it may have, is closed before a byte is read. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    http_server *h = cls;
    if (h->acc.allow && !allow_match(h->acc.allow, addr, len))
        return MHD_NO;
    return !h->per_ip || iplimit_admits(h->per_ip, addr, len) ? MHD_YES : MHD_NO;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
    http_server *h = cls;
    request *q = *req_cls;
    if (!q)
        return MHD_NO;                       /* out of memory at on_uri: drop it */
    if (q->in_place) {
        /* Asked again at each turn of this thread (http_loop.h) until durable. */
        if (commit_ready(h->srv, &q->result, q->wait_lsn))
            return MHD_YES;
        q->in_place = 0;
        http_loop_release(http_loop_current());
        http_loop_busy(http_loop_current());
        return send_result(c, q);
    }
    http_loop_busy(http_loop_current());
    if (q->slot)
        return send_parked(c, q);
    if (!q->started) {
        /* Queuing on the first call makes MHD 0.9.75 close keep-alive connections:
         * always answer on a later call. */
        q->started = 1;
        return MHD_YES;
    }
    if (*upload_data_size) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (q->body_too_big || q->body.len + n > h->conf->max_body) {
            q->body_too_big = 1;
            return MHD_YES;
        }
        if (buf_append(&q->body, upload_data, n) != 0)
            return MHD_NO;
        return MHD_YES;
    }
    /* Counted once its body is in: a stop waits for requests that run, not for uploads
     * still arriving (cut, they were never answered). */
    if (!q->counted) {
        if (atomic_load(&h->stopping))
            return send_stopping(c);
        q->counted = 1;
        atomic_fetch_add(&h->in_flight, 1);
    }
    if (q->body_too_big)
        return send_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "413 request body too large\n");

    const char *raw = q->uri.data;
    const char *qm = memchr(raw, '?', q->uri.len);
    size_t path_len = qm ? (size_t)(qm - raw) : q->uri.len;
    params_reset(&q->prm);
    buf_clear(&q->path);
    params_rc prc = params_decode(raw, path_len, &q->path);
    if (prc == PARAMS_OK && ui_owns(q->path.data, q->path.len))
        return send_ui(c, method, &q->path);
    if (prc == PARAMS_OK && qm)
        prc = params_parse_urlencoded(&q->prm, qm + 1, q->uri.len - path_len - 1);
    cmd_method m = strcmp(method, "GET") == 0    ? CMD_GET
                 : strcmp(method, "POST") == 0 ? CMD_POST
                                                 : CMD_OTHER;
    if (prc == PARAMS_OK && q->body.len)
        prc = params_parse_body(&q->prm,
                                MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                            MHD_HTTP_HEADER_CONTENT_TYPE),
                                q->body.data, q->body.len);
    if (prc == PARAMS_BAD_ESCAPE)
        return send_error(c, MHD_HTTP_BAD_REQUEST, "400 bad percent escape in the request\n");
    if (prc == PARAMS_BAD_BODY)
        return send_error(c, MHD_HTTP_BAD_REQUEST, "400 malformed request body\n");
    if (prc != PARAMS_OK)
        return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
    if (auth_active(h->acc.auth)) {
        int denied;
        enum MHD_Result ar = check_access(h, c, q, &denied);
        if (denied)
            return ar;
    }
    if (csrf_refused(c, &q->path))
        return send_page(c, CSRF_STATUS, CSRF_BODY, strlen(CSRF_BODY),
                         "application/json; charset=utf-8");

    if (q->path.len == 8 && memcmp(q->path.data, "/metrics", 8) == 0 && m == CMD_GET) {
        if (metrics_render(h->srv, &q->page) != 0)
            return send_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "503 out of memory\n");
        return send_page(c, MHD_HTTP_OK, q->page.data, q->page.len, METRICS_CONTENT_TYPE);
    }
    q->t0 = clock_now_ns();
    q->result.json = wants_json(c);
    command_run(h->srv, q->path.data, q->path.len, m, &q->prm, &q->result);
    if (q->result.park)
        return park_connection(c, q);     /* waits for a line or a deadline: seconds */
    if (commit_begin(h->srv, &q->result, &q->wait_lsn)) {
        /* Waits for an fsync, a millisecond: in place, not suspended (http_loop.h). */
        q->in_place = 1;
        http_loop_hold(http_loop_current());
        return MHD_YES;
    }
    return send_result(c, q);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    log_msg(LOG_WARN, "http: %s", msg);
}

int http_listen(const char *bind_addr, int port, int *bound, buf *err)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bind_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sslen = sizeof *a4;
    } else if (inet_pton(AF_INET6, bind_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sslen = sizeof *a6;
    } else {
        buf_printf(err, "stsd.bind: \"%s\" is not an IPv4 or IPv6 address", bind_addr);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&ss, sslen) != 0 || listen(fd, HTTP_LISTEN_BACKLOG) != 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
        buf_printf(err, "cannot listen on %s port %d: %s", bind_addr, port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *bound = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    return fd;
}

/* The daemons' options; the logger first, or MHD logs the ones before it. Each daemon
 * takes its share of stsd.maxConnections; the per-address limit is the server's
 * (on_accept), counted across all of them. */
#define HTTP_OPTIONS(h, limit)                                                           \
    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, (h),                                         \
    MHD_OPTION_LISTEN_SOCKET, (MHD_socket)(h)->listen_fd,                                \
    MHD_OPTION_CONNECTION_LIMIT, (unsigned)(limit),                                      \
    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(h)->conf->connection_timeout,              \
    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONNECTION_MEMORY,                  \
    MHD_OPTION_NOTIFY_CONNECTION, on_connection, (h),                                    \
    MHD_OPTION_URI_LOG_CALLBACK, on_uri, (h),                                            \
    MHD_OPTION_NOTIFY_COMPLETED, on_completed, (h)

/* Starts daemon i (http_loop.h): no thread of its own, epoll, suspend/resume allowed so
 * that a request waiting for a line (a long-poll READ) holds no thread. */
static struct MHD_Daemon *start_daemon(void *ctx, unsigned i)
{
    http_server *h = ctx;
    unsigned n = h->threads;
    unsigned share = (unsigned)h->conf->max_connections / n +
                     (i < (unsigned)h->conf->max_connections % n);
    if (share == 0)
        share = 1;                /* fewer connections allowed than threads */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    MHD_AcceptPolicyCallback apc = h->acc.allow || h->per_ip ? on_accept : NULL;
    if (h->acc.tls)
        return MHD_start_daemon(flags | MHD_USE_TLS, 0, apc, h, on_request, h,
                                HTTP_OPTIONS(h, share),
                                MHD_OPTION_HTTPS_CERT_CALLBACK, tls_cert_callback(),
                                MHD_OPTION_HTTPS_PRIORITIES, tls_priorities(h->acc.tls),
                                MHD_OPTION_END);
    return MHD_start_daemon(flags, 0, apc, h, on_request, h, HTTP_OPTIONS(h, share),
                            MHD_OPTION_END);
}

http_server *http_start(const config *conf, const cmd_server *srv, const http_access *acc,
                        int fd, void (*on_stop)(void), buf *err)
{
    pthread_once(&pool_once, pool_key_init);
    http_server *h = calloc(1, sizeof *h);
    if (!h) {
        buf_puts(err, "out of memory");
        close(fd);
        return NULL;
    }
    h->listen_fd = fd;
    h->srv = srv;
    h->on_stop = on_stop;
    if (acc)
        h->acc = *acc;
    atomic_init(&h->in_flight, 0);
    atomic_init(&h->stopping, 0);
    h->conf = conf;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->threads = conf->threads > 0 ? (unsigned)conf->threads
                                   : (unsigned)(cores > 0 ? cores : 1);
    /* A TLS handshake is several small writes: without TCP_NODELAY (which accepted sockets
     * inherit from the listening one) Nagle holds the last ones until the client's delayed
     * ACK, some 40 ms per handshake. MHD corks plain HTTP answers itself. */
    int one = 1;
    if (h->acc.tls && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
        log_warn("https: cannot set TCP_NODELAY: %s", strerror(errno));
    if (conf->max_connections_per_ip > 0 &&
        !(h->per_ip = iplimit_new((unsigned)conf->max_connections_per_ip))) {
        buf_puts(err, "out of memory");
        close(fd);
        free(h);
        return NULL;
    }
    if (!(h->loops = http_loops_start(h->threads, start_daemon, h, err))) {
        iplimit_free(h->per_ip);
        close(fd);
        free(h);
        return NULL;
    }
    if (srv->j)
        journal_set_answer_hook(srv->j, on_answerable, h);
    return h;
}

void http_stop(http_server *h, int timeout_ms)
{
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    http_loops_quiesce(h->loops);
    close(h->listen_fd);
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (int waited = 0; atomic_load(&h->in_flight) > 0 && waited < timeout_ms; waited += 5) {
        /* Answers held by a log that cannot be written wait for its rewrite, which
         * journal_close tries once more: waiting here would only spend the stop's time. */
        if (h->srv->j && journal_broken(h->srv->j))
            break;
        nanosleep(&pause, NULL);
    }
    if (h->srv->j)
        journal_set_answer_hook(h->srv->j, NULL, NULL);
    http_loops_stop(h->loops);
    iplimit_free(h->per_ip);
    free(h);
}
