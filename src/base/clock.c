/* clock.c - deadlines on CLOCK_MONOTONIC. */
#include "base/clock.h"

struct timespec clock_deadline_ns(uint64_t ns)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t nsec = (uint64_t)t.tv_nsec + ns % 1000000000u;
    t.tv_sec += (time_t)(ns / 1000000000u + nsec / 1000000000u);
    t.tv_nsec = (long)(nsec % 1000000000u);
    return t;
}
