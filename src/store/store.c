/* SPDX-License-Identifier: Apache-2.0 */
/* store.c - the commands on named lists (store.h): each looks its list up, takes the
 * list's lock, records the change and applies it (the steps under the lock: store_take.c),
 * then serves the waiters that the lines brought in feed (store_wait.c). Settling a lease
 * (store_lease.c holds them) is one of these commands: RELEASE and an expired deadline
 * put the line back here. Looking without changing is store_view.c's. */
#include "store/store.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/csv.h"
#include "store_lease.h"
#include "store_names.h"
#include "store_owner.h"
#include "store_take.h"
#include "store_wait.h"

store *store_create(const store_limits *limits)
{
    store *st = calloc(1, sizeof *st);
    if (!st || store_names_init(st) != 0) {
        free(st);
        return NULL;
    }
    if (store_lease_init(&st->leases) != 0) {
        store_names_free(st);
        free(st);
        return NULL;
    }
    if (limits)
        st->limits = *limits;
    atomic_init(&st->bytes, 0);
    return st;
}

void store_free(store *st)
{
    if (!st)
        return;
    if (st->keys_drop)
        st->keys_drop(st->keys);
    store_lease_destroy(&st->leases);
    store_names_free(st);
    free(st);
}

void store_set_keys(store *st, struct keys_table *t, void (*drop)(struct keys_table *t))
{
    st->keys = t;
    st->keys_drop = drop;
}

struct keys_table *store_keys(store *st)
{
    return st->keys;
}

const store_limits *store_get_limits(const store *st)
{
    return &st->limits;
}

/* Where a change's lsn goes (0 until something is recorded): the caller's, or scratch
 * when the caller does not care. */
static uint64_t *lsn_out(uint64_t *lsn, uint64_t *scratch)
{
    uint64_t *p = lsn ? lsn : scratch;
    *p = 0;
    return p;
}

/* How a swap of a whole list is recorded in the journal. */
typedef enum swap_log { SWAP_UNLOGGED, SWAP_REPLACE, SWAP_RESET } swap_log;

/* Records that list name is now l: its REPLACE, then its columns if it has any. A
 * failure between the two leaves the log ahead of memory: the journal is marked broken. */
static int record_replace(store *st, const char *name, const list *l, uint64_t snap,
                          uint64_t *lsn)
{
    if (st->rec->replace(st->rec_ctx, name, snap, lsn) != 0)
        return -1;
    if (!list_column_count(l) || !st->rec->columns ||
        st->rec->columns(st->rec_ctx, name, l, lsn) == 0)
        return 0;
    st->rec->mark_broken(st->rec_ctx);
    return -1;
}

/* Puts l (owned from now on, freed on error) in place of e's list, recorded first as how
 * says; STORE_DROPPED (l not taken) when e was dropped meanwhile. The old list is freed
 * after the swap, outside the lock: a big list takes a while, and readers need not wait.
 * keep_cols: l gets the old list's columns (RESET). */
static store_rc swap_list(store *st, entry *e, const char *name, list *l, swap_log how,
                          int keep_cols, uint64_t snap, uint64_t *lsn)
{
    pthread_mutex_lock(&e->lock);
    if (store_names_dropped(e)) {        /* dropped since the lookup: l stays the caller's */
        pthread_mutex_unlock(&e->lock);
        return STORE_DROPPED;
    }
    if (keep_cols && list_copy_columns(l, e->l) != 0) {
        pthread_mutex_unlock(&e->lock);
        list_free(l);
        return STORE_NOMEM;
    }
    int failed = how == SWAP_REPLACE ? record_replace(st, name, l, snap, lsn)
               : how == SWAP_RESET   ? st->rec->reset(st->rec_ctx, name, lsn)
                                     : 0;
    if (failed) {
        pthread_mutex_unlock(&e->lock);
        list_free(l);
        return STORE_JOURNAL;
    }
    list *old = e->l;
    e->l = l;
    store_lease_drop_locked(st, e);
    store_waiter *served = NULL;
    uint64_t wlsn = *lsn;        /* the waiters' records come after this change's */
    store_wait_serve_locked(st, e, NULL, 0, &served, &wlsn);
    pthread_mutex_unlock(&e->lock);
    store_bytes_release(st, list_bytes(old));
    list_free(old);
    store_wait_finish(st, served, wlsn);
    return STORE_OK;
}

