/* SPDX-License-Identifier: Apache-2.0 */
/* store_lease.c - the lease table: lines taken on loan, by id in a hash table, by deadline
 * in a min-heap, by list in creation order. Settling one (ACK, RELEASE, its deadline) puts
 * its line back through store.c, which feeds the waiters. */
#include "store_lease.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "store_names.h"
#include "store_owner.h"

int store_lease_init(lease_table *t)
{
    memset(t, 0, sizeof *t);
    heap_init(&t->deadlines, offsetof(lease, until), offsetof(lease, heap_at));
    if (getrandom(&t->key, sizeof t->key, 0) != sizeof t->key)
        t->key = (uint64_t)clock_wall_ms() * 0x9E3779B97F4A7C15ULL;
    t->mask = 1023;
    t->buckets = calloc(t->mask + 1, sizeof *t->buckets);
    if (!t->buckets)
        return -1;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t->buckets);
        return -1;
    }
    return 0;
}

void store_lease_destroy(lease_table *t)
{
    for (size_t i = 0; i < t->deadlines.n; i++)
        free(t->deadlines.v[i]);
    heap_free(&t->deadlines);
    free(t->buckets);
    pthread_mutex_destroy(&t->lock);
}

/* A bijection of the counter under the key: unique ids that do not look sequential. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
}

static lease *by_id(const lease_table *t, uint64_t id)
{
    for (lease *l = t->buckets[mix(id) & t->mask]; l; l = l->hnext)
        if (l->id == id)
            return l;
    return NULL;
}

/* ---- linking (t->lock held) ---- */

static int grow_buckets(lease_table *t)
{
    size_t slots = (t->mask + 1) * 2;
    lease **b = calloc(slots, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i <= t->mask; i++)
        for (lease *l = t->buckets[i], *next; l; l = next) {
            next = l->hnext;
            size_t k = mix(l->id) & (slots - 1);
            l->hnext = b[k];
            b[k] = l;
        }
    free(t->buckets);
    t->buckets = b;
    t->mask = slots - 1;
    return 0;
}

/* Links l (id set) into the table, the heap and its entry's list. 0 or -1 (ENOMEM). */
static int link_lease(lease_table *t, lease *l)
{
    if (t->deadlines.n + 1 > t->mask + 1 && grow_buckets(t) != 0)
        return -1;
    if (heap_push(&t->deadlines, l) != 0)
        return -1;
    size_t k = mix(l->id) & t->mask;
    l->hnext = t->buckets[k];
    t->buckets[k] = l;
    entry *e = l->e;
    l->next = NULL;
    l->prev = e->lease_tail;
    if (e->lease_tail)
        e->lease_tail->next = l;
    else
        e->lease_head = l;
    e->lease_tail = l;
    e->leased++;
    return 0;
}

static void unlink_lease(lease_table *t, lease *l)
{
    lease **pp = &t->buckets[mix(l->id) & t->mask];
    while (*pp != l)
        pp = &(*pp)->hnext;
    *pp = l->hnext;
    heap_remove(&t->deadlines, l);
    entry *e = l->e;
    if (l->prev)
        l->prev->next = l->next;
    else
        e->lease_head = l->next;
    if (l->next)
        l->next->prev = l->prev;
    else
        e->lease_tail = l->prev;
    e->leased--;
    if (l->own)
        store_owner_remove(&e->owners, l->own);
}

/* ---- for the store's files ---- */

lease *store_lease_new(const char *line, size_t len)
{
    lease *l = malloc(sizeof *l + (len ? len : 1));
    if (l) {
        memset(l, 0, sizeof *l);
        l->len = (uint32_t)len;
        memcpy(l->line, line, len);
    }
    return l;
}

