/* SPDX-License-Identifier: Apache-2.0 */
/* journal_writer.c - group commit: records wait in memory until one write (and with
 * fsync=always one fdatasync, by the writer thread) takes all of them; who made a change
 * learns that it is durable by a callback or by blocking; a failed write or fdatasync
 * holds the changes it concerned until a rewrite of the log is on disk; a replica ships
 * its batches and files to the cluster instead. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal_writer.h"
#include "journal_map.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "wal.h"

/* Disk space for the log is reserved this much at a time, ahead of the records. */
#define RESERVE_CHUNK (256u << 10)
/* Waiters called back per round, between which the mutex is taken again. */
#define FIRE_BATCH 64
/* Group commit under load (fsync=always): when the last batch held at least this many
 * records, the writer lets the next one gather GATHER_US longer before syncing it, as
 * PostgreSQL's commit_delay does only with commit_siblings active. One fdatasync then
 * covers about twice the changes, and its CPU (the VM's virtio kick and interrupts:
 * 130-160 us on this thread, more in wake-ups elsewhere) is what bounds a busy server.
 * A lone change, or a light load, never waits. Longer gathers idle the cores instead
 * (docs/benchmarks.md, "The floor"). */
#define GATHER_MIN_RECORDS 8
#define GATHER_US 150
/* A replica's leader cuts its next batch once a commit makes room in the pipeline, after
 * it has released that commit's answers: the clients answered come back with their next
 * change within a few hundred microseconds, and without a gather they would miss this
 * batch and wait a whole commit for the one after (the clients split in two groups, each
 * in every other batch). So the writer gathers until as many records as the committed
 * batch held have come in on top of those pending, or GATHER_REPLICA_US. */
#define GATHER_REPLICA_US 400
/* Superseded snapshot files removed per round. */
#define REAP_BATCH 32

/* ---- durability ------------------------------------------------------------------------- */

/* Whether the change at lsn may be answered: durable as the policy promises, and not
 * among the changes a log failure holds. */
static int durable(const journal *j, uint64_t lsn)
{
    uint64_t done = j->policy == CONF_FSYNC_ALWAYS ? j->synced : j->written;
    return lsn <= done && !(lsn > j->held_from && lsn <= j->held) && !journal_voided(j, lsn);
}

int journal_voided(const journal *j, uint64_t lsn)
{
    journal *m = (journal *)j;
    return lsn > atomic_load_explicit(&m->void_lo, memory_order_acquire) &&
           lsn <= atomic_load_explicit(&m->void_hi, memory_order_acquire);
}

/* The waiter whose record is the earliest, taken out if durable now; else NULL. */
static journal_waiter *pop_durable(journal *j)
{
    journal_waiter *w = heap_top(&j->waits);
    if (!w || !durable(j, w->lsn))
        return NULL;
    heap_remove(&j->waits, w);
    return w;
}

/* Publishes how far changes may be answered, for journal_answerable. */
static void publish_locked(journal *j)
{
    uint64_t upto = j->policy == CONF_FSYNC_ALWAYS ? j->synced : j->written;
    if (j->held > j->held_from && upto > j->held_from)
        upto = j->held_from;
    if (upto > atomic_load_explicit(&j->answerable, memory_order_relaxed))
        atomic_store_explicit(&j->answerable, upto, memory_order_release);
}

int journal_answerable(journal *j, uint64_t lsn)
{
    /* The void first: answerable moves past it once the node follows. */
    uint64_t upto = atomic_load_explicit(&j->answerable, memory_order_acquire);
    if (journal_voided(j, lsn))
        return -1;
    if (lsn <= upto)
        return 0;
    if (atomic_load_explicit(&j->cancelled, memory_order_acquire))
        return -1;
    /* The policy is set at open; with always, only the writer moves things on. */
    return j->policy == CONF_FSYNC_ALWAYS ? 1 : journal_poll(j, lsn);
}

