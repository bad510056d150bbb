/* SPDX-License-Identifier: Apache-2.0 */
/* commit.c - answers to changes held until their journal record is durable: a request
 * asks again at each turn of its thread; a parked waiter's slot finishes from the
 * journal's writer. */
#include "hold/commit.h"

#include "hold/park.h"

void commit_ko_not_durable(cmd_result *r)
{
    buf_clear(&r->text);
    r->lsn = 0;
    r->kind = REPLY_KO;
    r->status = 400;
    buf_puts(&r->text, COMMIT_NOT_DURABLE);
}

int commit_begin(struct journal *j, cmd_result *r, uint64_t *lsn)
{
    *lsn = r->lsn;
    r->lsn = 0;
    if (!*lsn || !j || r->park)
        return 0;
    return commit_ready(j, r, *lsn);
}

int commit_ready(struct journal *j, cmd_result *r, uint64_t lsn)
{
    int rc = journal_answerable(j, lsn);
    if (rc < 0)
        commit_ko_not_durable(r);
    return rc > 0;
}

/* The journal ends a claimed slot: finished with its answer, or with the KO. */
static void on_durable_claimed(void *ctx, int rc)
{
    park_slot *s = ctx;
    if (rc != 0)
        commit_ko_not_durable(park_result(s));
    park_finish(s);
    park_unref(s);
}

void commit_finish(struct journal *j, park_slot *s, uint64_t lsn)
{
    int rc = lsn && j ? journal_poll(j, lsn) : 0;
    if (rc == 1) {
        park_ref(s);              /* the journal's, dropped by on_durable_claimed */
        rc = journal_when_durable(j, lsn, on_durable_claimed, s);
        if (rc == 1)
            return;
        park_unref(s);
    }
    if (rc != 0)
        commit_ko_not_durable(park_result(s));
    park_finish(s);
}
