/* SPDX-License-Identifier: Apache-2.0 */
/* list_cols.c - a list's named columns (INITFILE HEADER=TRUE): their names, and the
 * upkeep of their indexes at each change of the deque. */
#include "list_cols.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "base/csv.h"
#include "list_int.h"

void list_cols_free(list_cols *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++) {
        free(c->name[i]);
        index_free(c->ix[i]);
    }
    free(c->name);
    free(c->nlen);
    free(c->ix);
    free(c);
}

/* Empty columns for n names, or NULL on ENOMEM. */
static list_cols *cols_new(uint32_t n, char sep)
{
    list_cols *c = alloc_malloc_fn(sizeof *c);
    if (!c)
        return NULL;
    memset(c, 0, sizeof *c);
    c->sep = sep;
    c->name = alloc_malloc_fn(n * sizeof *c->name);
    c->nlen = alloc_malloc_fn(n * sizeof *c->nlen);
    c->ix = alloc_malloc_fn(n * sizeof *c->ix);
    if (!c->name || !c->nlen || !c->ix) {
        list_cols_free(c);
        return NULL;
    }
    return c;
}

/* Adds name[0..len) as c's next column. Returns 0, or -1 on ENOMEM. */
static int cols_add(list_cols *c, const char *name, size_t len)
{
    char *s = alloc_malloc_fn(len + 1);
    if (!s)
        return -1;
    memcpy(s, name, len);
    s[len] = '\0';
    c->name[c->n] = s;
    c->nlen[c->n] = len;
    c->ix[c->n] = NULL;
    c->n++;
    return 0;
}

list_cols *list_cols_dup(const list_cols *c)
{
    list_cols *d = c ? cols_new(c->n, c->sep) : NULL;
    for (uint32_t i = 0; d && i < c->n; i++)
        if (cols_add(d, c->name[i], c->nlen[i]) != 0) {
            list_cols_free(d);
            d = NULL;
        }
    return d;
}

size_t list_cols_memory(const list_cols *c)
{
    size_t m = 0;
    for (uint32_t i = 0; c && i < c->n; i++)
        m += index_memory(c->ix[i]);
    return m;
}

uint32_t list_cols_field_tag(const csv_field *f)
{
    uint64_t h = csv_field_hash(f);
    return (uint32_t)(h ^ (h >> 32));
}

uint32_t list_cols_tag(const list_cols *c, uint32_t k, const char *s, size_t len)
{
    csv_field f;
    return csv_get(s, len, c->sep, k, &f) == 0 ? list_cols_field_tag(&f) : 0;
}

int list_cols_reserve(list_cols *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i] && index_reserve(c->ix[i], 1) != 0)
            return -1;
    return 0;
}

void list_cols_insert(list_cols *c, uint32_t id, const char *s, size_t len)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i])
            index_insert(c->ix[i], id, list_cols_tag(c, i, s, len));
}

void list_cols_remove(list_cols *c, uint32_t id, const char *s, size_t len)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i])
            index_remove(c->ix[i], id, list_cols_tag(c, i, s, len));
}

void list_cols_move(list_cols *c, const char *s, size_t len, uint32_t from, uint32_t to)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->ix[i])
            index_move(c->ix[i], list_cols_tag(c, i, s, len), from, to);
}

/* ---- the public calls of list.h on columns ---- */

int list_set_columns(list *l, const char *const *names, const size_t *lens, size_t n,
                     char sep)
{
    list_cols *c = NULL;
    if (n > LIST_COLUMNS_MAX)
        return -1;
    if (n) {
        if (!(c = cols_new((uint32_t)n, sep)))
            return -1;
        for (size_t i = 0; i < n; i++)
            if (cols_add(c, names[i], lens[i]) != 0) {
                list_cols_free(c);
                return -1;
            }
    }
    list_cols_free(l->cols);
    l->cols = c;
    return 0;
}

int list_copy_columns(list *dst, const list *src)
{
    list_cols *c = NULL;
    if (src->cols && !(c = list_cols_dup(src->cols)))
        return -1;
    list_cols_free(dst->cols);
    dst->cols = c;
    return 0;
}

size_t list_column_count(const list *l)
{
    return l->cols ? l->cols->n : 0;
}

char list_column_sep(const list *l)
{
    return l->cols ? l->cols->sep : ',';
}

const char *list_column_name(const list *l, size_t k, size_t *len)
{
    if (!l->cols || k >= l->cols->n)
        return NULL;
    if (len)
        *len = l->cols->nlen[k];
    return l->cols->name[k];
}

long list_column_index(const list *l, const char *name, size_t len)
{
    for (uint32_t i = 0; l->cols && i < l->cols->n; i++)
        if (l->cols->nlen[i] == len && memcmp(l->cols->name[i], name, len) == 0)
            return (long)i;
    return -1;
}