void journal_set_answer_hook(journal *j, journal_hook_fn fn, void *ctx)
{
    pthread_mutex_lock(&j->mu);
    j->hook = fn;
    j->hook_ctx = ctx;
    /* The old hook's context may be freed once this returns: no call of it may remain. */
    while (j->hook_calls)
        pthread_cond_wait(&j->cv, &j->mu);
    pthread_mutex_unlock(&j->mu);
}

/* Calls the answer hook if changes became answerable since its last call. */
static void hook_locked(journal *j)
{
    uint64_t now = atomic_load_explicit(&j->answerable, memory_order_relaxed);
    if (!j->hook || (now == j->hooked && !j->cancelled))
        return;
    j->hooked = now;
    journal_hook_fn fn = j->hook;
    void *ctx = j->hook_ctx;
    j->hook_calls++;
    pthread_mutex_unlock(&j->mu);
    fn(ctx);
    pthread_mutex_lock(&j->mu);
    if (--j->hook_calls == 0)
        pthread_cond_broadcast(&j->cv);
}

void journal_fire_locked(journal *j)
{
    publish_locked(j);
    hook_locked(j);
    journal_waiter *batch[FIRE_BATCH];
    for (;;) {
        size_t n = 0;
        while (n < FIRE_BATCH && (batch[n] = pop_durable(j)))
            n++;
        if (n == 0)
            return;
        pthread_mutex_unlock(&j->mu);
        for (size_t i = 0; i < n; i++) {
            batch[i]->fn(batch[i]->ctx, 0);
            free(batch[i]);
        }
        pthread_mutex_lock(&j->mu);
    }
}

int journal_outgrown_locked(const journal *j)
{
    /* A replica's log is what the cluster committed into the directory (fsize); size
     * also counts the leader's records still on their way. */
    uint64_t size = j->ship.batch ? j->fsize : j->size;
    return size > j->threshold && size - j->base_size > j->snapset;
}

/* ---- appending ---------------------------------------------------------------------------- */

void journal_rec_start(journal *j)
{
    static const uint8_t frame[WAL_FRAME_SIZE];
    j->rec_off = j->pend.len;
    j->pend.oom = 0;              /* the records before this one are whole */
    buf_append(&j->pend, frame, sizeof frame);
}

/* Makes sure the log file has disk space reserved up to end, a chunk ahead, so that the
 * write (or copy) of a record taken never meets a full disk. The file grows with it: its
 * size does not change with each record, so an fdatasync has no size to record. Returns
 * 0, or -1 if there is no room (logged once until there is again). */
static int reserve_locked(journal *j, uint64_t end)
{
    if (!j->prealloc || end <= j->alloc)
        return 0;
    uint64_t to = (end + RESERVE_CHUNK) & ~(uint64_t)(RESERVE_CHUNK - 1);
    if (j->map && journal_map_grow_locked(j, to) != 0)
        return reserve_locked(j, end);
    /* Short of a chunk, the record alone may still fit. */
    if (wal_reserve(j->fd, j->alloc, to - j->alloc) == 0 ||
        (errno == ENOSPC && wal_reserve(j->fd, j->alloc, (to = end) - j->alloc) == 0)) {
        j->alloc = to;
        journal_map_release_locked(j, RESERVE_CHUNK);
        if (j->nospace)
            log_warn("journal: disk space for the log in %s again; changes are accepted "
                     "(%lu were refused)", j->dir, atomic_exchange(&j->refused, 0));
        j->nospace = 0;
        return 0;
    }
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL) {
        log_info("journal: %s cannot reserve space for the log (%s); a full disk will be "
                 "met by a write instead", j->dir, strerror(errno));
        j->prealloc = 0;
        journal_map_close_locked(j);      /* a mapped log needs its file grown ahead */
        return 0;
    }
    if (!j->nospace)
        log_error("journal: cannot reserve space for the log in %s: %s; changes are "
                  "refused (KO \"Journal not writable\") until there is room", j->dir,
                  strerror(errno));
    j->nospace = 1;
    return -1;
}

