/* SPDX-License-Identifier: Apache-2.0 */
/* test_observe.c - every command in JSON (FORMAT=JSON and Accept: application/json) with
 * its HTTP status, PEEK paging and matching without changing lists, FILES, INFO, rates
 * and time to empty on a steady drain, JSON log lines, and threads that say what they are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "testlib.h"
#include "expect.h"

static daemon_proc d;

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0)
        return -1;
    td_write_file(&d, "logins.csv", "l1\nl2\nl3\nl4\nl5\n", 15);
    td_write_file(&d, "b.csv", "x\n", 2);
    const char *extra[] = {"--journal", "on", "-Dstsd.maxLineSize=64",
                           "-Dstsd.log.format=json", NULL};
    return td_start(&d, extra);
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

/* GETs target and checks status, Content-Type and the whole body. */
static void expect(const char *target, int status, const char *ctype, const char *body)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    char v[128];
    assert_int_equal(http_header(&r, "Content-Type", v, sizeof v), 0);
    if (r.status != status || strcmp(v, ctype) != 0 || strcmp(r.body, body) != 0)
        fail_msg("GET %s\n want: %d %s %s\n got:  %d %s %s", target, status, ctype, body,
                 r.status, v, r.body);
    http_reply_free(&r);
}

#define JSON_CT "application/json; charset=utf-8"
#define HTML_CT "text/html; charset=UTF-8"

static void expect_json(const char *target, int status, const char *body)
{
    expect(target, status, JSON_CT, body);
}

/* The body of a 200 JSON answer, malloc'd. */
static char *get_json(const char *target)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_int_equal(r.status, 200);
    return r.body;
}

static void test_commands(void **state)
{
    expect_json("/sts/INITFILE?FILENAME=logins.csv&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"5\",\"lines\":5}");
    expect_json("/sts/READ?FILENAME=logins.csv&FORMAT=JSON", 200, "{\"ok\":true,\"line\":\"l1\"}");
    expect_json("/sts/READ?FILENAME=logins.csv&KEEP=FALSE&READ_MODE=LAST&FORMAT=json", 200,
                "{\"ok\":true,\"line\":\"l1\"}");
    expect_json("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=2&FORMAT=JSON", 200,
                "{\"ok\":true,\"lines\":[\"l2\",\"l3\"]}");
    expect_json("/sts/LENGTH?FILENAME=logins.csv&FORMAT=JSON", 200, "{\"ok\":true,\"length\":4}");
    expect_json("/sts/ADD?FILENAME=logins.csv&LINE=l9&ADD_MODE=LAST&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"\"}");
    expect_json("/sts/FIND?FILENAME=logins.csv&LINE=l9&FIND_MODE=EQUALS&FORMAT=JSON", 200,
                "{\"ok\":true,\"line\":\"l9\"}");
    expect_json("/sts/SAVE?FILENAME=logins.csv&ADD_TIMESTAMP=false&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"5\",\"lines\":5,\"file\":\"logins.csv\"}");
    expect_json("/sts/INITFILE?FILENAME=b.csv&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"1\",\"lines\":1}");
    expect_json("/sts/RESET?FILENAME=b.csv&FORMAT=JSON", 200, "{\"ok\":true,\"message\":\"\"}");
    /* KOs: the reference's message without "Error : ", and a status that says why. */
    expect_json("/sts/READ?FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"FILENAME parameter was missing !\"}");
    expect_json("/sts/READ?FILENAME=none.csv&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"none.csv not loaded yet !\"}");
    expect_json("/sts/READ?FILENAME=logins.csv&READ_MODE=UP&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"READ_MODE value has to be FIRST, LAST or RANDOM !\"}");
    expect_json("/sts/ADD?FILENAME=logins.csv&LINE=l9&UNIQUE=TRUE&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"ENTRY already exists !\"}");
    expect_json("/sts/ADD?FILENAME=logins.csv&FORMAT=JSON&LINE="
                "0123456789012345678901234567890123456789012345678901234567890123456789", 413,
                "{\"ok\":false,\"error\":\"LINE is too long !\"}");
    expect_json("/sts/FIND?FILENAME=logins.csv&LINE=zz&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"Not find !\"}");
    expect_json("/sts/INITFILE?FILENAME=nofile.csv&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"file not found !\"}");
    /* JSON's KO texts say more than the reference's HTML (which stay its bytes). */
    expect_json("/sts/INITFILE?FILENAME=a/b&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"Illegal character found: '/' at byte 2 of "
                "FILENAME !\"}");
    expect("/sts/INITFILE?FILENAME=a/b", 200, HTML_CT,
           "<html><title>KO</title>\n<body>Error : Illegal character found !</body>\n</html>");
    expect_json("/sts/SAVE?FILENAME=a%01&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"Illegal character found: the control byte 0x01 "
                "at byte 2 of FILENAME !\"}");
    expect_json("/sts/FIND?FILENAME=logins.csv&LINE=a(b&FIND_MODE=REGEX_FIND&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"Regex compile error: missing closing parenthesis, "
                "at offset 3 of the pattern !\"}");
    expect("/sts/FIND?FILENAME=logins.csv&LINE=a(b&FIND_MODE=REGEX_FIND", 200, HTML_CT,
           "<html><title>KO</title>\n<body>Error : Regex compile error !</body>\n</html>");
    expect_json("/sts/READ?FILENAME=b.csv&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"No more line !\"}");
    expect_json("/sts/READMULTI?FILENAME=logins.csv&NB_LINES=99&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"Number lines to read greater than file size, 99 "
                "greater than 5 !\"}");
    expect_json("/sts/NOPE?FORMAT=JSON", 404, "{\"ok\":false,\"error\":\"unknown command "
                "\\\"/sts/NOPE\\\": GET /sts/ lists the commands !\"}");
    expect("/sts/NOPE", 200, HTML_CT,
           "<html><title>KO</title>\n<body>Error : unknown command !</body>\n</html>");
    /* A bad FORMAT is a KO in the reference's style, nothing run. */
    expect("/sts/RESET?FILENAME=logins.csv&FORMAT=XML", 200, HTML_CT,
           "<html><title>KO</title>\n<body>Error : FORMAT value has to be HTML or JSON !"
           "</body>\n</html>");
    expect_json("/sts/LENGTH?FILENAME=logins.csv&FORMAT=JSON", 200, "{\"ok\":true,\"length\":5}");
}

