/* SPDX-License-Identifier: Apache-2.0 */
/* hash.c - FNV-1a (Fowler, Noll, Vo), 64-bit. */
#include "base/hash.h"

#include <string.h>

#define FNV1A_PRIME 1099511628211ULL

uint64_t hash_fnv1a_more(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * FNV1A_PRIME;
    return h;
}

uint64_t hash_fnv1a(const void *p, size_t len)
{
    return hash_fnv1a_more(HASH_FNV1A_INIT, p, len);
}

uint64_t hash_fnv1a_str(const char *s)
{
    return hash_fnv1a(s, strlen(s));
}
