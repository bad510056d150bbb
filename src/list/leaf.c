/* SPDX-License-Identifier: Apache-2.0 */
/* leaf.c - the list engine's leaves: record walks and moves, leaf memory from pool or malloc. */
#include "leaf.h"

#include <stdlib.h>
#include <string.h>

/* glibc's per-chunk header, counted so list_memory tells malloc'd leaves' real cost. */
#define MALLOC_OVERHEAD 16u
/* Slots given back to the pool per lock round trip when a whole list goes. */
#define GIVE_BATCH 64

static size_t take_shared(void **out, size_t n)
{
    return leafpool_take(leafpool_shared(), out, n);
}

size_t (*leaf_take_fn)(void **out, size_t n) = take_shared;

uint32_t leaf_seek(const struct leaf *L, uint32_t k)
{
    if (k == 0 || k == L->n - 1u)
        return k ? L->last : L->head;
    uint32_t off = L->head;
    size_t len;
    /* Each hop waits for the last one's length byte: fetch the lines it will cross first,
     * all at once, so a cold leaf costs about one memory latency, not one per line. With
     * k > 0 this is a standard leaf, so the estimate fits 32 bits. */
    uint32_t est = leaf_used(L) * (k + 1) / L->n + 64;
    const unsigned char *p = L->data + off;
    for (const unsigned char *e = est < leaf_used(L) ? p + est : L->data + L->tail; p < e;
         p += 64)
        __builtin_prefetch(p);
    /* Lines under 128 bytes, the usual case, have a one-byte length: hop without the
     * varint loop, whose branch would sit on the chain of dependent loads. */
    while (k--) {
        unsigned b = L->data[off];
        if (b < 0x80)
            off += 1 + b;
        else
            rec_line(L, off, &len, &off);
    }
    return off;
}

void leaf_place(struct leaf *L, uint32_t newhead)
{
    uint32_t used = leaf_used(L);
    memmove(L->data + newhead, L->data + L->head, used);
    L->last = L->last - L->head + newhead;
    L->head = newhead;
    L->tail = newhead + used;
}

static int in_slab(const struct leaf_mem *m, const struct leaf *L)
{
    uintptr_t p = (uintptr_t)L, s = (uintptr_t)m->slab;
    return s && p >= s && p < s + m->slab_size;
}

/* Whether L is a standard leaf from the pool: outside a clone's slab, every leaf of
 * exactly LEAF_CAP bytes is one, and no other leaf is (leaf_alloc keeps this true). */
static int from_pool(const struct leaf_mem *m, const struct leaf *L)
{
    return L->cap == LEAF_CAP && !in_slab(m, L);
}

/* Bytes a leaf really costs, for m->bytes. */
static size_t footprint(const struct leaf_mem *m, const struct leaf *L)
{
    if (from_pool(m, L))
        return LEAF_BYTES;
    return sizeof *L + L->cap + (in_slab(m, L) ? 0 : MALLOC_OVERHEAD);
}

#if !LEAFPOOL_ASAN
/* Slots kept at hand grow with the list, a few per eight leaves up to LEAF_STASH, so a
 * small list pins little and a big one meets the pool's lock once per LEAF_STASH leaves. */
static uint32_t stash_limit(const struct leaf_mem *m)
{
    uint32_t k = 1 + m->count / 8;
    return k < LEAF_STASH ? k : LEAF_STASH;
}
#endif

static struct leaf *std_get(struct leaf_mem *m)
{
#if LEAFPOOL_ASAN
    return alloc_malloc_fn(LEAF_BYTES);
#else
    if (!m->nstash && !(m->nstash = (uint32_t)leaf_take_fn(m->stash, stash_limit(m))))
        return NULL;
    return m->stash[--m->nstash];
#endif
}

static void std_put(struct leaf_mem *m, struct leaf *L)
{
#if LEAFPOOL_ASAN
    (void)m;
    free(L);
#else
    uint32_t lim = stash_limit(m);
    if (m->nstash >= lim) {
        /* Full: the top half goes back in one round trip; the rest absorbs the next few. */
        leafpool_give(leafpool_shared(), m->stash + lim / 2, m->nstash - lim / 2);
        m->nstash = lim / 2;
    }
    m->stash[m->nstash++] = L;
#endif
}

uint32_t leaf_new_cap(const struct leaf *prev, size_t need)
{
    size_t c = LEAF_CAP;
    if (!prev) {
        c = LEAF_MIN_CAP;
    } else if (prev->cap <= LEAF_CAP && prev->n >= LEAF_MAX_LINES) {
        c = leaf_used(prev) + leaf_used(prev) / 8;
        c = c < LEAF_MIN_CAP ? LEAF_MIN_CAP : c > LEAF_CAP ? LEAF_CAP : c;
    }
    return (uint32_t)(need > c ? need : c);
}

struct leaf *leaf_alloc(struct leaf_mem *m, uint32_t cap)
{
    struct leaf *L = cap == LEAF_CAP ? std_get(m) : alloc_malloc_fn(sizeof *L + cap);
    if (!L)
        return NULL;
    L->cap = cap;
    m->bytes += footprint(m, L);
    m->count++;
    return L;
}

void leaf_release(struct leaf_mem *m, struct leaf *L)
{
    m->bytes -= footprint(m, L);
    if (from_pool(m, L)) {
        std_put(m, L);
    } else if (!in_slab(m, L)) {
        free(L);
    } else if (--m->slab_live == 0) {
        free(m->slab);
        m->slab = NULL;
    }
    m->count--;
}

struct leaf *leaf_resize(struct leaf_mem *m, struct leaf *L, uint32_t cap)
{
    struct leaf *M;
    if (cap != LEAF_CAP && !from_pool(m, L) && !in_slab(m, L)) {
        /* malloc to malloc: realloc may grow in place. */
        size_t before = footprint(m, L);
        if (!(M = alloc_realloc_fn(L, sizeof *L + cap)))
            return NULL;
        M->cap = cap;
        m->bytes += footprint(m, M) - before;
    } else {
        if (!(M = leaf_alloc(m, cap)))
            return NULL;
        memcpy(M, L, offsetof(struct leaf, data));
        M->cap = cap;
        memcpy(M->data + L->head, L->data + L->head, leaf_used(L));
        leaf_release(m, L);
    }
    return M;
}

void leaf_free_all(struct leaf_mem *m, struct leaf *const *blk, uint32_t n)
{
    void *batch[GIVE_BATCH];
    size_t nb = 0;
    for (uint32_t i = 0; i <= n; i++) {
        struct leaf *L = i < n ? blk[i] : NULL;
        if (L && from_pool(m, L) && !LEAFPOOL_ASAN)
            batch[nb++] = L;
        else if (L && !in_slab(m, L))
            free(L);
        if (nb && (nb == GIVE_BATCH || i == n)) {
            leafpool_give(leafpool_shared(), batch, nb);
            nb = 0;
        }
    }
    if (m->nstash)
        leafpool_give(leafpool_shared(), m->stash, m->nstash);
    m->nstash = 0;
    m->count = 0;
    free(m->slab);
    m->slab = NULL;
}