int journal_append_locked(journal *j, int internal, uint64_t *lsn)
{
    size_t len = j->pend.len - j->rec_off;
    if (atomic_load(&j->broken) && !internal) {
        atomic_fetch_add(&j->refused, 1);
        goto refuse;
    }
    if (j->ship.batch && !j->leading) {
        /* A replica that does not lead (any more): a change begun while it led, the
         * lease timer's, a compaction's step. */
        atomic_fetch_add(&j->refused, 1);
        goto refuse;
    }
    if (j->pend.oom || len <= WAL_FRAME_SIZE || len - WAL_FRAME_SIZE > WAL_MAX_BODY) {
        log_error("journal: a record could not be built (out of memory or too big); "
                  "that change is refused");
        goto refuse;
    }
    if (reserve_locked(j, j->size + len) != 0) {
        atomic_fetch_add(&j->refused, 1);
        goto refuse;
    }
    uint8_t *p = (uint8_t *)j->pend.data + j->rec_off;
    wal_frame_header(p, p + WAL_FRAME_SIZE, len - WAL_FRAME_SIZE);
    if (j->map) {
        /* In the page cache once copied: as written as a write would make it. */
        journal_map_copy_locked(j, p, len);
        j->pend.len = j->rec_off;
        j->fsize = j->size + len;
        j->written = j->pos + len;
    }
    j->size += len;
    j->pos += len;
    j->records += !internal;
    *lsn = j->pos;
    if (j->map)
        publish_locked(j);
    else
        j->pend_recs++;
    /* Compaction starts as the log outgrows its threshold, not at the next tick: the
     * state directory's bound allows one log's worth of it, not a second's more. */
    if (!j->compact_due && journal_outgrown_locked(j)) {
        j->compact_due = 1;
        pthread_cond_broadcast(&j->tick);
    }
    if (j->writer_idle || (j->gather_until && j->pend_recs >= j->gather_until))
        pthread_cond_signal(&j->wake);
    return 0;
refuse:
    j->pend.len = j->rec_off;
    j->pend.oom = 0;
    return -1;
}

/* ---- writing ------------------------------------------------------------------------------ */

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

/* The log failed: nothing more goes to this generation, and every change taken and not
 * yet durable is held until a rewrite. */
static void log_failed_locked(journal *j, const char *what, int err)
{
    char msg[96];
    snprintf(msg, sizeof msg, "%s of journal.%010u.log failed", what, j->gen);
    if (!j->held)
        j->held_from = j->policy == CONF_FSYNC_ALWAYS ? j->synced : j->written;
    if (j->pos > j->held)
        j->held = j->pos;
    j->dead_gen = j->gen;
    buf_clear(&j->pend);
    journal_set_broken_locked(j, msg, err);
    if (j->held > j->held_from)
        log_warn("journal: the answers to the changes not yet on disk are held until the "
                 "log has been rewritten from memory");
}

/* Replicas: the batch in out goes to the cluster, without waiting for its commit once
 * fewer than ship.inflight are on their way; journal_shipped moves synced on, in order,
 * once the cluster has written it into the log (journal_mirror_batch). The io role is held
 * meanwhile, so that nobody else flushes. Records still pending when the mutex may not be
 * released (journal_close's last flush) are dropped, never answered. A batch that fails
 * was never answered either, and may still be committed by the next leader: every wait
 * fails now ("outcome unknown") and the node restarts (cluster/). */
