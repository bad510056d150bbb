/* SPDX-License-Identifier: Apache-2.0 */
/* hist.h - latency histograms with fixed buckets from 50 us to 1 s, counted with
 * atomic adds (no lock), read by summing. */
#ifndef STSD_HIST_H
#define STSD_HIST_H

#include <stdatomic.h>
#include <stdint.h>

#define HIST_BUCKETS 14

/* Upper bounds of the buckets, in seconds; a last, implicit bucket holds the rest. */
extern const double hist_bounds[HIST_BUCKETS];

typedef struct hist {
    _Atomic uint64_t n[HIST_BUCKETS + 1];   /* per bucket, not cumulative */
    _Atomic uint64_t sum_ns;
} hist;

/* A snapshot of one or more histograms added together. */
typedef struct hist_sum {
    uint64_t n[HIST_BUCKETS + 1];
    uint64_t sum_ns;
} hist_sum;

/* Counts one observation of ns nanoseconds. Safe from any thread. */
void hist_observe(hist *h, uint64_t ns);

/* Adds h's counts to *s. */
void hist_add_to(const hist *h, hist_sum *s);

#endif
