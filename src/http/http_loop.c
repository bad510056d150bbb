/* SPDX-License-Identifier: Apache-2.0 */
/* http_loop.c - loop threads: one libmicrohttpd daemon each, its turns, and the sleep
 * between them on the daemon's epoll descriptor and an eventfd for wake-ups. */
#include "http/http_loop.h"

#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <poll.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"

/* How long a loop whose only work is requests waiting in place sleeps before a turn
 * anyway. The writer's wake normally comes first; the poll covers what libmicrohttpd
 * itself meant to come back to at once (input larger than its buffer, read in pieces),
 * which its timeout can no longer tell apart from those requests. That comes right after
 * a busy turn, so each quiet poll doubles the next one's sleep, up to
 * HOLD_POLL_MS << HOLD_POLL_DOUBLINGS: on a disk that takes 20 ms to sync, a thread
 * holding 100 requests would otherwise ask them all again a thousand times a second. */
#define HOLD_POLL_MS 1
#define HOLD_POLL_DOUBLINGS 4

enum { RUN, QUIESCE, EXIT };

struct http_loop {
    http_loops *ls;
    struct MHD_Daemon *d;
    pthread_t thread;
    int started;               /* the thread runs */
    int ep;                    /* epoll: the daemon's epoll descriptor and efd */
    int efd;                   /* eventfd: a waiting request ended, or a phase changed */
    atomic_int woken;          /* efd was written since the current turn began */
    atomic_int holding;        /* requests waiting in place; changed by this thread only */
    int busy;                  /* the current turn did other work; this thread's only */
    int quiet_polls;           /* polls in a row that found nothing (HOLD_POLL_MS) */
    int quiesced;              /* this thread took its daemon off the listening socket */
};

struct http_loops {
    unsigned n;
    http_loop *loop;
    atomic_int phase;          /* RUN, QUIESCE, EXIT */
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* a thread quiesced its daemon */
    unsigned quiesced;
    unsigned running;          /* threads started, counted when the quiesce began */
    int listen_fd;             /* closed by the last thread to quiesce (http_loops_quiesce) */
};

static __thread http_loop *current;

http_loop *http_loop_current(void)
{
    return current;
}

void http_loop_hold(http_loop *l)
{
    atomic_fetch_add_explicit(&l->holding, 1, memory_order_relaxed);
}

void http_loop_release(http_loop *l)
{
    atomic_fetch_sub_explicit(&l->holding, 1, memory_order_relaxed);
}

void http_loop_busy(http_loop *l)
{
    if (l)                     /* NULL: a daemon stopped off its loop (a failed start) */
        l->busy = 1;
}

static void kick(http_loop *l)
{
    uint64_t one = 1;
    /* EAGAIN only if the counter is full, and then the loop is awake anyway. */
    if (write(l->efd, &one, sizeof one) < 0 && errno != EAGAIN)
        log_warn("http: cannot wake a loop thread: %s", strerror(errno));
}

void http_loop_wake(http_loop *l)
{
    if (!atomic_exchange_explicit(&l->woken, 1, memory_order_acq_rel))
        kick(l);
}

void http_loops_wake_holding(http_loops *ls)
{
    for (unsigned i = 0; i < ls->n; i++)
        if (atomic_load_explicit(&ls->loop[i].holding, memory_order_relaxed) > 0)
            http_loop_wake(&ls->loop[i]);
}

/* How long to sleep after a turn: libmicrohttpd's own timeout (its connections'
 * deadlines, or 0 when it has work left), except that requests waiting in place keep
 * that at 0 while only the writer's wake can move them: then a hold poll (*hold_poll set). */
