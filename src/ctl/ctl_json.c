/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_json.c - a recursive-descent JSON reader: strings decoded (\uXXXX pairs to UTF-8),
 * numbers kept as their text so that they print as the server sent them. */
#include "ctl_json.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

typedef struct rd {
    const char *p, *end;
    int depth;
} rd;

static void ws(rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int hex4(rd *r, unsigned *out)
{
    if (r->end - r->p < 4)
        return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

static void put_utf8(buf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) { u[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { u[0] = (char)(0xC0 | cp >> 6); u[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    buf_append(b, u, n);
}

/* A string after its opening quote, into b. Returns 0 or -1. */
static int string(rd *r, buf *b)
{
    while (r->p < r->end) {
        char c = *r->p++;
        if (c == '"') {
            /* Terminated even when empty (an empty string appended nothing). */
            if (b->oom || buf_reserve(b, 0) != 0)
                return -1;
            b->data[b->len] = '\0';
            return 0;
        }
        if ((unsigned char)c < 0x20)
            return -1;
        if (c != '\\') {
            buf_append(b, &c, 1);
            continue;
        }
        if (r->p >= r->end)
            return -1;
        c = *r->p++;
        const char *plain = strchr("\"\\/bfnrt", c);
        if (plain && c) {
            static const char to[] = "\"\\/\b\f\n\r\t";
            buf_append(b, &to[plain - "\"\\/bfnrt"], 1);
            continue;
        }
        if (c != 'u')
            return -1;
        unsigned cp, lo;
        if (hex4(r, &cp) != 0)
            return -1;
        if (cp >= 0xD800 && cp < 0xDC00 && r->end - r->p >= 6 && r->p[0] == '\\' &&
            r->p[1] == 'u') {
            r->p += 2;
            if (hex4(r, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                return -1;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        put_utf8(b, cp);
    }
    return -1;
}

static cj *value(rd *r);

static cj *node(cj_type t)
{
    cj *v = calloc(1, sizeof *v);
    if (v)
        v->type = t;
    return v;
}

static int add_item(cj *v, cj *item, char *key)
{
    cj **items = realloc(v->items, (v->n + 1) * sizeof *items);
    if (!items)
        return -1;
    v->items = items;
    if (v->type == CJ_OBJECT) {
        char **keys = realloc(v->keys, (v->n + 1) * sizeof *keys);
        if (!keys)
            return -1;
        v->keys = keys;
        v->keys[v->n] = key;
    }
    v->items[v->n++] = item;
    return 0;
}

static cj *compound(rd *r, cj_type t, char close)
{
    cj *v = node(t);
    if (!v || ++r->depth > 64)
        goto fail;
    ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        r->depth--;
        return v;
    }
    for (;;) {
        char *key = NULL;
        if (t == CJ_OBJECT) {
            buf k = BUF_INIT;
            ws(r);
            if (r->p >= r->end || *r->p++ != '"' || string(r, &k) != 0) {
                buf_free(&k);
                goto fail;
            }
            key = k.data ? k.data : strdup("");
            ws(r);
            if (!key || r->p >= r->end || *r->p++ != ':') {
                free(key);
                goto fail;
            }
        }
        cj *item = value(r);
        if (!item || add_item(v, item, key) != 0) {
            free(key);
            cj_free(item);
            goto fail;
        }
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            r->depth--;
            return v;
        }
        goto fail;
    }
fail:
    cj_free(v);
    return NULL;
}

static int word(rd *r, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

static cj *value(rd *r)
{
    ws(r);
    if (r->p >= r->end)
        return NULL;
    char c = *r->p;
    if (c == '{') { r->p++; return compound(r, CJ_OBJECT, '}'); }
    if (c == '[') { r->p++; return compound(r, CJ_ARRAY, ']'); }
    if (c == '"') {
        r->p++;
        buf b = BUF_INIT;
        cj *v = node(CJ_STRING);
        if (!v || string(r, &b) != 0 || (!b.data && !(b.data = strdup("")))) {
            buf_free(&b);
            free(v);
            return NULL;
        }
        v->s = b.data;
        v->len = b.len;
        return v;
    }
    if (word(r, "null")) return node(CJ_NULL);
    cj *v;
    if (word(r, "true")) { if ((v = node(CJ_BOOL))) v->b = 1; return v; }
    if (word(r, "false")) return node(CJ_BOOL);
    const char *start = r->p;
    while (r->p < r->end && strchr("+-0123456789.eE", *r->p) && *r->p)
        r->p++;
    if (r->p == start || !(v = node(CJ_NUMBER)))
        return NULL;
    v->len = (size_t)(r->p - start);
    if (!(v->s = strndup(start, v->len))) {
        free(v);
        return NULL;
    }
    return v;
}

cj *cj_parse(const char *text, size_t len)
{
    rd r = {text, text + len, 0};
    cj *v = value(&r);
    ws(&r);
    if (v && r.p != r.end) {
        cj_free(v);
        return NULL;
    }
    return v;
}

void cj_free(cj *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        cj_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->s);
    free(v);
}

const cj *cj_get(const cj *v, const char *key)
{
    if (!v || v->type != CJ_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return v->items[i];
    return NULL;
}
