/* SPDX-License-Identifier: Apache-2.0 */
/* test_dashboard.c - the dashboard's server side on a real stsd: GET / redirects, /ui/
 * files with gzip, ETag and security headers, the CSRF rule for browser writes (and that
 * curl-like clients are untouched), and LOAD (multipart, text/csv, limits, journaled). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"

static daemon_proc d;
static char state_opt[400];
static const char *args[] = {"--journal=on", state_opt, "-Dstsd.maxBodySize=4096",
                             "-Dstsd.maxLists=6", NULL};

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0)
        return -1;
    td_write_file(&d, "logins.csv", "l1\nl2\nl3\n", 9);
    snprintf(state_opt, sizeof state_opt, "--state-dir=%s/state", d.dir);
    return td_start(&d, args);
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

/* Sends raw request bytes; the reply is in r. */
static void raw(const char *req, http_reply *r)
{
    if (http_raw(d.port, req, strlen(req), r) != 0)
        fail_msg("no answer to:\n%s", req);
}

static void expect_header(const http_reply *r, const char *name, const char *want)
{
    char v[512];
    if (http_header(r, name, v, sizeof v) != 0)
        fail_msg("no %s header", name);
    if (strcmp(v, want) != 0)
        fail_msg("%s: want \"%s\", got \"%s\"", name, want, v);
}

static void test_redirect(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/", &r), 0);
    assert_int_equal(r.status, 302);
    expect_header(&r, "Location", "/ui/");
    http_reply_free(&r);
    /* /sts/ keeps the reference's help page. */
    assert_int_equal(http_get(d.port, "/sts/", &r), 0);
    assert_int_equal(r.status, 200);
    assert_memory_equal(r.body, "<html><head><title>Help URL for the dataset</title><head>", 57);
    http_reply_free(&r);
}

