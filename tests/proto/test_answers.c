/* SPDX-License-Identifier: Apache-2.0 */
/* test_answers.c - what form and status an answer takes (issue 32): JSON only when
 * asked (FORMAT, or Accept for stsd's own commands), HTML KOs with their JSON status
 * beyond the reference's 11 (every row of the command table), lines without breaks,
 * files without a byte order mark, and absolute-form request targets on every route. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"
#include "cmd/command.h"

#define JSON_CT "application/json; charset=utf-8"
#define HTML_CT "text/html; charset=UTF-8"

/* A: every key at its default. B: stsd.jsonByAccept and stsd.koStatus on. */
static daemon_proc a, b;

static int setup(void **state)
{
    static const char bom_file[] = "\xef\xbb\xbfuser1;pass1\nuser2;pass2\n";
    if (td_mkdirs(&a) != 0 || td_mkdirs(&b) != 0)
        return -1;
    td_write_file(&a, "bom.csv", bom_file, sizeof bom_file - 1);
    td_write_file(&a, "bomonly.csv", "\xef\xbb\xbf", 3);
    td_write_file(&a, "midbom.csv", "a\n\xef\xbb\xbf" "b\n", 6);
    td_write_file(&a, "two.csv", "l1\nl2\n", 6);
    td_write_file(&b, "two.csv", "l1\nl2\n", 6);
    const char *extra_a[] = {"-DjmeterPlugin.sts.initFileAtStartup=two.csv", NULL};
    const char *extra_b[] = {"-DjmeterPlugin.sts.initFileAtStartup=two.csv",
                             "-Dstsd.jsonByAccept=true", "-Dstsd.koStatus=true", NULL};
    if (td_start(&a, extra_a) != 0 || td_start(&b, extra_b) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    td_stop(&a, 0);
    td_stop(&b, 0);
    td_cleanup(&a);
    td_cleanup(&b);
    return 0;
}

/* GET target on port with header line hdr ("Name: value", NULL for none). */
static void get_with(int port, const char *target, const char *hdr, http_reply *r)
{
    char extra[512] = "";
    if (hdr)
        snprintf(extra, sizeof extra, "%s\r\n", hdr);
    if (http_get_as(port, target, NULL, extra, r) != 0)
        fail_msg("GET %s: no answer", target);
}

/* GET target with Accept value accept (NULL: none); checks status, Content-Type, body. */
static void expect_accept(int port, const char *target, const char *accept, int status,
                          const char *ctype, const char *body)
{
    char hdr[300] = "";
    if (accept)
        snprintf(hdr, sizeof hdr, "Accept: %s", accept);
    http_reply r;
    get_with(port, target, accept ? hdr : NULL, &r);
    char v[128] = "";
    http_header(&r, "Content-Type", v, sizeof v);
    if (r.status != status || strcmp(v, ctype) != 0 || strcmp(r.body, body) != 0)
        fail_msg("GET %s (Accept: %s)\n want: %d %s %s\n got:  %d %s %s", target,
                 accept ? accept : "-", status, ctype, body, r.status, v, r.body);
    http_reply_free(&r);
}

/* ---- item 1: JSON only when asked ----------------------------------------------------- */

static void test_format_wins(void **state)
{
    /* FORMAT=JSON over an Accept that wants HTML, on a reference command and on ours. */
    expect_accept(a.port, "/sts/LENGTH?FILENAME=two.csv&FORMAT=JSON", "text/html", 200,
                  JSON_CT, "{\"ok\":true,\"length\":2}");
    expect_accept(a.port, "/sts/LEASES?FILENAME=two.csv&FORMAT=json", "text/html", 200,
                  JSON_CT, "{\"ok\":true,\"length\":0}");
    /* FORMAT=HTML over an Accept that wants JSON, even where Accept counts. */
    expect_accept(a.port, "/sts/LEASES?FILENAME=two.csv&FORMAT=HTML", "application/json", 200,
                  HTML_CT, "<html><title>OK</title>\n<body>0</body>\n</html>");
    expect_accept(b.port, "/sts/LENGTH?FILENAME=two.csv&FORMAT=HTML", "application/json", 200,
                  HTML_CT, "<html><title>OK</title>\n<body>2</body>\n</html>");
}

static void test_accept_own_commands(void **state)
{
    static const char html[] = "<html><title>OK</title>\n<body>0</body>\n</html>";
    static const char json[] = "{\"ok\":true,\"length\":0}";
    static const struct {
        const char *accept;
        int json;
    } cases[] = {
        {NULL, 0},
        {"application/json", 1},
        {"Application/JSON; charset=utf-8", 1},
        {"application/json, */*;q=0.8", 1},
        {"text/html;q=0.5, application/json", 1},
        {"application/*", 1},
        {"application/json;q=0.1, text/html", 0},
        {"*/*", 0},
        {"application/json, */*", 0},
        {"application/json, text/plain, */*", 0},
        {"text/html, application/json", 0},
        {"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", 0},
        {"application/json;q=0", 0},
        /* A malformed q: that range is ignored (RFC 9110 has no weight for it). */
        {"application/json;q=high", 0},
        {"application/json;q=high, application/*;q=0.9, text/html;q=0.5", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_accept(a.port, "/sts/LEASES?FILENAME=two.csv", cases[i].accept, 200,
                      cases[i].json ? JSON_CT : HTML_CT, cases[i].json ? json : html);
    /* A KO of ours in JSON by Accept keeps its status. */
    expect_accept(a.port, "/sts/GET?NAME=nokey", "application/json", 404, JSON_CT,
                  "{\"ok\":false,\"error\":\"Key nokey not found !\"}");
}

static void test_accept_reference_commands(void **state)
{
    /* Without stsd.jsonByAccept the reference's 11, the help page and an unknown
     * command answer HTML whatever Accept says. */
    expect_accept(a.port, "/sts/LENGTH?FILENAME=two.csv", "application/json", 200, HTML_CT,
                  "<html><title>OK</title>\n<body>2</body>\n</html>");
    expect_accept(a.port, "/sts/READ?FILENAME=nope", "application/json", 200, HTML_CT,
                  "<html><title>KO</title>\n<body>Error : nope not loaded yet !</body>\n</html>");
    expect_accept(a.port, "/sts/NOPE", "application/json", 200, HTML_CT,
                  "<html><title>KO</title>\n<body>Error : unknown command !</body>\n</html>");
    http_reply r;
    get_with(a.port, "/sts/", "Accept: application/json", &r);
    assert_int_equal(strncmp(r.body, "<html><head><title>Help URL", 27), 0);
    http_reply_free(&r);
    /* With it, Accept counts for them as for ours. */
    expect_accept(b.port, "/sts/LENGTH?FILENAME=two.csv", "application/json", 200, JSON_CT,
                  "{\"ok\":true,\"length\":2}");
    expect_accept(b.port, "/sts/LENGTH?FILENAME=two.csv", "application/json;q=0.1, text/html",
                  200, HTML_CT, "<html><title>OK</title>\n<body>2</body>\n</html>");
    expect_accept(b.port, "/sts/LENGTH?FILENAME=nope", "application/json", 404, JSON_CT,
                  "{\"ok\":false,\"error\":\"nope not loaded yet !\"}");
}

/* ---- item 7: HTML KO statuses, every row of the command table ------------------------ */

/* The status of GET target on port, sent with extra header line hdr (NULL: none). */
static int status_of(int port, const char *target, const char *hdr, char *body, size_t blen)
{
    http_reply r;
    get_with(port, target, hdr, &r);
    int s = r.status;
    if (body)
        snprintf(body, blen, "%s", r.body);
    http_reply_free(&r);
    return s;
}

/* Command c's KO in HTML and in JSON for query (no FORMAT in it): the same status on B
 * (koStatus) and on A for ours, 200 on A for the reference's. The JSON side asks by
 * Accept where a probe's FORMAT is the bad value under test. */
static void compare_ko(const cmd_def *c, const char *query, int format_in_query)
{
    char t_html[256], t_json[256], body[4096];
    const char *q = query;
    snprintf(t_html, sizeof t_html, "/sts/%s?%s%sFORMAT=HTML", c->name, q, *q ? "&" : "");
    snprintf(t_json, sizeof t_json, "/sts/%s?%s%sFORMAT=JSON", c->name, q, *q ? "&" : "");
    if (format_in_query) {
        snprintf(t_html, sizeof t_html, "/sts/%s?%s", c->name, q);
        snprintf(t_json, sizeof t_json, "/sts/%s?%s", c->name, q);
    }
    const char *accept = format_in_query ? "Accept: application/json" : NULL;
    int ref = (c->flags & CMD_REF) != 0;
    for (int on_b = 0; on_b < 2; on_b++) {
        int port = on_b ? b.port : a.port;
        int js = status_of(port, t_json, accept, body, sizeof body);
        if (js == 200 && (!format_in_query || on_b || !ref))
            fail_msg("%s: no KO to compare (%s)", t_json, body);
        int hs = status_of(port, t_html, NULL, body, sizeof body);
        if (strncmp(body, "<html><title>KO</title>", 23) != 0)
            fail_msg("%s: not an HTML KO: %s", t_html, body);
        int want = ref && !on_b ? 200 : js;
        if (hs != want)
            fail_msg("%s on %s: HTML KO %d, want %d (JSON: %d)", t_html,
                     on_b ? "koStatus=true" : "defaults", hs, want, js);
    }
}

static int has_required(const cmd_def *c)
{
    for (int k = 0; k < CMD_MAX_PARAMS && c->params[k].name; k++)
        if (!c->params[k].optional)
            return 1;
    return 0;
}

static void test_ko_status_every_command(void **state)
{
    int n = command_count();
    assert_true(n > 11);
    int refs = 0;
    for (int i = 0; i < n; i++) {
        const cmd_def *c = command_at(i);
        refs += (c->flags & CMD_REF) != 0;
        /* A bad FORMAT is a KO of every command, before its handler runs (STOP too). */
        compare_ko(c, "FORMAT=XML", 1);
        /* A missing parameter: the handler's own KO. */
        if (has_required(c))
            compare_ko(c, "", 0);
    }
    assert_int_equal(refs, 11);
}

static void test_ko_status_examples(void **state)
{
    char body[4096];
    /* A BARRIER timeout, a refused INCR, a refused compare-and-set: failures JMeter sees. */
    assert_int_equal(status_of(a.port, "/sts/BARRIER?NAME=bx&PARTIES=2&TIMEOUT=0", NULL, body,
                               sizeof body), 408);
    assert_non_null(strstr(body, "<title>KO</title>"));
    assert_int_equal(status_of(a.port, "/sts/INCR?NAME=cx&MAX=0", NULL, NULL, 0), 409);
    assert_int_equal(status_of(a.port, "/sts/SET?NAME=vx&VALUE=1&IF_VERSION=3", NULL, NULL, 0),
                     409);
    /* An empty queue's READ: 200 as the reference has it, 404 with stsd.koStatus. */
    assert_int_equal(status_of(a.port, "/sts/READ?FILENAME=nope", NULL, NULL, 0), 200);
    assert_int_equal(status_of(b.port, "/sts/READ?FILENAME=nope", NULL, body, sizeof body), 404);
    assert_string_equal(body, "<html><title>KO</title>\n<body>Error : nope not loaded yet !"
                              "</body>\n</html>");
    /* No command: the reference's answer, 200 as it has it, 404 with stsd.koStatus. */
    assert_int_equal(status_of(a.port, "/sts/NOPE", NULL, NULL, 0), 200);
    assert_int_equal(status_of(b.port, "/sts/NOPE", NULL, NULL, 0), 404);
}

/* ---- item 4: lines without breaks, files without a BOM ------------------------------- */

static void expect_length(int port, const char *name, const char *n)
{
    char t[128], want[128];
    snprintf(t, sizeof t, "/sts/LENGTH?FILENAME=%s", name);
    snprintf(want, sizeof want, "<html><title>OK</title>\n<body>%s</body>\n</html>", n);
    expect_accept(port, t, NULL, 200, HTML_CT, want);
}

static void test_add_refuses_line_breaks(void **state)
{
    static const char ko[] = "<html><title>KO</title>\n<body>Error : LINE must not hold a "
                             "line break (CR or LF) !</body>\n</html>";
    expect_accept(a.port, "/sts/ADD?FILENAME=br.csv&LINE=ok", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body></body>\n</html>");
    static const char *const lines[] = {"x%0Ay", "x%0Dy", "x%0D%0Ay", "%0A", "tail%0D"};
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        char t[128];
        snprintf(t, sizeof t, "/sts/ADD?FILENAME=br.csv&LINE=%s", lines[i]);
        expect_accept(a.port, t, NULL, 200, HTML_CT, ko);
        snprintf(t, sizeof t, "/sts/ADD?FILENAME=br.csv&LINE=%s&FORMAT=JSON", lines[i]);
        expect_accept(a.port, t, NULL, 400, JSON_CT,
                      "{\"ok\":false,\"error\":\"LINE must not hold a line break (CR or LF) !\"}");
    }
    /* By POST, and on a list that does not exist yet: nothing is created either. */
    http_reply r;
    assert_int_equal(http_post(a.port, "/sts/ADD", "FILENAME=br2.csv&LINE=a%0D%0Ab", &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, ko);
    http_reply_free(&r);
    expect_length(a.port, "br.csv", "1");
    expect_accept(a.port, "/sts/LENGTH?FILENAME=br2.csv", NULL, 200, HTML_CT,
                  "<html><title>KO</title>\n<body>Error : br2.csv not loaded yet !</body>\n"
                  "</html>");
    /* With stsd.koStatus the HTML KO is a 400 too. */
    expect_accept(b.port, "/sts/ADD?FILENAME=br.csv&LINE=x%0Ay", NULL, 400, HTML_CT, ko);
}

static void test_bom_dropped(void **state)
{
    expect_accept(a.port, "/sts/INITFILE?FILENAME=bom.csv", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body>2</body>\n</html>");
    expect_accept(a.port, "/sts/READ?FILENAME=bom.csv", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body>user1;pass1</body>\n</html>");
    expect_accept(a.port, "/sts/FIND?FILENAME=bom.csv&LINE=user1%3Bpass1&FIND_MODE=EQUALS",
                  NULL, 200, HTML_CT, "<html><title>OK</title>\n<body>user1;pass1</body>\n</html>");
    /* A file of nothing but the mark has no line; a mark later in the file is data. */
    expect_accept(a.port, "/sts/INITFILE?FILENAME=bomonly.csv", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body>0</body>\n</html>");
    expect_accept(a.port, "/sts/INITFILE?FILENAME=midbom.csv", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body>2</body>\n</html>");
    expect_accept(a.port, "/sts/READ?FILENAME=midbom.csv&READ_MODE=LAST", NULL, 200, HTML_CT,
                  "<html><title>OK</title>\n<body>\xef\xbb\xbf" "b</body>\n</html>");
    /* LOAD: the same, and SAVE writes no mark back. */
    static const char req[] = "POST /sts/LOAD?FILENAME=loaded.csv HTTP/1.1\r\nHost: x\r\n"
                              "Connection: close\r\nContent-Type: text/csv\r\n"
                              "Content-Length: 12\r\n\r\n\xef\xbb\xbfk1;v1\nk2\n";
    http_reply r;
    assert_int_equal(http_raw(a.port, req, sizeof req - 1, &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>2</body>\n</html>");
    http_reply_free(&r);
    expect_accept(a.port, "/sts/SAVE?FILENAME=loaded.csv&ADD_TIMESTAMP=false", NULL, 200,
                  HTML_CT, "<html><title>OK</title>\n<body>2</body>\n</html>");
    char *saved = td_read_file(&a, "loaded.csv", NULL);
    assert_non_null(saved);
    assert_string_equal(saved, "k1;v1\nk2\n");
    free(saved);
}

/* ---- item 6: absolute-form request targets ------------------------------------------- */

/* Sends "GET target HTTP/1.1" (Host: elsewhere) with extra header lines; the reply. */
static void get_raw(int port, const char *target, const char *extra, http_reply *r)
{
    char req[1024];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: elsewhere.example\r\n%s"
                     "Connection: close\r\n\r\n", target, extra ? extra : "");
    if (http_raw(port, req, (size_t)n, r) != 0)
        fail_msg("GET %s: no answer", target);
}

/* The absolute-form target and its origin form get the same status, headers that
 * matter, and body (unless !body: /metrics counts the first request in the second). */
static void expect_same_as(int port, const char *absolute, const char *origin,
                           const char *extra, int body)
{
    http_reply x, y;
    get_raw(port, absolute, extra, &x);
    get_raw(port, origin, extra, &y);
    char cx[128] = "", cy[128] = "", lx[256] = "", ly[256] = "";
    http_header(&x, "Content-Type", cx, sizeof cx);
    http_header(&y, "Content-Type", cy, sizeof cy);
    http_header(&x, "Location", lx, sizeof lx);
    http_header(&y, "Location", ly, sizeof ly);
    if (x.status != y.status || strcmp(cx, cy) != 0 || strcmp(lx, ly) != 0 ||
        (body && (x.body_len != y.body_len || memcmp(x.body, y.body, x.body_len) != 0)))
        fail_msg("%s: %d %s %.200s\n%s: %d %s %.200s", absolute, x.status, cx, x.body, origin,
                 y.status, cy, y.body);
    http_reply_free(&x);
    http_reply_free(&y);
}

static void expect_same(int port, const char *absolute, const char *origin,
                        const char *extra)
{
    expect_same_as(port, absolute, origin, extra, 1);
}

static void test_absolute_form(void **state)
{
    char t[256];
    snprintf(t, sizeof t, "http://any-host:%d/sts/LENGTH?FILENAME=two.csv", a.port);
    expect_same(a.port, t, "/sts/LENGTH?FILENAME=two.csv", NULL);
    http_reply r;
    get_raw(a.port, t, NULL, &r);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>2</body>\n</html>");
    http_reply_free(&r);
    expect_same(a.port, "HTTPS://other:1/sts/LEASES?FILENAME=two.csv&FORMAT=JSON",
                "/sts/LEASES?FILENAME=two.csv&FORMAT=JSON", NULL);
    expect_same(a.port, "http://[::1]:9/sts/READ?FILENAME=nope", "/sts/READ?FILENAME=nope",
                NULL);
    expect_same(a.port, "http://h/sts/", "/sts/", NULL);
    expect_same(a.port, "http://h/sts/NOPE", "/sts/NOPE", NULL);
    expect_same_as(a.port, "http://h/metrics", "/metrics", NULL, 0);
    get_raw(a.port, "http://h/metrics", NULL, &r);
    assert_non_null(strstr(r.body, "# HELP "));
    http_reply_free(&r);
    expect_same(a.port, "http://h:1/", "/", NULL);
    expect_same(a.port, "http://h:1", "/", NULL);
    expect_same(a.port, "http://h/ui/", "/ui/", NULL);
    expect_same(a.port, "http://h/ui/no-such.js", "/ui/no-such.js", NULL);
    /* A change by absolute form is a change. */
    expect_same(a.port, "http://h/sts/ADD?FILENAME=abs.csv&LINE=one",
                "/sts/ADD?FILENAME=abs.csv&LINE=two", NULL);
    expect_length(a.port, "abs.csv", "2");
}

static void test_absolute_form_malformed(void **state)
{
    static const char *const bad[] = {
        "http://", "http:///sts/LENGTH?FILENAME=two.csv", "http:/sts/LENGTH",
        "ftp://h/sts/LENGTH?FILENAME=two.csv", "http://user@h/sts/LENGTH?FILENAME=two.csv",
        "mailto:x",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        http_reply r;
        get_raw(a.port, bad[i], NULL, &r);
        if (r.status != 400)
            fail_msg("GET %s: %d %s", bad[i], r.status, r.body);
        http_reply_free(&r);
    }
    expect_length(a.port, "two.csv", "2");
}

static void test_absolute_form_access(void **state)
{
    daemon_proc c;
    assert_int_equal(td_mkdirs(&c), 0);
    const char *extra[] = {"-Dstsd.token=tok-1", "-Dstsd.disabledCommands=RESET", NULL};
    assert_int_equal(td_start(&c, extra), 0);
    http_reply r;
    get_raw(c.port, "http://h/sts/ADD?FILENAME=x&LINE=1", NULL, &r);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);
    get_raw(c.port, "http://h/metrics", NULL, &r);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);
    get_raw(c.port, "http://h/sts/ADD?FILENAME=x&LINE=1", "Authorization: Bearer tok-1\r\n", &r);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    get_raw(c.port, "http://h/sts/LENGTH?FILENAME=x&TOKEN=tok-1", NULL, &r);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>1</body>\n</html>");
    http_reply_free(&r);
    get_raw(c.port, "http://h/sts/RESET?FILENAME=x&TOKEN=tok-1", NULL, &r);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(td_stop(&c, 0), 0);
    td_cleanup(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_wins),
        cmocka_unit_test(test_accept_own_commands),
        cmocka_unit_test(test_accept_reference_commands),
        cmocka_unit_test(test_ko_status_every_command),
        cmocka_unit_test(test_ko_status_examples),
        cmocka_unit_test(test_add_refuses_line_breaks),
        cmocka_unit_test(test_bom_dropped),
        cmocka_unit_test(test_absolute_form),
        cmocka_unit_test(test_absolute_form_malformed),
        cmocka_unit_test(test_absolute_form_access),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
