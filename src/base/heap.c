/* SPDX-License-Identifier: Apache-2.0 */
/* heap.c - an indexed min-heap of deadlines over caller-owned items, for timers. */
#include "base/heap.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

static int64_t key_of(const heap *h, const void *item)
{
    int64_t k;
    memcpy(&k, (const char *)item + h->key_off, sizeof k);
    return k;
}

static uint32_t *at_of(const heap *h, void *item)
{
    return (uint32_t *)((char *)item + h->at_off);
}

static void place(heap *h, size_t i, void *item)
{
    h->v[i] = item;
    *at_of(h, item) = (uint32_t)i;
}

static void sift_up(heap *h, size_t i)
{
    void *item = h->v[i];
    int64_t k = key_of(h, item);
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (key_of(h, h->v[parent]) <= k)
            break;
        place(h, i, h->v[parent]);
        i = parent;
    }
    place(h, i, item);
}

static void sift_down(heap *h, size_t i)
{
    void *item = h->v[i];
    int64_t k = key_of(h, item);
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && key_of(h, h->v[c + 1]) < key_of(h, h->v[c]))
            c++;
        if (key_of(h, h->v[c]) >= k)
            break;
        place(h, i, h->v[c]);
        i = c;
    }
    place(h, i, item);
}

void heap_init(heap *h, size_t key_off, size_t at_off)
{
    *h = (heap){NULL, 0, 0, key_off, at_off};
}

void heap_free(heap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

int heap_push(heap *h, void *item)
{
    if (h->n >= HEAP_NONE - 1 || array_grow(&h->v, &h->cap, h->n, sizeof *h->v) != 0)
        return -1;
    h->v[h->n++] = item;
    sift_up(h, h->n - 1);
    return 0;
}

void heap_remove(heap *h, void *item)
{
    uint32_t i = *at_of(h, item);
    if (i == HEAP_NONE)
        return;
    *at_of(h, item) = HEAP_NONE;
    void *last = h->v[--h->n];
    if (last == item)
        return;
    place(h, i, last);
    sift_up(h, i);
    sift_down(h, *at_of(h, last));
}

void heap_moved(heap *h, void *item)
{
    uint32_t i = *at_of(h, item);
    if (i == HEAP_NONE)
        return;
    sift_up(h, i);
    sift_down(h, *at_of(h, item));
}

void *heap_top(const heap *h)
{
    return h->n ? h->v[0] : NULL;
}

void *heap_pop(heap *h)
{
    void *top = heap_top(h);
    if (top)
        heap_remove(h, top);
    return top;
}
