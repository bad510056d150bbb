/* SPDX-License-Identifier: Apache-2.0 */
/* keys_adopt.c - the keys as recovery brings them back (values, counter leases,
 * ONCE's runs, each as the journal last recorded it) and as compaction writes them out. */
#include "meet/keys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/heap.h"
#include "keys_table.h"

/* A lease of k (a counter's by, or a run) back from the journal, linked. */
static store_rc lease_adopt(keys_table *t, key *k, uint64_t id, int64_t until, int64_t by,
                            int run)
{
    klease *l = calloc(1, sizeof *l);
    if (!l)
        return STORE_NOMEM;
    l->id = id;
    l->until = until;
    l->by = by;
    l->run = run;
    l->heap_at = HEAP_NONE;
    if (keys_lease_link(t, k, l) != 0) {
        free(l);
        return STORE_NOMEM;
    }
    return STORE_OK;
}

store_rc keys_adopt(store *st, const char *name, const char *value, size_t len,
                         uint64_t version)
{
    keys_table *t = store_keys(st);
    pthread_mutex_lock(&t->lock);
    key *k = keys_find_or_make(t, name);
    char *v = k ? keys_copy_bytes(value, len) : NULL;
    store_rc rc = STORE_NOMEM;
    if (v) {
        /* What was kept before the crash is kept again, past the limits if need be. */
        store_bytes_add(st, len + (k->version ? 0 : k->name_len));
        keys_put_value(t, st, k, v, len);
        k->version = version;
        rc = STORE_OK;
    } else if (k) {
        keys_maybe_drop(t, k);
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc keys_lease_adopt(store *st, const char *name, uint64_t id, int64_t until,
                               int64_t by)
{
    keys_table *t = store_keys(st);
    store_rc rc = STORE_NO_KEY;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find(t, name, strlen(name));
    if (k && k->version && !keys_lease_find(t, id))
        rc = lease_adopt(t, k, id, until, by, 0);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int keys_each_locked(store *st,
                          int (*fn)(const char *name, const char *value, size_t len,
                                    uint64_t version, int64_t expires, void *ctx),
                          int (*lease_fn)(const char *name, uint64_t id, int64_t until,
                                       int64_t by, uint64_t version, const char *value,
                                       size_t len, void *ctx),
                          void *ctx)
{
    keys_table *t = store_keys(st);
    int rc = 0;
    if (!t)
        return 0;                /* a store of lists only: nothing to write out */
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nb && rc == 0; i++)
        for (key *k = t->b[i]; k && rc == 0; k = k->hnext) {
            if (!k->version)
                continue;
            const char *v = k->value ? k->value : "";
            rc = fn(k->name, v, k->len, k->version, k->ttl ? k->ttl->until : 0, ctx);
            for (klease *l = k->leases; l && rc == 0; l = l->next)
                if (!l->run && !l->ttl)
                    rc = lease_fn(k->name, l->id, l->until, l->by, k->version, v, k->len, ctx);
        }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc keys_run_adopt(store *st, const char *name, uint64_t id, int64_t until)
{
    return keys_run_adopt_ttl(st, name, id, until, 0);
}

store_rc keys_expire_adopt(store *st, const char *name, int64_t until)
{
    keys_table *t = store_keys(st);
    store_rc rc = STORE_NO_KEY;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find(t, name, strlen(name));
    if (k && k->version)
        rc = keys_ttl_set(t, k, until) == 0 ? STORE_OK : STORE_NOMEM;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc keys_run_adopt_ttl(store *st, const char *name, uint64_t id, int64_t until,
                                 int64_t ttl_ms)
{
    keys_table *t = store_keys(st);
    store_rc rc = STORE_NOMEM;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find_or_make(t, name);
    if (k && (k->version || k->run || keys_lease_find(t, id))) {
        rc = STORE_EXISTS;
    } else if (k) {
        rc = lease_adopt(t, k, id, until, ttl_ms, 1);
    }
    if (k)
        keys_maybe_drop(t, k);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

int keys_each_run_locked(store *st,
                              int (*fn)(const char *name, uint64_t id, int64_t until,
                                        int64_t ttl_ms, void *ctx),
                              void *ctx)
{
    keys_table *t = store_keys(st);
    int rc = 0;
    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nb && rc == 0; i++)
        for (key *k = t->b[i]; k && rc == 0; k = k->hnext)
            if (k->run)
                rc = fn(k->name, k->run->id, k->run->until, k->run->by, ctx);
    pthread_mutex_unlock(&t->lock);
    return rc;
}
