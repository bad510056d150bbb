/* SPDX-License-Identifier: Apache-2.0 */
/* journal.c - the write-ahead log at run time: the records of changes, and the store's
 * recorder (writing and group commit: journal_writer.c; new logs, threads and compaction:
 * journal_compact.c). */
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
#include "journal_writer.h"
#include "base/log.h"
#include "snapshot.h"
#include "wal.h"

/* ---- records ------------------------------------------------------------------------------ */

int journal_log_push(journal *j, const char *name, int at_tail, const char *line,
                     size_t len, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_push(&j->pend, name, at_tail, line, len);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_lease(journal *j, const char *name, uint64_t id, int64_t until,
                      const char *owner, size_t olen, const char *line, size_t len,
                      uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    /* A plain lease keeps its old record, which journals written before owners hold. */
    if (owner)
        wal_enc_own(&j->pend, name, id, until, owner, olen, line, len);
    else
        wal_enc_lease(&j->pend, name, id, until, line, len);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_renew(journal *j, const char *name, uint64_t id, int64_t until,
                      uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_renew(&j->pend, name, id, until);
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
    wal_enc_settle(&j->pend, name, id, release, line, release ? len : 0);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_key(journal *j, const store_key_rec *k, uint64_t *lsn)
{
    static const int types[] = {
        [STORE_KEY_SET] = WAL_KEY_SET, [STORE_KEY_DEL] = WAL_KEY_DEL,
        [STORE_KEY_LEASE] = WAL_KEY_LEASE, [STORE_KEY_SETTLE] = WAL_KEY_SETTLE,
        [STORE_KEY_RUN] = WAL_KEY_RUN, [STORE_KEY_EXPIRE] = WAL_KEY_EXPIRE,
    };
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_key(&j->pend, types[k->kind], k->name, k->flag, k->id, k->until, k->by,
                k->version, k->value, k->len);
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
    wal_enc_take(&j->pend, name, keep, pos, n);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_reset(journal *j, const char *name, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_name(&j->pend, WAL_RESET, name);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_push_many(journal *j, const char *name, int at_tail, const store_span *v,
                          size_t n, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    /* An encoding that runs out of memory leaves pend.oom set: the append refuses it. */
    wal_enc_push_many(&j->pend, name, at_tail, n);
    for (size_t i = 0; i < n; i++)
        wal_enc_line(&j->pend, v[i].s, v[i].len);
    int rc = journal_append_locked(j, 0, lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_drop(journal *j, const char *name, uint64_t *lsn)
{
    uint64_t prev;
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_name(&j->pend, WAL_DROP, name);
    int rc = journal_append_locked(j, 0, lsn);
    /* As after a REPLACE: the file that defined the list is needed by no recovery once
     * this record is on disk. */
    if (rc == 0 && snapref_set(&j->defs, name, 0, &prev) == 0 && prev &&
        snapref_retire(&j->defs, prev, *lsn) != 0)
        log_warn("journal: out of memory; a dropped list's snapshot file stays until the "
                 "next compaction");
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
    int full = j->snap_n == UINT32_MAX || snapref_ids_add(&j->pending, 0) != 0;
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
        snapref_ids_del(&j->pending, id);
        pthread_mutex_unlock(&j->mu);
        buf_free(&err);
        return -1;
    }
    if (j->ship.batch && journal_ship_snapshot_file(j, id) != 0) {
        pthread_mutex_lock(&j->mu);
        snapref_ids_del(&j->pending, id);
        pthread_mutex_unlock(&j->mu);
        return -1;
    }
    *snap = id;
    return 0;
}

int journal_log_replace(journal *j, const char *name, uint64_t snap, uint64_t *lsn)
{
    uint64_t prev;
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_ref(&j->pend, WAL_REPLACE, name, snap);
    int rc = journal_append_locked(j, 0, lsn);
    if (snap) {
        snapref_ids_del(&j->pending, snap);
        if (rc == 0 && snapref_ids_add(&j->refs, snap) != 0)
            j->refs_lost = 1;     /* so no compaction may delete the file */
        if (rc != 0) {
            char name_s[64];
            wal_snap_name(name_s, sizeof name_s, snap);
            unlinkat(j->dirfd, name_s, 0);
        }
    }
    /* The list's previous snapshot file is needed by no recovery once this record is on
     * disk: the background thread removes it then. */
    if (rc == 0 && snapref_set(&j->defs, name, snap, &prev) == 0 && prev &&
        snapref_retire(&j->defs, prev, *lsn) != 0)
        log_warn("journal: out of memory; a superseded snapshot file stays until the next "
                 "compaction");
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_log_columns(journal *j, const char *name, const list *l, uint64_t *lsn)
{
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_columns(&j->pend, name, l);
    int rc = journal_append_locked(j, 0, lsn);
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
    s->records = j->records;
    s->log_syncs = j->log_syncs;
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

static void rec_hold(void *j, int on)
{
    journal_hold(j, on);
}

static int rec_wait(void *j, uint64_t lsn)
{
    return journal_wait(j, lsn);
}

static void rec_mark_broken(void *j)
{
    journal_mark_broken(j);
}

static int rec_lease(void *j, const char *name, uint64_t id, int64_t until, const char *owner,
                     size_t olen, const char *line, size_t len, uint64_t *lsn)
{
    return journal_log_lease(j, name, id, until, owner, olen, line, len, lsn);
}

static int rec_renew(void *j, const char *name, uint64_t id, int64_t until, uint64_t *lsn)
{
    return journal_log_renew(j, name, id, until, lsn);
}

static int rec_settle(void *j, const char *name, uint64_t id, int release, const char *line,
                      size_t len, uint64_t *lsn)
{
    return journal_log_settle(j, name, id, release, line, len, lsn);
}

static int rec_key(void *j, const store_key_rec *k, uint64_t *lsn)
{
    return journal_log_key(j, k, lsn);
}

static int rec_push_many(void *j, const char *name, int at_tail, const store_span *v,
                         size_t n, uint64_t *lsn)
{
    return journal_log_push_many(j, name, at_tail, v, n, lsn);
}

static int rec_drop(void *j, const char *name, uint64_t *lsn)
{
    return journal_log_drop(j, name, lsn);
}

static int rec_columns(void *j, const char *name, const list *l, uint64_t *lsn)
{
    return journal_log_columns(j, name, l, lsn);
}

static const store_recorder journal_recorder = {
    rec_push, rec_take, rec_reset, rec_write_snapshot, rec_replace, rec_wait,
    rec_mark_broken, rec_lease, rec_settle, rec_hold, rec_key, rec_renew, rec_push_many, rec_drop,
    rec_columns,
};

void journal_attach(journal *j, store *st)
{
    store_set_recorder(st, j ? &journal_recorder : NULL, j);
}
