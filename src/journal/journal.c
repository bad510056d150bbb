/* journal.c - the write-ahead log at run time: appending records, group commit, and
 * refusing changes after a write error (threads and compaction: journal_compact.c). */
#include "journal/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal_int.h"
#include "base/log.h"
#include "snapshot.h"
#include "wal.h"

/* ---- small helpers --------------------------------------------------------------------- */

int journal_idset_add(idset *s, uint64_t id)
{
    if (array_grow(&s->v, &s->cap, s->n, sizeof *s->v) != 0)
        return -1;
    s->v[s->n++] = id;
    return 0;
}

void journal_idset_del(idset *s, uint64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == id) {
            s->v[i] = s->v[--s->n];
            return;
        }
}

/* Starts j->rec with room for the frame. Call with mu held. */
void journal_rec_start(journal *j)
{
    static const uint8_t frame[WAL_FRAME_SIZE];
    buf_clear(&j->rec);
    buf_append(&j->rec, frame, sizeof frame);
}

/* Turns on refusal of changes, loudly. Call with mu held. */
void journal_set_broken_locked(journal *j, const char *what, int err)
{
    if (!atomic_load(&j->broken))
        log_error("journal: %s: %s; changes are refused from now on (KO \"Journal not "
                  "writable\") until the log has been rewritten from memory, retried every "
                  "second", what, strerror(err));
    else
        log_error("journal: %s: %s", what, strerror(err));
    atomic_store(&j->broken, 1);
    atomic_fetch_add(&j->errors, 1);
    j->broken_gen = j->gen;
}

/* Appends the record in j->rec to the log. internal: compaction's own records, written
 * even while changes are refused. Call with mu held. Returns 0 with *lsn set, or -1. */
int journal_append_locked(journal *j, int internal, uint64_t *lsn)
{
    size_t body = j->rec.len - WAL_FRAME_SIZE;
    if (atomic_load(&j->broken) && !internal) {
        atomic_fetch_add(&j->refused, 1);
        return -1;
    }
    if (j->rec.oom || j->rec.len <= WAL_FRAME_SIZE || body > WAL_MAX_BODY) {
        log_error("journal: a record could not be built (out of memory or too big); "
                  "that change is refused");
        return -1;
    }
    uint8_t *p = (uint8_t *)j->rec.data;
    wal_frame_header(p, p + WAL_FRAME_SIZE, body);
    if (wal_write_all(j->fd, p, j->rec.len) != 0) {
        int e = errno;
        /* Cut what part of the record got in, so that the log stays whole. */
        if (ftruncate(j->fd, (off_t)j->size) != 0)
            log_error("journal: cannot cut a partial record: %s", strerror(errno));
        char what[64];
        snprintf(what, sizeof what, "cannot write to journal.%010u.log", j->gen);
        journal_set_broken_locked(j, what, e);
        return -1;
    }
    j->size += j->rec.len;
    j->pos += j->rec.len;
    *lsn = j->pos;
    return 0;
}

/* One fsync of the current log, without the mutex, for everything appended so far.
 * Call with mu held and no other sync running; returns with mu held. */
int journal_sync_locked(journal *j)
{
    uint64_t target = j->pos;
    int fd = j->fd;
    j->syncing = 1;
    pthread_mutex_unlock(&j->mu);
    int rc = wal_fsync(fd), e = errno;
    pthread_mutex_lock(&j->mu);
    j->syncing = 0;
    if (rc == 0) {
        if (target > j->synced)
            j->synced = target;
    } else {
        if (target > j->sync_failed)
            j->sync_failed = target;
        journal_set_broken_locked(j, "fsync of the log failed", e);
    }
    pthread_cond_broadcast(&j->cv);
    return rc;
}

/* Creates log gen, durably: header, and with new_history a COMPACT_DONE record saying
 * that no older log is needed. Returns the descriptor, or -1 (logged). */
int journal_create_log(journal *j, uint32_t gen, int new_history, uint64_t *size)
{
    char name[32];
    uint8_t h[WAL_HEADER_SIZE];
    buf b = BUF_INIT, body = BUF_INIT;
    wal_log_name(name, sizeof name, gen);
    int fd = openat(j->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        log_error("journal: cannot create %s/%s: %s", j->dir, name, strerror(errno));
        return -1;
    }
    wal_header_make(h, WAL_MAGIC_LOG, gen);
    if (buf_append(&b, h, sizeof h) != 0 ||
        (new_history && (wal_enc_done(&body, gen, 0) != 0 ||
                         wal_frame(&b, body.data, body.len) != 0)) ||
        wal_write_all(fd, b.data, b.len) != 0 || wal_fsync(fd) != 0 ||
        wal_fsync_dir(j->dirfd) != 0) {
        log_error("journal: cannot write %s/%s: %s", j->dir, name, strerror(errno ? errno : ENOMEM));
        close(fd);
        unlinkat(j->dirfd, name, 0);
        fd = -1;
    }
    *size = b.len;
    buf_free(&b);
    buf_free(&body);
    return fd;
}

/* ---- records ------------------------------------------------------------------------------ */