static void test_status_config(void **state)
{
    expect_json("/sts/INITFILE?FILENAME=b.csv&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"1\",\"lines\":1}");
    char *s = get_json("/sts/STATUS?FORMAT=JSON");
    /* Sorted by name, every field there. */
    const char *b = strstr(s, "{\"name\":\"b.csv\",\"lines\":1,\"leased\":0,\"waiters\":0,"
                              "\"added_per_s\":");
    const char *l = strstr(s, "{\"name\":\"logins.csv\",\"lines\":");
    assert_non_null(b);
    assert_non_null(l);
    assert_true(b < l);
    assert_int_equal(strncmp(s, "{\"ok\":true,\"lists\":[{", 21), 0);
    assert_non_null(strstr(s, "\"empty_in_s\":"));
    free(s);
    s = get_json("/sts/CONFIG?FORMAT=JSON");
    assert_int_equal(strncmp(s, "{\"ok\":true,\"config\":{\"jmeterPlugin.sts.port\":\"", 46), 0);
    assert_non_null(strstr(s, "\"stsd.journal\":\"on\""));
    assert_non_null(strstr(s, "\"stsd.maxLineSize\":\"64\""));
    assert_non_null(strstr(s, "\"stsd.metrics.maxLists\":\"10000\""));
    assert_non_null(strstr(s, "\"stsd.log.format\":\"json\""));
    assert_null(strstr(s, "stopExit"));
    free(s);
    s = get_json("/sts?FORMAT=JSON");
    assert_int_equal(strncmp(s, "{\"ok\":true,\"commands\":[\"INITFILE\",", 34), 0);
    assert_non_null(strstr(s, "\"PEEK\",\"FILES\",\"INFO\""));
    free(s);
}

/* Accept counts for stsd's own commands (test_answers has every rule): strictly
 * preferred JSON gets JSON, FORMAT=HTML wins, a KO keeps its status. */
