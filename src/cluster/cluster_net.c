/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_net.c - raft's TCP transport with host names: a transport of our own in front of
 * raft_uv_tcp's (`inner`), which does the work once a name is an address.
 *
 * Threads: the transport's functions and callbacks run on the raft loop's thread. Names
 * are resolved on a detached `stsd-resolve` thread (getaddrinfo blocks, for seconds when a
 * DNS server does not answer: never on the loop), which refreshes every name the loop has
 * asked for once a second and keeps the addresses in a table under a mutex. The table is
 * shared by reference count, so that the transport can close while that thread is still
 * inside getaddrinfo: the last of the two frees it.
 *
 * A connection to a named node is tracked (`pending`) so that one stuck on an address
 * that no longer answers (its container gone, a packet filter dropping SYNs: raft 0.15
 * has no connect timeout) is reported failed after connect_ms; its late outcome is then
 * discarded here; one that succeeded fails once what it sent stays unacknowledged for
 * twice connect_ms (TCP_USER_TIMEOUT), as a peer that vanished never answers. */
#include "cluster_net.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/log.h"
#include "base/thread.h"

#define NET_HOSTS 32            /* names one transport resolves (nodes of every change) */
#define NET_HOST_MAX 253        /* a DNS name's length, as config_cluster checks it */
#define NET_SWEEP_MS 200        /* how often pending connections are checked */
#define NET_NO_HOST ((size_t)-1) /* a connection to an address, not to a name */

typedef struct net_host {
    char name[NET_HOST_MAX + 1];
    struct in_addr ip;
    int known;                  /* ip is the last answer */
    int said;                   /* 1: logged resolved, 2: logged failing (once each way) */
} net_host;

/* The names' table, shared with the resolver thread. */
typedef struct resolver {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;                   /* the transport and the thread */
    int stop, kick;
    size_t n;
    net_host hosts[NET_HOSTS];
} resolver;

struct net;

/* One connection attempt to a named node, through inner. */
typedef struct net_connect {
    struct raft_uv_connect inner_req;
    struct raft_uv_connect *req;    /* raft's; NULL once answered (then only discarded) */
    raft_uv_connect_cb cb;
    struct net *net;
    size_t host;                    /* its index in the resolver's table */
    struct in_addr ip;
    uint64_t deadline;              /* uv_now's ms */
    struct net_connect *prev, *next;
} net_connect;

typedef struct net {
    struct raft_uv_transport inner;     /* raft_uv_tcp's */
    struct raft_uv_transport *outer;    /* raft's handle on us */
    uv_loop_t *loop;
    uv_timer_t sweep;
    int sweeping, sweep_closed, inner_closed;
    unsigned connect_ms;
    unsigned user_timeout_ms;           /* TCP_USER_TIMEOUT of its connections */
    resolver *res;                      /* NULL until a name is first connected to */
    net_connect *pending;
    raft_uv_transport_close_cb close_cb;
} net;

/* ---- the resolver ------------------------------------------------------------------------ */

static void resolver_unref(resolver *r)
{
    pthread_mutex_lock(&r->mu);
    int last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (last) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        free(r);
    }
}

static void *resolver_main(void *arg)
{
    resolver *r = arg;
    char name[NET_HOST_MAX + 1];
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        r->kick = 0;
        for (size_t i = 0; i < r->n && !r->stop; i++) {
            memcpy(name, r->hosts[i].name, sizeof name);
            pthread_mutex_unlock(&r->mu);
            struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
            struct addrinfo *ai = NULL;
            int rc = getaddrinfo(name, NULL, &hints, &ai);
            struct in_addr ip = {0};
            if (rc == 0)
                ip = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
            if (ai)
                freeaddrinfo(ai);
            pthread_mutex_lock(&r->mu);
            net_host *h = &r->hosts[i];
            int changed = rc == 0 && (!h->known || h->ip.s_addr != ip.s_addr);
            h->known = rc == 0;
            h->ip = ip;
            if (changed) {
                char a[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &ip, a, sizeof a);
                log_info("cluster: %s resolves to %s", name, a);
                h->said = 1;
            } else if (rc != 0 && h->said != 2) {
                log_warn("cluster: %s does not resolve (%s); raft tries again",
                         name, gai_strerror(rc));
                h->said = 2;
            }
        }
        if (r->stop)
            break;
        if (!r->kick) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_sec += 1;
            pthread_cond_timedwait(&r->cv, &r->mu, &t);
        }
    }
    pthread_mutex_unlock(&r->mu);
    resolver_unref(r);
    return NULL;
}

