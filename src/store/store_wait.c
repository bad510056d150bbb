/* SPDX-License-Identifier: Apache-2.0 */
/* store_wait.c - wait queues: requests waiting on a list (or on a name not created yet,
 * store_names.c) until lines come in, served in arrival order under the list's lock. */
#include <pthread.h>
#include <string.h>

#include "store_wait.h"
#include "store_names.h"
#include "store_owner.h"
#include "store_take.h"

/* ---- serving ---- */

/* Whether line could satisfy FIND matcher m (a regex at its match limit: maybe). */
static int may_match(const store_matcher *m, const char *line, size_t len)
{
    if (m->equal && !m->column)
        return len == m->equal_len && memcmp(line, m->equal, len) == 0;
    return m->match(line, len, m->ctx) != 0;
}

/* READ OWNER= for owner waiter w on e (lock held), into out and w->ids. */
static store_rc read_owner(store *st, entry *e, store_waiter *w, buf *out, size_t *count,
                           int *taken, uint64_t *lsn)
{
    store_owned_req q = {w->owner, w->owner_len, w->owner_hash, w->end, w->lease_ms};
    store_rc rc = store_read_owner_locked(st, e, &q, out, &w->ids, taken, lsn);
    *count = rc == STORE_OK;
    return rc;
}

void store_wait_serve_locked(store *st, entry *e, const char *line, size_t len,
                             store_waiter **done, uint64_t *lsn)
{
    int reads_held = 0;     /* a READ waiter needs more lines: the READs behind it wait */
    /* An owner took a line in this pass: its other waiters, further on, need none, so the
     * pass goes on past an emptied list for them (a walk of the queue, owners only). */
    int owned = 0;
    for (store_waiter *w = e->wait_head, *next; w && (owned || list_length(e->l) > 0);
         w = next) {
        next = w->next;
        size_t pos = 0;
        store_rc rc = STORE_OK;
        int empty = list_length(e->l) == 0;
        if (w->owner) {
            if ((reads_held || empty) &&
                !store_owner_find_hash(&e->owners, w->owner, w->owner_len, w->owner_hash))
                continue;
        } else if (empty) {
            continue;
        } else if (!w->m) {
            if (reads_held)
                continue;
            if (w->n > list_length(e->l)) {
                reads_held = 1;
                continue;
            }
        } else {
            if (line && !may_match(w->m, line, len))
                continue;
            rc = store_find_pos_locked(e, w->m, &pos);
            if (rc == STORE_NO_MATCH)
                continue;
        }
        store_names_dequeue(e, w);
        if (!w->claim(w))
            continue;                   /* ended already (deadline, shutdown): no line */
        uint64_t l = 0;
        int taken = 0;
        if (w->gone && w->gone(w))
            rc = STORE_EMPTY;           /* nobody will read it: takes no line */
        else if (w->owner)
            rc = read_owner(st, e, w, &w->out, &w->count, &taken, &l);
        else if (rc == STORE_OK && !w->m)
            rc = store_read_locked(st, e, w->end, w->keep, w->n, w->lease_ms, &w->ids,
                                   &w->out, &w->count, &l);
        else if (rc == STORE_OK)
            rc = store_take_locked(st, e, &pos, 1, w->keep, w->lease_ms, &w->ids, &w->out,
                                   &w->count, &l);
        owned |= taken;
        if (l > *lsn)
            *lsn = l;
        w->rc = rc;
        w->next = *done;
        *done = w;
    }
}

void store_wait_finish(store *st, store_waiter *done, uint64_t lsn)
{
    /* Served in arrival order: done is chained newest first, so reverse it. */
    store_waiter *order = NULL;
    while (done) {
        store_waiter *next = done->next;
        done->next = order;
        order = done;
        done = next;
    }
    while (order) {
        store_waiter *next = order->next;
        order->next = NULL;
        order->lsn = lsn;
        order->served(order, order->rc);
        order = next;
    }
}

/* ---- waiting ---- */

/* Runs the request of w on e now (lock held), or queues w when it cannot be served. */
static store_rc try_or_queue(store *st, entry *e, store_waiter *w, buf *out, size_t *count,
                             uint64_t *lsn)
{
    store_rc rc;
    int waitable;
    if (w->owner) {
        int taken;
        rc = read_owner(st, e, w, out, count, &taken, lsn);
        waitable = rc == STORE_EMPTY;
    } else if (w->m) {
        size_t pos;
        rc = store_find_pos_locked(e, w->m, &pos);
        if (rc == STORE_OK)
            rc = store_take_locked(st, e, &pos, 1, w->keep, w->lease_ms, &w->ids, out, count,
                                   lsn);
        waitable = rc == STORE_EMPTY || rc == STORE_NO_MATCH;
    } else {
        rc = store_read_locked(st, e, w->end, w->keep, w->n, w->lease_ms, &w->ids, out, count,
                               lsn);
        waitable = rc == STORE_EMPTY || rc == STORE_TOO_FEW;
    }
    if (waitable && w->arm(w) == 0) {
        rc = STORE_WAITING;
        store_names_enqueue(e, w);
    }
    return rc;
}

static store_rc wait_on(store *st, store_waiter *w, buf *out, size_t *count)
{
    uint64_t lsn = 0;
    store_rc rc;
    *count = 0;
    if (w->owner)
        w->owner_hash = store_owner_hash(w->owner, w->owner_len);
    entry *e;
again:
    if (!(e = store_names_lookup_or_orphan(st, w, &rc)))
        return rc;
    pthread_mutex_lock(&e->lock);
    if (store_names_dropped(e)) {     /* dropped after the lookup: wait on the name */
        pthread_mutex_unlock(&e->lock);
        goto again;
    }
    rc = try_or_queue(st, e, w, out, count, &lsn);
    if (rc != STORE_WAITING)
        w->lsn = lsn;             /* served now: the caller answers once it is durable */
    pthread_mutex_unlock(&e->lock);
    return rc;
}

store_rc store_read_wait(store *st, store_waiter *w, buf *out, size_t *count)
{
    w->m = NULL;
    return wait_on(st, w, out, count);
}

store_rc store_find_wait(store *st, store_waiter *w, buf *out)
{
    size_t count;
    w->owner = NULL;
    return wait_on(st, w, out, &count);
}

void store_unwait(store *st, store_waiter *w)
{
    entry *e = store_names_unorphan(st, w);
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    if (w->queued)
        store_names_dequeue(e, w);
    pthread_mutex_unlock(&e->lock);
}
