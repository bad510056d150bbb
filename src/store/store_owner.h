/* SPDX-License-Identifier: Apache-2.0 */
/* store_owner.h - an entry's table of owners (store_owner.c): which lease of a list each
 * owner (READ OWNER=) holds. Every call wants the entry's lock held. Private to the
 * store. */
#ifndef STSD_STORE_OWNER_H
#define STSD_STORE_OWNER_H

#include "store_int.h"

/* The hash an owner name[0..len) is filed under (seeded per process). */
uint64_t store_owner_hash(const char *name, size_t len);

/* The owner of name[0..len) in t, or NULL. */
owner *store_owner_find(const owner_table *t, const char *name, size_t len);

/* The same, with h = store_owner_hash(name, len) worked out already (a waiter's, kept
 * while it is queued). */
owner *store_owner_find_hash(const owner_table *t, const char *name, size_t len, uint64_t h);

/* Adds owner name[0..len) (absent from t) holding lease l, and sets l->own. Returns it,
 * or NULL on ENOMEM (nothing changed). */
owner *store_owner_add(owner_table *t, const char *name, size_t len, lease *l);

/* Takes o out of t, clears its lease's own and frees o. */
void store_owner_remove(owner_table *t, owner *o);

/* Frees every owner still in t and the table's memory; t is empty after. */
void store_owner_table_free(owner_table *t);

#endif