int journal_log_push(journal *j, const char *name, int at_tail, const char *line,
                     size_t len, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_push(&j->rec, name, at_tail, line, len);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_lease(journal *j, const char *name, uint64_t id, int64_t until,
                      const char *line, size_t len, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_lease(&j->rec, name, id, until, line, len);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_settle(journal *j, const char *name, uint64_t id, int release,
                       const char *line, size_t len, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    /* A RELEASE carries its line: replayed, it puts the line back even where the LEASE
     * record is gone (a compaction ran in between). */
    wal_enc_settle(&j->rec, name, id, release, line, release ? len : 0);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_take(journal *j, const char *name, int keep, const size_t *pos, size_t n,
                     uint64_t *lsn)
{
    if (n == 0) {
        *lsn = 0;                 /* nothing changes: nothing to record or wait for */
        return 0;
    }
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_take(&j->rec, name, keep, pos, n);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_reset(journal *j, const char *name, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_name(&j->rec, WAL_RESET, name);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_write_snapshot(journal *j, const list *l, uint64_t *snap)
{
    uint64_t id, bytes;
    buf err = BUF_INIT;
    *snap = 0;
    if (atomic_load(&j->broken)) {
        atomic_fetch_add(&j->refused, 1);
        return -1;
    }
    if (list_length(l) == 0)
        return 0;                 /* id 0: the empty list, no file */
    pthread_mutex_lock(&j->mu);
    int full = j->snap_n == UINT32_MAX || journal_idset_add(&j->pending, 0) != 0;
    if (!full) {
        id = (uint64_t)j->gen << 32 | ++j->snap_n;
        j->pending.v[j->pending.n - 1] = id;
    }
    pthread_mutex_unlock(&j->mu);
    if (full) {
        log_error("journal: no snapshot id left (or out of memory); INITFILE refused");
        return -1;
    }
    if (snap_write(j->dirfd, id, l, 1, &bytes, &err) != 0) {
        log_error("journal: %s; INITFILE refused", err.data ? err.data : "out of memory");
        pthread_mutex_lock(&j->mu);
        journal_idset_del(&j->pending, id);
        pthread_mutex_unlock(&j->mu);
        buf_free(&err);
        return -1;
    }
    *snap = id;
    return 0;
}

int journal_log_replace(journal *j, const char *name, uint64_t snap, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_ref(&j->rec, WAL_REPLACE, name, snap);
    int rc = journal_append_locked(j, 0, lsn);
    if (snap) {
        journal_idset_del(&j->pending, snap);
        if (rc == 0 && journal_idset_add(&j->refs, snap) != 0)
            j->refs_lost = 1;     /* so no compaction may delete the file */
        if (rc != 0) {
            char name_s[64];
            wal_snap_name(name_s, sizeof name_s, snap);
            unlinkat(j->dirfd, name_s, 0);
        }
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_wait(journal *j, uint64_t lsn)
{
    int rc = 0;
    if (j->policy != CONF_FSYNC_ALWAYS)
        return 0;                 /* written to the kernel already: a crash loses nothing */
    pthread_mutex_lock(&j->mu);
    /* Group commit: whoever finds no fsync running starts one for everything appended
     * so far; the others wait for it, and most find their record covered. */
    for (;;) {
        if (lsn <= j->sync_failed) {
            rc = -1;
            break;
        }
        if (j->synced >= lsn)
            break;
        if (j->syncing)
            pthread_cond_wait(&j->cv, &j->mu);
        else
            journal_sync_locked(j);
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

void journal_mark_broken(journal *j)
{
    pthread_mutex_lock(&j->mu);
    journal_set_broken_locked(j, "memory and log disagree (a logged change could not be applied)",
                      ENOMEM);
    pthread_mutex_unlock(&j->mu);
}

int journal_broken(const journal *j)
{
    return atomic_load(&((journal *)j)->broken);
}

void journal_get_stats(journal *j, journal_stats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_lock(&j->mu);
    s->bytes = j->size;
    pthread_mutex_unlock(&j->mu);
    s->policy = j->policy;
    s->errors = atomic_load(&j->errors);
    s->writable = !atomic_load(&j->broken);
    uint64_t last;
    hist_add_to(wal_fsync_hist(&last), &s->fsync);
    s->last_fsync_seconds = last == UINT64_MAX ? -1 : (double)last / 1e9;
}

void journal_set_compact_threshold(journal *j, uint64_t bytes)
{
    pthread_mutex_lock(&j->mu);
    j->threshold = bytes;
    pthread_mutex_unlock(&j->mu);
}


/* ---- the store's recorder: the journal_log_* calls above, behind store_recorder ------ */

static int rec_push(void *j, const char *name, int at_tail, const char *line, size_t len,
                    uint64_t *lsn)
{
    return journal_log_push(j, name, at_tail, line, len, lsn);
}

static int rec_take(void *j, const char *name, int keep, const size_t *pos, size_t n,
                    uint64_t *lsn)
{
    return journal_log_take(j, name, keep, pos, n, lsn);
}

static int rec_reset(void *j, const char *name, uint64_t *lsn)
{
    return journal_log_reset(j, name, lsn);
}

static int rec_write_snapshot(void *j, const list *l, uint64_t *snap)
{
    return journal_write_snapshot(j, l, snap);
}

static int rec_replace(void *j, const char *name, uint64_t snap, uint64_t *lsn)
{
    return journal_log_replace(j, name, snap, lsn);
}

static int rec_wait(void *j, uint64_t lsn)
{
    return journal_wait(j, lsn);
}

static void rec_mark_broken(void *j)
{
    journal_mark_broken(j);
}

static int rec_lease(void *j, const char *name, uint64_t id, int64_t until, const char *line,
                     size_t len, uint64_t *lsn)
{
    return journal_log_lease(j, name, id, until, line, len, lsn);
}

static int rec_settle(void *j, const char *name, uint64_t id, int release, const char *line,
                      size_t len, uint64_t *lsn)
{
    return journal_log_settle(j, name, id, release, line, len, lsn);
}

static const store_recorder journal_recorder = {
    rec_push, rec_take, rec_reset, rec_write_snapshot, rec_replace, rec_wait,
    rec_mark_broken, rec_lease, rec_settle,
};

void journal_attach(journal *j, store *st)
{
    store_set_recorder(st, j ? &journal_recorder : NULL, j);
}
