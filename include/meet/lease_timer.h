/* SPDX-License-Identifier: Apache-2.0 */
/* lease_timer.h - the thread that ends expired leases, of lines (back to the head of
 * their lists) and of keys (increments undone, runs ended, TTLs up), within
 * LEASE_TIMER_TICK_MS of their deadlines. */
#ifndef STSD_MEET_LEASE_TIMER_H
#define STSD_MEET_LEASE_TIMER_H

#include "base/buf.h"
#include "store/store.h"

typedef struct lease_timer lease_timer;

/* Starts the thread on st (which must outlive it); its first round puts back the leases
 * that expired while stsd was down. Returns NULL with a message in err. */
lease_timer *lease_timer_start(store *st, buf *err);

/* Stops the thread and frees t (NULL is fine). */
void lease_timer_stop(lease_timer *t);

#endif
