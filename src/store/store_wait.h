/* SPDX-License-Identifier: Apache-2.0 */
/* store_wait.h - serving the waiters of a list (store_wait.c), for the changes that bring
 * lines in (store.c: ADD, RELEASE, an expired lease, RESET, INITFILE). Private to the
 * store. */
#ifndef STSD_STORE_WAIT_H
#define STSD_STORE_WAIT_H

#include "store_int.h"

/* Serves e's waiters that can be served now, in arrival order, after lines came in
 * (line: the one line added, to skip FIND waiters it cannot satisfy; NULL: any may
 * have). Call with e->lock held; served waiters are chained on *done, and *lsn raised to
 * their records' place. */
void store_wait_serve_locked(store *st, entry *e, const char *line, size_t len,
                             store_waiter **done, uint64_t *lsn);

/* After e->lock is released: tells each waiter of done that it was served, with lsn (the
 * last record of the batch) as its change's place in the log. */
void store_wait_finish(store *st, store_waiter *done, uint64_t lsn);

#endif
