/* SPDX-License-Identifier: Apache-2.0 */
/* heap.h - an indexed min-heap of deadlines over caller-owned items, for timers. */
#ifndef STSD_HEAP_H
#define STSD_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* The heap keeps pointers to items it does not own. Each item holds its key (int64_t)
 * and its place in the heap (uint32_t, HEAP_NONE when out), at offsets given once, so
 * an item is removed in O(log n) without a search and items keep their own layout.
 * Not thread-safe: the owner locks. */
#define HEAP_NONE UINT32_MAX

typedef struct heap {
    void **v;
    size_t n, cap;
    size_t key_off, at_off;
} heap;

/* An empty heap over items whose key and place are at those offsets. Never fails. */
void heap_init(heap *h, size_t key_off, size_t at_off);
/* Frees the heap's array (not the items). */
void heap_free(heap *h);

/* Adds item, by its key. Returns 0, or -1 on ENOMEM or past HEAP_NONE - 1 items (h
 * unchanged). */
int heap_push(heap *h, void *item);
/* Takes item out if it is in (its place becomes HEAP_NONE); otherwise does nothing. */
void heap_remove(heap *h, void *item);
/* Puts item back in its place after its key changed; does nothing if it is not in. */
void heap_moved(heap *h, void *item);
/* The item with the least key, or NULL when empty. */
void *heap_top(const heap *h);
/* Takes the item with the least key out (its place becomes HEAP_NONE) and returns it,
 * or NULL when empty. */
void *heap_pop(heap *h);

#endif
