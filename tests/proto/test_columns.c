/* SPDX-License-Identifier: Apache-2.0 */
/* test_columns.c - named columns on a real stsd: INITFILE and LOAD with HEADER=TRUE,
 * COLUMNS, fields in JSON answers and X-STS-Field-* headers, FIND COLUMN=, ADD
 * UNIQUE=column, SAVE's header line, the columns across a restart with the journal, and
 * every bad input answered with a KO that changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

static daemon_proc d;

#define USERS "login,pass,\"full name\"\nu1,p1,\"Doe, John\"\nu2,p2,\"He said \"\"hi\"\"\"\nu3,p3,x\n"

static void put(const char *name, const char *content)
{
    td_write_file(&d, name, content, strlen(content));
}

static int setup(void **state)
{
    char so[400];
    if (td_mkdirs(&d) != 0)
        return -1;
    td_write_file(&d, "users.csv", USERS, strlen(USERS));
    put("semi.csv", "id;name\n1;\"a;b\"\n2;c\n");
    put("short.csv", "a,b,c\n1,2,3\n4,5\n");
    put("dupname.csv", "a,b,a\n1,2,3\n");
    put("emptyname.csv", "a,,c\n1,2,3\n");
    put("badquote.csv", "a,b\n\"1,2\n");
    put("plain.csv", "l1\nl2\n");
    snprintf(so, sizeof so, "--state-dir=%s/state", d.dir);
    const char *args[] = {"--journal=on", so, NULL};
    return td_start(&d, args);
}

static int teardown(void **state)
{
    td_stop(&d, 0);
    td_cleanup(&d);
    return 0;
}

/* GETs target: its status, and its body compared with body when body is not NULL. */
static void get(const char *target, int status, const char *body, http_reply *out)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    if (r.status != status)
        fail_msg("GET %s: status %d, want %d: %s", target, r.status, status, r.body);
    if (body && strcmp(r.body, body) != 0)
        fail_msg("GET %s\n want: %s\n got:  %s", target, body, r.body);
    if (out)
        *out = r;
    else
        http_reply_free(&r);
}

static void ok(const char *target, const char *payload)
{
    char want[4096];
    page_ok(want, sizeof want, payload);
    get(target, 200, want, NULL);
}

static void ko(const char *target, const char *msg)
{
    char want[4096];
    page_ko(want, sizeof want, msg);
    get(target, 200, want, NULL);
}

/* A JSON KO with its status (message not checked when NULL). */
static void ko_json(const char *target, int status, const char *msg)
{
    char want[512];
    snprintf(want, sizeof want, "{\"ok\":false,\"error\":\"%s\"}", msg ? msg : "");
    get(target, status, msg ? want : NULL, NULL);
}

static void load_users(void)
{
    ok("/sts/INITFILE?FILENAME=users.csv&HEADER=TRUE", "3");
}

static void test_initfile_columns(void **state)
{
    load_users();
    ok("/sts/LENGTH?FILENAME=users.csv", "3");
    ok("/sts/COLUMNS?FILENAME=users.csv", "login,pass,full name");
    get("/sts/COLUMNS?FILENAME=users.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"columns\":[\"login\",\"pass\",\"full name\"],\"separator\":\",\"}",
        NULL);
    /* A separator of its own, and a name holding it: quoted in COLUMNS's line. */
    ok("/sts/INITFILE?FILENAME=semi.csv&HEADER=TRUE&SEPARATOR=%3B", "2");
    get("/sts/COLUMNS?FILENAME=semi.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"columns\":[\"id\",\"name\"],\"separator\":\";\"}", NULL);
    get("/sts/FIND?FILENAME=semi.csv&COLUMN=name&LINE=a%3Bb&FORMAT=JSON", 200,
        "{\"ok\":true,\"line\":\"1;\\\"a;b\\\"\",\"fields\":{\"id\":\"1\",\"name\":\"a;b\"}}",
        NULL);
    /* Without HEADER: no columns, the answers of before. */
    ok("/sts/INITFILE?FILENAME=plain.csv", "2");
    ok("/sts/COLUMNS?FILENAME=plain.csv", "");
    get("/sts/COLUMNS?FILENAME=plain.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"columns\":[],\"separator\":null}", NULL);
    get("/sts/READ?FILENAME=plain.csv&FORMAT=JSON", 200, "{\"ok\":true,\"line\":\"l1\"}", NULL);
    ko_json("/sts/COLUMNS?FILENAME=nosuch.csv&FORMAT=JSON", 404, "nosuch.csv not loaded yet !");
}

