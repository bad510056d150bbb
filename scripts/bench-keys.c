/* SPDX-License-Identifier: Apache-2.0 */
/* bench-keys.c - wake latency of key watchers, on a real stsd started here: 100 GETs
 * with VERSION and TIMEOUT parked on one key; a SET answered -> each watcher answered
 * (p50/p99 over every wake, and the time until the last of the 100), over many SETs.
 * Usage: build/bench-keys [SETS] (default 300); STSD=path. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

enum { W = 100 };

static void watch(http_conn *c, long version)
{
    char t[96];
    snprintf(t, sizeof t, "/sts/GET?NAME=flag&VERSION=%ld&TIMEOUT=60", version);
    if (http_conn_send(c, t) != 0)
        exit(1);
}

int main(int argc, char **argv)
{
    int sets = argc > 1 ? atoi(argv[1]) : 300;
    daemon_proc d;
    static http_conn c[W];
    http_conn setter;
    if (td_mkdirs(&d) != 0 || td_start(&d, NULL) != 0)
        return 1;
    if (http_conn_open(&setter, d.port) != 0)
        return 1;
    http_reply r;
    if (http_conn_get(&setter, "/sts/SET?NAME=flag&VALUE=0", &r) != 0)
        return 1;
    http_reply_free(&r);
    long version = 1;
    for (int i = 0; i < W; i++) {
        if (http_conn_open(&c[i], d.port) != 0)
            return 1;
        watch(&c[i], version);
    }
    usleep(200000);
    double *each = calloc((size_t)sets * W, sizeof *each), *all = calloc((size_t)sets, sizeof *all);
    size_t ne = 0;
    struct pollfd p[W];
    for (int k = 0; k < sets; k++) {
        char t[64];
        snprintf(t, sizeof t, "/sts/SET?NAME=flag&VALUE=%d", k + 1);
        if (http_conn_get(&setter, t, &r) != 0)
            return 1;
        http_reply_free(&r);
        double t0 = td_mono_ms();
        int left = W;
        char done[W] = {0};
        while (left) {
            int n = 0;
            int idx[W];
            for (int i = 0; i < W; i++)
                if (!done[i]) {
                    p[n] = (struct pollfd){c[i].fd, POLLIN, 0};
                    idx[n++] = i;
                }
            if (poll(p, (nfds_t)n, 5000) <= 0) {
                fprintf(stderr, "bench-keys: a watcher was not woken\n");
                return 1;
            }
            double t1 = td_mono_ms();
            for (int j = 0; j < n; j++)
                if (p[j].revents) {
                    if (http_conn_recv(&c[idx[j]], &r) != 0)
                        return 1;
                    http_reply_free(&r);
                    each[ne++] = t1 - t0;
                    done[idx[j]] = 1;
                    left--;
                }
        }
        all[k] = td_mono_ms() - t0;
        version++;
        for (int i = 0; i < W; i++)
            watch(&c[i], version);
        usleep(3000);
    }
    qsort(each, ne, sizeof *each, td_cmp_double);
    qsort(all, (size_t)sets, sizeof *all, td_cmp_double);
    printf("%-44s %8.3f ms p50 %8.3f ms p99   (%d SETs, %d watchers)\n",
           "keys wake: SET answered -> each watcher", each[ne / 2], each[(size_t)(ne * 0.99)],
           sets, W);
    printf("%-44s %8.3f ms p50 %8.3f ms p99\n", "keys wake: SET answered -> all 100 answered",
           all[sets / 2], all[(int)(sets * 0.99)]);
    for (int i = 0; i < W; i++)
        http_conn_close(&c[i]);
    http_conn_close(&setter);
    td_stop(&d, 0);
    td_cleanup(&d);
    free(each);
    free(all);
    return 0;
}
