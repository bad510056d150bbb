/* SPDX-License-Identifier: Apache-2.0 */
/* hash.h - FNV-1a, the one hash of names, keys and patterns in stsd's tables. */
#ifndef STSD_HASH_H
#define STSD_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a's 64-bit offset basis: the state before any byte. */
#define HASH_FNV1A_INIT 14695981039346656037ULL

/* The 64-bit FNV-1a hash of the len bytes at p (p may be NULL when len is 0). */
uint64_t hash_fnv1a(const void *p, size_t len);

/* FNV-1a continued from state h (HASH_FNV1A_INIT, a hash so far, or a seed mixed into
 * it) over the len bytes at p: hashing in pieces gives what hashing the whole does. */
uint64_t hash_fnv1a_more(uint64_t h, const void *p, size_t len);

/* The hash of the NUL-terminated string s, without its NUL. */
uint64_t hash_fnv1a_str(const char *s);

#endif
