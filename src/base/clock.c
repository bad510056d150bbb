/* SPDX-License-Identifier: Apache-2.0 */
/* clock.c - now and deadlines on CLOCK_MONOTONIC; the wall clock for dates. */
#include "base/clock.h"

static uint64_t ns_of(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

uint64_t clock_now_ns(void)
{
    return ns_of(CLOCK_MONOTONIC);
}

int64_t clock_now_ms(void)
{
    return (int64_t)(clock_now_ns() / 1000000u);
}

struct timespec clock_deadline_ns(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t nsec = (uint64_t)t.tv_nsec + ns % 1000000000u;
    t.tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
    t.tv_nsec = (long)(nsec % 1000000000u);
    return t;
}

struct timespec clock_deadline_at_ms(int64_t deadline_ms)
{
    int64_t left = deadline_ms - clock_now_ms();
    return clock_deadline_ns(left > 0 ? (uint64_t)left * 1000000u : 0);
}

int clock_cond_init(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    int rc = pthread_condattr_init(&ca);
    if (rc == 0) {
        rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        if (rc == 0)
            rc = pthread_cond_init(cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    return rc;
}

uint64_t clock_wall_ns(void)
{
    return ns_of(CLOCK_REALTIME);
}

int64_t clock_wall_ms(void)
{
    return (int64_t)(clock_wall_ns() / 1000000u);
}
