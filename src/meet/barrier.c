/* SPDX-License-Identifier: Apache-2.0 */
/* barrier.c - named cyclic barriers: per barrier the arrivals of the gathering
 * generation, opened when full, on a RELEASE timeout or by hand (meet/barrier.h). One
 * lock for the table: an arrival is a few pointer moves, and an opening hands its whole
 * generation back in one step. */
#include "meet/barrier.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct barrier {
    uint64_t generation;       /* the gathering generation */
    uint32_t parties;          /* its PARTIES (the last one's while none waits) */
    uint32_t arrived;          /* queued now */
    barrier_arrival *head, *tail;
    size_t len;
    char name[];
} barrier;

struct barrier_table {
    pthread_mutex_t lock;
    barrier **v;               /* sorted by name (bytes, then length) */
    size_t n, cap, max;
};

barrier_table *barrier_table_create(size_t max_barriers)
{
    barrier_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    t->max = max_barriers;
    return t;
}

void barrier_table_free(barrier_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

static int name_cmp(const barrier *b, const char *name, size_t len)
{
    size_t m = b->len < len ? b->len : len;
    int c = memcmp(b->name, name, m);
    return c ? c : (b->len > len) - (b->len < len);
}

/* The place of name in t->v: its index when found (*found 1), else where it goes. */
static size_t find(const barrier_table *t, const char *name, size_t len, int *found)
{
    size_t lo = 0, hi = t->n;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(t->v[mid], name, len);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The barrier of name, created if absent (*created 1); NULL with *rc set when it cannot
 * be. */
static barrier *get(barrier_table *t, const char *name, size_t len, barrier_rc *rc,
                    int *created)
{
    int found;
    size_t at = find(t, name, len, &found);
    *created = !found;
    if (found)
        return t->v[at];
    if (t->max && t->n >= t->max) {
        *rc = BARRIER_FULL;
        return NULL;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        barrier **v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            *rc = BARRIER_NOMEM;
            return NULL;
        }
        t->v = v;
        t->cap = cap;
    }
    barrier *b = calloc(1, sizeof *b + len + 1);
    if (!b) {
        *rc = BARRIER_NOMEM;
        return NULL;
    }
    memcpy(b->name, name, len);
    b->len = len;
    memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof *t->v);
    t->v[at] = b;
    t->n++;
    return b;
}

/* Takes b, just created and never waited at, out of the table again. */
static void forget(barrier_table *t, barrier *b)
{
    int found;
    size_t at = find(t, b->name, b->len, &found);
    memmove(t->v + at, t->v + at + 1, (t->n - at - 1) * sizeof *t->v);
    t->n--;
    free(b);
}

static void unlink_arrival(barrier *b, barrier_arrival *a)
{
    if (a->prev)
        a->prev->next = a->next;
    else
        b->head = a->next;
    if (a->next)
        a->next->prev = a->prev;
    else
        b->tail = a->prev;
    a->prev = a->next = NULL;
    a->where = NULL;
    b->arrived--;
}

static void append(barrier_arrival **head, barrier_arrival **tail, barrier_arrival *a)
{
    a->next = NULL;
    a->prev = *tail;
    if (*tail)
        (*tail)->next = a;
    else
        *head = a;
    *tail = a;
}

/* Drops the queued arrivals whose client has gone, appending them to the batch. */
static void drop_gone(barrier *b, barrier_arrival **head, barrier_arrival **tail)
{
    for (barrier_arrival *a = b->head, *nx; a; a = nx) {
        nx = a->next;
        if (!a->gone || !a->gone(a))
            continue;
        unlink_arrival(b, a);
        a->outcome = BARRIER_DROPPED;
        a->generation = b->generation;
        append(head, tail, a);
    }
}

/* Opens b's gathering generation: every queued arrival (then extra, when not NULL, last)
 * gets how and its place, and joins the batch; the next generation starts empty. */
static void open_generation(barrier *b, barrier_outcome how, barrier_arrival *extra,
                            barrier_arrival **head, barrier_arrival **tail)
{
    uint32_t i = 0;
    while (b->head) {
        barrier_arrival *a = b->head;
        unlink_arrival(b, a);
        a->outcome = how;
        a->generation = b->generation;
        a->arrival = ++i;
        a->parties = b->parties;
        append(head, tail, a);
    }
    if (extra) {
        extra->outcome = how;
        extra->generation = b->generation;
        extra->arrival = ++i;
        extra->parties = b->parties;
    }
    b->generation++;
}

