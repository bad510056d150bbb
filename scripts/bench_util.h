/* SPDX-License-Identifier: Apache-2.0 */
/* bench_util.h - what the in-process benchmarks share: a monotonic clock in seconds and
 * a small deterministic generator (xorshift), so that every run draws the same numbers. */
#ifndef STSD_BENCH_UTIL_H
#define STSD_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t bench_rng = 0x9e3779b97f4a7c15ull;

/* A number in [0, n), n > 0. */
static inline size_t bench_below(size_t n)
{
    bench_rng ^= bench_rng << 13;
    bench_rng ^= bench_rng >> 7;
    bench_rng ^= bench_rng << 17;
    return (size_t)(bench_rng % n);
}

#endif
