/* SPDX-License-Identifier: Apache-2.0 */
/* clock.h - the time stsd measures and waits by: CLOCK_MONOTONIC. Every condition stsd
 * waits on with a timeout is created with it, so that a step of the wall clock neither
 * stretches nor cuts a wait, a deadline or a measured duration. */
#ifndef STSD_CLOCK_H
#define STSD_CLOCK_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* Now, in nanoseconds and in milliseconds (for durations and deadlines). */
uint64_t clock_now_ns(void);
int64_t clock_now_ms(void);

/* CLOCK_MONOTONIC's time ns nanoseconds from now, for pthread_cond_timedwait. */
struct timespec clock_deadline_ns(uint64_t ns);

/* CLOCK_MONOTONIC's time at deadline_ms (a clock_now_ms() value), for
 * pthread_cond_timedwait: now if it has passed. */
struct timespec clock_deadline_at_ms(int64_t deadline_ms);

/* Initializes cv to wait by CLOCK_MONOTONIC. Returns 0, or an errno value. */
int clock_cond_init(pthread_cond_t *cv);

/* The wall clock (CLOCK_REALTIME) since the epoch, in nanoseconds and in milliseconds:
 * for what must keep its meaning across a restart (lease deadlines in the journal) or
 * be shown as a date (process_start_time_seconds), never for a duration. */
uint64_t clock_wall_ns(void);
int64_t clock_wall_ms(void);

#endif
