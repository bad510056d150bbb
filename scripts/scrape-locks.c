/* SPDX-License-Identifier: Apache-2.0 */
/* scrape-locks.c - what a /metrics scrape's per-list locks cost the requests beside it:
 * the store's side of a scrape (store_stats with rates, as server/metrics.c calls it) over
 * N lists, timed whole and per list, while one thread READs (KEEP=TRUE) one of the lists
 * as fast as it can; READ latency with and without scrapes running, side by side.
 * Usage: build/scrape-locks [LISTS [SECONDS]]   (defaults 10000 and 3) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "store/store.h"

static store *st;
static atomic_int stop_scrape;
static double secs = 3;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void noop(const store_list_stats *s, void *ctx)
{
    (void)s;
    (void)ctx;
}

#define MAXLAT 20000000
static double *lat;
static size_t nlat;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* READs list "l05000" (KEEP=TRUE: the list keeps its lines) for secs, recording each. */
static void *reader(void *arg)
{
    (void)arg;
    buf out = BUF_INIT;
    nlat = 0;
    double end = now_ns() + secs * 1e9;
    while (now_ns() < end && nlat < MAXLAT) {
        size_t count;
        uint64_t lsn;
        out.len = 0;
        double t0 = now_ns();
        if (store_read(st, "l05000", STORE_FIRST, 1, 1, &out, &count, &lsn) != STORE_OK)
            abort();
        lat[nlat++] = now_ns() - t0;
    }
    buf_free(&out);
    return NULL;
}

static double scrape_total_ns, scrape_max_ns;
static long scrapes;

static void *scraper(void *arg)
{
    (void)arg;
    scrapes = 0;
    scrape_total_ns = scrape_max_ns = 0;
    while (!atomic_load(&stop_scrape)) {
        double t0 = now_ns();
        store_stats(st, 1, noop, NULL);
        double t = now_ns() - t0;
        scrape_total_ns += t;
        if (t > scrape_max_ns)
            scrape_max_ns = t;
        scrapes++;
    }
    return NULL;
}

static void report(const char *what)
{
    qsort(lat, nlat, sizeof *lat, cmp_double);
    size_t over = 0;
    for (size_t i = 0; i < nlat; i++)
        over += lat[i] > 1000;
    printf("%-22s %9zu READs  p50 %4.0f ns  p99 %4.0f ns  p99.99 %6.0f ns  over 1 us %.4f%%  "
           "max %5.2f ms\n", what, nlat, lat[nlat / 2], lat[nlat * 99 / 100],
           lat[nlat * 9999 / 10000], 100.0 * (double)over / (double)nlat, lat[nlat - 1] / 1e6);
}

int main(int argc, char **argv)
{
    int lists = argc > 1 ? atoi(argv[1]) : 10000;
    if (argc > 2)
        secs = atof(argv[2]);
    lat = malloc(MAXLAT * sizeof *lat);
    store_limits lim = {0, 0, 0};
    st = store_create(&lim);
    if (!st || !lat)
        return 1;
    char name[32];
    for (int i = 0; i < lists; i++) {
        snprintf(name, sizeof name, "l%05d", i);
        for (int k = 0; k < 20; k++) {
            uint64_t lsn;
            if (store_add(st, name, "line-of-data", 12, 1, 0, &lsn) != STORE_OK)
                return 1;
        }
    }
    snprintf(name, sizeof name, "l%05d", lists / 2);
    printf("%d lists of 20 lines; READ KEEP=TRUE on one (l05000), %.0f s each\n", lists, secs);
    pthread_t r, s;
    /* Alone first, then beside back-to-back scrapes, then alone again. */
    for (int round = 0; round < 3; round++) {
        int with = round == 1;
        atomic_store(&stop_scrape, 0);
        if (with)
            pthread_create(&s, NULL, scraper, NULL);
        pthread_create(&r, NULL, reader, NULL);
        pthread_join(r, NULL);
        if (with) {
            atomic_store(&stop_scrape, 1);
            pthread_join(s, NULL);
        }
        report(with ? "beside scrapes" : "alone");
        if (with)
            printf("%-22s %9ld scrapes  mean %.2f ms  max %.2f ms  = %.0f ns per list "
                   "(each list's lock held for less)\n",
                   "store side of a scrape", scrapes, scrape_total_ns / scrapes / 1e6,
                   scrape_max_ns / 1e6, scrape_total_ns / scrapes / lists);
    }
    store_free(st);
    free(lat);
    return 0;
}
