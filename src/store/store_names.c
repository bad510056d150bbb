/* SPDX-License-Identifier: Apache-2.0 */
/* store_names.c - the table of names: lock-free lookups, creation under add_lock (which
 * moves the waiters already queued on a new name into its entry's queue), the entries
 * sorted by name, and the links of the waiter queues.
 *
 * Removal (DROP). Lookups take no lock, so a thread may hold an entry pointer for as long
 * as a command runs, and nothing tells when every such thread has let go. Freeing an
 * entry would need an epoch or hazard pointers on every lookup; instead a dropped entry
 * stays in the table as a tombstone: its list emptied (the lines' memory freed at once),
 * its leases, owners and waiters gone, and `dropped` set. Lookups skip it, so the name
 * reads as never loaded; a creation of the same name brings the same entry back (it
 * adopts the orphan waiters as a new one would). A holder of a stale pointer takes the
 * entry's lock and looks at `dropped` before it touches the list: a read answers "not
 * loaded", an add starts over (and so brings the name back). What stays is the entry
 * itself (about 200 bytes plus its name and an empty list) until the store is freed; a
 * restart, or compaction then a restart, forgets it, since no snapshot carries it. */
#include "store_names.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "store_owner.h"

/* A list's critical sections are short: spin a little before sleeping in the kernel, so
 * that two workers taking turns on one hot list don't pay a futex call each time. */
static pthread_mutexattr_t entry_lock_attr;
static pthread_once_t entry_lock_once = PTHREAD_ONCE_INIT;

static void entry_lock_attr_init(void)
{
    pthread_mutexattr_init(&entry_lock_attr);
    pthread_mutexattr_settype(&entry_lock_attr, PTHREAD_MUTEX_ADAPTIVE_NP);
}

static table *table_new(size_t slots, table *older)
{
    table *t = calloc(1, sizeof *t + slots * sizeof t->slots[0]);
    if (t) {
        t->older = older;
        t->mask = slots - 1;
    }
    return t;
}

/* Puts e in t's first free slot from its hash (t has room: load is kept under 1/2). */
static void table_put(table *t, entry *e)
{
    size_t i = e->hash & t->mask;
    while (atomic_load_explicit(&t->slots[i], memory_order_relaxed))
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

int store_names_init(store *st)
{
    pthread_once(&entry_lock_once, entry_lock_attr_init);
    table *t = table_new(64, NULL);
    if (!t || pthread_mutex_init(&st->add_lock, NULL) != 0) {
        free(t);
        return -1;
    }
    atomic_init(&st->names, t);
    return 0;
}

void store_names_free(store *st)
{
    table *t = atomic_load(&st->names);
    for (size_t i = 0; i <= t->mask; i++) {
        entry *e = atomic_load(&t->slots[i]);
        if (e) {
            list_free(e->l);
            store_owner_table_free(&e->owners);
            pthread_mutex_destroy(&e->lock);
            free(e);
        }
    }
    while (t) {
        table *older = t->older;
        free(t);
        t = older;
    }
    pthread_mutex_destroy(&st->add_lock);
    free(st->sorted);
}

static entry *table_find(const table *t, const char *name, uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    }
}

entry *store_lookup_any(store *st, const char *name)
{
    return table_find(atomic_load_explicit(&st->names, memory_order_acquire), name,
                      hash_fnv1a_str(name));
}

entry *store_lookup(store *st, const char *name)
{
    entry *e = store_lookup_any(st, name);
    return e && !store_names_dropped(e) ? e : NULL;
}

int store_names_dropped(entry *e)
{
    return atomic_load_explicit(&e->dropped, memory_order_acquire);
}

/* The live lists, tombstones left out. Call with add_lock held. */
static size_t live_count(const store *st)
{
    return st->count - st->hidden;
}

entry *store_names_drop_begin(store *st, const char *name)
{
    pthread_mutex_lock(&st->add_lock);
    entry *e = table_find(atomic_load_explicit(&st->names, memory_order_relaxed), name,
                          hash_fnv1a_str(name));
    if (!e || store_names_dropped(e)) {
        pthread_mutex_unlock(&st->add_lock);
        return NULL;
    }
    pthread_mutex_lock(&e->lock);
    return e;
}

void store_names_drop_end(store *st, entry *e, int dropped)
{
    if (dropped) {
        atomic_store_explicit(&e->dropped, 1, memory_order_release);
        st->hidden++;
    }
    pthread_mutex_unlock(&e->lock);
    pthread_mutex_unlock(&st->add_lock);
}

/* ---- the waiter queues: an entry's under its lock, the orphans' under add_lock ---- */

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

void store_names_enqueue(entry *e, store_waiter *w)
{
    w->where = e;
    queue_append(&e->wait_head, &e->wait_tail, w);
    e->waiters++;
}