/* The table's index of name, added (and the resolver woken) when new; *ip its address
 * when one is known. Returns -1 when the table is full. Starts the resolver on first use. */
static int resolver_lookup(net *n, const char *name, struct in_addr *ip, int *known)
{
    resolver *r = n->res;
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return -1;
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        r->refs = 2;
        pthread_t t;
        if (thread_start(&t, "stsd-resolve", resolver_main, r) != 0) {
            pthread_mutex_destroy(&r->mu);
            pthread_cond_destroy(&r->cv);
            free(r);
            return -1;
        }
        pthread_detach(t);
        n->res = r;
    }
    pthread_mutex_lock(&r->mu);
    size_t i = 0;
    while (i < r->n && strcmp(r->hosts[i].name, name) != 0)
        i++;
    if (i == r->n) {
        if (r->n == NET_HOSTS) {
            pthread_mutex_unlock(&r->mu);
            return -1;
        }
        memset(&r->hosts[i], 0, sizeof r->hosts[i]);
        snprintf(r->hosts[i].name, sizeof r->hosts[i].name, "%s", name);
        r->n++;
        r->kick = 1;
        pthread_cond_signal(&r->cv);
    }
    *known = r->hosts[i].known;
    *ip = r->hosts[i].ip;
    pthread_mutex_unlock(&r->mu);
    return (int)i;
}

/* ---- connections ------------------------------------------------------------------------- */

static net *net_of(struct raft_uv_transport *inner)
{
    return (net *)(void *)((char *)inner - offsetof(net, inner));
}

static void unlink_connect(net *n, net_connect *nc)
{
    if (nc->prev)
        nc->prev->next = nc->next;
    else
        n->pending = nc->next;
    if (nc->next)
        nc->next->prev = nc->prev;
}

static void maybe_closed(net *n)
{
    if (n->close_cb && n->inner_closed && n->sweep_closed && !n->pending) {
        raft_uv_transport_close_cb cb = n->close_cb;
        n->close_cb = NULL;
        cb(n->outer);
    }
}

static void on_stream_discarded(uv_handle_t *h)
{
    raft_free(h);
}

/* inner's answer to one of our connections: raft's, or discarded when raft had it. */
static void on_inner_connect(struct raft_uv_connect *inner_req, struct uv_stream_s *stream,
                             int status)
{
    net_connect *nc = inner_req->data;
    net *n = nc->net;
    unlink_connect(n, nc);
    struct raft_uv_connect *req = nc->req;
    raft_uv_connect_cb cb = nc->cb;
    free(nc);
    if (req && status == 0 && stream) {
        /* raft never reads what it sends on: a peer that vanished (its container killed,
         * its address gone: no RST ever comes back) would keep this connection, its
         * writes retransmitted for some 15 minutes, and the node, back at a new address,
         * unreached. Unacknowledged data for user_timeout_ms fails the connection
         * instead: raft sees the error and connects again, to the address now resolved. */
        uv_os_fd_t fd;
        unsigned ms = n->user_timeout_ms;
        if (uv_fileno((uv_handle_t *)stream, &fd) == 0)
            setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
    }
    if (req)
        cb(req, stream, status);
    else if (status == 0 && stream)
        uv_close((uv_handle_t *)stream, on_stream_discarded);
    maybe_closed(n);
}

