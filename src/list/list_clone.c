/* SPDX-License-Identifier: Apache-2.0 */
/* list_clone.c - a deep copy of a list (SAVE's, from under the list's lock), its columns'
 * names included, its indexes not. */
#include "list_int.h"

#include <string.h>

/* ---- clone ---------------------------------------------------------------------- */

/* Copies every leaf, trimmed to its records, into one slab: a few big allocations and
 * (with transparent huge pages) few page faults, which dominate a clone's cost. */
list *list_clone(const list *l)
{
    list *c = list_create();
    if (!c)
        return NULL;
    *c = *l;
    c->ix = NULL;
    c->cols = NULL;
    c->mem.nstash = 0; /* the stash stays with l */
    c->mem.slab = NULL;
    c->mem.slab_size = c->mem.bytes = 0;
    for (uint32_t id = 0; id < l->nblk; id++)
        if (l->blk[id])
            c->mem.slab_size += (sizeof(struct leaf) + leaf_used(l->blk[id]) + 7) & ~(size_t)7;
    c->mem.slab_live = c->mem.count = l->nlive;
    c->blk = alloc_malloc_fn(((size_t)l->blkcap + 1) * sizeof *c->blk);
    c->free_ids = alloc_malloc_fn(((size_t)l->blkcap + 1) * sizeof *c->free_ids);
    c->slot = alloc_malloc_fn(((size_t)l->scap + 1) * sizeof *c->slot);
    c->fen = alloc_malloc_fn(((size_t)l->scap + 1) * sizeof *c->fen);
    if (c->mem.slab_size)
        c->mem.slab = alloc_malloc_fn(c->mem.slab_size);
    if (!c->blk || !c->free_ids || !c->slot || !c->fen || (c->mem.slab_size && !c->mem.slab)) {
        c->nblk = 0;
        list_free(c);
        return NULL;
    }
    alloc_advise_huge(c->mem.slab, c->mem.slab_size);
    /* Ids, slots and tree carry over unchanged; only the leaf pointers are new. */
    unsigned char *at = c->mem.slab;
    for (uint32_t id = 0; id < l->nblk; id++) {
        const struct leaf *L = l->blk[id];
        struct leaf *M = (struct leaf *)at;
        c->blk[id] = L ? M : NULL;
        if (!L)
            continue;
        memcpy(M, L, sizeof *L);
        memcpy(M->data, L->data + L->head, leaf_used(L));
        M->cap = M->tail = leaf_used(L);
        M->head = 0;
        M->last = L->last - L->head;
        c->mem.bytes += sizeof *M + M->cap;
        at += (sizeof *M + M->cap + 7) & ~(size_t)7;
    }
    if (l->nfree)
        memcpy(c->free_ids, l->free_ids, (size_t)l->nfree * sizeof *c->free_ids);
    memset(c->slot, 0, (size_t)l->scap * sizeof *c->slot);
    for (uint32_t i = l->lo; i < l->hi; i++)
        if (l->slot[i])
            c->slot[i] = c->blk[l->slot[i]->id];
    if (l->fen)
        memcpy(c->fen, l->fen, ((size_t)l->scap + 1) * sizeof *c->fen);
    if (l->cols && !(c->cols = list_cols_dup(l->cols))) {
        list_free(c);
        return NULL;
    }
    return c;
}
