/* commit.c - answers to changes held, parked, until their journal record is durable. */
#include "server/commit.h"

#include "server/park.h"

/* The journal's writer (or whoever made the record durable, or the journal giving up at
 * a stop) ends the slot: with the handler's answer, or with the KO. */
static void on_durable(void *ctx, int rc)
{
    park_slot *s = ctx;
    if (rc == 0) {
        park_complete(s, NULL);
    } else if (park_claim(s)) {
        command_not_durable(park_result(s));
        park_finish(s);
    }
    park_unref(s);
}

void commit_answer(const cmd_server *srv, cmd_result *r)
{
    uint64_t lsn = r->lsn;
    r->lsn = 0;
    if (!lsn || !srv->j || r->park)
        return;
    int rc = journal_poll(srv->j, lsn);
    if (rc == 0)
        return;
    if (rc < 0) {
        command_not_durable(r);
        return;
    }
    /* No deadline and no expire callback: a shutdown leaves the slot to the journal,
     * which ends it (its writer runs until the HTTP server has stopped). */
    park_slot *s = srv->lot ? park_new(srv->lot, r, 0, NULL, NULL) : NULL;
    if (!s) {
        if (journal_wait(srv->j, lsn) != 0)
            command_not_durable(r);
        return;
    }
    /* How to answer stays the request's (http.c keeps these from r at the resume). */
    const cmd_result *parked = park_result(s);
    r->json = parked->json;
    r->cmd = parked->cmd;
    r->field = parked->field;
    r->park = s;
    /* The caller's reference to the slot goes to the journal (on_durable drops it). */
    rc = journal_when_durable(srv->j, lsn, on_durable, s);
    if (rc == 1)
        return;
    if (rc == 0) {
        park_complete(s, NULL);
    } else if (park_claim(s)) {
        command_not_durable(park_result(s));
        park_finish(s);
    }
    park_unref(s);
}

/* The journal ends a claimed slot: finished with its answer, or with the KO. */
static void on_durable_claimed(void *ctx, int rc)
{
    park_slot *s = ctx;
    if (rc != 0)
        command_not_durable(park_result(s));
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
        command_not_durable(park_result(s));
    park_finish(s);
}
