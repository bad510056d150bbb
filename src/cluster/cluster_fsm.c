/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fsm.c - raft's state machine: each committed entry is a piece of the journal,
 * written into this node's state directory (or a compaction's step there, the nodes'
 * table, a piece of SAVE's file); a snapshot is the nodes' table and that directory's
 * image, as compact as the leader's last compaction left the directory.
 *
 * Apply is deterministic: what it writes depends on the entry alone. Whether the bytes
 * were counted by this node's journal already (it proposed them as leader) changes only
 * the journal's counters, not the files. A snapshot: magic, the table's length (4 bytes,
 * little-endian), the table (cluster_members.c), then the journal's image. */
#include <string.h>
#include <sys/random.h>

#include "cluster_entry.h"
#include "cluster_fsm.h"
#include "cluster_health.h"
#include "cluster_members.h"
#include "cluster_save.h"
#include "base/log.h"
#include "journal/journal.h"

#define SNAP_MAGIC "STSDCLU1"
#define SNAP_MAGIC_LEN 8

/* Wakes the hooks' thread for the deposed hook. */
static void want_deposed(cluster *c)
{
    pthread_mutex_lock(&c->mu);
    c->want_deposed = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

void cluster_fsm_demote(cluster *c)
{
    uint64_t nonce;
    c->promoting = c->was_leader = 0;
    /* Entries this process proposed until now count as another node's from here: the
     * journal forgets the records they carry (journal_demote), so that those the next
     * leader still commits are written and applied as anyone's. */
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce)
        nonce = c->nonce * 6364136223846793005ULL + 1442695040888963407ULL;
    c->nonce = nonce;
    uint64_t upto = journal_demote(c->j);
    if (upto > c->stale_upto)
        c->stale_upto = upto;
    if (!atomic_exchange(&c->deposed, 1)) {
        atomic_store(&c->serving, 0);
        want_deposed(c);
    }
}

void cluster_note_applied(cluster *c, uint64_t idx)
{
    if (idx <= atomic_load(&c->applied))
        return;
    atomic_store(&c->applied, idx);
    if (atomic_load(&c->applied_waiters)) {
        pthread_mutex_lock(&c->applied_mu);
        pthread_cond_broadcast(&c->applied_cv);
        pthread_mutex_unlock(&c->applied_mu);
    }
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *b, void **result)
{
    cluster *c = fsm->data;
    cluster_entry e;
    *result = NULL;
    if (cluster_entry_read(b->base, b->len, &e) != 0) {
        log_error("cluster: an entry of %zu bytes is malformed; ignored", b->len);
        return 0;
    }
    /* Proposed by this process in its leadership now: its records are counted by its
     * journal already. Another leader's entry while the journal counts this node's own:
     * this node stopped leading, before the tick said so. */
    int own = e.nonce == c->nonce;
    if (!own && journal_leading(c->j)) {
        log_warn("cluster: node %u applies another leader's entry: it no longer leads",
                 c->self);
        cluster_fsm_demote(c);
    }
    int rc = 0;
    switch (e.kind) {
    case JOURNAL_BATCH:
        rc = journal_mirror_batch(c->j, own, e.data, e.len);
        break;
    case JOURNAL_FILE:
        rc = journal_mirror_file(c->j, own, e.id, e.off, e.data, e.len);
        break;
    case JOURNAL_GEN:
        rc = e.id && e.id <= UINT32_MAX ? journal_mirror_gen(c->j, own, (uint32_t)e.id) : -1;
        break;
    case JOURNAL_TIDY:
        rc = e.id && e.id <= UINT32_MAX && e.len % 8 == 0 ?
             journal_mirror_tidy(c->j, own, (uint32_t)e.id, e.data, e.len) : -1;
        break;
    case CLUSTER_SAVE:
        /* Not the state machine's state: a failure is logged, and the node goes on. */
        if (!own)
            cluster_save_piece(c, e.off, e.last, e.data, e.len);
        break;
    case CLUSTER_NODES:
        if (cluster_members_apply(c, e.data, e.len) != 0)
            log_error("cluster: a table of nodes is malformed; ignored");
        break;
    case CLUSTER_HEALTH:
        /* Not the state machine's state either: what the leader saw, for display. */
        if (cluster_health_apply(c, e.data, e.len) != 0)
            log_error("cluster: a table of the nodes' health is malformed; ignored");
        break;
    default:
        log_error("cluster: an entry of unknown kind %d; ignored", e.kind);
    }
    if (rc != 0 && !atomic_exchange(&c->restart, 1)) {
        /* The directory no longer follows the log: start again from raft's copy. */
        atomic_store(&c->deposed, 1);
        atomic_store(&c->serving, 0);
        want_deposed(c);
    }
    /* Raft counts this entry as applied once we return, and only then calls its
     * request's callback (batch_done, which answers its changes): published here, the
     * index covers every change answered, and a waiting read on this node may go. */
    cluster_note_applied(c, raft_last_applied(&c->raft) + 1);
    return 0;
}

