/* SPDX-License-Identifier: Apache-2.0 */
/* batch_frame.c - a batch's bytes written and read, every length checked. */
#include "batch_frame.h"

#include <stdint.h>
#include <string.h>

#include "base/num.h"

#define FRAME_MAGIC "STSB1"

static void put_str(buf *b, const char *s, size_t len)
{
    buf_append(b, s, len);
    buf_append(b, "", 1);
}

static void put_num(buf *b, size_t n)
{
    buf_printf(b, "%zu", n);
    buf_append(b, "", 1);
}

void frame_begin(buf *b, size_t count)
{
    put_str(b, FRAME_MAGIC, sizeof FRAME_MAGIC - 1);
    put_num(b, count);
}

static void put_rest(buf *b, const buf *headers, const char *body, size_t body_len)
{
    if (headers && headers->len)
        buf_append(b, headers->data, headers->len);
    buf_append(b, "", 1);
    put_num(b, body_len);
    if (body_len)
        buf_append(b, body, body_len);
}

void frame_put_request(buf *b, const char *method, const char *target, size_t target_len,
                       const buf *headers, const char *body, size_t body_len)
{
    put_str(b, method, strlen(method));
    put_str(b, target, target_len);
    put_rest(b, headers, body, body_len);
}

void frame_put_answer(buf *b, unsigned status, const buf *headers, const char *body,
                      size_t body_len)
{
    put_num(b, status);
    put_rest(b, headers, body, body_len);
}

/* The NUL-terminated string at *off: its start, its length into *n; NULL if no NUL
 * ends it before len. */
static const char *get_str(const char *p, size_t len, size_t *off, size_t *n)
{
    if (*off >= len)
        return NULL;
    const char *s = p + *off;
    const char *z = memchr(s, '\0', len - *off);
    if (!z)
        return NULL;
    *n = (size_t)(z - s);
    *off += *n + 1;
    return s;
}

static int get_num(const char *p, size_t len, size_t *off, uint64_t max, uint64_t *v)
{
    size_t n;
    const char *s = get_str(p, len, off, &n);
    return s && n && num_parse_u64(s, n, 0, max, v) == 0 ? 0 : -1;
}

int frame_head(const char *p, size_t len, size_t *count, size_t *off)
{
    size_t n;
    uint64_t c;
    *off = 0;
    const char *m = get_str(p, len, off, &n);
    if (!m || n != sizeof FRAME_MAGIC - 1 || memcmp(m, FRAME_MAGIC, n) != 0 ||
        get_num(p, len, off, BATCH_MAX, &c) != 0 || c == 0)
        return -1;
    *count = (size_t)c;
    return 0;
}

int frame_next(const char *p, size_t len, size_t *off, int request, frame_item *it)
{
    size_t n;
    uint64_t v;
    memset(it, 0, sizeof *it);
    if (request) {
        if (!(it->method = get_str(p, len, off, &n)) || !n ||
            !(it->target = get_str(p, len, off, &it->target_len)) || !it->target_len)
            return -1;
    } else {
        if (get_num(p, len, off, 999, &v) != 0 || v < 100)
            return -1;
        it->status = (unsigned)v;
    }
    /* Headers: name and value pairs, until an empty name. */
    it->headers = p + *off;
    for (;;) {
        const char *name = get_str(p, len, off, &n);
        if (!name)
            return -1;
        if (!n)
            break;
        if (!get_str(p, len, off, &n))
            return -1;
    }
    it->headers_len = (size_t)(p + *off - it->headers) - 1;
    if (get_num(p, len, off, len, &v) != 0 || v > len - *off)
        return -1;
    it->body = p + *off;
    it->body_len = (size_t)v;
    *off += (size_t)v;
    return 0;
}

int frame_refused(long status, const char *body, size_t len)
{
    if (status == 400 || status == 403 || status == 404 || status == 405 || status == 413 ||
        status == 415)
        return 1;
    return status == 503 &&
           ((len == sizeof BATCH_STOPPING_TEXT - 1 &&
             memcmp(body, BATCH_STOPPING_TEXT, len) == 0) ||
            (len == sizeof BATCH_LATE_TEXT - 1 && memcmp(body, BATCH_LATE_TEXT, len) == 0));
}
