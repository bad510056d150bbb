/* SPDX-License-Identifier: Apache-2.0 */
/* list.h - one list of lines: packed blocks under a counted index, plus a lazy hash index.
 *
 * A list is a sequence of byte strings (lines may hold any byte, NUL included).
 * It is not thread-safe: the store serializes access to each list with its own lock.
 * Costs: length, push/pop at either end O(1); get/remove at any position O(log n);
 * list_find_equal and list_contains O(1) expected once the content index exists
 * (it is built on their first call and kept up to date by every change after that). */
#ifndef STSD_LIST_H
#define STSD_LIST_H

#include <stddef.h>
#include <sys/types.h>

typedef struct list list;

/* Returns an empty list, or NULL on ENOMEM. The caller frees it with list_free. */
list *list_create(void);
/* Frees l and every line in it. NULL is allowed. */
void list_free(list *l);

/* Number of lines. */
size_t list_length(const list *l);
/* Bytes of line contents (sum of line lengths). */
size_t list_bytes(const list *l);
/* Approximate heap bytes used by l, index included (for STATUS-like reporting and limits). */
size_t list_memory(const list *l);

/* Insert a copy of s[0..len) at the head / tail. Returns 0, or -1 on ENOMEM (l unchanged). */
int list_push_front(list *l, const char *s, size_t len);
int list_push_back(list *l, const char *s, size_t len);

/* The line at pos (0 = head). Returns a pointer into l, valid until l next changes, and
 * sets *len; returns NULL if pos >= length. */
const char *list_get(const list *l, size_t pos, size_t *len);

/* Removes the line at pos. Returns 0, or -1 if pos >= length. */
int list_remove(list *l, size_t pos);

/* Moves the line at pos to the tail (what KEEP=TRUE does). Returns 0, or -1 if
 * pos >= length or on ENOMEM (l unchanged). */
int list_move_to_back(list *l, size_t pos);

/* Called on each line by list_scan; returns nonzero to stop at this line. */
typedef int (*list_match_fn)(const char *s, size_t len, void *ctx);

/* Position of the first line from the head for which match returns > 0, -1 if none.
 * A return below -1 from match stops the scan and is returned as is (e.g. a regex
 * hitting its match limit). Walks blocks directly: no per-line position lookup. */
ssize_t list_scan(const list *l, list_match_fn match, void *ctx);

/* Calls fn on every line from head to tail; stops and returns fn's value when nonzero. */
int list_foreach(const list *l, int (*fn)(const char *s, size_t len, void *ctx), void *ctx);

/* Position of the first line equal to s[0..len), or -1 if none (or -2 on ENOMEM while
 * building the index). */
ssize_t list_find_equal(list *l, const char *s, size_t len);
/* 1 if a line equal to s[0..len) exists, 0 if not, -1 on ENOMEM building the index. */
int list_contains(list *l, const char *s, size_t len);

/* A deep copy of l (without its content index), its columns' names included, or NULL on
 * ENOMEM. Fast: copies blocks. */
list *list_clone(const list *l);

/* ---- named columns (INITFILE HEADER=TRUE) ----
 * A list may name the fields of its lines (RFC 4180, base/csv.h, cut by a separator).
 * Each column gets a hash index on its first lookup, kept up to date by every change
 * after that, as the content index is: a lookup is then O(1) expected. */
#define LIST_COLUMNS_MAX 1024

/* Sets l's columns to names[0..n) (lens[i] bytes each, none holding NUL) cut by sep;
 * n 0 removes them. Returns 0, or -1 on ENOMEM or n > LIST_COLUMNS_MAX (l unchanged). */
int list_set_columns(list *l, const char *const *names, const size_t *lens, size_t n,
                     char sep);
/* Gives dst the column names and separator of src (none if src has none). Returns 0, or
 * -1 on ENOMEM (dst unchanged). */
int list_copy_columns(list *dst, const list *src);
/* The number of columns (0: none), their separator (',' when none), column k's name
 * (NUL-terminated, *len set when len is not NULL; NULL when k is out of range). */
size_t list_column_count(const list *l);
char list_column_sep(const list *l);
const char *list_column_name(const list *l, size_t k, size_t *len);
/* The column named name[0..len), or -1 when l has none of that name. */
long list_column_index(const list *l, const char *name, size_t len);
/* Position of the first line whose field k equals v[0..vlen), -1 if none (or column k
 * does not exist), -2 on ENOMEM while building its index. */
ssize_t list_find_column(list *l, size_t k, const char *v, size_t vlen);
/* 1 if some line's field k equals v[0..vlen), 0 if none, -1 on ENOMEM. */
int list_contains_column(list *l, size_t k, const char *v, size_t vlen);

#endif
