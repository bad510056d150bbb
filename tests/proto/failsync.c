/* SPDX-License-Identifier: Apache-2.0 */
/* failsync.c - LD_PRELOAD shim for test_faults and the bench's syncless server: while the
 * file named by $STSD_FAILSYNC exists, every fsync and fdatasync fails with EIO, and a
 * regular file first loses what was written since its last successful sync (what a
 * failed writeback may leave on disk): in a file written by pwrite (the log, whose space
 * is reserved ahead) what those writes covered reads as zeros; any other file is cut back
 * to its size then. The first failure writes its CLOCK_MONOTONIC time (ns) to
 * $STSD_FAILSYNC.first.
 * With $STSD_SLOWSYNC_MS, every successful fsync and fdatasync first takes that long (a
 * slow disk). With $STSD_SKIPSYNC, every one returns 0 at once without syncing: what the
 * group-commit path costs without the disk (docs/benchmarks.md, "The group-commit path
 * without the disk"). pwritev2 with RWF_DSYNC is a pwrite and an fdatasync to it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 4096

/* What each descriptor's file held at its last good sync. */
static struct good {
    _Atomic dev_t dev;
    _Atomic ino_t ino;
    _Atomic off_t size;
    _Atomic dev_t wdev;        /* the file pwrite wrote to through this descriptor */
    _Atomic ino_t wino;
    _Atomic off_t dirty_from, dirty_to;    /* pwrites since its last successful sync */
} good[MAX_FDS];
static atomic_int first_done;

static int failing(void)
{
    const char *flag = getenv("STSD_FAILSYNC");
    struct stat sb;
    return flag && stat(flag, &sb) == 0;
}

static void note_first(void)
{
    if (atomic_exchange(&first_done, 1))
        return;
    char path[4096];
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    snprintf(path, sizeof path, "%s.first", getenv("STSD_FAILSYNC"));
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
        fclose(f);
    }
}

static ssize_t real_pwrite(int fd, const void *p, size_t n, off_t off)
{
    ssize_t (*real)(int, const void *, size_t, off_t) =
        (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    return real(fd, p, n, off);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off)
{
    ssize_t w = real_pwrite(fd, p, n, off);
    struct stat sb;
    if (w > 0 && fd >= 0 && fd < MAX_FDS && fstat(fd, &sb) == 0) {
        if (good[fd].wdev != sb.st_dev || good[fd].wino != sb.st_ino) {
            good[fd].wdev = sb.st_dev;     /* a new file behind a reused number */
            good[fd].wino = sb.st_ino;
            good[fd].dirty_from = good[fd].dirty_to = 0;
        }
        if (good[fd].dirty_to == 0 || off < good[fd].dirty_from)
            good[fd].dirty_from = off;
        if (off + w > good[fd].dirty_to)
            good[fd].dirty_to = off + w;
    }
    return w;
}

ssize_t pwrite64(int fd, const void *p, size_t n, off_t off)
{
    return pwrite(fd, p, n, off);
}

/* Zeros [from, to) of fd: the writes a failed writeback lost. */
static void lose(int fd, off_t from, off_t to)
{
    static const char zeros[65536];
    while (from < to) {
        size_t n = to - from < (off_t)sizeof zeros ? (size_t)(to - from) : sizeof zeros;
        if (real_pwrite(fd, zeros, n, from) <= 0) {
            perror("failsync: pwrite");
            return;
        }
        from += (off_t)n;
    }
}

static int fake_sync(int fd, const char *name)
{
    if (getenv("STSD_SKIPSYNC"))
        return 0;
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    struct stat sb;
    int known = fd >= 0 && fd < MAX_FDS && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (failing()) {
        note_first();
        if (known) {
            int same = good[fd].dev == sb.st_dev && good[fd].ino == sb.st_ino;
            off_t keep = same ? good[fd].size : 0;
            if (good[fd].wdev == sb.st_dev && good[fd].wino == sb.st_ino)
                lose(fd, good[fd].dirty_from, good[fd].dirty_to);
            else if (keep < sb.st_size && ftruncate(fd, keep) != 0)
                perror("failsync: ftruncate");
        }
        errno = EIO;
        return -1;
    }
    const char *slow = getenv("STSD_SLOWSYNC_MS");
    if (slow) {
        struct timespec t = {atoi(slow) / 1000, (long)(atoi(slow) % 1000) * 1000000L};
        nanosleep(&t, NULL);
    }
    int rc = real(fd);
    if (rc == 0 && known) {
        good[fd].dev = sb.st_dev;
        good[fd].ino = sb.st_ino;
        good[fd].size = sb.st_size;
        if (good[fd].wdev == sb.st_dev && good[fd].wino == sb.st_ino)
            good[fd].dirty_from = good[fd].dirty_to = 0;   /* on disk now */
    }
    return rc;
}

int fsync(int fd)
{
    return fake_sync(fd, "fsync");
}

int fdatasync(int fd)
{
    return fake_sync(fd, "fdatasync");
}

/* The journal's write and sync in one call (wal_pwrite_dsync): the same as its pwrite
 * followed by fdatasync here, so that failing, slow and skipped syncs apply to it too. */
ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    if (!(flags & RWF_DSYNC)) {
        ssize_t (*real)(int, const struct iovec *, int, off_t, int) =
            (ssize_t (*)(int, const struct iovec *, int, off_t, int))dlsym(RTLD_NEXT,
                                                                            "pwritev2");
        return real(fd, iov, cnt, off, flags);
    }
    ssize_t total = 0;
    for (int i = 0; i < cnt; i++) {
        ssize_t w = pwrite(fd, iov[i].iov_base, iov[i].iov_len, off + total);
        if (w < 0)
            return total ? total : -1;
        total += w;
        if ((size_t)w < iov[i].iov_len)
            break;
    }
    return fake_sync(fd, "fdatasync") != 0 ? -1 : total;
}
