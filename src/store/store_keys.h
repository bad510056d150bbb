/* SPDX-License-Identifier: Apache-2.0 */
/* store_keys.h - the keys' table (store_keys.c), made and freed with the store. Private
 * to the store. */
#ifndef STSD_STORE_KEYS_H
#define STSD_STORE_KEYS_H

#include "store_int.h"

/* An empty table, or NULL on ENOMEM. */
keys_table *store_keys_create(void);
/* Frees st's keys, their leases and the table (waiters must be gone). */
void store_keys_free(store *st);

#endif
