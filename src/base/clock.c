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

uint64_t clock_wall_ns(void)
{
    return ns_of(CLOCK_REALTIME);
}

int64_t clock_wall_ms(void)
{
    return (int64_t)(clock_wall_ns() / 1000000u);
}
