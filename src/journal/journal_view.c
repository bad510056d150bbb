/* SPDX-License-Identifier: Apache-2.0 */
/* journal_view.c - a follower's reads from its hot standby: the lists and keys as the
 * cluster committed them, read between two of the standby's batches.
 *
 * Why the answers are the leader's: the standby holds what the leader's store would hold
 * at the same point of the log (journal_standby.c), and these functions answer as the
 * store's do (a list with no lines is there and has length 0; a deleted key is none). */
#include <stdlib.h>
#include <string.h>

#include "journal_int.h"
#include "journal_standby.h"

uint64_t journal_view_position(journal *j)
{
    pthread_mutex_lock(&j->mu);
    uint64_t pos = j->pos;
    pthread_mutex_unlock(&j->mu);
    return pos;
}

int journal_view_wait(journal *j, uint64_t lsn, int64_t deadline_ms)
{
    return j->standby ? journal_standby_wait_applied(j->standby, lsn, deadline_ms) : -1;
}

int journal_view_begin(journal *j)
{
    return j->standby ? journal_standby_view_begin(j->standby) : -1;
}

void journal_view_end(journal *j)
{
    journal_standby_view_end(j->standby);
}

store_rc journal_view_length(journal *j, const char *name, size_t *len)
{
    const list *l = journal_standby_list(j->standby, name, strlen(name));
    if (!l)
        return STORE_NOT_LOADED;
    *len = list_length(l);
    return STORE_OK;
}

typedef struct status_walk {
    void (*fn)(const char *name, size_t len, void *ctx);
    void *ctx;
} status_walk;

static void status_one(const char *name, const list *l, void *ctx)
{
    status_walk *w = ctx;
    w->fn(name, list_length(l), w->ctx);
}

long journal_view_status(journal *j, void (*fn)(const char *name, size_t len, void *ctx),
                         void *ctx)
{
    status_walk w = {fn, ctx};
    return journal_standby_lists(j->standby, status_one, &w);
}

store_rc journal_view_get(journal *j, const char *name, buf *out, uint64_t *version)
{
    *version = 0;
    if (!journal_standby_key(j->standby, name, strlen(name), out, version))
        return STORE_NO_KEY;
    return out->oom ? STORE_NOMEM : STORE_OK;
}

store_rc journal_view_peek(journal *j, const char *name, const store_peek_req *q, buf *out,
                           size_t *length, size_t *next)
{
    const list *l = journal_standby_list(j->standby, name, strlen(name));
    return l ? store_peek_list(l, q, out, length, next) : STORE_NOT_LOADED;
}

store_rc journal_view_columns(journal *j, const char *name, list **cols)
{
    *cols = NULL;
    const list *l = journal_standby_list(j->standby, name, strlen(name));
    if (!l)
        return STORE_NOT_LOADED;
    list *c = list_create();
    if (!c || list_copy_columns(c, l) != 0) {
        list_free(c);
        return STORE_NOMEM;
    }
    *cols = c;
    return STORE_OK;
}

long journal_view_keys(journal *j, const char *prefix,
                       void (*fn)(const key_info *k, void *ctx), void *ctx)
{
    return journal_standby_keys(j->standby, prefix, fn, ctx);
}
