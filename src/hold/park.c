/* SPDX-License-Identifier: Apache-2.0 */
/* park.c - parked requests: slots ended exactly once, deadlines in a min-heap served by
 * one timer thread that sleeps until the earliest of them. */
#include "hold/park.h"
#include "base/clock.h"
#include "base/heap.h"
#include "base/thread.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Bits of a slot's state. CLAIMED decides who ends the slot. FINISHED, ARMED and GONE
 * change under the slot's lock (mu), which the resume runs under: the second of FINISHED
 * and ARMED to be set resumes the connection, unless GONE (the edge gave it up) is set. */
enum { S_CLAIMED = 1, S_FINISHED = 2, S_ARMED = 4, S_GONE = 8 };

struct park_slot {
    atomic_int state;
    atomic_int refs;
    park_lot *lot;
    pthread_mutex_t mu;        /* arm, finish's resume, take, abandon (park.h's rule) */
    int64_t deadline;          /* clock_now_ms() clock; INT64_MAX: none */
    uint32_t heap_at;          /* place in lot->deadlines, or HEAP_NONE; under lot->lock */
    park_expire_fn expire;
    void *ctx;
    int kept;                  /* park_keep: park_lot_end leaves it to its owner */
    int fd;                    /* the client's socket once armed, else -1 */
    park_resume_fn resume;
    void *conn;                /* park_arm's: what the resume needs, never the request */
    void *conn_arg;
    cmd_result result;
};

struct park_lot {
    pthread_mutex_t lock;
    pthread_cond_t wake;       /* the earliest deadline changed, or stop */
    heap deadlines;            /* every unfinished slot, by deadline */
    size_t parked;             /* slots created and not finished */
    int shut;                  /* park_lot_shutdown ran: refuse new slots */
    unsigned shut_status;      /* nonzero: park_lot_shutdown answers this KO instead */
    const char *shut_msg;
    int stop;                  /* the timer thread must exit */
    pthread_t timer;
};

/* ---- slots ---- */