/* The table goes first: the journal's image is made straight into raft's memory, behind
 * room left for it. */
static buf snap_table;

static void *alloc_after_table(size_t n)
{
    uint8_t *p = raft_malloc(SNAP_MAGIC_LEN + 4 + snap_table.len + n);
    return p ? p + SNAP_MAGIC_LEN + 4 + snap_table.len : NULL;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n)
{
    cluster *c = fsm->data;
    void *img;
    size_t len;
    /* raft calls this on its loop's thread only: snap_table is that thread's. */
    buf_clear(&snap_table);
    cluster_members_encode(c, &snap_table);
    if (snap_table.oom)
        return RAFT_NOMEM;
    size_t head = SNAP_MAGIC_LEN + 4 + snap_table.len;
    int rc = journal_mirror_dump(c->j, alloc_after_table, &img, &len);
    uint8_t *base = img ? (uint8_t *)img - head : NULL;
    if (rc != 0) {
        raft_free(base);
        return RAFT_NOMEM;
    }
    memcpy(base, SNAP_MAGIC, SNAP_MAGIC_LEN);
    for (int i = 0; i < 4; i++)
        base[SNAP_MAGIC_LEN + i] = (uint8_t)(snap_table.len >> (8 * i));
    memcpy(base + SNAP_MAGIC_LEN + 4, snap_table.data, snap_table.len);
    *bufs = raft_malloc(sizeof **bufs);
    if (!*bufs) {
        raft_free(base);
        return RAFT_NOMEM;
    }
    (*bufs)[0].base = base;
    (*bufs)[0].len = head + len;
    *n = 1;
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *b)
{
    cluster *c = fsm->data;
    const uint8_t *p = b->base;
    if (b->len < SNAP_MAGIC_LEN + 4 || memcmp(p, SNAP_MAGIC, SNAP_MAGIC_LEN) != 0) {
        log_error("cluster: a snapshot that is not stsd's; refused");
        return RAFT_MALFORMED;
    }
    size_t tl = (size_t)p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 | (size_t)p[11] << 24;
    size_t head = SNAP_MAGIC_LEN + 4 + tl;
    if (tl > b->len - SNAP_MAGIC_LEN - 4 ||
        cluster_members_apply(c, p + SNAP_MAGIC_LEN + 4, tl) != 0 ||
        journal_mirror_restore(c->j, p + head, b->len - head) != 0)
        return RAFT_MALFORMED;
    /* Ours once it succeeded (raft 0.15 keeps it on failure). */
    raft_free(b->base);
    log_info("cluster: state directory restored from a snapshot of %zu bytes", b->len);
    return 0;
}

void cluster_fsm_close(void)
{
    buf_free(&snap_table);
}

void cluster_fsm_init(cluster *c)
{
    memset(&c->fsm, 0, sizeof c->fsm);
    c->fsm.version = 1;
    c->fsm.data = c;
    c->fsm.apply = fsm_apply;
    c->fsm.snapshot = fsm_snapshot;
    c->fsm.restore = fsm_restore;
}
