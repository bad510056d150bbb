/* SPDX-License-Identifier: Apache-2.0 */
/* list_index.c - a list's content lookups (ADD UNIQUE, FIND EQUALS) over its hash index,
 * and its columns' (FIND COLUMN=, ADD UNIQUE=column) over theirs. */
#include "list_core.h"

#include <string.h>

#include "base/csv.h"

/* Builds l's index on first use, so lists that never ask pay nothing for it. Returns 0,
 * or -1 on ENOMEM (no index then). */
static int build(list *l)
{
    enum { BATCH = 16 };
    if (l->ix)
        return 0;
    /* Three fifths full: room to grow before the first rehash. */
    index_tab *t = index_create(l->count + l->count * 2 / 3);
    if (!t)
        return -1;
    /* Inserts land at random slots: hash a batch, prefetch their homes, then insert, so
     * the cache misses overlap instead of queueing. */
    uint32_t ids[BATCH], tags[BATCH];
    int nb = 0;
    for (uint32_t i = l->lo; i < l->hi; i++) {
        const struct leaf *L = l->slot[i];
        uint32_t off = L ? L->head : 0;
        for (uint32_t k = 0; L && k < L->n; k++) {
            size_t len;
            const char *p = rec_line(L, off, &len, &off);
            ids[nb] = L->id;
            tags[nb] = index_hash(p, len);
            index_prefetch(t, tags[nb]);
            if (++nb == BATCH) {
                for (int b = 0; b < nb; b++)
                    index_insert(t, ids[b], tags[b]);
                nb = 0;
            }
        }
    }
    for (int b = 0; b < nb; b++)
        index_insert(t, ids[b], tags[b]);
    l->ix = t;
    return 0;
}

/* In-leaf index of the first line equal to s[0..len), or -1. */
static int leaf_find(const struct leaf *L, const char *s, size_t len)
{
    uint32_t off = L->head;
    for (int k = 0; k < L->n; k++) {
        size_t n;
        const char *p = rec_line(L, off, &n, &off);
        if (n == len && memcmp(p, s, len) == 0)
            return k;
    }
    return -1;
}

ssize_t list_find_equal(list *l, const char *s, size_t len)
{
    if (build(l) < 0)
        return -2;
    uint32_t tag = index_hash(s, len), seen = NO_ID, id;
    size_t cur = INDEX_START;
    ssize_t best = -1;
    while (index_probe(l->ix, tag, &cur, &id)) {
        if (id == seen)
            continue;
        seen = id;
        /* Duplicates may sit in several leaves: the answer is the one with least rank. */
        const struct leaf *L = l->blk[id];
        int k = leaf_find(L, s, len);
        if (k < 0)
            continue;
        ssize_t pos = (ssize_t)(list_leaf_rank(l, L) + (size_t)k);
        if (best < 0 || pos < best)
            best = pos;
    }
    return best;
}

int list_contains(list *l, const char *s, size_t len)
{
    if (build(l) < 0)
        return -1;
    uint32_t tag = index_hash(s, len), id;
    size_t cur = INDEX_START;
    while (index_probe(l->ix, tag, &cur, &id))
        if (leaf_find(l->blk[id], s, len) >= 0)
            return 1;
    return 0;
}

/* ---- columns ---- */

/* Builds the index of column k on its first lookup, as build() does the content's.
 * Returns 0, or -1 on ENOMEM (no index then). */
static int build_column(list *l, uint32_t k)
{
    list_cols *c = l->cols;
    if (c->ix[k])
        return 0;
    index_tab *t = index_create(l->count + l->count * 2 / 3);
    if (!t)
        return -1;
    for (uint32_t i = l->lo; i < l->hi; i++) {
        const struct leaf *L = l->slot[i];
        uint32_t off = L ? L->head : 0;
        for (uint32_t n = 0; L && n < L->n; n++) {
            size_t len;
            const char *p = rec_line(L, off, &len, &off);
            index_insert(t, L->id, list_cols_tag(c, k, p, len));
        }
    }
    c->ix[k] = t;
    c->nix++;
    return 0;
}

/* In-leaf index of the first line whose field k is v[0..vlen), or -1. */
static int leaf_find_field(const struct leaf *L, const list_cols *c, uint32_t k,
                           const char *v, size_t vlen)
{
    uint32_t off = L->head;
    for (int n = 0; n < L->n; n++) {
        size_t len;
        csv_field f;
        const char *p = rec_line(L, off, &len, &off);
        if (csv_get(p, len, c->sep, k, &f) == 0 && csv_field_eq(&f, v, vlen))
            return n;
    }
    return -1;
}

ssize_t list_find_column(list *l, size_t k, const char *v, size_t vlen)
{
    if (!l->cols || k >= l->cols->n)
        return -1;
    if (build_column(l, (uint32_t)k) < 0)
        return -2;
    const list_cols *c = l->cols;
    csv_field want = {v, vlen, 0};
    uint32_t tag = list_cols_field_tag(&want), seen = NO_ID, id;
    size_t cur = INDEX_START;
    ssize_t best = -1;
    while (index_probe(c->ix[k], tag, &cur, &id)) {
        if (id == seen)
            continue;
        seen = id;
        const struct leaf *L = l->blk[id];
        int n = leaf_find_field(L, c, (uint32_t)k, v, vlen);
        if (n < 0)
            continue;
        ssize_t pos = (ssize_t)(list_leaf_rank(l, L) + (size_t)n);
        if (best < 0 || pos < best)
            best = pos;
    }
    return best;
}

int list_contains_column(list *l, size_t k, const char *v, size_t vlen)
{
    ssize_t pos = list_find_column(l, k, v, vlen);
    return pos == -2 ? -1 : pos >= 0;
}
