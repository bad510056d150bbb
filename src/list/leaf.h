/* SPDX-License-Identifier: Apache-2.0 */
/* leaf.h - the list engine's leaves: packed line records, their walks and moves, and leaf
 * memory from the pool or malloc. Knows nothing of lists: list.c sits above it. */
#ifndef STSD_LEAF_H
#define STSD_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "leafpool.h"

/* A leaf holds whole lines as (varint length, bytes) records in data[head..tail), so
 * pushes at the front write before head and pushes at the back after tail. */
struct leaf {
    uint32_t id;         /* stable block id: index entries name leaves by it */
    uint32_t slot;       /* position in the list's slot deque */
    uint32_t prev, next; /* neighbour ids (NO_ID at the ends), for merges */
    uint32_t cap;        /* bytes in data[] */
    uint32_t head, tail;
    uint32_t last;       /* offset of the last record, so reading the tail line is O(1) */
    uint32_t fw;         /* count as the list's Fenwick tree knows it; lags n on end leaves */
    uint16_t n;
    unsigned char data[];
};

#define NO_ID UINT32_MAX

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

/* Free pool slots one owner (a list) keeps at hand, so it meets the pool's lock once per
 * batch. */
#define LEAF_STASH 32

/* The memory behind one owner's leaves: what it costs, its stash of free pool slots, and
 * the slab a clone's leaves share. One per list; the leaf calls below keep it true. */
struct leaf_mem {
    size_t bytes;          /* bytes of leaves, malloc headers included */
    uint32_t count;        /* leaves held */
    uint32_t nstash;
    unsigned char *slab;   /* one block holding a clone's leaves, freed with its last one */
    size_t slab_size, slab_live;
    void *stash[LEAF_STASH];
};

/* Capping lines per leaf bounds the in-leaf walk of get and remove. */
#define LEAF_MAX_LINES 256u
/* A standard leaf is exactly one pool slot; smaller and bigger ones live on malloc. */
#define LEAF_BYTES LEAFPOOL_SLOT
#define LEAF_CAP ((uint32_t)(LEAF_BYTES - sizeof(struct leaf)))
#define LEAF_MIN_CAP ((uint32_t)(128u - sizeof(struct leaf)))
#define LINE_MAX_LEN ((size_t)UINT32_MAX - 2 * LEAF_BYTES)

static inline uint32_t leaf_used(const struct leaf *L)
{
    return L->tail - L->head;
}

/* Offset of record k (< L->n). Pure. */
uint32_t leaf_seek(const struct leaf *L, uint32_t k);
/* Moves L's records so they start at newhead (which must leave them inside data[]). */
void leaf_place(struct leaf *L, uint32_t newhead);

/* Capacity for a new end leaf next to prev (NULL: the list's first), to hold need bytes:
 * a leaf that filled up on lines, not bytes, says the lines are short, so its successor
 * is sized to what it actually used. Pure. */
uint32_t leaf_new_cap(const struct leaf *prev, size_t need);
/* A leaf with cap data bytes, header unset but for cap, counted in m: a pool slot when
 * cap is LEAF_CAP, malloc otherwise. NULL on ENOMEM (m unchanged). */
struct leaf *leaf_alloc(struct leaf_mem *m, uint32_t cap);
/* Gives back L's memory (to m's stash, the pool, malloc or m's clone slab). */
void leaf_release(struct leaf_mem *m, struct leaf *L);
/* Grows L to cap data bytes (cap <= LEAF_CAP or L on malloc), records at the same
 * offsets. Returns the leaf, maybe moved (the caller repoints its tables), or NULL on
 * ENOMEM (L unchanged). */
struct leaf *leaf_resize(struct leaf_mem *m, struct leaf *L, uint32_t cap);
/* Frees the n leaves of blk[] (NULL entries skipped), m's stash and its slab. */
void leaf_free_all(struct leaf_mem *m, struct leaf *const *blk, uint32_t n);

/* Allocation seam for standard leaves: takes up to n pool slots into out[] and returns
 * how many (0 on ENOMEM). Default: the shared leaf pool. Unit tests swap it to inject
 * ENOMEM; under ASan leaves come from alloc_malloc_fn instead and this is unused. */
extern size_t (*leaf_take_fn)(void **out, size_t n);

#endif