void store_names_dequeue(entry *e, store_waiter *w)
{
    queue_remove(&e->wait_head, &e->wait_tail, w);
    e->waiters--;
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

/* Moves the orphan waiters of e's name into e's queue: e is new and not yet published.
 * Call with add_lock held. */
static void adopt_orphans(store *st, entry *e)
{
    for (store_waiter *w = st->orphans, *next; w; w = next) {
        next = w->next;
        if (strcmp(w->name, e->name) != 0)
            continue;
        queue_remove(&st->orphans, NULL, w);
        store_names_enqueue(e, w);
    }
}

entry *store_names_lookup_or_orphan(store *st, store_waiter *w, store_rc *rc)
{
    entry *e = store_lookup(st, w->name);
    if (e)
        return e;
    /* Queue on the name, unless it was created meanwhile (creation adopts orphans under
     * the same lock, so no line can slip between). */
    pthread_mutex_lock(&st->add_lock);
    e = store_lookup(st, w->name);
    *rc = STORE_NOT_LOADED;
    if (!e && w->arm(w) == 0) {
        orphan_append(st, w);
        *rc = STORE_WAITING;
    }
    pthread_mutex_unlock(&st->add_lock);
    return e;
}

entry *store_names_unorphan(store *st, store_waiter *w)
{
    pthread_mutex_lock(&st->add_lock);
    entry *e = w->where;
    if (!e && w->queued)
        queue_remove(&st->orphans, NULL, w);
    pthread_mutex_unlock(&st->add_lock);
    return e;
}

/* ---- creation ---- */

entry *store_lookup_or_create(store *st, const char *name, store_rc *rc)
{
    entry *e = store_lookup(st, name);
    if (e)
        return e;
    uint64_t h = hash_fnv1a_str(name);
    pthread_mutex_lock(&st->add_lock);
    table *t = atomic_load_explicit(&st->names, memory_order_relaxed);
    e = table_find(t, name, h);        /* another thread may have won the race */
    if (e && store_names_dropped(e)) {
        /* A tombstone of this name: it comes back (add_lock, then its lock, as DROP). */
        if (st->limits.max_lists && live_count(st) >= st->limits.max_lists) {
            *rc = STORE_FULL;
            e = NULL;
            goto done;
        }
        pthread_mutex_lock(&e->lock);
        atomic_store_explicit(&e->dropped, 0, memory_order_release);
        adopt_orphans(st, e);
        pthread_mutex_unlock(&e->lock);
        st->hidden--;
    }
    if (e)
        goto done;
    if (st->limits.max_lists && live_count(st) >= st->limits.max_lists) {
        *rc = STORE_FULL;
        goto done;
    }
    if ((st->count + 1) * 2 > t->mask + 1) {
        table *bigger = table_new((t->mask + 1) * 2, t);
        if (!bigger) {
            *rc = STORE_NOMEM;
            goto done;
        }
        for (size_t i = 0; i <= t->mask; i++) {
            entry *old = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
            if (old)
                table_put(bigger, old);
        }
        atomic_store_explicit(&st->names, bigger, memory_order_release);
        t = bigger;
    }
    size_t nlen = strlen(name);
    e = malloc(sizeof *e + nlen + 1);
    if (!e || !(e->l = list_create())) {
        free(e);
        e = NULL;
        *rc = STORE_NOMEM;
        goto done;
    }
    pthread_mutex_init(&e->lock, &entry_lock_attr);
    atomic_init(&e->dropped, 0);
    e->hash = h;
    e->added_total = e->removed_total = 0;
    rate_init(&e->rate, rate_now_ms());
    e->wait_head = e->wait_tail = NULL;
    e->waiters = 0;
    e->lease_head = e->lease_tail = NULL;
    e->leased = 0;
    memset(&e->owners, 0, sizeof e->owners);
    memcpy(e->name, name, nlen + 1);
    adopt_orphans(st, e);
    table_put(t, e);
    st->count++;
done:
    pthread_mutex_unlock(&st->add_lock);
    return e;
}

/* ---- every name ---- */

static int cmp_entry_name(const void *a, const void *b)
{
    return strcmp((*(entry *const *)a)->name, (*(entry *const *)b)->name);
}

entry **store_entries_sorted(store *st, size_t *count)
{
    /* Taken under add_lock so that the count and the table agree. Names are only ever
     * added, so while the count is unchanged the last sorted order still holds: STATUS
     * and scrapes then copy it instead of sorting again. */
    pthread_mutex_lock(&st->add_lock);
    size_t n = st->count, k = 0;
    entry **all = malloc((n ? n : 1) * sizeof *all);
    if (all && st->sorted && st->sorted_n == n) {
        memcpy(all, st->sorted, n * sizeof *all);
        pthread_mutex_unlock(&st->add_lock);
        *count = n;
        return all;
    }
    table *t = atomic_load_explicit(&st->names, memory_order_relaxed);
    for (size_t i = 0; all && i <= t->mask; i++) {
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (e)
            all[k++] = e;
    }
    pthread_mutex_unlock(&st->add_lock);
    if (!all)
        return NULL;
    qsort(all, n, sizeof *all, cmp_entry_name);
    entry **keep = malloc((n ? n : 1) * sizeof *keep);
    if (keep) {
        memcpy(keep, all, n * sizeof *keep);
        pthread_mutex_lock(&st->add_lock);
        if (st->count == n && (!st->sorted || st->sorted_n != n)) {
            free(st->sorted);
            st->sorted = keep;
            st->sorted_n = n;
            keep = NULL;
        }
        pthread_mutex_unlock(&st->add_lock);
        free(keep);
    }
    *count = n;
    return all;
}

size_t store_count(store *st)
{
    pthread_mutex_lock(&st->add_lock);
    size_t n = live_count(st);
    pthread_mutex_unlock(&st->add_lock);
    return n;
}
