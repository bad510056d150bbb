/* SPDX-License-Identifier: Apache-2.0 */
/* params.c - request parameters: form decoding (query, urlencoded, multipart). */
#include "cmd/params.h"

#include <string.h>
#include <strings.h>

static const char *const param_names[PARAM_COUNT] = {
    [PARAM_FILENAME] = "FILENAME",   [PARAM_LINE] = "LINE",
    [PARAM_READ_MODE] = "READ_MODE", [PARAM_KEEP] = "KEEP",
    [PARAM_NB_LINES] = "NB_LINES",   [PARAM_ADD_MODE] = "ADD_MODE",
    [PARAM_UNIQUE] = "UNIQUE",       [PARAM_FIND_MODE] = "FIND_MODE",
    [PARAM_ADD_TIMESTAMP] = "ADD_TIMESTAMP",
    [PARAM_FORMAT] = "FORMAT", [PARAM_OFFSET] = "OFFSET", [PARAM_LIMIT] = "LIMIT",
    [PARAM_MATCH] = "MATCH",
    [PARAM_TIMEOUT] = "TIMEOUT",     [PARAM_LEASE] = "LEASE",
    [PARAM_TOKEN] = "TOKEN",         [PARAM_OWNER] = "OWNER",
    [PARAM_FILE] = "FILE",
    [PARAM_NAME] = "NAME",           [PARAM_VALUE] = "VALUE",
    [PARAM_VERSION] = "VERSION",     [PARAM_IF_VERSION] = "IF_VERSION",
    [PARAM_PREFIX] = "PREFIX",       [PARAM_BY] = "BY",
    [PARAM_MIN] = "MIN",             [PARAM_MAX] = "MAX",
    [PARAM_PARTIES] = "PARTIES",     [PARAM_ON_TIMEOUT] = "ON_TIMEOUT",
    [PARAM_RUN] = "RUN",
    [PARAM_LINES] = "LINES",         [PARAM_TTL] = "TTL",
    [PARAM_HEADER] = "HEADER",       [PARAM_SEPARATOR] = "SEPARATOR",
    [PARAM_COLUMN] = "COLUMN",       [PARAM_FIELDS] = "FIELDS",
    [PARAM_NODE] = "NODE",           [PARAM_RAFT] = "RAFT",
    [PARAM_URL] = "URL",
};

void params_reset(params *p)
{
    memset(p->set, 0, sizeof p->set);
    buf_clear(&p->store);
    buf_clear(&p->more_lines);
    p->n_more_lines = 0;
}

void params_free(params *p)
{
    buf_free(&p->store);
    buf_free(&p->more_lines);
}

size_t params_line_count(const params *p)
{
    return p->set[PARAM_LINE] ? 1 + p->n_more_lines : 0;
}

const char *params_line_at(const params *p, size_t i, size_t *len)
{
    if (i == 0)
        return params_get(p, PARAM_LINE, len);
    size_t at[2];
    memcpy(at, p->more_lines.data + (i - 1) * sizeof at, sizeof at);
    *len = at[1];
    return p->store.data + at[0];
}

const char *params_get(const params *p, param_id id, size_t *len)
{
    if (!p->set[id])
        return NULL;
    if (len)
        *len = p->len[id];
    return p->store.data + p->off[id];
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

params_rc params_decode(const char *s, size_t len, buf *out)
{
    if (buf_reserve(out, len) != 0)
        return PARAMS_NOMEM;
    /* Decoding never lengthens: write straight into the reserved room. */
    char *w = out->data + out->len;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            int hi = i + 2 < len ? hexval((unsigned char)s[i + 1]) : -1;
            int lo = i + 2 < len ? hexval((unsigned char)s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                out->len = (size_t)(w - out->data);
                out->data[out->len] = '\0';
                return PARAMS_BAD_ESCAPE;
            }
            c = (char)(hi << 4 | lo);
            i += 2;
        }
        *w++ = c;
    }
    out->len = (size_t)(w - out->data);
    out->data[out->len] = '\0';
    return PARAMS_OK;
}

