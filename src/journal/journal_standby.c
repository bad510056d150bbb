/* SPDX-License-Identifier: Apache-2.0 */
/* journal_standby.c - a follower's hot standby: the records of each committed batch
 * applied in log order to lists, leases and keys in memory, so that a node that comes to
 * lead serves at once instead of replaying its directory.
 *
 * Why the same rules as a start's replay give the same state here: applied in log order
 * from a known state, every record can be applied as it comes. A REPLACE (INITFILE) loads
 * its snapshot file, whole in the directory before its record is committed. A SNAPSHOT
 * record (a compaction's) and COMPACT_DONE say what the state already is at that point of
 * the log (a SNAPSHOT is taken under its list's lock): they change nothing, and a
 * SNAPSHOT's file may even come after it. They only move the bookkeeping a leader needs
 * (each list's defining snapshot file, once its compaction is done).
 *
 * Why a thread of its own: raft's loop (`stsd-raft`) must keep answering the leader, and
 * a REPLACE may load millions of lines; the loop only copies each batch into the queue.
 * The state is touched by one thread at a time, the one that set `busy`: this thread
 * applying a batch, raft's restoring a snapshot, the cluster's promoting. That thread
 * also holds `view` for writing while it does, so that a follower's reads (HTTP threads,
 * `view` for reading) see the state between batches, never in the middle of one. */
#include "journal_standby.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "recover_map.h"
#include "snapshot.h"
#include "wal.h"

/* A batch waiting for the thread. */
typedef struct sb_batch {
    struct sb_batch *next;
    uint64_t end;           /* the lsn after it */
    uint32_t gen;           /* the log it was written into */
    size_t len;
    uint8_t data[];
} sb_batch;

struct journal_standby {
    int dirfd;
    char *dir;
    pthread_mutex_t mu;     /* guards everything down to `stop` */
    pthread_cond_t cv;      /* a batch queued, the state let go, a stop */
    sb_batch *head, *tail;
    int busy;               /* a thread works on the state without the mutex */
    int following;          /* the state is the log's up to `applied` */
    int off;                /* taken by a promotion: batches are ignored */
    int stop;
    uint64_t applied;       /* lsn the state is at (batches applied, or the build) */
    /* The state: the lists and their leases, the keys (made on first use). */
    recover_map map;
    rkeys *keys;
    /* The journal's bookkeeping, as recover_run would find it in the directory. */
    uint32_t snap_gen, snap_n;  /* highest snapshot number referenced in snap_gen */
    uint32_t max_gen;
    uint64_t snap_bytes;
    pthread_rwlock_t view;  /* read: a follower's reads; write: the state's busy thread */
    pthread_t thread;
    int started;
};

/* ---- the state ------------------------------------------------------------------------- */

/* Frees the lists, leases and keys; sb is busy (or its thread gone). */
static void drop_state(journal_standby *sb)
{
    recover_map_free(&sb->map);
    rkeys_free(sb->keys);
    sb->keys = NULL;
    sb->snap_gen = sb->snap_n = sb->max_gen = 0;
    sb->snap_bytes = 0;
}

/* A snapshot file id referenced by a record: the numbers a leader must not use again. */
static void note_ref(journal_standby *sb, uint64_t id)
{
    uint32_t gen = (uint32_t)(id >> 32), n = (uint32_t)id;
    if (!id)
        return;
    if (gen > sb->max_gen)
        sb->max_gen = gen;
    if (gen > sb->snap_gen) {
        sb->snap_gen = gen;
        sb->snap_n = n;
    } else if (gen == sb->snap_gen && n > sb->snap_n) {
        sb->snap_n = n;
    }
}

/* The list REPLACE record r sets: empty, or its snapshot file. NULL on failure (why). */
static list *load_replace(journal_standby *sb, const wal_rec *r, char *why, size_t wl)
{
    list *l = NULL;
    char name[64];
    struct stat st;
    if (r->id == 0) {
        if (!(l = list_create()))
            snprintf(why, wl, "out of memory");
        return l;
    }
    buf msg = BUF_INIT;
    if (snap_read(sb->dirfd, r->id, &l, &msg) != 0) {
        snprintf(why, wl, "%s", msg.data ? msg.data : "out of memory");
        buf_free(&msg);
        return NULL;
    }
    buf_free(&msg);
    wal_snap_name(name, sizeof name, r->id);
    if (fstatat(sb->dirfd, name, &st, 0) == 0)
        sb->snap_bytes += (uint64_t)st.st_size;
    return l;
}

