/* store_int.h - what the store's files (store.c, store_view.c, store_wait.c) share: the
 * table of names and its entries, and the steps of a read that waiters reuse; private to
 * them. */
#ifndef STSD_STORE_INT_H
#define STSD_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/heap.h"
#include "store/store.h"
#include "rate.h"

typedef struct entry entry;

/* A line on loan: 56 bytes beside its bytes. */
typedef struct lease {
    uint64_t id;
    int64_t until;               /* wall-clock ms */
    entry *e;
    struct lease *hnext;         /* in its hash bucket */
    struct lease *prev, *next;   /* in its entry's leases, oldest first */
    uint32_t heap_at;
    uint32_t len;
    char line[];
} lease;

/* Every open lease: by id, by deadline. Its lock comes after any list's lock. */
typedef struct lease_table {
    pthread_mutex_t lock;
    lease **buckets;
    size_t mask;
    heap deadlines;              /* every open lease, by until */
    uint64_t counter, key;
} lease_table;

/* A name's entry lives as long as the store: RESET empties a list and INITFILE swaps its
 * contents, but no command deletes a name. So a looked-up entry stays valid for good,
 * and only the entry's own mutex guards its list. */
struct entry {
    pthread_mutex_t lock;
    list *l;
    uint64_t hash;
    /* Traffic, under lock: lines added by ADD and taken by READ/READMULTI/FIND (KEEP=FALSE);
     * INITFILE and RESET replace a list and count as neither. */
    uint64_t added_total, removed_total;
    rate_window rate;
    store_waiter *wait_head;     /* waiters in arrival order (store_wait.c) */
    store_waiter *wait_tail;
    size_t waiters;
    lease *lease_head, *lease_tail;  /* its open leases (store_lease.c), under lock */
    size_t leased;
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
    size_t count;                /* under add_lock */
    entry **sorted;              /* under add_lock: every entry by name, when sorted_n */
    size_t sorted_n;             /* equals count (names are only added, never removed) */
    store_limits limits;
    atomic_size_t bytes;         /* line bytes in all lists, for limits.max_bytes */
    const store_recorder *rec;   /* NULL: changes live in memory only */
    void *rec_ctx;
    store_waiter *orphans;       /* under add_lock: waiters on names not created yet */
    lease_table leases;
};

/* The entry of list name, or NULL. Lock-free. */
entry *store_lookup(store *st, const char *name);

/* Every entry, sorted by name, in a malloc'd array (*n entries) the caller frees; NULL on
 * ENOMEM. */
entry **store_entries_sorted(store *st, size_t *n);

/* The entry for name, created with an empty list if absent; NULL with *rc set. */
entry *store_lookup_or_create(store *st, const char *name, store_rc *rc);

/* Takes the lines at pos[0..n) of e's list (each relative to the list left by the
 * previous), recorded first, appending each to out; keep moves them to the tail;
 * lease_ms > 0 (keep 0) lends each, appending its id to ids. Call with e->lock held;
 * sets *lsn (0: nothing recorded). Sets *count to the lines taken. */
store_rc store_take_locked(store *st, entry *e, const size_t *pos, size_t n, int keep,
                           int64_t lease_ms, buf *ids, buf *out, size_t *count,
                           uint64_t *lsn);

/* READ's positions: n lines from end of e's list into out. Call with e->lock held. */
store_rc store_read_locked(store *st, entry *e, store_end end, int keep, size_t n,
                           int64_t lease_ms, buf *ids, buf *out, size_t *count,
                           uint64_t *lsn);

/* FIND's position in e's list: >= 0, or the store error. Call with e->lock held. */
store_rc store_find_pos_locked(entry *e, const store_matcher *m, size_t *pos);

/* Serves e's waiters that can be served now, in arrival order, after lines came in
 * (line: the one line added, to skip FIND waiters it cannot satisfy; NULL: any may
 * have). Call with e->lock held; served waiters are chained on *done, and *lsn raised to
 * their records' place. */
void store_wait_serve_locked(store *st, entry *e, const char *line, size_t len,
                             store_waiter **done, uint64_t *lsn);

/* After e->lock is released: tells each waiter of done that it was served, with lsn (the
 * last record of the batch) as its change's place in the log. */
void store_wait_finish(store *st, store_waiter *done, uint64_t lsn);

/* Where a change's lsn goes (0 until something is recorded): the caller's, or scratch
 * when the caller does not care. */
static inline uint64_t *store_lsn_out(uint64_t *lsn, uint64_t *scratch)
{
    uint64_t *p = lsn ? lsn : scratch;
    *p = 0;
    return p;
}

/* The lease table (store_lease.c): init gives 0 or -1; destroy frees every lease. */
int store_lease_init(lease_table *t);
void store_lease_destroy(lease_table *t);
/* A lease holding a copy of line, not linked yet; NULL on ENOMEM. */
lease *store_lease_new(const char *line, size_t len);
/* Links l to e with id (0: a new one) and deadline until. Call with e->lock held.
 * Returns 0, 1 if id is known already (l not linked), -1 on ENOMEM. */
int store_lease_link_locked(store *st, entry *e, lease *l, uint64_t id, int64_t until);
/* Unlinks and frees l, unrecorded. Call with its entry's lock held. */
void store_lease_forget_locked(store *st, lease *l);
/* Drops (frees, unrecorded) every lease of e: RESET, INITFILE. Call with e->lock held. */
void store_lease_drop_locked(store *st, entry *e);

/* Moves the orphan waiters of e's name into e's queue: e is new and not yet published.
 * Call with add_lock held. */
void store_wait_adopt_orphans(store *st, entry *e);

#endif