barrier_rc barrier_arrive(barrier_table *t, const char *name, size_t len, uint32_t parties,
                          barrier_arrival *a, int wait, uint32_t *arrived, uint32_t *gen_parties,
                          barrier_arrival **batch)
{
    barrier_arrival *head = NULL, *tail = NULL;
    barrier_rc rc = BARRIER_OK;
    int created = 0;
    *batch = NULL;
    pthread_mutex_lock(&t->lock);
    barrier *b = get(t, name, len, &rc, &created);
    if (!b)
        goto out;
    uint32_t old_parties = b->parties;
    if (b->arrived > 0 && b->parties != parties) {
        drop_gone(b, &head, &tail);       /* only those still there set PARTIES */
        if (b->arrived > 0) {
            *gen_parties = b->parties;
            rc = BARRIER_MISMATCH;
            goto out;
        }
    }
    /* A full generation drops the gone first: fewer than PARTIES left, it waits on. */
    if (b->arrived + 1 >= parties)
        drop_gone(b, &head, &tail);
    b->parties = parties;
    if (b->arrived + 1 >= parties) {
        open_generation(b, BARRIER_RELEASED_FULL, a, &head, &tail);
    } else if (!wait) {
        if (a->release_on_timeout) {
            open_generation(b, BARRIER_RELEASED_TIMEOUT, a, &head, &tail);
        } else {
            *arrived = b->arrived + 1;
            rc = BARRIER_TIMED_OUT;
        }
    } else if (a->arm(a) != 0) {
        rc = BARRIER_NOMEM;
    } else {
        append(&b->head, &b->tail, a);
        a->where = b;
        b->arrived++;
        rc = BARRIER_WAITING;
    }
    /* An arrival that neither waits nor opens leaves the barrier as it found it. */
    if (rc != BARRIER_OK && rc != BARRIER_WAITING) {
        b->parties = old_parties;
        if (created)
            forget(t, b);
    }
out:
    pthread_mutex_unlock(&t->lock);
    *batch = head;
    return rc;
}

int barrier_leave(barrier_table *t, barrier_arrival *a, uint32_t *arrived)
{
    pthread_mutex_lock(&t->lock);
    barrier *b = a->where;
    if (b) {
        *arrived = b->arrived;
        unlink_arrival(b, a);
    }
    pthread_mutex_unlock(&t->lock);
    return b != NULL;
}

int barrier_expire(barrier_table *t, barrier_arrival *a, barrier_arrival **batch)
{
    barrier_arrival *head = NULL, *tail = NULL;
    pthread_mutex_lock(&t->lock);
    barrier *b = a->where;
    if (b) {
        /* a stays at its place in arrival order; if its own client has gone, it is
         * dropped like the others, and its deadline still opens the generation. */
        drop_gone(b, &head, &tail);
        open_generation(b, BARRIER_RELEASED_TIMEOUT, NULL, &head, &tail);
    }
    pthread_mutex_unlock(&t->lock);
    *batch = head;
    return b != NULL;
}

barrier_rc barrier_open(barrier_table *t, const char *name, size_t len, barrier_arrival **batch,
                        uint32_t *released, uint64_t *generation)
{
    barrier_arrival *head = NULL, *tail = NULL;
    int found;
    *released = 0;
    pthread_mutex_lock(&t->lock);
    size_t at = find(t, name, len, &found);
    if (found) {
        barrier *b = t->v[at];
        drop_gone(b, &head, &tail);
        *generation = b->generation;
        *released = b->arrived;
        if (b->arrived)
            open_generation(b, BARRIER_RELEASED_HAND, NULL, &head, &tail);
    }
    pthread_mutex_unlock(&t->lock);
    *batch = head;
    return found ? BARRIER_OK : BARRIER_NOT_FOUND;
}

size_t barrier_each(barrier_table *t, void (*fn)(const barrier_info *b, void *ctx), void *ctx)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n;
    for (size_t i = 0; i < n; i++) {
        barrier *b = t->v[i];
        barrier_info info = {b->name, b->len, b->parties, b->arrived, b->generation};
        fn(&info, ctx);
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}
