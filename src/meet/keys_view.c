/* SPDX-License-Identifier: Apache-2.0 */
/* keys_view.c - looking at the keys without changing them: KEYS (the keys that
 * exist, with their waiters) and RUNS (ONCE's runs in progress, with the callers waiting
 * for each). */
#include "meet/keys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keys_int.h"
#include "keys_table.h"

/* Names in byte order, a prefix first. */
static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    return c ? c : (alen > blen) - (alen < blen);
}

static int cmp_key(const void *a, const void *b)
{
    const key *x = *(key *const *)a, *y = *(key *const *)b;
    return name_cmp(x->name, x->name_len, y->name, y->name_len);
}

static size_t count_waiters(const key_waiter *w)
{
    size_t n = 0;
    for (; w; w = w->next)
        n++;
    return n;
}

static int has_prefix(const key *k, const char *prefix, size_t plen)
{
    return k->name_len >= plen && (plen == 0 || memcmp(k->name, prefix, plen) == 0);
}

long keys_list(store *st, const char *prefix,
                     void (*fn)(const key_info *k, void *ctx), void *ctx)
{
    keys_table *t = store_keys(st);
    size_t plen = prefix ? strlen(prefix) : 0, n = 0;
    pthread_mutex_lock(&t->lock);
    key **v = malloc((t->count ? t->count : 1) * sizeof *v);
    if (!v) {
        pthread_mutex_unlock(&t->lock);
        return -1;
    }
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i]; k; k = k->hnext)
            if (k->version && has_prefix(k, prefix, plen))
                v[n++] = k;
    qsort(v, n, sizeof *v, cmp_key);
    for (size_t i = 0; i < n; i++) {
        key_info ki = {v[i]->name, v[i]->value ? v[i]->value : "", v[i]->len, v[i]->version,
                       count_waiters(v[i]->watch_head), count_waiters(v[i]->incr_head)};
        fn(&ki, ctx);
    }
    pthread_mutex_unlock(&t->lock);
    free(v);
    return (long)n;
}

/* ---- RUNS ---------------------------------------------------------------------------- */

/* A run as the lock saw it, copied out so that sorting and the callbacks run after it. */
typedef struct run_copy {
    int64_t until;
    size_t waiters;
    size_t name_len;
    char name[];
} run_copy;

typedef struct run_copies {
    run_copy **v;
    size_t n, cap;
} run_copies;

static int cmp_run(const void *a, const void *b)
{
    const run_copy *x = *(run_copy *const *)a, *y = *(run_copy *const *)b;
    return name_cmp(x->name, x->name_len, y->name, y->name_len);
}

/* ONCE callers among the watchers: GETs with TIMEOUT wait in the same queue. */
static size_t count_once(const key_waiter *w)
{
    size_t n = 0;
    for (; w; w = w->next)
        n += w->once != 0;
    return n;
}

/* Appends k's run to c. Returns 0, or -1 on ENOMEM (c unchanged). */
static int copy_run(run_copies *c, const key *k)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        run_copy **v = realloc(c->v, cap * sizeof *v);
        if (!v)
            return -1;
        c->v = v;
        c->cap = cap;
    }
    run_copy *r = malloc(sizeof *r + k->name_len + 1);
    if (!r)
        return -1;
    r->until = k->run->until;
    r->waiters = count_once(k->watch_head);
    r->name_len = k->name_len;
    memcpy(r->name, k->name, k->name_len + 1);
    c->v[c->n++] = r;
    return 0;
}

long keys_runs(store *st, const char *prefix,
                     void (*fn)(const key_run_info *r, void *ctx), void *ctx)
{
    keys_table *t = store_keys(st);
    size_t plen = prefix ? strlen(prefix) : 0;
    run_copies c = {NULL, 0, 0};
    int oom = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nb && !oom; i++)
        for (key *k = t->b[i]; k && !oom; k = k->hnext)
            if (k->run && has_prefix(k, prefix, plen))
                oom = copy_run(&c, k) != 0;
    pthread_mutex_unlock(&t->lock);
    if (!oom) {
        if (c.n > 1)                   /* c.v is NULL with no run */
            qsort(c.v, c.n, sizeof *c.v, cmp_run);
        for (size_t i = 0; i < c.n; i++) {
            key_run_info ri = {c.v[i]->name, c.v[i]->until, c.v[i]->waiters};
            fn(&ri, ctx);
        }
    }
    for (size_t i = 0; i < c.n; i++)
        free(c.v[i]);
    free(c.v);
    return oom ? -1 : (long)c.n;
}

/* ---- one key, and the counts ---- */

store_rc keys_get(store *st, const char *name, buf *out, uint64_t *version)
{
    keys_table *t = store_keys(st);
    pthread_mutex_lock(&t->lock);
    key *k = keys_find(t, name, strlen(name));
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

size_t keys_count(store *st)
{
    keys_table *t = store_keys(st);
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    size_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

size_t keys_waiters(store *st)
{
    keys_table *t = store_keys(st);
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    size_t n = t->waiters;
    pthread_mutex_unlock(&t->lock);
    return n;
}