/* A compaction of log gen is done: its SNAPSHOT records define their lists now. */
static void compaction_done(journal_standby *sb, uint32_t gen)
{
    for (size_t i = 0; i < sb->map.nb; i++)
        for (rent *e = sb->map.b[i]; e; e = e->next)
            if (e->snap_gen == gen) {
                e->def_id = e->snap_id;
                e->snap_gen = 0;
            }
}

/* Applies record r, of log gen, to the state. Returns 0, or -1 with the reason in why. */
static int apply_one(journal_standby *sb, const wal_rec *r, uint32_t gen, char *why,
                     size_t wl)
{
    list *def = NULL;
    if (r->type == WAL_NOOP)
        return 0;
    if (r->type == WAL_COMPACT_DONE) {
        compaction_done(sb, (uint32_t)r->id);
        return 0;
    }
    if (WAL_IS_KEY(r->type)) {
        if (rkeys_apply(&sb->keys, r) == 0)
            return 0;
        snprintf(why, wl, "out of memory");
        return -1;
    }
    rent *e = recover_map_get(&sb->map, r->name, r->name_len);
    if (!e) {
        snprintf(why, wl, "out of memory");
        return -1;
    }
    if (r->type == WAL_REPLACE || r->type == WAL_DROP) {
        if (r->type == WAL_REPLACE && !(def = load_replace(sb, r, why, wl)))
            return -1;
        e->def_id = r->id;
        e->snap_gen = 0;      /* a later definition than a compaction's */
    } else if (r->type == WAL_SNAPSHOT) {
        e->snap_id = r->id;
        e->snap_gen = gen;
    }
    if (r->type == WAL_REPLACE || r->type == WAL_SNAPSHOT)
        note_ref(sb, r->id);
    int rc = recover_map_apply(&sb->map, e, r, def, why, wl);
    if (rc == RECOVER_NOMEM)
        snprintf(why, wl, "out of memory");
    return rc ? -1 : 0;
}

/* Applies every record of batch b. Returns 0, or -1 with the reason in why. */
static int apply_batch(journal_standby *sb, const sb_batch *b, char *why, size_t wl)
{
    size_t off = 0, next, len;
    const uint8_t *body;
    const char *w = NULL;
    wal_rec r;
    for (;; off = next) {
        wal_scan s = wal_next(b->data, b->len, off, &body, &len, &next, &w);
        if (s == WAL_END)
            return 0;
        if (s != WAL_OK || wal_decode(body, len, &r, &w) != 0) {
            snprintf(why, wl, "a malformed record (%s)", w ? w : "?");
            return -1;
        }
        if (apply_one(sb, &r, b->gen, why, wl) != 0)
            return -1;
    }
}

/* ---- the thread ------------------------------------------------------------------------ */

/* Locked: the state no longer follows the log; said once. */
static void stop_following(journal_standby *sb, const char *why)
{
    if (sb->following)
        log_warn("journal: the standby stops following the cluster (%s): a promotion of "
                 "this node will read its state from %s", why, sb->dir);
    sb->following = 0;
}

static void *standby_main(void *arg)
{
    journal_standby *sb = arg;
    char why[256];
    pthread_mutex_lock(&sb->mu);
    while (!sb->stop) {
        sb_batch *b = sb->head;
        if (!b || sb->busy) {
            pthread_cond_wait(&sb->cv, &sb->mu);
            continue;
        }
        sb->head = b->next;
        if (!sb->head)
            sb->tail = NULL;
        int follow = sb->following;
        sb->busy = 1;
        pthread_mutex_unlock(&sb->mu);
        int rc = 0;
        if (follow) {
            pthread_rwlock_wrlock(&sb->view);
            rc = apply_batch(sb, b, why, sizeof why);
            pthread_rwlock_unlock(&sb->view);
        }
        pthread_mutex_lock(&sb->mu);
        if (rc != 0)
            stop_following(sb, why);
        sb->applied = b->end;
        sb->busy = 0;
        free(b);
        pthread_cond_broadcast(&sb->cv);
    }
    pthread_mutex_unlock(&sb->mu);
    return NULL;
}

/* Locked: frees the batches queued. */
static void drop_queue(journal_standby *sb)
{
    while (sb->head) {
        sb_batch *b = sb->head;
        sb->head = b->next;
        free(b);
    }
    sb->tail = NULL;
}

/* Locked: waits until no thread works on the state, then makes the caller that thread. */
static void claim(journal_standby *sb)
{
    while (sb->busy)
        pthread_cond_wait(&sb->cv, &sb->mu);
    sb->busy = 1;
}

