/* SPDX-License-Identifier: Apache-2.0 */
/* ctl_out.c - printing answers for scripts and terminals. */
#include "ctl_out.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/utf8.h"

static int b64val(char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

int ctl_put_base64(FILE *out, const char *s, size_t n)
{
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n && s[i] != '='; i++) {
        int v = b64val(s[i]);
        if (v < 0)
            return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            fputc((int)((acc >> bits) & 0xFF), out);
        }
    }
    return 0;
}

/* A line as the server sent it: a string, {"base64": ...}, or PEEK's {"pos","line"}. */
static void put_line(FILE *out, const cj *v)
{
    const cj *b;
    if (v->type == CJ_STRING)
        fwrite(v->s, 1, v->len, out);
    else if ((b = cj_get(v, "base64")) && b->type == CJ_STRING)
        ctl_put_base64(out, b->s, b->len);
    else if ((b = cj_get(v, "line")) && b->type == CJ_STRING)
        fwrite(b->s, 1, b->len, out);
    else if ((b = cj_get(v, "line_base64")) && b->type == CJ_STRING)
        ctl_put_base64(out, b->s, b->len);
    fputc('\n', out);
}

static void put_scalar(FILE *out, const cj *v)
{
    switch (v->type) {
    case CJ_NULL: fputs("-", out); break;
    case CJ_BOOL: fputs(v->b ? "true" : "false", out); break;
    case CJ_NUMBER:
    case CJ_STRING: fwrite(v->s, 1, v->len, out); break;
    default: break;
    }
}

/* Objects flattened to "a.b<TAB>value" lines. */
static void put_flat(FILE *out, const char *prefix, const cj *v)
{
    for (size_t i = 0; i < v->n; i++) {
        char key[256];
        snprintf(key, sizeof key, "%s%s%s", prefix, *prefix ? "." : "", v->keys[i]);
        const cj *m = v->items[i];
        if (m->type == CJ_OBJECT) {
            put_flat(out, key, m);
        } else if (m->type != CJ_ARRAY) {
            fprintf(out, "%s\t", key);
            put_scalar(out, m);
            fputc('\n', out);
        }
    }
}

void ctl_duration(char *out, size_t n, const cj *seconds)
{
    if (!seconds || seconds->type != CJ_NUMBER) {
        snprintf(out, n, "-");
        return;
    }
    ctl_seconds(out, n, strtod(seconds->s, NULL));
}

void ctl_seconds(char *out, size_t n, double s)
{
    long t = (long)(s + 0.5);
    if (t < 60)
        snprintf(out, n, "%lds", t);
    else if (t < 3600)
        snprintf(out, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(out, n, "%ldh%02ldm", t / 3600, t % 3600 / 60);
}

static const char *num_text(const cj *v)
{
    return v && v->type == CJ_NUMBER ? v->s : "-";
}

/* The bytes of the character at s[0..n) when it may go to a terminal as it is: printable
 * ASCII, or well-formed UTF-8 other than a C1 control (U+0080 to U+009F: 8-bit escapes
 * to some terminals). 0: show a '?' for s[0]. */
static size_t char_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return s[0] >= 0x20 && s[0] != 0x7f;
    if (s[0] == 0xc2 && n > 1 && s[1] < 0xa0)
        return 0;
    return utf8_seq((const char *)s, n);
}

void ctl_cell(char *out, size_t cap, const char *s, size_t len, int width, int pad)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t chars = 0, o = 0, i = 0;
    int col = 0;
    for (size_t at = 0; at < len; chars++) {
        size_t l = char_len(u + at, len - at);
        at += l ? l : 1;
    }
    int cut = chars > (size_t)width, keep = cut && width > 3 ? width - 3 : width;
    while (i < len && col < keep) {
        size_t l = char_len(u + i, len - i);
        if (o + (l ? l : 1) >= cap)
            break;
        if (l)
            memcpy(out + o, s + i, l);
        else
            out[o] = '?';
        o += l ? l : 1;
        i += l ? l : 1;
        col++;
    }
    for (; cut && col < width && o + 1 < cap; col++)
        out[o++] = '.';
    for (; pad && col < width && o + 1 < cap; col++)
        out[o++] = ' ';
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
}

void ctl_status_head(FILE *out)
{
    fprintf(out, "%-32s %10s %8s %8s %9s %9s %10s", "LIST", "LINES", "ON LOAN", "WAITERS",
            "IN/S", "OUT/S", "EMPTY IN");
}

void ctl_status_row(FILE *out, const char *name, const cj *l)
{
    char empty[32];
    ctl_duration(empty, sizeof empty, cj_get(l, "empty_in_s"));
    const cj *in = cj_get(l, "added_per_s"), *outr = cj_get(l, "removed_per_s");
    fprintf(out, "%-32s %10s %8s %8s %9.1f %9.1f %10s", name, num_text(cj_get(l, "lines")),
            num_text(cj_get(l, "leased")), num_text(cj_get(l, "waiters")),
            in && in->s ? strtod(in->s, NULL) : 0.0,
            outr && outr->s ? strtod(outr->s, NULL) : 0.0, empty);
}

