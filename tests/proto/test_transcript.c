/* SPDX-License-Identifier: Apache-2.0 */
/* test_transcript.c - replays the reference's 100-request transcript against a real stsd
 * and compares every answer byte for byte (and the files SAVE wrote), with no Accept
 * header and with each that a JMeter plan may send: the reference ignores it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "transcript_cases.h"

static const struct {
    const char *name, *content;
} input_files[] = {
    {"logins.csv", "login1;password1\nlogin2;password2\nlogin3;password3\nlogin4;password4\n"
                   "login5;password5\n"},
    {"crlf.csv", "a1\r\nb2\r\n\r\nc3\rd4"},
    {"colors.txt", "RED\nGREEN\nBLUE\nA123B\nlogin23;D12223\nlogin2;D120214\n"},
    {"utf8.csv", "Zo\xc3\xab;\xc3\x85lesund\nJos\xc3\xa9;\xe2\x82\xac" "uro\n"},
    {"single.csv", "only\n"},
};

/* The Accept header line of the replay under way ("" for none). */
static char accept_line[256];

/* Builds a multipart/form-data request from "name=value\n" lines. */
static int send_multipart(int port, const char *path, const char *fields, http_reply *r)
{
    const char *boundary = "----stsdTestBoundary7MA4YWxkTrZu0gW";
    char body[4096], req[8192];
    size_t n = 0;
    for (const char *f = fields; *f;) {
        const char *eq = strchr(f, '='), *nl = strchr(f, '\n');
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "--%s\r\nContent-Disposition: form-data; name=\"%.*s\"\r\n\r\n"
                              "%.*s\r\n",
                              boundary, (int)(eq - f), f, (int)(nl - eq - 1), eq + 1);
        f = nl + 1;
    }
    n += (size_t)snprintf(body + n, sizeof body - n, "--%s--\r\n", boundary);
    int len = snprintf(req, sizeof req,
                       "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
                       "Content-Type: multipart/form-data; boundary=%s\r\n"
                       "Content-Length: %zu\r\n\r\n%s",
                       path, accept_line, boundary, n, body);
    return http_raw(port, req, (size_t)len, r);
}

/* An urlencoded POST with the replay's Accept line. */
static int send_post(int port, const char *path, const char *body, http_reply *r)
{
    size_t cap = strlen(path) + strlen(body) + 512;
    char *req = malloc(cap);
    if (!req)
        return -1;
    int n = snprintf(req, cap,
                     "POST %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s"
                     "Content-Type: application/x-www-form-urlencoded\r\n"
                     "Content-Length: %zu\r\n\r\n%s",
                     path, accept_line, strlen(body), body);
    int rc = http_raw(port, req, (size_t)n, r);
    free(req);
    return rc;
}

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The same lines in any order (STATUS's order is unspecified in the reference). */
static int same_lines(const char *a, const char *b)
{
    char *x = strdup(a), *y = strdup(b);
    char *lx[64], *ly[64];
    int nx = 0, ny = 0;
    for (char *s = strtok(x, "\n"); s && nx < 64; s = strtok(NULL, "\n"))
        lx[nx++] = s;
    for (char *s = strtok(y, "\n"); s && ny < 64; s = strtok(NULL, "\n"))
        ly[ny++] = s;
    int same = nx == ny;
    qsort(lx, (size_t)nx, sizeof *lx, cmp_lines);
    qsort(ly, (size_t)ny, sizeof *ly, cmp_lines);
    for (int i = 0; same && i < nx; i++)
        same = strcmp(lx[i], ly[i]) == 0;
    free(x);
    free(y);
    return same;
}

/* Replays the transcript on a fresh stsd, each request with Accept: accept (NULL: none). */
static void replay(const char *accept)
{
    snprintf(accept_line, sizeof accept_line, "%s%s%s", accept ? "Accept: " : "",
             accept ? accept : "", accept ? "\r\n" : "");
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    for (size_t i = 0; i < sizeof input_files / sizeof input_files[0]; i++)
        assert_int_equal(td_write_file(&d, input_files[i].name, input_files[i].content,
                                       strlen(input_files[i].content)), 0);
    assert_int_equal(td_start(&d, NULL), 0);

    int failed = 0;
    size_t ncases = sizeof transcript / sizeof transcript[0];
    for (size_t i = 0; i < ncases; i++) {
        const struct transcript_case *c = &transcript[i];
        http_reply r;
        int rc = strcmp(c->method, "GET") == 0
                     ? http_get_as(d.port, c->target, NULL, accept_line, &r)
               : strcmp(c->method, "POST") == 0 ? send_post(d.port, c->target, c->body, &r)
                                                  : send_multipart(d.port, c->target, c->body, &r);
        assert_int_equal(rc, 0);
        int ok = r.status == 200;
        char ctype[128] = "";
        http_header(&r, "Content-Type", ctype, sizeof ctype);
        ok = ok && strcmp(ctype, "text/html; charset=UTF-8") == 0;
        char cache[128] = "";
        http_header(&r, "Cache-Control", cache, sizeof cache);
        ok = ok && strcmp(cache, "no-cache, no-store, must-revalidate") == 0;
        if (strncmp(c->kind, "prefix:", 7) == 0)
            ok = ok && strncmp(r.body, c->expect, strlen(c->expect)) == 0;
        else if (strcmp(c->kind, "lines") == 0)
            ok = ok && same_lines(r.body, c->expect);
        else
            ok = ok && r.body_len == strlen(c->expect) && strcmp(r.body, c->expect) == 0;
        if (ok && c->file) {
            char *saved = td_read_file(&d, c->kind + 9, NULL);
            ok = saved && strcmp(saved, c->file) == 0;
            if (!ok)
                fprintf(stderr, "case %zu: saved file differs: %s\n", i, saved ? saved : "(none)");
            free(saved);
        }
        if (!ok) {
            fprintf(stderr, "case %zu %s %s\n  want: %s\n  got (%d, %s): %s\n", i, c->method,
                    c->target, c->expect, r.status, ctype, r.body);
            failed++;
        }
        http_reply_free(&r);
    }
    fprintf(stderr, "transcript (Accept: %s): %zu of %zu cases match\n",
            accept ? accept : "none", ncases - (size_t)failed, ncases);
    assert_int_equal(failed, 0);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

static void test_transcript(void **state)
{
    replay(NULL);
}

/* What plans send: a REST API's header for the whole plan, browsers' and clients'
 * defaults, a weighted preference either way, a malformed q. */
static void test_transcript_any_accept(void **state)
{
    static const char *const accepts[] = {
        "application/json",
        "*/*",
        "application/json;q=0.1, text/html",
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "application/json, text/plain, */*",
        "text/html;q=0.5, application/json",
        "application/json;q=oops",
    };
    for (size_t i = 0; i < sizeof accepts / sizeof accepts[0]; i++)
        replay(accepts[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transcript),
        cmocka_unit_test(test_transcript_any_accept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
