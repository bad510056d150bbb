/* SPDX-License-Identifier: Apache-2.0 */
/* keys_table.c - the keys' hash table of names and the index of counter leases (by
 * id, by deadline, by key), with the counters' arithmetic; attached to a store, freed with it. */
#include "keys_table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "base/clock.h"
#include "base/hash.h"
#include "base/num.h"
#include "keys_core.h"

/* ---- arithmetic --------------------------------------------------------------------- */

store_rc keys_add(const char *value, size_t len, int exists, int64_t by, int64_t min,
                  int64_t max, int64_t *out)
{
    int64_t cur = 0;
    if (exists && (len == 0 || len > 20 ||
                   num_parse_i64(value, len, INT64_MIN, INT64_MAX, &cur) != 0))
        return STORE_NOT_INT;
    if (__builtin_add_overflow(cur, by, out))
        return STORE_OVERFLOW;
    if (*out < min || *out > max)
        return STORE_BOUND;
    return STORE_OK;
}

size_t keys_format(int64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    size_t k = 0;
    if (v < 0)
        out[k++] = '-';
    while (n)
        out[k++] = tmp[--n];
    out[k] = '\0';
    return k;
}

/* ---- the table ---------------------------------------------------------------------- */

keys_table *keys_create(void)
{
    keys_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->nb = 64;
    t->lnb = 64;
    t->b = calloc(t->nb, sizeof *t->b);
    t->lb = calloc(t->lnb, sizeof *t->lb);
    if (!t->b || !t->lb || pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t->b);
        free(t->lb);
        free(t);
        return NULL;
    }
    heap_init(&t->deadlines, offsetof(klease, until), offsetof(klease, heap_at));
    if (getrandom(&t->idkey, sizeof t->idkey, 0) != sizeof t->idkey)
        t->idkey = (uint64_t)clock_wall_ms() * 0x9E3779B97F4A7C15ULL;
    return t;
}

void keys_free(keys_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i], *next; k; k = next) {
            next = k->hnext;
            for (klease *l = k->leases, *ln; l; l = ln) {
                ln = l->next;
                free(l);
            }
            free(k->value);
            free(k);
        }
    heap_free(&t->deadlines);
    free(t->b);
    free(t->lb);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int keys_attach(store *st)
{
    keys_table *t = keys_create();
    if (!t)
        return -1;
    store_set_keys(st, t, keys_free);
    return 0;
}

key *keys_find(keys_table *t, const char *name, size_t len)
{
    for (key *k = t->b[hash_fnv1a(name, len) & (t->nb - 1)]; k; k = k->hnext)
        if (k->name_len == len && memcmp(k->name, name, len) == 0)
            return k;
    return NULL;
}

static void keys_grow(keys_table *t)
{
    size_t nb = t->nb * 2;
    key **b = calloc(nb, sizeof *b);
    if (!b)
        return;                   /* longer chains, still correct */
    for (size_t i = 0; i < t->nb; i++)
        for (key *k = t->b[i], *next; k; k = next) {
            next = k->hnext;
            size_t h = hash_fnv1a(k->name, k->name_len) & (nb - 1);
            k->hnext = b[h];
            b[h] = k;
        }
    free(t->b);
    t->b = b;
    t->nb = nb;
}

key *keys_find_or_make(keys_table *t, const char *name)
{
    size_t len = strlen(name);
    key *k = keys_find(t, name, len);
    if (k)
        return k;
    if (!(k = calloc(1, sizeof *k + len + 1)))
        return NULL;
    memcpy(k->name, name, len);
    k->name_len = len;
    if (t->entries >= t->nb)
        keys_grow(t);
    size_t h = hash_fnv1a(name, len) & (t->nb - 1);
    k->hnext = t->b[h];
    t->b[h] = k;
    t->entries++;
    return k;
}