/* A number member as an unsigned id (0 when it is null, missing or not a number). */
static unsigned long id_of(const cj *v, const char *key)
{
    const cj *n = cj_get(v, key);
    return n && n->type == CJ_NUMBER ? strtoul(n->s, NULL, 10) : 0;
}

void ctl_cluster_head(FILE *out)
{
    fprintf(out, "  %-4s %-12s %6s  %s", "NODE", "ROLE", "LAG", "URL");
}

void ctl_cluster_row(FILE *out, const cj *c, const cj *node)
{
    char role[4 * 12 + 1], url[4 * 256 + 1];
    const cj *r = cj_get(node, "role"), *u = cj_get(node, "url");
    if (r && r->type == CJ_STRING)
        ctl_cell(role, sizeof role, r->s, r->len, 12, 1);
    else
        ctl_cell(role, sizeof role, "-", 1, 12, 1);
    if (u && u->type == CJ_STRING)
        ctl_cell(url, sizeof url, u->s, u->len, 256, 0);
    else
        ctl_cell(url, sizeof url, "-", 1, 256, 0);
    unsigned long id = id_of(node, "id"), leader = id_of(c, "leader");
    fprintf(out, "%c %-4lu %s %6.20s  %s", id && id == leader ? '*' : ' ', id, role,
            num_text(cj_get(node, "lag")), url);
}

void ctl_cluster_line(FILE *out, const cj *c)
{
    char since[48] = "", role[4 * 12 + 1];
    const cj *t = cj_get(c, "leader_since"), *r = cj_get(c, "role");
    double at = t && t->type == CJ_NUMBER ? strtod(t->s, NULL) : 0;
    struct tm tm;
    time_t secs = (time_t)at;
    if (at > 0 && localtime_r(&secs, &tm))
        strftime(since, sizeof since, " since %H:%M:%S", &tm);
    if (r && r->type == CJ_STRING)
        ctl_cell(role, sizeof role, r->s, r->len, 12, 0);
    else
        ctl_cell(role, sizeof role, "-", 1, 12, 0);
    unsigned long leader = id_of(c, "leader");
    fprintf(out, "this is node %lu (%s); ", id_of(c, "self"), role);
    if (leader)
        fprintf(out, "* node %lu leads%s", leader, since);
    else
        fprintf(out, "no leader%s", since);
    fprintf(out, "; term %.24s, commit index %.24s", num_text(cj_get(c, "term")),
            num_text(cj_get(c, "commit_index")));
}

/* CLUSTER's answer as a table on a terminal. */
static void put_cluster(FILE *out, const cj *c, const cj *nodes)
{
    ctl_cluster_head(out);
    fputc('\n', out);
    for (size_t i = 0; i < nodes->n; i++) {
        ctl_cluster_row(out, c, nodes->items[i]);
        fputc('\n', out);
    }
    ctl_cluster_line(out, c);
    fputc('\n', out);
}

static void put_status(FILE *out, const cj *lists, int tty)
{
    if (tty) {
        ctl_status_head(out);
        fputc('\n', out);
    }
    for (size_t i = 0; i < lists->n; i++) {
        const cj *l = lists->items[i], *name = cj_get(l, "name");
        if (!name || name->type != CJ_STRING)
            continue;
        if (tty) {
            char cell[4 * 32 + 1];
            ctl_cell(cell, sizeof cell, name->s, name->len, 32, 1);
            ctl_status_row(out, cell, l);
        }
        else
            fprintf(out, "%s\t%s", name->s, num_text(cj_get(l, "lines")));
        fputc('\n', out);
    }
}

