/* store_keys.c - the keys (keys.h): a hash table of names under one lock, each key with
 * its value, version, waiters and open counter leases; every change recorded first, then
 * applied, then the key's waiters served. */
#include "store/keys.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/hash.h"
#include "base/heap.h"
#include "base/num.h"
#include "store_keys.h"
#include "store_take.h"

typedef struct key key;

/* An increment on loan. */
typedef struct klease {
    uint64_t id;
    int64_t until;               /* wall-clock ms */
    int64_t by;
    key *k;
    struct klease *hnext;        /* in its id bucket */
    struct klease *prev, *next;  /* in its key's leases */
    uint32_t heap_at;
} klease;

/* A key; version 0: it does not exist, and the entry stays only for its waiters. */
struct key {
    key *hnext;
    uint64_t version;
    char *value;
    size_t len;
    key_waiter *incr_head, *incr_tail;     /* INCRs waiting to fit, in arrival order */
    key_waiter *watch_head, *watch_tail;   /* GETs waiting for a change */
    klease *leases;
    size_t name_len;
    char name[];
};

struct keys_table {
    pthread_mutex_t lock;
    key **b;
    size_t nb, entries;          /* buckets; entries (ghosts included) */
    size_t count;                /* keys that exist */
    size_t waiters;
    klease **lb;
    size_t lnb, leases;
    heap deadlines;
    uint64_t counter, idkey;
};

/* ---- arithmetic --------------------------------------------------------------------- */

store_rc keys_add(const char *value, size_t len, int exists, int64_t by, int64_t min,
                  int64_t max, int64_t *out)
{
    int64_t cur = 0;
    if (exists && (len == 0 || len > 20 ||
                   num_parse_i64(value, len, INT64_MIN, INT64_MAX, &cur) != 0))
        return STORE_NOT_INT;
    if (__builtin_add_overflow(cur, by, out))
        return STORE_OVERFLOW;
    if (*out < min || *out > max)
        return STORE_BOUND;
    return STORE_OK;
}

size_t keys_format(int64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t k = 0;
    if (v < 0)
        out[k++] = '-';
    while (n)
        out[k++] = tmp[--n];
    out[k] = '\0';
    return k;
}

/* ---- the table ---------------------------------------------------------------------- */

keys_table *store_keys_create(void)
{
    keys_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nb = 64;
    t->lnb = 64;
    t->b = calloc(t->nb, sizeof *t->b);
    t->lb = calloc(t->lnb, sizeof *t->lb);
    if (!t->b || !t->lb || pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t->b);
        free(t->lb);
        free(t);
        return NULL;
    }
    heap_init(&t->deadlines, offsetof(klease, until), offsetof(klease, heap_at));
    if (getrandom(&t->idkey, sizeof t->idkey, 0) != sizeof t->idkey)
        t->idkey = (uint64_t)clock_wall_ms() * 0x9E3779B97F4A7C15ULL;
    return t;
}

void store_keys_free(store *st)
{
    keys_table *t = st->keys;
    if (!t)
        return;
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i], *next; k; k = next) {
            next = k->hnext;
            for (klease *l = k->leases, *ln; l; l = ln) {
                ln = l->next;
                free(l);
            }
            free(k->value);
            free(k);
        }
    heap_free(&t->deadlines);
    free(t->b);
    free(t->lb);
    pthread_mutex_destroy(&t->lock);
    free(t);
    st->keys = NULL;
}

static key *find(keys_table *t, const char *name, size_t len)
{
    for (key *k = t->b[hash_fnv1a(name, len) & (t->nb - 1)]; k; k = k->hnext)
        if (k->name_len == len && memcmp(k->name, name, len) == 0)
            return k;
    return NULL;
}

static void grow(keys_table *t)
{
    size_t nb = t->nb * 2;
    key **b = calloc(nb, sizeof *b);
    if (!b)
        return;                   /* longer chains, still correct */
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i], *next; k; k = next) {
            next = k->hnext;
            size_t h = hash_fnv1a(k->name, k->name_len) & (nb - 1);
            k->hnext = b[h];
            b[h] = k;
        }
    free(t->b);
    t->b = b;
    t->nb = nb;
}

