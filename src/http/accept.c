/* SPDX-License-Identifier: Apache-2.0 */
/* accept.c - the Accept header weighed by the rules of RFC 9110: media ranges, their
 * specificity and q, so that only a client that really prefers JSON gets it. */
#include "accept.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

/* One media range as parsed: type and subtype as spans of the header, and its q. */
typedef struct accept_range {
    const char *type, *sub;
    size_t tlen, slen;
    int q;          /* thousandths */
    int bad;        /* malformed: left out */
} accept_range;

static const char *skip_ows(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* RFC 9110 tchar: what a token (type, subtype, parameter name or value) is made of. */
static int is_tchar(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static const char *token_end(const char *s)
{
    while (is_tchar((unsigned char)*s))
        s++;
    return s;
}

/* The qvalue s[0..len) in thousandths, or -1 if it is not one: "0" or "1", then
 * optionally "." and up to three digits, at most 1. */
static int parse_qvalue(const char *s, size_t len)
{
    if (len == 0 || (s[0] != '0' && s[0] != '1') || len > 5 || (len > 1 && s[1] != '.'))
        return -1;
    int v = (s[0] - '0') * 1000;
    int scale = 100;
    for (size_t i = 2; i < len; i++, scale /= 10) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v += (s[i] - '0') * scale;
    }
    return v > 1000 ? -1 : v;
}

/* Skips a quoted-string that starts at s ('"'); NULL if it is never closed. */
static const char *quoted_end(const char *s)
{
    for (s++; *s; s++) {
        if (*s == '\\' && s[1])
            s++;
        else if (*s == '"')
            return s + 1;
    }
    return NULL;
}

/* Parses the parameters after a range's subtype (";name=value" each) into r->q; marks
 * the range bad on a malformed one. Returns where parsing stopped (',' or the end), or
 * NULL at an unclosed quote: the rest of the header cannot be trusted. */
static const char *parse_params(const char *p, accept_range *r)
{
    for (;;) {
        p = skip_ows(p);
        if (*p != ';')
            break;
        p = skip_ows(p + 1);
        const char *name = p;
        p = token_end(p);
        size_t nlen = (size_t)(p - name);
        if (nlen == 0 || *p != '=') {
            r->bad = 1;
            break;
        }
        const char *val = ++p;
        if (*p == '"') {
            p = quoted_end(p);
            if (!p)
                return NULL;
        } else {
            p = token_end(p);
        }
        if (nlen == 1 && (name[0] == 'q' || name[0] == 'Q')) {
            r->q = parse_qvalue(val, (size_t)(p - val));
            if (r->q < 0)
                r->bad = 1;
        }
    }
    if (*p && *p != ',')
        r->bad = 1;
    /* Past whatever is left of a bad range, quotes respected. */
    while (*p && *p != ',') {
        if (*p == '"') {
            p = quoted_end(p);
            if (!p)
                return NULL;
        } else {
            p++;
        }
    }
    return p;
}

/* Parses the range at p into r; returns where the next one may start, or NULL at the
 * end of the header (or at a quote never closed). */
static const char *parse_range(const char *p, accept_range *r)
{
    memset(r, 0, sizeof *r);
    r->q = 1000;
    r->type = p;
    p = token_end(p);
    r->tlen = (size_t)(p - r->type);
    if (*p == '/') {
        r->sub = ++p;
        p = token_end(p);
        r->slen = (size_t)(p - r->sub);
    }
    if (r->tlen == 0 || r->slen == 0 ||
        (r->tlen == 1 && r->type[0] == '*' && !(r->slen == 1 && r->sub[0] == '*')))
        r->bad = 1;
    return parse_params(p, r);
}

static int span_is(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

/* How specifically r names type/subtype: 3 exactly, 2 by its type, 1 as the star-star
 * range, 0 not at all. */
static int specificity(const accept_range *r, const char *type, const char *subtype)
{
    int any_sub = r->slen == 1 && r->sub[0] == '*';
    if (r->tlen == 1 && r->type[0] == '*')
        return any_sub ? 1 : 0;
    if (!span_is(r->type, r->tlen, type))
        return 0;
    if (any_sub)
        return 2;
    return span_is(r->sub, r->slen, subtype) ? 3 : 0;
}

int accept_weight(const char *accept, const char *type, const char *subtype)
{
    int best_spec = 0, best_q = 0;
    for (const char *p = accept; p && *p;) {
        p = skip_ows(p);
        if (*p == ',') {        /* empty list elements are allowed */
            p++;
            continue;
        }
        if (!*p)
            break;
        accept_range r;
        const char *next = parse_range(p, &r);
        int spec = r.bad || !next ? 0 : specificity(&r, type, subtype);
        if (spec > best_spec || (spec == best_spec && spec > 0 && r.q > best_q)) {
            best_spec = spec;
            best_q = r.q;
        }
        p = next;
    }
    return best_q;
}

int accept_prefers_json(const char *accept)
{
    return accept_weight(accept, "application", "json") > accept_weight(accept, "text", "html");
}
