/* SPDX-License-Identifier: Apache-2.0 */
/* keys.c - the keys (keys.h): a hash table of names under one lock, each key with
 * its value, version, waiters and open counter leases; every change recorded first, then
 * applied, then the key's waiters served. */
#include "meet/keys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hash.h"
#include "base/heap.h"
#include "base/num.h"
#include "keys_core.h"
#include "keys_table.h"

/* ---- changes ------------------------------------------------------------------------ */

int keys_record(store *st, const store_key_rec *r, uint64_t *lsn)
{
    return store_record_key(st, r, lsn);
}

/* Room for k to hold len bytes: maxKeys for a new key, maxBytes. Returns 0 (reserved) or
 * -1. */
static int reserve(store *st, keys_table *t, key *k, size_t len)
{
    if (!k->version && store_get_limits(st)->max_keys && t->count >= store_get_limits(st)->max_keys)
        return -1;
    return store_bytes_reserve(st, len + (k->version ? 0 : k->name_len));
}

static void unreserve(store *st, key *k, size_t len)
{
    store_bytes_release(st, len + (k->version ? 0 : k->name_len));
}

/* INCR of k by q to nv (which fits): recorded, applied, a lease linked. */
static store_rc apply_incr(store *st, keys_table *t, key *k, const key_incr *q, int64_t nv,
                           key_out *o)
{
    char num[24];
    size_t len = keys_format(nv, num);
    char *v = keys_copy_bytes(num, len);
    klease *l = q->lease_ms > 0 ? calloc(1, sizeof *l) : NULL;
    if (!v || (q->lease_ms > 0 && !l)) {
        free(v);
        free(l);
        return STORE_NOMEM;
    }
    if (reserve(st, t, k, len) != 0) {
        free(v);
        free(l);
        return STORE_FULL;
    }
    int64_t until = q->ttl_ms > 0 ? clock_wall_ms() + q->ttl_ms : 0;
    store_key_rec r = {STORE_KEY_SET, k->name, 0, 0, until, q->by, k->version + 1, num, len};
    if (l) {
        l->id = keys_lease_new_id(t);
        l->until = clock_wall_ms() + q->lease_ms;
        l->by = q->by;
        l->heap_at = HEAP_NONE;
        r.kind = STORE_KEY_LEASE;
        r.id = l->id;
        r.until = l->until;
    }
    uint64_t lsn;
    if (keys_record(st, &r, &lsn) != 0) {
        unreserve(st, k, len);
        free(v);
        free(l);
        return STORE_JOURNAL;
    }
    keys_put_value(t, st, k, v, len);
    if (until && keys_ttl_set(t, k, until) != 0)
        store_mark_broken(st);     /* the record says it expires; memory not */
    o->lease = 0;
    if (l) {
        if (keys_lease_link(t, k, l) != 0) {
            free(l);          /* the record says lent; memory keeps it for good */
            store_mark_broken(st);
        } else {
            o->lease = l->id;
        }
    }
    o->value = nv;
    o->version = k->version;
    o->lsn = lsn;
    return STORE_OK;
}

/* ---- waiters ------------------------------------------------------------------------ */

static void enqueue(keys_table *t, key *k, key_waiter *w)
{
    key_waiter **head = w->incr ? &k->incr_head : &k->watch_head;
    key_waiter **tail = w->incr ? &k->incr_tail : &k->watch_tail;
    w->next = NULL;
    w->prev = *tail;
    if (*tail)
        (*tail)->next = w;
    else
        *head = w;
    *tail = w;
    w->where = k;
    t->waiters++;
}

static void dequeue(keys_table *t, key_waiter *w)
{
    key *k = w->where;
    key_waiter **head = w->incr ? &k->incr_head : &k->watch_head;
    key_waiter **tail = w->incr ? &k->incr_tail : &k->watch_tail;
    if (w->prev)
        w->prev->next = w->next;
    else
        *head = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        *tail = w->prev;
    w->prev = w->next = NULL;
    w->where = NULL;
    t->waiters--;
}

