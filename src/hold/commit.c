/* SPDX-License-Identifier: Apache-2.0 */
/* commit.c - answers to changes held until their journal record is durable: a request
 * asks again at each turn of its thread; a parked waiter's slot finishes from the
 * journal's writer. */
#include "hold/commit.h"

#include <stdlib.h>

#include "hold/park.h"

void commit_ko_not_durable(struct journal *j, cmd_result *r)
{
    buf_clear(&r->text);
    r->lsn = 0;
    r->kind = REPLY_KO;
    /* A replica's batch lost with the leadership may still be committed by the next
     * leader: neither an OK nor a KO that says nothing happened. */
    r->status = journal_replicated(j) ? 503 : 400;
    buf_puts(&r->text, journal_replicated(j) ? COMMIT_UNKNOWN : COMMIT_NOT_DURABLE);
}

int commit_begin(struct journal *j, cmd_result *r, uint64_t *lsn, int fence)
{
    *lsn = r->lsn;
    r->lsn = 0;
    if (!j || r->park)
        return 0;
    if (!*lsn && fence && journal_replicated(j) && journal_fence(j, lsn) != 0) {
        buf_clear(&r->text);
        buf_clear(&r->headers);
        r->kind = REPLY_KO;
        r->status = 503;
        buf_puts(&r->text, COMMIT_NO_LEADER);
        /* Name and value, each ending in NUL (cmd_header's form): retry in a second. */
        buf_append(&r->headers, "Retry-After\0" "1", sizeof "Retry-After\0" "1");
        return 0;
    }
    if (!*lsn)
        return 0;
    return commit_ready(j, r, *lsn);
}

int commit_ready(struct journal *j, cmd_result *r, uint64_t lsn)
{
    int rc = journal_answerable(j, lsn);
    if (rc < 0)
        commit_ko_not_durable(j, r);
    return rc > 0;
}

/* The journal ends a claimed slot: finished with its answer, or with the KO. */
typedef struct claimed {
    park_slot *s;
    struct journal *j;
} claimed;

static void on_durable_claimed(void *ctx, int rc)
{
    claimed *c = ctx;
    if (rc != 0)
        commit_ko_not_durable(c->j, park_result(c->s));
    park_finish(c->s);
    park_unref(c->s);
    free(c);
}

void commit_finish(struct journal *j, park_slot *s, uint64_t lsn)
{
    int rc = lsn && j ? journal_poll(j, lsn) : 0;
    claimed *c = rc == 1 ? malloc(sizeof *c) : NULL;
    if (c) {
        *c = (claimed){s, j};
        park_ref(s);              /* the journal's, dropped by on_durable_claimed */
        rc = journal_when_durable(j, lsn, on_durable_claimed, c);
        if (rc == 1)
            return;
        park_unref(s);
        free(c);
    } else if (rc == 1) {
        rc = journal_wait(j, lsn);          /* no memory to wait without a thread */
    }
    if (rc != 0)
        commit_ko_not_durable(j, park_result(s));
    park_finish(s);
}