static void test_load_header(void **state)
{
    http_reply r;
    const char *body = "FILENAME=sent.csv&HEADER=TRUE&SEPARATOR=%7C&FILE=k%7Cv%0Aa%7C1%0Ab%7C2%0A";
    assert_int_equal(http_post(d.port, "/sts/LOAD", body, &r), 0);
    assert_non_null(strstr(r.body, "<body>2</body>"));
    http_reply_free(&r);
    get("/sts/COLUMNS?FILENAME=sent.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"columns\":[\"k\",\"v\"],\"separator\":\"|\"}", NULL);
    /* A short line in a sent file: the same KO, nothing loaded. */
    body = "FILENAME=sent2.csv&HEADER=TRUE&FILE=a,b%0A1%0A";
    assert_int_equal(http_post(d.port, "/sts/LOAD", body, &r), 0);
    assert_non_null(strstr(r.body, "Line 2 has 1 fields, the header names 2 !"));
    http_reply_free(&r);
    ko("/sts/LENGTH?FILENAME=sent2.csv", "sent2.csv not loaded yet !");
}

static void test_read_fields(void **state)
{
    load_users();
    get("/sts/READ?FILENAME=users.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"line\":\"u1,p1,\\\"Doe, John\\\"\",\"fields\":{\"login\":\"u1\","
        "\"pass\":\"p1\",\"full name\":\"Doe, John\"}}", NULL);
    /* HTML: the page as before; the fields as headers only when asked. */
    http_reply r;
    char v[256];
    get("/sts/READ?FILENAME=users.csv", 200, NULL, &r);
    assert_int_equal(http_header(&r, "X-STS-Field-login", v, sizeof v), -1);
    http_reply_free(&r);
    get("/sts/READ?FILENAME=users.csv&FIELDS=TRUE", 200, NULL, &r);
    assert_int_equal(http_header(&r, "X-STS-Field-login", v, sizeof v), 0);
    assert_string_equal(v, "u3");
    assert_int_equal(http_header(&r, "X-STS-Field-full%20name", v, sizeof v), 0);
    assert_string_equal(v, "x");
    http_reply_free(&r);
    get("/sts/READ?FILENAME=users.csv&FIELDS=TRUE", 200, NULL, &r);
    assert_int_equal(http_header(&r, "X-STS-Field-full%20name", v, sizeof v), 0);
    assert_string_equal(v, "Doe%2C%20John");
    http_reply_free(&r);
    get("/sts/READMULTI?FILENAME=users.csv&NB_LINES=2&FORMAT=JSON", 200,
        "{\"ok\":true,\"lines\":[\"u2,p2,\\\"He said \\\"\\\"hi\\\"\\\"\\\"\",\"u3,p3,x\"],"
        "\"fields\":[{\"login\":\"u2\",\"pass\":\"p2\",\"full name\":\"He said \\\"hi\\\"\"},"
        "{\"login\":\"u3\",\"pass\":\"p3\",\"full name\":\"x\"}]}", NULL);
    /* READMULTI in HTML: as before. */
    ok("/sts/LENGTH?FILENAME=users.csv", "3");
    ko("/sts/READ?FILENAME=users.csv&FIELDS=yes", "FIELDS value has to be TRUE or FALSE !");
    ko_json("/sts/READ?FILENAME=users.csv&FIELDS=yes&FORMAT=JSON", 400,
            "FIELDS value has to be TRUE or FALSE !");
}