static int ship_locked(journal *j, uint64_t target, size_t n, int keep_lock)
{
    int rc = 0;
    if (!n)
        return 0;
    if (keep_lock) {
        log_warn("journal: %zu bytes of records not committed by the cluster are dropped", n);
        rc = -1;
    } else {
        j->io = 1;
        while (j->inflight >= j->ship.inflight && !atomic_load(&j->cancelled))
            pthread_cond_wait(&j->cv, &j->mu);
        if (!atomic_load(&j->cancelled)) {
            uint32_t demotions = j->demotions;
            j->inflight++;
            pthread_mutex_unlock(&j->mu);
            rc = j->ship.batch(j->ship_ctx, j->out.data, n, target);
            pthread_mutex_lock(&j->mu);
            if (j->demotions != demotions) {
                /* The leadership ended meanwhile: journal_demote counted this batch out
                 * and voided its records; the cluster drops it. */
                j->io = 0;
                buf_clear(&j->out);
                pthread_cond_broadcast(&j->cv);
                return -1;
            }
            if (rc != 0)
                j->inflight--;
        } else {
            rc = -1;
        }
        j->io = 0;
    }
    buf_clear(&j->out);
    if (rc == 0 && target > j->written) {
        j->written = target;
    } else if (rc != 0) {
        atomic_store(&j->broken, 1);
        atomic_store(&j->cancelled, 1);
        j->dead_gen = j->gen;
    }
    pthread_cond_broadcast(&j->cv);
    return rc;
}

