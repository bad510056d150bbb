/* SPDX-License-Identifier: Apache-2.0 */
/* cmd_wait.c - READ, READMULTI and FIND with TIMEOUT: a waiter in the list's queue
 * (store) and the request parked (park) until a line serves it, its deadline passes, or
 * the server stops. */
#include "cmd_wait.h"

#include <stdlib.h>
#include <string.h>

#include "hold/commit.h"
#include "hold/park.h"
#include "cmd_answer.h"
#include "cmd_columns.h"
#include "cmd_param.h"

typedef struct cmd_waiter {
    store_waiter sw;           /* first: the store hands it back */
    const cmd_server *srv;
    park_slot *slot;           /* the caller's reference, dropped in waiter_free */
    cmd_result *r;             /* the handler's result, for arm (on the handler's thread) */
    int64_t deadline;
    int find;
    cmd_read_req rq;
    cmd_find_req fq;
    cmd_matcher cm;
    char *name;                /* owned copies of what the request asked */
    char *line;
    char *owner;
    char *column;
} cmd_waiter;

static void waiter_free(cmd_waiter *w)
{
    if (w->slot)
        park_unref(w->slot);
    cmd_matcher_free(&w->cm);
    buf_free(&w->sw.out);
    buf_free(&w->sw.ids);
    free(w->name);
    free(w->line);
    free(w->owner);
    free(w->column);
    free(w);
}

/* The answer of w's request from rc and the lines in out (moved into r). */
static void answer(cmd_waiter *w, store_rc rc, buf *out, size_t count, cmd_result *r)
{
    buf tmp = r->text;
    r->text = *out;
    *out = tmp;
    buf_clear(out);
    r->kind = REPLY_OK;
    if (w->find)
        cmd_find_answer(r, rc, w->fq.name, w->fq.nlen);
    else
        cmd_read_answer(r, rc, w->rq.name, w->rq.nlen, w->rq.n, count, w->rq.multi);
    buf_clear(&r->headers);
    if (rc == STORE_OK && (w->sw.lease_ms || w->sw.owner))
        cmd_lease_ids(r, &w->sw.ids);
    if (rc == STORE_OK)
        cmd_fields_answer(w->srv, r, w->name, w->find ? w->fq.fields : w->rq.fields);
    if (r->text.oom || r->headers.oom)
        cmd_ko_store(r, STORE_NOMEM, w->name, 0);
}

store_rc cmd_read_owned(const cmd_server *srv, const cmd_read_req *q, buf *out, buf *ids,
                        size_t *count, uint64_t *lsn)
{
    uint64_t id;
    int taken;
    store_rc rc = store_read_owned(srv->st, q->name, q->end, q->owner, q->olen, q->lease_ms,
                                   out, &id, &taken, lsn);
    *count = rc == STORE_OK;
    if (rc == STORE_OK && buf_append(ids, &id, sizeof id) != 0)
        out->oom = 1;
    return rc;
}

/* Deadline or shutdown: the answer the request gets now, without waiting. */
static void on_expire(park_slot *s, park_why why, cmd_result *r, void *ctx)
{
    cmd_waiter *w = ctx;
    const cmd_server *srv = w->srv;
    store_unwait(srv->st, &w->sw);
    buf out = BUF_INIT;
    size_t count = 0;
    uint64_t lsn = 0;
    store_rc rc;
    if (park_client_gone(s))
        rc = STORE_EMPTY;              /* nobody will read it: take no line */
    else if (w->sw.owner)
        rc = cmd_read_owned(srv, &w->rq, &out, &w->sw.ids, &count, &lsn);
    else if (w->find && w->sw.lease_ms)
        rc = store_find_leased(srv->st, w->name, &w->cm.m, w->sw.lease_ms, &out, &w->sw.ids,
                               &lsn);
    else if (w->find)
        rc = store_find(srv->st, w->name, &w->cm.m, w->fq.keep, &out, &lsn);
    else if (w->sw.lease_ms)
        rc = store_read_leased(srv->st, w->name, w->rq.end, (size_t)w->rq.n, w->sw.lease_ms,
                               &out, &count, &w->sw.ids, &lsn);
    else
        rc = store_read(srv->st, w->name, w->rq.end, w->rq.keep, (size_t)w->rq.n, &out,
                        &count, &lsn);
    buf_clear(&r->text);
    answer(w, rc, &out, count, r);
    /* This answer goes out when this returns: a line taken now waits for its record here
     * (one fsync at most with fsync=always, on the lot's timer thread). */
    if (lsn && srv->j && journal_wait(srv->j, lsn) != 0)
        commit_ko_not_durable(srv->j, r);
    buf_free(&out);
    waiter_free(w);
}

