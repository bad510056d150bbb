/* SPDX-License-Identifier: Apache-2.0 */
/* test_ui.c - the dashboard's routes (redirect, embedded files, gzip, ETag, caching,
 * security headers) and the CSRF rule for browser writes, without a server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "cmd/command.h"
#include "guard/csrf.h"
#include "http/ui.h"

/* The value of header name in u, or NULL. */
static const char *header(const ui_reply *u, const char *name)
{
    for (int i = 0; i < u->nheaders; i++)
        if (strcmp(u->headers[i][0], name) == 0)
            return u->headers[i][1];
    return NULL;
}

static void test_owns(void **state)
{
    assert_true(ui_owns("/", 1));
    assert_true(ui_owns("/ui", 3));
    assert_true(ui_owns("/ui/", 4));
    assert_true(ui_owns("/ui/app.js", 10));
    assert_false(ui_owns("/sts/", 5));
    assert_false(ui_owns("/sts", 4));
    assert_false(ui_owns("/other", 6));
    assert_false(ui_owns("/uix", 4));
    assert_false(ui_owns("", 0));
}

static void test_redirects(void **state)
{
    ui_reply u;
    ui_route("GET", "/", 1, NULL, NULL, &u);
    assert_int_equal(u.status, 302);
    assert_string_equal(header(&u, "Location"), "/ui/");
    ui_route("GET", "/ui", 3, NULL, NULL, &u);
    assert_int_equal(u.status, 302);
    assert_string_equal(header(&u, "Location"), "/ui/");
}

static void test_index_and_security_headers(void **state)
{
    ui_reply u;
    ui_route("GET", "/ui/", 4, NULL, NULL, &u);
    assert_int_equal(u.status, 200);
    assert_string_equal(header(&u, "Content-Type"), "text/html; charset=utf-8");
    assert_string_equal(header(&u, "Cache-Control"), "no-cache");
    assert_null(header(&u, "Content-Encoding"));
    assert_non_null(strstr(header(&u, "Content-Security-Policy"), "default-src 'self'"));
    assert_non_null(strstr(header(&u, "Content-Security-Policy"), "frame-ancestors 'none'"));
    assert_string_equal(header(&u, "X-Content-Type-Options"), "nosniff");
    assert_non_null(memmem(u.body, u.len, "<!doctype html>", 15));
    /* /ui/index.html is the same page. */
    ui_reply v;
    ui_route("GET", "/ui/index.html", 14, NULL, NULL, &v);
    assert_int_equal(v.status, 200);
    assert_int_equal(v.len, u.len);
}

/* The name the page gives its script: "./app.<tag>.js". */
static void script_name(char *out, size_t outlen)
{
    ui_reply u;
    ui_route("GET", "/ui/", 4, NULL, NULL, &u);
    const char *s = memmem(u.body, u.len, "./app.", 6);
    assert_non_null(s);
    const char *e = memmem(s, u.len - (size_t)(s - (const char *)u.body), ".js", 3);
    assert_non_null(e);
    size_t n = (size_t)(e + 3 - (s + 2));
    assert_true(n < outlen - 4);
    memcpy(out, "/ui/", 4);
    memcpy(out + 4, s + 2, n);
    out[4 + n] = '\0';
}

static void test_hashed_assets_gzip_etag(void **state)
{
    char path[128];
    script_name(path, sizeof path);
    assert_true(strlen(path) > strlen("/ui/app..js") + 8);   /* a tag is in the name */
    ui_reply plain, gz, again;
    ui_route("GET", path, strlen(path), NULL, NULL, &plain);
    assert_int_equal(plain.status, 200);
    assert_string_equal(header(&plain, "Content-Type"), "text/javascript; charset=utf-8");
    assert_string_equal(header(&plain, "Cache-Control"), "public, max-age=31536000, immutable");
    ui_route("GET", path, strlen(path), "deflate, gzip;q=0.8", NULL, &gz);
    assert_int_equal(gz.status, 200);
    assert_string_equal(header(&gz, "Content-Encoding"), "gzip");
    assert_string_equal(header(&gz, "Vary"), "Accept-Encoding");
    const unsigned char *b = gz.body;
    assert_true(gz.len > 18 && b[0] == 0x1f && b[1] == 0x8b);
    assert_true(gz.len < plain.len);
    const char *etag = header(&plain, "ETag");
    assert_non_null(etag);
    assert_int_equal(etag[0], '"');
    ui_route("GET", path, strlen(path), "gzip", etag, &again);
    assert_int_equal(again.status, 304);
    assert_int_equal(again.len, 0);
    char tags[200];
    snprintf(tags, sizeof tags, "\"nope\", W/%s", etag);
    ui_route("GET", path, strlen(path), NULL, tags, &again);
    assert_int_equal(again.status, 304);
    ui_route("GET", path, strlen(path), NULL, "\"other\"", &again);
    assert_int_equal(again.status, 200);
    /* The unhashed name is not served: only the tagged one. */
    ui_route("GET", "/ui/app.js", 10, NULL, NULL, &again);
    assert_int_equal(again.status, 404);
}