int ctl_print(FILE *out, const cj *v, int tty)
{
    const cj *m;
    if (!v || v->type != CJ_OBJECT)
        return 0;
    if ((m = cj_get(v, "line")) || (m = cj_get(v, "line_base64"))) {
        if (m->type == CJ_STRING && cj_get(v, "line"))
            fwrite(m->s, 1, m->len, out);
        else if (m->type == CJ_STRING)
            ctl_put_base64(out, m->s, m->len);
        fputc('\n', out);
    } else if ((m = cj_get(v, "lines")) && m->type == CJ_ARRAY) {
        for (size_t i = 0; i < m->n; i++)
            put_line(out, m->items[i]);
    } else if ((m = cj_get(v, "lines")) || (m = cj_get(v, "length"))) {
        put_scalar(out, m);
        fputc('\n', out);
    } else if ((m = cj_get(v, "lists")) && m->type == CJ_ARRAY) {
        put_status(out, m, tty);
    } else if (tty && (m = cj_get(v, "nodes")) && m->type == CJ_ARRAY && cj_get(v, "term")) {
        put_cluster(out, v, m);
    } else {
        /* Any other document, for commands to come as well: arrays one item a line
         * (objects' values by TAB), the rest as "key<TAB>value"; a bare message as is. */
        for (size_t i = 0; i < v->n; i++) {
            const char *k = v->keys[i];
            const cj *x = v->items[i];
            if (strcmp(k, "ok") == 0)
                continue;
            if (strcmp(k, "message") == 0 && x->type == CJ_STRING) {
                if (x->len) {
                    fwrite(x->s, 1, x->len, out);
                    fputc('\n', out);
                }
            } else if (x->type == CJ_ARRAY) {
                for (size_t j = 0; j < x->n; j++) {
                    const cj *e = x->items[j];
                    if (e->type == CJ_OBJECT) {
                        for (size_t f = 0; f < e->n; f++) {
                            if (f)
                                fputc('\t', out);
                            put_scalar(out, e->items[f]);
                        }
                        fputc('\n', out);
                    } else {
                        put_line(out, e);
                    }
                }
            } else if (x->type == CJ_OBJECT) {
                /* The document's first member is its body (CONFIG's "config"): bare
                 * keys; a later one is a part of it (INFO's "journal.fsync"). */
                int first = i == 0 || (i == 1 && strcmp(v->keys[0], "ok") == 0);
                put_flat(out, first ? "" : k, x);
            } else if (v->n == 2) {
                put_scalar(out, x);
                fputc('\n', out);
            } else {
                fprintf(out, "%s\t", k);
                put_scalar(out, x);
                fputc('\n', out);
            }
        }
    }
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}

int ctl_print_result(FILE *out, const cj *v, const char *member)
{
    char b64[64];
    const cj *m = cj_get(v, member), *b;
    snprintf(b64, sizeof b64, "%s_base64", member);
    if (m && (m->type == CJ_STRING || m->type == CJ_NUMBER))
        fwrite(m->s, 1, m->len, out);
    else if ((b = cj_get(v, b64)) && b->type == CJ_STRING)
        ctl_put_base64(out, b->s, b->len);
    else
        return 1;
    fputc('\n', out);
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}

/* Lease ids one a line, in the order of the lines (READMULTI sends "id1,id2"). */
static void put_leases(FILE *out, const ctl_answer *a)
{
    for (const char *l = a->lease.data ? a->lease.data : ""; *l;) {
        size_t n = strcspn(l, ",");
        fprintf(out, "%.*s\n", (int)n, l);
        l += n + (l[n] == ',');
    }
}

int ctl_finish(const ctl_answer *a, const char *url, const ctl_show *show)
{
    static const ctl_show plain = {0, 0, 0, NULL, 0};
    if (!show)
        show = &plain;
    int json = show->json;
    if (!show->print_lease)
        put_leases(stderr, a);
    cj *v = cj_parse(a->body.data ? a->body.data : "", a->body.len);
    const cj *ok = cj_get(v, "ok"), *err = cj_get(v, "error");
    int rc;
    if (a->status == 401 || a->status == 403) {
        fprintf(stderr, "stsctl: %s (HTTP %ld): %s\n",
                a->status == 401 ? "the server wants a valid token (--token or STSD_TOKEN)"
                                 : "the server refuses this token or address",
                a->status, err && err->type == CJ_STRING ? err->s : "no JSON answer");
        rc = CTL_EXIT_SERVER;
    } else if (ok && ok->type == CJ_BOOL && !ok->b) {
        if (json)
            printf("%s\n", a->body.data);
        /* Prefixed as every other line stsctl writes there, so that a script's log says
         * whose line it is. */
        fprintf(stderr, "stsctl: %s\n", err && err->type == CJ_STRING ? err->s : "KO");
        rc = CTL_EXIT_KO;
    } else if (!ok || a->status >= 400) {
        fprintf(stderr, "stsctl: %s: HTTP %ld, not an answer of stsd\n", url,
                a->status);
        rc = CTL_EXIT_SERVER;
    } else if (json) {
        fwrite(a->body.data, 1, a->body.len, stdout);
        if (a->body.len && a->body.data[a->body.len - 1] != '\n')
            putchar('\n');
        rc = fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_SERVER;
    } else if (show->quiet) {
        rc = CTL_EXIT_OK;
    } else {
        int r = show->result && !show->long_form ? ctl_print_result(stdout, v, show->result)
                                                 : 1;
        if (r == 1)                     /* no result member: the answer as a whole */
            r = ctl_print(stdout, v, isatty(STDOUT_FILENO));
        rc = r == 0 ? CTL_EXIT_OK : CTL_EXIT_SERVER;
    }
    /* After the answer, so that a script reads the line first and its lease next. */
    if (rc == CTL_EXIT_OK && show->print_lease) {
        put_leases(stdout, a);
        if (fflush(stdout) != 0 || ferror(stdout))
            rc = CTL_EXIT_SERVER;
    }
    cj_free(v);
    return rc;
}
