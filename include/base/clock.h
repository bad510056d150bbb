/* clock.h - deadlines for timed waits. Every condition stsd waits on with a timeout is
 * created with CLOCK_MONOTONIC, so that a step of the wall clock neither stretches nor
 * cuts a wait. */
#ifndef STSD_CLOCK_H
#define STSD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC's time ns nanoseconds from now, for pthread_cond_timedwait. */
struct timespec clock_deadline_ns(uint64_t ns);

#endif
