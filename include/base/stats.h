/* SPDX-License-Identifier: Apache-2.0 */
/* stats.h - the server's own counters: requests by command and result with their
 * durations (per HTTP thread, no lock on the request path), open connections, start
 * time. server/metrics.c and INFO read them. */
#ifndef STSD_STATS_H
#define STSD_STATS_H

#include <stdint.h>

#include "base/hist.h"

/* Commands counted apart; slot 0 is for requests that ran none (help page, unknown). */
#define STATS_SLOTS 48

typedef struct stats_cmd {
    uint64_t ok, ko;
    hist_sum dur;            /* request durations */
} stats_cmd;

/* Notes the process start (call once, early). */
void stats_start(void);
/* Wall-clock seconds since the epoch at start, and seconds since start. */
double stats_start_time(void);
double stats_uptime(void);

/* Counts one request of command slot (command index + 1, 0 for none) that answered
 * OK or KO and took ns. Lock-free: each thread counts in its own block. Returns 0, or
 * -1 if this thread's block could not be allocated (the request is not counted). */
int stats_request(int slot, int ko, uint64_t ns);

/* Sums every thread's counts into out[0..STATS_SLOTS) (zeroed first). */
void stats_sum(stats_cmd out[STATS_SLOTS]);

/* Open HTTP connections. */
void stats_connection(int delta);
long stats_connections(void);

/* Frees the per-thread blocks (at exit, once no thread counts any more). */
void stats_shutdown(void);

#endif
