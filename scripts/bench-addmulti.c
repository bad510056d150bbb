/* SPDX-License-Identifier: Apache-2.0 */
/* bench-addmulti.c - bulk adds against single ones, on a real stsd started here: LINES
 * lines by single ADDs, then LINES lines by ADDMULTI in batches of BATCH (text/plain
 * POST bodies), each over 8 keep-alive connections, one thread per connection; the
 * lists' lengths checked after. Usage: build/bench-addmulti [LINES [BATCH [SINGLE]]]
 * (defaults 1000000, 1000, LINES: SINGLE caps the single ADDs, whose rate is then
 * scaled); STSD=path; extra stsd options in BENCH_ARGS are not taken: a default
 * configuration, journal off. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

enum { CONNS = 8 };

typedef struct job {
    int port;
    int id;
    long from, to;            /* the lines this connection adds: [from, to) */
    long batch;               /* 0: single ADDs */
    int failed;
} job;

/* One ADDMULTI of lines [from, to) as a text/plain POST on c. 0 or -1. */
static int post_batch(http_conn *c, long from, long to, char *req, size_t cap)
{
    char body_head[256];
    size_t blen = 0;
    char *body = req + 256;          /* the body first, its head then in front of it */
    for (long i = from; i < to; i++)
        blen += (size_t)snprintf(body + blen, cap - 256 - blen, "line-%ld\n", i);
    int h = snprintf(body_head, sizeof body_head,
                     "POST /sts/ADDMULTI?FILENAME=bulk&ADD_MODE=LAST HTTP/1.1\r\nHost: x\r\n"
                     "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n", blen);
    char *start = body - h;
    memcpy(start, body_head, (size_t)h);
    size_t len = (size_t)h + blen, off = 0;
    while (off < len) {
        ssize_t n = write(c->fd, start + off, len - off);
        if (n <= 0)
            return -1;
        off += (size_t)n;
    }
    http_reply r;
    if (http_conn_recv(c, &r) != 0)
        return -1;
    int bad = r.status != 200 || !strstr(r.body, "<title>OK</title>");
    http_reply_free(&r);
    return bad ? -1 : 0;
}

static void *run(void *arg)
{
    job *j = arg;
    http_conn c;
    if (http_conn_open(&c, j->port) != 0) {
        j->failed = 1;
        return NULL;
    }
    size_t cap = (size_t)(j->batch ? j->batch : 1) * 32 + 1024;
    char *req = malloc(cap);
    char target[128];
    for (long i = j->from; req && i < j->to && !j->failed; ) {
        if (j->batch) {
            long end = i + j->batch < j->to ? i + j->batch : j->to;
            j->failed = post_batch(&c, i, end, req, cap) != 0;
            i = end;
        } else {
            http_reply r;
            snprintf(target, sizeof target, "/sts/ADD?FILENAME=single&LINE=line-%ld&ADD_MODE=LAST",
                     i);
            j->failed = http_conn_get(&c, target, &r) != 0 || r.status != 200;
            if (!j->failed)
                http_reply_free(&r);
            i++;
        }
    }
    j->failed |= !req;
    free(req);
    http_conn_close(&c);
    return NULL;
}

/* Adds lines [0, total) over CONNS connections; returns the seconds taken, or -1. */
static double phase(int port, long total, long batch)
{
    pthread_t t[CONNS];
    job jobs[CONNS];
    double t0 = td_mono_ms();
    for (int i = 0; i < CONNS; i++) {
        jobs[i] = (job){port, i, total * i / CONNS, total * (i + 1) / CONNS, batch, 0};
        if (pthread_create(&t[i], NULL, run, &jobs[i]) != 0)
            return -1;
    }
    int failed = 0;
    for (int i = 0; i < CONNS; i++) {
        pthread_join(t[i], NULL);
        failed |= jobs[i].failed;
    }
    return failed ? -1 : (td_mono_ms() - t0) / 1000.0;
}

static long length_of(int port, const char *name)
{
    char target[128];
    http_reply r;
    snprintf(target, sizeof target, "/sts/LENGTH?FILENAME=%s", name);
    if (http_get(port, target, &r) != 0)
        return -1;
    const char *b = strstr(r.body, "<body>");
    long n = b ? atol(b + 6) : -1;
    http_reply_free(&r);
    return n;
}

int main(int argc, char **argv)
{
    long lines = argc > 1 ? atol(argv[1]) : 1000000;
    long batch = argc > 2 ? atol(argv[2]) : 1000;
    long single = argc > 3 ? atol(argv[3]) : lines;
    daemon_proc d;
    if (lines < CONNS || batch < 1 || single < CONNS || td_mkdirs(&d) != 0 ||
        td_start(&d, NULL) != 0)
        return 1;
    double s1 = phase(d.port, single, 0);
    double s2 = phase(d.port, lines, batch);
    long n1 = length_of(d.port, "single"), n2 = length_of(d.port, "bulk");
    td_stop(&d, 0);
    td_cleanup(&d);
    if (s1 < 0 || s2 < 0 || n1 != single || n2 != lines) {
        fprintf(stderr, "bench-addmulti: failed (lengths %ld, %ld)\n", n1, n2);
        return 1;
    }
    double per1 = s1 / (double)single, per2 = s2 / (double)lines;
    printf("single ADD: %ld lines in %.2f s (%.0f lines/s)\n", single, s1, single / s1);
    printf("ADDMULTI x%ld: %ld lines in %.2f s (%.0f lines/s)\n", batch, lines, s2, lines / s2);
    printf("speed-up per line: %.1fx\n", per1 / per2);
    return 0;
}