/* Installs l as list name, creating the name if needed. */
static store_rc install(store *st, const char *name, list *l, swap_log how, uint64_t snap,
                        uint64_t *lsn)
{
    store_rc rc = STORE_OK;
    size_t add = list_bytes(l);
    if (store_bytes_reserve(st, add) != 0) {
        list_free(l);
        return STORE_FULL;
    }
    entry *e;
    do
        rc = (e = store_lookup_or_create(st, name, &rc))
           ? swap_list(st, e, name, l, how, 0, snap, lsn) : rc;
    while (rc == STORE_DROPPED);
    if (!e)
        list_free(l);
    if (rc != STORE_OK)
        store_bytes_release(st, add);
    return rc;
}

store_rc store_replace(store *st, const char *name, list *l, uint64_t *lsn)
{
    uint64_t snap = 0, scratch;
    lsn = lsn_out(lsn, &scratch);
    /* The slow part, writing the lines to disk, happens before any lock is taken. */
    if (st->rec && st->rec->write_snapshot(st->rec_ctx, l, &snap) != 0) {
        list_free(l);
        return STORE_JOURNAL;
    }
    return install(st, name, l, st->rec ? SWAP_REPLACE : SWAP_UNLOGGED, snap, lsn);
}

store_rc store_adopt(store *st, const char *name, list *l)
{
    uint64_t lsn = 0;
    return install(st, name, l, SWAP_UNLOGGED, 0, &lsn);
}

void store_set_recorder(store *st, const store_recorder *r, void *ctx)
{
    st->rec = r;
    st->rec_ctx = ctx;
}

int store_record_key(store *st, const store_key_rec *r, uint64_t *lsn)
{
    *lsn = 0;
    return st->rec ? st->rec->key(st->rec_ctx, r, lsn) : 0;
}

void store_mark_broken(store *st)
{
    if (st->rec)
        st->rec->mark_broken(st->rec_ctx);
}

void store_set_expiry_hook(store *st, store_expired_fn fn, void *ctx)
{
    st->on_expired = fn;
    st->expired_ctx = ctx;
}