int store_lease_link_locked(store *st, entry *e, lease *l, uint64_t id, int64_t until)
{
    lease_table *t = &st->leases;
    pthread_mutex_lock(&t->lock);
    if (id == 0) {
        do
            id = mix(++t->counter ^ t->key);
        while (id == 0 || by_id(t, id));
    } else if (by_id(t, id)) {
        pthread_mutex_unlock(&t->lock);
        return 1;               /* recovery: that one is known already */
    }
    l->id = id;
    l->until = until;
    l->e = e;
    int rc = link_lease(t, l);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

void store_lease_forget_locked(store *st, lease *l)
{
    pthread_mutex_lock(&st->leases.lock);
    unlink_lease(&st->leases, l);
    pthread_mutex_unlock(&st->leases.lock);
    free(l);
}

void store_lease_drop_locked(store *st, entry *e)
{
    lease_table *t = &st->leases;
    pthread_mutex_lock(&t->lock);
    while (e->lease_head) {
        lease *l = e->lease_head;
        unlink_lease(t, l);
        free(l);
    }
    pthread_mutex_unlock(&t->lock);
}

lease *store_lease_unlink_settled(store *st, entry *e, int release, uint64_t id,
                                 const char *line, size_t len, uint64_t *lsn, store_rc *rc,
                                 char owner_out[STORE_OWNER_MAX], size_t *owner_len)
{
    lease_table *t = &st->leases;
    pthread_mutex_lock(&t->lock);
    lease *l;
    if (line) {
        for (l = e->lease_head; l; l = l->next)
            if (l->len == len && memcmp(l->line, line, len) == 0)
                break;
    } else {
        l = by_id(t, id);
        if (l && l->e != e)
            l = NULL;
    }
    if (!l) {
        pthread_mutex_unlock(&t->lock);
        *rc = STORE_NO_LEASE;
        return NULL;
    }
    if (st->rec && st->rec->settle(st->rec_ctx, e->name, l->id, release, l->line, l->len,
                                   lsn) != 0) {
        pthread_mutex_unlock(&t->lock);
        *rc = STORE_JOURNAL;
        return NULL;
    }
    if (owner_out) {
        *owner_len = l->own && l->own->len <= STORE_OWNER_MAX ? l->own->len : 0;
        memcpy(owner_out, l->own ? l->own->name : "", *owner_len);
    }
    unlink_lease(t, l);
    pthread_mutex_unlock(&t->lock);
    return l;
}

int store_lease_due(store *st, int64_t now, entry **e, uint64_t *id, int64_t *next)
{
    lease_table *t = &st->leases;
    pthread_mutex_lock(&t->lock);
    lease *top = heap_top(&t->deadlines);
    if (!top || top->until > now) {
        *next = top ? top->until : 0;
        pthread_mutex_unlock(&t->lock);
        return 0;
    }
    *e = top->e;
    *id = top->id;
    pthread_mutex_unlock(&t->lock);
    return 1;
}

store_rc store_leases(store *st, const char *name, size_t *n)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return STORE_NOT_LOADED;
    pthread_mutex_lock(&e->lock);
    int gone = store_names_dropped(e);   /* dropped since the lookup: as never loaded */
    *n = e->leased;
    pthread_mutex_unlock(&e->lock);
    return gone ? STORE_NOT_LOADED : STORE_OK;
}

int store_lease_renew_locked(store *st, entry *e, lease *l, int64_t until, uint64_t *lsn)
{
    if (st->rec && st->rec->renew(st->rec_ctx, e->name, l->id, until, lsn) != 0)
        return -1;
    lease_table *t = &st->leases;
    pthread_mutex_lock(&t->lock);
    heap_remove(&t->deadlines, l);
    l->until = until;
    /* The heap only shrank by one: putting it back needs no memory. */
    heap_push(&t->deadlines, l);
    pthread_mutex_unlock(&t->lock);
    return 0;
}

store_rc store_lease_adopt(store *st, const char *name, uint64_t id, int64_t until,
                           const char *owner_name, size_t olen, const char *line, size_t len)
{
    store_rc rc = STORE_OK;
    entry *e = store_lookup_or_create(st, name, &rc);
    if (!e)
        return rc;
    lease *l = store_lease_new(line, len);
    if (!l)
        return STORE_NOMEM;
    pthread_mutex_lock(&e->lock);
    int r = store_lease_link_locked(st, e, l, id, until);
    if (r != 0) {
        free(l);
    } else if (owner_name && !store_owner_find(&e->owners, owner_name, olen) &&
               !store_owner_add(&e->owners, owner_name, olen, l)) {
        /* (An owner holds one line: a second loan to it stays a plain lease.) */
        store_lease_forget_locked(st, l);
        r = -1;
    }
    pthread_mutex_unlock(&e->lock);
    return r < 0 ? STORE_NOMEM : STORE_OK;
}

int store_each_lease_locked(store *st, const char *name,
                            int (*fn)(uint64_t id, int64_t until, const char *owner,
                                      size_t olen, const char *line, size_t len, void *ctx),
                            void *ctx)
{
    entry *e = store_lookup(st, name);
    if (!e)
        return 0;
    lease_table *t = &st->leases;
    int rc = 0;
    pthread_mutex_lock(&t->lock);
    for (lease *l = e->lease_head; l && rc == 0; l = l->next)
        rc = l->own ? fn(l->id, l->until, l->own->name, l->own->len, l->line, l->len, ctx)
                    : fn(l->id, l->until, NULL, 0, l->line, l->len, ctx);
    pthread_mutex_unlock(&t->lock);
    return rc;
}
