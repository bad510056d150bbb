/* SPDX-License-Identifier: Apache-2.0 */
/* alloc.c - the store engine's allocation seam and huge-page advice. */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *(*alloc_malloc_fn)(size_t) = malloc;
void *(*alloc_realloc_fn)(void *, size_t) = realloc;

void alloc_advise_huge(void *p, size_t n)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
    if (n >= 2 * huge && e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
}