static int param_lookup(const char *name, size_t len)
{
    /* The first byte first: most names differ there, and strlen is then never run. */
    for (int i = 0; i < PARAM_COUNT; i++)
        if (param_names[i][0] == name[0] && strlen(param_names[i]) == len &&
            memcmp(param_names[i], name, len) == 0)
            return i;
    return -1;
}

/* Records raw value bytes for parameter id (already decoded). */
static params_rc param_store(params *p, int id, const char *v, size_t len, int decode)
{
    /* Every other parameter keeps its first value; a repeated LINE is kept too, for
     * ADDMULTI (every other command still reads only the first). */
    int again = id == PARAM_LINE && p->set[id];
    if (id < 0 || (p->set[id] && !again))
        return PARAMS_OK;
    size_t off = p->store.len;
    params_rc rc = decode ? params_decode(v, len, &p->store)
                          : (buf_append(&p->store, v, len) == 0 ? PARAMS_OK : PARAMS_NOMEM);
    if (rc != PARAMS_OK)
        return rc;
    /* Keep a NUL after each value so FILENAME can be used as a C string when it has none. */
    if (buf_append(&p->store, "", 1) != 0)
        return PARAMS_NOMEM;
    if (again) {
        size_t at[2] = {off, p->store.len - 1 - off};
        if (buf_append(&p->more_lines, at, sizeof at) != 0)
            return PARAMS_NOMEM;
        p->n_more_lines++;
        return PARAMS_OK;
    }
    p->off[id] = off;
    p->len[id] = p->store.len - 1 - off;
    p->set[id] = 1;
    return PARAMS_OK;
}

/* The parameter a name in the query means (-1: none of ours), decoded first only if it
 * has escapes: into store's spare room, given back at once, so that a request's names
 * cost no allocation of their own. */
static params_rc name_lookup(params *p, const char *s, size_t len, int *id)
{
    *id = -1;
    if (!memchr(s, '%', len) && !memchr(s, '+', len)) {
        if (len)
            *id = param_lookup(s, len);
        return PARAMS_OK;
    }
    size_t keep = p->store.len;
    params_rc rc = params_decode(s, len, &p->store);
    if (rc == PARAMS_OK && p->store.len > keep)
        *id = param_lookup(p->store.data + keep, p->store.len - keep);
    if (p->store.data) {               /* NULL only if the first reserve failed */
        p->store.len = keep;
        p->store.data[keep] = '\0';
    }
    return rc;
}

params_rc params_parse_urlencoded(params *p, const char *s, size_t len)
{
    params_rc rc = PARAMS_OK;
    const char *end = s + len;
    while (s < end && rc == PARAMS_OK) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *pair_end = amp ? amp : end;
        const char *eq = memchr(s, '=', (size_t)(pair_end - s));
        const char *name_end = eq ? eq : pair_end;
        int id;
        rc = name_lookup(p, s, (size_t)(name_end - s), &id);
        if (rc == PARAMS_OK && id >= 0) {
            const char *v = eq ? eq + 1 : pair_end;
            rc = param_store(p, id, v, (size_t)(pair_end - v), 1);
        }
        s = amp ? amp + 1 : end;
    }
    return rc;
}

/* Finds needle in hay (both with lengths); NULL if absent. */
static const char *find_bytes(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    return memmem(hay, hlen, needle, nlen);
}

