/* SPDX-License-Identifier: Apache-2.0 */
/* index.h - hash index of line contents (ADD UNIQUE, FIND EQUALS): (leaf id, tag) pairs. */
#ifndef STSD_INDEX_H
#define STSD_INDEX_H

#include <stddef.h>
#include <stdint.h>

typedef struct index_tab index_tab;

/* The index is a multiset of (leaf id, tag) pairs, one per line, where tag is the line's
 * 32-bit hash. Candidates are checked against the leaf's real lines, so tag collisions
 * cost a leaf scan, never a wrong answer. Leaf ids (not pointers) keep entries valid
 * when a leaf moves in memory. */

/* The tag of a line: a 32-bit hash of s[0..len). Pure; never fails. */
uint32_t index_hash(const void *s, size_t len);
/* An empty table sized for expect entries without a rehash, or NULL on ENOMEM. */
index_tab *index_create(size_t expect);
/* Frees t. NULL is allowed. */
void index_free(index_tab *t);
/* Heap bytes held by t (0 for NULL). */
size_t index_memory(const index_tab *t);
/* Grows t so that extra more index_insert calls need no memory. Returns 0, or -1 on
 * ENOMEM (t unchanged). */
int index_reserve(index_tab *t, size_t extra);
/* Adds (id, tag). The caller has made room with index_reserve. */
void index_insert(index_tab *t, uint32_t id, uint32_t tag);
/* Removes one (id, tag) pair, which must exist. May shrink t; never fails. */
void index_remove(index_tab *t, uint32_t id, uint32_t tag);
/* Hints the CPU to fetch tag's home slot, ahead of an index_insert. */
void index_prefetch(const index_tab *t, uint32_t tag);
/* Walks the leaf ids filed under tag, and a few others (the caller checks the leaf):
 * start with *cursor = INDEX_START; returns 1 and sets *id, or 0 when done. */
#define INDEX_START SIZE_MAX
int index_probe(const index_tab *t, uint32_t tag, size_t *cursor, uint32_t *id);
/* Renames one (from, tag) pair, which must exist, to (to, tag): a line changed leaf. */
void index_move(index_tab *t, uint32_t tag, uint32_t from, uint32_t to);

#endif