/* The entry of name, made (not existing: version 0) if absent; NULL on ENOMEM. */
static key *find_or_make(keys_table *t, const char *name)
{
    size_t len = strlen(name);
    key *k = find(t, name, len);
    if (k)
        return k;
    if (!(k = calloc(1, sizeof *k + len + 1)))
        return NULL;
    memcpy(k->name, name, len);
    k->name_len = len;
    if (t->entries >= t->nb)
        grow(t);
    size_t h = hash_fnv1a(name, len) & (t->nb - 1);
    k->hnext = t->b[h];
    t->b[h] = k;
    t->entries++;
    return k;
}

/* Frees k if it neither exists nor has waiters. */
static void maybe_drop(keys_table *t, key *k)
{
    if (k->version || k->incr_head || k->watch_head)
        return;
    key **pp = &t->b[hash_fnv1a(k->name, k->name_len) & (t->nb - 1)];
    while (*pp != k)
        pp = &(*pp)->hnext;
    *pp = k->hnext;
    t->entries--;
    free(k->value);
    free(k);
}

/* ---- counter leases ------------------------------------------------------------------ */

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static klease *lease_find(keys_table *t, uint64_t id)
{
    for (klease *l = t->lb[mix(id) & (t->lnb - 1)]; l; l = l->hnext)
        if (l->id == id)
            return l;
    return NULL;
}

static uint64_t lease_new_id(keys_table *t)
{
    uint64_t id;
    do
        id = mix(++t->counter ^ t->idkey);
    while (id == 0 || lease_find(t, id));
    return id;
}

/* Links l (id, until, by set) to k. Returns 0, or -1 on ENOMEM (not linked). */
static int lease_link(keys_table *t, key *k, klease *l)
{
    if (heap_push(&t->deadlines, l) != 0)
        return -1;
    if (t->leases >= t->lnb) {
        size_t nb = t->lnb * 2;
        klease **b = calloc(nb, sizeof *b);
        if (b) {
            for (size_t i = 0; i < t->lnb; i++)
                for (klease *o = t->lb[i], *next; o; o = next) {
                    next = o->hnext;
                    o->hnext = b[mix(o->id) & (nb - 1)];
                    b[mix(o->id) & (nb - 1)] = o;
                }
            free(t->lb);
            t->lb = b;
            t->lnb = nb;
        }
    }
    size_t h = mix(l->id) & (t->lnb - 1);
    l->hnext = t->lb[h];
    t->lb[h] = l;
    l->k = k;
    l->prev = NULL;
    l->next = k->leases;
    if (k->leases)
        k->leases->prev = l;
    k->leases = l;
    t->leases++;
    return 0;
}

static void lease_unlink(keys_table *t, klease *l)
{
    klease **pp = &t->lb[mix(l->id) & (t->lnb - 1)];
    while (*pp != l)
        pp = &(*pp)->hnext;
    *pp = l->hnext;
    heap_remove(&t->deadlines, l);
    if (l->prev)
        l->prev->next = l->next;
    else
        l->k->leases = l->next;
    if (l->next)
        l->next->prev = l->prev;
    t->leases--;
}

static void drop_leases(keys_table *t, key *k)
{
    while (k->leases) {
        klease *l = k->leases;
        lease_unlink(t, l);
        free(l);
    }
}

/* ---- changes ------------------------------------------------------------------------ */

static int record(store *st, const store_key_rec *r, uint64_t *lsn)
{
    *lsn = 0;
    return st->rec ? st->rec->key(st->rec_ctx, r, lsn) : 0;
}

/* Gives k the value v[0..len) (a buffer made by the caller, owned from now on) and the
 * next version; bytes already reserved. */
static void put_value(keys_table *t, store *st, key *k, char *v, size_t len)
{
    if (k->version)
        store_bytes_release(st, k->len);
    else
        t->count++;
    free(k->value);
    k->value = v;
    k->len = len;
    k->version++;
}

