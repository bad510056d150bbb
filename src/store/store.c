/* store.c - named lists under a lock-free table of names and per-list locks; the one place
 * that changes lists. */
#include "store/store.h"
#include "store_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/hash.h"

/* A list's critical sections are short: spin a little before sleeping in the kernel, so
 * that two workers taking turns on one hot list don't pay a futex call each time. */
static pthread_mutexattr_t entry_lock_attr;
static pthread_once_t entry_lock_once = PTHREAD_ONCE_INIT;

static void entry_lock_attr_init(void)
{
    pthread_mutexattr_init(&entry_lock_attr);
    pthread_mutexattr_settype(&entry_lock_attr, PTHREAD_MUTEX_ADAPTIVE_NP);
}

static table *table_new(size_t slots, table *older)
{
    table *t = calloc(1, sizeof *t + slots * sizeof t->slots[0]);
    if (t) {
        t->older = older;
        t->mask = slots - 1;
    }
    return t;
}

/* Puts e in t's first free slot from its hash (t has room: load is kept under 1/2). */
static void table_put(table *t, entry *e)
{
    size_t i = e->hash & t->mask;
    while (atomic_load_explicit(&t->slots[i], memory_order_relaxed))
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slots[i], e, memory_order_release);
}

store *store_create(const store_limits *limits)
{
    pthread_once(&entry_lock_once, entry_lock_attr_init);
    store *st = calloc(1, sizeof *st);
    table *t = table_new(64, NULL);
    if (!st || !t || pthread_mutex_init(&st->add_lock, NULL) != 0) {
        free(t);
        free(st);
        return NULL;
    }
    if (store_lease_init(&st->leases) != 0) {
        pthread_mutex_destroy(&st->add_lock);
        free(t);
        free(st);
        return NULL;
    }
    atomic_init(&st->names, t);
    if (limits)
        st->limits = *limits;
    atomic_init(&st->bytes, 0);
    return st;
}

void store_free(store *st)
{
    if (!st)
        return;
    table *t = atomic_load(&st->names);
    for (size_t i = 0; i <= t->mask; i++) {
        entry *e = atomic_load(&t->slots[i]);
        if (e) {
            list_free(e->l);
            pthread_mutex_destroy(&e->lock);
            free(e);
        }
    }
    while (t) {
        table *older = t->older;
        free(t);
        t = older;
    }
    store_lease_destroy(&st->leases);
    pthread_mutex_destroy(&st->add_lock);
    free(st->sorted);
    free(st);
}

static entry *table_find(const table *t, const char *name, uint64_t h)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    }
}

entry *store_lookup(store *st, const char *name)
{
    return table_find(atomic_load_explicit(&st->names, memory_order_acquire), name,
                      hash_fnv1a_str(name));
}

/* The entry for name, created with an empty list if absent. NULL with *rc set on error. */
entry *store_lookup_or_create(store *st, const char *name, store_rc *rc)
{
    entry *e = store_lookup(st, name);
    if (e)
        return e;
    uint64_t h = hash_fnv1a_str(name);
    pthread_mutex_lock(&st->add_lock);
    table *t = atomic_load_explicit(&st->names, memory_order_relaxed);
    e = table_find(t, name, h);        /* another thread may have won the race */
    if (e)
        goto done;
    if (st->limits.max_lists && st->count >= st->limits.max_lists) {
        *rc = STORE_FULL;
        goto done;
    }
    if ((st->count + 1) * 2 > t->mask + 1) {
        table *bigger = table_new((t->mask + 1) * 2, t);
        if (!bigger) {
            *rc = STORE_NOMEM;
            goto done;
        }
        for (size_t i = 0; i <= t->mask; i++) {
            entry *old = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
            if (old)
                table_put(bigger, old);
        }
        atomic_store_explicit(&st->names, bigger, memory_order_release);
        t = bigger;
    }
    size_t nlen = strlen(name);
    e = malloc(sizeof *e + nlen + 1);
    if (!e || !(e->l = list_create())) {
        free(e);
        e = NULL;
        *rc = STORE_NOMEM;
        goto done;
    }
    pthread_mutex_init(&e->lock, &entry_lock_attr);
    e->hash = h;
    e->added_total = e->removed_total = 0;
    rate_init(&e->rate, rate_now_ms());
    e->wait_head = e->wait_tail = NULL;
    e->waiters = 0;
    e->lease_head = e->lease_tail = NULL;
    e->leased = 0;
    memcpy(e->name, name, nlen + 1);
    store_wait_adopt_orphans(st, e);
    table_put(t, e);
    st->count++;
done:
    pthread_mutex_unlock(&st->add_lock);
    return e;
}

/* Reserves n more stored bytes against limits.max_bytes. */
static int bytes_reserve(store *st, size_t n)
{
    size_t now = atomic_fetch_add(&st->bytes, n);
    if (st->limits.max_bytes && now + n > st->limits.max_bytes) {
        atomic_fetch_sub(&st->bytes, n);
        return -1;
    }
    return 0;
}

