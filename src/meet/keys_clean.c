/* SPDX-License-Identifier: Apache-2.0 */
/* keys_clean.c - keys cleaned up between runs: EXPIRE (a deadline on a key, which
 * the lease timer then deletes: keys_lease_expire) and DEL PREFIX; all of them forgotten
 * when a replica stops leading (keys_clear). */
#include "meet/keys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "keys_core.h"
#include "keys_table.h"

store_rc keys_expire(store *st, const char *name, int64_t ttl_ms, uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    key *k = keys_find(t, name, strlen(name));
    store_rc rc = STORE_NO_KEY;
    if (k && k->version) {
        /* The deadline goes in the record: replay reads no clock. */
        int64_t until = clock_wall_ms() + ttl_ms;
        store_key_rec r = {STORE_KEY_EXPIRE, k->name, 0, 0, until, 0, 0, NULL, 0};
        rc = STORE_JOURNAL;
        if (keys_record(st, &r, lsn) == 0) {
            rc = STORE_OK;
            if (keys_ttl_set(t, k, until) != 0) {
                rc = STORE_NOMEM;
                store_mark_broken(st);
            }
        }
    }
    pthread_mutex_unlock(&t->lock);
    return rc;
}

store_rc keys_del_prefix(store *st, const char *prefix, size_t *n, uint64_t *lsn)
{
    keys_table *t = store_keys(st);
    size_t plen = strlen(prefix), m = 0;
    key_waiter *done = NULL;
    store_rc rc = STORE_OK;
    *n = 0;
    *lsn = 0;
    pthread_mutex_lock(&t->lock);
    /* Collected first: deleting may free an entry (keys_maybe_drop) mid-walk. */
    key **hit = malloc((t->count ? t->count : 1) * sizeof *hit);
    if (!hit) {
        pthread_mutex_unlock(&t->lock);
        return STORE_NOMEM;
    }
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i]; k; k = k->hnext)
            if (k->version && k->name_len >= plen && memcmp(k->name, prefix, plen) == 0)
                hit[m++] = k;
    for (size_t i = 0; i < m && rc == STORE_OK; i++) {
        uint64_t one;
        rc = keys_del_locked(st, hit[i], &one, &done);
        if (rc == STORE_OK) {
            (*n)++;
            *lsn = one;
        }
    }
    for (size_t i = 0; i < m; i++)
        keys_maybe_drop(t, hit[i]);
    pthread_mutex_unlock(&t->lock);
    free(hit);
    keys_finish(done);
    return rc;
}

size_t keys_clear(store *st)
{
    keys_table *t = store_keys(st);
    key_waiter *done = NULL;
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i], *next; k; k = next) {
            next = k->hnext;      /* keys_maybe_drop frees k */
            keys_unqueue_all_locked(t, k, STORE_JOURNAL, &done);
            keys_drop_leases(t, k);
            if (k->version) {
                store_bytes_release(st, k->len);
                t->count--;
                n++;
            }
            free(k->value);
            k->value = NULL;
            k->len = 0;
            k->version = 0;
            keys_maybe_drop(t, k);
        }
    pthread_mutex_unlock(&t->lock);
    keys_finish(done);
    return n;
}
