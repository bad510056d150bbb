/* SPDX-License-Identifier: Apache-2.0 */
/* store_lease.h - the lease table (store_lease.c), for the store's other files. A lease's
 * entry lock comes before the table's lock; every call that says so wants the entry's
 * lock held. Private to the store. */
#ifndef STSD_STORE_LEASE_H
#define STSD_STORE_LEASE_H

#include "store_int.h"

/* The lease table: init gives 0 or -1; destroy frees every lease. */
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

/* Settles e's lease id (or, with line, the oldest lease of that exact line): records the
 * settle (release or ack), then unlinks it and returns it; the caller puts its line back
 * (release) and frees it. NULL with *rc STORE_NO_LEASE or STORE_JOURNAL (nothing
 * changed). owner_out (NULL: not wanted) gets the name of the owner it was lent to, and
 * *owner_len its length (0: none), copied before the owner goes. Call with e->lock held. */
lease *store_lease_unlink_settled(store *st, entry *e, int release, uint64_t id,
                                 const char *line, size_t len, uint64_t *lsn, store_rc *rc,
                                 char owner_out[STORE_OWNER_MAX], size_t *owner_len);

/* Renews l (a lease of e) until the new deadline: recorded first. Returns 0, or -1 when
 * the recorder refuses (nothing changed). Call with e->lock held. */
int store_lease_renew_locked(store *st, entry *e, lease *l, int64_t until, uint64_t *lsn);

/* The earliest lease, if its deadline is at or before now: returns 1 with its entry and
 * id (still open: settle it under the entry's lock, which may find it gone). Otherwise 0
 * with *next the earliest deadline (0: no lease). Takes no entry lock. */
int store_lease_due(store *st, int64_t now, entry **e, uint64_t *id, int64_t *next);

#endif
