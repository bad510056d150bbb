/* SPDX-License-Identifier: Apache-2.0 */
/* store_view.c - looking at lists without changing them: per-list statistics (lengths,
 * traffic, rates) and PEEK's paging and bounded matching. */
#include "store/store.h"
#include "store_names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lines a matching PEEK examines under one hold of the list's lock: short enough that
 * READs on the list are never held up for long. */
#define PEEK_CHUNK 4096

long store_stats(store *st, int rates, void (*fn)(const store_list_stats *s, void *ctx),
                 void *ctx)
{
    size_t n;
    entry **all = store_entries_sorted(st, &n);
    if (!all)
        return -1;
    int64_t now = rate_now_ms();
    long shown = 0;
    for (size_t i = 0; i < n; i++) {
        entry *e = all[i];
        store_list_stats s = {0};
        s.name = e->name;
        pthread_mutex_lock(&e->lock);
        if (store_names_dropped(e)) {    /* a tombstone (DROP): not a list */
            pthread_mutex_unlock(&e->lock);
            continue;
        }
        s.lines = list_length(e->l);
        s.added_total = e->added_total;
        s.removed_total = e->removed_total;
        double drain = 0;
        if (rates) {
            rate_get(&e->rate, now, &s.added_per_s, &s.removed_per_s);
            drain = rate_drain(&e->rate, now);
        }
        s.leased = e->leased;
        s.waiters = e->waiters;
        pthread_mutex_unlock(&e->lock);
        s.empty_in_s = rates ? rate_empty_in(s.lines, drain) : -1;
        fn(&s, ctx);
        shown++;
    }
    free(all);
    return shown;
}

static int peek_out(buf *out, size_t pos, const char *s, size_t len)
{
    return buf_append(out, &pos, sizeof pos) == 0 && buf_append(out, &len, sizeof len) == 0 &&
                   buf_append(out, s, len) == 0
               ? 0
               : -1;
}

const char *store_next_peek(const buf *out, size_t *off, size_t *pos, size_t *len)
{
    if (*off + sizeof *pos + sizeof *len > out->len)
        return NULL;
    memcpy(pos, out->data + *off, sizeof *pos);
    memcpy(len, out->data + *off + sizeof *pos, sizeof *len);
    const char *s = out->data + *off + sizeof *pos + sizeof *len;
    *off += sizeof *pos + sizeof *len + *len;
    return s;
}

/* 1 if m accepts s, 0 if not, RX_LIMIT-like values (< -1) passed through. */
static int accepts(const store_matcher *m, const char *s, size_t len)
{
    if (m->equal && !m->column)
        return len == m->equal_len && memcmp(s, m->equal, len) == 0;
    return m->match(s, len, m->ctx);
}

/* Where a PEEK is: its position, the lines found and scanned, when it must stop. */
typedef struct peek_walk {
    size_t pos, found, scanned;
    int64_t deadline;
} peek_walk;

/* One turn of PEEK over l, which the caller holds still: a page (no matcher), or up to
 * PEEK_CHUNK lines scanned. Returns 1 when the PEEK is done (its outcome in *rc), 0 when
 * another turn must follow. */
static int peek_turn(const list *l, const store_peek_req *q, peek_walk *w, buf *out,
                     size_t *length, size_t *next, store_rc *rc)
{
    size_t len = list_length(l);
    *length = len;
    size_t stop = len;
    if (!q->m) {
        if (w->pos < len && len - w->pos > q->limit)
            stop = w->pos + q->limit;
    } else if (w->pos < len && len - w->pos > PEEK_CHUNK) {
        stop = w->pos + PEEK_CHUNK;
    }
    *rc = STORE_OK;
    for (; w->pos < stop && w->found < q->limit; w->pos++) {
        size_t llen;
        const char *s = list_get(l, w->pos, &llen);
        int hit = q->m ? accepts(q->m, s, llen) : 1;
        if (hit < -1) {
            *rc = STORE_MATCH_LIMIT;
            return 1;
        }
        if (hit > 0) {
            if (peek_out(out, w->pos, s, llen) != 0) {
                *rc = STORE_NOMEM;
                return 1;
            }
            w->found++;
        }
        w->scanned++;
    }
    if (w->pos >= len)                   /* the end: no next page */
        return 1;
    if (w->found >= q->limit || !q->m || w->scanned >= q->max_scan ||
        rate_now_ms() >= w->deadline) {
        *next = w->pos;
        return 1;
    }
    return 0;
}

store_rc store_peek(store *st, const char *name, const store_peek_req *q, buf *out,
                    size_t *length, size_t *next)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    peek_walk w = {q->offset, 0, 0, rate_now_ms() + q->budget_ms};
    store_rc rc;
    *next = SIZE_MAX;
    for (int done = 0; !done;) {
        /* A page is one hold of the lock; a scan lets writers in between its chunks. */
        pthread_mutex_lock(&e->lock);
        done = peek_turn(e->l, q, &w, out, length, next, &rc);
        pthread_mutex_unlock(&e->lock);
    }
    return rc;
}

store_rc store_peek_list(const list *l, const store_peek_req *q, buf *out, size_t *length,
                         size_t *next)
{
    peek_walk w = {q->offset, 0, 0, rate_now_ms() + q->budget_ms};
    store_rc rc;
    *next = SIZE_MAX;
    while (!peek_turn(l, q, &w, out, length, next, &rc))
        ;
    return rc;
}