static void test_accept(void **state)
{
    const char req[] = "GET /sts/LEASES?FILENAME=b.csv HTTP/1.1\r\nHost: x\r\n"
                       "Accept: text/html;q=0.5, Application/JSON\r\nConnection: close\r\n\r\n";
    http_reply r;
    assert_int_equal(http_raw(d.port, req, sizeof req - 1, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"ok\":true,\"length\":0}");
    http_reply_free(&r);
    const char html[] = "GET /sts/LEASES?FILENAME=b.csv&FORMAT=HTML HTTP/1.1\r\nHost: x\r\n"
                        "Accept: application/json\r\nConnection: close\r\n\r\n";
    assert_int_equal(http_raw(d.port, html, sizeof html - 1, &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>0</body>\n</html>");
    http_reply_free(&r);
    const char ko[] = "GET /sts/LEASES?FILENAME=zz HTTP/1.1\r\nHost: x\r\n"
                      "Accept: application/json\r\nConnection: close\r\n\r\n";
    assert_int_equal(http_raw(d.port, ko, sizeof ko - 1, &r), 0);
    assert_int_equal(r.status, 404);
    assert_string_equal(r.body, "{\"ok\":false,\"error\":\"zz not loaded yet !\"}");
    http_reply_free(&r);
}

static void test_binary_lines(void **state)
{
    /* Not UTF-8: base64; control bytes and U+2028 escaped. */
    expect_json("/sts/ADD?FILENAME=bin&LINE=%FF%00a&ADD_MODE=LAST&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"\"}");
    expect_json("/sts/ADD?FILENAME=bin&LINE=%01%22%E2%80%A8&ADD_MODE=LAST&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"\"}");
    expect_json("/sts/PEEK?FILENAME=bin&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"bin\",\"length\":2,\"offset\":0,\"lines\":["
                "{\"pos\":0,\"line_base64\":\"/wBh\"},{\"pos\":1,\"line\":\"\\u0001\\\"\\u2028\"}],"
                "\"next_offset\":null}");
    expect_json("/sts/READMULTI?FILENAME=bin&NB_LINES=2&FORMAT=JSON", 200,
                "{\"ok\":true,\"lines\":[{\"base64\":\"/wBh\"},\"\\u0001\\\"\\u2028\"]}");
    expect_json("/sts/READ?FILENAME=bin&FORMAT=JSON", 200, "{\"ok\":true,\"line_base64\":\"/wBh\"}");
}

static void test_peek(void **state)
{
    char file[4096];
    size_t n = 0;
    for (int i = 0; i < 250; i++)
        n += (size_t)snprintf(file + n, sizeof file - n, "row%d\n", i);
    td_write_file(&d, "big.csv", file, n);
    expect_json("/sts/INITFILE?FILENAME=big.csv&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"250\",\"lines\":250}");
    /* Pages: LIMIT 100 by default, next_offset until the end. */
    char *s = get_json("/sts/PEEK?FILENAME=big.csv&FORMAT=JSON");
    assert_int_equal(strncmp(s, "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":0,"
                                "\"lines\":[{\"pos\":0,\"line\":\"row0\"},{\"pos\":1,", 85), 0);
    assert_non_null(strstr(s, "{\"pos\":99,\"line\":\"row99\"}],\"next_offset\":100}"));
    assert_null(strstr(s, "row100"));
    free(s);
    s = get_json("/sts/PEEK?FILENAME=big.csv&OFFSET=200&LIMIT=1000&FORMAT=JSON");
    assert_non_null(strstr(s, "\"offset\":200,\"lines\":[{\"pos\":200,\"line\":\"row200\"}"));
    assert_non_null(strstr(s, "{\"pos\":249,\"line\":\"row249\"}],\"next_offset\":null}"));
    free(s);
    expect_json("/sts/PEEK?FILENAME=big.csv&OFFSET=5000&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":5000,\"lines\":[],"
                "\"next_offset\":null}");
    /* MATCH, with each FIND_MODE, from OFFSET on; next_offset resumes the scan. */
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=w24&LIMIT=2&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":0,\"lines\":["
                "{\"pos\":24,\"line\":\"row24\"},{\"pos\":240,\"line\":\"row240\"}],"
                "\"next_offset\":241}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=w24&OFFSET=241&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":241,\"lines\":["
                "{\"pos\":241,\"line\":\"row241\"},{\"pos\":242,\"line\":\"row242\"},"
                "{\"pos\":243,\"line\":\"row243\"},{\"pos\":244,\"line\":\"row244\"},"
                "{\"pos\":245,\"line\":\"row245\"},{\"pos\":246,\"line\":\"row246\"},"
                "{\"pos\":247,\"line\":\"row247\"},{\"pos\":248,\"line\":\"row248\"},"
                "{\"pos\":249,\"line\":\"row249\"}],\"next_offset\":null}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=row7&FIND_MODE=EQUALS&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":0,\"lines\":["
                "{\"pos\":7,\"line\":\"row7\"}],\"next_offset\":null}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=1%5B0-1%5D%24&FIND_MODE=REGEX_FIND&OFFSET=200"
                "&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":200,\"lines\":["
                "{\"pos\":210,\"line\":\"row210\"},{\"pos\":211,\"line\":\"row211\"}],"
                "\"next_offset\":null}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=w1&FIND_MODE=REGEX_MATCH&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":0,\"lines\":[],"
                "\"next_offset\":null}");
    /* Bad input: a KO, nothing changed. */
    expect_json("/sts/PEEK?FILENAME=big.csv&LIMIT=1001&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"LIMIT value has to be an integer from 1 to 1000 !\"}");
    expect_json("/sts/PEEK?FILENAME=big.csv&OFFSET=-1&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"OFFSET value has to be an integer from 0 !\"}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=x&FIND_MODE=ALL&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"FIND_MODE value has to be EQUALS, SUBSTRING, "
                "REGEX_FIND or REGEX_MATCH !\"}");
    expect_json("/sts/PEEK?FILENAME=big.csv&MATCH=(&FIND_MODE=REGEX_FIND&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"Regex compile error: missing closing parenthesis, "
                "at offset 1 of the pattern !\"}");
    expect_json("/sts/PEEK?FILENAME=gone.csv&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"gone.csv not loaded yet !\"}");
    expect_json("/sts/PEEK?FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"FILENAME parameter was missing !\"}");
    /* Untouched: same length, same head. */
    expect_json("/sts/LENGTH?FILENAME=big.csv&FORMAT=JSON", 200, "{\"ok\":true,\"length\":250}");
    expect_json("/sts/PEEK?FILENAME=big.csv&LIMIT=1&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"big.csv\",\"length\":250,\"offset\":0,\"lines\":["
                "{\"pos\":0,\"line\":\"row0\"}],\"next_offset\":1}");
    /* The HTML page, in the reference's style. */
    expect("/sts/PEEK?FILENAME=big.csv&OFFSET=248", 200, HTML_CT,
           "<html><title>OK</title>\n<body>\nname = big.csv<br />\nlength = 250<br />\n"
           "offset = 248<br />\nnext_offset = null<br />\n248 : row248<br />\n"
           "249 : row249<br />\n</body>\n</html>");
    expect("/sts/PEEK?FILENAME=big.csv&LIMIT=x", 400, HTML_CT,
           "<html><title>KO</title>\n<body>Error : LIMIT value has to be an integer from 1 to "
           "1000 !</body>\n</html>");
}

static void test_files(void **state)
{
    td_write_file(&d, "zz.csv", "1\n2\n", 4);
    char *s = get_json("/sts/FILES?FORMAT=JSON");
    const char *b = strstr(s, "{\"name\":\"b.csv\",\"size\":2,\"mtime\":");
    const char *z = strstr(s, "{\"name\":\"zz.csv\",\"size\":4,\"mtime\":");
    assert_non_null(b);
    assert_non_null(z);
    assert_true(b < z);
    assert_int_equal(strncmp(s, "{\"ok\":true,\"files\":[", 20), 0);
    long long mtime = atoll(strstr(z, "\"mtime\":") + 8);
    assert_true(llabs(mtime - (long long)time(NULL)) < 60);
    assert_null(strstr(s, ".stsd"));            /* the journal's directory is no dataset */
    assert_null(strstr(s, "stsd.log"));
    free(s);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/FILES", &r), 0);
    assert_int_equal(strncmp(r.body, "<html><title>OK</title>\n<body>\n", 31), 0);
    assert_non_null(strstr(r.body, "zz.csv = 4 bytes, modified "));
    assert_int_equal(strcmp(r.body + r.body_len - 14, "</body></html>"), 0);
    http_reply_free(&r);
}

static void test_info(void **state)
{
    char *s = get_json("/sts/INFO?FORMAT=JSON");
    /* This request's own connection; on a busy machine the server may not have seen the
     * previous client's close yet: ask again. */
    for (int i = 0; i < 50 && !strstr(s, "\"connections\":1,"); i++) {
        free(s);
        usleep(20000);
        s = get_json("/sts/INFO?FORMAT=JSON");
    }
    assert_int_equal(strncmp(s, "{\"ok\":true,\"version\":\"", 22), 0);
    assert_non_null(strstr(s, "\"uptime_s\":"));
    assert_non_null(strstr(s, "\"connections\":1,"));
    assert_non_null(strstr(s, ",\"journal\":{\"enabled\":true,\"fsync\":\"everysec\",\"bytes\":"));
    assert_non_null(strstr(s, "\"errors\":0,\"writable\":true,\"records\":"));
    long long bytes = atoll(strstr(s, "\"bytes\":") + 8);
    assert_true(bytes > 0);
    /* The tests before this one changed lists; everysec syncs the log once a second. */
    assert_true(atoll(strstr(s, "\"records\":") + 10) > 0);
    assert_non_null(strstr(s, ",\"log_syncs\":"));
    assert_int_equal(strcmp(s + strlen(s) - 2, "}}"), 0);
    free(s);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/INFO", &r), 0);
    assert_int_equal(strncmp(r.body, "<html><title>OK</title>\n<body>\nversion=", 39), 0);
    assert_non_null(strstr(r.body, "<br />\njournal.enabled=true<br />\njournal.fsync=everysec"));
    assert_non_null(strstr(r.body, "<br />\njournal.records="));
    assert_non_null(strstr(r.body, "<br />\njournal.log_syncs="));
    http_reply_free(&r);
}

/* A lone stsd has no cluster to ask: READINDEX and CLUSTER are KOs (HTTP 400), whatever
 * the parameters, and change nothing. */
static void test_alone(void **state)
{
    (void)state;
    const char *alone = "No cluster: this stsd runs alone (stsd.cluster.self is not set) !";
    expect_get_page(d.port, "/sts/READINDEX", 0, alone);
    expect_get_page(d.port, "/sts/READINDEX?INDEX=%ff%00&x", 0, alone);
    expect_get_page(d.port, "/sts/CLUSTER", 0, alone);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READINDEX?FORMAT=JSON", &r), 0);
    assert_int_equal(r.status, 400);
    assert_non_null(strstr(r.body, "\"ok\":false"));
    http_reply_free(&r);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double number_after(const char *s, const char *key)
{
    const char *p = strstr(s, key);
    assert_non_null(p);
    return atof(p + strlen(key));
}

/* A steady drain of ~150 lines/s for 3 s: the rates and the time to empty are within
 * 35% of the truth. */
static void test_rates(void **state)
{
    char file[60000];
    size_t n = 0;
    for (int i = 0; i < 5000; i++)
        n += (size_t)snprintf(file + n, sizeof file - n, "d%d\n", i);
    td_write_file(&d, "drain", file, n);
    expect_json("/sts/INITFILE?FILENAME=drain&FORMAT=JSON", 200,
                "{\"ok\":true,\"message\":\"5000\",\"lines\":5000}");
    double t0 = now_s();
    int taken = 0;
    while (now_s() - t0 < 3.0) {
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/READMULTI?FILENAME=drain&NB_LINES=3&KEEP=FALSE",
                                  &r), 0);
        http_reply_free(&r);
        taken += 3;
        usleep(20000);
    }
    double rate = taken / (now_s() - t0);
    char *s = get_json("/sts/STATUS?FORMAT=JSON");
    const char *e = strstr(s, "{\"name\":\"drain\"");
    assert_non_null(e);
    double lines = number_after(e, "\"lines\":");
    double removed = number_after(e, "\"removed_per_s\":");
    double added = number_after(e, "\"added_per_s\":");
    double empty = number_after(e, "\"empty_in_s\":");
    double truth = lines / rate;
    print_message("drained %d at %.1f/s: removed_per_s %.1f, empty_in_s %.1f (truth %.1f)\n",
                  taken, rate, removed, empty, truth);
    assert_true(lines == 5000 - taken);
    assert_true(added == 0);
    assert_true(removed > rate * 0.65 && removed < rate * 1.35);
    assert_true(empty > truth * 0.65 && empty < truth * 1.35);
    /* Issue 23: 3,000 lines ADDed, then drained at ~100/s. 3 s into the drain the 10 s
     * rates still see the fill (added > removed), yet the time to empty follows the drain. */
    for (int i = 0; i < 3000; i++) {
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/ADD?FILENAME=filled&LINE=f", &r), 0);
        assert_int_equal(r.status, 200);
        http_reply_free(&r);
    }
    t0 = now_s();
    taken = 0;
    while (now_s() - t0 < 3.2) {
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/READMULTI?FILENAME=filled&NB_LINES=2&KEEP=FALSE",
                                  &r), 0);
        http_reply_free(&r);
        taken += 2;
        usleep(20000);
    }
    rate = taken / (now_s() - t0);
    free(s);
    s = get_json("/sts/STATUS?FORMAT=JSON");
    e = strstr(s, "{\"name\":\"filled\"");
    assert_non_null(e);
    lines = number_after(e, "\"lines\":");
    empty = number_after(e, "\"empty_in_s\":");
    truth = lines / rate;
    print_message("filled 3000, drained %d at %.1f/s: empty_in_s %.1f (truth %.1f)\n", taken,
                  rate, empty, truth);
    assert_true(lines == 3000 - taken);
    assert_true(number_after(e, "\"added_per_s\":") > number_after(e, "\"removed_per_s\":"));
    assert_true(empty > truth * 0.65 && empty < truth * 1.35);
    free(s);
    /* A list that is not draining has no time to empty. */
    s = get_json("/sts/STATUS?FORMAT=JSON");
    assert_non_null(strstr(s, "{\"name\":\"b.csv\",\"lines\":1,\"leased\":0,\"waiters\":0,"
                              "\"added_per_s\":0,\"removed_per_s\":0,\"empty_in_s\":null}"));
    free(s);
}

