/* SPDX-License-Identifier: Apache-2.0 */
/* store_bulk.c - ADDMULTI: many lines into a list at once, all or none, in one record. */
#include "store/store.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "base/hash.h"
#include "store_names.h"
#include "store_take.h"
#include "store_wait.h"

/* With unique: the index of the first line of v[0..n) that the list holds or that comes
 * earlier in v, or n if none; SIZE_MAX on ENOMEM. An open-addressed set of indices by
 * hash finds duplicates in the batch in one pass. */
static size_t first_duplicate(list *l, const store_span *v, size_t n)
{
    size_t slots = 16, found = n;
    while (slots < n * 2)
        slots *= 2;
    size_t *set = malloc(slots * sizeof *set);
    if (!set)
        return SIZE_MAX;
    memset(set, 0xff, slots * sizeof *set);     /* SIZE_MAX: empty slot */
    for (size_t i = 0; i < n && found == n; i++) {
        int in_list = list_contains(l, v[i].s, v[i].len);
        if (in_list < 0) {
            found = SIZE_MAX;
            break;
        }
        if (in_list) {
            found = i;
            break;
        }
        size_t at = hash_fnv1a(v[i].s, v[i].len) & (slots - 1);
        for (; set[at] != SIZE_MAX; at = (at + 1) & (slots - 1)) {
            const store_span *o = &v[set[at]];
            if (o->len == v[i].len && memcmp(o->s, v[i].s, o->len) == 0) {
                found = i;
                break;
            }
        }
        set[at] = i;
    }
    free(set);
    return found;
}

/* The index of the first line of v[0..n) with fewer fields than l has columns (or a
 * quote not closed), or n if none (always n for a list without columns). */
static size_t first_short(list *l, const store_span *v, size_t n)
{
    size_t cols = list_column_count(l);
    char sep = list_column_sep(l);
    for (size_t i = 0; cols && i < n; i++)
        if (csv_count(v[i].s, v[i].len, sep) < (long)cols)
            return i;
    return n;
}

/* Pushes v[0..n) into e's list (recorded already); on ENOMEM the list keeps what went
 * in and memory no longer matches the record. */
static store_rc push_many_locked(store *st, entry *e, const store_span *v, size_t n,
                                 int at_tail)
{
    for (size_t i = 0; i < n; i++)
        if ((at_tail ? list_push_back(e->l, v[i].s, v[i].len)
                     : list_push_front(e->l, v[i].s, v[i].len)) != 0) {
            size_t left = 0;
            for (size_t k = i; k < n; k++)
                left += v[k].len;
            store_bytes_release(st, left);
            store_count_traffic(e, i, 0);
            if (st->rec)
                st->rec->mark_broken(st->rec_ctx);
            return STORE_NOMEM;
        }
    store_count_traffic(e, n, 0);
    return STORE_OK;
}

store_rc store_add_many(store *st, const char *name, const store_span *v, size_t n,
                        int at_tail, int unique, size_t *bad, uint64_t *lsn)
{
    uint64_t scratch;
    if (!lsn)
        lsn = &scratch;          /* the caller does not want it */
    *lsn = 0;
    store_rc rc = STORE_OK;
    size_t bytes = 0;
    *bad = SIZE_MAX;
    for (size_t i = 0; i < n; i++)
        bytes += v[i].len;
    entry *e;
again:
    if (!(e = store_lookup_or_create(st, name, &rc)))
        return rc;
    pthread_mutex_lock(&e->lock);
    if (store_names_dropped(e)) {          /* dropped after the lookup: make it again */
        pthread_mutex_unlock(&e->lock);
        goto again;
    }
    size_t dup = unique ? first_duplicate(e->l, v, n) : n;
    size_t short_at = first_short(e->l, v, n);
    if (dup == SIZE_MAX) {
        rc = STORE_NOMEM;
    } else if (short_at < n) {
        rc = STORE_FIELDS;                 /* as ADD: every line must fill the columns */
        *bad = short_at;
    } else if (dup < n) {
        rc = STORE_EXISTS;
        *bad = dup;
    } else if (store_bytes_reserve(st, bytes) != 0) {
        rc = STORE_FULL;
    } else if (st->rec && st->rec->push_many(st->rec_ctx, name, at_tail, v, n, lsn) != 0) {
        store_bytes_release(st, bytes);
        rc = STORE_JOURNAL;
    } else {
        rc = push_many_locked(st, e, v, n, at_tail);
    }
    store_waiter *served = NULL;
    uint64_t wlsn = *lsn;
    if (rc == STORE_OK)
        store_wait_serve_locked(st, e, NULL, 0, &served, &wlsn);
    pthread_mutex_unlock(&e->lock);
    store_wait_finish(st, served, wlsn);
    return rc;
}