void journal_hold(journal *j, int on)
{
    pthread_mutex_lock(&j->mu);
    j->holds += on ? 1 : -1;
    if (!j->holds)
        pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

int journal_flush_locked(journal *j, int sync, int keep_lock)
{
    /* A replica's batch is cut once the pipeline has room for it, not before: it then
     * takes every record that came in while the batches before were being committed. */
    while (j->ship.batch && !keep_lock && j->inflight >= j->ship.inflight &&
           !atomic_load(&j->cancelled))
        pthread_cond_wait(&j->cv, &j->mu);
    /* A change of several records being logged: the batch ends after it (microseconds:
     * its thread appends them one after the other under its list's lock). And another
     * thread's batch being written: the waits above and here drop the mutex, so the io
     * role its caller saw free may have been taken meanwhile (the writer's, while the
     * compaction thread's tidy waited here: j->out swapped under its write, TSan). */
    while (j->holds || j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    buf t = j->out;
    j->out = j->pend;
    j->pend = t;
    buf_clear(&j->pend);
    j->pend_recs = 0;
    uint64_t target = j->pos, at = j->fsize;
    size_t n = j->out.len;
    int fd = j->fd, rc = 0, e = 0;
    const char *what = NULL;
    if (j->dead_gen == j->gen) {
        /* Records that came in after the failure, for the failed log: held. */
        if (target > j->held)
            j->held = target;
        buf_clear(&j->out);
        return -1;
    }
    if (j->ship.batch)
        return ship_locked(j, target, n, keep_lock);
    int need_sync = sync && j->synced < target;
    if (!n && !need_sync)
        return 0;
    j->io = 1;
    if (!keep_lock)
        pthread_mutex_unlock(&j->mu);
    /* One system call writes and syncs the batch when nothing before it waits for a
     * sync: the writer blocks in the kernel once per batch, not after a second call. */
    int together = n && need_sync && j->synced + n >= target;
    if (together && wal_pwrite_dsync(fd, j->out.data, n, at) != 0) {
        e = errno;
        what = "write and fdatasync";
        /* Cut what part of the batch got in, so that the log ends with a whole record. */
        if (ftruncate(fd, (off_t)at) != 0)
            log_error("journal: cannot cut a partial write: %s", strerror(errno));
    } else if (!together && n && wal_pwrite_all(fd, j->out.data, n, at) != 0) {
        e = errno;
        what = "write";
        /* Cut what part of the batch got in, so that the log ends with a whole record. */
        if (ftruncate(fd, (off_t)at) != 0)
            log_error("journal: cannot cut a partial write: %s", strerror(errno));
    } else if (!together && need_sync && wal_datasync(fd) != 0) {
        e = errno;
        what = "fdatasync";
    }
    if (!keep_lock)
        pthread_mutex_lock(&j->mu);
    j->io = 0;
    buf_clear(&j->out);
    if (what) {
        log_failed_locked(j, what, e);
        rc = -1;
    } else {
        j->fsize += n;
        if (target > j->written)
            j->written = target;
        if (sync && target > j->synced)
            j->synced = target;
        j->log_syncs += need_sync;
    }
    pthread_cond_broadcast(&j->cv);
    return rc;
}

int journal_sync_bg_locked(journal *j)
{
    while (j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    if (j->syncing || j->dead_gen == j->gen)
        return j->dead_gen == j->gen ? -1 : 0;
    if (j->pend.len && journal_flush_locked(j, 0, 1) != 0)
        return -1;
    if (j->synced >= j->written)
        return 0;
    uint64_t target = j->written;
    int fd = j->fd;
    j->syncing = 1;
    pthread_mutex_unlock(&j->mu);
    int rc = wal_datasync(fd), e = errno;
    pthread_mutex_lock(&j->mu);
    j->syncing = 0;
    if (rc == 0) {
        if (target > j->synced)
            j->synced = target;
        j->log_syncs++;
    } else {
        log_failed_locked(j, "fdatasync", e);
    }
    pthread_cond_broadcast(&j->cv);
    return rc;
}

int journal_sync_to_locked(journal *j, uint64_t lsn, uint32_t gen)
{
    for (;;) {
        if (j->dead_gen == gen)
            return -1;
        if (j->synced >= lsn)
            return 0;
        if (j->io || (j->writer_started && !j->writer_stop)) {
            if (j->writer_idle)
                pthread_cond_signal(&j->wake);
            pthread_cond_wait(&j->cv, &j->mu);
        } else {
            journal_flush_locked(j, 1, 0);
        }
    }
}

/* ---- waiting ------------------------------------------------------------------------------ */

/* everysec and no: writes the records up to lsn now (one write for all waiting) unless
 * another thread is; returns once lsn is durable, held, or the journal failed. The write
 * is made holding the mutex: it takes microseconds, and a thread that finds it busy then
 * waits on the mutex rather than sleeping on the condition. */
static void write_through_locked(journal *j, uint64_t lsn)
{
    while (!durable(j, lsn) && !(lsn > j->held_from && lsn <= j->held) && !j->cancelled) {
        if (j->io)
            pthread_cond_wait(&j->cv, &j->mu);
        else if (journal_flush_locked(j, 0, 1) != 0)
            break;
    }
}

int journal_poll(journal *j, uint64_t lsn)
{
    pthread_mutex_lock(&j->mu);
    if (j->policy != CONF_FSYNC_ALWAYS && !j->writer_started)
        write_through_locked(j, lsn);
    int rc = durable(j, lsn) ? 0 : j->cancelled || journal_voided(j, lsn) ? -1 : 1;
    journal_fire_locked(j);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Puts a waiter for lsn in the heap. Returns 0, or -1 on ENOMEM. Locked. */
static int wait_add(journal *j, uint64_t lsn, journal_done_fn fn, void *ctx)
{
    journal_waiter *w = malloc(sizeof *w);
    if (!w)
        return -1;
    *w = (journal_waiter){.lsn = lsn, .heap_at = HEAP_NONE, .fn = fn, .ctx = ctx};
    if (heap_push(&j->waits, w) != 0) {
        free(w);
        return -1;
    }
    return 0;
}

int journal_when_durable(journal *j, uint64_t lsn, journal_done_fn fn, void *ctx)
{
    int rc = 1;
    pthread_mutex_lock(&j->mu);
    if (j->policy != CONF_FSYNC_ALWAYS && !j->writer_started)
        write_through_locked(j, lsn);
    if (durable(j, lsn)) {
        rc = 0;
    } else if (j->cancelled || journal_voided(j, lsn)) {
        rc = -1;
    } else if (wait_add(j, lsn, fn, ctx) != 0) {
        rc = 2;                   /* no memory to wait without a thread: block instead */
    } else if (j->writer_idle) {
        pthread_cond_signal(&j->wake);
    }
    journal_fire_locked(j);
    pthread_mutex_unlock(&j->mu);
    return rc == 2 ? journal_wait(j, lsn) : rc;
}

int journal_wait(journal *j, uint64_t lsn)
{
    int rc = 0;
    pthread_mutex_lock(&j->mu);
    while (!durable(j, lsn)) {
        if (j->cancelled || journal_voided(j, lsn)) {
            rc = -1;
            break;
        }
        if (j->policy != CONF_FSYNC_ALWAYS && !j->writer_started) {
            write_through_locked(j, lsn);
            if (!durable(j, lsn) && !j->cancelled)
                pthread_cond_wait(&j->cv, &j->mu);     /* held: until the rewrite */
        } else if (lsn <= j->held && lsn > j->held_from) {
            pthread_cond_wait(&j->cv, &j->mu);
        } else if (j->writer_started && !j->writer_stop) {
            if (j->writer_idle)
                pthread_cond_signal(&j->wake);
            pthread_cond_wait(&j->cv, &j->mu);
        } else if (j->io) {
            pthread_cond_wait(&j->cv, &j->mu);
        } else {
            journal_flush_locked(j, 1, 0);
        }
    }
    journal_fire_locked(j);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Every wait not durable now fails, and so will every later one. */
void journal_cancel_waits_locked(journal *j)
{
    j->cancelled = 1;
    pthread_cond_broadcast(&j->cv);
    journal_fire_locked(j);       /* the durable ones first, with 0 */
    for (journal_waiter *w; (w = heap_pop(&j->waits));) {
        pthread_mutex_unlock(&j->mu);
        w->fn(w->ctx, -1);
        free(w);
        pthread_mutex_lock(&j->mu);
    }
}

void journal_cancel_waits(journal *j)
{
    pthread_mutex_lock(&j->mu);
    journal_cancel_waits_locked(j);
    pthread_mutex_unlock(&j->mu);
}

/* ---- the writer thread (fsync=always) ------------------------------------------------------- */

/* Sleeps us (the journal's mutex released) while more records come in: with back, only
 * until back records have come in on top of those pending now (a replica's gather, which
 * appends signal once they reach it); without, the whole time. A stop or a lost outcome
 * ends it. */
static void gather_locked(journal *j, unsigned us, size_t back)
{
    struct timespec t = clock_deadline_ns(us * 1000u);
    j->gather_until = back ? j->pend_recs + back : 0;
    while ((!back || j->pend_recs < j->gather_until) && !j->writer_stop &&
           !atomic_load(&j->cancelled))
        if (pthread_cond_timedwait(&j->wake, &j->mu, &t) != 0)
            break;
    j->gather_until = 0;
}

/* Takes every record waiting, writes them with one write and syncs them with one
 * fdatasync, calls their waiters back, and starts over with what came in meanwhile: the
 * busier the server, the bigger the batch; a lone change waits for one fdatasync. A
 * callback only marks an answer ready and wakes its HTTP thread once per batch
 * (http_loop.h), so the next sync is hardly delayed: a thread of its own for the
 * callbacks cost more wake-ups than it saved. */
static void *writer_main(void *arg)
{
    journal *j = arg;
    int gathered = 0;
    pthread_mutex_lock(&j->mu);
    for (;;) {
        /* Records to write, or records another thread wrote without syncing them (the
         * compaction thread's tidying): theirs are answers waiting too. */
        /* Pipelined batches committed since the last round, or lost: their waiters. */
        if (j->ship.batch && (j->synced > j->fired_at ||
                              (atomic_load(&j->cancelled) && heap_top(&j->waits)))) {
            j->fired_at = j->synced;
            journal_fire_locked(j);
            if (atomic_load(&j->cancelled))
                journal_cancel_waits_locked(j);
            continue;
        }
        /* Records to write (with a pipeline, synced trails pos while batches are on
         * their way: only new records count). */
        if (!j->io && (j->pend.len || (!j->ship.batch && j->synced < j->pos &&
                                       j->dead_gen != j->gen))) {
            /* A replica's pipeline is full: the next batch waits for room, then for the
             * answers of the batch committed (above), then gathers. */
            if (j->ship.batch && j->inflight >= j->ship.inflight &&
                !atomic_load(&j->cancelled) && !j->writer_stop) {
                pthread_cond_wait(&j->cv, &j->mu);
                continue;
            }
            /* The mutex was released while gathering: another thread may have taken
             * the log's io since, so the conditions are read again. */
            if (!gathered && j->last_batch >= GATHER_MIN_RECORDS && !j->writer_stop) {
                if (j->ship.batch)
                    gather_locked(j, GATHER_REPLICA_US, j->last_batch);
                else
                    gather_locked(j, GATHER_US, 0);
                gathered = 1;
                continue;
            }
            gathered = 0;
            j->last_batch = j->pend_recs;
            journal_flush_locked(j, 1, 0);
            journal_fire_locked(j);
            if (j->ship.batch && atomic_load(&j->cancelled))
                journal_cancel_waits_locked(j);   /* the cluster lost this batch's outcome */
            if (j->defs.nold)
                journal_reap_locked(j);   /* an INITFILE's superseded file, at once */
            continue;
        }
        if (j->writer_stop)
            break;
        if (j->io) {
            pthread_cond_wait(&j->cv, &j->mu);
        } else {
            j->writer_idle = 1;
            pthread_cond_wait(&j->wake, &j->mu);
            j->writer_idle = 0;
        }
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

int journal_writer_start(journal *j)
{
    if (thread_start(&j->writer_thread, "stsd-journal", writer_main, j) != 0)
        return -1;
    j->writer_started = 1;
    return 0;
}

void journal_writer_stop(journal *j)
{
    if (j->writer_started) {
        pthread_mutex_lock(&j->mu);
        j->writer_stop = 1;
        pthread_cond_signal(&j->wake);
        pthread_cond_broadcast(&j->cv);   /* a replica's writer waiting for room */
        pthread_mutex_unlock(&j->mu);
        pthread_join(j->writer_thread, NULL);
    }
    pthread_mutex_lock(&j->mu);
    j->writer_stop = 1;
    j->writer_started = 0;
    pthread_mutex_unlock(&j->mu);
}

/* ---- superseded snapshot files ---------------------------------------------------------------- */

void journal_reap_locked(journal *j)
{
    uint64_t ids[REAP_BATCH];
    size_t n;
    /* Only what is on disk counts here, whatever the policy: recovery must find the
     * record that supersedes a file before the file may go. */
    uint64_t upto = j->synced;
    if (j->held && upto > j->held_from)
        upto = j->held_from;
    while ((n = snapref_due(&j->defs, upto, ids, REAP_BATCH)) > 0) {
        for (size_t i = 0; i < n; i++)
            snapref_ids_del(&j->refs, ids[i]);
        pthread_mutex_unlock(&j->mu);
        for (size_t i = 0; i < n; i++) {
            char name[64];
            wal_snap_name(name, sizeof name, ids[i]);
            if (unlinkat(j->dirfd, name, 0) != 0 && errno != ENOENT)
                log_warn("journal: cannot remove %s/%s: %s", j->dir, name, strerror(errno));
        }
        pthread_mutex_lock(&j->mu);
    }
}

/* ---- files for a replica's cluster -------------------------------------------------------- */

int journal_ship_snapshot_file(journal *j, uint64_t id)
{
    char name[64];
    wal_snap_name(name, sizeof name, id);
    int fd = openat(j->dirfd, name, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        log_error("journal: cannot read %s/%s to replicate it: %s", j->dir, name,
                  strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = j->ship.file(j->ship_ctx, id, fd, (uint64_t)st.st_size);
    close(fd);
    return rc;
}
