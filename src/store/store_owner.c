/* SPDX-License-Identifier: Apache-2.0 */
/* store_owner.c - an entry's owners by name: a chained hash table that grows by
 * doubling, so that READ OWNER= finds an owner's line at once among many. */
#include "store_owner.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/hash.h"

/* Owner names come from clients: a per-process seed keeps them from choosing names that
 * all land in one bucket. */
static uint64_t seed = HASH_FNV1A_INIT;
static pthread_once_t seed_once = PTHREAD_ONCE_INIT;

static void seed_init(void)
{
    uint64_t k;
    if (getrandom(&k, sizeof k, 0) == sizeof k)
        seed = hash_fnv1a_more(HASH_FNV1A_INIT, &k, sizeof k);
}

uint64_t store_owner_hash(const char *name, size_t len)
{
    pthread_once(&seed_once, seed_init);
    return hash_fnv1a_more(seed, name, len);
}

owner *store_owner_find(const owner_table *t, const char *name, size_t len)
{
    return store_owner_find_hash(t, name, len, store_owner_hash(name, len));
}

owner *store_owner_find_hash(const owner_table *t, const char *name, size_t len, uint64_t h)
{
    if (!t->b)
        return NULL;
    for (owner *o = t->b[h & t->mask]; o; o = o->hnext)
        if (o->hash == h && o->len == len && memcmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

/* Room for one more at a load of at most 1: 0, or -1 on ENOMEM (t unchanged). */
static int make_room(owner_table *t)
{
    if (t->b && t->n < t->mask + 1)
        return 0;
    size_t slots = t->b ? (t->mask + 1) * 2 : 16;
    owner **b = calloc(slots, sizeof *b);
    if (!b)
        return -1;
    if (t->b)
        for (size_t i = 0; i <= t->mask; i++)
            for (owner *o = t->b[i], *next; o; o = next) {
                next = o->hnext;
                o->hnext = b[o->hash & (slots - 1)];
                b[o->hash & (slots - 1)] = o;
            }
    free(t->b);
    t->b = b;
    t->mask = slots - 1;
    return 0;
}

owner *store_owner_add(owner_table *t, const char *name, size_t len, lease *l)
{
    if (make_room(t) != 0)
        return NULL;
    owner *o = malloc(sizeof *o + (len ? len : 1));
    if (!o)
        return NULL;
    o->l = l;
    o->hash = store_owner_hash(name, len);
    o->lsn = 0;
    o->len = (uint32_t)len;
    memcpy(o->name, name, len);
    o->hnext = t->b[o->hash & t->mask];
    t->b[o->hash & t->mask] = o;
    t->n++;
    l->own = o;
    return o;
}

void store_owner_remove(owner_table *t, owner *o)
{
    owner **pp = &t->b[o->hash & t->mask];
    while (*pp != o)
        pp = &(*pp)->hnext;
    *pp = o->hnext;
    t->n--;
    if (o->l)
        o->l->own = NULL;
    free(o);
}

void store_owner_table_free(owner_table *t)
{
    if (t->b)
        for (size_t i = 0; i <= t->mask; i++)
            for (owner *o = t->b[i], *next; o; o = next) {
                next = o->hnext;
                free(o);
            }
    free(t->b);
    memset(t, 0, sizeof *t);
}
