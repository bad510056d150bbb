/* SPDX-License-Identifier: Apache-2.0 */
/* store_drop.c - DROP: a list deleted with its lines, leases, owners and waiters, its
 * entry left as a tombstone (store_names.c says why). */
#include "store/store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store_lease.h"
#include "store_names.h"
#include "store_take.h"
#include "store_wait.h"

/* Takes every waiter off e's queue (lock held): those still waiting are chained on *done
 * to be told rc; those ended already (deadline, shutdown) are let go. */
static void unqueue_all_locked(entry *e, store_rc rc, store_waiter **done)
{
    while (e->wait_head) {
        store_waiter *w = e->wait_head;
        store_names_dequeue(e, w);
        if (!w->claim(w))
            continue;
        w->count = 0;
        w->rc = rc;
        w->next = *done;
        *done = w;
    }
}

/* DROP, recorded first (record) or not (store_clear); waiters are told wrc. */
static store_rc drop_one(store *st, const char *name, int record, store_rc wrc,
                         uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn ? lsn : &scratch;
    *lsn = 0;
    /* Made before any lock, so that nothing can fail once the drop is recorded. */
    list *fresh = list_create();
    if (!fresh)
        return STORE_NOMEM;
    entry *e = store_names_drop_begin(st, name);
    if (!e) {
        list_free(fresh);
        return STORE_NOT_LOADED;
    }
    if (record && st->rec && st->rec->drop(st->rec_ctx, name, lsn) != 0) {
        store_names_drop_end(st, e, 0);
        list_free(fresh);
        return STORE_JOURNAL;
    }
    list *old = e->l;
    e->l = fresh;
    store_lease_drop_locked(st, e);
    store_waiter *done = NULL;
    unqueue_all_locked(e, wrc, &done);
    /* A name that comes back starts its counts afresh. */
    e->added_total = e->removed_total = 0;
    rate_init(&e->rate, rate_now_ms());
    store_names_drop_end(st, e, 1);
    store_bytes_release(st, list_bytes(old));
    list_free(old);
    store_wait_finish(st, done, *lsn);
    return STORE_OK;
}

store_rc store_drop(store *st, const char *name, uint64_t *lsn)
{
    return drop_one(st, name, 1, STORE_DROPPED, lsn);
}

int store_clear(store *st, size_t *n)
{
    size_t count;
    store_rc rc = STORE_OK;
    *n = 0;
    entry **all = store_entries_sorted(st, &count);
    if (!all)
        return -1;
    for (size_t i = 0; i < count && rc != STORE_NOMEM; i++) {
        rc = drop_one(st, all[i]->name, 0, STORE_JOURNAL, NULL);
        *n += rc == STORE_OK;
    }
    free(all);
    return rc == STORE_NOMEM ? -1 : 0;
}

store_rc store_drop_prefix(store *st, const char *prefix, size_t *n, uint64_t *lsn)
{
    size_t count, plen = strlen(prefix);
    store_rc rc = STORE_OK;
    *n = 0;
    if (lsn)
        *lsn = 0;
    entry **all = store_entries_sorted(st, &count);
    if (!all)
        return STORE_NOMEM;
    for (size_t i = 0; i < count && rc == STORE_OK; i++) {
        if (strncmp(all[i]->name, prefix, plen) != 0)
            continue;
        uint64_t one = 0;
        rc = store_drop(st, all[i]->name, &one);
        if (rc == STORE_OK) {
            (*n)++;
            if (lsn && one > *lsn)
                *lsn = one;
        } else if (rc == STORE_NOT_LOADED) {
            rc = STORE_OK;           /* a tombstone already, or dropped meanwhile */
        }
    }
    free(all);
    return rc;
}