/* ---- the interface ----------------------------------------------------------------------- */

journal_standby *journal_standby_new(int dirfd, const char *dir, uint64_t pos)
{
    journal_standby *sb = calloc(1, sizeof *sb);
    if (!sb || !(sb->dir = strdup(dir))) {
        free(sb);
        log_warn("journal: no memory for a standby: a promotion will read %s", dir);
        return NULL;
    }
    sb->dirfd = dirfd;
    sb->following = 1;
    sb->applied = pos;
    pthread_mutex_init(&sb->mu, NULL);
    /* Writers first: a stream of reads must not hold the batches back. */
    pthread_rwlockattr_t va;
    pthread_rwlockattr_init(&va);
    pthread_rwlockattr_setkind_np(&va, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&sb->view, &va);
    pthread_rwlockattr_destroy(&va);
    if (clock_cond_init(&sb->cv) != 0 ||
        thread_start(&sb->thread, "stsd-standby", standby_main, sb) != 0) {
        log_warn("journal: cannot start the standby's thread: %s; a promotion will read %s",
                 strerror(errno), dir);
        journal_standby_free(sb);
        return NULL;
    }
    sb->started = 1;
    return sb;
}

void journal_standby_push(journal_standby *sb, const void *data, size_t len, uint64_t end,
                          uint32_t gen)
{
    sb_batch *b = NULL;
    pthread_mutex_lock(&sb->mu);
    if (sb->off || !sb->following) {
        sb->applied = end;       /* nothing to apply it to: only the count moves */
        pthread_mutex_unlock(&sb->mu);
        return;
    }
    pthread_mutex_unlock(&sb->mu);
    /* The copy outside the lock: the thread may be applying meanwhile. */
    if ((b = malloc(sizeof *b + len)) != NULL) {
        b->next = NULL;
        b->end = end;
        b->gen = gen;
        b->len = len;
        if (len)                 /* len 0: only the count moves (a piece of no records) */
            memcpy(b->data, data, len);
    }
    pthread_mutex_lock(&sb->mu);
    if (!b || sb->off) {
        if (!b)
            stop_following(sb, "out of memory");
        free(b);
        sb->applied = end;
    } else {
        if (sb->tail)
            sb->tail->next = b;
        else
            sb->head = b;
        sb->tail = b;
        pthread_cond_broadcast(&sb->cv);
    }
    pthread_mutex_unlock(&sb->mu);
}

void journal_standby_wait(journal_standby *sb)
{
    pthread_mutex_lock(&sb->mu);
    while ((sb->head || sb->busy) && !sb->stop)
        pthread_cond_wait(&sb->cv, &sb->mu);
    pthread_mutex_unlock(&sb->mu);
}

int journal_standby_build(journal_standby *sb, uint64_t pos)
{
    recover_state rs;
    buf err = BUF_INIT;
    uint64_t t0 = clock_now_ns();
    pthread_mutex_lock(&sb->mu);
    drop_queue(sb);              /* older than the snapshot, which holds them */
    claim(sb);
    pthread_mutex_unlock(&sb->mu);
    pthread_rwlock_wrlock(&sb->view);
    drop_state(sb);
    int rc = recover_replay(sb->dirfd, &rs, &sb->map, &sb->keys, &err);
    pthread_rwlock_unlock(&sb->view);
    if (rc == 0) {
        sb->snap_gen = rs.last_gen;
        sb->snap_n = rs.last_snap_n;
        sb->max_gen = rs.max_gen;
        sb->snap_bytes = rs.snap_bytes;
    }
    recover_free(&rs);
    size_t names = sb->map.n;
    pthread_mutex_lock(&sb->mu);
    sb->following = 1;           /* so that a failure below is said */
    if (rc != 0)
        stop_following(sb, err.data ? err.data : "out of memory");
    else
        sb->off = 0;
    sb->applied = pos;
    sb->busy = 0;
    pthread_cond_broadcast(&sb->cv);
    pthread_mutex_unlock(&sb->mu);
    if (rc == 0)
        log_info("journal: standby built from %s: %zu lists in %.1f ms", sb->dir, names,
                 (double)(clock_now_ns() - t0) / 1e6);
    buf_free(&err);
    return rc;
}