/* READ, with keep or a lease. */
static store_rc read_any(store *st, const char *name, store_end end, int keep, size_t n,
                         int64_t lease_ms, buf *ids, buf *out, size_t *count, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    *count = 0;
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    store_rc rc = store_names_dropped(e)
        ? STORE_NOT_LOADED
        : store_read_locked(st, e, end, keep, n, lease_ms, ids, out, count, lsn);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

store_rc store_read(store *st, const char *name, store_end end, int keep, size_t n,
                    buf *out, size_t *count, uint64_t *lsn)
{
    return read_any(st, name, end, keep, n, 0, NULL, out, count, lsn);
}

store_rc store_read_leased(store *st, const char *name, store_end end, size_t n,
                           int64_t lease_ms, buf *out, size_t *count, buf *ids,
                           uint64_t *lsn)
{
    return read_any(st, name, end, 0, n, lease_ms, ids, out, count, lsn);
}

store_rc store_read_owned(store *st, const char *name, store_end end, const char *who,
                          size_t wlen, int64_t lease_ms, buf *out, uint64_t *id, int *taken,
                          uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    *taken = 0;
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    store_owned_req q = {who, wlen, store_owner_hash(who, wlen), end, lease_ms};
    buf ids = BUF_INIT;
    pthread_mutex_lock(&e->lock);
    store_rc rc = store_names_dropped(e) ? STORE_NOT_LOADED
                                         : store_read_owner_locked(st, e, &q, out, &ids, taken, lsn);
    pthread_mutex_unlock(&e->lock);
    if (rc == STORE_OK)
        memcpy(id, ids.data, sizeof *id);
    buf_free(&ids);
    return rc;
}

/* Whether line may join l, as far as columns go: 1 if ucol (ulen bytes; NULL: none) has
 * the line's value already, 0 if not, -1 on ENOMEM; *rc says STORE_FIELDS or
 * STORE_NO_COLUMN instead. */
static int column_taken(list *l, const char *line, size_t len, const char *ucol, size_t ulen,
                        store_rc *rc)
{
    size_t n = list_column_count(l);
    char sep = list_column_sep(l);
    long k = ucol ? list_column_index(l, ucol, ulen) : -1;
    csv_field f;
    if (ucol && k < 0) {
        *rc = STORE_NO_COLUMN;
        return 0;
    }
    if (n && csv_count(line, len, sep) < (long)n) {
        *rc = STORE_FIELDS;
        return 0;
    }
    if (!ucol || csv_get(line, len, sep, (size_t)k, &f) != 0)
        return 0;
    buf v = BUF_INIT;
    int found = csv_field_append(&v, &f) != 0
        ? -1 : list_contains_column(l, (size_t)k, v.data ? v.data : "", v.len);
    buf_free(&v);
    return found;
}

/* ADD: unique refuses a line the list holds, ucol one whose field of that column it
 * holds. */
static store_rc add_line(store *st, const char *name, const char *line, size_t len,
                         int at_tail, int unique, const char *ucol, size_t ulen,
                         uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    store_rc rc = STORE_OK;
    entry *e;
again:
    /* A column can only be known to an existing list: none is created to refuse. */
    e = ucol ? store_lookup(st, name) : store_lookup_or_create(st, name, &rc);
    if (!e)
        return ucol ? STORE_NO_COLUMN : rc;
    pthread_mutex_lock(&e->lock);
    if (store_names_dropped(e)) {          /* dropped after the lookup: make it again */
        pthread_mutex_unlock(&e->lock);
        goto again;
    }
    int found = unique ? list_contains(e->l, line, len) : 0;
    if (found == 0 && (ucol || list_column_count(e->l)))
        found = column_taken(e->l, line, len, ucol, ulen, &rc);
    if (rc != STORE_OK) {
        /* the line does not fit the columns */
    } else if (found < 0) {
        rc = STORE_NOMEM;
    } else if (found) {
        rc = STORE_EXISTS;
    } else if (store_bytes_reserve(st, len) != 0) {
        rc = STORE_FULL;
    } else if (st->rec && st->rec->push(st->rec_ctx, name, at_tail, line, len, lsn) != 0) {
        store_bytes_release(st, len);
        rc = STORE_JOURNAL;
    } else if ((at_tail ? list_push_back(e->l, line, len)
                        : list_push_front(e->l, line, len)) != 0) {
        store_bytes_release(st, len);
        rc = STORE_NOMEM;
        if (st->rec)
            st->rec->mark_broken(st->rec_ctx);
    } else {
        store_count_traffic(e, 1, 0);
    }
    store_waiter *served = NULL;
    uint64_t wlsn = *lsn;        /* the waiters' records come after this change's */
    if (rc == STORE_OK)
        store_wait_serve_locked(st, e, line, len, &served, &wlsn);
    pthread_mutex_unlock(&e->lock);
    store_wait_finish(st, served, wlsn);
    return rc;
}

store_rc store_add(store *st, const char *name, const char *line, size_t len, int at_tail,
                   int unique, uint64_t *lsn)
{
    return add_line(st, name, line, len, at_tail, unique, NULL, 0, lsn);
}

store_rc store_add_unique(store *st, const char *name, const char *line, size_t len,
                          int at_tail, const char *ucol, size_t ulen, uint64_t *lsn)
{
    return add_line(st, name, line, len, at_tail, 0, ucol, ulen, lsn);
}

store_rc store_columns(store *st, const char *name, list **cols)
{
    *cols = NULL;
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    list *c = list_create();
    if (!c)
        return STORE_NOMEM;
    pthread_mutex_lock(&e->lock);
    int failed = list_copy_columns(c, e->l);
    pthread_mutex_unlock(&e->lock);
    if (failed) {
        list_free(c);
        return STORE_NOMEM;
    }
    *cols = c;
    return STORE_OK;
}

static store_rc find_any(store *st, const char *name, const store_matcher *m, int keep,
                         int64_t lease_ms, buf *ids, buf *out, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    size_t pos, count;
    pthread_mutex_lock(&e->lock);
    store_rc rc = store_names_dropped(e) ? STORE_NOT_LOADED : store_find_pos_locked(e, m, &pos);
    if (rc == STORE_OK)
        rc = store_take_locked(st, e, &pos, 1, keep, lease_ms, ids, out, &count, lsn);
    pthread_mutex_unlock(&e->lock);
    return rc;
}

store_rc store_find(store *st, const char *name, const store_matcher *m, int keep, buf *out,
                    uint64_t *lsn)
{
    return find_any(st, name, m, keep, 0, NULL, out, lsn);
}

store_rc store_find_leased(store *st, const char *name, const store_matcher *m,
                           int64_t lease_ms, buf *out, buf *ids, uint64_t *lsn)
{
    return find_any(st, name, m, 0, lease_ms, ids, out, lsn);
}

store_rc store_length(store *st, const char *name, size_t *len)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    int gone = store_names_dropped(e);
    *len = list_length(e->l);
    pthread_mutex_unlock(&e->lock);
    return gone ? STORE_NOT_LOADED : STORE_OK;
}

