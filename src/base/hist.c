/* SPDX-License-Identifier: Apache-2.0 */
/* hist.c - fixed-bucket latency histograms for the metrics. */
#include "base/hist.h"


const double hist_bounds[HIST_BUCKETS] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
};

/* The same bounds in nanoseconds, for the comparison on the hot path. */
static const uint64_t bounds_ns[HIST_BUCKETS] = {
    50000, 100000, 250000, 500000, 1000000, 2500000, 5000000,
    10000000, 25000000, 50000000, 100000000, 250000000, 500000000, 1000000000,
};

void hist_observe(hist *h, uint64_t ns)
{
    int i = 0;
    while (i < HIST_BUCKETS && ns > bounds_ns[i])
        i++;
    atomic_fetch_add_explicit(&h->n[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
}

void hist_add_to(const hist *h, hist_sum *s)
{
    for (int i = 0; i <= HIST_BUCKETS; i++)
        s->n[i] += atomic_load_explicit(&h->n[i], memory_order_relaxed);
    s->sum_ns += atomic_load_explicit(&h->sum_ns, memory_order_relaxed);
}