void park_ref(park_slot *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void park_unref(park_slot *s)
{
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    pthread_mutex_destroy(&s->mu);
    buf_free(&s->result.text);
    buf_free(&s->result.headers);
    free(s);
}

int park_claim(park_slot *s)
{
    return !(atomic_fetch_or_explicit(&s->state, S_CLAIMED, memory_order_acq_rel) & S_CLAIMED);
}

cmd_result *park_result(park_slot *s)
{
    return &s->result;
}

void park_finish(park_slot *s)
{
    park_lot *lot = s->lot;
    pthread_mutex_lock(&lot->lock);
    heap_remove(&lot->deadlines, s);
    lot->parked--;
    pthread_mutex_unlock(&lot->lock);
    /* Release: the answer written before is visible to the thread that resumes. The
     * resume stays under mu until it returns: park_take waits for that. */
    pthread_mutex_lock(&s->mu);
    int old = atomic_fetch_or_explicit(&s->state, S_FINISHED, memory_order_acq_rel);
    if ((old & S_ARMED) && !(old & S_GONE))
        s->resume(s->conn, s->conn_arg);
    pthread_mutex_unlock(&s->mu);
}

int park_complete(park_slot *s, cmd_result *r)
{
    if (!park_claim(s))
        return 0;
    if (r) {
        cmd_result mine = s->result;
        s->result = *r;
        s->result.park = NULL;
        *r = mine;
    }
    park_finish(s);
    return 1;
}

park_slot *park_new(park_lot *lot, cmd_result *r, int64_t deadline_ms,
                    park_expire_fn expire, void *ctx)
{
    park_slot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    atomic_init(&s->state, 0);
    atomic_init(&s->refs, 2);
    s->lot = lot;
    s->deadline = deadline_ms > 0 ? deadline_ms : INT64_MAX;
    s->expire = expire;
    s->ctx = ctx;
    s->fd = -1;
    if (pthread_mutex_init(&s->mu, NULL) != 0) {
        free(s);
        return NULL;
    }
    /* The handler's result becomes the slot's; r keeps its other fields (how the request
     * is to be answered) but the slot's empty buffer. Before the slot is in the heap: from
     * there the timer thread may end it (a deadline already due) and write its answer. */
    s->result = *r;
    s->result.park = NULL;
    pthread_mutex_lock(&lot->lock);
    if (lot->shut || heap_push(&lot->deadlines, s) != 0) {
        pthread_mutex_unlock(&lot->lock);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return NULL;
    }
    lot->parked++;
    int earliest = s->heap_at == 0;
    pthread_mutex_unlock(&lot->lock);
    r->text = (buf)BUF_INIT;
    r->headers = (buf)BUF_INIT;
    if (earliest)
        pthread_cond_signal(&lot->wake);
    return s;
}

void park_arm(park_slot *s, int fd, park_resume_fn resume, void *conn, void *arg)
{
    pthread_mutex_lock(&s->mu);
    s->fd = fd;
    s->resume = resume;
    s->conn = conn;
    s->conn_arg = arg;
    if (atomic_fetch_or_explicit(&s->state, S_ARMED, memory_order_acq_rel) & S_FINISHED)
        resume(conn, arg);
    pthread_mutex_unlock(&s->mu);
}

cmd_result *park_take(park_slot *s)
{
    /* The finisher resumed the connection under mu: once we hold it, that call has
     * returned, and nothing of ours reads the connection or its loop any more. */
    pthread_mutex_lock(&s->mu);
    pthread_mutex_unlock(&s->mu);
    return &s->result;
}

int park_client_gone(park_slot *s)
{
    if (!(atomic_load_explicit(&s->state, memory_order_acquire) & S_ARMED) || s->fd < 0)
        return 0;
    char c;
    ssize_t n = recv(s->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0)
        return 0;               /* the client already sent more: it is there */
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    return 1;                   /* end of stream, or the connection failed */
}

void park_abandon(park_slot *s)
{
    park_lot *lot = s->lot;
    /* Under mu: a finisher resuming the connection now is waited for, a later one sees
     * GONE and leaves the connection, about to be freed, alone. */
    pthread_mutex_lock(&s->mu);
    int old = atomic_fetch_or_explicit(&s->state, S_CLAIMED | S_GONE, memory_order_acq_rel);
    pthread_mutex_unlock(&s->mu);
    if (!(old & S_CLAIMED)) {
        pthread_mutex_lock(&lot->lock);
        heap_remove(&lot->deadlines, s);
        lot->parked--;
        pthread_mutex_unlock(&lot->lock);
    }
    park_unref(s);
}

/* Ends claimed slot s through its expire callback. */
static void expire_one(park_slot *s, park_why why)
{
    s->expire(s, why, &s->result, s->ctx);
    park_finish(s);
}

/* ---- the timer thread ---- */

static void deadline_timespec(int64_t ms, struct timespec *t)
{
    t->tv_sec = (time_t)(ms / 1000);
    t->tv_nsec = (long)(ms % 1000) * 1000000;
}

static void *timer_main(void *arg)
{
    park_lot *lot = arg;
    pthread_mutex_lock(&lot->lock);
    while (!lot->stop) {
        park_slot *s = heap_top(&lot->deadlines);
        if (!s || s->deadline == INT64_MAX) {
            pthread_cond_wait(&lot->wake, &lot->lock);
            continue;
        }
        if (s->deadline > clock_now_ms()) {
            struct timespec t;
            deadline_timespec(s->deadline, &t);
            pthread_cond_timedwait(&lot->wake, &lot->lock, &t);
            continue;
        }
        heap_remove(&lot->deadlines, s);
        /* A slot without a callback that outlived its deadline stays for its owner. */
        if (!s->expire || !park_claim(s))
            continue;
        /* The edge's reference keeps s alive: it is dropped only after a resume, which
         * needs park_finish, which only this thread will call now. */
        pthread_mutex_unlock(&lot->lock);
        expire_one(s, PARK_TIMEOUT);
        pthread_mutex_lock(&lot->lock);
    }
    pthread_mutex_unlock(&lot->lock);
    return NULL;
}

park_lot *park_lot_create(buf *err)
{
    park_lot *lot = calloc(1, sizeof *lot);
    if (!lot) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    heap_init(&lot->deadlines, offsetof(park_slot, deadline), offsetof(park_slot, heap_at));
    int rc = pthread_mutex_init(&lot->lock, NULL);
    if (rc == 0 && (rc = clock_cond_init(&lot->wake)) != 0)
        pthread_mutex_destroy(&lot->lock);
    if (rc == 0 && thread_start(&lot->timer, "stsd-deadlines", timer_main, lot) != 0) {
        rc = errno;
        pthread_cond_destroy(&lot->wake);
        pthread_mutex_destroy(&lot->lock);
    }
    if (rc != 0) {
        buf_printf(err, "cannot start the timer of waiting requests: %s", strerror(rc));
        free(lot);
        return NULL;
    }
    return lot;
}

void park_lot_shutdown_answer(park_lot *lot, unsigned status, const char *msg)
{
    pthread_mutex_lock(&lot->lock);
    lot->shut_status = status;
    lot->shut_msg = msg;
    pthread_mutex_unlock(&lot->lock);
}

/* Ends every slot with an expire callback (but the kept ones, when keep_kept) through
 * it with PARK_SHUTDOWN, answering status and msg instead when status is nonzero. */
static void end_all(park_lot *lot, int keep_kept, unsigned status, const char *msg)
{
    pthread_mutex_lock(&lot->lock);
    for (;;) {
        /* Claim a batch under the lock, end it outside (expire takes other locks). A
         * claimed slot stays alive: its edge reference goes only after park_finish. */
        park_slot *batch[256];
        size_t k = 0;
        for (size_t i = 0; i < lot->deadlines.n && k < 256;) {
            park_slot *s = lot->deadlines.v[i];
            if (s->expire && !(keep_kept && s->kept) && park_claim(s)) {
                heap_remove(&lot->deadlines, s);
                batch[k++] = s;
            } else {
                i++;
            }
        }
        if (k == 0)
            break;
        pthread_mutex_unlock(&lot->lock);
        for (size_t i = 0; i < k; i++) {
            park_slot *s = batch[i];
            s->expire(s, PARK_SHUTDOWN, &s->result, s->ctx);
            if (status) {
                /* Whatever the waiter found, the answer that counts is the reason. */
                buf_clear(&s->result.text);
                buf_clear(&s->result.headers);
                s->result.kind = REPLY_KO;
                s->result.status = status;
                s->result.lsn = 0;
                buf_puts(&s->result.text, msg);
            }
            park_finish(s);
        }
        pthread_mutex_lock(&lot->lock);
    }
    pthread_mutex_unlock(&lot->lock);
}

void park_lot_shutdown(park_lot *lot)
{
    if (!lot)
        return;
    pthread_mutex_lock(&lot->lock);
    lot->shut = 1;
    unsigned status = lot->shut_status;
    const char *msg = lot->shut_msg;
    pthread_mutex_unlock(&lot->lock);
    end_all(lot, 0, status, msg);
}

void park_lot_end(park_lot *lot, unsigned status, const char *msg)
{
    if (lot)
        end_all(lot, 1, status, msg);
}

void park_keep(park_slot *s)
{
    /* Under the lot's lock, which park_lot_end reads it under: the slot is in the lot's
     * heap from park_new on. */
    pthread_mutex_lock(&s->lot->lock);
    s->kept = 1;
    pthread_mutex_unlock(&s->lot->lock);
}

size_t park_lot_count(park_lot *lot)
{
    pthread_mutex_lock(&lot->lock);
    size_t n = lot->parked;
    pthread_mutex_unlock(&lot->lock);
    return n;
}

void park_lot_free(park_lot *lot)
{
    if (!lot)
        return;
    pthread_mutex_lock(&lot->lock);
    lot->stop = 1;
    pthread_mutex_unlock(&lot->lock);
    pthread_cond_signal(&lot->wake);
    pthread_join(lot->timer, NULL);
    pthread_cond_destroy(&lot->wake);
    pthread_mutex_destroy(&lot->lock);
    heap_free(&lot->deadlines);
    free(lot);
}
