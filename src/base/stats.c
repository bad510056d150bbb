/* SPDX-License-Identifier: Apache-2.0 */
/* stats.c - request counters kept per HTTP thread and summed by the scrape. */
#include "base/stats.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

/* One per thread that ever counted a request; never freed before stats_shutdown, so a
 * scrape may read the block of a thread that has ended. */
typedef struct block {
    struct block *next;
    _Atomic uint64_t ok[STATS_SLOTS], ko[STATS_SLOTS];
    hist dur[STATS_SLOTS];
} block;

static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static block *blocks;                 /* under blocks_lock */
static __thread block *mine;
static atomic_long connections;
static uint64_t start_mono_ns, start_wall_ns;

void stats_start(void)
{
    start_mono_ns = clock_now_ns();
    start_wall_ns = clock_wall_ns();
}

double stats_start_time(void)
{
    return (double)start_wall_ns / 1e9;
}

double stats_uptime(void)
{
    return (double)(clock_now_ns() - start_mono_ns) / 1e9;
}

int stats_request(int slot, int ko, uint64_t ns)
{
    block *b = mine;
    if (!b) {
        b = calloc(1, sizeof *b);
        if (!b)
            return -1;
        pthread_mutex_lock(&blocks_lock);
        b->next = blocks;
        blocks = b;
        pthread_mutex_unlock(&blocks_lock);
        mine = b;
    }
    if (slot < 0 || slot >= STATS_SLOTS)
        slot = 0;
    atomic_fetch_add_explicit(ko ? &b->ko[slot] : &b->ok[slot], 1, memory_order_relaxed);
    hist_observe(&b->dur[slot], ns);
    return 0;
}

void stats_sum(stats_cmd out[STATS_SLOTS])
{
    memset(out, 0, STATS_SLOTS * sizeof *out);
    pthread_mutex_lock(&blocks_lock);
    for (block *b = blocks; b; b = b->next)
        for (int i = 0; i < STATS_SLOTS; i++) {
            out[i].ok += atomic_load_explicit(&b->ok[i], memory_order_relaxed);
            out[i].ko += atomic_load_explicit(&b->ko[i], memory_order_relaxed);
            hist_add_to(&b->dur[i], &out[i].dur);
        }
    pthread_mutex_unlock(&blocks_lock);
}

void stats_connection(int delta)
{
    atomic_fetch_add(&connections, delta);
}

long stats_connections(void)
{
    return atomic_load(&connections);
}

void stats_shutdown(void)
{
    pthread_mutex_lock(&blocks_lock);
    while (blocks) {
        block *next = blocks->next;
        free(blocks);
        blocks = next;
    }
    pthread_mutex_unlock(&blocks_lock);
}
