/* SPDX-License-Identifier: Apache-2.0 */
/* journal_open.c - opening a state directory (lock, --fresh, recovery, the log to append
 * to) and closing it (final fsync). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "journal_compact.h"
#include "journal_map.h"
#include "journal_standby.h"
#include "journal_writer.h"
#include "base/clock.h"
#include "base/log.h"
#include "recover.h"
#include "meet/keys.h"
#include "store/store.h"
#include "wal.h"

/* The log size that makes a compaction due, until journal_set_compact_threshold. */
#define DEFAULT_THRESHOLD (64ull << 20)

/* Lists named one by one in the log at start; beyond, only their number. */
#define LOG_LISTS_MAX 100

/* mkdir -p, mode 0700 for what it creates. Returns 0 or -1 with errno set. */
static int make_dirs(const char *dir)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(path, dir, len + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The journal's own files, for --fresh. */
typedef struct state_files {
    char (*v)[32];
    size_t n, cap;
} state_files;

static int pick_state(const char *name, int kind, uint64_t num, void *ctx)
{
    state_files *f = ctx;
    if (kind == 0)
        return 0;
    if (array_grow(&f->v, &f->cap, f->n, sizeof *f->v) != 0)
        return -1;
    snprintf(f->v[f->n++], 32, "%s", name);
    return 0;
}

/* --fresh: moves every journal file into a new old-<date>-<time> folder. */
static int set_aside(journal *j, int drop, buf *err)
{
    state_files f = {NULL, 0, 0};
    char sub[64];
    int rc = -1;
    if (wal_list(j->dirfd, pick_state, &f) != 0) {
        buf_printf(err, "cannot list %s: %s", j->dir, strerror(errno));
        goto cleanup;
    }
    if (f.n == 0 || drop) {
        for (size_t i = 0; i < f.n; i++)
            if (unlinkat(j->dirfd, f.v[i], 0) != 0 && errno != ENOENT) {
                buf_printf(err, "cannot remove %s/%s: %s", j->dir, f.v[i], strerror(errno));
                goto cleanup;
            }
        rc = 0;
        goto cleanup;
    }
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    size_t n = strftime(sub, sizeof sub, "old-%Y%m%d-%H%M%S", &tm);
    for (int k = 2; mkdirat(j->dirfd, sub, 0700) != 0; k++) {
        if (errno != EEXIST || k > 99) {
            buf_printf(err, "cannot create %s/%s: %s", j->dir, sub, strerror(errno));
            goto cleanup;
        }
        snprintf(sub + n, sizeof sub - n, "-%d", k);
    }
    for (size_t i = 0; i < f.n; i++) {
        char to[128];
        snprintf(to, sizeof to, "%s/%s", sub, f.v[i]);
        if (renameat(j->dirfd, f.v[i], j->dirfd, to) != 0) {
            buf_printf(err, "cannot move %s/%s aside: %s", j->dir, f.v[i], strerror(errno));
            goto cleanup;
        }
    }
    if (wal_fsync_dir(j->dirfd) != 0) {
        buf_printf(err, "fsync of %s: %s", j->dir, strerror(errno));
        goto cleanup;
    }
    log_info("journal: --fresh: the previous state (%zu files) was moved to %s/%s", f.n, j->dir,
             sub);
    rc = 0;
cleanup:
    free(f.v);
    return rc;
}

/* Cuts the torn tail off the log recovery stopped in. */
static int cut_tail(journal *j, const recover_state *rs, buf *err)
{
    char name[32];
    wal_log_name(name, sizeof name, rs->last_gen);
    if (rs->torn_why == wal_why_reserved)
        log_info("journal: %s/%s: cutting the %zu bytes reserved after the last record",
                 j->dir, name, rs->last_size - rs->last_end);
    else
        log_warn("journal: %s/%s: torn record at offset %zu (%s), the trace of an "
                 "interrupted write: cutting the last %zu bytes", j->dir, name,
                 rs->last_end, rs->torn_why, rs->last_size - rs->last_end);
    int fd = openat(j->dirfd, name, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)rs->last_end) != 0 || wal_fsync(fd) != 0) {
        buf_printf(err, "cannot cut %s/%s: %s", j->dir, name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Hands the recovered lists to the store; with quiet (a new leader taking the committed
 * state, no recovery from a crash), logs no line per list. */
static int adopt_all(journal *j, recover_state *rs, store *st, int quiet, buf *err)
{
    for (size_t i = 0; i < rs->nlists; i++) {
        size_t len = list_length(rs->lists[i]);
        store_rc rc = store_adopt(st, rs->names[i], rs->lists[i]);
        rs->lists[i] = NULL;       /* the store's now, even on error */
        if (rc != STORE_OK) {
            buf_printf(err, "cannot restore list %s: %s", rs->names[i],
                       rc == STORE_FULL ? "stsd.maxLists or stsd.maxBytes is too low for "
                       "the saved state" : "out of memory");
            return -1;
        }
        if (!quiet && i < LOG_LISTS_MAX)
            log_info("journal: recovered list %s: %zu lines", rs->names[i], len);
    }
    if (!quiet && rs->nlists > LOG_LISTS_MAX)
        log_info("journal: ... and %zu more lists", rs->nlists - LOG_LISTS_MAX);
    for (size_t i = 0; i < rs->nleases; i++) {
        const struct recover_lease *l = &rs->leases[i];
        if (store_lease_adopt(st, rs->names[l->list], l->id, l->until, l->owner,
                              l->owner_len, l->line, l->len) != STORE_OK) {
            buf_printf(err, "cannot restore a lease of list %s: out of memory",
                       rs->names[l->list]);
            return -1;
        }
    }
    if (rs->nleases && !quiet)
        log_info("journal: recovered %zu open leases (those past their deadline go back "
                 "to their lists now)", rs->nleases);
    for (size_t i = 0; i < rs->nkeys; i++) {
        const struct recover_key *k = &rs->keys[i];
        if (keys_adopt(st, k->name, k->value ? k->value : "", k->len, k->version) !=
                STORE_OK ||
            (k->expires && keys_expire_adopt(st, k->name, k->expires) != STORE_OK)) {
            buf_printf(err, "cannot restore key %s: out of memory", k->name);
            return -1;
        }
    }
    for (size_t i = 0; i < rs->nkey_leases; i++) {
        const struct recover_key_lease *l = &rs->key_leases[i];
        if (keys_lease_adopt(st, rs->keys[l->key].name, l->id, l->until, l->by) ==
            STORE_NOMEM) {
            buf_printf(err, "cannot restore a lease of key %s: out of memory",
                       rs->keys[l->key].name);
            return -1;
        }
    }
    for (size_t i = 0; i < rs->nruns; i++)
        if (keys_run_adopt_ttl(st, rs->runs[i].name, rs->runs[i].id, rs->runs[i].until,
                                    rs->runs[i].ttl_ms) == STORE_NOMEM) {
            buf_printf(err, "cannot restore the run of %s: out of memory", rs->runs[i].name);
            return -1;
        }
    if (rs->nruns && !quiet)
        log_info("journal: recovered %zu runs in progress (ONCE)", rs->nruns);
    if (rs->nkeys && !quiet)
        log_info("journal: recovered %zu keys and %zu counter leases (those past their "
                 "deadline are undone now)", rs->nkeys, rs->nkey_leases);
    return 0;
}

static journal *journal_alloc(const char *dir, conf_fsync policy)
{
    journal *j = calloc(1, sizeof *j);
    pthread_mutexattr_t ma;
    if (!j)
        return NULL;
    j->fd = j->dirfd = j->lockfd = -1;
    j->policy = policy;
    j->threshold = DEFAULT_THRESHOLD;
    j->prealloc = 1;
    heap_init(&j->waits, offsetof(journal_waiter, lsn), offsetof(journal_waiter, heap_at));
    atomic_init(&j->broken, 0);
    atomic_init(&j->refused, 0);
    atomic_init(&j->errors, 0);
    /* Held for microseconds at a time (a record's copy, a write to the kernel): spin a
     * little before sleeping. */
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    if (!(j->dir = strdup(dir)) || pthread_mutex_init(&j->mu, &ma) != 0 ||
        pthread_mutex_init(&j->compact_mu, NULL) != 0 || clock_cond_init(&j->cv) != 0 ||
        clock_cond_init(&j->wake) != 0 || clock_cond_init(&j->tick) != 0) {
        free(j->dir);
        free(j);
        j = NULL;
    }
    pthread_mutexattr_destroy(&ma);
    return j;
}

journal *journal_open_replica(const char *dir, store *st, buf *err)
{
    journal *j = journal_open(dir, CONF_FSYNC_ALWAYS, st, 2, err);
    /* The directory was emptied: the standby starts from nothing, as raft's copy does. */
    if (j)
        j->standby = journal_standby_new(j->dirfd, j->dir, j->pos);
    return j;
}

/* The state to lead with: the standby's, from memory, or else the directory's. Returns 0,
 * or -1 with the reason in err; sets *from_memory. */
static int load_to_lead(journal *j, uint32_t gen, uint64_t fsize, uint64_t pos,
                        recover_state *rs, int *from_memory, buf *err)
{
    buf msg = BUF_INIT;
    int rc = -1;
    *from_memory = 0;
    if (j->standby) {
        if (journal_standby_take(j->standby, pos, rs, &msg) == 0) {
            *from_memory = 1;
            buf_free(&msg);
            return 0;
        }
        log_warn("journal: the standby cannot be taken (%s): reading %s",
                 msg.data ? msg.data : "out of memory", j->dir);
        buf_clear(&msg);
    }
    if (recover_run(j->dirfd, rs, NULL, &msg) != 0) {
        buf_printf(err, "journal in %s: %s", j->dir, msg.data ? msg.data : "out of memory");
        goto done;
    }
    /* The directory was written by this process alone since its start: its newest log
     * is the one open, whole; or the open log is a compaction's new generation that no
     * record reached (its leader deposed right after JOURNAL_GEN), which recovery leaves
     * out, ending in the whole log before it. */
    int empty_open = fsize == WAL_HEADER_SIZE && rs->last_gen < gen;
    if (!empty_open && (rs->last_gen != gen || rs->last_end != fsize)) {
        buf_printf(err, "journal in %s: the log open (generation %u, %llu bytes) is not the "
                   "one recovery ends in (generation %u, %zu bytes)", j->dir, gen,
                   (unsigned long long)fsize, rs->last_gen, rs->last_end);
        goto done;
    }
    rc = 0;
done:
    buf_free(&msg);
    return rc;
}

int journal_reload(journal *j, store *st, buf *err)
{
    recover_state rs;
    int rc = -1, from_memory = 0;
    uint64_t t0 = clock_now_ns();
    memset(&rs, 0, sizeof rs);
    /* Nothing writes into the directory now: the cluster applied every entry before
     * promoting, and no change is taken before this returns. The lock is not held while
     * the store adopts the lists (the order is list, then journal). */
    pthread_mutex_lock(&j->mu);
    while (j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    uint32_t gen = j->gen, demotions = j->demotions;
    uint64_t fsize = j->fsize, pos = j->pos;
    /* Leading from here: the lease timer may end an adopted lease at once, and its
     * record is this leadership's. */
    j->leading = 1;
    pthread_mutex_unlock(&j->mu);
    if (load_to_lead(j, gen, fsize, pos, &rs, &from_memory, err) != 0 ||
        adopt_all(j, &rs, st, 1, err) != 0)
        goto done;
    pthread_mutex_lock(&j->mu);
    if (j->demotions != demotions) {
        pthread_mutex_unlock(&j->mu);
        buf_puts(err, "this node stopped leading while it loaded the state");
        goto done;
    }
    for (size_t i = 0; i < rs.nlists; i++) {
        uint64_t prev;
        snapref_set(&j->defs, rs.names[i], rs.def_ids[i], &prev);
    }
    /* Snapshot numbers and generations already used are not used again. */
    if (rs.last_gen == j->gen && rs.last_snap_n > j->snap_n)
        j->snap_n = rs.last_snap_n;
    if (rs.max_gen > j->max_gen)
        j->max_gen = rs.max_gen;
    if (j->gen > j->max_gen)
        j->max_gen = j->gen;
    j->snapset = rs.snap_bytes;
    pthread_mutex_unlock(&j->mu);
    log_info("journal: the committed state taken %s in %.1f ms: %zu lists, %zu keys, "
             "%zu leases open", from_memory ? "from memory (the standby)" :
             "from the state directory", (double)(clock_now_ns() - t0) / 1e6, rs.nlists,
             rs.nkeys, rs.nleases);
    rc = 0;
done:
    recover_free(&rs);
    return rc;
}

journal *journal_open(const char *dir, conf_fsync policy, store *st, int fresh, buf *err)
{
    recover_state rs;
    buf msg = BUF_INIT;
    char name[32];
    journal *j = journal_alloc(dir, policy);
    memset(&rs, 0, sizeof rs);
    if (!j) {
        buf_puts(err, "out of memory");
        return NULL;
    }
    if (make_dirs(dir) != 0 ||
        (j->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        buf_printf(err, "state directory %s: %s", dir, strerror(errno));
        goto fail;
    }
    j->lockfd = openat(j->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (j->lockfd < 0 || flock(j->lockfd, LOCK_EX | LOCK_NB) != 0) {
        buf_printf(err, "state directory %s: %s", dir, errno == EWOULDBLOCK ?
                   "in use by another stsd" : strerror(errno));
        goto fail;
    }
    if (fresh && set_aside(j, fresh == 2, err) != 0)
        goto fail;
    if (recover_run(j->dirfd, &rs, NULL, &msg) != 0) {
        buf_printf(err, "journal in %s: %s. Nothing was changed. See `stsd --check-journal "
                   "%s` (with --repair it cuts the history at the damage, keeping copies), "
                   "or start empty with --fresh (the old state is moved aside, not deleted)",
                   dir, msg.data ? msg.data : "out of memory", dir);
        goto fail;
    }
    if (rs.last_gen && rs.last_size > rs.last_end && cut_tail(j, &rs, err) != 0)
        goto fail;
    if (adopt_all(j, &rs, st, 0, err) != 0)
        goto fail;
    for (size_t i = 0; i < rs.nlists; i++) {
        uint64_t prev;
        snapref_set(&j->defs, rs.names[i], rs.def_ids[i], &prev);
    }
    recover_tidy(j->dirfd, &rs);
    if (rs.last_gen) {
        wal_log_name(name, sizeof name, rs.last_gen);
        j->fd = openat(j->dirfd, name, O_RDWR | O_CLOEXEC);
        j->gen = rs.last_gen;
        j->size = rs.last_end;
        j->snap_n = rs.last_snap_n;
        if (j->fd < 0) {
            buf_printf(err, "%s/%s: %s", dir, name, strerror(errno));
            goto fail;
        }
    } else {
        j->gen = rs.max_gen + 1;
        wal_log_name(name, sizeof name, j->gen);
        if ((j->fd = journal_create_log(j, j->gen, 1, &j->size)) < 0) {
            buf_printf(err, "cannot create %s/%s: %s", dir, name, strerror(errno));
            goto fail;
        }
    }
    j->max_gen = rs.max_gen > j->gen ? rs.max_gen : j->gen;
    j->snapset = rs.snap_bytes;
    j->fsize = j->alloc = j->size;
    journal_map_open_locked(j);
    if (policy == CONF_FSYNC_ALWAYS && journal_writer_start(j) != 0) {
        buf_puts(err, "cannot start the journal's writer thread");
        goto fail;
    }
    log_info("journal: %s/%s, fsync %s, %zu lists recovered", dir, name,
             policy == CONF_FSYNC_ALWAYS ? "always" : policy == CONF_FSYNC_EVERYSEC ?
             "everysec" : "no", rs.nlists);
    recover_free(&rs);
    buf_free(&msg);
    return j;
fail:
    recover_free(&rs);
    buf_free(&msg);
    journal_close(j);
    return NULL;
}

void journal_close(journal *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_cond_broadcast(&j->tick);
    pthread_mutex_unlock(&j->mu);
    if (j->sync_started)
        pthread_join(j->sync_thread, NULL);
    if (j->compact_started)
        pthread_join(j->compact_thread, NULL);
    journal_writer_stop(j);
    journal_standby_free(j->standby);
    j->standby = NULL;
    /* Still refusing changes: the log may disagree with what was answered. One last
     * rewrite from memory, so that the next start finds what clients were told. */
    if (j->st && j->fd >= 0 && atomic_load(&j->broken) && !j->ship.batch) {
        pthread_mutex_lock(&j->mu);
        j->stop = 0;               /* the threads are gone; let this compaction finish */
        pthread_mutex_unlock(&j->mu);
        if (journal_compact(j, j->st) != 0)
            log_error("journal: stopping with a log that could not be rewritten: the "
                      "changes refused or half-applied since the write error are not in it");
    }
    journal_cancel_waits(j);
    if (j->fd >= 0) {
        pthread_mutex_lock(&j->mu);
        while (j->io || j->syncing)
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->dead_gen == j->gen)
            log_error("journal: %s/journal.%010u.log failed earlier and was not rewritten",
                      j->dir, j->gen);
        else if (journal_flush_locked(j, 0, 1) != 0 || wal_fsync(j->fd) != 0)
            log_error("journal: final fsync of %s/journal.%010u.log failed: %s", j->dir, j->gen,
                      strerror(errno));
        else {
            j->synced = j->pos;
            log_info("journal: %s/journal.%010u.log flushed and synced", j->dir, j->gen);
        }
        journal_reap_locked(j);
        journal_map_close_locked(j);
        pthread_mutex_unlock(&j->mu);
        close(j->fd);
    }
    if (j->dirfd >= 0)
        close(j->dirfd);
    if (j->lockfd >= 0)
        close(j->lockfd);
    buf_free(&j->pend);
    buf_free(&j->out);
    heap_free(&j->waits);
    free(j->pending.v);
    free(j->refs.v);
    snapref_free(&j->defs);
    free(j->dir);
    pthread_mutex_destroy(&j->mu);
    pthread_mutex_destroy(&j->compact_mu);
    pthread_cond_destroy(&j->cv);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->tick);
    free(j);
}