static void test_find_column(void **state)
{
    load_users();
    /* KEEP=TRUE moves the line to the tail, the index follows. */
    get("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u1&FORMAT=JSON", 200,
        "{\"ok\":true,\"line\":\"u1,p1,\\\"Doe, John\\\"\",\"fields\":{\"login\":\"u1\","
        "\"pass\":\"p1\",\"full name\":\"Doe, John\"}}", NULL);
    get("/sts/PEEK?FILENAME=users.csv&FORMAT=JSON", 200, NULL, NULL);
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=full%20name&LINE=He%20said%20%22hi%22",
       "u2,p2,\"He said \"\"hi\"\"\"");
    /* A whole field, not a substring, and only that column. */
    ko("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u", "Not find !");
    ko("/sts/FIND?FILENAME=users.csv&COLUMN=pass&LINE=u1", "Not find !");
    /* KEEP=FALSE takes it: the index forgets it. */
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u3&KEEP=FALSE", "u3,p3,x");
    ko("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u3", "Not find !");
    ok("/sts/LENGTH?FILENAME=users.csv", "2");
    /* ADD puts it back; the index sees it; RESET empties and keeps the columns. */
    ok("/sts/ADD?FILENAME=users.csv&LINE=u3,p9,z&ADD_MODE=LAST", "");
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u3", "u3,p9,z");
    ok("/sts/READ?FILENAME=users.csv&KEEP=FALSE", "u1,p1,\"Doe, John\"");
    ko("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u1", "Not find !");
    ok("/sts/RESET?FILENAME=users.csv", "");
    ok("/sts/COLUMNS?FILENAME=users.csv", "login,pass,full name");
    ok("/sts/ADD?FILENAME=users.csv&LINE=u5,p,q", "");
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u5&KEEP=FALSE", "u5,p,q");
}

static void test_find_column_bad(void **state)
{
    load_users();
    ko("/sts/FIND?FILENAME=users.csv&COLUMN=nope&LINE=u1", "COLUMN is not a column of the list !");
    ko_json("/sts/FIND?FILENAME=users.csv&COLUMN=nope&LINE=u1&FORMAT=JSON", 400,
            "COLUMN is not a column of the list !");
    ko_json("/sts/FIND?FILENAME=users.csv&COLUMN=&LINE=u1&FORMAT=JSON", 400,
            "COLUMN is not a column of the list !");
    ko_json("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u1&FIND_MODE=SUBSTRING&FORMAT=JSON",
            400, "COLUMN matches with FIND_MODE=EQUALS only !");
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u1&FIND_MODE=EQUALS", "u1,p1,\"Doe, John\"");
    ko_json("/sts/FIND?FILENAME=plain.csv&COLUMN=login&LINE=l1&FORMAT=JSON", 400,
            "COLUMN is not a column of the list !");
    ko_json("/sts/FIND?FILENAME=nosuch.csv&COLUMN=login&LINE=u1&FORMAT=JSON", 404,
            "nosuch.csv not loaded yet !");
    /* Nothing changed. */
    ok("/sts/LENGTH?FILENAME=users.csv", "3");
    ok("/sts/READ?FILENAME=users.csv", "u2,p2,\"He said \"\"hi\"\"\"");
}

