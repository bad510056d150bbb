/* SPDX-License-Identifier: Apache-2.0 */
/* bench-barrier.c - what a BARRIER costs, on a real stsd started here:
 *   release skew: PARTIES arrivals from PROCS client processes (keep-alive connections,
 *     one arrival each per generation), GENERATIONS in a row after a warm-up one; per
 *     generation, the time from the last arrival sent to the last answer received, as the
 *     clients measure it (CLOCK_MONOTONIC is shared by the processes); a histogram of
 *     every answer's delay after the last arrival, and that delay by place of arrival.
 *     Twice: with the last arrival sent 20 ms after all the others were (the release
 *     alone, as when arrivals trickle in over a ramp-up), then in bursts (every process
 *     sends all its arrivals at once: the last one waits behind the others' parsing);
 *   10,000 parked arrivals: stsd's CPU (% of one core, from /proc/PID/stat) and RSS while
 *     they wait, then how long OPEN takes to release them all.
 * Usage: build/bench-barrier [PARTIES [PROCS [GENERATIONS [PARKED [IDLE_SECONDS]]]]]
 *        (defaults 1000 4 20 10000 10); STSD=path. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

static daemon_proc d;

static void die(const char *what)
{
    fprintf(stderr, "bench-barrier: %s\n", what);
    exit(1);
}

/* What the processes write, in memory they share: per generation (warm-up first), each
 * process's time its last arrival was sent, and per arrival its place and answer time. */
typedef struct shared {
    int parties, procs, gens;
    int hold_last;         /* process 0 sends the last arrival once the others are sent */
    int *sent;             /* [gen]: processes done sending (the held one aside) */
    double *last_sent;     /* [gen][proc] */
    double *answered;      /* [gen][arrival slot] */
    int *place;            /* [gen][arrival slot]: X-STS-Arrival */
} shared;

/* One client process: conns connections, slots first..first+conns-1. */
static void client(shared *s, int proc, int first, int conns)
{
    http_conn *c = calloc((size_t)conns, sizeof *c);
    struct pollfd *p = calloc((size_t)conns, sizeof *p);
    char target[128];
    snprintf(target, sizeof target, "/sts/BARRIER?NAME=bench&PARTIES=%d&TIMEOUT=60", s->parties);
    if (!c || !p)
        die("out of memory");
    for (int i = 0; i < conns; i++)
        if (http_conn_open(&c[i], d.port) != 0)
            die("connect failed");
    for (int g = 0; g <= s->gens; g++) {
        int held = s->hold_last && proc == 0;
        for (int i = 0; i < conns - held; i++)
            if (http_conn_send(&c[i], target) != 0)
                die("send failed");
        s->last_sent[g * s->procs + proc] = td_mono_ms();
        __atomic_add_fetch(&s->sent[g], 1, __ATOMIC_SEQ_CST);
        if (held) {
            while (__atomic_load_n(&s->sent[g], __ATOMIC_SEQ_CST) < s->procs)
                usleep(200);
            usleep(20000);
            if (http_conn_send(&c[conns - 1], target) != 0)
                die("send failed");
            s->last_sent[g * s->procs + proc] = td_mono_ms();
        }
        int left = conns;
        char *done = calloc((size_t)conns, 1);
        while (left > 0) {
            for (int i = 0; i < conns; i++)
                p[i] = (struct pollfd){done[i] ? -1 : c[i].fd, POLLIN, 0};
            if (poll(p, (nfds_t)conns, 70000) <= 0)
                die("no answer within 70 s");
            double t = td_mono_ms();
            for (int i = 0; i < conns; i++) {
                if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                http_reply r;
                char v[32];
                if (http_conn_recv(&c[i], &r) != 0 || r.status != 200 ||
                    !strstr(r.body, "<title>OK</title>") ||
                    http_header(&r, "X-STS-Arrival", v, sizeof v) != 0)
                    die("a bad answer");
                s->answered[(size_t)g * s->parties + first + i] = t;
                s->place[(size_t)g * s->parties + first + i] = atoi(v);
                http_reply_free(&r);
                done[i] = 1;
                left--;
            }
        }
        free(done);
    }
    for (int i = 0; i < conns; i++)
        http_conn_close(&c[i]);
    free(c);
    free(p);
}

static void *share(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        die("mmap failed");
    return m;
}

