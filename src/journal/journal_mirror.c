/* SPDX-License-Identifier: Apache-2.0 */
/* journal_mirror.c - the journal of a replica: batches shipped to the cluster before they
 * count, committed pieces written into the state directory (a compaction's new log and
 * its tidying among them), its files as one image for raft's snapshots and back.
 *
 * Every node's state directory holds the committed history and nothing else: the leader's
 * batches are written there by the cluster's thread once committed, like everyone's, and
 * a start removes the files and lets raft write them again (its snapshot, then its log).
 * The image is the files one after the other: magic, then per file its name's length
 * (u16), name, length (u64) and bytes, little-endian. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal_compact.h"
#include "journal_standby.h"
#include "journal_writer.h"
#include "base/clock.h"
#include "base/log.h"
#include "wal.h"

#define IMAGE_MAGIC "STSDIMG1"
#define NAME_MAX_LEN 64
/* A file of the image read at a time. */
#define CHUNK (1u << 20)

static uint8_t *put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        *p++ = (uint8_t)(v >> (8 * i));
    return p;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void journal_set_ship(journal *j, const journal_ship_hooks *h, void *ctx)
{
    static const journal_ship_hooks alone;
    pthread_mutex_lock(&j->mu);
    j->ship = h ? *h : alone;
    if (j->ship.inflight < 1)
        j->ship.inflight = 1;
    j->ship_ctx = ctx;
    if (h)
        j->prealloc = 0;          /* the file grows by committed pieces only */
    pthread_mutex_unlock(&j->mu);
}

void journal_shipped(journal *j, uint64_t upto, int rc)
{
    pthread_mutex_lock(&j->mu);
    if (j->demotions && upto <= atomic_load(&j->void_hi)) {
        /* A batch of a leadership that ended: journal_demote counted it out. */
        pthread_mutex_unlock(&j->mu);
        return;
    }
    j->inflight--;
    /* A batch lost makes every later one's outcome unknown too, even if raft commits an
     * earlier one after saying so: nothing more is answered (the node is deposed). */
    if (rc != 0 && !atomic_exchange(&j->cancelled, 1)) {
        atomic_store(&j->broken, 1);
        j->dead_gen = j->gen;
    } else if (rc == 0 && !atomic_load(&j->cancelled)) {
        if (upto > j->synced)
            j->synced = upto;
    }
    /* The writer calls the waiters back, off the cluster's thread. */
    pthread_cond_broadcast(&j->cv);
    if (j->writer_idle)
        pthread_cond_signal(&j->wake);
    pthread_mutex_unlock(&j->mu);
}

int journal_replicated(const journal *j)
{
    return j && j->ship.batch != NULL;
}

int journal_leading(journal *j)
{
    pthread_mutex_lock(&j->mu);
    int leading = j->leading;
    pthread_mutex_unlock(&j->mu);
    return leading;
}

uint64_t journal_demote(journal *j)
{
    pthread_mutex_lock(&j->mu);
    if (!j->leading) {
        pthread_mutex_unlock(&j->mu);
        return 0;
    }
    j->leading = 0;
    j->demotions++;
    /* What the cluster has not committed is void, before any wait is told so: a request
     * polling its answer must never find it durable once this node's lsns, following
     * the new leader, move past it. */
    atomic_store(&j->void_lo, j->synced);
    atomic_store(&j->void_hi, j->pos);
    journal_cancel_waits_locked(j);
    /* The directory holds the committed history (the cluster writes it, the leader's
     * batches too): the journal's counts become its, as a follower's. A batch the writer
     * is shipping now is dropped when it comes back (ship_locked, journal_shipped). */
    buf_clear(&j->pend);
    j->pend_recs = 0;
    j->size = j->fsize;
    j->written = j->synced = j->pos;
    j->fired_at = j->synced;
    j->inflight = 0;
    j->compact_due = 0;
    /* Which file defines each list, and the files superseded, were this leadership's,
     * uncommitted changes included: a superseded file must not be removed on their
     * word. The next promotion sets them from the state it takes. */
    snapref_free(&j->defs);
    j->pending.n = 0;
    /* A failed ship marks the generation dead and holds what came after it (as a lone
     * journal's failed write does, until a compaction rewrites it): here those records
     * are void instead, and the generation lives on as the cluster's. */
    atomic_store(&j->broken, 0);
    j->dead_gen = 0;
    j->held_from = j->held = 0;
    atomic_store(&j->cancelled, 0);
    uint64_t pos = j->pos;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    uint64_t lo = atomic_load(&j->void_lo);
    log_info("journal: this node follows again; %llu bytes of records it had not got "
             "committed are dropped (lsns %llu to %llu)", (unsigned long long)(pos - lo),
             (unsigned long long)lo, (unsigned long long)pos);
    if (j->standby)
        journal_standby_build(j->standby, pos);
    return pos;
}

