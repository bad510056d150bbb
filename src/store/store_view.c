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

store_rc store_peek(store *st, const char *name, const store_peek_req *q, buf *out,
                    size_t *length, size_t *next)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    size_t pos = q->offset, found = 0, scanned = 0;
    int64_t deadline = rate_now_ms() + q->budget_ms;
    *next = SIZE_MAX;
    for (;;) {
        pthread_mutex_lock(&e->lock);
        size_t len = list_length(e->l);
        *length = len;
        size_t stop = len;
        if (!q->m) {                     /* a page: one hold of the lock */
            if (pos < len && len - pos > q->limit)
                stop = pos + q->limit;
        } else if (pos < len && len - pos > PEEK_CHUNK) {
            stop = pos + PEEK_CHUNK;
        }
        for (; pos < stop && found < q->limit; pos++) {
            size_t llen;
            const char *s = list_get(e->l, pos, &llen);
            int hit = q->m ? accepts(q->m, s, llen) : 1;
            if (hit < -1) {
                pthread_mutex_unlock(&e->lock);
                return STORE_MATCH_LIMIT;
            }
            if (hit > 0) {
                if (peek_out(out, pos, s, llen) != 0) {
                    pthread_mutex_unlock(&e->lock);
                    return STORE_NOMEM;
                }
                found++;
            }
            scanned++;
        }
        pthread_mutex_unlock(&e->lock);
        if (pos >= len)                  /* the end: no next page */
            return STORE_OK;
        if (found >= q->limit || !q->m || scanned >= q->max_scan ||
            rate_now_ms() >= deadline) {
            *next = pos;
            return STORE_OK;
        }
    }
}