static void skew(int parties, int procs, int gens, int hold_last)
{
    shared s = {.parties = parties, .procs = procs, .gens = gens, .hold_last = hold_last};
    size_t n = (size_t)(gens + 1) * (size_t)parties;
    s.sent = share((size_t)(gens + 1) * sizeof(int));
    s.last_sent = share((size_t)(gens + 1) * (size_t)procs * sizeof(double));
    s.answered = share(n * sizeof(double));
    s.place = share(n * sizeof(int));
    pid_t *kids = calloc((size_t)procs, sizeof *kids);
    fflush(stdout);                    /* the children must not print it again */
    for (int k = 0, first = 0; k < procs; k++) {
        int conns = parties / procs + (k < parties % procs);
        kids[k] = fork();
        if (kids[k] == 0) {
            client(&s, k, first, conns);
            _exit(0);
        }
        first += conns;
    }
    for (int k = 0; k < procs; k++) {
        int st;
        if (waitpid(kids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            die("a client process failed");
    }
    /* Per measured generation: last arrival sent -> last answer; every answer's delay. */
    double *skews = calloc((size_t)gens, sizeof *skews);
    double *delay = calloc((size_t)gens * (size_t)parties, sizeof *delay);
    enum { DECILES = 10 };
    double *by_place[DECILES];
    int by_n[DECILES] = {0};
    for (int k = 0; k < DECILES; k++)
        by_place[k] = calloc((size_t)gens * (size_t)parties, sizeof(double));
    for (int g = 1; g <= gens; g++) {
        double last = 0, end = 0;
        for (int k = 0; k < procs; k++)
            if (s.last_sent[g * procs + k] > last)
                last = s.last_sent[g * procs + k];
        char *seen = calloc((size_t)parties + 1, 1);
        for (int i = 0; i < parties; i++) {
            size_t at = (size_t)g * parties + i;
            int pl = s.place[at];
            if (pl < 1 || pl > parties || seen[pl]++)
                die("places are not 1..PARTIES once each");
            double dl = s.answered[at] - last;
            if (dl < 0)
                dl = 0;     /* answered while the last sender was still taking its time */
            delay[(size_t)(g - 1) * parties + i] = dl;
            int dec = (pl - 1) * DECILES / parties;
            by_place[dec][by_n[dec]++] = dl;
            if (s.answered[at] > end)
                end = s.answered[at];
        }
        free(seen);
        skews[g - 1] = end - last;
    }
    double worst = 0;
    printf("release skew, %d parties from %d processes, %d generations (after a warm-up), %s:\n",
           parties, procs, gens, hold_last ? "the last arrival 20 ms after the others"
                                            : "all arrivals in bursts");
    printf("  last arrival sent -> last answer received, per generation (ms):");
    for (int g = 0; g < gens; g++) {
        printf("%s %.1f", g % 10 ? "" : "\n   ", skews[g]);
        if (skews[g] > worst)
            worst = skews[g];
    }
    qsort(skews, (size_t)gens, sizeof *skews, td_cmp_double);
    printf("\n  median %.1f ms, worst %.1f ms\n", skews[gens / 2], worst);
    size_t total = (size_t)gens * parties;
    qsort(delay, total, sizeof *delay, td_cmp_double);
    static const double edges[] = {1, 2, 5, 10, 20, 50, 100, 1e300};
    static const char *const labels[] = {"< 1 ms", "1-2 ms", "2-5 ms", "5-10 ms", "10-20 ms",
                                         "20-50 ms", "50-100 ms", ">= 100 ms"};
    printf("  every answer's delay after the last arrival (%zu answers): p50 %.1f ms, "
           "p99 %.1f ms, max %.1f ms\n", total, delay[total / 2], delay[total * 99 / 100],
           delay[total - 1]);
    size_t from = 0;
    for (int b = 0; b < 8; b++) {
        size_t to = from;
        while (to < total && delay[to] < edges[b])
            to++;
        int bar = (int)((to - from) * 50 / total);
        printf("    %-9s %6zu %5.1f%% ", labels[b], to - from, 100.0 * (to - from) / total);
        for (int i = 0; i < bar; i++)
            putchar('#');
        putchar('\n');
        from = to;
    }
    printf("  by place of arrival (X-STS-Arrival), delay p50 / max:\n");
    for (int k = 0; k < DECILES; k++) {
        qsort(by_place[k], (size_t)by_n[k], sizeof(double), td_cmp_double);
        printf("    %4d-%-4d  %6.1f / %6.1f ms\n", k * parties / DECILES + 1,
               (k + 1) * parties / DECILES, by_n[k] ? by_place[k][by_n[k] / 2] : 0,
               by_n[k] ? by_place[k][by_n[k] - 1] : 0);
        free(by_place[k]);
    }
    free(skews);
    free(delay);
    free(kids);
    munmap(s.sent, (size_t)(gens + 1) * sizeof(int));
    munmap(s.last_sent, (size_t)(gens + 1) * (size_t)procs * sizeof(double));
    munmap(s.answered, n * sizeof(double));
    munmap(s.place, n * sizeof(int));
}

/* n arrivals parked at a barrier of n + 1: stsd's CPU over secs idle, then OPEN. */
static void parked(int n, int secs)
{
    int *fd = calloc((size_t)n, sizeof *fd);
    http_conn tmp;
    char target[128];
    double cpu0, cpu1;
    long rss0, rss1;
    snprintf(target, sizeof target, "/sts/BARRIER?NAME=parked&PARTIES=%d&TIMEOUT=600", n + 1);
    td_proc_usage(d.pid, &cpu0, &rss0);
    for (int i = 0; i < n; i++) {
        if (http_conn_open(&tmp, d.port) != 0 || http_conn_send(&tmp, target) != 0) {
            fprintf(stderr, "bench-barrier: connection %d failed\n", i);
            exit(1);
        }
        fd[i] = tmp.fd;
    }
    sleep(1);
    http_reply r;
    if (http_get(d.port, "/sts/BARRIERS?FORMAT=JSON", &r) != 0)
        die("BARRIERS failed");
    char want[64];
    snprintf(want, sizeof want, "\"arrived\":%d,", n);
    if (!strstr(r.body, want))
        die("not every arrival is parked");
    http_reply_free(&r);
    td_proc_usage(d.pid, &cpu0, &rss1);
    double t0 = td_mono_ms();
    sleep((unsigned)secs);
    td_proc_usage(d.pid, &cpu1, &rss1);
    double t1 = td_mono_ms();
    printf("%d parked arrivals, %d s idle: stsd %.2f %% CPU (%.3f s), RSS %ld -> %ld KiB "
           "(+%.0f bytes each)\n", n, secs, 100 * (cpu1 - cpu0) * 1000 / (t1 - t0),
           cpu1 - cpu0, rss0, rss1, (double)(rss1 - rss0) * 1024 / n);
    /* OPEN by hand: from sending it to the last arrival's answer. */
    struct pollfd *p = calloc((size_t)n, sizeof *p);
    double t = td_mono_ms();
    if (http_get(d.port, "/sts/OPEN?NAME=parked", &r) != 0)
        die("OPEN failed");
    http_reply_free(&r);
    double opened = td_mono_ms();
    int left = n;
    while (left > 0) {
        for (int i = 0; i < n; i++)
            p[i] = (struct pollfd){fd[i], POLLIN, 0};
        if (poll(p, (nfds_t)n, 10000) <= 0)
            die("released arrivals not answered within 10 s");
        for (int i = 0; i < n; i++)
            if (p[i].revents) {
                char b[512];
                ssize_t got = read(fd[i], b, sizeof b - 1);
                if (got > 0)
                    b[got] = '\0';
                if (got <= 0 || !strstr(b, "X-STS-Arrival"))
                    die("a bad answer after OPEN");
                close(fd[i]);
                fd[i] = -1;
                left--;
            }
    }
    double end = td_mono_ms();
    printf("OPEN of %d parked arrivals: answered in %.1f ms, last arrival answered %.1f ms "
           "after OPEN was sent\n", n, opened - t, end - t);
    free(p);
    free(fd);
}

int main(int argc, char **argv)
{
    int parties = argc > 1 ? atoi(argv[1]) : 1000;
    int procs = argc > 2 ? atoi(argv[2]) : 4;
    int gens = argc > 3 ? atoi(argv[3]) : 20;
    int nparked = argc > 4 ? atoi(argv[4]) : 10000;
    int idle = argc > 5 ? atoi(argv[5]) : 10;
    if (parties < procs || procs < 1 || gens < 1 || nparked < 0 || idle < 1)
        die("usage: bench-barrier [PARTIES [PROCS [GENERATIONS [PARKED [IDLE_SECONDS]]]]]");
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    signal(SIGPIPE, SIG_IGN);
    char maxc[64];
    snprintf(maxc, sizeof maxc, "-Dstsd.maxConnections=%d", nparked + parties + 100);
    const char *extra[] = {maxc, NULL};
    if (td_mkdirs(&d) != 0 || td_start(&d, extra) != 0)
        die("cannot start stsd");
    skew(parties, procs, gens, 1);
    printf("\n");
    skew(parties, procs, gens, 0);
    printf("\n");
    if (nparked > 0)
        parked(nparked, idle);
    td_stop(&d, 0);
    td_cleanup(&d);
    return 0;
}