static void test_not_found_and_methods(void **state)
{
    ui_reply u;
    ui_route("GET", "/ui/nope.js", 11, NULL, NULL, &u);
    assert_int_equal(u.status, 404);
    assert_non_null(header(&u, "Content-Security-Policy"));
    ui_route("GET", "/ui/../etc/passwd", 17, NULL, NULL, &u);
    assert_int_equal(u.status, 404);
    ui_route("POST", "/ui/", 4, NULL, NULL, &u);
    assert_int_equal(u.status, 405);
    assert_string_equal(header(&u, "Allow"), "GET, HEAD");
    ui_route("HEAD", "/ui/", 4, NULL, NULL, &u);
    assert_int_equal(u.status, 200);
}

static void test_accepts_gzip(void **state)
{
    assert_false(ui_accepts_gzip(NULL));
    assert_false(ui_accepts_gzip(""));
    assert_true(ui_accepts_gzip("gzip"));
    assert_true(ui_accepts_gzip("gzip, deflate, br"));
    assert_true(ui_accepts_gzip("br;q=1.0, GZIP;q=0.5"));
    assert_true(ui_accepts_gzip("x-gzip"));
    assert_true(ui_accepts_gzip("*"));
    assert_false(ui_accepts_gzip("gzip;q=0"));
    assert_false(ui_accepts_gzip("gzip; q=0.000, deflate"));
    assert_true(ui_accepts_gzip("gzip;q=0.001"));
    assert_false(ui_accepts_gzip("*, gzip;q=0"));
    assert_false(ui_accepts_gzip("deflate, br"));
    assert_false(ui_accepts_gzip("gzipped"));
    assert_false(ui_accepts_gzip("identity"));
}

static void test_first_load_budget(void **state)
{
    /* The budget for everything the first load transfers. */
    size_t n = ui_first_load_bytes();
    assert_true(n > 1000);
    assert_true(n < 100 * 1024);
}

/* As the dispatcher asks: only for a command whose row does not say it only looks. */
static int refuses(const char *path, const char *origin, const char *site, const char *hdr)
{
    const cmd_def *c = command_of_path(path, strlen(path));
    return c && !(c->flags & CMD_LOOKS) && csrf_refuses(origin, site, hdr);
}
#define REFUSES(path, origin, site, hdr) refuses(path, origin, site, hdr)

static void test_csrf(void **state)
{
    /* Not a browser: JMeter, curl. */
    assert_false(REFUSES("/sts/RESET", NULL, NULL, NULL));
    assert_false(REFUSES("/sts/READ", NULL, NULL, NULL));
    /* A foreign page: a form post (Origin), an image or link (Sec-Fetch-Site). */
    assert_true(REFUSES("/sts/RESET", "http://evil.example", "cross-site", NULL));
    assert_true(REFUSES("/sts/STOP", NULL, "cross-site", NULL));
    assert_true(REFUSES("/sts/READ", NULL, "same-site", NULL));
    assert_true(REFUSES("/sts/ADD", "null", NULL, NULL));
    assert_true(REFUSES("/sts/LOAD", "http://evil.example", NULL, "0"));
    /* A command is refused unless its row says it only looks: a new one is, by default. */
    for (int i = 0; i < command_count(); i++) {
        char path[64];
        snprintf(path, sizeof path, "/sts/%s", command_name(i));
        assert_int_equal(REFUSES(path, "http://evil.example", NULL, NULL),
                         !(command_at(i)->flags & CMD_LOOKS));
    }
    /* The dashboard's own writes carry the header. */
    assert_false(REFUSES("/sts/RESET", "http://127.0.0.1:9191", "same-origin", "1"));
    /* Typed in the address bar, or same-origin without Origin. */
    assert_false(REFUSES("/sts/READ", NULL, "none", NULL));
    assert_false(REFUSES("/sts/READ", NULL, "same-origin", NULL));
    /* Reads are free from anywhere. */
    assert_false(REFUSES("/sts/STATUS", "http://evil.example", "cross-site", NULL));
    assert_false(REFUSES("/sts/PEEK", "http://evil.example", "cross-site", NULL));
    assert_false(REFUSES("/sts/", "http://evil.example", "cross-site", NULL));
    assert_false(REFUSES("/sts", "http://evil.example", "cross-site", NULL));
    assert_false(REFUSES("/metrics", NULL, "cross-site", NULL));
    /* Names are exact: a prefix of a read-only name is no read-only name. */
    /* No command: nothing runs, and the answer is "unknown command". */
    assert_false(REFUSES("/sts/STATUSX", NULL, "cross-site", NULL));
    assert_false(REFUSES("/sts/PEEK/x", NULL, "cross-site", NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owns),
        cmocka_unit_test(test_redirects),
        cmocka_unit_test(test_index_and_security_headers),
        cmocka_unit_test(test_hashed_assets_gzip_etag),
        cmocka_unit_test(test_not_found_and_methods),
        cmocka_unit_test(test_accepts_gzip),
        cmocka_unit_test(test_first_load_budget),
        cmocka_unit_test(test_csrf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
