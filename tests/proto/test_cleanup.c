/* SPDX-License-Identifier: Apache-2.0 */
/* test_cleanup.c - bulk adds and clean-up between runs on a real stsd: ADDMULTI (body,
 * repeated LINE, all or none, waiters), DROP (a list, a prefix, its waiters and leases),
 * DEL PREFIX, TTL on SET, INCR, ONCE/DONE and EXPIRE (watchers woken), the admin token,
 * and all of it across kill -9 with the journal. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"
#include "expect.h"

static daemon_proc d;
static int port;

static int setup(void **state)
{
    *state = &d;
    if (td_start_fresh(&d, NULL, NULL) != 0)
        return -1;
    port = d.port;
    return 0;
}

static void ok(const char *target, const char *text)
{
    expect_get_page(port, target, 1, text);
}

static void ko(const char *target, const char *text)
{
    expect_get_page(port, target, 0, text);
}

static void json(const char *target, int status, const char *body)
{
    expect_get_json(port, target, status, body);
}

/* POSTs body as text/plain to target; the reply in *r. */
static void post_plain(int p, const char *target, const char *body, size_t len, http_reply *r)
{
    size_t cap = len + 512;
    char *req = malloc(cap);
    assert_non_null(req);
    int n = snprintf(req, cap, "POST %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     "Content-Type: text/plain\r\nContent-Length: %zu\r\n\r\n", target, len);
    memcpy(req + n, body, len);
    assert_int_equal(http_raw(p, req, (size_t)n + len, r), 0);
    free(req);
}

/* A request left waiting on its own connection. */
static void send_waiting(http_conn *c, const char *target)
{
    assert_int_equal(http_conn_open(c, port), 0);
    assert_int_equal(http_conn_send(c, target), 0);
}

/* The answer of a waiting request, which must come within ms. */
static void recv_within(http_conn *c, int ms, http_reply *r)
{
    assert_int_equal(http_conn_ready(c, ms), 1);
    assert_int_equal(http_conn_recv(c, r), 0);
    http_conn_close(c);
}

static void test_addmulti(void **state)
{
    (void)state;
    http_reply r;
    /* CRLF, LF and a last line without its line break: three lines, in order. */
    post_plain(port, "/sts/ADDMULTI?FILENAME=am.csv&ADD_MODE=LAST", "a\r\nb\nc", 6, &r);
    expect_page(&r, 1, "3");
    http_reply_free(&r);
    json("/sts/ADDMULTI?FILENAME=am.csv&LINE=d&LINE=e&ADD_MODE=LAST&FORMAT=JSON", 200,
         "{\"ok\":true,\"added\":2}");
    /* FIRST: as that many ADDs FIRST in order, the last one ends at the head. */
    ok("/sts/ADDMULTI?FILENAME=am.csv&LINE=y&LINE=z", "2");
    json("/sts/PEEK?FILENAME=am.csv&FORMAT=JSON", 200,
         "{\"ok\":true,\"name\":\"am.csv\",\"length\":7,\"offset\":0,\"lines\":["
         "{\"pos\":0,\"line\":\"z\"},{\"pos\":1,\"line\":\"y\"},{\"pos\":2,\"line\":\"a\"},"
         "{\"pos\":3,\"line\":\"b\"},{\"pos\":4,\"line\":\"c\"},{\"pos\":5,\"line\":\"d\"},"
         "{\"pos\":6,\"line\":\"e\"}],\"next_offset\":null}");
    /* All or none: each refusal names its line and changes nothing. */
    json("/sts/ADDMULTI?FILENAME=am.csv&LINE=new&LINE=c&UNIQUE=TRUE&FORMAT=JSON", 409,
         "{\"ok\":false,\"error\":\"Line 2 is in the list already, nothing added !\"}");
    json("/sts/ADDMULTI?FILENAME=am.csv&LINE=n1&LINE=n2&LINE=n1&UNIQUE=TRUE&FORMAT=JSON", 409,
         "{\"ok\":false,\"error\":\"Line 3 is in the list already, nothing added !\"}");
    json("/sts/ADDMULTI?FILENAME=am.csv&LINE=ok&LINE=x%0Dy&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"Line 2 holds a line break, nothing added !\"}");
    post_plain(port, "/sts/ADDMULTI?FILENAME=am.csv", "one\ntw\ro\n", 9, &r);
    expect_page_of("/sts/ADDMULTI", &r, 0, "Line 2 holds a line break, nothing added !");
    http_reply_free(&r);
    size_t big = (1u << 20) + 1;         /* stsd.maxLineSize's default, plus one */
    char *body = malloc(big + 8);
    assert_non_null(body);
    memcpy(body, "fine\n", 5);
    memset(body + 5, 'x', big);
    post_plain(port, "/sts/ADDMULTI?FILENAME=am.csv&FORMAT=JSON", body, big + 5, &r);
    assert_int_equal(r.status, 413);
    assert_string_equal(r.body, "{\"ok\":false,\"error\":\"Line 2 is too long, nothing added !\"}");
    http_reply_free(&r);
    free(body);
    post_plain(port, "/sts/ADDMULTI?FILENAME=am.csv&LINE=q", "p\n", 2, &r);
    expect_page_of("/sts/ADDMULTI", &r, 0, "Send the lines as LINE= or as a text/plain body, not both !");
    http_reply_free(&r);
    ko("/sts/ADDMULTI?FILENAME=am.csv", "LINE parameter was missing !");
    post_plain(port, "/sts/ADDMULTI?FILENAME=am.csv", "", 0, &r);
    expect_page_of("/sts/ADDMULTI", &r, 0, "LINE parameter was missing !");
    http_reply_free(&r);
    ko("/sts/ADDMULTI?FILENAME=am.csv&LINE=q&ADD_MODE=MIDDLE", "ADD_MODE value has to be FIRST or LAST !");
    ko("/sts/ADDMULTI?FILENAME=am.csv&LINE=q&UNIQUE=yes", "UNIQUE value has to be TRUE or FALSE !");
    ko("/sts/ADDMULTI?LINE=q", "FILENAME parameter was missing !");
    ok("/sts/LENGTH?FILENAME=am.csv", "7");
    /* Waiters are served as by ADD: two READs waiting, one ADDMULTI of two lines. */
    http_conn w1, w2;
    send_waiting(&w1, "/sts/READ?FILENAME=amw.csv&KEEP=FALSE&TIMEOUT=5");
    td_sleep_ms(150);             /* queued first: its own connection may be read later */
    send_waiting(&w2, "/sts/READ?FILENAME=amw.csv&KEEP=FALSE&TIMEOUT=5");
    td_sleep_ms(150);
    ok("/sts/ADDMULTI?FILENAME=amw.csv&LINE=w1&LINE=w2&ADD_MODE=LAST", "2");
    recv_within(&w1, 2000, &r);
    expect_page(&r, 1, "w1");
    http_reply_free(&r);
    recv_within(&w2, 2000, &r);
    expect_page(&r, 1, "w2");
    http_reply_free(&r);
    ok("/sts/LENGTH?FILENAME=amw.csv", "0");
}

static void test_drop(void **state)
{
    (void)state;
    http_reply r;
    char lease[64], target[256];
    ok("/sts/ADDMULTI?FILENAME=dr.csv&LINE=a&LINE=b&LINE=c&ADD_MODE=LAST", "3");
    /* A lease outstanding, and an owner's line. */
    assert_int_equal(http_get(port, "/sts/READ?FILENAME=dr.csv&KEEP=FALSE&LEASE=60", &r), 0);
    expect_page(&r, 1, "a");
    assert_int_equal(http_header(&r, "X-STS-Lease", lease, sizeof lease), 0);
    http_reply_free(&r);
    ok("/sts/READ?FILENAME=dr.csv&KEEP=FALSE&OWNER=bob", "b");
    /* A waiter on another list, told at once that its list is gone. */
    http_conn w;
    ok("/sts/ADD?FILENAME=dw.csv&LINE=x", "");
    ok("/sts/READ?FILENAME=dw.csv&KEEP=FALSE", "x");
    send_waiting(&w, "/sts/READ?FILENAME=dw.csv&KEEP=FALSE&TIMEOUT=10&FORMAT=JSON");
    td_sleep_ms(150);
    double t0 = td_mono_ms();
    json("/sts/DROP?FILENAME=dw.csv&FORMAT=JSON", 200, "{\"ok\":true,\"dropped\":1}");
    recv_within(&w, 2000, &r);
    assert_true(td_mono_ms() - t0 < 1000);
    assert_int_equal(r.status, 410);
    assert_string_equal(r.body, "{\"ok\":false,\"error\":\"dw.csv was dropped !\"}");
    http_reply_free(&r);
    ok("/sts/DROP?FILENAME=dr.csv", "1");
    ko("/sts/LENGTH?FILENAME=dr.csv", "dr.csv not loaded yet !");
    ko("/sts/LEASES?FILENAME=dr.csv", "dr.csv not loaded yet !");
    /* The lease and the owner's line went with it. */
    snprintf(target, sizeof target, "/sts/ACK?FILENAME=dr.csv&LEASE=%s&FORMAT=JSON", lease);
    http_get(port, target, &r);
    assert_int_equal(r.status, 404);
    assert_non_null(strstr(r.body, "lease"));
    http_reply_free(&r);
    http_get(port, "/sts/ACK?FILENAME=dr.csv&OWNER=bob", &r);
    assert_non_null(strstr(r.body, "<title>KO</title>"));
    http_reply_free(&r);
    /* Nothing of it is listed; the name comes back empty with the next ADD. */
    assert_int_equal(http_get(port, "/sts/STATUS", &r), 0);
    assert_null(strstr(r.body, "dr.csv"));
    http_reply_free(&r);
    ok("/sts/ADD?FILENAME=dr.csv&LINE=again", "");
    ok("/sts/LENGTH?FILENAME=dr.csv", "1");
    ok("/sts/READ?FILENAME=dr.csv&KEEP=FALSE&OWNER=bob", "again");
    /* DROP PREFIX. */
    ok("/sts/ADD?FILENAME=run7.a&LINE=1", "");
    ok("/sts/ADD?FILENAME=run7.b&LINE=1", "");
    ok("/sts/ADD?FILENAME=run8.a&LINE=1", "");
    json("/sts/DROP?PREFIX=run7.&FORMAT=JSON", 200, "{\"ok\":true,\"dropped\":2}");
    ok("/sts/DROP?PREFIX=run7.", "0");
    ok("/sts/LENGTH?FILENAME=run8.a", "1");
    ko("/sts/LENGTH?FILENAME=run7.b", "run7.b not loaded yet !");
    /* Bad input: a KO, nothing dropped. */
    json("/sts/DROP?PREFIX=&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"PREFIX must not be empty, nothing dropped !\"}");
    json("/sts/DROP?PREFIX=run8&FILENAME=run8.a&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"DROP takes FILENAME or PREFIX, not both !\"}");
    ko("/sts/DROP", "FILENAME parameter was missing !");
    json("/sts/DROP?FILENAME=never.csv&FORMAT=JSON", 404,
         "{\"ok\":false,\"error\":\"never.csv not loaded yet !\"}");
    ok("/sts/LENGTH?FILENAME=run8.a", "1");
}

static void test_del_prefix(void **state)
{
    (void)state;
    http_reply r;
    ok("/sts/SET?NAME=r1.x&VALUE=1", "1");
    ok("/sts/SET?NAME=r1.y&VALUE=2", "1");
    ok("/sts/SET?NAME=r2.x&VALUE=3", "1");
    http_conn w;
    send_waiting(&w, "/sts/GET?NAME=r1.x&VERSION=1&TIMEOUT=10");
    td_sleep_ms(150);
    json("/sts/DEL?PREFIX=&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"PREFIX must not be empty, nothing deleted !\"}");
    json("/sts/DEL?PREFIX=r1&NAME=r1.x&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"DEL takes NAME or PREFIX, not both !\"}");
    json("/sts/DEL?PREFIX=r1&IF_VERSION=1&FORMAT=JSON", 400,
         "{\"ok\":false,\"error\":\"IF_VERSION works with NAME only !\"}");
    ok("/sts/GET?NAME=r1.y", "2");
    json("/sts/DEL?PREFIX=r1.&FORMAT=JSON", 200, "{\"ok\":true,\"deleted\":2}");
    recv_within(&w, 2000, &r);               /* the watcher wakes as on DEL */
    expect_page_of("/sts/GET", &r, 0, "Key r1.x not found !");
    http_reply_free(&r);
    ok("/sts/DEL?PREFIX=r1.", "0");
    ko("/sts/GET?NAME=r1.y", "Key r1.y not found !");
    ok("/sts/GET?NAME=r2.x", "3");
    ko("/sts/DEL", "NAME parameter was missing !");
}

static void test_ttl(void **state)
{
    (void)state;
    http_reply r;
    /* Bad TTLs: a KO, and no key. */
    static const char *bad[] = {"0", "-1", "abc", "2592001", "1e3", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char target[128];
        snprintf(target, sizeof target, "/sts/SET?NAME=t0&VALUE=v&TTL=%s&FORMAT=JSON", bad[i]);
        json(target, 400, "{\"ok\":false,\"error\":\"TTL value has to be seconds from 0.001 "
             "to 2592000, nothing changed !\"}");
        snprintf(target, sizeof target, "/sts/INCR?NAME=t0&TTL=%s", bad[i]);
        ko(target, "TTL value has to be seconds from 0.001 to 2592000, nothing changed !");
    }
    ko("/sts/GET?NAME=t0", "Key t0 not found !");
    ko("/sts/INCR?NAME=t0&TTL=1&LEASE=5", "TTL and LEASE cannot go together on INCR, nothing changed !");
    ko("/sts/GET?NAME=t0", "Key t0 not found !");
    /* SET TTL: there, then gone, its watcher woken. */
    ok("/sts/SET?NAME=t1&VALUE=v&TTL=0.3", "1");
    ok("/sts/GET?NAME=t1", "v");
    http_conn w;
    send_waiting(&w, "/sts/GET?NAME=t1&VERSION=1&TIMEOUT=10");
    recv_within(&w, 2000, &r);
    expect_page_of("/sts/GET", &r, 0, "Key t1 not found !");
    http_reply_free(&r);
    ko("/sts/GET?NAME=t1", "Key t1 not found !");
    /* INCR TTL, and an INCR without TTL keeps it. */
    ok("/sts/INCR?NAME=t2&TTL=0.3", "1");
    ok("/sts/INCR?NAME=t2", "2");
    td_sleep_ms(600);
    ko("/sts/GET?NAME=t2", "Key t2 not found !");
    /* A SET without TTL ends one. */
    ok("/sts/SET?NAME=t3&VALUE=a&TTL=0.3", "1");
    ok("/sts/SET?NAME=t3&VALUE=b", "2");
    td_sleep_ms(600);
    ok("/sts/GET?NAME=t3", "b");
    /* EXPIRE. */
    json("/sts/EXPIRE?NAME=nokey&TTL=1&FORMAT=JSON", 404,
         "{\"ok\":false,\"error\":\"Key nokey not found !\"}");
    ko("/sts/EXPIRE?NAME=t3", "TTL parameter was missing !");
    ko("/sts/EXPIRE?NAME=t3&TTL=0", "TTL value has to be seconds from 0.001 to 2592000, nothing changed !");
    ko("/sts/EXPIRE?TTL=1", "NAME parameter was missing !");
    ok("/sts/GET?NAME=t3", "b");
    json("/sts/EXPIRE?NAME=t3&TTL=0.3&FORMAT=JSON", 200,
         "{\"ok\":true,\"name\":\"t3\",\"ttl_ms\":300,\"version\":0}");
    ok("/sts/GET?NAME=t3", "b");
    td_sleep_ms(600);
    ko("/sts/GET?NAME=t3", "Key t3 not found !");
}

/* ONCE TTL=: the run's result expires, so that the next run prepares again; DONE's own
 * TTL= wins. */
static void test_once_ttl(void **state)
{
    (void)state;
    http_reply r;
    char lease[64], target[256];
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=prep&TTL=0.3", &r), 0);
    expect_page(&r, 1, "RUN");
    assert_int_equal(http_header(&r, "X-STS-Lease", lease, sizeof lease), 0);
    http_reply_free(&r);
    snprintf(target, sizeof target, "/sts/DONE?NAME=prep&LEASE=%s&VALUE=ready", lease);
    ok(target, "DONE");
    ok("/sts/ONCE?NAME=prep", "DONE");
    td_sleep_ms(600);
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=prep", &r), 0);
    expect_page(&r, 1, "RUN");
    assert_int_equal(http_header(&r, "X-STS-Lease", lease, sizeof lease), 0);
    http_reply_free(&r);
    snprintf(target, sizeof target, "/sts/DONE?NAME=prep&LEASE=%s&TTL=0", lease);
    ko(target, "TTL value has to be seconds from 0.001 to 2592000, nothing changed !");
    snprintf(target, sizeof target, "/sts/DONE?NAME=prep&LEASE=%s&TTL=0.3", lease);
    ok(target, "DONE");
    td_sleep_ms(600);
    ko("/sts/GET?NAME=prep", "Key prep not found !");
}

/* With tokens on, DROP, EXPIRE and DEL PREFIX need the admin token; DEL NAME does not. */
static void test_admin(void **state)
{
    (void)state;
    daemon_proc a;
    http_reply r;
    const char *extra[] = {"-Dstsd.token=data1", "-Dstsd.adminToken=boss", NULL};
    assert_int_equal(td_mkdirs(&a), 0);
    assert_int_equal(td_start(&a, extra), 0);
    static const char *admin[] = {"/sts/DROP?FILENAME=l", "/sts/DROP?PREFIX=l",
                                  "/sts/EXPIRE?NAME=k&TTL=5", "/sts/DEL?PREFIX=k"};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(http_get_as(a.port, admin[i], "data1", NULL, &r), 0);
        assert_int_equal(r.status, 403);
        assert_non_null(strstr(r.body, "This command needs the admin token !"));
        http_reply_free(&r);
        assert_int_equal(http_get_as(a.port, admin[i], "boss", NULL, &r), 0);
        assert_null(strstr(r.body, "admin token"));
        http_reply_free(&r);
    }
    assert_int_equal(http_get_as(a.port, "/sts/SET?NAME=k&VALUE=1", "data1", NULL, &r), 0);
    http_reply_free(&r);
    assert_int_equal(http_get_as(a.port, "/sts/DEL?NAME=k", "data1", NULL, &r), 0);
    expect_page(&r, 1, "");
    http_reply_free(&r);
    assert_int_equal(td_stop(&a, 0), 0);
    td_cleanup(&a);
}