static void bytes_release(store *st, size_t n)
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

/* How a swap of a whole list is recorded in the journal. */
typedef enum swap_log { SWAP_UNLOGGED, SWAP_REPLACE, SWAP_RESET } swap_log;

/* Puts l (owned from now on, freed on error) in place of e's list, recorded first as how
 * says; the old list is freed after the swap, outside the lock: a big list takes a
 * while, and readers need not wait. */
static store_rc swap_list(store *st, entry *e, const char *name, list *l, swap_log how,
                          uint64_t snap, uint64_t *lsn)
{
    pthread_mutex_lock(&e->lock);
    int failed = how == SWAP_REPLACE ? st->rec->replace(st->rec_ctx, name, snap, lsn)
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
    bytes_release(st, list_bytes(old));
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
    if (bytes_reserve(st, add) != 0) {
        list_free(l);
        return STORE_FULL;
    }
    entry *e = store_lookup_or_create(st, name, &rc);
    if (e)
        rc = swap_list(st, e, name, l, how, snap, lsn);
    else
        list_free(l);
    if (rc != STORE_OK)
        bytes_release(st, add);
    return rc;
}

store_rc store_replace(store *st, const char *name, list *l, uint64_t *lsn)
{
    uint64_t snap = 0, scratch;
    lsn = store_lsn_out(lsn, &scratch);
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

/* Appends a line to a READ/FIND result: its length, then its bytes (lines may hold NUL). */
static int out_line(buf *out, const char *s, size_t len)
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

/* Counts lines added to / taken from e's list; call with e->lock held. */
static void count_traffic(entry *e, uint64_t added, uint64_t removed)
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

/* Lends line s of e (just taken) for lease_ms: linked, recorded, id appended to ids. */
static store_rc lend(store *st, entry *e, const char *s, size_t len, int64_t until, buf *ids,
                     uint64_t *lsn)
{
    lease *ls = store_lease_new(s, len);
    if (!ls)
        return STORE_NOMEM;
    if (store_lease_link_locked(st, e, ls, 0, until) != 0) {
        free(ls);
        return STORE_NOMEM;
    }
    store_rc rc = STORE_OK;
    if (buf_append(ids, &ls->id, sizeof ls->id) != 0)
        rc = STORE_NOMEM;
    else if (st->rec && st->rec->lease(st->rec_ctx, e->name, ls->id, until, s, len, lsn) != 0)
        rc = STORE_JOURNAL;
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
    if (st->rec && st->rec->take(st->rec_ctx, e->name, keep, pos, n, lsn) != 0)
        return STORE_JOURNAL;
    for (size_t i = 0; i < n; i++) {
        size_t llen;
        const char *s = list_get(l, pos[i], &llen);
        if (out_line(out, s, llen) != 0) {
            rc = STORE_NOMEM;
        } else if (keep) {
            if (list_move_to_back(l, pos[i]) != 0)
                rc = STORE_NOMEM;
        } else if (until && (rc = lend(st, e, s, llen, until, ids, lsn)) != STORE_OK) {
            /* not taken: the journal holds the take, memory does not */
        } else {
            list_remove(l, pos[i]);
            bytes_release(st, llen);
        }
        if (rc != STORE_OK) {
            /* The journal holds the whole change; memory has only part of it. */
            if (st->rec)
                st->rec->mark_broken(st->rec_ctx);
            break;
        }
        ++*count;
    }
    if (!keep && *count)
        count_traffic(e, 0, *count);
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

/* READ, with keep or a lease. */
static store_rc read_any(store *st, const char *name, store_end end, int keep, size_t n,
                         int64_t lease_ms, buf *ids, buf *out, size_t *count, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = store_lsn_out(lsn, &scratch);
    *count = 0;
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    store_rc rc = store_read_locked(st, e, end, keep, n, lease_ms, ids, out, count, lsn);
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

store_rc store_add(store *st, const char *name, const char *line, size_t len, int at_tail,
                   int unique, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = store_lsn_out(lsn, &scratch);
    store_rc rc = STORE_OK;
    entry *e = store_lookup_or_create(st, name, &rc);
    if (!e)
        return rc;
    pthread_mutex_lock(&e->lock);
    int found = unique ? list_contains(e->l, line, len) : 0;
    if (found < 0) {
        rc = STORE_NOMEM;
    } else if (found) {
        rc = STORE_EXISTS;
    } else if (bytes_reserve(st, len) != 0) {
        rc = STORE_FULL;
    } else if (st->rec && st->rec->push(st->rec_ctx, name, at_tail, line, len, lsn) != 0) {
        bytes_release(st, len);
        rc = STORE_JOURNAL;
    } else if ((at_tail ? list_push_back(e->l, line, len)
                        : list_push_front(e->l, line, len)) != 0) {
        bytes_release(st, len);
        rc = STORE_NOMEM;
        if (st->rec)
            st->rec->mark_broken(st->rec_ctx);
    } else {
        count_traffic(e, 1, 0);
    }
    store_waiter *served = NULL;
    uint64_t wlsn = *lsn;        /* the waiters' records come after this change's */
    if (rc == STORE_OK)
        store_wait_serve_locked(st, e, line, len, &served, &wlsn);
    pthread_mutex_unlock(&e->lock);
    store_wait_finish(st, served, wlsn);
    return rc;
}

store_rc store_find_pos_locked(entry *e, const store_matcher *m, size_t *pos)
{
    list *l = e->l;
    if (list_length(l) == 0)
        return STORE_EMPTY;
    ssize_t p = m->equal ? list_find_equal(l, m->equal, m->equal_len)
                         : list_scan(l, m->match, m->ctx);
    if (p == -1)
        return STORE_NO_MATCH;
    if (p < 0)          /* -2: the index could not be built, or the regex gave up */
        return m->equal ? STORE_NOMEM : STORE_MATCH_LIMIT;
    *pos = (size_t)p;
    return STORE_OK;
}

static store_rc find_any(store *st, const char *name, const store_matcher *m, int keep,
                         int64_t lease_ms, buf *ids, buf *out, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = store_lsn_out(lsn, &scratch);
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    size_t pos, count;
    pthread_mutex_lock(&e->lock);
    store_rc rc = store_find_pos_locked(e, m, &pos);
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
    *len = list_length(e->l);
    pthread_mutex_unlock(&e->lock);
    return STORE_OK;
}

store_rc store_reset(store *st, const char *name, uint64_t *lsn)
{
    uint64_t scratch;
    lsn = store_lsn_out(lsn, &scratch);
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_OK;
    list *fresh = list_create();
    if (!fresh)
        return STORE_NOMEM;
    return swap_list(st, e, name, fresh, st->rec ? SWAP_RESET : SWAP_UNLOGGED, 0, lsn);
}

store_rc store_snapshot(store *st, const char *name, list **copy)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    *copy = list_clone(e->l);
    pthread_mutex_unlock(&e->lock);
    return *copy ? STORE_OK : STORE_NOMEM;
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
        rc = fn(all[i]->name, all[i]->l, ctx);
        pthread_mutex_unlock(&all[i]->lock);
    }
    free(all);
    return rc;
}

static int cmp_entry_name(const void *a, const void *b)
{
    return strcmp((*(entry *const *)a)->name, (*(entry *const *)b)->name);
}

entry **store_entries_sorted(store *st, size_t *count)
{
    /* Taken under add_lock so that the count and the table agree. Names are only ever
     * added, so while the count is unchanged the last sorted order still holds: STATUS
     * and scrapes then copy it instead of sorting again. */
    pthread_mutex_lock(&st->add_lock);
    size_t n = st->count, k = 0;
    entry **all = malloc((n ? n : 1) * sizeof *all);
    if (all && st->sorted && st->sorted_n == n) {
        memcpy(all, st->sorted, n * sizeof *all);
        pthread_mutex_unlock(&st->add_lock);
        *count = n;
        return all;
    }
    table *t = atomic_load_explicit(&st->names, memory_order_relaxed);
    for (size_t i = 0; all && i <= t->mask; i++) {
        entry *e = atomic_load_explicit(&t->slots[i], memory_order_relaxed);
        if (e)
            all[k++] = e;
    }
    pthread_mutex_unlock(&st->add_lock);
    if (!all)
        return NULL;
    qsort(all, n, sizeof *all, cmp_entry_name);
    entry **keep = malloc((n ? n : 1) * sizeof *keep);
    if (keep) {
        memcpy(keep, all, n * sizeof *keep);
        pthread_mutex_lock(&st->add_lock);
        if (st->count == n && (!st->sorted || st->sorted_n != n)) {
            free(st->sorted);
            st->sorted = keep;
            st->sorted_n = n;
            keep = NULL;
        }
        pthread_mutex_unlock(&st->add_lock);
        free(keep);
    }
    *count = n;
    return all;
}

long store_status(store *st, void (*fn)(const char *name, size_t len, void *ctx), void *ctx)
{
    size_t n;
    entry **all = store_entries_sorted(st, &n);
    if (!all)
        return -1;
    for (size_t i = 0; i < n; i++) {
        pthread_mutex_lock(&all[i]->lock);
        size_t len = list_length(all[i]->l);
        pthread_mutex_unlock(&all[i]->lock);
        fn(all[i]->name, len, ctx);
    }
    free(all);
    return (long)n;
}

size_t store_count(store *st)
{
    pthread_mutex_lock(&st->add_lock);
    size_t n = st->count;
    pthread_mutex_unlock(&st->add_lock);
    return n;
}
