/* SPDX-License-Identifier: Apache-2.0 */
/* store_take.c - the steps of a change under a list's lock, shared by the commands
 * (store.c) and the waiters served later (store_wait.c): taking lines by position (to the
 * answer, to the tail, or on loan), READ's positions, FIND's position; and the accounting
 * of stored bytes and of traffic. */
#include "store_take.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"

#include "store_lease.h"
#include "store_owner.h"

int store_bytes_reserve(store *st, size_t n)
{
    size_t now = atomic_fetch_add(&st->bytes, n);
    if (st->limits.max_bytes && now + n > st->limits.max_bytes) {
        atomic_fetch_sub(&st->bytes, n);
        return -1;
    }
    return 0;
}

void store_bytes_add(store *st, size_t n)
{
    atomic_fetch_add(&st->bytes, n);
}

void store_bytes_release(store *st, size_t n)
{
    atomic_fetch_sub(&st->bytes, n);
}

/* A uniform index in [0, n): xorshift64* per thread, seeded from the kernel. */
static size_t random_below(size_t n)
{
    static __thread uint64_t s;
    if (!s) {
        if (getrandom(&s, sizeof s, 0) != sizeof s)
            s = (uint64_t)(uintptr_t)&s ^ 0x9E3779B97F4A7C15ULL;
        s |= 1;
    }
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    uint64_t r = s * 0x2545F4914F6CDD1DULL;
    return (size_t)(((unsigned __int128)r * n) >> 64);
}

/* Appends a line to a READ/FIND result: its length, then its bytes (lines may hold NUL). */
int store_out_line(buf *out, const char *s, size_t len)
{
    return buf_append(out, &len, sizeof len) == 0 && buf_append(out, s, len) == 0 ? 0 : -1;
}

const char *store_next_line(const buf *out, size_t *off, size_t *len)
{
    if (*off + sizeof *len > out->len)
        return NULL;
    memcpy(len, out->data + *off, sizeof *len);
    const char *s = out->data + *off + sizeof *len;
    *off += sizeof *len + *len;
    return s;
}

void store_count_traffic(entry *e, uint64_t added, uint64_t removed)
{
    e->added_total += added;
    e->removed_total += removed;
    rate_count(&e->rate, rate_now_ms(), added, removed);
}

/* Position of the next line to read from a list whose first `unread` lines are unread. */
static size_t pick(store_end end, size_t unread)
{
    return end == STORE_FIRST ? 0 : end == STORE_LAST ? unread - 1 : random_below(unread);
}

/* Lends line s of e (just taken) until the deadline, to who[0..wlen) if who: linked,
 * recorded, id appended to ids. */
/* The journal's hold (store_recorder): the records until the next hold(st, 0) are one. */
static void hold(store *st, int on)
{
    if (st->rec && st->rec->hold)
        st->rec->hold(st->rec_ctx, on);
}

static store_rc lend(store *st, entry *e, const char *s, size_t len, int64_t until,
                     const char *who, size_t wlen, buf *ids, uint64_t *lsn)
{
    lease *ls = store_lease_new(s, len);
    if (!ls)
        return STORE_NOMEM;
    if (store_lease_link_locked(st, e, ls, 0, until) != 0) {
        free(ls);
        return STORE_NOMEM;
    }
    store_rc rc = STORE_OK;
    owner *o = NULL;
    if (buf_append(ids, &ls->id, sizeof ls->id) != 0 ||
        (who && !(o = store_owner_add(&e->owners, who, wlen, ls))))
        rc = STORE_NOMEM;
    else if (st->rec && st->rec->lease(st->rec_ctx, e->name, ls->id, until, who, wlen, s,
                                       len, lsn) != 0)
        rc = STORE_JOURNAL;
    else if (o)
        o->lsn = *lsn;
    if (rc != STORE_OK)
        store_lease_forget_locked(st, ls);      /* the line stays in the list */
    return rc;
}

store_rc store_take_locked(store *st, entry *e, const size_t *pos, size_t n, int keep,
                           int64_t lease_ms, buf *ids, buf *out, size_t *count,
                           uint64_t *lsn)
{
    store_rc rc = STORE_OK;
    list *l = e->l;
    int64_t until = lease_ms > 0 && !keep ? clock_wall_ms() + lease_ms : 0;
    *count = 0;
    /* With a lease, the take and the leases are one change for the journal. */
    int held = until != 0;
    if (held)
        hold(st, 1);
    if (st->rec && st->rec->take(st->rec_ctx, e->name, keep, pos, n, lsn) != 0) {
        if (held)
            hold(st, 0);
        return STORE_JOURNAL;
    }
    for (size_t i = 0; i < n; i++) {
        size_t llen;
        const char *s = list_get(l, pos[i], &llen);
        if (store_out_line(out, s, llen) != 0) {
            rc = STORE_NOMEM;
        } else if (keep) {
            if (list_move_to_back(l, pos[i]) != 0)
                rc = STORE_NOMEM;
        } else if (until &&
                   (rc = lend(st, e, s, llen, until, NULL, 0, ids, lsn)) != STORE_OK) {
            /* not taken: the journal holds the take, memory does not */
        } else {
            list_remove(l, pos[i]);
            store_bytes_release(st, llen);
        }
        if (rc != STORE_OK) {
            /* The journal holds the whole change; memory has only part of it. */
            if (st->rec)
                st->rec->mark_broken(st->rec_ctx);
            break;
        }
        ++*count;
    }
    if (held)
        hold(st, 0);
    if (!keep && *count)
        store_count_traffic(e, 0, *count);
    return rc;
}