/* Connections past their deadline, or to an address their host no longer has: failed, for
 * raft; inner's late answer is discarded. */
static void on_sweep(uv_timer_t *timer)
{
    net *n = timer->data;
    uint64_t now = uv_now(n->loop);
    for (;;) {
        net_connect *nc = n->pending;
        for (; nc; nc = nc->next) {
            if (!nc->req)
                continue;
            if (now >= nc->deadline)
                break;
            if (nc->host == NET_NO_HOST || !n->res)
                continue;                         /* an address: it cannot move */
            pthread_mutex_lock(&n->res->mu);
            const net_host *h = &n->res->hosts[nc->host];
            int moved = h->known && h->ip.s_addr != nc->ip.s_addr;
            pthread_mutex_unlock(&n->res->mu);
            if (moved)
                break;
        }
        if (!nc)
            return;
        struct raft_uv_connect *req = nc->req;
        nc->req = NULL;
        nc->cb(req, NULL, RAFT_NOCONNECTION);     /* raft only arms its retry timer */
    }
}

static int net_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
    net *n = t->impl;
    n->inner.data = t->data;
    const char *colon = strchr(address, ':');
    char host[NET_HOST_MAX + 1];
    size_t hn = colon ? (size_t)(colon - address) : strlen(address);
    struct in_addr a;
    if (hn < sizeof host) {
        memcpy(host, address, hn);
        host[hn] = '\0';
        if (inet_pton(AF_INET, host, &a) != 1) {
            /* A name: raft would bind to uv_ip4_addr(name), which fails. */
            char bind[32];
            snprintf(bind, sizeof bind, "0.0.0.0:%s", colon ? colon + 1 : "8080");
            int rv = raft_uv_tcp_set_bind_address(&n->inner, bind);
            if (rv != 0) {
                snprintf(t->errmsg, sizeof t->errmsg, "bind address %s: %s", bind,
                         raft_strerror(rv));
                return rv;
            }
        }
    }
    int rv = n->inner.init(&n->inner, id, address);
    if (rv != 0)
        memcpy(t->errmsg, n->inner.errmsg, sizeof t->errmsg);
    return rv;
}

static int net_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
    net *n = t->impl;
    n->inner.data = t->data;        /* raft's accept callback finds its io there */
    int rv = n->inner.listen(&n->inner, cb);
    if (rv != 0)
        memcpy(t->errmsg, n->inner.errmsg, sizeof t->errmsg);
    return rv;
}

static int net_connect_to(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
                          const char *address, raft_uv_connect_cb cb)
{
    net *n = t->impl;
    n->inner.data = t->data;
    const char *colon = strchr(address, ':');
    char host[NET_HOST_MAX + 1];
    size_t hn = colon ? (size_t)(colon - address) : strlen(address);
    struct in_addr ip;
    if (hn >= sizeof host) {
        snprintf(t->errmsg, sizeof t->errmsg, "address too long: %.40s...", address);
        return RAFT_NOCONNECTION;
    }
    memcpy(host, address, hn);
    host[hn] = '\0';
    /* An address as it is (no name to resolve) is tracked too: raft 0.15's connect has
     * no timeout, and one sent into a partition (SYNs dropped) hung for the kernel's two
     * minutes, the peer unreached long after the partition healed (fault checker, seed
     * 372922). */
    int literal = inet_pton(AF_INET, host, &ip) == 1;
    int known = literal;
    int slot = literal ? -1 : resolver_lookup(n, host, &ip, &known);
    if (!literal && (slot < 0 || !known)) {
        snprintf(t->errmsg, sizeof t->errmsg, "%.200s: %s", host,
                 slot < 0 ? "too many host names" : "no address yet");
        return RAFT_NOCONNECTION;
    }
    net_connect *nc = calloc(1, sizeof *nc);
    if (!nc) {
        snprintf(t->errmsg, sizeof t->errmsg, "out of memory");
        return RAFT_NOMEM;
    }
    nc->inner_req.data = nc;
    nc->req = req;
    nc->cb = cb;
    nc->net = n;
    nc->host = literal ? NET_NO_HOST : (size_t)slot;
    nc->ip = ip;
    nc->deadline = uv_now(n->loop) + n->connect_ms;
    char ipa[INET_ADDRSTRLEN + 8];
    inet_ntop(AF_INET, &ip, ipa, INET_ADDRSTRLEN);
    snprintf(ipa + strlen(ipa), 8, "%s", colon ? colon : ":8080");
    int rv = n->inner.connect(&n->inner, &nc->inner_req, id, ipa, on_inner_connect);
    if (rv != 0) {
        memcpy(t->errmsg, n->inner.errmsg, sizeof t->errmsg);
        free(nc);
        return rv;
    }
    req->cb = cb;
    nc->next = n->pending;
    if (n->pending)
        n->pending->prev = nc;
    n->pending = nc;
    if (!n->sweeping) {
        uv_timer_start(&n->sweep, on_sweep, NET_SWEEP_MS, NET_SWEEP_MS);
        n->sweeping = 1;
    }
    return 0;
}

