/* SPDX-License-Identifier: Apache-2.0 */
/* cluster_queue.c - work handed to raft's loop: an entry to propose or a change of
 * membership, queued under the cluster's mutex by the thread that waits for it, started
 * by the loop (woken with uv_async_send), ended by raft's callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_entry.h"
#include "cluster_queue.h"
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
} piece;

static void finish(piece *p, int rc)
{
    cluster *c = p->c;
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
        if (!c->stop && raft_state(&c->raft) == RAFT_LEADER && atomic_load(&c->serving))
            rv = start(c, p);
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

/* Queues p, wakes the loop and waits for p's end. Returns p's rc. */
static int run(cluster *c, piece *p)
{
    p->c = c;
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
    pthread_mutex_lock(&c->mu);
    while (!p->done)
        pthread_cond_wait(&c->cv, &c->mu);
    int rc = p->rc;
    pthread_mutex_unlock(&c->mu);
    return rc;
}

int cluster_propose(cluster *c, int kind, uint64_t id, uint64_t off, int last,
                    const void *data, size_t len)
{
    piece *p = calloc(1, sizeof *p);
    size_t size = cluster_entry_size(len);
    uint8_t *b = p && len <= UINT32_MAX ? raft_malloc(size) : NULL;
    if (!b) {
        free(p);
        log_error("cluster: no memory for an entry of %zu bytes", len);
        return -1;
    }
    cluster_entry_head(b, kind, c->nonce, id, off, last, (uint32_t)len);
    memcpy(b + CLUSTER_ENTRY_HEAD, data, len);
    memset(b + CLUSTER_ENTRY_HEAD + len, 0, size - CLUSTER_ENTRY_HEAD - len);
    p->op = CLUSTER_OP_APPLY;
    p->buf.base = b;
    p->buf.len = size;
    int rc = run(c, p);
    if (rc != 0 && !p->done)
        raft_free(b);                        /* never queued: stopping */
    free(p);
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
    snprintf(p->address, sizeof p->address, "%s", address ? address : "");
    int rc = run(c, p);
    snprintf(why, cap, "%s", rc == 0 ? "" : *p->why ? p->why : "stopping");
    free(p);
    return rc;
}