store_rc store_reset(store *st, const char *name, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_OK;
    list *fresh = list_create();
    if (!fresh)
        return STORE_NOMEM;
    store_rc rc = swap_list(st, e, name, fresh, st->rec ? SWAP_RESET : SWAP_UNLOGGED, 1, 0,
                            lsn);
    if (rc == STORE_DROPPED) {           /* gone meanwhile: nothing to empty */
        list_free(fresh);
        rc = STORE_OK;
    }
    return rc;
}

store_rc store_snapshot(store *st, const char *name, list **copy)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    int gone = store_names_dropped(e);
    *copy = gone ? NULL : list_clone(e->l);
    pthread_mutex_unlock(&e->lock);
    return gone ? STORE_NOT_LOADED : *copy ? STORE_OK : STORE_NOMEM;
}

int store_each_locked(store *st, int (*fn)(const char *name, const list *l, void *ctx),
                      void *ctx)
{
    size_t n;
    entry **all = store_entries_sorted(st, &n);
    if (!all)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        pthread_mutex_lock(&all[i]->lock);
        if (!store_names_dropped(all[i]))      /* a dropped list is forgotten */
            rc = fn(all[i]->name, all[i]->l, ctx);
        pthread_mutex_unlock(&all[i]->lock);
    }
    free(all);
    return rc;
}

long store_status(store *st, void (*fn)(const char *name, size_t len, void *ctx), void *ctx)
{
    size_t n;
    entry **all = store_entries_sorted(st, &n);
    if (!all)
        return -1;
    long shown = 0;
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        int gone = store_names_dropped(all[i]);
        size_t len = list_length(all[i]->l);
        pthread_mutex_unlock(&all[i]->lock);
        if (!gone) {
            fn(all[i]->name, len, ctx);
            shown++;
        }
    }
    free(all);
    return shown;
}

/* ---- leases settled: ACK, RELEASE, deadlines ---- */

/* Settles e's lease id (or, with line, the oldest lease of that exact line): recorded
 * first, then forgotten; release puts its line back at the head and feeds waiters. Call
 * with e->lock held. */
/* A line lease ended at its deadline, as the hook of expiries sees it (store.h). */
typedef struct expired_line {
    lease *l;                    /* the settled lease (its line), freed by the reporter */
    char owner[STORE_OWNER_MAX];
    size_t owner_len;
} expired_line;