/* Whether a piece is another leader's on a node that led: then this node was deposed,
 * and its own records (answered once their lsn is durable) share the lsn space that the
 * piece would move on. Nothing more is answered or written (waiters in place ask again
 * and get -1); the node restarts from raft's copy. Locked. */
static int deposed_locked(journal *j, int own)
{
    if (own || !j->leading)
        return 0;
    if (!atomic_exchange(&j->cancelled, 1))
        log_warn("journal: another leader's changes arrive: this node no longer leads; "
                 "nothing it had not got committed is answered");
    atomic_store(&j->broken, 1);
    j->dead_gen = j->gen;
    pthread_cond_broadcast(&j->cv);
    journal_fire_locked(j);
    return 1;
}

int journal_mirror_batch(journal *j, int own, const void *data, size_t len)
{
    int rc = 0;
    int standby = 0;            /* hot standby: the batch goes to it too (below) */
    uint64_t end = 0;
    uint32_t gen = 0;
    pthread_mutex_lock(&j->mu);
    if (deposed_locked(j, own)) {
        rc = -1;
    } else if (wal_pwrite_all(j->fd, data, len, j->fsize) != 0) {
        log_error("journal: cannot write a committed batch into %s/journal.%010u.log: %s",
                  j->dir, j->gen, strerror(errno));
        rc = -1;
    } else {
        j->fsize += len;
        /* The leader's compaction thread watches the directory's log (journal_start). */
        if (own && !j->compact_due && journal_outgrown_locked(j)) {
            j->compact_due = 1;
            pthread_cond_broadcast(&j->tick);
        }
        if (!own) {
            /* A follower's records: counted here, as appended and durable at once. */
            j->size += len;
            j->pos += len;
            j->written = j->synced = j->pos;
            standby = j->standby != NULL;
            end = j->pos;
            gen = j->gen;
        }
    }
    pthread_mutex_unlock(&j->mu);
    /* In log order, since only raft's thread calls this; out of the journal's lock. */
    if (standby)
        journal_standby_push(j->standby, data, len, end, gen);
    return rc;
}