/* The value of attribute attr (e.g. boundary, name) in a header value, quoted or not. */
static int header_attr(const char *h, size_t hlen, const char *attr, const char **v,
                       size_t *vlen)
{
    size_t alen = strlen(attr);
    const char *end = h + hlen;
    for (const char *q = h; q + alen < end; q++) {
        if (strncasecmp(q, attr, alen) != 0 || q[alen] != '=')
            continue;
        if (q > h && q[-1] != ' ' && q[-1] != ';' && q[-1] != '\t')
            continue;
        const char *s = q + alen + 1;
        const char *e;
        if (s < end && *s == '"') {
            s++;
            e = memchr(s, '"', (size_t)(end - s));
            if (!e)
                return -1;
        } else {
            e = s;
            while (e < end && *e != ';' && *e != ' ' && *e != '\t' && *e != '\r')
                e++;
        }
        *v = s;
        *vlen = (size_t)(e - s);
        return 0;
    }
    return -1;
}

params_rc params_parse_multipart(params *p, const char *ctype, const char *body, size_t len)
{
    const char *b;
    size_t blen;
    if (header_attr(ctype, strlen(ctype), "boundary", &b, &blen) != 0 || blen == 0 ||
        blen > 200)
        return PARAMS_BAD_BODY;
    char delim[256];
    delim[0] = '-';
    delim[1] = '-';
    memcpy(delim + 2, b, blen);
    size_t dlen = blen + 2;

    const char *end = body + len;
    const char *part = find_bytes(body, len, delim, dlen);
    if (!part)
        return PARAMS_BAD_BODY;
    for (;;) {
        part += dlen;
        if (end - part >= 2 && part[0] == '-' && part[1] == '-')
            return PARAMS_OK;                       /* closing delimiter */
        const char *hdrs = find_bytes(part, (size_t)(end - part), "\r\n", 2);
        if (!hdrs)
            return PARAMS_BAD_BODY;
        hdrs += 2;
        const char *hdr_end = find_bytes(hdrs, (size_t)(end - hdrs), "\r\n\r\n", 4);
        if (!hdr_end)
            return PARAMS_BAD_BODY;
        const char *data = hdr_end + 4;
        /* The part's data ends at CRLF followed by the next delimiter. */
        const char *next = data;
        for (;;) {
            next = find_bytes(next, (size_t)(end - next), delim, dlen);
            if (!next)
                return PARAMS_BAD_BODY;
            if (next - data >= 2 && next[-2] == '\r' && next[-1] == '\n')
                break;
            if (next == data)
                break;
            next++;
        }
        const char *data_end = next - data >= 2 ? next - 2 : data;

        for (const char *line = hdrs; line < hdr_end;) {
            const char *eol = find_bytes(line, (size_t)(hdr_end + 2 - line), "\r\n", 2);
            const char *n;
            size_t nlen;
            if ((size_t)(eol - line) > 20 && strncasecmp(line, "Content-Disposition:", 20) == 0 &&
                header_attr(line + 20, (size_t)(eol - line - 20), "name", &n, &nlen) == 0) {
                params_rc rc = param_store(p, param_lookup(n, nlen), data,
                                           (size_t)(data_end - data), 0);
                if (rc != PARAMS_OK)
                    return rc;
            }
            line = eol + 2;
        }
        part = next;
    }
}

params_rc params_parse_body(params *p, const char *ctype, const char *body, size_t len)
{
    if (!ctype)
        return PARAMS_OK;
    if (strncasecmp(ctype, "application/x-www-form-urlencoded", 33) == 0)
        return params_parse_urlencoded(p, body, len);
    if (strncasecmp(ctype, "multipart/form-data", 19) == 0)
        return params_parse_multipart(p, ctype, body, len);
    /* LOAD's file sent as the whole body. */
    if (strncasecmp(ctype, "text/csv", 8) == 0 &&
        (ctype[8] == '\0' || ctype[8] == ';' || ctype[8] == ' '))
        return param_store(p, PARAM_FILE, body, len, 0);
    /* ADDMULTI's lines sent as the whole body, one per line. */
    if (strncasecmp(ctype, "text/plain", 10) == 0 &&
        (ctype[10] == '\0' || ctype[10] == ';' || ctype[10] == ' '))
        return param_store(p, PARAM_LINES, body, len, 0);
    return PARAMS_OK;
}