/* Room for k to hold len bytes: maxKeys for a new key, maxBytes. Returns 0 (reserved) or
 * -1. */
static int reserve(store *st, keys_table *t, key *k, size_t len)
{
    if (!k->version && st->limits.max_keys && t->count >= st->limits.max_keys)
        return -1;
    return store_bytes_reserve(st, len + (k->version ? 0 : k->name_len));
}

static void unreserve(store *st, key *k, size_t len)
{
    store_bytes_release(st, len + (k->version ? 0 : k->name_len));
}

static char *copy_bytes(const char *s, size_t len)
{
    char *p = malloc(len ? len : 1);
    if (p && len)
        memcpy(p, s, len);
    return p;
}

/* INCR of k by q to nv (which fits): recorded, applied, a lease linked. */
static store_rc apply_incr(store *st, keys_table *t, key *k, const key_incr *q, int64_t nv,
                           key_out *o)
{
    char num[24];
    size_t len = keys_format(nv, num);
    char *v = copy_bytes(num, len);
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
    store_key_rec r = {STORE_KEY_SET, k->name, 0, 0, 0, q->by, k->version + 1, num, len};
    if (l) {
        l->id = lease_new_id(t);
        l->until = clock_wall_ms() + q->lease_ms;
        l->by = q->by;
        l->heap_at = HEAP_NONE;
        r.kind = STORE_KEY_LEASE;
        r.id = l->id;
        r.until = l->until;
    }
    uint64_t lsn;
    if (record(st, &r, &lsn) != 0) {
        unreserve(st, k, len);
        free(v);
        free(l);
        return STORE_JOURNAL;
    }
    put_value(t, st, k, v, len);
    o->lease = 0;
    if (l) {
        if (lease_link(t, k, l) != 0) {
            free(l);          /* the record says lent; memory keeps it for good */
            if (st->rec)
                st->rec->mark_broken(st->rec_ctx);
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

static void finish(key_waiter *done)
{
    while (done) {
        key_waiter *w = done;
        done = w->next;
        w->next = NULL;
        w->served(w, w->rc);
    }
}

/* ---- the commands ------------------------------------------------------------------- */

store_rc store_key_set(store *st, const char *name, const char *value, size_t len,
                       int64_t if_version, uint64_t *version, uint64_t *lsn)
{
    keys_table *t = st->keys;
    key_waiter *done = NULL;
    uint64_t scratch;
    lsn = lsn ? lsn : &scratch;
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    key *k = find_or_make(t, name);
    store_rc rc = STORE_OK;
    char *v = NULL;
    if (!k) {
        rc = STORE_NOMEM;
    } else if (if_version >= 0 && (uint64_t)if_version != k->version) {
        rc = STORE_VERSION;
        *version = k->version;
    } else if (!(v = copy_bytes(value, len))) {
        rc = STORE_NOMEM;
    } else if (reserve(st, t, k, len) != 0) {
        rc = STORE_FULL;
    } else {
        store_key_rec r = {STORE_KEY_SET, name, 1, 0, 0, 0, k->version + 1, value, len};
        if (record(st, &r, lsn) != 0) {
            unreserve(st, k, len);
            rc = STORE_JOURNAL;
        } else {
            drop_leases(t, k);
            put_value(t, st, k, v, len);
            v = NULL;
            *version = k->version;
            serve_locked(st, t, k, *lsn, &done);
        }
    }
    free(v);
    if (k)
        maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return rc;
}

store_rc store_key_get(store *st, const char *name, buf *out, uint64_t *version)
{
    keys_table *t = st->keys;
    pthread_mutex_lock(&t->lock);
    key *k = find(t, name, strlen(name));
    store_rc rc = STORE_NO_KEY;
    *version = 0;
    if (k && k->version) {
        buf_append(out, k->value, k->len);
        *version = k->version;
        rc = out->oom ? STORE_NOMEM : STORE_OK;
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc store_key_del(store *st, const char *name, int64_t if_version, uint64_t *version,
                       uint64_t *lsn)
{
    keys_table *t = st->keys;
    key_waiter *done = NULL;
    uint64_t scratch;
    lsn = lsn ? lsn : &scratch;
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    key *k = find(t, name, strlen(name));
    store_rc rc = STORE_OK;
    *version = k ? k->version : 0;
    if (!k || !k->version) {
        rc = STORE_NO_KEY;
    } else if (if_version >= 0 && (uint64_t)if_version != k->version) {
        rc = STORE_VERSION;
    } else {
        store_key_rec r = {STORE_KEY_DEL, name, 0, 0, 0, 0, 0, NULL, 0};
        if (record(st, &r, lsn) != 0) {
            rc = STORE_JOURNAL;
        } else {
            drop_leases(t, k);
            store_bytes_release(st, k->len + k->name_len);
            free(k->value);
            k->value = NULL;
            k->len = 0;
            k->version = 0;
            t->count--;
            serve_locked(st, t, k, *lsn, &done);
        }
    }
    if (k)
        maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return rc;
}

static int cmp_key(const void *a, const void *b)
{
    const key *x = *(key *const *)a, *y = *(key *const *)b;
    size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

long store_keys_list(store *st, const char *prefix,
                     void (*fn)(const char *name, const char *value, size_t len,
                                uint64_t version, void *ctx),
                     void *ctx)
{
    keys_table *t = st->keys;
    size_t plen = prefix ? strlen(prefix) : 0, n = 0;
    pthread_mutex_lock(&t->lock);
    key **v = malloc((t->count ? t->count : 1) * sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&t->lock);
        return -1;
    }
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i]; k; k = k->hnext)
            if (k->version && k->name_len >= plen && memcmp(k->name, prefix, plen) == 0)
                v[n++] = k;
    qsort(v, n, sizeof *v, cmp_key);
    for (size_t i = 0; i < n; i++)
        fn(v[i]->name, v[i]->value ? v[i]->value : "", v[i]->len, v[i]->version, ctx);
    pthread_mutex_unlock(&t->lock);
    free(v);
    return (long)n;
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

store_rc store_key_incr(store *st, const char *name, const key_incr *q, key_out *o)
{
    keys_table *t = st->keys;
    key_waiter *done = NULL;
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&t->lock);
    key *k = find_or_make(t, name);
    store_rc rc = k ? incr_locked(st, t, k, q, o, &done) : STORE_NOMEM;
    if (k)
        maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return rc;
}

store_rc store_key_wait(store *st, key_waiter *w)
{
    keys_table *t = st->keys;
    key_waiter *done = NULL;
    memset(&w->o, 0, sizeof w->o);
    w->prev = w->next = NULL;
    w->where = NULL;
    pthread_mutex_lock(&t->lock);
    key *k = find_or_make(t, w->name);
    store_rc rc;
    if (!k) {
        rc = STORE_NOMEM;
    } else if (!w->incr && k->version != w->version) {
        rc = watch_answer(k, w);
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
        maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return rc;
}

void store_key_unwait(store *st, key_waiter *w)
{
    keys_table *t = st->keys;
    pthread_mutex_lock(&t->lock);
    key *k = w->where;
    if (k) {
        dequeue(t, w);
        maybe_drop(t, k);
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
        if (!(v = copy_bytes(num, len)))
            return STORE_NOMEM;
        /* Taking back is never refused for want of room: it was counted before. */
        if (len > k->len)
            atomic_fetch_add(&st->bytes, len - k->len);
        else
            atomic_fetch_sub(&st->bytes, k->len - len);
    }
    store_key_rec r = {STORE_KEY_SETTLE, k->name, undo, l->id, 0, l->by,
                       k->version + (undo ? 1 : 0), undo ? num : k->value,
                       undo ? len : k->len};
    uint64_t lsn;
    if (record(st, &r, &lsn) != 0) {
        if (undo) {
            if (len > k->len)
                atomic_fetch_sub(&st->bytes, len - k->len);
            else
                atomic_fetch_add(&st->bytes, k->len - len);
        }
        free(v);
        return STORE_JOURNAL;
    }
    lease_unlink(t, l);
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

store_rc store_key_settle(store *st, const char *name, int undo, uint64_t id, key_out *o)
{
    keys_table *t = st->keys;
    key_waiter *done = NULL;
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&t->lock);
    klease *l = lease_find(t, id);
    store_rc rc = STORE_NO_LEASE;
    if (l && l->k->name_len == strlen(name) && memcmp(l->k->name, name, l->k->name_len) == 0) {
        key *k = l->k;
        rc = settle_locked(st, t, l, undo, o, &done);
        maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return rc;
}

size_t store_key_lease_expire(store *st, int64_t now, int64_t *next)
{
    keys_table *t = st->keys;
    size_t n = 0;
    key_waiter *done = NULL;
    *next = 0;
    pthread_mutex_lock(&t->lock);
    klease *l;
    while ((l = heap_top(&t->deadlines)) && l->until <= now) {
        key_out o;
        key *k = l->k;
        if (settle_locked(st, t, l, 1, &o, &done) != STORE_OK) {
            *next = now + 1000;          /* the journal refuses: again in a second */
            break;
        }
        maybe_drop(t, k);
        n++;
    }
    if (!*next && (l = heap_top(&t->deadlines)))
        *next = l->until;
    pthread_mutex_unlock(&t->lock);
    finish(done);
    return n;
}

size_t store_key_count(store *st)
{
    pthread_mutex_lock(&st->keys->lock);
    size_t n = st->keys->count;
    pthread_mutex_unlock(&st->keys->lock);
    return n;
}

size_t store_key_waiters(store *st)
{
    pthread_mutex_lock(&st->keys->lock);
    size_t n = st->keys->waiters;
    pthread_mutex_unlock(&st->keys->lock);
    return n;
}

/* ---- recovery and compaction -------------------------------------------------------- */

store_rc store_key_adopt(store *st, const char *name, const char *value, size_t len,
                         uint64_t version)
{
    keys_table *t = st->keys;
    pthread_mutex_lock(&t->lock);
    key *k = find_or_make(t, name);
    char *v = k ? copy_bytes(value, len) : NULL;
    store_rc rc = STORE_NOMEM;
    if (v) {
        /* What was kept before the crash is kept again, past the limits if need be. */
        atomic_fetch_add(&st->bytes, len + (k->version ? 0 : k->name_len));
        put_value(t, st, k, v, len);
        k->version = version;
        rc = STORE_OK;
    } else if (k) {
        maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc store_key_lease_adopt(store *st, const char *name, uint64_t id, int64_t until,
                               int64_t by)
{
    keys_table *t = st->keys;
    store_rc rc = STORE_NO_KEY;
    pthread_mutex_lock(&t->lock);
    key *k = find(t, name, strlen(name));
    if (k && k->version && !lease_find(t, id)) {
        klease *l = calloc(1, sizeof *l);
        rc = STORE_NOMEM;
        if (l) {
            l->id = id;
            l->until = until;
            l->by = by;
            l->heap_at = HEAP_NONE;
            if (lease_link(t, k, l) == 0)
                rc = STORE_OK;
            else
                free(l);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int store_each_key_locked(store *st,
                          int (*fn)(const char *name, const char *value, size_t len,
                                    uint64_t version, void *ctx),
                          int (*lease_fn)(const char *name, uint64_t id, int64_t until,
                                       int64_t by, uint64_t version, const char *value,
                                       size_t len, void *ctx),
                          void *ctx)
{
    keys_table *t = st->keys;
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nb && rc == 0; i++)
        for (key *k = t->b[i]; k && rc == 0; k = k->hnext) {
            if (!k->version)
                continue;
            const char *v = k->value ? k->value : "";
            rc = fn(k->name, v, k->len, k->version, ctx);
            for (klease *l = k->leases; l && rc == 0; l = l->next)
                rc = lease_fn(k->name, l->id, l->until, l->by, k->version, v, k->len, ctx);
        }
    pthread_mutex_unlock(&t->lock);
    return rc;
}
