/* SPDX-License-Identifier: Apache-2.0 */
/* lease_timer.c - the thread that puts lines back when their leases expire: it sleeps
 * until the next deadline (at most LEASE_TIMER_TICK_MS, so that a new earlier lease is
 * seen soon) and hands the due ones back through the store. */
#include "meet/lease_timer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "meet/keys.h"

#define LEASE_TIMER_TICK_MS 100

struct lease_timer {
    store *st;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
};

static void *timer_main(void *arg)
{
    lease_timer *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        pthread_mutex_unlock(&t->mu);
        int64_t now = clock_wall_ms(), next = 0;
        size_t n = store_lease_expire(t->st, now, &next);
        if (n)
            log_info("leases: %zu expired, their lines are back at the head of their lists",
                     n);
        int64_t knext = 0;
        size_t kn = keys_lease_expire(t->st, now, &knext);
        if (kn)
            log_info("leases: %zu counter leases expired, their increments undone", kn);
        if (knext && (!next || knext < next))
            next = knext;
        int64_t wait = next ? next - clock_wall_ms() : LEASE_TIMER_TICK_MS;
        if (wait > LEASE_TIMER_TICK_MS)
            wait = LEASE_TIMER_TICK_MS;
        if (wait < 1)
            wait = 1;
        struct timespec until = clock_deadline_ns((uint64_t)wait * 1000000u);
        pthread_mutex_lock(&t->mu);
        if (!t->stop)
            pthread_cond_timedwait(&t->cv, &t->mu, &until);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

lease_timer *lease_timer_start(store *st, buf *err)
{
    lease_timer *t = calloc(1, sizeof *t);
    if (!t) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    t->st = st;
    int rc = pthread_mutex_init(&t->mu, NULL);
    if (rc == 0 && (rc = clock_cond_init(&t->cv)) != 0)
        pthread_mutex_destroy(&t->mu);
    if (rc == 0 && thread_start(&t->thread, "stsd-leases", timer_main, t) != 0) {
        rc = errno;
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
    }
    if (rc != 0) {
        buf_printf(err, "cannot start the lease timer: %s", strerror(rc));
        free(t);
        return NULL;
    }
    return t;
}

void lease_timer_stop(lease_timer *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
