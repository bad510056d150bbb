/* SPDX-License-Identifier: Apache-2.0 */
/* ui.c - serves the dashboard: the redirect from /, and the embedded files under /ui/
 * with gzip, ETags, caching and the security headers every page of it carries. */
#include "http/ui.h"

#include <string.h>
#include <strings.h>

#include "ui_assets.h"

/* Scripts, styles and images only from stsd itself; no framing by other sites. */
#define UI_CSP "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
#define UI_CACHE_HASHED "public, max-age=31536000, immutable"
#define UI_CACHE_INDEX "no-cache"

static const char not_found[] = "404 not found\n";
static const char not_allowed[] = "405 method not allowed\n";

int ui_owns(const char *path, size_t len)
{
    if (len == 1 && path[0] == '/')
        return 1;
    if (len == 3 && memcmp(path, "/ui", 3) == 0)
        return 1;
    return len >= 4 && memcmp(path, "/ui/", 4) == 0;
}

static void add_header(ui_reply *out, const char *name, const char *value)
{
    if (out->nheaders < UI_MAX_HEADERS) {
        out->headers[out->nheaders][0] = name;
        out->headers[out->nheaders][1] = value;
        out->nheaders++;
    }
}

/* Skips spaces and tabs. */
static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* 1 if the parameters of a coding, s[0..end) (";q=0", "; q=0.000"), weigh it zero. */
static int zero_weight(const char *s, const char *end)
{
    for (;;) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        if (!semi)
            return 0;
        s = skip_ws(semi + 1);
        if (s + 1 < end && (*s == 'q' || *s == 'Q') && s[1] == '=') {
            s += 2;
            if (s >= end || *s != '0')
                return 0;
            for (s++; s < end && (*s == '.' || *s == '0'); s++)
                ;
            while (s < end && (*s == ' ' || *s == '\t'))
                s++;
            return s == end || *s == ';';
        }
    }
}

int ui_accepts_gzip(const char *ae)
{
    if (!ae)
        return 0;
    int star = 0, gzip = -1;
    for (const char *s = ae; *s;) {
        s = skip_ws(s);
        const char *end = strchr(s, ',');
        if (!end)
            end = s + strlen(s);
        const char *name_end = s;
        while (name_end < end && *name_end != ';' && *name_end != ' ' && *name_end != '\t')
            name_end++;
        size_t n = (size_t)(name_end - s);
        int ok = !zero_weight(name_end, end);
        if ((n == 4 && strncasecmp(s, "gzip", 4) == 0) ||
            (n == 6 && strncasecmp(s, "x-gzip", 6) == 0))
            gzip = ok;
        else if (n == 1 && *s == '*')
            star = ok;
        s = *end ? end + 1 : end;
    }
    return gzip >= 0 ? gzip : star;
}

/* 1 if an If-None-Match value names etag (or is "*"); weak tags compare equal too. */
static int etag_matches(const char *inm, const char *etag)
{
    if (!inm)
        return 0;
    size_t elen = strlen(etag);
    for (const char *s = inm; *s;) {
        s = skip_ws(s);
        if (*s == '*')
            return 1;
        if (s[0] == 'W' && s[1] == '/')
            s += 2;
        if (strncmp(s, etag, elen) == 0 && (s[elen] == '\0' || s[elen] == ',' ||
                                            s[elen] == ' ' || s[elen] == '\t'))
            return 1;
        const char *comma = strchr(s, ',');
        if (!comma)
            break;
        s = comma + 1;
    }
    return 0;
}

static const ui_asset *find_asset(const char *name, size_t len)
{
    for (unsigned i = 0; i < ui_asset_count; i++)
        if (strlen(ui_assets[i].name) == len && memcmp(ui_assets[i].name, name, len) == 0)
            return &ui_assets[i];
    return NULL;
}

static void plain(ui_reply *out, unsigned status, const char *text)
{
    out->status = status;
    out->body = text;
    out->len = strlen(text);
    add_header(out, "Content-Type", "text/plain; charset=utf-8");
    add_header(out, "Cache-Control", UI_CACHE_INDEX);
}

void ui_route(const char *method, const char *path, size_t len, const char *accept_encoding,
              const char *if_none_match, ui_reply *out)
{
    memset(out, 0, sizeof *out);
    add_header(out, "Content-Security-Policy", UI_CSP);
    add_header(out, "X-Content-Type-Options", "nosniff");
    add_header(out, "Referrer-Policy", "no-referrer");
    add_header(out, "X-Frame-Options", "DENY");
    int head = strcmp(method, "HEAD") == 0;
    if (!head && strcmp(method, "GET") != 0) {
        add_header(out, "Allow", "GET, HEAD");
        return plain(out, 405, not_allowed);
    }
    if (len < 4) {                           /* "/" and "/ui" */
        add_header(out, "Location", "/ui/");
        return plain(out, 302, "302 see /ui/\n");
    }
    const char *name = path + 4;
    size_t nlen = len - 4;
    if (nlen == 0) {
        name = "index.html";
        nlen = strlen(name);
    }
    const ui_asset *a = find_asset(name, nlen);
    if (!a)
        return plain(out, 404, not_found);
    add_header(out, "Cache-Control", a->immutable ? UI_CACHE_HASHED : UI_CACHE_INDEX);
    add_header(out, "ETag", a->etag);
    add_header(out, "Vary", "Accept-Encoding");
    if (etag_matches(if_none_match, a->etag)) {
        out->status = 304;
        return;
    }
    out->status = 200;
    add_header(out, "Content-Type", a->type);
    if (ui_accepts_gzip(accept_encoding)) {
        add_header(out, "Content-Encoding", "gzip");
        out->body = a->gz;
        out->len = a->gz_len;
    } else {
        out->body = a->raw;
        out->len = a->raw_len;
    }
}

size_t ui_first_load_bytes(void)
{
    size_t n = 0;
    for (unsigned i = 0; i < ui_asset_count; i++)
        n += ui_assets[i].gz_len;
    return n;
}