static void test_json_log(void **state)
{
    char path[512];
    snprintf(path, sizeof path, "%s/stsd.log", d.dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int lines = 0, initfile = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (strncmp(line, "{\"time\":\"", 9) != 0 || !strstr(line, "\",\"level\":\"") ||
            !strstr(line, "\",\"event\":\"") || !strstr(line, ",\"fields\":{") ||
            strcmp(line + strlen(line) - 3, "}}\n") != 0)
            fail_msg("not a JSON log line: %s", line);
        if (strstr(line, "\"level\":\"info\",\"event\":\"INITFILE\",\"fields\":{\"message\":"
                         "\"INITFILE logins.csv: 5 lines in "))
            initfile = 1;
    }
    fclose(f);
    assert_true(lines >= 3);
    assert_true(initfile);
}

/* Every thread but main names itself (an unnamed one would show as plain "stsd"). */
static void test_thread_names(void **state)
{
    char dir[64], path[384], name[32];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)d.pid);
    DIR *tasks = opendir(dir);
    assert_non_null(tasks);
    int plain = 0, http = 0, fsync = 0, compact = 0;
    for (struct dirent *e; (e = readdir(tasks)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;                               /* the thread ended meanwhile */
        if (!fgets(name, sizeof name, f))
            name[0] = '\0';
        fclose(f);
        name[strcspn(name, "\n")] = '\0';
        if (strncmp(name, "stsd", 4) != 0)
            fail_msg("thread %s is named \"%s\"", e->d_name, name);
        plain += strcmp(name, "stsd") == 0;
        http += strcmp(name, "stsd-http") == 0;
        fsync += strcmp(name, "stsd-fsync") == 0;
        compact += strcmp(name, "stsd-compact") == 0;
    }
    closedir(tasks);
    assert_int_equal(plain, 1);
    assert_true(http >= 1);
    assert_int_equal(fsync, 1);                     /* the journal's default: everysec */
    assert_int_equal(compact, 1);
}

static void test_stop(void **state)
{
    expect_json("/sts/STOP?FORMAT=JSON", 200, "{\"ok\":true,\"message\":\"\"}");
    assert_int_equal(td_wait(&d, 5000), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commands),
        cmocka_unit_test(test_status_config),
        cmocka_unit_test(test_accept),
        cmocka_unit_test(test_binary_lines),
        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_alone),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_json_log),
        cmocka_unit_test(test_thread_names),
        cmocka_unit_test(test_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
