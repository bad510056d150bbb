/* SPDX-License-Identifier: Apache-2.0 */
/* store_names.h - the table of names (store_names.c): finding and creating a name's entry,
 * and the links of the waiter queues, an entry's and the orphans' (waiters on a name not
 * created yet, adopted by the entry that creation makes). Private to the store. */
#ifndef STSD_STORE_NAMES_H
#define STSD_STORE_NAMES_H

#include "store_int.h"

/* Sets up st's empty table of names and its add_lock. Returns 0, or -1 (nothing held). */
int store_names_init(store *st);
/* Frees every entry and its list, the tables and add_lock. */
void store_names_free(store *st);

/* The entry of list name, or NULL (none, or dropped). Lock-free: a caller that then takes
 * the entry's lock checks store_names_dropped under it, since a DROP may come between. */
entry *store_lookup(store *st, const char *name);
/* The same, tombstones included (a dropped list's entry, empty). */
entry *store_lookup_any(store *st, const char *name);
/* 1 if e is dropped (a tombstone). Stable while e->lock or add_lock is held. */
int store_names_dropped(entry *e);

/* DROP's two halves: the live entry of name with add_lock and its lock taken (NULL, no
 * lock held, when there is none); then, with dropped 1, e becomes a tombstone, and both
 * locks are released. */
entry *store_names_drop_begin(store *st, const char *name);
void store_names_drop_end(store *st, entry *e, int dropped);

/* The entry for name, created with an empty list if absent, or brought back if dropped
 * (adopting the waiters queued on the name); NULL with *rc set (STORE_FULL, STORE_NOMEM).
 * A DROP may still come before the caller takes its lock: see store_lookup. */
entry *store_lookup_or_create(store *st, const char *name, store_rc *rc);

/* Every entry, sorted by name, in a malloc'd array (*n entries) the caller frees; NULL on
 * ENOMEM. Tombstones included: callers skip those store_names_dropped says are. */
entry **store_entries_sorted(store *st, size_t *n);

/* The entry of w's name. If there is none, queues w on the name when w->arm agrees, under
 * add_lock so that a creation cannot slip in between: NULL with *rc STORE_WAITING (queued)
 * or STORE_NOT_LOADED. */
entry *store_names_lookup_or_orphan(store *st, store_waiter *w, store_rc *rc);

/* The entry w is queued on (NULL: none), read under add_lock; takes w out of the orphans
 * if it waits there. */
entry *store_names_unorphan(store *st, store_waiter *w);

/* Appends w to e's wait queue / takes it out. Call with e->lock held. */
void store_names_enqueue(entry *e, store_waiter *w);
void store_names_dequeue(entry *e, store_waiter *w);

#endif