static void test_add_unique_column(void **state)
{
    load_users();
    ko_json("/sts/ADD?FILENAME=users.csv&LINE=u2,other,y&UNIQUE=login&FORMAT=JSON", 409,
            "ENTRY already exists !");
    ko("/sts/ADD?FILENAME=users.csv&LINE=u2,other,y&UNIQUE=login", "ENTRY already exists !");
    ok("/sts/ADD?FILENAME=users.csv&LINE=u4,p2,y&UNIQUE=login", "");
    /* The same pass is fine under UNIQUE=login, not under UNIQUE=pass. */
    ko("/sts/ADD?FILENAME=users.csv&LINE=u5,p2,y&UNIQUE=pass", "ENTRY already exists !");
    /* Quoted and plain spellings of one value are the same value. */
    ko("/sts/ADD?FILENAME=users.csv&LINE=%22u4%22,p,y&UNIQUE=login", "ENTRY already exists !");
    ko_json("/sts/ADD?FILENAME=users.csv&LINE=u6,x,y&UNIQUE=nope&FORMAT=JSON", 400,
            "UNIQUE value has to be TRUE, FALSE or a column of the list !");
    ko_json("/sts/ADD?FILENAME=users.csv&LINE=u6,x&FORMAT=JSON", 400,
            "LINE has fewer fields than the list has columns, or a quote not closed !");
    ko_json("/sts/ADD?FILENAME=users.csv&LINE=u6,x,%22y&FORMAT=JSON", 400,
            "LINE has fewer fields than the list has columns, or a quote not closed !");
    ok("/sts/LENGTH?FILENAME=users.csv", "4");
    /* A list without columns keeps the reference's answers. */
    ko("/sts/ADD?FILENAME=plain.csv&LINE=l9&UNIQUE=login", "UNIQUE value has to be TRUE or FALSE !");
    ko("/sts/ADD?FILENAME=nolist.csv&LINE=l9&UNIQUE=login", "UNIQUE value has to be TRUE or FALSE !");
    ko("/sts/LENGTH?FILENAME=nolist.csv", "nolist.csv not loaded yet !");
    ok("/sts/ADD?FILENAME=plain.csv&LINE=a,b", "");
}

/* ADDMULTI holds every line to the columns as ADD does, all or none. */
static void test_addmulti_columns(void **state)
{
    load_users();
    ko_json("/sts/ADDMULTI?FILENAME=users.csv&LINE=u7,p7,z&LINE=u8,p8&FORMAT=JSON", 400,
            "Line 2 has fewer fields than the list has columns, or a quote not closed, "
            "nothing added !");
    ok("/sts/LENGTH?FILENAME=users.csv", "3");
    ok("/sts/ADDMULTI?FILENAME=users.csv&LINE=u7,p7,z&LINE=u8,p8,%22a,b%22&ADD_MODE=LAST", "2");
    ok("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u8", "u8,p8,\"a,b\"");
}

static void test_save_header(void **state)
{
    load_users();
    ok("/sts/INITFILE?FILENAME=semi.csv&HEADER=TRUE&SEPARATOR=%3B", "2");
    ok("/sts/SAVE?FILENAME=users.csv&ADD_TIMESTAMP=false", "3");
    size_t len;
    char *s = td_read_file(&d, "users.csv", &len);
    assert_non_null(s);
    assert_string_equal(s, "login,pass,full name\nu1,p1,\"Doe, John\"\n"
                           "u2,p2,\"He said \"\"hi\"\"\"\nu3,p3,x\n");
    free(s);
    /* What SAVE wrote loads back the same. */
    ok("/sts/INITFILE?FILENAME=users.csv&HEADER=TRUE", "3");
    ok("/sts/COLUMNS?FILENAME=users.csv", "login,pass,full name");
    ok("/sts/SAVE?FILENAME=semi.csv&ADD_TIMESTAMP=false", "2");
    s = td_read_file(&d, "semi.csv", &len);
    assert_string_equal(s, "id;name\n1;\"a;b\"\n2;c\n");
    free(s);
    td_write_file(&d, "users.csv", USERS, strlen(USERS));
}

