/* commit.c - answers to changes held until their journal record is durable: a request
 * asks again at each turn of its thread; a parked waiter's slot finishes from the
 * journal's writer. */
#include "cmd/commit.h"

#include "cmd/park.h"
#include "cmd_answer.h"

int commit_begin(const cmd_server *srv, cmd_result *r, uint64_t *lsn)
{
    *lsn = r->lsn;
    r->lsn = 0;
    if (!*lsn || !srv->j || r->park)
        return 0;
    return commit_ready(srv, r, *lsn);
}

int commit_ready(const cmd_server *srv, cmd_result *r, uint64_t lsn)
{
    int rc = journal_answerable(srv->j, lsn);
    if (rc < 0)
        cmd_ko_not_durable(r);
    return rc > 0;
}

/* The journal ends a claimed slot: finished with its answer, or with the KO. */
static void on_durable_claimed(void *ctx, int rc)
{
    park_slot *s = ctx;
    if (rc != 0)
        cmd_ko_not_durable(park_result(s));
    park_finish(s);
    park_unref(s);
}

void commit_finish(const cmd_server *srv, park_slot *s, uint64_t lsn)
{
    int rc = lsn && srv->j ? journal_poll(srv->j, lsn) : 0;
    if (rc == 1) {
        park_ref(s);              /* the journal's, dropped by on_durable_claimed */
        rc = journal_when_durable(srv->j, lsn, on_durable_claimed, s);
        if (rc == 1)
            return;
        park_unref(s);
    }
    if (rc != 0)
        cmd_ko_not_durable(park_result(s));
    park_finish(s);
}