static int turn_timeout(http_loop *l, int *hold_poll)
{
    MHD_UNSIGNED_LONG_LONG t;
    *hold_poll = 0;
    if (MHD_get_timeout(l->d, &t) != MHD_YES)
        return -1;
    if (t == 0 && atomic_load_explicit(&l->holding, memory_order_relaxed) > 0 && !l->busy) {
        *hold_poll = 1;
        return HOLD_POLL_MS << (l->quiet_polls < HOLD_POLL_DOUBLINGS ? l->quiet_polls
                                                                    : HOLD_POLL_DOUBLINGS);
    }
    return t > INT_MAX ? INT_MAX : (int)t;
}

/* How long the last handshakes under way are waited for at a stop: taken until none has
 * completed for QUIET_MS, at most MAX_MS in all. */
#define ADOPT_QUIET_MS 50
#define ADOPT_MAX_MS 250

/* Takes the connections the kernel completed on fd but no daemon accepted yet, and gives
 * them to l's daemon: closing a listening socket resets those, and their clients would
 * not know whether the request they sent ran. First a filter drops every new connection's
 * SYN: a client connecting now hears nothing, tries again in a second and finds the port
 * closed (refused: nothing ran), or the next process on it. A handshake already under
 * way still completes (its last ACK passes; dropped, its client would take the connection
 * for made and send its request into a socket about to be reset), and is taken too. */
static void adopt_backlog(http_loop *l, int fd)
{
    /* On a TCP socket a filter sees the TCP header: byte 13 holds the flags. */
    struct sock_filter drop_syn[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 13),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x12),           /* SYN and ACK */
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x02, 0, 1),     /* SYN alone: a new one */
        BPF_STMT(BPF_RET | BPF_K, 0),
        BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
    };
    struct sock_fprog prog = {.len = sizeof drop_syn / sizeof drop_syn[0], .filter = drop_syn};
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0)
        log_warn("http: cannot keep new connections out while stopping: %s", strerror(errno));
    unsigned adopted = 0;
    int64_t start = clock_now_ms(), last = start;
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int c = accept4(fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                log_warn("http: cannot accept a connection while stopping: %s",
                         strerror(errno));
                break;
            }
            int64_t now = clock_now_ms();
            if (now - last >= ADOPT_QUIET_MS || now - start >= ADOPT_MAX_MS)
                break;
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, 5);
            continue;
        }
        last = clock_now_ms();
        /* The daemon owns c now: it closes it if it refuses it (its limits). */
        if (MHD_add_connection(l->d, c, (struct sockaddr *)&ss, len) == MHD_YES)
            adopted++;
    }
    if (adopted)
        log_info("http: %u connections made while stopping are answered", adopted);
}

static void quiesce(http_loop *l)
{
    /* The daemon lets go of the listening socket without closing it: every daemon shares
     * it, and the last to let go closes it, below. */
    MHD_quiesce_daemon(l->d);
    l->quiesced = 1;
    pthread_mutex_lock(&l->ls->mu);
    if (++l->ls->quiesced == l->ls->running && l->ls->listen_fd >= 0) {
        /* No daemon accepts any more: what the kernel holds now is the last. */
        adopt_backlog(l, l->ls->listen_fd);
        close(l->ls->listen_fd);
        l->ls->listen_fd = -1;
    }
    pthread_cond_broadcast(&l->ls->cv);
    pthread_mutex_unlock(&l->ls->mu);
}

static void *loop_main(void *arg)
{
    http_loop *l = arg;
    current = l;
    for (;;) {
        int phase = atomic_load(&l->ls->phase);
        if (phase != RUN && !l->quiesced)
            quiesce(l);
        if (phase == EXIT)
            break;
        /* Cleared before the turn: a wake during it makes the next sleep return. */
        atomic_store_explicit(&l->woken, 0, memory_order_release);
        l->busy = 0;
        MHD_run(l->d);
        struct epoll_event ev[2];
        int hold_poll, n = epoll_wait(l->ep, ev, 2, turn_timeout(l, &hold_poll));
        l->quiet_polls = hold_poll && n == 0 ? l->quiet_polls + 1 : 0;
        for (int i = 0; i < n; i++) {
            uint64_t v;
            if (ev[i].data.fd == l->efd && read(l->efd, &v, sizeof v) < 0 && errno != EAGAIN)
                log_warn("http: cannot read a loop's eventfd: %s", strerror(errno));
        }
    }
    /* Here, so that connections close on the thread that served them. */
    MHD_stop_daemon(l->d);
    l->d = NULL;
    return NULL;
}

