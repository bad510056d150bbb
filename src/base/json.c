/* SPDX-License-Identifier: Apache-2.0 */
/* json.c - the one JSON writer: every JSON answer and JSON log line is built here. */
#include "base/json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

void json_init(json *j, buf *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = 1;
}

/* Writes the comma that separates this value from the previous one, if any. Values
 * that follow a key need none: json_key wrote it. */
static void sep(json *j)
{
    if (j->first[j->depth])
        j->first[j->depth] = 0;
    else
        buf_append(j->out, ",", 1);
}

static void open_level(json *j, char c)
{
    sep(j);
    buf_append(j->out, &c, 1);
    if (j->depth + 1 >= JSON_MAX_DEPTH) {
        j->out->oom = 1;
        return;
    }
    j->first[++j->depth] = 1;
}

static void close_level(json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    buf_append(j->out, &c, 1);
}

void json_obj_begin(json *j) { open_level(j, '{'); }
void json_obj_end(json *j)   { close_level(j, '}'); }
void json_arr_begin(json *j) { open_level(j, '['); }
void json_arr_end(json *j)   { close_level(j, ']'); }

static void put_string(buf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    buf_append(out, "\"", 1);
    size_t i = 0, run = 0;      /* bytes [i - run, i) go out as they are */
    while (i < len) {
        unsigned char c = p[i];
        size_t n = c >= 0x20 && c != '"' && c != '\\' && c < 0x7f ? 1 : 0;
        int ls = 0;
        if (c >= 0x80) {
            n = utf8_seq(s + i, len - i);
            /* U+2028 and U+2029 end lines in JavaScript: escape them. */
            if (n == 3 && c == 0xe2 && p[i + 1] == 0x80 && (p[i + 2] & 0xfe) == 0xa8) {
                n = 0;
                ls = 1;
            }
        }
        if (n) {
            run += n;
            i += n;
            continue;
        }
        buf_append(out, s + i - run, run);
        run = 0;
        char esc[8];
        size_t elen = 2;
        esc[0] = '\\';
        switch (c) {
        case '"':  esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            if (ls) {                               /* U+2028 / U+2029 */
                memcpy(esc, p[i + 2] == 0xa8 ? "\\u2028" : "\\u2029", 6);
                elen = 6;
                i += 2;
            } else if (c >= 0x80) {                 /* not UTF-8: U+FFFD */
                memcpy(esc, "\\ufffd", 6);
                elen = 6;
            } else {                                /* control bytes and DEL */
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                elen = 6;
            }
            break;
        }
        buf_append(out, esc, elen);
        i++;
    }
    buf_append(out, s + i - run, run);
    buf_append(out, "\"", 1);
}

void json_key(json *j, const char *key)
{
    sep(j);
    put_string(j->out, key, strlen(key));
    buf_append(j->out, ":", 1);
    /* The value that follows must not write a comma. */
    j->first[j->depth] = 1;
}

void json_str(json *j, const char *s, size_t len)
{
    sep(j);
    put_string(j->out, s, len);
}

void json_cstr(json *j, const char *s)
{
    json_str(j, s, strlen(s));
}

void json_int(json *j, long long v)
{
    sep(j);
    buf_printf(j->out, "%lld", v);
}

void json_uint(json *j, unsigned long long v)
{
    sep(j);
    buf_printf(j->out, "%llu", v);
}

void json_double(json *j, double v)
{
    if (!isfinite(v))
        return json_null(j);
    sep(j);
    char num[64];
    snprintf(num, sizeof num, "%.6g", v);
    buf_puts(j->out, num);
}

void json_fixed(json *j, double v, int decimals)
{
    if (!isfinite(v))
        return json_null(j);
    sep(j);
    char num[384];
    snprintf(num, sizeof num, "%.*f", decimals, v);
    buf_puts(j->out, num);
}

void json_bool(json *j, int v)
{
    sep(j);
    buf_puts(j->out, v ? "true" : "false");
}

void json_null(json *j)
{
    sep(j);
    buf_puts(j->out, "null");
}

int json_base64(buf *out, const char *s, size_t len)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)s;
    if (buf_reserve(out, (len + 2) / 3 * 4) != 0) {
        out->oom = 1;
        return -1;
    }
    char *o = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        unsigned v = (unsigned)p[i] << 16 | (unsigned)p[i + 1] << 8 | p[i + 2];
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = tab[(v >> 6) & 63];
        *o++ = tab[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)p[i] << 16 | (i + 1 < len ? (unsigned)p[i + 1] << 8 : 0);
        *o++ = tab[v >> 18];
        *o++ = tab[(v >> 12) & 63];
        *o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
        *o++ = '=';
    }
    out->len = (size_t)(o - out->data);
    out->data[out->len] = '\0';
    return 0;
}

static void put_base64(json *j, const char *s, size_t len)
{
    buf_append(j->out, "\"", 1);
    json_base64(j->out, s, len);
    buf_append(j->out, "\"", 1);
}

void json_line(json *j, const char *key, const char *s, size_t len)
{
    if (utf8_valid(s, len)) {
        json_key(j, key);
        json_str(j, s, len);
        return;
    }
    char k[64];
    snprintf(k, sizeof k, "%s_base64", key);
    json_key(j, k);
    sep(j);
    put_base64(j, s, len);
}

void json_line_elem(json *j, const char *s, size_t len)
{
    if (utf8_valid(s, len))
        return json_str(j, s, len);
    json_obj_begin(j);
    json_key(j, "base64");
    sep(j);
    put_base64(j, s, len);
    json_obj_end(j);
}
