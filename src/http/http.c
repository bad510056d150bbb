/* SPDX-License-Identifier: Apache-2.0 */
/* http.c - libmicrohttpd glue: the daemons, their connections (a request state per
 * connection, reused from a per-thread pool) and the turns of a request; what a request
 * gets is http_route.c's. */
#include "http/http.h"

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

#include "base/log.h"
#include "base/stats.h"
#include "hold/commit.h"
#include "journal/journal.h"
#include "answer.h"
#include "http_batch.h"
#include "http_forward.h"
#include "http_view.h"
#include "http_int.h"
#include "http_page.h"
#include "http_route.h"

/* Room MHD gives one connection for its headers and the request line. A GET carries the
 * LINE in its URL, so this bounds a GET's LINE; POST bodies are bounded by maxBodySize. */
#define HTTP_CONNECTION_MEMORY (32 * 1024)
#define HTTP_LISTEN_BACKLOG 4096

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
    batch_free(q->batch);
    if (q->resp)
        MHD_destroy_response(q->resp);
    buf_free(&q->sent);
    http_request_free_parts(q);
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
        q->prm.store.cap > 65536 || q->uri.cap > 65536 || q->sent.cap > 65536 ||
        q->hdrs.cap > 65536) {
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
    batch_free(q->batch);               /* a batch held in place, its answers unsent */
    q->batch = NULL;
    if (!q->counted)
        return;
    q->counted = 0;
    atomic_fetch_sub(&h->in_flight, 1);
    if (q->result.stop && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && h->on_stop)
        h->on_stop();
}

/* The journal's answer hook: changes became durable, threads with requests waiting in
 * place ask them again. */
static void on_answerable(void *ctx)
{
    http_server *h = ctx;
    http_loops_wake_holding(h->loops);
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
        if (q->batch ? batch_pending(h, q) : commit_ready(h->srv->j, &q->result, q->wait_lsn))
            return MHD_YES;
        q->in_place = 0;
        http_loop_release(http_loop_current());
        http_loop_busy(http_loop_current());
        return q->batch ? batch_send(h, c, q) : http_send_result(h, c, q);
    }
    http_loop_busy(http_loop_current());
    if (q->slot)
        return http_send_parked(h, c, q);
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
        return buf_append(&q->body, upload_data, n) == 0 ? MHD_YES : MHD_NO;
    }
    /* Counted once its body is in: a stop waits for requests that run, not for uploads
     * still arriving (cut, they were never answered). */
    if (!q->counted) {
        if (atomic_load(&h->stopping))
            return http_send_stopping(c);
        q->counted = 1;
        atomic_fetch_add(&h->in_flight, 1);
    }
    if (q->body_too_big)
        return answer_text(c, MHD_HTTP_CONTENT_TOO_LARGE, "413 request body too large\n");
    return http_route(h, c, q, method);
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

/* A socket bound to addr (sslen bytes), listening when do_listen is set; for IPv6 with
 * dual set, IPv4 clients come in too, as ::ffff:a.b.c.d. Returns the fd, or -1 with errno
 * set. */
static int listen_on(const struct sockaddr_storage *ss, socklen_t sslen, int dual,
                     int do_listen)
{
    int one = 1, zero = 0;
    int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* IPV6_V6ONLY set explicitly: the system's default (net.ipv6.bindv6only) may be 1. */
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (ss->ss_family == AF_INET6 &&
         setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one, sizeof one) != 0) ||
        bind(fd, (const struct sockaddr *)ss, sslen) != 0 ||
        (do_listen && listen(fd, HTTP_LISTEN_BACKLOG) != 0)) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* http_bind, and http_listen when do_listen is set. */