static void on_sweep_closed(uv_handle_t *h)
{
    net *n = h->data;
    n->sweep_closed = 1;
    maybe_closed(n);
}

static void on_inner_closed(struct raft_uv_transport *inner)
{
    net *n = net_of(inner);
    n->inner_closed = 1;
    maybe_closed(n);
}

/* Inner cancels its connections (each answered RAFT_CANCELED, raft's or discarded), the
 * sweep stops, the resolver thread is told to end. */
static void net_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
    net *n = t->impl;
    n->close_cb = cb;
    if (n->res) {
        pthread_mutex_lock(&n->res->mu);
        n->res->stop = 1;
        pthread_cond_signal(&n->res->cv);
        pthread_mutex_unlock(&n->res->mu);
    }
    uv_close((uv_handle_t *)&n->sweep, on_sweep_closed);
    n->inner.close(&n->inner, on_inner_closed);
}

void cluster_net_resolve(struct raft_uv_transport *t, const char *address)
{
    net *n = t->impl;
    const char *colon = strchr(address, ':');
    char host[NET_HOST_MAX + 1];
    size_t hn = colon ? (size_t)(colon - address) : strlen(address);
    struct in_addr ip;
    int known;
    if (hn >= sizeof host)
        return;
    memcpy(host, address, hn);
    host[hn] = '\0';
    if (inet_pton(AF_INET, host, &ip) != 1)
        resolver_lookup(n, host, &ip, &known);
}

int cluster_net_init(struct raft_uv_transport *t, uv_loop_t *loop, unsigned connect_ms)
{
    void *data = t->data;
    memset(t, 0, sizeof *t);
    t->data = data;
    net *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(t->errmsg, sizeof t->errmsg, "out of memory");
        return RAFT_NOMEM;
    }
    int rv = raft_uv_tcp_init(&n->inner, loop);
    if (rv != 0) {
        memcpy(t->errmsg, n->inner.errmsg, sizeof t->errmsg);
        free(n);
        return rv;
    }
    if (uv_timer_init(loop, &n->sweep) != 0) {
        raft_uv_tcp_close(&n->inner);
        free(n);
        snprintf(t->errmsg, sizeof t->errmsg, "libuv timer");
        return RAFT_IOERR;
    }
    n->sweep.data = n;
    n->outer = t;
    n->loop = loop;
    n->connect_ms = connect_ms;
    n->user_timeout_ms = 2 * connect_ms;
    t->impl = n;
    t->init = net_init;
    t->listen = net_listen;
    t->connect = net_connect_to;
    t->close = net_close;
    return 0;
}

void cluster_net_free(struct raft_uv_transport *t)
{
    net *n = t->impl;
    if (!n)
        return;
    if (n->res)
        resolver_unref(n->res);
    raft_uv_tcp_close(&n->inner);
    free(n);
    t->impl = NULL;
}
