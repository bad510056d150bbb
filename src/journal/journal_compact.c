/* SPDX-License-Identifier: Apache-2.0 */
/* journal_compact.c - new logs (the first at open, one per compaction), and the journal's
 * background threads: the everysec fsync timer, and compaction (a new log generation
 * that starts with a snapshot of every list; on a replica's leader, through the cluster).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "journal_compact.h"
#include "journal_map.h"
#include "journal_writer.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "snapshot.h"
#include "meet/keys.h"
#include "store/store.h"
#include "wal.h"

/* The lists a compaction copied under their locks, to write to files outside them. */
typedef struct compaction {
    journal *j;
    store *st;
    const char *name;      /* the list whose leases are being written */
    struct copy {
        uint64_t id;
        list *l;
    } *v;
    size_t n, cap;
    size_t lists;
    size_t keys;
    uint64_t bytes;        /* written: inline records and files */
} compaction;

/* Creates log gen, durably: header, and with new_history a COMPACT_DONE record saying
 * that no older log is needed. Returns the descriptor, or -1 (logged). */
int journal_create_log(journal *j, uint32_t gen, int new_history, uint64_t *size)
{
    char name[32];
    uint8_t h[WAL_HEADER_SIZE];
    buf b = BUF_INIT, body = BUF_INIT;
    wal_log_name(name, sizeof name, gen);
    int fd = openat(j->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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

static int stopping(journal *j)
{
    pthread_mutex_lock(&j->mu);
    int s = j->stop;
    pthread_mutex_unlock(&j->mu);
    return s;
}

/* Under the lock of a list, after its SNAPSHOT record: one of its open leases. */
static int lease_one(uint64_t id, int64_t until, const char *owner, size_t olen,
                     const char *line, size_t len, void *ctx)
{
    compaction *c = ctx;
    journal *j = c->j;
    uint64_t lsn;
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    if (owner)
        wal_enc_own(&j->pend, c->name, id, until, owner, olen, line, len);
    else
        wal_enc_lease(&j->pend, c->name, id, until, line, len);
    c->bytes += j->pend.len - j->rec_off;
    int rc = journal_append_locked(j, 1, &lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Under the lock of list name: its SNAPSHOT record, inline for a small list, else naming
 * a file written later from a copy; then its open leases. */
static int snap_one(const char *name, const list *l, void *ctx)
{
    compaction *c = ctx;
    journal *j = c->j;
    list *copy = NULL;
    uint64_t lsn, id = 0;
    int small = list_bytes(l) + 10 * list_length(l) <= SNAP_INLINE_MAX;
    if (!small) {
        if (array_grow(&c->v, &c->cap, c->n, sizeof *c->v) != 0)
            return -1;
        if (!(copy = list_clone(l)))
            return -1;
    }
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    if (small) {
        snap_enc_inline(&j->pend, name, l);
    } else {
        id = (uint64_t)j->gen << 32 | ++j->snap_n;
        wal_enc_ref(&j->pend, WAL_SNAPSHOT, name, id);
    }
    size_t len = j->pend.len - j->rec_off;
    int rc = journal_append_locked(j, 1, &lsn);
    /* Its columns next, in the same hold of the journal's lock: nothing comes between. */
    if (rc == 0 && list_column_count(l)) {
        journal_rec_start(j);
        wal_enc_columns(&j->pend, name, l);
        len += j->pend.len - j->rec_off;
        rc = journal_append_locked(j, 1, &lsn);
    }
    if (rc == 0 && id && snapref_ids_add(&j->refs, id) != 0)
        j->refs_lost = 1;
    /* Older files of this list go with the older logs once this compaction is done. */
    uint64_t prev;
    if (rc == 0)
        snapref_set(&j->defs, name, id, &prev);
    pthread_mutex_unlock(&j->mu);
    if (rc != 0) {
        list_free(copy);
        return -1;
    }
    if (id)
        c->v[c->n++] = (struct copy){id, copy};
    else
        c->bytes += len;
    c->lists++;
    c->name = name;
    return store_each_lease_locked(c->st, name, lease_one, c);
}

/* Under the keys' lock: one key's state (it drops leases recorded before it), then each
 * of its open counter leases. */
static int key_record(compaction *c, const store_key_rec *k)
{
    journal *j = c->j;
    uint64_t lsn;
    static const int types[] = {[STORE_KEY_SET] = WAL_KEY_SET,
                                [STORE_KEY_LEASE] = WAL_KEY_LEASE};
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_key(&j->pend, types[k->kind], k->name, k->flag, k->id, k->until, k->by,
                k->version, k->value, k->len);
    c->bytes += j->pend.len - j->rec_off;
    int rc = journal_append_locked(j, 1, &lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* A key with its deadline (TTL=, EXPIRE) in the same record, so that no change of the
 * key can come between its value and its expiry in the new log. */
static int key_one(const char *name, const char *value, size_t len, uint64_t version,
                   int64_t expires, void *ctx)
{
    store_key_rec k = {STORE_KEY_SET, name, 1, 0, expires, 0, version, value, len};
    ((compaction *)ctx)->keys++;
    return key_record(ctx, &k);
}

static int key_run_one(const char *name, uint64_t id, int64_t until, int64_t ttl_ms,
                       void *ctx)
{
    compaction *c = ctx;
    journal *j = c->j;
    uint64_t lsn;
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_key(&j->pend, WAL_KEY_RUN, name, 0, id, until, ttl_ms, 0, NULL, 0);
    c->bytes += j->pend.len - j->rec_off;
    int rc = journal_append_locked(j, 1, &lsn);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

static int key_lease_one(const char *name, uint64_t id, int64_t until, int64_t by,
                         uint64_t version, const char *value, size_t len, void *ctx)
{
    store_key_rec k = {STORE_KEY_LEASE, name, 0, id, until, by, version, value, len};
    return key_record(ctx, &k);
}

/* Starts generation gen: the old log whole on disk first (the replay reads the logs in a
 * row, so nothing may land in the new one while the old may still lose its tail). Sets
 * *from to the lsn where the new log starts: every change before it is in the lists the
 * compaction is about to copy. */
static int switch_log(journal *j, uint32_t *gen, uint64_t *from)
{
    uint64_t hsize;
    pthread_mutex_lock(&j->mu);
    /* No record yet: a failed attempt's log, which can serve again (unless it failed). */
    int reuse = j->size == WAL_HEADER_SIZE && j->dead_gen != j->gen;
    *gen = reuse ? j->gen : j->max_gen + 1;
    /* With no record in it, whatever broke in this generation broke before the snapshots
     * about to be taken, which will repair it. */
    if (reuse && j->broken_gen == j->gen)
        j->broken_gen = j->gen - 1;
    *from = j->pos;
    pthread_mutex_unlock(&j->mu);
    if (reuse)
        return 0;
    int fd = journal_create_log(j, *gen, 0, &hsize);
    if (fd < 0)
        return -1;
    pthread_mutex_lock(&j->mu);
    while (j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    if (j->dead_gen != j->gen) {
        journal_flush_locked(j, 1, 0);        /* the bulk, without the mutex */
        while (j->io)
            pthread_cond_wait(&j->cv, &j->mu);
    }
    while (j->syncing)                        /* it uses the fd about to be closed */
        pthread_cond_wait(&j->cv, &j->mu);
    /* What came in meanwhile, with the mutex held up to the switch (dropped, and held,
     * if the old log failed). */
    journal_flush_locked(j, 1, 1);
    journal_map_close_locked(j);
    close(j->fd);
    j->fd = fd;
    j->gen = j->max_gen = *gen;
    j->size = j->fsize = j->alloc = hsize;
    journal_map_open_locked(j);
    j->pos += hsize;
    /* The new log's header is on disk; changes held by a failure of the old one stay
     * held (journal_int.h) until this compaction is done. */
    j->written = j->synced = j->pos;
    *from = j->pos;
    j->snap_n = 0;
    j->refs.n = 0;
    j->refs_lost = 0;
    pthread_mutex_unlock(&j->mu);
    return 0;
}

/* A replica's leader starts generation *gen through the cluster: every record appended
 * before goes out first, every later one after the JOURNAL_GEN piece, which every node
 * applies (journal_mirror_gen, here too before ship returns). Holding the log's io role
 * keeps the writer from shipping in between. */
static int switch_log_replica(journal *j, uint32_t *gen)
{
    pthread_mutex_lock(&j->mu);
    while (j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    int rc = journal_flush_locked(j, 1, 0);
    *gen = j->max_gen + 1;
    if (rc == 0) {
        j->io = 1;
        pthread_mutex_unlock(&j->mu);
        rc = j->ship.piece(j->ship_ctx, JOURNAL_GEN, *gen, NULL, 0);
        pthread_mutex_lock(&j->mu);
        j->io = 0;
        pthread_cond_broadcast(&j->cv);
        if (rc == 0 && j->gen != *gen)
            rc = -1;              /* committed, but not applied here: see the log */
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* A replica's leader ends a compaction: the snapshot files of older generations that
 * are still named (INITFILEs under way, a REPLACE made since the switch) go to every node
 * with the JOURNAL_TIDY piece, which removes the rest and the older logs everywhere. */
static int tidy_replica(journal *j, uint32_t gen)
{
    buf keep = BUF_INIT;
    pthread_mutex_lock(&j->mu);
    int rc = j->refs_lost ? -1 : 0;   /* a reference missed: remove nothing this time */
    for (size_t i = 0; rc == 0 && i < j->refs.n + j->pending.n; i++) {
        uint64_t id = i < j->refs.n ? j->refs.v[i] : j->pending.v[i - j->refs.n];
        uint8_t b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (uint8_t)(id >> (8 * k));
        rc = buf_append(&keep, b, sizeof b);
    }
    pthread_mutex_unlock(&j->mu);
    if (rc == 0)
        rc = j->ship.piece(j->ship_ctx, JOURNAL_TIDY, gen, keep.data, keep.len);
    buf_free(&keep);
    return rc;
}

/* Names in the state directory a finished compaction may remove. */
typedef struct obsolete {
    uint32_t gen;
    struct name {
        char s[32];
        int kind;
        uint64_t num;
    } *v;
    size_t n, cap;
} obsolete;

static int pick_obsolete(const char *name, int kind, uint64_t num, void *ctx)
{
    obsolete *o = ctx;
    if (!((kind == 1 && num < o->gen) || kind == 2))
        return 0;
    if (array_grow(&o->v, &o->cap, o->n, sizeof *o->v) != 0)
        return -1;
    snprintf(o->v[o->n].s, sizeof o->v[o->n].s, "%s", name);
    o->v[o->n].kind = kind;
    o->v[o->n++].num = num;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Removes the logs before gen and the snapshot files no record of gen references (nor
 * an INITFILE in flight). The listing comes first: files made after it are never seen. */
static void remove_obsolete(journal *j, uint32_t gen)
{
    obsolete o = {gen, NULL, 0, 0};
    uint64_t *keep = NULL;
    size_t nkeep = 0;
    int keep_snaps = 0;
    if (wal_list(j->dirfd, pick_obsolete, &o) != 0) {
        log_warn("journal: cannot list %s to remove old files: %s", j->dir, strerror(errno));
        goto cleanup;
    }
    pthread_mutex_lock(&j->mu);
    nkeep = j->refs.n + j->pending.n;
    keep = malloc((nkeep ? nkeep : 1) * sizeof *keep);
    keep_snaps = j->refs_lost || !keep;
    if (keep && j->refs.n)
        memcpy(keep, j->refs.v, j->refs.n * sizeof *keep);
    if (keep && j->pending.n)
        memcpy(keep + j->refs.n, j->pending.v, j->pending.n * sizeof *keep);
    pthread_mutex_unlock(&j->mu);
    if (keep && nkeep)
        qsort(keep, nkeep, sizeof *keep, cmp_u64);
    for (size_t i = 0; i < o.n; i++) {
        if (o.v[i].kind == 2 &&
            (keep_snaps ||
             (nkeep && bsearch(&o.v[i].num, keep, nkeep, sizeof *keep, cmp_u64))))
            continue;
        if (unlinkat(j->dirfd, o.v[i].s, 0) != 0 && errno != ENOENT)
            log_warn("journal: cannot remove %s/%s: %s", j->dir, o.v[i].s, strerror(errno));
    }
cleanup:
    free(o.v);
    free(keep);
}

/* Writes the snapshot files of c's copied lists (freeing each copy once written) and
 * syncs the directory. Returns 0, or -1 (logged) when stopping or on a failure. */
static int write_snapshots(journal *j, compaction *c, buf *err)
{
    for (size_t i = 0; i < c->n; i++) {
        uint64_t bytes;
        if (stopping(j)) {
            log_info("journal: compaction abandoned: stopping");
            return -1;
        }
        if (snap_write(j->dirfd, c->v[i].id, c->v[i].l, 0, &bytes, err) != 0) {
            log_error("journal: compaction failed: %s", err->data ? err->data : "out of memory");
            return -1;
        }
        c->bytes += bytes;
        list_free(c->v[i].l);
        c->v[i].l = NULL;
    }
    if (c->n && wal_fsync_dir(j->dirfd) != 0) {
        log_error("journal: compaction failed: fsync of %s: %s", j->dir, strerror(errno));
        return -1;
    }
    /* A replica's files go to the other nodes before COMPACT_DONE, which names them. */
    for (size_t i = 0; j->ship.batch && i < c->n; i++)
        if (journal_ship_snapshot_file(j, c->v[i].id) != 0) {
            log_error("journal: compaction failed: a snapshot file did not reach the cluster");
            return -1;
        }
    return 0;
}

int journal_compact(journal *j, store *st)
{
    compaction c = {.j = j, .st = st};
    buf err = BUF_INIT;
    uint32_t gen;
    uint64_t lsn, from = 0;
    int rc = -1;
    pthread_mutex_lock(&j->compact_mu);
    pthread_mutex_lock(&j->mu);
    unsigned long long was = j->size;
    pthread_mutex_unlock(&j->mu);
    if ((j->ship.batch ? switch_log_replica(j, &gen) : switch_log(j, &gen, &from)) != 0)
        goto cleanup;
    log_info("journal: compaction into journal.%010u.log started (the log had %llu bytes)",
             gen, was);
    if (store_each_locked(st, snap_one, &c) != 0) {
        log_error("journal: compaction into journal.%010u.log failed: a list could not be "
                  "copied or recorded", gen);
        goto cleanup;
    }
    if (keys_each_locked(st, key_one, key_lease_one, &c) != 0 ||
        keys_each_run_locked(st, key_run_one, &c) != 0) {
        log_error("journal: compaction into journal.%010u.log failed: a key could not be "
                  "recorded", gen);
        goto cleanup;
    }
    if (write_snapshots(j, &c, &err) != 0)
        goto cleanup;
    /* The record that makes the new generation stand alone, on disk before anything old
     * is removed. */
    pthread_mutex_lock(&j->mu);
    journal_rec_start(j);
    wal_enc_done(&j->pend, gen, c.lists);
    int ok = journal_append_locked(j, 1, &lsn) == 0 && journal_sync_to_locked(j, lsn, gen) == 0;
    if (ok && j->ship.batch) {
        j->base_size = j->fsize;  /* committed, and so in the directory */
        j->snapset = c.bytes;
    } else if (ok) {
        if (atomic_load(&j->broken) && j->broken_gen < gen) {
            atomic_store(&j->broken, 0);
            log_warn("journal: log rewritten from memory into %s/journal.%010u.log; changes "
                     "are accepted again (%lu were refused)", j->dir, gen,
                     atomic_exchange(&j->refused, 0));
        }
        if (j->held && j->held <= from) {
            log_warn("journal: the changes held since the log failed are on disk in "
                     "journal.%010u.log; their answers go out", gen);
            j->held = j->held_from = 0;
        }
        j->base_size = j->size;
        j->snapset = c.bytes;
    }
    journal_fire_locked(j);
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    if (!ok)
        goto cleanup;
    if (j->ship.batch && tidy_replica(j, gen) != 0)
        goto cleanup;
    if (!j->ship.batch)
        remove_obsolete(j, gen);
    log_info("journal: compaction done: %zu lists and %zu keys in journal.%010u.log and %zu "
             "snapshot files, %llu bytes", c.lists, c.keys, gen, c.n,
             (unsigned long long)c.bytes);
    rc = 0;
cleanup:
    for (size_t i = 0; i < c.n; i++)
        list_free(c.v[i].l);
    free(c.v);
    buf_free(&err);
    pthread_mutex_unlock(&j->compact_mu);
    return rc;
}

/* Waits on j->tick, mu held, until seconds have passed or a stop is asked for (or, for
 * the compaction thread, the log has outgrown its threshold). */
static void nap(journal *j, int seconds, int compactor)
{
    struct timespec t = clock_deadline_ns((uint64_t)seconds * 1000000000u);
    while (!j->stop && !(compactor && j->compact_due) &&
           pthread_cond_timedwait(&j->tick, &j->mu, &t) != ETIMEDOUT)
        ;
}

/* everysec: an fsync each second when something was appended, whether or not more is. */
static void *sync_main(void *arg)
{
    journal *j = arg;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        nap(j, 1, 0);
        if (j->stop)
            break;
        if (j->pend.len || j->synced < j->written)
            journal_sync_bg_locked(j);
        journal_fire_locked(j);
        journal_reap_locked(j);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

/* Each second: records no caller wrote yet go out, and superseded snapshot files go once
 * the records superseding them are on disk (an fdatasync first if needed). */
static void tidy_locked(journal *j)
{
    uint64_t due = snapref_waiting(&j->defs);
    if (!j->io && j->dead_gen != j->gen && j->pend.len)
        journal_flush_locked(j, 0, 1);
    if (due && j->synced < due && due <= j->pos)
        journal_sync_bg_locked(j);
    journal_fire_locked(j);
    journal_reap_locked(j);
}

/* Compacts when the log outgrew its threshold, and retries each second while broken. */
static void *compact_main(void *arg)
{
    journal *j = arg;
    int wait = 1;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        nap(j, wait, wait == 1);          /* backing off after a failure: no hurry */
        if (j->stop)
            break;
        j->compact_due = 0;
        /* A replica: its writer ships every record and the cluster writes the files; only
         * its leader, still leading, compacts (a follower's log is compacted by the
         * leader's pieces). A broken replica was deposed: nothing to repair here. */
        int replica = j->ship.batch != NULL;
        if (replica && (!j->leading || j->cancelled || atomic_load(&j->broken) ||
                        !journal_outgrown_locked(j))) {
            wait = 1;
            continue;
        }
        if (!replica)
            tidy_locked(j);
        int broken = !replica && atomic_load(&j->broken);
        int big = journal_outgrown_locked(j);
        if (!broken && !big) {
            wait = 1;
            continue;
        }
        pthread_mutex_unlock(&j->mu);
        int rc = journal_compact(j, j->st);
        pthread_mutex_lock(&j->mu);
        /* A failure while healthy (say, no room for snapshot files) backs off; while
         * changes are refused, getting them accepted again is worth a try each second. */
        wait = rc == 0 || atomic_load(&j->broken) ? 1 : (wait * 2 > 60 ? 60 : wait * 2);
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int journal_start(journal *j, store *st)
{
    j->st = st;
    /* A replica has its writer thread (fsync=always) and the compaction thread, which
     * works while the node leads. */
    if (j->policy == CONF_FSYNC_EVERYSEC && !j->ship.batch) {
        if (thread_start(&j->sync_thread, "stsd-fsync", sync_main, j) != 0)
            return -1;
        j->sync_started = 1;
    }
    if (thread_start(&j->compact_thread, "stsd-compact", compact_main, j) != 0)
        return -1;
    j->compact_started = 1;
    return 0;
}