static int on_arm(store_waiter *sw)
{
    cmd_waiter *w = (cmd_waiter *)sw;
    w->slot = park_new(w->srv->lot, w->r, w->deadline, on_expire, w);
    if (!w->slot)
        return -1;
    w->r->park = w->slot;
    return 0;
}

static int on_claim(store_waiter *sw)
{
    return park_claim(((cmd_waiter *)sw)->slot);
}

static int on_gone(store_waiter *sw)
{
    return park_client_gone(((cmd_waiter *)sw)->slot);
}

static void on_served(store_waiter *sw, store_rc rc)
{
    cmd_waiter *w = (cmd_waiter *)sw;
    cmd_result *r = park_result(w->slot);
    answer(w, rc, &sw->out, sw->count, r);
    /* Its line is taken: the answer waits for the record, parked still. */
    commit_finish(w->srv->j, w->slot, rc == STORE_OK ? sw->lsn : 0);
    waiter_free(w);
}

static cmd_waiter *waiter_new(const cmd_server *srv, const char *name, size_t nlen,
                              int64_t deadline, cmd_result *r)
{
    cmd_waiter *w = calloc(1, sizeof *w);
    if (!w || !(w->name = malloc(nlen + 1))) {
        free(w);
        return NULL;
    }
    memcpy(w->name, name, nlen);
    w->name[nlen] = '\0';
    w->srv = srv;
    w->r = r;
    w->deadline = deadline;
    w->sw.name = w->name;
    w->sw.arm = on_arm;
    w->sw.claim = on_claim;
    w->sw.gone = on_gone;
    w->sw.served = on_served;
    return w;
}

static void ko_nomem(cmd_result *r)
{
    cmd_ko_store(r, STORE_NOMEM, "", 0);
}

void cmd_wait_read(const cmd_server *srv, const cmd_read_req *q, int64_t deadline_ms,
                   cmd_result *r)
{
    cmd_waiter *w = waiter_new(srv, q->name, q->nlen, deadline_ms, r);
    if (!w)
        return ko_nomem(r);
    w->rq = *q;
    w->rq.name = w->name;
    w->sw.end = q->end;
    w->sw.keep = q->keep;
    w->sw.n = (size_t)q->n;
    w->sw.lease_ms = q->lease_ms;
    if (q->owner) {
        if (!(w->owner = malloc(q->olen))) {
            waiter_free(w);
            return ko_nomem(r);
        }
        memcpy(w->owner, q->owner, q->olen);
        w->rq.owner = w->sw.owner = w->owner;
        w->sw.owner_len = q->olen;
    }
    size_t count;
    store_rc rc = store_read_wait(srv->st, &w->sw, &r->text, &count);
    if (rc == STORE_WAITING)
        return;                         /* w belongs to its slot now */
    r->lsn = w->sw.lsn;                 /* served at once: answered once durable */
    cmd_read_answer(r, rc, q->name, q->nlen, q->n, count, q->multi);
    if (rc == STORE_OK && (q->lease_ms || q->owner))
        cmd_lease_ids(r, &w->sw.ids);
    if (rc == STORE_OK)
        cmd_fields_answer(srv, r, w->name, q->fields);
    waiter_free(w);
}

void cmd_wait_find(const cmd_server *srv, const cmd_find_req *q, int64_t deadline_ms,
                   cmd_result *r)
{
    cmd_waiter *w = waiter_new(srv, q->name, q->nlen, deadline_ms, r);
    if (!w || !(w->line = malloc(q->llen ? q->llen : 1))) {
        if (w)
            waiter_free(w);
        return ko_nomem(r);
    }
    memcpy(w->line, q->line, q->llen);
    w->find = 1;
    w->fq = *q;
    w->fq.name = w->name;
    w->fq.line = w->line;
    /* The handler compiled a regex already: this takes the cache's copy. */
    if (cmd_matcher_init(&w->cm, q->mode, w->line, q->llen) != 0 ||
        (q->column && !(w->column = malloc(q->clen)))) {
        waiter_free(w);
        return ko_nomem(r);
    }
    if (q->column) {
        memcpy(w->column, q->column, q->clen);
        w->fq.column = w->column;
        cmd_matcher_column(&w->cm, w->column, q->clen, q->col, q->sep);
    }
    w->sw.m = &w->cm.m;
    w->sw.keep = q->keep;
    w->sw.lease_ms = q->lease_ms;
    store_rc rc = store_find_wait(srv->st, &w->sw, &r->text);
    if (rc == STORE_WAITING)
        return;
    r->lsn = w->sw.lsn;
    cmd_find_answer(r, rc, q->name, q->nlen);
    if (rc == STORE_OK && q->lease_ms)
        cmd_lease_ids(r, &w->sw.ids);
    if (rc == STORE_OK)
        cmd_fields_answer(srv, r, w->name, q->fields);
    waiter_free(w);
}
