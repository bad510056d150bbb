/* SPDX-License-Identifier: Apache-2.0 */
/* keys_core.h - the keys' table (keys.c), made, and freed with the store it is attached
 * to. Private to meet/. */
#ifndef STSD_MEET_KEYS_CORE_H
#define STSD_MEET_KEYS_CORE_H

#include "keys_int.h"

/* An empty table, or NULL on ENOMEM. */
keys_table *keys_create(void);
/* Frees the keys, their leases and the table (waiters must be gone); the store's drop. */
void keys_free(keys_table *t);

/* Under the keys' lock (keys.c, for keys_clean.c): */
/* Gives r to the recorder (none: *lsn 0). Returns 0, or -1 (refused). */
int keys_record(store *st, const store_key_rec *r, uint64_t *lsn);
/* DEL of k (which exists): recorded, its value and leases dropped, its waiters chained on
 * *done. STORE_OK, or STORE_JOURNAL with nothing changed. */
store_rc keys_del_locked(store *st, key *k, uint64_t *lsn, key_waiter **done);
/* Takes every waiter off k's queues, chaining those still waiting on *done to be told
 * rc. */
void keys_unqueue_all_locked(keys_table *t, key *k, store_rc rc, key_waiter **done);
/* After the lock: tells each waiter of done its answer. */
void keys_finish(key_waiter *done);

#endif
