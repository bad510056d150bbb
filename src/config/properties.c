/* SPDX-License-Identifier: Apache-2.0 */
/* properties.c - the java.util.Properties text format, as JMeter users write it. */
#include "config/properties.h"

#include <stdint.h>
#include <string.h>

static int is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\f';
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits after "\u" at s[*i]; returns the code unit or -1. */
static long hex4(const char *s, size_t n, size_t *i)
{
    long v = 0;
    if (*i + 4 > n)
        return -1;
    for (int d = 0; d < 4; d++) {
        int h = hexval(s[*i + (size_t)d]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    *i += 4;
    return v;
}

static int put_utf8(buf *out, unsigned long cp)
{
    unsigned char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (unsigned char)cp; n = 1;
    } else if (cp < 0x800) {
        u[0] = (unsigned char)(0xC0 | cp >> 6); u[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2;
    } else if (cp < 0x10000) {
        u[0] = (unsigned char)(0xE0 | cp >> 12); u[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        u[0] = (unsigned char)(0xF0 | cp >> 18); u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)); u[3] = (unsigned char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return buf_append(out, u, n);
}

/* Java's loadConvert: resolves escapes in s[0..n) into out. */
static int unescape(const char *s, size_t n, buf *out, buf *err)
{
    buf_clear(out);
    if (buf_reserve(out, n) != 0)
        return buf_puts(err, "out of memory"), -1;
    out->data[0] = '\0';   /* an empty value must still read as "" */
    for (size_t i = 0; i < n;) {
        char ch = s[i++];
        if (ch != '\\' || i == n) {
            if (ch != '\\' && buf_append(out, &ch, 1) != 0)
                return buf_puts(err, "out of memory"), -1;
            continue;
        }
        ch = s[i++];
        if (ch == 'u') {
            long u = hex4(s, n, &i);
            if (u < 0)
                return buf_puts(err, "malformed \\uXXXX escape"), -1;
            /* Java strings are UTF-16: a pair of \u escapes makes one character beyond U+FFFF. */
            if (u >= 0xD800 && u <= 0xDBFF) {
                long lo = -1;
                if (i + 2 <= n && s[i] == '\\' && s[i + 1] == 'u') {
                    size_t j = i + 2;
                    lo = hex4(s, n, &j);
                    if (lo >= 0xDC00 && lo <= 0xDFFF)
                        i = j;
                }
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return buf_puts(err, "\\u escape: high surrogate without its low half"), -1;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else if (u >= 0xDC00 && u <= 0xDFFF) {
                return buf_puts(err, "\\u escape: low surrogate without its high half"), -1;
            } else if (u == 0) {
                return buf_puts(err, "\\u0000 is not allowed"), -1;
            }
            if (put_utf8(out, (unsigned long)u) != 0)
                return buf_puts(err, "out of memory"), -1;
            continue;
        }
        switch (ch) {
        case 't': ch = '\t'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 'f': ch = '\f'; break;
        default: break;
        }
        if (buf_append(out, &ch, 1) != 0)
            return buf_puts(err, "out of memory"), -1;
    }
    return 0;
}

/* Splits one logical line at its separator, as Properties.load does, and calls fn. */
static int props_pair(const char *l, size_t n, size_t line, props_fn fn, void *ctx,
                      buf *key, buf *val, buf *err)
{
    size_t k = 0, v = n;
    int bs = 0, sep = 0;
    for (; k < n; k++) {
        char ch = l[k];
        if (!bs && (ch == '=' || ch == ':')) {
            v = k + 1, sep = 1;
            break;
        }
        if (!bs && is_blank(ch)) {
            v = k + 1;
            break;
        }
        bs = ch == '\\' ? !bs : 0;
    }
    for (; v < n; v++) {
        if (is_blank(l[v]))
            continue;
        if (sep || (l[v] != '=' && l[v] != ':'))
            break;
        sep = 1;
    }
    if (unescape(l, k, key, err) != 0 || unescape(l + v, n - v, val, err) != 0)
        return -1;
    return fn(key->data, val->data, line, ctx);
}

/* Ends the natural line at text[i] (CR, LF or CRLF); returns the next line's start. */
static size_t skip_eol(const char *text, size_t len, size_t i)
{
    if (i < len && text[i] == '\n')
        return i + 1;
    if (i < len && text[i] == '\r')
        return i + 1 < len && text[i + 1] == '\n' ? i + 2 : i + 1;
    return i;
}

int properties_parse(const char *text, size_t len, props_fn fn, void *ctx, buf *err,
                     size_t *bad_line)
{
    buf lbuf = BUF_INIT, key = BUF_INIT, val = BUF_INIT;
    size_t i = 0, lineno = 1;
    int rc = 0;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && rc == 0) {
        size_t first = lineno;
        while (i < len && is_blank(text[i]))
            i++;
        if (i < len && (text[i] == '#' || text[i] == '!'))
            while (i < len && text[i] != '\n' && text[i] != '\r')
                i++;
        if (i >= len || text[i] == '\n' || text[i] == '\r') {
            i = skip_eol(text, len, i);
            lineno++;
            continue;
        }
        buf_clear(&lbuf);
        for (;;) {
            size_t s = i, bs = 0;
            while (i < len && text[i] != '\n' && text[i] != '\r')
                i++;
            while (bs < i - s && text[i - 1 - bs] == '\\')
                bs++;
            if (memchr(text + s, '\0', i - s)) {
                buf_puts(err, "NUL byte in the text");
                rc = -1;
                *bad_line = lineno;
                break;
            }
            /* An odd run of backslashes escapes the line end; at the end of text it is dropped. */
            if (buf_append(&lbuf, text + s, i - s - bs % 2) != 0) {
                buf_puts(err, "out of memory");
                rc = -1;
                *bad_line = lineno;
                break;
            }
            if (i < len) {
                i = skip_eol(text, len, i);
                lineno++;
            }
            if (bs % 2 == 0 || i >= len)
                break;
            while (i < len && is_blank(text[i]))
                i++;
        }
        if (rc == 0 && lbuf.len > 0) {
            rc = props_pair(lbuf.data, lbuf.len, first, fn, ctx, &key, &val, err);
            if (rc == -1 && bad_line)
                *bad_line = first;
        }
    }
    buf_free(&lbuf);
    buf_free(&key);
    buf_free(&val);
    return rc;
}

