/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_fsm.c - raft's state machine: each committed entry is a piece of the journal,
 * written into this node's state directory; snapshots are that directory's image.
 *
 * Apply is deterministic: what it writes depends on the entry alone. Whether the bytes
 * were counted by this node's journal already (it proposed them as leader) changes only
 * the journal's counters, not the files. An entry's head (32 bytes, little-endian): kind
 * and last (a byte each), two zero bytes, the data's length (4 bytes), the proposing
 * process's nonce, a file's id and offset (8 bytes each); then the data, padded with
 * zeros to a multiple of 8 bytes: raft 0.15's disk format pads entries so, and an
 * entry of another length comes back from disk misplaced after a restart. */
#include <string.h>

#include "cluster_fsm.h"
#include "cluster_save.h"
#include "base/log.h"

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void cluster_entry_head(uint8_t *h, int kind, uint64_t nonce, uint64_t id,
                        uint64_t off, int last, uint32_t len)
{
    memset(h, 0, CLUSTER_ENTRY_HEAD);
    h[0] = (uint8_t)kind;
    h[1] = (uint8_t)(last != 0);
    for (int i = 0; i < 4; i++)
        h[4 + i] = (uint8_t)(len >> (8 * i));
    put64(h + 8, nonce);
    put64(h + 16, id);
    put64(h + 24, off);
}

size_t cluster_entry_size(size_t len)
{
    return (CLUSTER_ENTRY_HEAD + len + 7) & ~(size_t)7;
}

static int fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *b, void **result)
{
    cluster *c = fsm->data;
    const uint8_t *p = b->base;
    *result = NULL;
    if (b->len < CLUSTER_ENTRY_HEAD) {
        log_error("cluster: an entry of %zu bytes is too short; ignored", b->len);
        return 0;
    }
    size_t len = (size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 | (size_t)p[7] << 24;
    if (cluster_entry_size(len) != b->len) {
        log_error("cluster: an entry of %zu bytes says it holds %zu; ignored", b->len, len);
        return 0;
    }
    int own = get64(p + 8) == c->nonce && atomic_load(&c->serving);
    const uint8_t *data = p + CLUSTER_ENTRY_HEAD;
    int rc = 0;
    switch (p[0]) {
    case JOURNAL_BATCH:
        rc = journal_mirror_batch(c->j, own, data, len);
        break;
    case JOURNAL_FILE:
        rc = journal_mirror_file(c->j, own, get64(p + 16), get64(p + 24), data, len);
        break;
    case CLUSTER_SAVE:
        /* Not the state machine's state: a failure is logged, and the node goes on. */
        if (!own)
            cluster_save_piece(c, get64(p + 24), p[1], data, len);
        break;
    default:
        log_error("cluster: an entry of unknown kind %u; ignored", p[0]);
    }
    if (rc != 0 && !atomic_exchange(&c->deposed, 1)) {
        /* The directory no longer follows the log: start again from raft's copy. */
        pthread_mutex_lock(&c->mu);
        c->want_deposed = 1;
        pthread_cond_broadcast(&c->cv);
        pthread_mutex_unlock(&c->mu);
    }
    return 0;
}

static int fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n)
{
    cluster *c = fsm->data;
    void *img;
    size_t len;
    if (journal_mirror_dump(c->j, raft_malloc, &img, &len) != 0) {
        raft_free(img);
        return RAFT_NOMEM;
    }
    *bufs = raft_malloc(sizeof **bufs);
    if (!*bufs) {
        raft_free(img);
        return RAFT_NOMEM;
    }
    (*bufs)[0].base = img;
    (*bufs)[0].len = len;
    *n = 1;
    return 0;
}

static int fsm_restore(struct raft_fsm *fsm, struct raft_buffer *b)
{
    cluster *c = fsm->data;
    int rc = journal_mirror_restore(c->j, b->base, b->len);
    if (rc != 0)
        return RAFT_MALFORMED;
    /* Ours once it succeeded (raft 0.15 keeps it on failure). */
    raft_free(b->base);
    log_info("cluster: state directory restored from a snapshot of %zu bytes", b->len);
    return 0;
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
