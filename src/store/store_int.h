/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h - the types the store's files share: a name's entry (its list, wait queue
 * and leases), the table of names, the lease table and the store itself. Types only: each
 * file's functions for the others are declared in its own header (store_names.h,
 * store_lease.h, store_take.h, store_wait.h). Private to store.c, store_names.c,
 * store_lease.c, store_take.c, store_wait.c and store_view.c. */
#ifndef STSD_STORE_INT_H
#define STSD_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/heap.h"
#include "store/store.h"
#include "rate.h"

typedef struct entry entry;
typedef struct owner owner;

/* A line on loan: 64 bytes beside its bytes. */
typedef struct lease {
    uint64_t id;
    int64_t until;               /* wall-clock ms; STORE_LOAN_FOREVER: no deadline */
    entry *e;
    owner *own;                  /* the owner it is on loan to (READ OWNER=), or NULL */
    struct lease *hnext;         /* in its hash bucket */
    struct lease *prev, *next;   /* in its entry's leases, oldest first */
    uint32_t heap_at;
    uint32_t len;
    char line[];
} lease;

/* An owner's loan (store_owner.c): the one lease of a list that READ OWNER=name answers
 * again and again. Freed with its lease. */
struct owner {
    owner *hnext;                /* in its entry's owner table */
    lease *l;
    uint64_t hash;
    uint64_t lsn;                /* the last record of this loan (its lease, a renewal) */
    uint32_t len;
    char name[];                 /* len bytes, no NUL inside */
};

/* An entry's owners by name: chained buckets, empty (no memory) until the first. */
typedef struct owner_table {
    owner **b;
    size_t mask;                 /* buckets - 1 when b */
    size_t n;
} owner_table;

/* Every open lease: by id, by deadline. Its lock comes after any list's lock. */
typedef struct lease_table {
    pthread_mutex_t lock;
    lease **buckets;
    size_t mask;
    heap deadlines;              /* every open lease, by until */
    uint64_t counter, key;
} lease_table;

/* A name's entry lives as long as the store: RESET empties a list and INITFILE swaps its
 * contents, and DROP only hides it (dropped, below: store_names.c says why). So a
 * looked-up entry stays valid for good, and only the entry's own mutex guards its list. */
struct entry {
    pthread_mutex_t lock;
    /* 1: dropped (DROP), an empty tombstone that lookups do not see until a creation of
     * the same name brings it back. Written with add_lock and lock both held, so either
     * lock is enough to read it stably; lock-free lookups read it atomically. */
    atomic_int dropped;
    list *l;
    uint64_t hash;
    /* Traffic, under lock: lines added by ADD and taken by READ/READMULTI/FIND (KEEP=FALSE);
     * INITFILE and RESET replace a list and count as neither. */
    uint64_t added_total, removed_total;
    rate_window rate;
    store_waiter *wait_head;     /* waiters in arrival order (store_wait.c; linked by
                                  * store_names.c) */
    store_waiter *wait_tail;
    size_t waiters;
    lease *lease_head, *lease_tail;  /* its open leases (store_lease.c), under lock */
    size_t leased;
    owner_table owners;          /* the owners of some of them (store_owner.c), under lock */
    char name[];
};

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
    size_t count;                /* under add_lock: entries, tombstones included */
    size_t hidden;               /* under add_lock: the tombstones (dropped entries) */
    entry **sorted;              /* under add_lock: every entry by name, when sorted_n */
    size_t sorted_n;             /* equals count (entries are only added, never removed:
                                  * a dropped one stays in place as a tombstone) */
    store_limits limits;
    atomic_size_t bytes;         /* line bytes in all lists, for limits.max_bytes */
    const store_recorder *rec;   /* NULL: changes live in memory only */
    void *rec_ctx;
    store_expired_fn on_expired; /* the audit log's view of expiries, or NULL */
    void *expired_ctx;
    store_waiter *orphans;       /* under add_lock: waiters on names not created yet
                                  * (store_names.c) */
    lease_table leases;
    struct keys_table *keys;     /* meet/'s, never looked into here (store_set_keys) */
    void (*keys_drop)(struct keys_table *t);
};

#endif
