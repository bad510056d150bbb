/* SPDX-License-Identifier: Apache-2.0 */
/* audit.c - the audit log's writer: a double buffer filled by request threads and
 * drained by one thread that writes, rotates by size and reopens on request. */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"

/* How long the writer lets lines gather after the first one woke it: one write takes a
 * few hundred changes under load, and an idle server costs no wake-up at all. */
#define GATHER_NS (10u * 1000 * 1000)

struct audit {
    char *path;
    size_t max_bytes;
    size_t cap;
    int hash;
    pthread_mutex_t mu;           /* guards fill, kicked, stop, reopen, dropped_since */
    pthread_cond_t wake;
    buf fill;                     /* lines waiting; the writer swaps it with spare */
    buf spare;                    /* the writer's own */
    int kicked;                   /* the writer was signalled since it last took fill */
    int stop;
    int reopen;
    unsigned long long dropped_since;  /* drops not yet warned about */
    int fd;                       /* the writer's own after open */
    size_t size;                  /* bytes in the current file */
    int64_t last_error_ms;        /* when a write error was last logged */
    atomic_ullong lines, dropped;
    pthread_t thread;
    int started;
};

static int open_file(const char *path, size_t *size, buf *err)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        buf_printf(err, "stsd.auditLog: cannot open \"%s\": %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        buf_printf(err, "stsd.auditLog: \"%s\" is not a regular file", path);
        close(fd);
        return -1;
    }
    *size = (size_t)st.st_size;
    return fd;
}

/* Logs err, at most once a second (a full disk would otherwise flood the log). */
static void write_error(audit *a, const char *what)
{
    int64_t now = clock_now_ms();
    if (a->last_error_ms && now - a->last_error_ms < 1000)
        return;
    a->last_error_ms = now;
    log_error("audit: %s: lines are dropped (stsd_audit_dropped_total)", what);
}

/* Closes the file and opens the one at the path now. On failure fd stays -1 and the next
 * write tries again. */
static void reopen_file(audit *a)
{
    buf err = BUF_INIT;
    if (a->fd >= 0)
        close(a->fd);
    a->fd = open_file(a->path, &a->size, &err);
    if (a->fd < 0) {
        a->size = 0;            /* no file: nothing to rotate, the write fails and drops */
        write_error(a, err.data ? err.data : "out of memory");
    }
    buf_free(&err);
}

/* PATH.1 -> PATH.2, PATH -> PATH.1, and a new PATH: the oldest file falls off. Returns 0
 * when the file now open is empty, -1 when the rotation did not happen (a rename refused:
 * PATH is reopened as it was). */
static int rotate(audit *a)
{
    char from[4096], to[4096];
    for (int i = AUDIT_FILES - 1; i >= 1; i--) {
        if (i == 1)
            snprintf(from, sizeof from, "%s", a->path);
        else
            snprintf(from, sizeof from, "%s.%d", a->path, i - 1);
        snprintf(to, sizeof to, "%s.%d", a->path, i);
        if (rename(from, to) != 0 && errno != ENOENT) {
            buf msg = BUF_INIT;
            buf_printf(&msg, "cannot rename %s to %s: %s", from, to, strerror(errno));
            write_error(a, msg.data ? msg.data : "out of memory");
            buf_free(&msg);
        }
    }
    reopen_file(a);
    return a->fd >= 0 && a->size == 0 ? 0 : -1;
}