static void test_index_headers_gzip_etag(void **state)
{
    http_reply r;
    raw("GET /ui/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
        "Accept-Encoding: gzip, deflate\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Type", "text/html; charset=utf-8");
    expect_header(&r, "Content-Encoding", "gzip");
    expect_header(&r, "Cache-Control", "no-cache");
    expect_header(&r, "X-Content-Type-Options", "nosniff");
    char csp[512];
    assert_int_equal(http_header(&r, "Content-Security-Policy", csp, sizeof csp), 0);
    assert_non_null(strstr(csp, "default-src 'self'"));
    assert_non_null(strstr(csp, "frame-ancestors 'none'"));
    assert_true(r.body_len > 100 && (unsigned char)r.body[0] == 0x1f);
    char etag[128], req[512];
    assert_int_equal(http_header(&r, "ETag", etag, sizeof etag), 0);
    http_reply_free(&r);

    /* Without gzip: the page itself, whose script has a content-hashed name. */
    raw("GET /ui/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "<!doctype html>"));
    const char *app = strstr(r.body, "src=\"./app.");
    assert_non_null(app);
    char script[128];
    const char *end = strchr(app + 5, '"');
    snprintf(script, sizeof script, "/ui/%.*s", (int)(end - (app + 7)), app + 7);
    http_reply_free(&r);

    snprintf(req, sizeof req, "GET /ui/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
             "If-None-Match: %s\r\n\r\n", etag);
    raw(req, &r);
    assert_int_equal(r.status, 304);
    http_reply_free(&r);

    assert_int_equal(http_get(d.port, script, &r), 0);
    assert_int_equal(r.status, 200);
    expect_header(&r, "Content-Type", "text/javascript; charset=utf-8");
    expect_header(&r, "Cache-Control", "public, max-age=31536000, immutable");
    assert_non_null(strstr(r.body, "import"));
    http_reply_free(&r);

    assert_int_equal(http_get(d.port, "/ui/nothing.js", &r), 0);
    assert_int_equal(r.status, 404);
    http_reply_free(&r);
    raw("POST /ui/ HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", &r);
    assert_int_equal(r.status, 405);
    http_reply_free(&r);
}

static size_t length_of(const char *list)
{
    char target[256];
    http_reply r;
    snprintf(target, sizeof target, "/sts/LENGTH?FORMAT=JSON&FILENAME=%s", list);
    assert_int_equal(http_get(d.port, target, &r), 0);
    size_t n = (size_t)-1;
    const char *p = strstr(r.body, "\"length\":");
    if (r.status == 200 && p)
        n = strtoul(p + 9, NULL, 10);
    http_reply_free(&r);
    return n;
}

static void test_csrf(void **state)
{
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/INITFILE?FILENAME=logins.csv", &r), 0);
    http_reply_free(&r);
    /* A foreign page's form post: Origin and no X-STS-UI. */
    raw("POST /sts/RESET HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
        "Origin: http://evil.example\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        "Content-Length: 19\r\n\r\nFILENAME=logins.csv", &r);
    assert_int_equal(r.status, 403);
    expect_header(&r, "Content-Type", "application/json; charset=utf-8");
    assert_memory_equal(r.body, "{\"ok\":false,\"error\":", 20);
    http_reply_free(&r);
    /* A foreign image of a consuming READ: no Origin, but Sec-Fetch-Site. */
    raw("GET /sts/READ?FILENAME=logins.csv&KEEP=FALSE HTTP/1.1\r\nHost: h\r\n"
        "Connection: close\r\nSec-Fetch-Site: cross-site\r\n\r\n", &r);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(length_of("logins.csv"), 3);
    /* Reads are answered to anyone. */
    raw("GET /sts/STATUS?FORMAT=JSON HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
        "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n\r\n", &r);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    /* The dashboard's own write carries the header. */
    raw("POST /sts/ADD?FORMAT=JSON HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
        "Origin: http://h\r\nSec-Fetch-Site: same-origin\r\nX-STS-UI: 1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        "Content-Length: 27\r\n\r\nFILENAME=logins.csv&LINE=l4", &r);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(length_of("logins.csv"), 4);
    /* curl and JMeter send neither header: unchanged, byte for byte. */
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=logins.csv&KEEP=FALSE", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>l4</body>\n</html>");
    http_reply_free(&r);
}

/* POSTs body with Content-Type ctype to target. */
static void post(const char *target, const char *ctype, const char *body, http_reply *r)
{
    char req[8192];
    int n = snprintf(req, sizeof req, "POST %s HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
                     "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n", target, ctype,
                     strlen(body));
    assert_true(n > 0 && (size_t)n + strlen(body) < sizeof req);
    memcpy(req + n, body, strlen(body) + 1);
    raw(req, r);
}

#define MULTI_CT "multipart/form-data; boundary=XyZ"

static void test_load(void **state)
{
    http_reply r;
    /* Multipart, as the dashboard and `curl -F FILE=@x.csv` send it. */
    post("/sts/LOAD", MULTI_CT,
         "--XyZ\r\nContent-Disposition: form-data; name=\"FILENAME\"\r\n\r\nup.csv\r\n"
         "--XyZ\r\nContent-Disposition: form-data; name=\"FILE\"; filename=\"up.csv\"\r\n"
         "Content-Type: text/csv\r\n\r\na;1\r\nb;2\r\nc;3\r\n--XyZ--\r\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>3</body>\n</html>");
    http_reply_free(&r);
    assert_int_equal(http_get(d.port, "/sts/READMULTI?FILENAME=up.csv&NB_LINES=3", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\na;1<br />\nb;2<br />\n"
                                "c;3<br />\n</body>\n</html>");
    http_reply_free(&r);
    /* A text/csv body replaces the list; JSON answers as INITFILE's. */
    post("/sts/LOAD?FILENAME=up.csv&FORMAT=JSON", "text/csv; charset=utf-8", "x\ny\n", &r);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"ok\":true,\"message\":\"2\",\"lines\":2}");
    http_reply_free(&r);
    assert_int_equal(length_of("up.csv"), 2);
    /* An empty file gives an empty list, as INITFILE of an empty file does. */
    post("/sts/LOAD?FILENAME=empty", MULTI_CT,
         "--XyZ\r\nContent-Disposition: form-data; name=\"FILE\"; filename=\"e.csv\"\r\n"
         "\r\n\r\n--XyZ--\r\n", &r);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>0</body>\n</html>");
    http_reply_free(&r);
}

static void test_load_refusals(void **state)
{
    http_reply r;
    post("/sts/LOAD", "text/csv", "a\n", &r);
    assert_string_equal(r.body, "<html><title>KO</title>\n<body>Error : FILENAME parameter "
                                "was missing !</body>\n</html>");
    http_reply_free(&r);
    assert_int_equal(http_get(d.port, "/sts/LOAD?FILENAME=nofile&FORMAT=JSON", &r), 0);
    assert_int_equal(r.status, 400);
    assert_string_equal(r.body, "{\"ok\":false,\"error\":\"FILE parameter was missing !\"}");
    http_reply_free(&r);
    /* INITFILE's name rules. */
    post("/sts/LOAD?FILENAME=a%2Fb", "text/csv", "a\n", &r);
    assert_string_equal(r.body, "<html><title>KO</title>\n<body>Error : Illegal character "
                                "found !</body>\n</html>");
    http_reply_free(&r);
    /* Past stsd.maxBodySize (4096 here): 413 and nothing loaded. */
    char big[5000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    post("/sts/LOAD?FILENAME=big", "text/csv", big, &r);
    assert_int_equal(r.status, 413);
    http_reply_free(&r);
    assert_int_equal(length_of("big"), (size_t)-1);
    /* stsd.maxLists (6): a new list past it is refused, as INITFILE's would be. */
    const char *names[] = {"m1", "m2", "m3", "m4", "m5", "m6"};
    int refused = 0;
    for (int i = 0; i < 6; i++) {
        char target[64];
        snprintf(target, sizeof target, "/sts/LOAD?FILENAME=%s&FORMAT=JSON", names[i]);
        post(target, "text/csv", "q\n", &r);
        if (r.status == 413)
            refused++;
        else
            assert_int_equal(r.status, 200);
        http_reply_free(&r);
    }
    assert_true(refused >= 1);
    /* A browser page without the dashboard's header cannot LOAD. */
    raw("POST /sts/LOAD?FILENAME=up.csv HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
        "Origin: http://evil.example\r\nContent-Type: text/csv\r\nContent-Length: 2\r\n\r\nw\n", &r);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(length_of("up.csv"), 2);
}

static void test_load_is_journaled(void **state)
{
    http_reply r;
    /* Over an existing list (maxLists is reached by now). */
    post("/sts/LOAD?FILENAME=up.csv&FORMAT=JSON", "text/csv", "k1\nk2\nk3\nk4\n", &r);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    assert_int_equal(td_stop(&d, 1), 128 + 9);      /* kill -9: only the journal remains */
    assert_int_equal(td_start(&d, args), 0);
    assert_int_equal(length_of("up.csv"), 4);
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=up.csv&READ_MODE=LAST", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>k4</body>\n</html>");
    http_reply_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redirect),
        cmocka_unit_test(test_index_headers_gzip_etag),
        cmocka_unit_test(test_csrf),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_load_refusals),
        cmocka_unit_test(test_load_is_journaled),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
