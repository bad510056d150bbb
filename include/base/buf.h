/* SPDX-License-Identifier: Apache-2.0 */
/* buf.h - a growable byte buffer, the one way modules build strings and pages. */
#ifndef STSD_BUF_H
#define STSD_BUF_H

#include <stddef.h>

typedef struct buf {
    char *data;   /* owned; NUL-terminated after every append, so printable as a C string */
    size_t len;
    size_t cap;
    int oom;      /* sticky: an append failed since the last buf_clear */
} buf;

#define BUF_INIT {NULL, 0, 0, 0}

/* Makes room for extra more bytes (plus the NUL). Returns 0, or -1 on ENOMEM (b unchanged). */
int buf_reserve(buf *b, size_t extra);
/* Appends n bytes. Returns 0, or -1 on ENOMEM (b unchanged). */
int buf_append(buf *b, const void *p, size_t n);
/* Appends a C string. Returns 0 or -1 as buf_append. */
int buf_puts(buf *b, const char *s);
/* Appends printf-style text. Returns 0 or -1 as buf_append. */
int buf_printf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties b (and its oom flag) but keeps its memory for reuse. */
void buf_clear(buf *b);
/* Frees the memory and leaves b empty and reusable. */
void buf_free(buf *b);

/* Makes room in an array for one more element: *items (a pointer to the array's first
 * element, passed as &ptr) holding n elements of size bytes in *cap slots. Doubles the
 * room (from 16) when full. Returns 0, or -1 on ENOMEM (the array is unchanged). */
int array_grow(void *items, size_t *cap, size_t n, size_t size);

#endif
