/* SPDX-License-Identifier: Apache-2.0 */
/* bench-queues.c - what waiting and leases cost, on a real stsd started here:
 *   wake latency: 100 READ TIMEOUT waiters parked on a list; a producer's ADD answered ->
 *     a waiter answered, p50/p99 over many ADDs;
 *   5,000 parked waiters: stsd's CPU (% of one core) and RSS while they wait;
 *   READ LEASE + ACK pairs/s against READ KEEP=FALSE alone/s (same connections,
 *     alternating rounds; ratio = pairs / reads).
 * Usage: build/bench-queues [SECONDS [ROUNDS]] (defaults 3 and 3); STSD=path. */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static daemon_proc d;

static double now_s(void)
{
    return td_mono_ms() / 1e3;
}

static void must_get(const char *target)
{
    http_reply r;
    if (http_get(d.port, target, &r) != 0 || !strstr(r.body, "<title>OK</title>")) {
        fprintf(stderr, "bench-queues: %s failed\n", target);
        exit(1);
    }
    http_reply_free(&r);
}

/* ---- wake latency ---- */

static void wake_latency(int adds)
{
    enum { W = 100 };
    static http_conn c[W];
    const char *wait = "/sts/READ?FILENAME=wake&KEEP=FALSE&TIMEOUT=60";
    for (int i = 0; i < W; i++)
        if (http_conn_open(&c[i], d.port) != 0 || http_conn_send(&c[i], wait) != 0)
            exit(1);
    usleep(200000);
    http_conn prod;
    if (http_conn_open(&prod, d.port) != 0)
        exit(1);
    struct pollfd p[W];
    double *lat = calloc((size_t)adds, sizeof *lat);
    for (int k = 0; k < adds; k++) {
        http_reply r;
        if (http_conn_get(&prod, "/sts/ADD?FILENAME=wake&LINE=x", &r) != 0)
            exit(1);
        http_reply_free(&r);
        double t0 = now_s();
        for (int i = 0; i < W; i++)
            p[i] = (struct pollfd){c[i].fd, POLLIN, 0};
        if (poll(p, W, 5000) <= 0)
            exit(1);
        double t1 = now_s();
        lat[k] = (t1 - t0) * 1000;
        for (int i = 0; i < W; i++)
            if (p[i].revents) {
                if (http_conn_recv(&c[i], &r) != 0)
                    exit(1);
                http_reply_free(&r);
                if (http_conn_send(&c[i], wait) != 0)  /* back in the queue, at its end */
                    exit(1);
            }
        usleep(2000);
    }
    qsort(lat, (size_t)adds, sizeof *lat, td_cmp_double);
    printf("%-44s %8.3f ms p50 %8.3f ms p99   (%d ADDs, 100 waiters)\n",
           "wake latency: ADD answered -> waiter answered", lat[adds / 2],
           lat[(int)(adds * 0.99)], adds);
    for (int i = 0; i < W; i++)
        http_conn_close(&c[i]);
    http_conn_close(&prod);
    free(lat);
}

/* ---- parked waiters ---- */

static void parked(int n, int secs)
{
    http_conn *c = calloc((size_t)n, sizeof *c);
    double cpu0, cpu1;
    long rss0, rss1;
    td_proc_usage(d.pid, &cpu0, &rss0);
    for (int i = 0; i < n; i++)
        if (http_conn_open(&c[i], d.port) != 0 ||
            http_conn_send(&c[i], "/sts/READ?FILENAME=parked&KEEP=FALSE&TIMEOUT=60") != 0) {
            fprintf(stderr, "bench-queues: connection %d failed\n", i);
            exit(1);
        }
    sleep(1);
    td_proc_usage(d.pid, &cpu0, &rss1);
    double t0 = now_s();
    sleep((unsigned)secs);
    td_proc_usage(d.pid, &cpu1, &rss1);
    double t1 = now_s();
    printf("%-44s %8.2f %% CPU   RSS %ld -> %ld KiB (+%.0f bytes each)\n",
           "5,000 parked waiters, idle", 100 * (cpu1 - cpu0) / (t1 - t0), rss0, rss1,
           (double)(rss1 - rss0) * 1024 / n);
    for (int i = 0; i < n; i++)
        http_conn_close(&c[i]);
    free(c);
}

/* ---- LEASE + ACK against READ ---- */

typedef struct worker {
    int lease;
    double until;
    long done;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    http_conn c;
    if (http_conn_open(&c, d.port) != 0)
        return NULL;
    while (now_s() < w->until) {
        http_reply r;
        if (http_conn_get(&c, w->lease ? "/sts/READ?FILENAME=pairs.csv&KEEP=FALSE&LEASE=600"
                                        : "/sts/READ?FILENAME=pairs.csv&KEEP=FALSE", &r) != 0)
            break;
        if (w->lease) {
            char id[64], t[160];
            if (http_header(&r, "X-STS-Lease", id, sizeof id) != 0) {
                http_reply_free(&r);
                break;
            }
            http_reply_free(&r);
            snprintf(t, sizeof t, "/sts/ACK?FILENAME=pairs.csv&LEASE=%s", id);
            if (http_conn_get(&c, t, &r) != 0)
                break;
        }
        http_reply_free(&r);
        w->done++;
    }
    http_conn_close(&c);
    return NULL;
}

static double rate(int lease, int conns, int secs)
{
    pthread_t th[64];
    worker w[64];
    double t0 = now_s();
    for (int i = 0; i < conns; i++) {
        w[i] = (worker){lease, t0 + secs, 0};
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    long total = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(th[i], NULL);
        total += w[i].done;
    }
    return (double)total / (now_s() - t0);
}

static void pairs(int secs, int rounds)
{
    double pr[16], rd[16], ratio[16];
    for (int k = 0; k < rounds; k++) {
        /* Each round on a fresh copy of the 2M lines (more than a round takes). */
        must_get("/sts/INITFILE?FILENAME=pairs.csv");
        rd[k] = rate(0, 4, secs);
        must_get("/sts/INITFILE?FILENAME=pairs.csv");
        pr[k] = rate(1, 4, secs);
        ratio[k] = pr[k] / rd[k];
    }
    qsort(pr, (size_t)rounds, sizeof *pr, td_cmp_double);
    qsort(rd, (size_t)rounds, sizeof *rd, td_cmp_double);
    qsort(ratio, (size_t)rounds, sizeof *ratio, td_cmp_double);
    printf("%-44s %8.0f /s\n", "READ KEEP=FALSE alone", rd[rounds / 2]);
    printf("%-44s %8.0f /s   ratio %.2f (median of %d alternated rounds)\n",
           "READ LEASE + ACK pairs", pr[rounds / 2], ratio[rounds / 2], rounds);
}

int main(int argc, char **argv)
{
    int secs = argc > 1 ? atoi(argv[1]) : 3, rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (rounds > 16)
        rounds = 16;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (td_mkdirs(&d) != 0)
        return 1;
    /* A file of lines for the READ rounds. */
    size_t n = 2000000, len = 0;
    char *text = malloc(n * 12);
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "line%07zu\n", i);
    td_write_file(&d, "pairs.csv", text, len);
    free(text);
    const char *extra[] = {"-Dstsd.maxConnections=10000", NULL};
    if (td_start(&d, extra) != 0)
        return 1;
    printf("bench-queues: stsd pid %d, %ld cores\n", (int)d.pid, sysconf(_SC_NPROCESSORS_ONLN));
    wake_latency(1000);
    parked(5000, secs * 2);
    pairs(secs, rounds);
    td_stop(&d, 0);
    td_cleanup(&d);
    return 0;
}