/* Settles lease id of e (release: its line back at the head). With gone (an expiry), the
 * lease is not freed but handed over in *gone, with its owner's name, to be reported once
 * e's lock is released. */
static store_rc settle_locked(store *st, entry *e, int release, uint64_t id,
                              const char *line, size_t len, store_waiter **served,
                              uint64_t *lsn, expired_line *gone)
{
    store_rc rc;
    lease *l = store_lease_unlink_settled(st, e, release, id, line, len, lsn, &rc,
                                          gone ? gone->owner : NULL,
                                          gone ? &gone->owner_len : NULL);
    if (!l)
        return rc;
    rc = STORE_OK;
    if (release) {
        /* It was counted before it left: put back even past maxBytes. */
        atomic_fetch_add(&st->bytes, l->len);
        if (list_push_front(e->l, l->line, l->len) != 0) {
            atomic_fetch_sub(&st->bytes, l->len);
            rc = STORE_NOMEM;
            if (st->rec)
                st->rec->mark_broken(st->rec_ctx);
        } else {
            store_wait_serve_locked(st, e, l->line, l->len, served, lsn);
        }
    }
    if (gone)
        gone->l = l;
    else
        free(l);
    return rc;
}

/* ACK or RELEASE of list name's lease: by id, by line (id 0), or the one owner who
 * (wlen bytes) holds (who not NULL). */
static store_rc settle(store *st, const char *name, int release, uint64_t id,
                       const char *line, size_t len, const char *who, size_t wlen,
                       uint64_t *lsn)
{
    uint64_t scratch;
    lsn = lsn_out(lsn, &scratch);
    /* A dropped list's entry too: its leases are gone, so the answer is "no such lease",
     * which is what a client holding one needs to hear. */
    entry *e = store_lookup_any(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    store_waiter *served = NULL;
    pthread_mutex_lock(&e->lock);
    owner *o = who ? store_owner_find(&e->owners, who, wlen) : NULL;
    store_rc rc = who && !o ? STORE_NO_LEASE
                : settle_locked(st, e, release, o ? o->l->id : id, line, len, &served, lsn,
                                NULL);
    pthread_mutex_unlock(&e->lock);
    store_wait_finish(st, served, *lsn);
    return rc;
}

store_rc store_settle(store *st, const char *name, int release, uint64_t id, const char *line,
                      size_t len, uint64_t *lsn)
{
    return settle(st, name, release, id, line, len, NULL, 0, lsn);
}

store_rc store_settle_owner(store *st, const char *name, int release, const char *who,
                            size_t wlen, uint64_t *lsn)
{
    return settle(st, name, release, 0, NULL, 0, who, wlen, lsn);
}

size_t store_lease_expire(store *st, int64_t now, int64_t *next)
{
    size_t n = 0;
    entry *e;
    uint64_t id;
    while (store_lease_due(st, now, &e, &id, next)) {
        /* Locks in order: the list's, then the table's (ACK may have won meanwhile). */
        uint64_t lsn = 0;
        store_waiter *served = NULL;
        expired_line gone = {NULL, {0}, 0};
        pthread_mutex_lock(&e->lock);
        store_rc rc = settle_locked(st, e, 1, id, NULL, 0, &served, &lsn, &gone);
        pthread_mutex_unlock(&e->lock);
        store_wait_finish(st, served, lsn);
        if (gone.l) {
            /* The name of an entry never changes (a DROP keeps it as a tombstone). */
            if (st->on_expired)
                st->on_expired(st->expired_ctx, e->name, gone.l->line, gone.l->len,
                               gone.l->id, gone.owner_len ? gone.owner : NULL,
                               gone.owner_len);
            free(gone.l);
        }
        if (rc == STORE_OK) {
            n++;
        } else if (rc != STORE_NO_LEASE) {
            *next = now + 1000;      /* the journal refuses: try again in a second */
            return n;
        }
    }
    return n;
}