static unsigned long long count_lines(const char *p, size_t n)
{
    unsigned long long c = 0;
    for (const char *e = p + n; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
        c++;
    return c;
}

/* Writes p[0..n) (whole lines) to the current file. Returns 0, or -1 (what was not
 * written is counted as dropped). */
static int write_all(audit *a, const char *p, size_t n)
{
    while (n) {
        ssize_t w = a->fd >= 0 ? write(a->fd, p, n) : -1;
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            buf msg = BUF_INIT;
            buf_printf(&msg, "cannot write %s: %s", a->path,
                       a->fd < 0 ? "not open" : strerror(w < 0 ? errno : EIO));
            write_error(a, msg.data ? msg.data : "out of memory");
            buf_free(&msg);
            atomic_fetch_add(&a->dropped, count_lines(p, n));
            return -1;
        }
        atomic_fetch_add(&a->lines, count_lines(p, (size_t)w));
        a->size += (size_t)w;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes a batch of whole lines, rotating first whenever the next lines would take the
 * file past max_bytes; a line longer than max_bytes gets a file of its own. */
static void write_batch(audit *a, const char *p, size_t n)
{
    /* Once a rotation has failed, this batch goes to the file as it is, past max_bytes:
     * trying again at every line would spin here for good (and never stop). The next
     * batch tries again. */
    int stuck = 0;
    if (a->fd < 0)
        reopen_file(a);
    while (n) {
        size_t room = a->size < a->max_bytes ? a->max_bytes - a->size : 0, take;
        if (n <= room || stuck) {
            take = n;
        } else {
            const char *nl = room ? memrchr(p, '\n', room) : NULL;
            if (nl) {
                take = (size_t)(nl - p) + 1;
            } else if (a->size > 0) {
                stuck = rotate(a) != 0;
                continue;
            } else {
                nl = memchr(p, '\n', n);
                take = nl ? (size_t)(nl - p) + 1 : n;
            }
        }
        if (write_all(a, p, take) != 0) {
            /* The rest of this batch would meet the same error: count it lost, and let
             * the next batch try a file opened anew. */
            atomic_fetch_add(&a->dropped, count_lines(p + take, n - take));
            reopen_file(a);
            return;
        }
        p += take;
        n -= take;
    }
}

static void *writer_main(void *arg)
{
    audit *a = arg;
    int64_t last_warn = 0;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->fill.len && !a->stop && !a->reopen && !a->dropped_since) {
            struct timespec ts = clock_deadline_ns(1000000000ull);
            pthread_cond_timedwait(&a->wake, &a->mu, &ts);
        }
        if (a->fill.len && !a->stop && !a->reopen) {
            pthread_mutex_unlock(&a->mu);
            struct timespec gather = {0, GATHER_NS};
            nanosleep(&gather, NULL);
            pthread_mutex_lock(&a->mu);
        }
        buf t = a->fill;
        a->fill = a->spare;
        a->spare = t;
        a->kicked = 0;
        int stop = a->stop, reopen = a->reopen;
        a->reopen = 0;
        unsigned long long dropped = a->dropped_since;
        int64_t now = clock_now_ms();
        if (dropped && now - last_warn >= 1000) {
            a->dropped_since = 0;
            last_warn = now;
        } else {
            dropped = 0;
        }
        pthread_mutex_unlock(&a->mu);

        if (dropped)
            log_warn("audit: %llu lines dropped: the audit log's writer falls behind "
                     "(stsd_audit_dropped_total)", dropped);
        if (reopen)
            reopen_file(a);
        if (a->spare.len)
            write_batch(a, a->spare.data, a->spare.len);
        buf_clear(&a->spare);

        pthread_mutex_lock(&a->mu);
        if (stop && !a->fill.len)
            break;
        /* Drops wait for their warning without spinning: sleep out the second. */
        if (a->dropped_since && !a->fill.len && !a->stop && !a->reopen) {
            struct timespec ts = clock_deadline_ns(1000000000ull);
            pthread_cond_timedwait(&a->wake, &a->mu, &ts);
        }
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

audit *audit_open(const audit_settings *s, buf *err)
{
    audit *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(s->path))) {
        free(a);
        buf_puts(err, "stsd.auditLog: out of memory");
        return NULL;
    }
    a->max_bytes = s->max_bytes;
    a->cap = s->buffer_bytes ? s->buffer_bytes : AUDIT_BUFFER_BYTES;
    a->hash = s->hash;
    a->fd = open_file(a->path, &a->size, err);
    if (a->fd < 0) {
        free(a->path);
        free(a);
        return NULL;
    }
    if (pthread_mutex_init(&a->mu, NULL) != 0 || clock_cond_init(&a->wake) != 0) {
        buf_puts(err, "stsd.auditLog: cannot create its lock");
        audit_close(a);
        return NULL;
    }
    if (thread_start(&a->thread, "stsd-audit", writer_main, a) != 0) {
        buf_printf(err, "stsd.auditLog: cannot start its thread: %s", strerror(errno));
        audit_close(a);
        return NULL;
    }
    a->started = 1;
    return a;
}

void audit_close(audit *a)
{
    if (!a)
        return;
    if (a->started) {
        pthread_mutex_lock(&a->mu);
        a->stop = 1;
        pthread_cond_signal(&a->wake);
        pthread_mutex_unlock(&a->mu);
        pthread_join(a->thread, NULL);
    }
    if (a->fd >= 0)
        close(a->fd);
    pthread_cond_destroy(&a->wake);
    pthread_mutex_destroy(&a->mu);
    buf_free(&a->fill);
    buf_free(&a->spare);
    free(a->path);
    free(a);
}

/* Counts a lost line, and wakes the writer to warn about it. Locked. */
static void drop_locked(audit *a)
{
    a->dropped_since++;
    atomic_fetch_add_explicit(&a->dropped, 1, memory_order_relaxed);
    if (!a->kicked) {
        a->kicked = 1;
        pthread_cond_signal(&a->wake);
    }
}

void audit_drop(audit *a)
{
    pthread_mutex_lock(&a->mu);
    drop_locked(a);
    pthread_mutex_unlock(&a->mu);
}

int audit_append(audit *a, const char *line, size_t len)
{
    pthread_mutex_lock(&a->mu);
    /* Never wait for the writer: a full buffer loses the line, not the request's time. */
    if (len > a->cap - a->fill.len || buf_append(&a->fill, line, len) != 0) {
        drop_locked(a);
        pthread_mutex_unlock(&a->mu);
        return -1;
    }
    /* Only the first line since the writer last looked wakes it. */
    if (!a->kicked) {
        a->kicked = 1;
        pthread_cond_signal(&a->wake);
    }
    pthread_mutex_unlock(&a->mu);
    return 0;
}

void audit_reopen(audit *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->reopen = 1;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->mu);
}

int audit_hashes(const audit *a)
{
    return a && a->hash;
}

unsigned long long audit_lines_total(const audit *a)
{
    return a ? atomic_load_explicit(&((audit *)a)->lines, memory_order_relaxed) : 0;
}

unsigned long long audit_dropped_total(const audit *a)
{
    return a ? atomic_load_explicit(&((audit *)a)->dropped, memory_order_relaxed) : 0;
}