static void test_bad_inputs(void **state)
{
    load_users();
    ko_json("/sts/INITFILE?FILENAME=short.csv&HEADER=TRUE&FORMAT=JSON", 400,
            "Line 3 has 2 fields, the header names 3 !");
    ko_json("/sts/INITFILE?FILENAME=dupname.csv&HEADER=TRUE&FORMAT=JSON", 400,
            "Column 3 of the header repeats the name of an earlier one !");
    ko_json("/sts/INITFILE?FILENAME=emptyname.csv&HEADER=TRUE&FORMAT=JSON", 400,
            "Column 2 of the header has an empty name or a NUL byte !");
    ko_json("/sts/INITFILE?FILENAME=badquote.csv&HEADER=TRUE&FORMAT=JSON", 400,
            "Line 2 has a quote not closed or followed by text !");
    ko_json("/sts/INITFILE?FILENAME=users.csv&HEADER=yes&FORMAT=JSON", 400,
            "HEADER value has to be TRUE or FALSE !");
    ko_json("/sts/INITFILE?FILENAME=users.csv&HEADER=TRUE&SEPARATOR=ab&FORMAT=JSON", 400,
            "SEPARATOR has to be one byte other than a quote, CR, LF or NUL !");
    ko_json("/sts/INITFILE?FILENAME=users.csv&HEADER=TRUE&SEPARATOR=%22&FORMAT=JSON", 400,
            "SEPARATOR has to be one byte other than a quote, CR, LF or NUL !");
    ko_json("/sts/INITFILE?FILENAME=users.csv&SEPARATOR=%3B&FORMAT=JSON", 400,
            "SEPARATOR needs HEADER=TRUE !");
    /* The HTML answers of the reference's INITFILE: a KO with status 200. */
    ko("/sts/INITFILE?FILENAME=short.csv&HEADER=TRUE", "Line 3 has 2 fields, the header names 3 !");
    /* Nothing replaced: the list is the one loaded first, columns and all. */
    ok("/sts/LENGTH?FILENAME=users.csv", "3");
    ok("/sts/COLUMNS?FILENAME=users.csv", "login,pass,full name");
    ko("/sts/LENGTH?FILENAME=short.csv", "short.csv not loaded yet !");
}

/* Last: the columns survive a SIGKILL and a restart on the same state directory. */
static void test_restart_keeps_columns(void **state)
{
    load_users();
    ok("/sts/READ?FILENAME=users.csv&KEEP=FALSE", "u1,p1,\"Doe, John\"");
    ok("/sts/INITFILE?FILENAME=semi.csv&HEADER=TRUE&SEPARATOR=%3B", "2");
    ok("/sts/RESET?FILENAME=semi.csv", "");
    ok("/sts/ADD?FILENAME=semi.csv&LINE=7;%22q;r%22", "");
    assert_int_equal(td_stop(&d, 1), 128 + 9);
    char so[400];
    snprintf(so, sizeof so, "--state-dir=%s/state", d.dir);
    const char *args[] = {"--journal=on", so, NULL};
    assert_int_equal(td_start(&d, args), 0);
    ok("/sts/COLUMNS?FILENAME=users.csv", "login,pass,full name");
    get("/sts/FIND?FILENAME=users.csv&COLUMN=login&LINE=u3&FORMAT=JSON", 200,
        "{\"ok\":true,\"line\":\"u3,p3,x\",\"fields\":{\"login\":\"u3\",\"pass\":\"p3\","
        "\"full name\":\"x\"}}", NULL);
    ok("/sts/LENGTH?FILENAME=users.csv", "2");
    get("/sts/COLUMNS?FILENAME=semi.csv&FORMAT=JSON", 200,
        "{\"ok\":true,\"columns\":[\"id\",\"name\"],\"separator\":\";\"}", NULL);
    ok("/sts/FIND?FILENAME=semi.csv&COLUMN=name&LINE=q%3Br", "7;\"q;r\"");
    /* And a restart after a compaction's SNAPSHOT records (a graceful stop, then a start
     * that rewrites the log) keeps them too. */
    assert_int_equal(td_stop(&d, 0), 0);
    assert_int_equal(td_start(&d, args), 0);
    ok("/sts/COLUMNS?FILENAME=semi.csv", "id;name");
    ok("/sts/COLUMNS?FILENAME=plain.csv", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_initfile_columns),
        cmocka_unit_test(test_load_header),
        cmocka_unit_test(test_read_fields),
        cmocka_unit_test(test_find_column),
        cmocka_unit_test(test_find_column_bad),
        cmocka_unit_test(test_add_unique_column),
        cmocka_unit_test(test_addmulti_columns),
        cmocka_unit_test(test_save_header),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_restart_keeps_columns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
