/* SPDX-License-Identifier: Apache-2.0 */
/* fsync-floor.c - what one fdatasync costs on this machine: the yardstick under the
 * durability rows of scripts/bench.sh. Appends a small record and syncs it, over and
 * over, first on one thread, then on two at once (one file each), and prints the rate,
 * the wall time and the CPU time of one call.
 *
 * Usage: build/fsync-floor DIR [SECONDS]   (files DIR/fsync-floor.N, removed after)
 *
 * Why it matters: with fsync=always every batch costs one fdatasync, so the CPU of that
 * call, spread over the batch, is what a durable change costs more than another; and if
 * two syncs at once do not go faster than one, the disk serializes them and a second
 * writer thread would buy nothing. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The size of a typical journal record (an ADD of a short line). */
#define RECORD_BYTES 64

typedef struct syncer {
    char path[4096];
    double seconds;
    long calls;
    double cpu;              /* this thread's CPU time, seconds */
    int err;
} syncer;

static double clock_seconds(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *sync_loop(void *arg)
{
    syncer *s = arg;
    char rec[RECORD_BYTES];
    memset(rec, 'x', sizeof rec);
    rec[sizeof rec - 1] = '\n';
    int fd = open(s->path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        s->err = errno;
        return NULL;
    }
    double cpu0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    double end = clock_seconds(CLOCK_MONOTONIC) + s->seconds;
    off_t off = 0;
    while (clock_seconds(CLOCK_MONOTONIC) < end) {
        if (pwrite(fd, rec, sizeof rec, off) != (ssize_t)sizeof rec || fdatasync(fd) != 0) {
            s->err = errno;
            break;
        }
        off += (off_t)sizeof rec;
        s->calls++;
    }
    s->cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
    close(fd);
    unlink(s->path);
    return NULL;
}

/* Runs n syncers at once for the given time; returns the calls per second of all. */
static int run(const char *dir, int n, double seconds, syncer *s)
{
    pthread_t t[2];
    for (int i = 0; i < n; i++) {
        memset(&s[i], 0, sizeof s[i]);
        snprintf(s[i].path, sizeof s[i].path, "%s/fsync-floor.%d", dir, i);
        s[i].seconds = seconds;
        if (pthread_create(&t[i], NULL, sync_loop, &s[i]) != 0) {
            fprintf(stderr, "fsync-floor: cannot start a thread\n");
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < n; i++)
        if (s[i].err || !s[i].calls) {
            fprintf(stderr, "fsync-floor: %s: %s\n", s[i].path,
                    s[i].err ? strerror(s[i].err) : "no call completed");
            return -1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s DIR [SECONDS]\n", argv[0]);
        return 2;
    }
    double seconds = argc == 3 ? atof(argv[2]) : 3;
    if (seconds <= 0) {
        fprintf(stderr, "fsync-floor: SECONDS must be positive\n");
        return 2;
    }
    syncer one[1], two[2];
    if (run(argv[1], 1, seconds, one) != 0 || run(argv[1], 2, seconds, two) != 0)
        return 1;
    printf("fdatasync of a %d-byte append: %.0f/s, %.0f us each, %.0f us of CPU each; "
           "two threads at once: %.0f/s together\n",
           RECORD_BYTES, one[0].calls / seconds, seconds * 1e6 / one[0].calls,
           one[0].cpu * 1e6 / one[0].calls, (two[0].calls + two[1].calls) / seconds);
    return 0;
}
