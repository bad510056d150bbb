/* store_int.h - what the store's files (store.c, store_view.c) share: the table of names
 * and its entries; private to them. */
#ifndef STSD_STORE_INT_H
#define STSD_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "store/store.h"
#include "rate.h"

/* A name's entry lives as long as the store: RESET empties a list and INITFILE swaps its
 * contents, but no command deletes a name. So a looked-up entry stays valid for good,
 * and only the entry's own mutex guards its list. */
typedef struct entry {
    pthread_mutex_t lock;
    list *l;
    uint64_t hash;
    /* Traffic, under lock: lines added by ADD and taken by READ/READMULTI/FIND (KEEP=FALSE);
     * INITFILE and RESET replace a list and count as neither. */
    uint64_t added_total, removed_total;
    rate_window rate;
    char name[];
} entry;

/* The names: open addressing over entry pointers. Since entries are only ever added,
 * readers need no lock: they probe with acquire loads, and a writer (under add_lock)
 * fills an empty slot with a release store, or builds a bigger table and publishes it
 * whole. Replaced tables are kept (readers may still be probing them) until the end. */
typedef struct table {
    struct table *older;
    size_t mask;                 /* slots - 1; slots is a power of two */
    _Atomic(entry *) slots[];
} table;

struct store {
    _Atomic(table *) names;
    pthread_mutex_t add_lock;    /* serializes writers of names */
    size_t count;                /* under add_lock */
    store_limits limits;
    atomic_size_t bytes;         /* line bytes in all lists, for limits.max_bytes */
    const store_recorder *rec;   /* NULL: changes live in memory only */
    void *rec_ctx;
};

/* The entry of list name, or NULL. Lock-free. */
entry *store_lookup(store *st, const char *name);

/* Every entry, sorted by name, in a malloc'd array (*n entries) the caller frees; NULL on
 * ENOMEM. */
entry **store_entries_sorted(store *st, size_t *n);

#endif