int journal_mirror_file(journal *j, int own, uint64_t id, uint64_t off, const void *data,
                        size_t len)
{
    char name[64];
    if (own)
        return 0;                 /* the leader wrote it before shipping it */
    pthread_mutex_lock(&j->mu);
    int deposed = deposed_locked(j, own);
    pthread_mutex_unlock(&j->mu);
    if (deposed)
        return -1;
    wal_snap_name(name, sizeof name, id);
    /* From its first piece: a file of this name this node wrote as a leader whose change
     * was never committed is replaced, not overwritten in part. */
    int fd = openat(j->dirfd, name, O_WRONLY | O_CREAT | O_CLOEXEC | (off == 0 ? O_TRUNC : 0),
                    0600);
    if (fd < 0 || wal_pwrite_all(fd, data, len, off) != 0) {
        log_error("journal: cannot write %s/%s: %s", j->dir, name, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    pthread_mutex_lock(&j->mu);
    if ((uint32_t)(id >> 32) == j->gen && (uint32_t)id > j->snap_n)
        j->snap_n = (uint32_t)id;
    pthread_mutex_unlock(&j->mu);
    return 0;
}

int journal_mirror_gen(journal *j, int own, uint32_t gen)
{
    uint64_t hsize, moved = 0;
    int rc = -1;
    pthread_mutex_lock(&j->mu);
    if (deposed_locked(j, own))
        goto done;
    if (gen <= j->max_gen) {
        log_error("journal: the cluster starts log generation %u, but %s already has %u",
                  gen, j->dir, j->max_gen);
        goto done;
    }
    /* Under the mutex: the file is the mirror's alone, and the fsyncs are once per
     * compaction. */
    int fd = journal_create_log(j, gen, 0, &hsize);
    if (fd < 0)
        goto done;
    close(j->fd);
    j->fd = fd;
    j->gen = j->max_gen = gen;
    j->size = j->fsize = j->alloc = hsize;
    if (!own) {
        j->pos += hsize;
        j->written = j->synced = j->pos;
        moved = j->pos;         /* hot standby: its lsn moves with the header (below) */
    }
    /* The leader's snapshot numbers and references start again with the generation, as
     * they do in a lone compaction's switch. */
    j->snap_n = 0;
    j->refs.n = 0;
    j->refs_lost = 0;
    log_info("journal: log generation %u started by the cluster's compaction", gen);
    rc = 0;
done:
    pthread_mutex_unlock(&j->mu);
    if (moved && j->standby)
        journal_standby_push(j->standby, NULL, 0, moved, gen);
    return rc;
}

/* The files a tidying removes: older logs, older generations' unneeded snapshot files. */
typedef struct tidy_list {
    uint32_t gen;
    const uint8_t *keep;
    size_t nkeep;
    char (*v)[NAME_MAX_LEN];
    size_t n, cap;
} tidy_list;

static int keep_has(const tidy_list *t, uint64_t id)
{
    for (size_t i = 0; i < t->nkeep; i++)
        if (get_u64(t->keep + 8 * i) == id)
            return 1;
    return 0;
}

static int pick_tidy(const char *name, int kind, uint64_t num, void *ctx)
{
    tidy_list *t = ctx;
    /* Snapshot files of gen and later are named by records the compaction did not
     * replace (an INITFILE's, the compaction's own): they stay. */
    int old = (kind == 1 && num < t->gen) ||
              (kind == 2 && (uint32_t)(num >> 32) < t->gen && !keep_has(t, num));
    if (!old || strlen(name) >= NAME_MAX_LEN)
        return 0;
    if (array_grow(&t->v, &t->cap, t->n, sizeof *t->v) != 0)
        return -1;
    snprintf(t->v[t->n++], NAME_MAX_LEN, "%s", name);
    return 0;
}

int journal_mirror_tidy(journal *j, int own, uint32_t gen, const void *keep, size_t len)
{
    tidy_list t = {gen, keep, len / 8, NULL, 0, 0};
    size_t gone = 0;
    int rc = 0;
    /* Hot standby: the batches it still has to apply may load files removed here. */
    if (j->standby)
        journal_standby_wait(j->standby);
    pthread_mutex_lock(&j->mu);
    if (deposed_locked(j, own)) {
        rc = -1;
        goto done;
    }
    if (gen != j->gen) {
        /* Not the log the compaction made: a later one started meanwhile. Its own
         * tidying comes after it; nothing is removed on a guess. */
        log_warn("journal: tidying for generation %u while %u is open: skipped", gen, j->gen);
        goto done;
    }
    if (wal_list(j->dirfd, pick_tidy, &t) != 0) {
        log_warn("journal: cannot list %s to remove old files: %s", j->dir, strerror(errno));
        goto done;
    }
    for (size_t i = 0; i < t.n; i++) {
        if (unlinkat(j->dirfd, t.v[i], 0) == 0)
            gone++;
        else if (errno != ENOENT)
            log_warn("journal: cannot remove %s/%s: %s", j->dir, t.v[i], strerror(errno));
    }
    log_info("journal: compaction into generation %u done: %zu older files removed", gen,
             gone);
done:
    pthread_mutex_unlock(&j->mu);
    free(t.v);
    return rc;
}

int journal_fence(journal *j, uint64_t *lsn)
{
    int rc = 0;
    pthread_mutex_lock(&j->mu);
    if (atomic_load(&j->broken) || j->cancelled || (j->ship.batch && !j->leading)) {
        rc = -1;
    } else if (j->pend.len) {
        *lsn = j->pos;            /* records not shipped yet: their commit comes later */
    } else {
        journal_rec_start(j);
        if (wal_enc_noop(&j->pend) != 0 || journal_append_locked(j, 1, lsn) != 0)
            rc = -1;
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int journal_quiesce(journal *j, int ms)
{
    struct timespec t = clock_deadline_ns((uint64_t)ms * 1000000u);
    int rc = 0;
    pthread_mutex_lock(&j->mu);
    while ((j->pend.len || j->io || j->synced < j->pos) && !j->cancelled)
        if (pthread_cond_timedwait(&j->cv, &j->mu, &t) != 0) {
            rc = -1;
            break;
        }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* ---- the image ------------------------------------------------------------------------ */

typedef struct image_file {
    char name[NAME_MAX_LEN];
    uint64_t len;
} image_file;

typedef struct image_list {
    image_file *v;
    size_t n, cap;
    journal *j;
} image_list;

static int pick_file(const char *name, int kind, uint64_t num, void *ctx)
{
    image_list *l = ctx;
    struct stat st;
    if (kind != 1 && kind != 2)
        return 0;
    if (strlen(name) >= NAME_MAX_LEN || fstatat(l->j->dirfd, name, &st, 0) != 0)
        return -1;
    if (array_grow(&l->v, &l->cap, l->n, sizeof *l->v) != 0)
        return -1;
    image_file *f = &l->v[l->n++];
    snprintf(f->name, sizeof f->name, "%s", name);
    /* The open log: only what the cluster wrote (the file may have reserved space). */
    f->len = kind == 1 && num == l->j->gen ? l->j->fsize : (uint64_t)st.st_size;
    return 0;
}

static int read_at(int dirfd, const char *name, uint8_t *to, uint64_t len)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t got = 0;
    while (got < len) {
        size_t want = len - got > CHUNK ? CHUNK : (size_t)(len - got);
        ssize_t r = pread(fd, to + got, want, (off_t)got);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            close(fd);
            errno = r == 0 ? EIO : errno;
            return -1;
        }
        got += (uint64_t)r;
    }
    close(fd);
    return 0;
}

int journal_mirror_dump(journal *j, void *(*alloc)(size_t), void **out, size_t *len)
{
    image_list l = {NULL, 0, 0, j};
    int rc = -1;
    *out = NULL;
    *len = 0;
    pthread_mutex_lock(&j->mu);
    if (wal_list(j->dirfd, pick_file, &l) != 0) {
        log_error("journal: cannot list %s for a snapshot: %s", j->dir, strerror(errno));
        goto done;
    }
    size_t total = sizeof IMAGE_MAGIC - 1;
    for (size_t i = 0; i < l.n; i++)
        total += 2 + strlen(l.v[i].name) + 8 + l.v[i].len;
    uint8_t *img = alloc(total), *p = img;
    if (!img) {
        log_error("journal: no memory for a snapshot of %zu bytes", total);
        goto done;
    }
    memcpy(p, IMAGE_MAGIC, sizeof IMAGE_MAGIC - 1);
    p += sizeof IMAGE_MAGIC - 1;
    for (size_t i = 0; i < l.n; i++) {
        size_t nl = strlen(l.v[i].name);
        *p++ = (uint8_t)nl;
        *p++ = (uint8_t)(nl >> 8);
        memcpy(p, l.v[i].name, nl);
        p = put_u64(p + nl, l.v[i].len);
        if (read_at(j->dirfd, l.v[i].name, p, l.v[i].len) != 0) {
            log_error("journal: cannot read %s/%s for a snapshot: %s", j->dir, l.v[i].name,
                      strerror(errno));
            *out = img;           /* the caller frees it with its allocator's free */
            goto done;
        }
        p += l.v[i].len;
    }
    *out = img;
    *len = total;
    rc = 0;
done:
    pthread_mutex_unlock(&j->mu);
    free(l.v);
    return rc;
}

static int drop_file(const char *name, int kind, uint64_t num, void *ctx)
{
    journal *j = ctx;
    if (kind == 0)
        return 0;
    return unlinkat(j->dirfd, name, 0) != 0 && errno != ENOENT ? -1 : 0;
}

int journal_mirror_restore(journal *j, const void *img, size_t len)
{
    const uint8_t *p = img, *end = p + len;
    size_t ml = sizeof IMAGE_MAGIC - 1;
    int rc = -1;
    uint32_t newest = 0;
    uint64_t newest_len = 0;
    pthread_mutex_lock(&j->mu);
    while (j->io)
        pthread_cond_wait(&j->cv, &j->mu);
    if (len < ml || memcmp(p, IMAGE_MAGIC, ml) != 0) {
        log_error("journal: a snapshot from the cluster is not an image of a state directory");
        goto done;
    }
    if (wal_list(j->dirfd, drop_file, j) != 0) {
        log_error("journal: cannot empty %s for a snapshot: %s", j->dir, strerror(errno));
        goto done;
    }
    for (p += ml; p < end;) {
        char name[NAME_MAX_LEN];
        uint64_t num;
        if (end - p < 2)
            goto bad;
        size_t nl = (size_t)p[0] | (size_t)p[1] << 8;
        p += 2;
        if (nl == 0 || nl >= sizeof name || (size_t)(end - p) < nl + 8)
            goto bad;
        memcpy(name, p, nl);
        name[nl] = '\0';
        uint64_t fl = get_u64(p + nl);
        p += nl + 8;
        int kind = wal_parse_name(name, &num);
        if ((kind != 1 && kind != 2) || (uint64_t)(end - p) < fl)
            goto bad;
        int fd = openat(j->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || wal_pwrite_all(fd, p, (size_t)fl, 0) != 0) {
            log_error("journal: cannot write %s/%s from a snapshot: %s", j->dir, name,
                      strerror(errno));
            if (fd >= 0)
                close(fd);
            goto done;
        }
        close(fd);
        if (kind == 1 && num >= newest) {
            newest = (uint32_t)num;
            newest_len = fl;
        }
        p += fl;
    }
    if (!newest) {
        log_error("journal: a snapshot from the cluster holds no log");
        goto done;
    }
    char lname[32];
    wal_log_name(lname, sizeof lname, newest);
    int fd = openat(j->dirfd, lname, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        log_error("journal: %s/%s: %s", j->dir, lname, strerror(errno));
        goto done;
    }
    if (j->fd >= 0)
        close(j->fd);
    j->fd = fd;
    j->gen = newest;
    if (newest > j->max_gen)
        j->max_gen = newest;
    j->size = j->fsize = j->alloc = newest_len;
    /* lsns only grow: the restored bytes count as appended and durable. */
    j->pos += newest_len;
    j->written = j->synced = j->pos;
    rc = 0;
    goto done;
bad:
    log_error("journal: a snapshot from the cluster is cut or damaged");
done:;
    uint64_t pos = j->pos;
    pthread_mutex_unlock(&j->mu);
    /* Hot standby: the state in memory is the restored directory's (a failure is logged
     * and only costs the next promotion a read of the directory). */
    if (j->standby)
        journal_standby_build(j->standby, pos);
    return rc;
}
