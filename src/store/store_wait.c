/* store_wait.c - wait queues: requests waiting on a list (or on a name not created yet)
 * until lines come in, served in arrival order under the list's lock. */
#include <pthread.h>
#include <string.h>

#include "store_int.h"

/* ---- the queues: an entry's under its lock, the orphans' under add_lock ---- */

static void queue_append(store_waiter **head, store_waiter **tail, store_waiter *w)
{
    w->next = NULL;
    w->prev = tail ? *tail : NULL;
    if (w->prev)
        w->prev->next = w;
    else
        *head = w;
    if (tail)
        *tail = w;
    w->queued = 1;
}

static void queue_remove(store_waiter **head, store_waiter **tail, store_waiter *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        *head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else if (tail)
        *tail = w->prev;
    w->prev = w->next = NULL;
    w->queued = 0;
}

/* Orphans are few (waiters on names nobody created yet): a plain list, no tail. */
static void orphan_append(store *st, store_waiter *w)
{
    store_waiter *last = st->orphans;
    while (last && last->next)
        last = last->next;
    w->where = NULL;
    w->next = NULL;
    w->prev = last;
    if (last)
        last->next = w;
    else
        st->orphans = w;
    w->queued = 1;
}

void store_wait_adopt_orphans(store *st, entry *e)
{
    for (store_waiter *w = st->orphans, *next; w; w = next) {
        next = w->next;
        if (strcmp(w->name, e->name) != 0)
            continue;
        queue_remove(&st->orphans, NULL, w);
        w->where = e;
        queue_append(&e->wait_head, &e->wait_tail, w);
        e->waiters++;
    }
}

static void entry_unqueue(entry *e, store_waiter *w)
{
    queue_remove(&e->wait_head, &e->wait_tail, w);
    e->waiters--;
}

/* ---- serving ---- */

/* Whether line could satisfy FIND matcher m (a regex at its match limit: maybe). */
static int may_match(const store_matcher *m, const char *line, size_t len)
{
    if (m->equal)
        return len == m->equal_len && memcmp(line, m->equal, len) == 0;
    return m->match(line, len, m->ctx) != 0;
}

void store_wait_serve_locked(store *st, entry *e, const char *line, size_t len,
                             store_waiter **done, uint64_t *lsn)
{
    int reads_held = 0;     /* a READ waiter needs more lines: the READs behind it wait */
    for (store_waiter *w = e->wait_head, *next; w && list_length(e->l) > 0; w = next) {
        next = w->next;
        size_t pos = 0;
        store_rc rc = STORE_OK;
        if (!w->m) {
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
        entry_unqueue(e, w);
        if (!w->claim(w))
            continue;                   /* ended already (deadline, shutdown): no line */
        uint64_t l = 0;
        if (w->gone && w->gone(w))
            rc = STORE_EMPTY;           /* nobody will read it: takes no line */
        else if (rc == STORE_OK && !w->m)
            rc = store_read_locked(st, e, w->end, w->keep, w->n, w->lease_ms, &w->ids,
                                   &w->out, &w->count, &l);
        else if (rc == STORE_OK)
            rc = store_take_locked(st, e, &pos, 1, w->keep, w->lease_ms, &w->ids, &w->out,
                                   &w->count, &l);
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
    if (w->m) {
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
        w->where = e;
        queue_append(&e->wait_head, &e->wait_tail, w);
        e->waiters++;
    }
    return rc;
}

static store_rc wait_on(store *st, store_waiter *w, buf *out, size_t *count)
{
    uint64_t lsn = 0;
    store_rc rc;
    *count = 0;
    entry *e = store_lookup(st, w->name);
    if (!e) {
        /* Queue on the name, unless it was created meanwhile (creation adopts orphans
         * under the same lock, so no line can slip between). */
        pthread_mutex_lock(&st->add_lock);
        e = store_lookup(st, w->name);
        rc = STORE_NOT_LOADED;
        if (!e && w->arm(w) == 0) {
            orphan_append(st, w);
            rc = STORE_WAITING;
        }
        pthread_mutex_unlock(&st->add_lock);
        if (!e)
            return rc;
    }
    pthread_mutex_lock(&e->lock);
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
    return wait_on(st, w, out, &count);
}

void store_unwait(store *st, store_waiter *w)
{
    pthread_mutex_lock(&st->add_lock);
    entry *e = w->where;
    if (!e && w->queued)
        queue_remove(&st->orphans, NULL, w);
    pthread_mutex_unlock(&st->add_lock);
    if (!e)
        return;
    pthread_mutex_lock(&e->lock);
    if (w->queued)
        entry_unqueue(e, w);
    pthread_mutex_unlock(&e->lock);
}