int journal_standby_take(journal_standby *sb, uint64_t pos, recover_state *rs, buf *err)
{
    int rc = -1;
    memset(rs, 0, sizeof *rs);
    pthread_mutex_lock(&sb->mu);
    while (sb->head && !sb->stop)
        pthread_cond_wait(&sb->cv, &sb->mu);
    claim(sb);
    int following = sb->following && !sb->off;
    uint64_t applied = sb->applied;
    sb->off = 1;                 /* this node leads: its store is the state from now on */
    pthread_mutex_unlock(&sb->mu);
    pthread_rwlock_wrlock(&sb->view);    /* the last read of the standby ends first */
    if (!following) {
        buf_puts(err, "the standby does not follow the cluster");
    } else if (applied != pos) {
        buf_printf(err, "the standby is at lsn %llu, the journal at %llu",
                   (unsigned long long)applied, (unsigned long long)pos);
    } else if (recover_hand_over(&sb->map, sb->keys, rs) != 0) {
        buf_puts(err, "out of memory");
        recover_free(rs);
    } else {
        rs->last_gen = sb->snap_gen;
        rs->last_snap_n = sb->snap_n;
        rs->max_gen = sb->max_gen;
        rs->snap_bytes = sb->snap_bytes;
        rc = 0;
    }
    drop_state(sb);
    pthread_rwlock_unlock(&sb->view);
    pthread_mutex_lock(&sb->mu);
    sb->busy = 0;
    pthread_cond_broadcast(&sb->cv);
    pthread_mutex_unlock(&sb->mu);
    return rc;
}

void journal_standby_free(journal_standby *sb)
{
    if (!sb)
        return;
    pthread_mutex_lock(&sb->mu);
    sb->stop = 1;
    pthread_cond_broadcast(&sb->cv);
    pthread_mutex_unlock(&sb->mu);
    if (sb->started)
        pthread_join(sb->thread, NULL);
    drop_queue(sb);
    drop_state(sb);
    pthread_rwlock_destroy(&sb->view);
    pthread_mutex_destroy(&sb->mu);
    pthread_cond_destroy(&sb->cv);
    free(sb->dir);
    free(sb);
}

/* ---- a follower's reads ------------------------------------------------------------------ */

int journal_standby_wait_applied(journal_standby *sb, uint64_t lsn, int64_t deadline_ms)
{
    struct timespec until = clock_deadline_at_ms(deadline_ms);
    int rc = 0;
    pthread_mutex_lock(&sb->mu);
    while (sb->applied < lsn && !sb->stop && rc == 0)
        if (pthread_cond_timedwait(&sb->cv, &sb->mu, &until) != 0)
            rc = sb->applied >= lsn ? 0 : -1;
    if (sb->applied < lsn)
        rc = -1;
    pthread_mutex_unlock(&sb->mu);
    return rc;
}

int journal_standby_view_begin(journal_standby *sb)
{
    pthread_rwlock_rdlock(&sb->view);
    pthread_mutex_lock(&sb->mu);
    int ok = sb->following && !sb->off && !sb->stop;
    pthread_mutex_unlock(&sb->mu);
    if (!ok)
        pthread_rwlock_unlock(&sb->view);
    return ok ? 0 : -1;
}

void journal_standby_view_end(journal_standby *sb)
{
    pthread_rwlock_unlock(&sb->view);
}

list *journal_standby_list(journal_standby *sb, const char *name, size_t len)
{
    rent *e = recover_map_find(&sb->map, name, len);
    return e ? e->l : NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(rent *const *)a)->name, (*(rent *const *)b)->name);
}

long journal_standby_lists(journal_standby *sb,
                           void (*fn)(const char *name, const list *l, void *ctx), void *ctx)
{
    rent **all = malloc((sb->map.n ? sb->map.n : 1) * sizeof *all);
    if (!all)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < sb->map.nb; i++)
        for (rent *e = sb->map.b[i]; e; e = e->next)
            if (e->l && n < sb->map.n)
                all[n++] = e;
    /* As STATUS orders a store's lists (store_entries_sorted). */
    qsort(all, n, sizeof *all, by_name);
    for (size_t i = 0; i < n; i++)
        fn(all[i]->name, all[i]->l, ctx);
    free(all);
    return (long)n;
}

int journal_standby_key(journal_standby *sb, const char *name, size_t len, buf *out,
                        uint64_t *version)
{
    return sb->keys ? rkeys_get(sb->keys, name, len, out, version) : 0;
}

long journal_standby_keys(journal_standby *sb, const char *prefix,
                          void (*fn)(const key_info *k, void *ctx), void *ctx)
{
    return sb->keys ? rkeys_list(sb->keys, prefix, fn, ctx) : 0;
}