/* The loop's epoll set: the daemon's own epoll descriptor and the eventfd. */
static int loop_open(http_loop *l)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_EPOLL_FD);
    l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    if (!di || l->efd < 0 || l->ep < 0)
        return -1;
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = di->epoll_fd};
    if (epoll_ctl(l->ep, EPOLL_CTL_ADD, di->epoll_fd, &ev) != 0)
        return -1;
    ev.data.fd = l->efd;
    return epoll_ctl(l->ep, EPOLL_CTL_ADD, l->efd, &ev);
}

static void set_phase(http_loops *ls, int phase)
{
    atomic_store(&ls->phase, phase);
    for (unsigned i = 0; i < ls->n; i++)
        if (ls->loop[i].started)
            kick(&ls->loop[i]);
}

http_loops *http_loops_start(unsigned n, http_loop_daemon_fn make, void *ctx, buf *err)
{
    http_loops *ls = calloc(1, sizeof *ls);
    if (!ls || !(ls->loop = calloc(n, sizeof *ls->loop))) {
        free(ls);
        buf_puts(err, "out of memory");
        return NULL;
    }
    ls->n = n;
    atomic_init(&ls->phase, RUN);
    ls->listen_fd = -1;
    pthread_mutex_init(&ls->mu, NULL);
    pthread_cond_init(&ls->cv, NULL);
    for (unsigned i = 0; i < n; i++) {
        http_loop *l = &ls->loop[i];
        l->ls = ls;
        l->ep = l->efd = -1;
        atomic_init(&l->woken, 0);
        atomic_init(&l->holding, 0);
        if (!(l->d = make(ctx, i))) {
            buf_puts(err, "cannot start the HTTP server (see the messages above)");
            goto fail;
        }
        if (loop_open(l) != 0 || thread_start(&l->thread, "stsd-http", loop_main, l) != 0) {
            buf_printf(err, "cannot start HTTP thread %u: %s", i + 1, strerror(errno));
            goto fail;
        }
        l->started = 1;
    }
    return ls;
fail:
    http_loops_stop(ls);
    return NULL;
}

void http_loops_quiesce(http_loops *ls, int listen_fd)
{
    unsigned running = 0;
    for (unsigned i = 0; i < ls->n; i++)
        running += ls->loop[i].started;
    pthread_mutex_lock(&ls->mu);
    ls->running = running;
    ls->listen_fd = listen_fd;
    pthread_mutex_unlock(&ls->mu);
    set_phase(ls, QUIESCE);
    pthread_mutex_lock(&ls->mu);
    while (ls->quiesced < running)
        pthread_cond_wait(&ls->cv, &ls->mu);
    if (ls->listen_fd >= 0)       /* no thread was running */
        close(ls->listen_fd);
    ls->listen_fd = -1;
    pthread_mutex_unlock(&ls->mu);
}

void http_loops_stop(http_loops *ls)
{
    if (!ls)
        return;
    set_phase(ls, EXIT);
    for (unsigned i = 0; i < ls->n; i++) {
        http_loop *l = &ls->loop[i];
        if (l->started)
            pthread_join(l->thread, NULL);
        else if (l->d) {
            MHD_quiesce_daemon(l->d);     /* or stopping it closes the shared socket */
            MHD_stop_daemon(l->d);
        }
        if (l->ep >= 0)
            close(l->ep);
        if (l->efd >= 0)
            close(l->efd);
    }
    pthread_cond_destroy(&ls->cv);
    pthread_mutex_destroy(&ls->mu);
    free(ls->loop);
    free(ls);
}
