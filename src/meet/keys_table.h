/* SPDX-License-Identifier: Apache-2.0 */
/* keys_table.h - what keys_table.c offers keys.c and keys_adopt.c:
 * finding and making keys, their values, and the index of counter leases by id and
 * deadline. Every call is made under the table's lock. Private to meet/. */
#ifndef STSD_MEET_KEYS_TABLE_H
#define STSD_MEET_KEYS_TABLE_H

#include "keys_int.h"

/* The entry of name[0..len), or NULL. */
key *keys_find(keys_table *t, const char *name, size_t len);
/* The entry of name, made (not existing: version 0) if absent; NULL on ENOMEM. */
key *keys_find_or_make(keys_table *t, const char *name);
/* Frees k if it neither exists nor has waiters. */
void keys_maybe_drop(keys_table *t, key *k);

/* The counter lease id, or NULL. */
klease *keys_lease_find(keys_table *t, uint64_t id);
/* A new lease id, never 0 and not in use, hard to guess. */
uint64_t keys_lease_new_id(keys_table *t);
/* Links l (id, until, by set) to k. Returns 0, or -1 on ENOMEM (not linked). */
int keys_lease_link(keys_table *t, key *k, klease *l);
/* Unlinks l from its key, the id index and the deadlines (not freed). */
void keys_lease_unlink(keys_table *t, klease *l);
/* Unlinks and frees k's leases (its expiry too). */
void keys_drop_leases(keys_table *t, key *k);
/* k expires at the wall-clock ms until (0: never): its ttl lease made, moved or freed.
 * Returns 0, or -1 on ENOMEM (nothing changed). */
int keys_ttl_set(keys_table *t, key *k, int64_t until);

/* Gives k the value v[0..len) (a buffer made by the caller, owned from now on) and the
 * next version; the bytes reserved already (store_bytes_reserve). */
void keys_put_value(keys_table *t, store *st, key *k, char *v, size_t len);
/* A copy of s[0..len) (malloc'd, 1 byte when empty), or NULL on ENOMEM. */
char *keys_copy_bytes(const char *s, size_t len);

#endif
