/* SPDX-License-Identifier: Apache-2.0 */
/* alloc.h - the store engine's allocation seam and huge-page advice, below index, leaf and list. */
#ifndef STSD_ALLOC_H
#define STSD_ALLOC_H

#include <stddef.h>

/* The list engine (list, leaf, index) allocates only through these, so unit tests can
 * swap them to inject ENOMEM. Default to malloc and realloc; memory is freed with free. */
extern void *(*alloc_malloc_fn)(size_t);
extern void *(*alloc_realloc_fn)(void *, size_t);

/* Advises transparent huge pages for the 2 MiB-aligned middle of p[0..n), a block about
 * to be filled: on virtual machines page faults, not copying, dominate that cost. Advice
 * only; errors are ignored and small blocks are left alone. */
void alloc_advise_huge(void *p, size_t n);

#endif