/* A watcher's answer: k's state now. */
static store_rc watch_answer(key *k, key_waiter *w)
{
    buf_clear(&w->value);
    w->o.version = k ? k->version : 0;
    if (!k || !k->version)
        return STORE_NO_KEY;
    buf_append(&w->value, k->value, k->len);
    return w->value.oom ? STORE_NOMEM : STORE_OK;
}

/* Chains w (served with rc) to *done, for finish() after the lock. */
static void done_push(key_waiter **done, key_waiter *w, store_rc rc)
{
    w->rc = rc;
    w->prev = NULL;
    w->next = *done;
    *done = w;
}

/* After k changed (the change's record at lsn): INCR waiters in order while they fit,
 * then every watcher. Call with the lock held. */
static void serve_locked(store *st, keys_table *t, key *k, uint64_t lsn, key_waiter **done)
{
    if (k->version && k->run) {       /* ONCE: done; the change's record ends the run too */
        klease *l = k->run;
        keys_lease_unlink(t, l);
        free(l);
    }
    while (k->incr_head) {
        key_waiter *w = k->incr_head;
        int64_t nv;
        store_rc rc = keys_add(k->value, k->len, k->version != 0, w->q.by, w->q.min,
                               w->q.max, &nv);
        if (rc == STORE_BOUND)
            break;
        dequeue(t, w);
        if (!w->claim(w))
            continue;                 /* ended already: its deadline or the shutdown */
        if (w->gone(w)) {
            done_push(done, w, STORE_EMPTY);   /* nobody to answer: change nothing */
            continue;
        }
        if (rc == STORE_OK)
            rc = apply_incr(st, t, k, &w->q, nv, &w->o);
        if (rc == STORE_OK)
            lsn = w->o.lsn;
        done_push(done, w, rc);
    }
    while (k->watch_head) {
        key_waiter *w = k->watch_head;
        dequeue(t, w);
        if (!w->claim(w))
            continue;
        store_rc rc = watch_answer(k, w);
        w->o.lsn = lsn;
        done_push(done, w, rc);
    }
}

void keys_unqueue_all_locked(keys_table *t, key *k, store_rc rc, key_waiter **done)
{
    while (k->incr_head || k->watch_head) {
        key_waiter *w = k->incr_head ? k->incr_head : k->watch_head;
        dequeue(t, w);
        if (w->claim(w))
            done_push(done, w, rc);
    }
}

void keys_finish(key_waiter *done)
{
    while (done) {
        key_waiter *w = done;
        done = w->next;
        w->next = NULL;
        w->served(w, w->rc);
    }
}

/* ---- the commands ------------------------------------------------------------------- */

/* SET of k (NULL: ENOMEM) under the lock. */
static store_rc set_locked(store *st, keys_table *t, key *k, const char *name,
                           const char *value, size_t len, int64_t if_version, int64_t ttl_ms,
                           uint64_t *version, uint64_t *lsn, key_waiter **done)
{
    store_rc rc = STORE_OK;
    char *v = NULL;
    if (!k) {
        rc = STORE_NOMEM;
    } else if (if_version >= 0 && (uint64_t)if_version != k->version) {
        rc = STORE_VERSION;
        *version = k->version;
    } else if (!(v = keys_copy_bytes(value, len))) {
        rc = STORE_NOMEM;
    } else if (reserve(st, t, k, len) != 0) {
        rc = STORE_FULL;
    } else {
        int64_t until = ttl_ms > 0 ? clock_wall_ms() + ttl_ms : 0;
        store_key_rec r = {STORE_KEY_SET, name, 1, 0, until, 0, k->version + 1, value, len};
        if (keys_record(st, &r, lsn) != 0) {
            unreserve(st, k, len);
            rc = STORE_JOURNAL;
        } else {
            keys_drop_leases(t, k);        /* a SET without TTL= ends an expiry too */
            keys_put_value(t, st, k, v, len);
            if (until && keys_ttl_set(t, k, until) != 0)
                store_mark_broken(st);
            v = NULL;
            *version = k->version;
            serve_locked(st, t, k, *lsn, done);
        }
    }
    free(v);
    return rc;
}

