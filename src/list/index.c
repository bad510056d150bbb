/* SPDX-License-Identifier: Apache-2.0 */
/* index.c - hash index of line contents (ADD UNIQUE, FIND EQUALS): tags under linear probing. */
#include "index.h"
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

/* An entry packs (id << 32 | tag) into 8 bytes: that is the whole per-line cost, divided
 * by the load factor. Ids stop below UINT32_MAX, so all ones cannot be a real entry. */
#define EMPTY UINT64_MAX
#define MIN_SLOTS 16u
#define MAX_SLOTS ((size_t)1 << 32) /* the home slot is computed from 32 tag bits */

struct index_tab {
    uint64_t *e;
    size_t size; /* slots: any number, so growth by 1.5x holds the load in [1/2, 3/4] */
    size_t count;
};

/* The home slot scales the tag to the table, so rehashing and backward-shift deletion
 * need only the entry, never the line. */
static inline size_t home(const index_tab *t, uint32_t tag)
{
    return (size_t)(((uint64_t)tag * t->size) >> 32);
}

static inline size_t next(const index_tab *t, size_t i)
{
    return i + 1 == t->size ? 0 : i + 1;
}

static inline uint64_t entry(uint32_t id, uint32_t tag)
{
    return (uint64_t)id << 32 | tag;
}

static inline uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* 64x64->128 multiply folded to 64 bits: the mixing step of wyhash-like hashes. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

uint32_t index_hash(const void *s, size_t len)
{
    static const uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull,
                          k2 = 0x8ebc6af09c88c6e3ull;
    const unsigned char *p = s;
    size_t n = len;
    uint64_t h = k0 ^ mum(len ^ k1, k2), a = 0, b = 0;

    while (n > 16) {
        h = mum(rd64(p) ^ k1, rd64(p + 8) ^ h);
        p += 16;
        n -= 16;
    }
    /* The last 1..16 bytes, read as two possibly overlapping words. */
    if (n >= 8) {
        a = rd64(p);
        b = rd64(p + n - 8);
    } else if (n >= 4) {
        a = rd32(p);
        b = rd32(p + n - 4);
    } else if (n > 0) {
        a = (uint64_t)p[0] << 16 | (uint64_t)p[n >> 1] << 8 | p[n - 1];
    }
    h = mum(a ^ k1 ^ len, b ^ h);
    h = mum(h ^ k2, k0);
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* Moves every entry into a new table of size slots. Returns 0, or -1 on ENOMEM
 * (t unchanged). */
static int rehash(index_tab *t, size_t size)
{
    if (size < MIN_SLOTS)
        size = MIN_SLOTS;
    if (size > MAX_SLOTS)
        return -1;
    index_tab n = {alloc_malloc_fn(size * sizeof(uint64_t)), size, t->count};
    if (!n.e)
        return -1;
    alloc_advise_huge(n.e, size * sizeof(uint64_t));
    memset(n.e, 0xff, size * sizeof(uint64_t));
    for (size_t i = 0; i < t->size; i++) {
        if (t->e[i] == EMPTY)
            continue;
        size_t j = home(&n, (uint32_t)t->e[i]);
        while (n.e[j] != EMPTY)
            j = next(&n, j);
        n.e[j] = t->e[i];
    }
    free(t->e);
    *t = n;
    return 0;
}

void index_free(index_tab *t)
{
    if (!t)
        return;
    free(t->e);
    free(t);
}

size_t index_memory(const index_tab *t)
{
    return t ? sizeof *t + t->size * sizeof(uint64_t) : 0;
}

int index_reserve(index_tab *t, size_t extra)
{
    if (extra > MAX_SLOTS / 2 - t->count)
        return -1;
    size_t want = t->count + extra;
    /* Growing to half full keeps growth amortized O(1) per insert. */
    return want * 4 <= t->size * 3 ? 0 : rehash(t, want * 2);
}

void index_insert(index_tab *t, uint32_t id, uint32_t tag)
{
    size_t i = home(t, tag);
    while (t->e[i] != EMPTY)
        i = next(t, i);
    t->e[i] = entry(id, tag);
    t->count++;
}

/* Slot of the entry equal to v; it must be present. */
static size_t find(const index_tab *t, uint64_t v)
{
    size_t i = home(t, (uint32_t)v);
    while (t->e[i] != v)
        i = next(t, i);
    return i;
}

/* Probe distance from slot a forward to slot b. */
static inline size_t dist(const index_tab *t, size_t a, size_t b)
{
    return b >= a ? b - a : b + t->size - a;
}

void index_remove(index_tab *t, uint32_t id, uint32_t tag)
{
    size_t i = find(t, entry(id, tag)), j = i;

    /* Backward-shift deletion: pull later entries of the run into the hole unless that
     * would move one before its home slot, so no tombstones ever slow the probes. */
    for (;;) {
        j = next(t, j);
        if (t->e[j] == EMPTY)
            break;
        if (dist(t, home(t, (uint32_t)t->e[j]), j) >= dist(t, i, j)) {
            t->e[i] = t->e[j];
            i = j;
        }
    }
    t->e[i] = EMPTY;
    t->count--;
    /* Give memory back once the list has shrunk a lot; failing to is harmless. */
    if (t->size > MIN_SLOTS && t->count < t->size / 8)
        (void)rehash(t, t->count * 2);
}

void index_move(index_tab *t, uint32_t tag, uint32_t from, uint32_t to)
{
    t->e[find(t, entry(from, tag))] = entry(to, tag);
}

index_tab *index_create(size_t expect)
{
    index_tab *t = alloc_malloc_fn(sizeof *t);
    if (!t)
        return NULL;
    *t = (index_tab){NULL, 0, 0};
    if (expect > MAX_SLOTS / 2 || rehash(t, expect) < 0) {
        free(t);
        return NULL;
    }
    return t;
}

void index_prefetch(const index_tab *t, uint32_t tag)
{
    __builtin_prefetch(&t->e[home(t, tag)], 1);
}

/* Entries of one tag all share a home, and a run ends at the first empty slot, so the
 * walk visits every entry with that tag, and only a few others. */
int index_probe(const index_tab *t, uint32_t tag, size_t *cursor, uint32_t *id)
{
    size_t i = *cursor == INDEX_START ? home(t, tag) : next(t, *cursor);
    for (; t->e[i] != EMPTY; i = next(t, i)) {
        if ((uint32_t)t->e[i] == tag) {
            *cursor = i;
            *id = (uint32_t)(t->e[i] >> 32);
            return 1;
        }
    }
    return 0;
}
