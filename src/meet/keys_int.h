/* SPDX-License-Identifier: Apache-2.0 */
/* keys_int.h - the types keys.c (the commands on keys), keys_table.c
 * (the table, its lease index), keys_adopt.c and keys_view.c (KEYS, RUNS)
 * share. Types only. */
#ifndef STSD_MEET_KEYS_INT_H
#define STSD_MEET_KEYS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/heap.h"
#include "meet/keys.h"

typedef struct keys_table keys_table;
typedef struct key key;

/* An increment on loan. */
typedef struct klease {
    uint64_t id;
    int64_t until;               /* wall-clock ms */
    int64_t by;
    int run;                     /* ONCE's run lease (by: the TTL in ms its DONE gives the
                                  * key, 0: none), not a counter's */
    int ttl;                     /* the key's expiry (TTL=, EXPIRE): at until it is deleted;
                                  * kept with the leases for their index and deadline heap */
    key *k;
    struct klease *hnext;        /* in its id bucket */
    struct klease *prev, *next;  /* in its key's leases */
    uint32_t heap_at;
} klease;

/* A key; version 0: it does not exist, and the entry stays only for its waiters. */
struct key {
    key *hnext;
    uint64_t version;
    char *value;
    size_t len;
    key_waiter *incr_head, *incr_tail;     /* INCRs waiting to fit, in arrival order */
    key_waiter *watch_head, *watch_tail;   /* GETs waiting for a change */
    klease *leases;
    klease *run;                           /* ONCE: the run in progress (in leases) */
    klease *ttl;                           /* its expiry (in leases), or NULL */
    size_t name_len;
    char name[];
};

struct keys_table {
    pthread_mutex_t lock;
    key **b;
    size_t nb, entries;          /* buckets; entries (ghosts included) */
    size_t count;                /* keys that exist */
    size_t waiters;
    klease **lb;
    size_t lnb, leases;
    heap deadlines;
    uint64_t counter, idkey;
};

#endif
