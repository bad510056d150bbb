/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_queue.c - work handed to raft's loop: an entry to propose or a change of
 * membership, queued under the cluster's mutex by the thread that waits for it, started
 * by the loop (woken with uv_async_send), ended by raft's callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster_entry.h"
#include "cluster_queue.h"
#include "base/clock.h"
#include "base/log.h"

/* One piece of work on its way through raft: the thread that queued it waits. */
typedef struct piece {
    union {
        struct raft_apply apply;
        struct raft_change change;
    } req;
    int op;
    struct raft_buffer buf;      /* CLUSTER_OP_APPLY */
    unsigned id;                 /* the others */
    char address[264];
    cluster *c;
    int done, rc;
    char why[256];
    struct piece *next;
    cluster_done_fn done_fn;     /* proposed without waiting: called instead, then freed */
    void *done_ctx;
    uint64_t done_arg;
    uint64_t queued_ns;          /* done_fn's: when it was handed over (clock_now_ns) */
} piece;

static void finish(piece *p, int rc)
{
    cluster *c = p->c;
    if (p->done_fn) {
        p->done_fn(p->done_ctx, p->done_arg, rc);
        free(p);
        return;
    }
    pthread_mutex_lock(&c->mu);
    p->rc = rc;
    p->done = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static void on_applied(struct raft_apply *req, int status, void *result)
{
    piece *p = req->data;
    (void)result;
    if (status != 0)
        log_warn("cluster: an entry was not committed: %s", raft_strerror(status));
    else if (p->done_fn && p->done_arg != CLUSTER_ARG_NONE)
        hist_observe(&p->c->commits, clock_now_ns() - p->queued_ns);
    finish(p, status == 0 ? 0 : -1);
}

static void on_changed(struct raft_change *req, int status)
{
    piece *p = req->data;
    if (status != 0)
        snprintf(p->why, sizeof p->why, "%s", raft_strerror(status));
    finish(p, status);
}

/* Starts p on the loop. Returns 0, or raft's error (p not started). */
static int start(cluster *c, piece *p)
{
    switch (p->op) {
    case CLUSTER_OP_APPLY:
        p->req.apply.data = p;
        return raft_apply(&c->raft, &p->req.apply, &p->buf, 1, on_applied);
    case CLUSTER_OP_ADD:
        p->req.change.data = p;
        return raft_add(&c->raft, &p->req.change, p->id, p->address, on_changed);
    case CLUSTER_OP_VOTER:
        p->req.change.data = p;
        return raft_assign(&c->raft, &p->req.change, p->id, RAFT_VOTER, on_changed);
    default:
        p->req.change.data = p;
        return raft_remove(&c->raft, &p->req.change, p->id, on_changed);
    }
}

void cluster_queue_run(cluster *c)
{
    pthread_mutex_lock(&c->mu);
    piece *p = c->queue;
    c->queue = c->queue_tail = NULL;
    pthread_mutex_unlock(&c->mu);
    while (p) {
        piece *next = p->next;
        int rv = RAFT_NOTLEADER;
        /* Leading, and loading the store (promoting) or serving: the lease timer may
         * end an adopted lease while the store loads. */
        /* A batch of a leadership that ended is never proposed: were this node leading
         * again, its records would reach the directory without the store's changes. */
        int stale = p->done_fn && p->done_arg != CLUSTER_ARG_NONE &&
                    p->done_arg <= c->stale_upto;
        if (!c->stop && !stale && raft_state(&c->raft) == RAFT_LEADER &&
            !atomic_load(&c->deposed) && (atomic_load(&c->serving) || c->promoting)) {
            /* Stamped here, on the loop's thread, so that whether an entry is this
             * node's is decided as the loop changes its nonce (cluster_fsm.c). */
            if (p->op == CLUSTER_OP_APPLY) {
                uint8_t *head = p->buf.base;
                cluster_put64(head + CLUSTER_ENTRY_NONCE, c->nonce);
            }
            rv = start(c, p);
        }
        if (rv != 0) {
            if (rv != RAFT_NOTLEADER)
                log_warn("cluster: %s", raft_errmsg(&c->raft));
            snprintf(p->why, sizeof p->why, "%s", rv == RAFT_NOTLEADER ?
                     "not the leader" : raft_errmsg(&c->raft));
            if (p->op == CLUSTER_OP_APPLY)
                raft_free(p->buf.base);      /* still ours when raft_apply fails */
            finish(p, p->op == CLUSTER_OP_APPLY ? -1 : rv);
        }
        p = next;
    }
}

/* A piece proposing an entry of kind with room for len bytes of data after prefix
 * (plen bytes), the data left for the caller to fill at entry_data(p) + plen. */
static piece *entry_piece(cluster *c, int kind, uint64_t id, uint64_t off, int last,
                          const void *prefix, size_t plen, size_t len)
{
    piece *p = calloc(1, sizeof *p);
    size_t size = cluster_entry_size(plen + len);
    uint8_t *b = p && plen + len <= UINT32_MAX ? raft_malloc(size) : NULL;
    if (!b) {
        free(p);
        log_error("cluster: no memory for an entry of %zu bytes", plen + len);
        return NULL;
    }
    /* The nonce is stamped as the loop proposes it (start). */
    cluster_entry_head(b, kind, 0, id, off, last, (uint32_t)(plen + len));
    if (plen)
        memcpy(b + CLUSTER_ENTRY_HEAD, prefix, plen);
    memset(b + CLUSTER_ENTRY_HEAD + plen + len, 0, size - CLUSTER_ENTRY_HEAD - plen - len);
    p->op = CLUSTER_OP_APPLY;
    p->c = c;
    p->buf.base = b;
    p->buf.len = size;
    return p;
}

/* Queues p and wakes the loop. Returns 0, or -1 when stopping (p not queued). */
static int enqueue(cluster *c, piece *p)
{
    pthread_mutex_lock(&c->mu);
    if (c->stop) {
        pthread_mutex_unlock(&c->mu);
        return -1;
    }
    if (c->queue_tail)
        c->queue_tail->next = p;
    else
        c->queue = p;
    c->queue_tail = p;
    pthread_mutex_unlock(&c->mu);
    uv_async_send(&c->wake);
    return 0;
}

/* Waits for p's end; frees it. Returns its rc. */
static int wait_free(cluster *c, piece *p)
{
    pthread_mutex_lock(&c->mu);
    while (!p->done)
        pthread_cond_wait(&c->cv, &c->mu);
    int rc = p->rc;
    pthread_mutex_unlock(&c->mu);
    free(p);
    return rc;
}

/* An entry piece that was never queued. */
static void drop(piece *p)
{
    raft_free(p->buf.base);
    free(p);
}

int cluster_propose(cluster *c, int kind, uint64_t id, uint64_t off, int last,
                    const void *data, size_t len)
{
    piece *p = entry_piece(c, kind, id, off, last, data, len, 0);
    if (!p)
        return -1;
    if (enqueue(c, p) != 0) {
        drop(p);
        return -1;
    }
    return wait_free(c, p);
}

int cluster_propose_async(cluster *c, int kind, const void *data, size_t len,
                          cluster_done_fn done, void *ctx, uint64_t arg)
{
    piece *p = entry_piece(c, kind, 0, 0, 1, data, len, 0);
    if (!p)
        return -1;
    p->done_fn = done;
    p->done_ctx = ctx;
    p->done_arg = arg;
    p->queued_ns = clock_now_ns();
    if (enqueue(c, p) != 0) {
        drop(p);
        return -1;
    }
    return 0;
}

int cluster_propose_file(cluster *c, int kind, uint64_t id, int fd, uint64_t size,
                         const void *prefix, size_t plen)
{
    /* Pieces in flight at once: raft sends and syncs them back to back, each piece's
     * round trip and fsyncs overlapping the next ones' (one at a time: 22 MB/s here). */
    enum { IN_FLIGHT = 8, PIECE = 1u << 20 };
    piece *ring[IN_FLIGHT];
    size_t head = 0, n = 0;
    uint64_t off = 0;
    int rc = 0, last = 0;
    while (!last || n) {
        if (rc == 0 && !last && n < IN_FLIGHT) {
            size_t len = size - off > PIECE ? PIECE : (size_t)(size - off);
            last = off + len == size;
            piece *p = entry_piece(c, kind, id, off, last, prefix, plen, len);
            uint8_t *to = p ? (uint8_t *)p->buf.base + CLUSTER_ENTRY_HEAD + plen : NULL;
            if (!p || (len && pread(fd, to, len, (off_t)off) != (ssize_t)len)) {
                if (p)
                    log_error("cluster: cannot read a file to replicate it");
                rc = -1;
                last = 1;
                if (p)
                    drop(p);
                continue;
            }
            if (enqueue(c, p) != 0) {
                drop(p);
                rc = -1;
                last = 1;
                continue;
            }
            ring[(head + n++) % IN_FLIGHT] = p;
            off += len;
            continue;
        }
        if (n == 0)
            break;
        if (wait_free(c, ring[head]) != 0)
            rc = -1;
        head = (head + 1) % IN_FLIGHT;
        n--;
    }
    return rc;
}

int cluster_change(cluster *c, int op, unsigned id, const char *address, char *why,
                   size_t cap)
{
    piece *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    p->op = op;
    p->id = id;
    p->c = c;
    snprintf(p->address, sizeof p->address, "%s", address ? address : "");
    if (enqueue(c, p) != 0) {
        free(p);
        snprintf(why, cap, "stopping");
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    while (!p->done)
        pthread_cond_wait(&c->cv, &c->mu);
    int rc = p->rc;
    pthread_mutex_unlock(&c->mu);
    snprintf(why, cap, "%s", rc == 0 ? "" : *p->why ? p->why : "stopping");
    free(p);
    return rc;
}