store_rc keys_set(store *st, const char *name, const char *value, size_t len,
                       int64_t if_version, uint64_t *version, uint64_t *lsn)
{
    return keys_set_ttl(st, name, value, len, if_version, 0, version, lsn);
}

store_rc keys_set_ttl(store *st, const char *name, const char *value, size_t len,
                           int64_t if_version, int64_t ttl_ms, uint64_t *version,
                           uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    uint64_t scratch;
    lsn = lsn ? lsn : &scratch;
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find_or_make(t, name);
    store_rc rc = set_locked(st, t, k, name, value, len, if_version, ttl_ms, version, lsn,
                             &done);
    if (k)
        keys_maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

/* ---- ONCE's runs ---------------------------------------------------------------------- */

/* Records that k's run is now lease id until `until` (id 0: none). */
static int record_run(store *st, key *k, uint64_t id, int64_t until, int64_t ttl_ms,
                      uint64_t *lsn)
{
    store_key_rec r = {STORE_KEY_RUN, k->name, 0, id, until, ttl_ms, 0, NULL, 0};
    return keys_record(st, &r, lsn);
}

/* A new run lease on k (which has none) for q's lease_ms, whose DONE gives the key q's
 * ttl_ms: recorded, linked; o->lease. */
static store_rc run_grant_locked(store *st, keys_table *t, key *k, const key_incr *q,
                                 key_out *o)
{
    int64_t lease_ms = q->lease_ms;
    klease *l = calloc(1, sizeof *l);
    if (!l)
        return STORE_NOMEM;
    l->id = keys_lease_new_id(t);
    l->until = clock_wall_ms() + lease_ms;
    l->run = 1;
    l->by = q->ttl_ms;
    l->heap_at = HEAP_NONE;
    if (record_run(st, k, l->id, l->until, l->by, &o->lsn) != 0) {
        free(l);
        return STORE_JOURNAL;
    }
    if (keys_lease_link(t, k, l) != 0) {
        free(l);
        store_mark_broken(st);
        return STORE_NOMEM;
    }
    o->lease = l->id;
    o->version = 0;
    return STORE_OK;
}

/* Run l ends unfinished (RELEASE, or its deadline): the first ONCE waiter still there
 * gets a new run, in the same record; with none, the next caller will. */
static store_rc run_end_locked(store *st, keys_table *t, klease *l, key_out *o,
                               key_waiter **done)
{
    key *k = l->k;
    key_waiter *w = k->watch_head, *taker = NULL;
    while (w && !taker) {
        key_waiter *nx = w->next;
        if (w->once) {
            dequeue(t, w);
            if (w->claim(w)) {
                if (w->gone(w))
                    done_push(done, w, STORE_EMPTY);
                else
                    taker = w;
            }
        }
        w = nx;
    }
    memset(o, 0, sizeof *o);
    keys_lease_unlink(t, l);
    free(l);
    if (taker) {
        store_rc rc = run_grant_locked(st, t, k, &taker->q, &taker->o);
        o->lsn = taker->o.lsn;
        done_push(done, taker, rc);
        if (rc == STORE_OK)
            return STORE_OK;
    }
    /* An unrecorded end only shortens the run on replay: its deadline ends it there. */
    record_run(st, k, 0, 0, 0, &o->lsn);
    return STORE_OK;
}

store_rc keys_done(store *st, const char *name, uint64_t id, const char *value,
                        size_t len, uint64_t *version, uint64_t *lsn)
{
    return keys_done_ttl(st, name, id, value, len, 0, version, lsn);
}

store_rc keys_done_ttl(store *st, const char *name, uint64_t id, const char *value,
                            size_t len, int64_t ttl_ms, uint64_t *version, uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    *lsn = 0;
    *version = 0;
    pthread_mutex_lock(&t->lock);
    klease *l = keys_lease_find(t, id);
    store_rc rc = STORE_NO_LEASE;
    if (l && l->run && strcmp(l->k->name, name) == 0) {
        key *k = l->k;
        /* DONE's own TTL=, else the one its ONCE asked for. */
        rc = set_locked(st, t, k, name, value, len, -1, ttl_ms ? ttl_ms : l->by, version, lsn,
                        &done);
        keys_maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

store_rc keys_run_renew(store *st, const char *name, uint64_t id, int64_t lease_ms,
                             uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    klease *l = keys_lease_find(t, id);
    store_rc rc = STORE_NO_LEASE;
    if (l && l->run && strcmp(l->k->name, name) == 0) {
        int64_t until = clock_wall_ms() + lease_ms;
        rc = STORE_JOURNAL;
        if (record_run(st, l->k, l->id, until, l->by, lsn) == 0) {
            l->until = until;
            heap_moved(&t->deadlines, l);
            rc = STORE_OK;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc keys_del_locked(store *st, key *k, uint64_t *lsn, key_waiter **done)
{
    keys_table *t = store_keys(st);
    store_key_rec r = {STORE_KEY_DEL, k->name, 0, 0, 0, 0, 0, NULL, 0};
    if (keys_record(st, &r, lsn) != 0)
        return STORE_JOURNAL;
    keys_drop_leases(t, k);
    store_bytes_release(st, k->len + k->name_len);
    free(k->value);
    k->value = NULL;
    k->len = 0;
    k->version = 0;
    t->count--;
    serve_locked(st, t, k, *lsn, done);
    return STORE_OK;
}

store_rc keys_del(store *st, const char *name, int64_t if_version, uint64_t *version,
                       uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    uint64_t scratch;
    lsn = lsn ? lsn : &scratch;
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find(t, name, strlen(name));
    store_rc rc = STORE_OK;
    *version = k ? k->version : 0;
    if (!k || !k->version) {
        rc = STORE_NO_KEY;
    } else if (if_version >= 0 && (uint64_t)if_version != k->version) {
        rc = STORE_VERSION;
    } else {
        rc = keys_del_locked(st, k, lsn, &done);
    }
    if (k)
        keys_maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

/* INCR now, under the lock; k may be made. */
static store_rc incr_locked(store *st, keys_table *t, key *k, const key_incr *q, key_out *o,
                            key_waiter **done)
{
    int64_t nv;
    store_rc rc = keys_add(k->value, k->len, k->version != 0, q->by, q->min, q->max, &nv);
    if (rc == STORE_OK)
        rc = apply_incr(st, t, k, q, nv, o);
    if (rc == STORE_OK)
        serve_locked(st, t, k, o->lsn, done);
    else
        o->version = k->version;
    return rc;
}

store_rc keys_incr(store *st, const char *name, const key_incr *q, key_out *o)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&t->lock);
    key *k = keys_find_or_make(t, name);
    store_rc rc = k ? incr_locked(st, t, k, q, o, &done) : STORE_NOMEM;
    if (k)
        keys_maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

store_rc keys_wait(store *st, key_waiter *w)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    memset(&w->o, 0, sizeof w->o);
    w->prev = w->next = NULL;
    w->where = NULL;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find_or_make(t, w->name);
    store_rc rc;
    if (!k) {
        rc = STORE_NOMEM;
    } else if (!w->incr && k->version != w->version) {
        rc = watch_answer(k, w);
    } else if (w->once && !k->run) {
        rc = run_grant_locked(st, t, k, &w->q, &w->o);
    } else if (w->incr && !k->incr_head &&
               (rc = incr_locked(st, t, k, &w->q, &w->o, &done)) != STORE_BOUND) {
        ;                                       /* done, or failed otherwise */
    } else if (w->arm(w) == 0) {
        enqueue(t, k, w);
        rc = STORE_WAITING;
    } else {
        rc = w->incr ? STORE_BOUND : watch_answer(k, w);
    }
    if (k)
        keys_maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

void keys_unwait(store *st, key_waiter *w)
{
    keys_table *t = store_keys(st);
    pthread_mutex_lock(&t->lock);
    key *k = w->where;
    if (k) {
        dequeue(t, w);
        keys_maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
}

/* Settles lease l of k: undo takes its increment back (recorded first). */
static store_rc settle_locked(store *st, keys_table *t, klease *l, int undo, key_out *o,
                              key_waiter **done)
{
    key *k = l->k;
    int64_t nv = 0;
    char num[24];
    size_t len = 0;
    char *v = NULL;
    if (undo) {
        if (keys_add(k->value, k->len, 1, 0, INT64_MIN, INT64_MAX, &nv) != STORE_OK ||
            __builtin_sub_overflow(nv, l->by, &nv))
            nv = nv < 0 ? INT64_MIN : INT64_MAX;       /* cannot be: SET drops leases */
        len = keys_format(nv, num);
        if (!(v = keys_copy_bytes(num, len)))
            return STORE_NOMEM;
        /* Taking back is never refused for want of room: it was counted before. */
        if (len > k->len)
            store_bytes_add(st, len - k->len);
        else
            store_bytes_release(st, k->len - len);
    }
    store_key_rec r = {STORE_KEY_SETTLE, k->name, undo, l->id, 0, l->by,
                       k->version + (undo ? 1 : 0), undo ? num : k->value,
                       undo ? len : k->len};
    uint64_t lsn;
    if (keys_record(st, &r, &lsn) != 0) {
        if (undo) {
            if (len > k->len)
                store_bytes_release(st, len - k->len);
            else
                store_bytes_add(st, k->len - len);
        }
        free(v);
        return STORE_JOURNAL;
    }
    keys_lease_unlink(t, l);
    free(l);
    if (undo) {
        free(k->value);
        k->value = v;
        k->len = len;
        k->version++;
    }
    o->value = nv;
    o->version = k->version;
    o->lsn = lsn;
    o->lease = 0;
    if (undo)
        serve_locked(st, t, k, lsn, done);
    return STORE_OK;
}

store_rc keys_settle(store *st, const char *name, int undo, uint64_t id, key_out *o)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&t->lock);
    klease *l = keys_lease_find(t, id);
    store_rc rc = STORE_NO_LEASE;
    if (l && ((l->run && !undo) || l->ttl))
        l = NULL;                          /* a run ends by DONE, not ACK; an expiry never */
    if (l && l->k->name_len == strlen(name) && memcmp(l->k->name, name, l->k->name_len) == 0) {
        key *k = l->k;
        rc = l->run ? run_end_locked(st, t, l, o, &done) : settle_locked(st, t, l, undo, o, &done);
        keys_maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return rc;
}

size_t keys_lease_expire(store *st, int64_t now, int64_t *next)
{
    keys_table *t = store_keys(st);
    size_t n = 0;
    key_waiter *done = NULL;
    *next = 0;
    if (!t)
        return 0;                /* a store of lists only */
    pthread_mutex_lock(&t->lock);
    klease *l;
    while ((l = heap_top(&t->deadlines)) && l->until <= now) {
        key_out o;
        key *k = l->k;
        uint64_t lsn;
        if ((l->ttl ? keys_del_locked(st, k, &lsn, &done)      /* TTL=: the key goes */
             : l->run ? run_end_locked(st, t, l, &o, &done)
                      : settle_locked(st, t, l, 1, &o, &done)) != STORE_OK) {
            *next = now + 1000;          /* the journal refuses: again in a second */
            break;
        }
        keys_maybe_drop(t, k);
        n++;
    }
    if (!*next && (l = heap_top(&t->deadlines)))
        *next = l->until;
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return n;
}