static int bind_port(const char *bind_addr, int port, int *bound, buf *err, int do_listen)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    int any6 = 0;
    if (inet_pton(AF_INET, bind_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sslen = sizeof *a4;
    } else if (inet_pton(AF_INET6, bind_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sslen = sizeof *a6;
        any6 = IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr);
    } else {
        buf_printf(err, "stsd.bind: \"%s\" is not an IPv4 or IPv6 address", bind_addr);
        return -1;
    }
    /* "::" is every address, IPv4 too: one dual-stack socket, so that every daemon shares
     * one listening fd as before (libmicrohttpd takes one per daemon). */
    int fd = listen_on(&ss, sslen, any6, do_listen);
    if (fd < 0 && any6 && (errno == EAFNOSUPPORT || errno == EINVAL || errno == ENOPROTOOPT)) {
        /* No IPv6 in this kernel, or no dual-stack sockets: every IPv4 address, said aloud. */
        log_warn("cannot listen on :: for IPv4 and IPv6 (%s): listening on 0.0.0.0, IPv4 "
                 "only", strerror(errno));
        memset(&ss, 0, sizeof ss);
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        a4->sin_addr.s_addr = htonl(INADDR_ANY);
        sslen = sizeof *a4;
        fd = listen_on(&ss, sslen, 0, do_listen);
    }
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&ss, &sslen) != 0) {
        int e = errno;
        buf_printf(err, "cannot listen on %s port %d: %s", bind_addr, port, strerror(e));
        /* The first thing a second `make run` meets: say the way out. */
        if (e == EADDRINUSE)
            buf_printf(err, ". Another program (another stsd?) has port %d; choose another "
                       "port with `make run RUN_ARGS=--port=N`, `stsd --port N`, or the "
                       "property jmeterPlugin.sts.port=N (in the properties file, or "
                       "-DjmeterPlugin.sts.port=N)", port);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *bound = ntohs(ss.ss_family == AF_INET ? a4->sin_port : a6->sin6_port);
    return fd;
}

int http_listen(const char *bind_addr, int port, int *bound, buf *err)
{
    return bind_port(bind_addr, port, bound, err, 1);
}

int http_bind(const char *bind_addr, int port, int *bound, buf *err)
{
    return bind_port(bind_addr, port, bound, err, 0);
}

int http_listen_bound(int fd, const char *bind_addr, int port, buf *err)
{
    if (listen(fd, HTTP_LISTEN_BACKLOG) != 0) {
        buf_printf(err, "cannot listen on %s port %d: %s", bind_addr, port, strerror(errno));
        return -1;
    }
    return 0;
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
    /* A cluster node's thread for the leader's requests, before any request can come. */
    if (srv->cluster && !(h->fwd = forward_start(conf, srv->cluster, err))) {
        iplimit_free(h->per_ip);
        close(fd);
        free(h);
        return NULL;
    }
    if (srv->cluster && srv->j && conf->cluster_follower_reads &&
        !(h->view = view_start(conf, srv, err))) {
        forward_stop(h->fwd);
        iplimit_free(h->per_ip);
        close(fd);
        free(h);
        return NULL;
    }
    if (!(h->loops = http_loops_start(h->threads, start_daemon, h, err))) {
        view_stop(h->view);
        forward_stop(h->fwd);
        iplimit_free(h->per_ip);
        close(fd);
        free(h);
        return NULL;
    }
    if (srv->j)
        journal_set_answer_hook(srv->j, on_answerable, h);
    return h;
}

/* How long a stop keeps reading requests already sent on accepted connections. */
#define STOP_GRACE_MS 100

void http_stop(http_server *h, int timeout_ms)
{
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    http_loops_quiesce(h->loops, h->listen_fd);      /* and closes the socket */
    h->listen_fd = -1;
    struct timespec pause = {0, 5 * 1000 * 1000};
    /* A request already on an accepted connection is read and answered ("503 stopping",
     * or served) in the grace, rather than cut: a client may retry a 503, not a cut
     * (a cluster's rolling restart saw one in ten). */
    int grace = timeout_ms > 0 ? STOP_GRACE_MS : 0;
    for (int waited = 0; (atomic_load(&h->in_flight) > 0 || waited < grace) &&
                         waited < timeout_ms; waited += 5) {
        /* Answers held by a log that cannot be written wait for its rewrite, which
         * journal_close tries once more: waiting here would only spend the stop's time. */
        if (h->srv->j && journal_broken(h->srv->j))
            break;
        nanosleep(&pause, NULL);
    }
    if (h->srv->j)
        journal_set_answer_hook(h->srv->j, NULL, NULL);
    http_loops_stop(h->loops);
    /* Once no HTTP thread can hand it a request: transfers still going are cut. Their
     * requests were answered by park_lot_shutdown, or abandoned with their connections
     * just now (a late answer then goes nowhere: park.h). */
    view_stop(h->view);
    forward_stop(h->fwd);
    iplimit_free(h->per_ip);
    free(h);
}
