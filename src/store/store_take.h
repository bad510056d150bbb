/* SPDX-License-Identifier: Apache-2.0 */
/* store_take.h - the steps of a change under a list's lock (store_take.c), for the
 * commands (store.c) and for the waiters they serve (store_wait.c). Private to the
 * store. */
#ifndef STSD_STORE_TAKE_H
#define STSD_STORE_TAKE_H

#include "store_int.h"

/* Appends a line to a READ/FIND result (store_next_line's format): 0, or -1 on ENOMEM. */
int store_out_line(buf *out, const char *s, size_t len);

/* Counts lines added to / taken from e's list. Call with e->lock held. */
void store_count_traffic(entry *e, uint64_t added, uint64_t removed);

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

/* What a READ OWNER= asks: the owner who[0..wlen) (hash: store_owner_hash of it), from
 * which end a line is taken, and its LEASE (0: a loan with no deadline). */
typedef struct store_owned_req {
    const char *who;
    size_t wlen;
    uint64_t hash;
    store_end end;
    int64_t lease_ms;
} store_owned_req;

/* READ OWNER=, now or for a waiter: appends to out the line q->who holds in e (with
 * lease_ms > 0 its deadline moves to now + lease_ms, recorded); or, if it holds none, one
 * line taken from q->end, recorded first and lent to q->who (until now + lease_ms, or for
 * good), *taken set to 1. The lease's id is appended to ids. STORE_EMPTY when the owner
 * holds none and the list is empty (nothing changed). Call with e->lock held; sets *lsn:
 * the record the answer waits for (the renewal's, the loan's, or the last of this loan). */
store_rc store_read_owner_locked(store *st, entry *e, const store_owned_req *q, buf *out,
                                 buf *ids, int *taken, uint64_t *lsn);

/* FIND's position in e's list: STORE_OK with *pos, or the store error (STORE_EMPTY,
 * STORE_NO_MATCH, STORE_NOMEM, STORE_MATCH_LIMIT). Call with e->lock held. */
store_rc store_find_pos_locked(entry *e, const store_matcher *m, size_t *pos);

#endif
