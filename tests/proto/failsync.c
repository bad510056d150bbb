/* failsync.c - LD_PRELOAD shim for test_faults: while the file named by $STSD_FAILSYNC
 * exists, every fsync and fdatasync fails with EIO, and a regular file is first cut back
 * to its size at its last successful sync (what a failed writeback may leave on disk).
 * The first failure writes its CLOCK_MONOTONIC time (ns) to $STSD_FAILSYNC.first. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 4096

/* What each descriptor's file held at its last good sync. */
static struct good {
    _Atomic dev_t dev;
    _Atomic ino_t ino;
    _Atomic off_t size;
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

static int fake_sync(int fd, const char *name)
{
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
    struct stat sb;
    int known = fd >= 0 && fd < MAX_FDS && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    if (failing()) {
        note_first();
        if (known) {
            off_t keep = good[fd].dev == sb.st_dev && good[fd].ino == sb.st_ino ?
                         good[fd].size : 0;
            if (keep < sb.st_size && ftruncate(fd, keep) != 0)
                perror("failsync: ftruncate");
        }
        errno = EIO;
        return -1;
    }
    int rc = real(fd);
    if (rc == 0 && known) {
        good[fd].dev = sb.st_dev;
        good[fd].ino = sb.st_ino;
        good[fd].size = sb.st_size;   /* measured before the sync: what it covered */
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
