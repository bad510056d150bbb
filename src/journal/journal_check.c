/* SPDX-License-Identifier: Apache-2.0 */
/* journal_check.c - `stsd --check-journal DIR [--repair]`: says what recovery would find
 * in a state directory and, when asked, cuts the history at the first damage. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "journal/journal.h"
#include "recover.h"
#include "wal.h"

/* Copies file from to file to in dirfd, durably. Returns 0 or -1 with errno set. */
static int copy_file(int dirfd, const char *from, const char *to)
{
    const uint8_t *p;
    size_t len;
    int rc = -1, e = 0;
    if (wal_map(dirfd, from, &p, &len) != 0)
        return -1;
    int fd = openat(dirfd, to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0 && wal_write_all(fd, p, len) == 0 && wal_fsync(fd) == 0)
        rc = 0;
    e = errno;
    if (fd >= 0)
        close(fd);
    wal_unmap(p, len);
    errno = e;
    return rc;
}

typedef struct later {
    int dirfd;
    uint32_t gen;
    const char *stamp;
    int failed;
} later;

/* Moves the logs after the cut aside: their records follow ones that are gone. */
static int move_later(const char *name, int kind, uint64_t num, void *ctx)
{
    later *x = ctx;
    char to[96];
    if (kind != 1 || num <= x->gen)
        return 0;
    snprintf(to, sizeof to, "%s.damaged-%s", name, x->stamp);
    if (renameat(x->dirfd, name, x->dirfd, to) != 0) {
        printf("  cannot move %s aside: %s\n", name, strerror(errno));
        x->failed = 1;
    } else {
        printf("  moved %s aside to %s (it follows the damage)\n", name, to);
    }
    return 0;
}

/* Cuts the history at log gen, offset off: keeps a copy of that log and truncates it
 * there (moves it aside whole if its header is bad), and moves every later log aside. */
static int cut_history(int dirfd, uint32_t gen, size_t off, const char *stamp)
{
    char name[32], to[96];
    later x = {dirfd, gen, stamp, 0};
    wal_log_name(name, sizeof name, gen);
    snprintf(to, sizeof to, "%s.damaged-%s", name, stamp);
    if (wal_list(dirfd, move_later, &x) != 0 || x.failed)
        return -1;
    if (off < WAL_HEADER_SIZE) {
        if (renameat(dirfd, name, dirfd, to) != 0)
            return -1;
        printf("  moved %s aside to %s (its header is damaged)\n", name, to);
    } else {
        if (copy_file(dirfd, name, to) != 0)
            return -1;
        int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -1;
        int rc = ftruncate(fd, (off_t)off) == 0 && wal_fsync(fd) == 0 ? 0 : -1;
        close(fd);
        if (rc != 0)
            return -1;
        printf("  cut %s at offset %zu (the whole file is kept as %s)\n", name, off, to);
    }
    return wal_fsync_dir(dirfd);
}

static void print_lists(const recover_state *rs)
{
    printf("lists: %zu\n", rs->nlists);
    for (size_t i = 0; i < rs->nlists; i++)
        printf("  %s: %zu lines\n", rs->names[i], list_length(rs->lists[i]));
    if (!rs->nkeys)
        return;
    printf("keys: %zu, counter leases: %zu\n", rs->nkeys, rs->nkey_leases);
    for (size_t i = 0; i < rs->nkeys && i < 100; i++)
        printf("  %s: version %llu, %zu bytes\n", rs->keys[i].name,
               (unsigned long long)rs->keys[i].version, rs->keys[i].len);
    if (rs->nkeys > 100)
        printf("  ... and %zu more keys\n", rs->nkeys - 100);
}

int journal_check(const char *dir, int repair)
{
    recover_state rs;
    buf err = BUF_INIT;
    char stamp[32];
    int status = 1, lockfd = -1;
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    memset(&rs, 0, sizeof rs);
    printf("stsd journal check: %s\n", dir);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) {
        printf("result: cannot open %s: %s\n", dir, strerror(errno));
        goto cleanup;
    }
    if (repair) {
        lockfd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (lockfd < 0 || flock(lockfd, LOCK_EX | LOCK_NB) != 0) {
            printf("result: cannot repair: %s\n", errno == EWOULDBLOCK ?
                   "a running stsd uses this directory; stop it first" : strerror(errno));
            goto cleanup;
        }
    }
    int rc = recover_run(dirfd, &rs, stdout, &err);
    if (rc != 0)
        printf("damage: %s\n", err.data ? err.data : "out of memory");
    if (rc != 0 && !repair) {
        printf("result: recovery would FAIL. `stsd --check-journal %s --repair` cuts the "
               "history at the damage: the records from there on are lost, a copy of every "
               "file it changes is kept.\n", dir);
        goto cleanup;
    }
    for (int round = 0; rc != 0 && round < 64; round++) {
        if (rs.cut_gen == 0) {
            printf("result: cannot repair this automatically. Start with --fresh to set "
                   "the state aside and begin empty.\n");
            goto cleanup;
        }
        printf("repair: cutting the history at journal.%010u.log offset %zu\n", rs.cut_gen,
               rs.cut_off);
        if (cut_history(dirfd, rs.cut_gen, rs.cut_off, stamp) != 0) {
            printf("result: repair failed: %s\n", strerror(errno));
            goto cleanup;
        }
        recover_free(&rs);
        buf_clear(&err);
        if ((rc = recover_run(dirfd, &rs, NULL, &err)) != 0)
            printf("damage: %s\n", err.data ? err.data : "out of memory");
    }
    if (rc != 0)
        goto cleanup;
    print_lists(&rs);
    if (rs.last_gen == 0)
        printf("no log: a start begins a new history\n");
    printf("result: %s: recovery would succeed (%zu lists)\n", repair ? "repaired" : "OK",
           rs.nlists);
    status = 0;
cleanup:
    fflush(stdout);
    recover_free(&rs);
    buf_free(&err);
    if (lockfd >= 0)
        close(lockfd);
    if (dirfd >= 0)
        close(dirfd);
    return status;
}
