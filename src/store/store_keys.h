/* SPDX-License-Identifier: Apache-2.0 */
/* store_keys.h - the keys' table (store_keys.c), made and freed with the store. Private
 * to the store. */
#ifndef STSD_STORE_KEYS_H
#define STSD_STORE_KEYS_H

#include "store_int.h"
#include "store_keys_int.h"

/* An empty table, or NULL on ENOMEM. */
keys_table *store_keys_create(void);
/* Frees st's keys, their leases and the table (waiters must be gone). */
void store_keys_free(store *st);

/* Under the keys' lock (store_keys.c, for store_keys_clean.c): */
/* Gives r to the recorder (none: *lsn 0). Returns 0, or -1 (refused). */
int keys_record(store *st, const store_key_rec *r, uint64_t *lsn);
/* DEL of k (which exists): recorded, its value and leases dropped, its waiters chained on
 * *done. STORE_OK, or STORE_JOURNAL with nothing changed. */
store_rc keys_del_locked(store *st, key *k, uint64_t *lsn, key_waiter **done);
/* After the lock: tells each waiter of done its answer. */
void keys_finish(key_waiter *done);

#endif
