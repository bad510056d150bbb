/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c - growable byte buffer. */
#include "base/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf_reserve(buf *b, size_t extra)
{
    if (extra > (size_t)-1 / 2 - b->len) {
        b->oom = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

int buf_append(buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) != 0)
        return -1;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int buf_puts(buf *b, const char *s)
{
    return buf_append(b, s, strlen(s));
}

int buf_printf(buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if ((size_t)n < sizeof small)
        return buf_append(b, small, (size_t)n);
    if (buf_reserve(b, (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void buf_clear(buf *b)
{
    b->len = 0;
    b->oom = 0;
    if (b->data)
        b->data[0] = '\0';
}

int array_grow(void *items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t want = *cap ? *cap * 2 : 16;
    if (want > (size_t)-1 / size)
        return -1;
    void *old;
    memcpy(&old, items, sizeof old);
    void *p = realloc(old, want * size);
    if (!p)
        return -1;
    memcpy(items, &p, sizeof p);
    *cap = want;
    return 0;
}

void buf_free(buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->oom = 0;
}
