/* SPDX-License-Identifier: Apache-2.0 */
/* list_int.h - a list's insides, shared by list.c (the deque) and list_index.c (lookups). */
#ifndef STSD_LIST_INT_H
#define STSD_LIST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "leaf.h"
#include "list_cols.h"
#include "list/list.h"

struct list {
    size_t count, bytes;
    struct leaf **slot;    /* the deque; NULL marks a dead slot (a freed middle leaf) */
    size_t *fen;           /* Fenwick tree over slot counts, 1-based, scap entries */
    uint32_t scap, lo, hi; /* live slots are in [lo, hi); slot[lo], slot[hi-1] are live */
    uint32_t nlive, ndead, fen_top;
    struct leaf **blk;     /* block table: id -> leaf */
    uint32_t *free_ids;    /* capacity blkcap, so freeing a leaf never allocates */
    uint32_t nblk, blkcap, nfree;
    index_tab *ix;         /* NULL until the first list_find_equal / list_contains */
    list_cols *cols;       /* named columns, NULL: none */
    struct leaf_mem mem;   /* where the leaves' memory comes from and goes back to */
};

#endif