void keys_maybe_drop(keys_table *t, key *k)
{
    if (k->version || k->incr_head || k->watch_head || k->leases)
        return;
    key **pp = &t->b[hash_fnv1a(k->name, k->name_len) & (t->nb - 1)];
    while (*pp != k)
        pp = &(*pp)->hnext;
    *pp = k->hnext;
    t->entries--;
    free(k->value);
    free(k);
}

/* ---- counter leases ------------------------------------------------------------------ */

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

klease *keys_lease_find(keys_table *t, uint64_t id)
{
    for (klease *l = t->lb[mix(id) & (t->lnb - 1)]; l; l = l->hnext)
        if (l->id == id)
            return l;
    return NULL;
}

uint64_t keys_lease_new_id(keys_table *t)
{
    uint64_t id;
    do
        id = mix(++t->counter ^ t->idkey);
    while (id == 0 || keys_lease_find(t, id));
    return id;
}

int keys_lease_link(keys_table *t, key *k, klease *l)
{
    if (heap_push(&t->deadlines, l) != 0)
        return -1;
    if (t->leases >= t->lnb) {
        size_t nb = t->lnb * 2;
        klease **b = calloc(nb, sizeof *b);
        if (b) {
            for (size_t i = 0; i < t->lnb; i++)
                for (klease *o = t->lb[i], *next; o; o = next) {
                    next = o->hnext;
                    o->hnext = b[mix(o->id) & (nb - 1)];
                    b[mix(o->id) & (nb - 1)] = o;
                }
            free(t->lb);
            t->lb = b;
            t->lnb = nb;
        }
    }
    size_t h = mix(l->id) & (t->lnb - 1);
    l->hnext = t->lb[h];
    t->lb[h] = l;
    l->k = k;
    if (l->run)
        k->run = l;
    if (l->ttl)
        k->ttl = l;
    l->prev = NULL;
    l->next = k->leases;
    if (k->leases)
        k->leases->prev = l;
    k->leases = l;
    t->leases++;
    return 0;
}

void keys_lease_unlink(keys_table *t, klease *l)
{
    klease **pp = &t->lb[mix(l->id) & (t->lnb - 1)];
    while (*pp != l)
        pp = &(*pp)->hnext;
    *pp = l->hnext;
    heap_remove(&t->deadlines, l);
    if (l->k->run == l)
        l->k->run = NULL;
    if (l->k->ttl == l)
        l->k->ttl = NULL;
    if (l->prev)
        l->prev->next = l->next;
    else
        l->k->leases = l->next;
    if (l->next)
        l->next->prev = l->prev;
    t->leases--;
}

void keys_drop_leases(keys_table *t, key *k)
{
    while (k->leases) {
        klease *l = k->leases;
        keys_lease_unlink(t, l);
        free(l);
    }
}

int keys_ttl_set(keys_table *t, key *k, int64_t until)
{
    klease *l = k->ttl;
    if (l && until) {
        l->until = until;
        heap_moved(&t->deadlines, l);
    } else if (l) {
        keys_lease_unlink(t, l);
        free(l);
    } else if (until) {
        if (!(l = calloc(1, sizeof *l)))
            return -1;
        l->id = keys_lease_new_id(t);
        l->until = until;
        l->ttl = 1;
        l->heap_at = HEAP_NONE;
        if (keys_lease_link(t, k, l) != 0) {
            free(l);
            return -1;
        }
    }
    return 0;
}

/* Gives k the value v[0..len) (a buffer made by the caller, owned from now on) and the
 * next version; bytes already reserved. */
void keys_put_value(keys_table *t, store *st, key *k, char *v, size_t len)
{
    if (k->version)
        store_bytes_release(st, k->len);
    else
        t->count++;
    free(k->value);
    k->value = v;
    k->len = len;
    k->version++;
}

char *keys_copy_bytes(const char *s, size_t len)
{
    char *p = malloc(len ? len : 1);
    if (p && len)
        memcpy(p, s, len);
    return p;
}