store_rc store_read_locked(store *st, entry *e, store_end end, int keep, size_t n,
                           int64_t lease_ms, buf *ids, buf *out, size_t *count,
                           uint64_t *lsn)
{
    size_t one, *pos = &one;
    size_t len = list_length(e->l);
    *count = 0;
    if (len == 0)
        return STORE_EMPTY;
    if (n > len) {
        *count = len;
        return STORE_TOO_FEW;
    }
    /* Positions are chosen before anything changes, so the journal can record them
     * first. The i-th line is read among the len - i not read yet, which stay at the
     * front: with keep each read line goes to the tail at once, so the read ones end up
     * at the tail in read order, as "read n, then append them all" gives. */
    if (n > 1 && !(pos = malloc(n * sizeof *pos)))
        return STORE_NOMEM;
    for (size_t i = 0; i < n; i++)
        pos[i] = pick(end, len - i);
    store_rc rc = store_take_locked(st, e, pos, n, keep, lease_ms, ids, out, count, lsn);
    if (pos != &one)
        free(pos);
    return rc;
}

/* One line of e taken from end, recorded first, appended to out and lent to who[0..wlen)
 * until the deadline; its id appended to ids. */
static store_rc take_owned(store *st, entry *e, store_end end, int64_t until, const char *who,
                           size_t wlen, buf *out, buf *ids, uint64_t *lsn)
{
    list *l = e->l;
    size_t len = list_length(l), pos, llen;
    if (len == 0)
        return STORE_EMPTY;
    pos = pick(end, len);
    hold(st, 1);                                /* the take and its lease: one change */
    if (st->rec && st->rec->take(st->rec_ctx, e->name, 0, &pos, 1, lsn) != 0) {
        hold(st, 0);
        return STORE_JOURNAL;
    }
    const char *s = list_get(l, pos, &llen);
    size_t had = ids->len;
    store_rc rc = store_out_line(out, s, llen) != 0 ? STORE_NOMEM
                : lend(st, e, s, llen, until, who, wlen, ids, lsn);
    hold(st, 0);
    if (rc == STORE_OK) {
        list_remove(l, pos);
        store_bytes_release(st, llen);
        store_count_traffic(e, 0, 1);
    } else {
        ids->len = had;
        if (st->rec)
            st->rec->mark_broken(st->rec_ctx);  /* the journal holds the take, memory not */
    }
    return rc;
}

store_rc store_read_owner_locked(store *st, entry *e, const store_owned_req *q, buf *out,
                                 buf *ids, int *taken, uint64_t *lsn)
{
    int64_t until = q->lease_ms > 0 ? clock_wall_ms() + q->lease_ms : STORE_LOAN_FOREVER;
    *taken = 0;
    owner *o = store_owner_find_hash(&e->owners, q->who, q->wlen, q->hash);
    if (!o) {
        store_rc rc = take_owned(st, e, q->end, until, q->who, q->wlen, out, ids, lsn);
        *taken = rc == STORE_OK;
        return rc;
    }
    if (q->lease_ms > 0) {
        if (store_lease_renew_locked(st, e, o->l, until, lsn) != 0)
            return STORE_JOURNAL;
        o->lsn = *lsn;
    } else {
        /* Answered again: only once the record that made it so is durable. */
        *lsn = o->lsn;
    }
    if (buf_append(ids, &o->l->id, sizeof o->l->id) != 0 ||
        store_out_line(out, o->l->line, o->l->len) != 0)
        return STORE_NOMEM;
    return STORE_OK;
}

store_rc store_find_pos_locked(entry *e, const store_matcher *m, size_t *pos)
{
    list *l = e->l;
    if (list_length(l) == 0)
        return STORE_EMPTY;
    long k = m->column ? list_column_index(l, m->column, m->column_len) : -1;
    if (m->column && k < 0)
        return STORE_NO_COLUMN;
    ssize_t p = m->column ? list_find_column(l, (size_t)k, m->equal, m->equal_len)
              : m->equal  ? list_find_equal(l, m->equal, m->equal_len)
                          : list_scan(l, m->match, m->ctx);
    if (p == -1)
        return STORE_NO_MATCH;
    if (p < 0)          /* -2: the index could not be built, or the regex gave up */
        return m->equal ? STORE_NOMEM : STORE_MATCH_LIMIT;
    *pos = (size_t)p;
    return STORE_OK;
}
