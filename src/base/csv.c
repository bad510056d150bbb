/* SPDX-License-Identifier: Apache-2.0 */
/* csv.c - RFC 4180 fields, read in place: named columns (INITFILE HEADER=TRUE) cut the
 * lines of a list with these, at every lookup, so nothing here allocates. */
#include "base/csv.h"

#include <string.h>

#include "base/hash.h"

int csv_sep_ok(char sep)
{
    return sep != '"' && sep != '\r' && sep != '\n' && sep != '\0';
}

void csv_start(csv_cur *c, const char *s, size_t len, char sep)
{
    c->p = s;
    c->end = s + len;
    c->sep = sep;
    c->done = 0;
}

/* The quoted field whose text starts at c->p (after its opening quote). */
static int next_quoted(csv_cur *c, csv_field *f)
{
    const char *p = c->p;
    f->raw = p;
    f->quoted = 1;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(c->end - p));
        if (!q)
            return -1;                    /* never closed */
        if (q + 1 < c->end && q[1] == '"') {
            p = q + 2;                    /* a doubled quote: part of the value */
            continue;
        }
        f->len = (size_t)(q - f->raw);
        if (q + 1 == c->end) {
            c->done = 1;
        } else if (q[1] == c->sep) {
            c->p = q + 2;
        } else {
            return -1;                    /* text after the closing quote */
        }
        return 1;
    }
}

int csv_next(csv_cur *c, csv_field *f)
{
    if (c->done)
        return 0;
    if (c->p < c->end && *c->p == '"') {
        c->p++;
        return next_quoted(c, f);
    }
    const char *s = c->p;
    const char *e = memchr(s, c->sep, (size_t)(c->end - s));
    f->raw = s;
    f->quoted = 0;
    if (!e) {
        f->len = (size_t)(c->end - s);
        c->done = 1;
    } else {
        f->len = (size_t)(e - s);
        c->p = e + 1;
    }
    return 1;
}

long csv_count(const char *s, size_t len, char sep)
{
    csv_cur c;
    csv_field f;
    long n = 0;
    int rc;
    csv_start(&c, s, len, sep);
    while ((rc = csv_next(&c, &f)) == 1)
        n++;
    return rc < 0 ? -1 : n;
}

int csv_get(const char *s, size_t len, char sep, size_t k, csv_field *f)
{
    csv_cur c;
    csv_start(&c, s, len, sep);
    for (size_t i = 0;; i++) {
        if (csv_next(&c, f) != 1)
            return -1;
        if (i == k)
            return 0;
    }
}

/* Calls fn on each piece of f's value: the runs between doubled quotes, each followed
 * by one quote but the last. Stops at fn's first nonzero and returns it. */
static int each_piece(const csv_field *f, int (*fn)(const char *p, size_t n, void *ctx),
                      void *ctx)
{
    const char *p = f->raw, *end = f->raw + f->len;
    while (f->quoted) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q)
            break;
        int rc = fn(p, (size_t)(q + 1 - p), ctx);   /* the run and one quote */
        if (rc)
            return rc;
        p = q + 2;
    }
    return fn(p, (size_t)(end - p), ctx);
}

typedef struct eq_state {
    const char *v;
    size_t left;
} eq_state;

static int eq_piece(const char *p, size_t n, void *ctx)
{
    eq_state *s = ctx;
    if (n > s->left || memcmp(p, s->v, n) != 0)
        return 1;
    s->v += n;
    s->left -= n;
    return 0;
}

int csv_field_eq(const csv_field *f, const char *v, size_t vlen)
{
    if (!f->quoted)
        return f->len == vlen && memcmp(f->raw, v, vlen) == 0;
    eq_state s = {v, vlen};
    return each_piece(f, eq_piece, &s) == 0 && s.left == 0;
}

static int hash_piece(const char *p, size_t n, void *ctx)
{
    uint64_t *h = ctx;
    *h = hash_fnv1a_more(*h, p, n);
    return 0;
}

uint64_t csv_field_hash(const csv_field *f)
{
    uint64_t h = HASH_FNV1A_INIT;
    each_piece(f, hash_piece, &h);
    return h;
}

static int append_piece(const char *p, size_t n, void *ctx)
{
    return buf_append(ctx, p, n) != 0;
}

int csv_field_append(buf *out, const csv_field *f)
{
    return f->len == 0 ? 0 : each_piece(f, append_piece, out) ? -1 : 0;
}

int csv_put(buf *out, const char *v, size_t vlen, char sep)
{
    int quote = 0;
    for (size_t i = 0; i < vlen && !quote; i++)
        quote = v[i] == sep || v[i] == '"' || v[i] == '\r' || v[i] == '\n';
    if (!quote)
        return buf_append(out, v, vlen);
    int rc = buf_append(out, "\"", 1);
    for (size_t i = 0; i < vlen && rc == 0; i++) {
        const char *q = memchr(v + i, '"', vlen - i);
        size_t n = q ? (size_t)(q - (v + i)) + 1 : vlen - i;
        rc = buf_append(out, v + i, n);
        if (rc == 0 && q)
            rc = buf_append(out, "\"", 1);     /* the quote, doubled */
        i += n - 1;
    }
    return rc == 0 ? buf_append(out, "\"", 1) : -1;
}