static void expect_at(int p, const char *target, int okay, const char *text)
{
    expect_get_page(p, target, okay, text);
}

/* ADDMULTI, DROP and TTLs survive kill -9: the journal holds them, deadlines included. */
static void test_restart(void **state)
{
    (void)state;
    daemon_proc j;
    char so[400];
    http_reply r;
    assert_int_equal(td_mkdirs(&j), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", j.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&j, args), 0);
    post_plain(j.port, "/sts/ADDMULTI?FILENAME=keep.csv&ADD_MODE=LAST", "l1\nl2\nl3\n", 9, &r);
    expect_page(&r, 1, "3");
    http_reply_free(&r);
    expect_at(j.port, "/sts/ADDMULTI?FILENAME=gone.csv&LINE=g1&LINE=g2", 1, "2");
    expect_at(j.port, "/sts/READ?FILENAME=gone.csv&KEEP=FALSE&LEASE=60", 1, "g2");
    expect_at(j.port, "/sts/DROP?FILENAME=gone.csv", 1, "1");
    expect_at(j.port, "/sts/ADDMULTI?FILENAME=p.a&LINE=1", 1, "1");
    expect_at(j.port, "/sts/DROP?PREFIX=p.", 1, "1");
    expect_at(j.port, "/sts/SET?NAME=long&VALUE=1&TTL=60", 1, "1");
    expect_at(j.port, "/sts/SET?NAME=short&VALUE=1&TTL=1.5", 1, "1");
    expect_at(j.port, "/sts/SET?NAME=exp&VALUE=1", 1, "1");
    expect_at(j.port, "/sts/EXPIRE?NAME=exp&TTL=1.5", 1, "");
    expect_at(j.port, "/sts/SET?NAME=k.1&VALUE=1", 1, "1");
    expect_at(j.port, "/sts/SET?NAME=k.2&VALUE=1", 1, "1");
    expect_at(j.port, "/sts/DEL?PREFIX=k.", 1, "2");
    assert_int_equal(td_stop(&j, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&j, args), 0);
    expect_at(j.port, "/sts/LENGTH?FILENAME=keep.csv", 1, "3");
    expect_at(j.port, "/sts/READ?FILENAME=keep.csv&READ_MODE=LAST", 1, "l3");
    expect_at(j.port, "/sts/LENGTH?FILENAME=gone.csv", 0, "gone.csv not loaded yet !");
    expect_at(j.port, "/sts/LENGTH?FILENAME=p.a", 0, "p.a not loaded yet !");
    expect_at(j.port, "/sts/GET?NAME=k.1", 0, "Key k.1 not found !");
    expect_at(j.port, "/sts/GET?NAME=short", 1, "1");
    expect_at(j.port, "/sts/GET?NAME=exp", 1, "1");
    td_sleep_ms(1800);
    expect_at(j.port, "/sts/GET?NAME=short", 0, "Key short not found !");
    expect_at(j.port, "/sts/GET?NAME=exp", 0, "Key exp not found !");
    expect_at(j.port, "/sts/GET?NAME=long", 1, "1");
    /* Once more after the expiries: their DEL records replay too. */
    assert_int_equal(td_stop(&j, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&j, args), 0);
    expect_at(j.port, "/sts/GET?NAME=short", 0, "Key short not found !");
    expect_at(j.port, "/sts/GET?NAME=long", 1, "1");
    expect_at(j.port, "/sts/LENGTH?FILENAME=keep.csv", 1, "3");
    assert_int_equal(td_stop(&j, 0), 0);
    td_cleanup(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addmulti),
        cmocka_unit_test(test_drop),
        cmocka_unit_test(test_del_prefix),
        cmocka_unit_test(test_ttl),
        cmocka_unit_test(test_once_ttl),
        cmocka_unit_test(test_admin),
        cmocka_unit_test(test_restart),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
