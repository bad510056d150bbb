/* SPDX-License-Identifier: Apache-2.0 */
/* list_cols.h - a list's named columns and their hash indexes, kept up to date by the
 * deque (list.c) through the calls below; the lookups are list_index.c's. */
#ifndef STSD_LIST_COLS_H
#define STSD_LIST_COLS_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"

struct csv_field;

/* The columns of one list: names, separator, and per column an index of (leaf id, tag of
 * the line's field) pairs like the content index, NULL until its first lookup. */
typedef struct list_cols {
    char sep;
    uint32_t n;
    uint32_t nix;          /* indexes built: 0 lets the deque skip field parsing */
    char **name;           /* n names, each NUL-terminated (no NUL inside) */
    size_t *nlen;
    index_tab **ix;
} list_cols;

/* Whether list l (struct list) has a column index to keep up to date. */
#define COLS_INDEXED(l) ((l)->cols && (l)->cols->nix)

/* Frees c and its indexes. NULL is allowed. */
void list_cols_free(list_cols *c);
/* A copy of c's names and separator, without indexes; NULL on ENOMEM (or c NULL). */
list_cols *list_cols_dup(const list_cols *c);
/* Heap bytes of c's indexes. */
size_t list_cols_memory(const list_cols *c);

/* The tag of field k of line s[0..len) (a line too short or badly quoted has one too:
 * the lookups check every candidate). Pure. */
uint32_t list_cols_tag(const list_cols *c, uint32_t k, const char *s, size_t len);
/* The tag of a field's value (what list_cols_tag gives for a line holding it). Pure. */
uint32_t list_cols_field_tag(const struct csv_field *f);

/* Called by the deque around each change while some index exists (c->nix): room for one
 * more line (0, or -1 on ENOMEM with nothing changed), a line into leaf id, out of it,
 * or moved from leaf `from` to `to`. Only the last three never fail. */
int list_cols_reserve(list_cols *c);
void list_cols_insert(list_cols *c, uint32_t id, const char *s, size_t len);
void list_cols_remove(list_cols *c, uint32_t id, const char *s, size_t len);
void list_cols_move(list_cols *c, const char *s, size_t len, uint32_t from, uint32_t to);

#endif
