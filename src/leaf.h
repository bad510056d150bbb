/* leaf.h - list.c's leaf layer: record walks and moves, leaf memory from pool or malloc. */
#ifndef STSD_LEAF_H
#define STSD_LEAF_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"
#include "leafpool.h"

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
/* A leaf with cap data bytes, header unset but for cap, counted in l->leaf_mem: a pool
 * slot when cap is LEAF_CAP, malloc otherwise. NULL on ENOMEM (l unchanged). */
struct leaf *leaf_alloc(list *l, uint32_t cap);
/* Gives back L's memory (to l's stash, the pool, malloc or l's clone slab). */
void leaf_release(list *l, struct leaf *L);
/* Grows L to cap data bytes (cap <= LEAF_CAP or L on malloc), records at the same
 * offsets, and repoints l's tables. Returns the leaf, maybe moved, or NULL on ENOMEM
 * (L unchanged). */
struct leaf *leaf_resize(list *l, struct leaf *L, uint32_t cap);
/* Frees every leaf of l, its stash and its slab; leaves l's tables alone. */
void leaf_free_all(list *l);

/* Allocation seam for standard leaves: takes up to n pool slots into out[] and returns
 * how many (0 on ENOMEM). Default: the shared leaf pool. Unit tests swap it to inject
 * ENOMEM; under ASan leaves come from index_malloc_fn instead and this is unused. */
extern size_t (*leaf_take_fn)(void **out, size_t n);

#endif
