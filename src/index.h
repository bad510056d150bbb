/* index.h - store engine internals shared by list.c, leaf.c, index.c: leaves, lists, index. */
#ifndef STSD_INDEX_H
#define STSD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "list.h"

/* A leaf holds whole lines as (varint length, bytes) records in data[head..tail), so
 * pushes at the front write before head and pushes at the back after tail. */
struct leaf {
    uint32_t id;         /* stable block id: index entries name leaves by it */
    uint32_t slot;       /* position in the slot deque */
    uint32_t prev, next; /* neighbour ids (NO_ID at the ends), for merges */
    uint32_t cap;        /* bytes in data[] */
    uint32_t head, tail;
    uint32_t last;       /* offset of the last record, so reading the tail line is O(1) */
    uint32_t fw;         /* count as the Fenwick tree knows it; lags n on the end leaves */
    uint16_t n;
    unsigned char data[];
};

#define NO_ID UINT32_MAX

typedef struct index_tab index_tab;

/* Free pool slots a list keeps at hand, so it meets the pool's lock once per batch. */
#define LIST_STASH 32

struct list {
    size_t count, bytes;
    size_t leaf_mem;       /* bytes of leaves, malloc headers included, for list_memory */
    struct leaf **slot;    /* the deque; NULL marks a dead slot (a freed middle leaf) */
    size_t *fen;           /* Fenwick tree over slot counts, 1-based, scap entries */
    uint32_t scap, lo, hi; /* live slots are in [lo, hi); slot[lo], slot[hi-1] are live */
    uint32_t nlive, ndead, fen_top;
    struct leaf **blk;     /* block table: id -> leaf */
    uint32_t *free_ids;    /* capacity blkcap, so freeing a leaf never allocates */
    uint32_t nblk, blkcap, nfree;
    unsigned char *slab;   /* one block holding a clone's leaves, freed with its last one */
    size_t slab_size, slab_live;
    index_tab *ix;         /* NULL until the first list_find_equal / list_contains */
    void *stash[LIST_STASH]; /* free standard-leaf slots from the pool (leaf.c) */
    uint32_t nstash;
};

/* The line of the record at off; sets *len and, if end is not NULL, the next record. */
static inline const char *rec_line(const struct leaf *L, uint32_t off, size_t *len,
                                   uint32_t *end)
{
    const unsigned char *p = L->data + off;
    size_t v = *p & 0x7f;
    for (unsigned shift = 7; *p++ & 0x80; shift += 7)
        v |= (size_t)(*p & 0x7f) << shift;
    *len = v;
    if (end)
        *end = (uint32_t)(p - L->data + v);
    return (const char *)p;
}

/* Position of the first line of L in l (list.c). */
size_t list_leaf_rank(const list *l, const struct leaf *L);

/* Allocation seam for the store engine (list.c and index.c allocate only through these):
 * unit tests swap them to inject ENOMEM. Default to malloc and realloc. */
extern void *(*index_malloc_fn)(size_t);
extern void *(*index_realloc_fn)(void *, size_t);

/* Advises transparent huge pages for the 2 MiB-aligned middle of p[0..n), a block about
 * to be filled: on virtual machines page faults, not copying, dominate that cost. Advice
 * only; errors are ignored and small blocks are left alone. */
void index_advise_huge(void *p, size_t n);

/* The index is a multiset of (leaf id, tag) pairs, one per line, where tag is the line's
 * 32-bit hash. Candidates are checked against the leaf's real lines, so tag collisions
 * cost a leaf scan, never a wrong answer. Leaf ids (not pointers) keep entries valid
 * when a leaf moves in memory. */

/* The tag of a line: a 32-bit hash of s[0..len). Pure; never fails. */
uint32_t index_hash(const void *s, size_t len);
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
/* Renames one (from, tag) pair, which must exist, to (to, tag): a line changed leaf. */
void index_move(index_tab *t, uint32_t tag, uint32_t from, uint32_t to);

#endif
