/* SPDX-License-Identifier: Apache-2.0 */
/* test_barriers.c - BARRIER, OPEN and BARRIERS on a real stsd: opening at exactly PARTIES,
 * 20 generations in a row (nobody released twice, nobody left behind), KO and RELEASE on
 * timeout, TIMEOUT=0, a PARTIES mismatch, bad values, gone clients not counted, opening by
 * hand, the listing, tokens and CSRF, a wait longer than stsd.connectionTimeout, and STOP
 * and SIGTERM answering waiters. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"
#include "expect.h"

static daemon_proc d;

static int setup(void **state)
{
    *state = &d;
    return td_start_fresh(&d, NULL, NULL);
}

static void expect_get(const char *target, int ok, const char *text)
{
    expect_get_page(d.port, target, ok, text);
}

/* GET target: a JSON answer with this HTTP status and exactly this body. */
static void expect_json(const char *target, int status, const char *body)
{
    expect_get_json(d.port, target, status, body);
}

/* Opens a connection and sends target on it: an arrival. */
static void arrive(http_conn *c, const char *target)
{
    assert_int_equal(http_conn_open(c, d.port), 0);
    assert_int_equal(http_conn_send(c, target), 0);
}

/* The answer on c (within ms), kept open; returns its X-STS-Arrival (0: none). */
static int recv_answer(http_conn *c, int ms, http_reply *r)
{
    assert_true(http_conn_ready(c, ms));
    assert_int_equal(http_conn_recv(c, r), 0);
    char v[32];
    return http_header(r, "X-STS-Arrival", v, sizeof v) == 0 ? atoi(v) : 0;
}

/* The arrival on c is released (within ms) with generation gen: returns its place. */
static int expect_released(http_conn *c, int ms, int gen)
{
    http_reply r;
    int at = recv_answer(c, ms, &r);
    char g[24];
    snprintf(g, sizeof g, "%d", gen);
    expect_page(&r, 1, g);
    http_reply_free(&r);
    http_conn_close(c);
    return at;
}

/* The arrival on c gets (within ms) exactly this JSON body. */
static void expect_json_answer(http_conn *c, int ms, int status, const char *body)
{
    http_reply r;
    recv_answer(c, ms, &r);
    assert_int_equal(r.status, status);
    if (strcmp(r.body, body) != 0)
        fail_msg("want: %s\ngot:  %s", body, r.body);
    http_reply_free(&r);
    http_conn_close(c);
}

static void expect_ko_answer(http_conn *c, int ms, const char *msg)
{
    http_reply r;
    assert_int_equal(recv_answer(c, ms, &r), 0);
    expect_page_of("/sts/BARRIER", &r, 0, msg);
    http_reply_free(&r);
    http_conn_close(c);
}

static void test_opens_at_exactly_parties(void **state)
{
    enum { N = 5 };
    http_conn c[N];
    for (int i = 0; i < N - 1; i++) {
        arrive(&c[i], "/sts/BARRIER?NAME=b1&PARTIES=5&TIMEOUT=10");
        td_sleep_ms(40);                                   /* arrival order */
    }
    for (int i = 0; i < N - 1; i++)
        assert_false(http_conn_ready(&c[i], i == 0 ? 300 : 0));
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/BARRIERS?FORMAT=JSON", &r), 0);
    assert_non_null(strstr(r.body, "{\"name\":\"b1\",\"parties\":5,\"arrived\":4,\"generation\":0}"));
    http_reply_free(&r);
    arrive(&c[N - 1], "/sts/BARRIER?NAME=b1&PARTIES=5&TIMEOUT=10&FORMAT=JSON");
    expect_json_answer(&c[N - 1], 1000, 200,
                       "{\"ok\":true,\"generation\":0,\"arrival\":5,\"parties\":5,\"released\":\"full\"}");
    for (int i = 0; i < N - 1; i++)
        assert_int_equal(expect_released(&c[i], 1000, 0), i + 1);
    assert_int_equal(http_get(d.port, "/sts/BARRIERS?FORMAT=JSON", &r), 0);
    assert_non_null(strstr(r.body, "{\"name\":\"b1\",\"parties\":5,\"arrived\":0,\"generation\":1}"));
    http_reply_free(&r);
    /* PARTIES=1 opens at once, every time. */
    expect_get("/sts/BARRIER?NAME=one&PARTIES=1", 1, "0");
    expect_get("/sts/BARRIER?NAME=one&PARTIES=1", 1, "1");
}

/* 20 generations of 10 in a row, on keep-alive connections: each arrival is released
 * once per generation, with that generation, and the places are 1..10 each time. */
static void test_twenty_generations(void **state)
{
    enum { N = 10, G = 20 };
    http_conn c[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(http_conn_open(&c[i], d.port), 0);
    for (int g = 0; g < G; g++) {
        for (int i = 0; i < N; i++)
            assert_int_equal(http_conn_send(&c[i], "/sts/BARRIER?NAME=gen&PARTIES=10&TIMEOUT=10"), 0);
        int seen[N + 1] = {0};
        for (int i = 0; i < N; i++) {
            http_reply r;
            int at = recv_answer(&c[i], 2000, &r);
            char want[24];
            snprintf(want, sizeof want, "%d", g);
            expect_page(&r, 1, want);
            http_reply_free(&r);
            assert_true(at >= 1 && at <= N);
            assert_int_equal(seen[at]++, 0);
        }
        for (int i = 0; i < N; i++)                     /* nobody answered twice */
            assert_false(http_conn_ready(&c[i], 0));
    }
    for (int i = 0; i < N; i++)
        http_conn_close(&c[i]);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/BARRIERS?FORMAT=JSON", &r), 0);
    assert_non_null(strstr(r.body, "{\"name\":\"gen\",\"parties\":10,\"arrived\":0,\"generation\":20}"));
    http_reply_free(&r);
}

static void test_timeout_ko(void **state)
{
    http_conn a, b, c;
    arrive(&a, "/sts/BARRIER?NAME=t1&PARTIES=3&TIMEOUT=0.5");
    td_sleep_ms(50);
    arrive(&b, "/sts/BARRIER?NAME=t1&PARTIES=3&TIMEOUT=10");
    int64_t t0 = td_now_ms();
    expect_ko_answer(&a, 2000, "Barrier t1 timed out with 2 of 3 arrived !");
    assert_true(td_now_ms() - t0 < 1500);
    assert_false(http_conn_ready(&b, 100));                /* b waits on, alone now */
    /* In JSON: 408. */
    expect_json("/sts/BARRIER?NAME=t1&PARTIES=3&TIMEOUT=0.2&FORMAT=JSON", 408,
                "{\"ok\":false,\"error\":\"Barrier t1 timed out with 2 of 3 arrived !\"}");
    /* The one who left does not count: two more are needed. */
    arrive(&c, "/sts/BARRIER?NAME=t1&PARTIES=3&TIMEOUT=10");
    assert_false(http_conn_ready(&b, 200));
    expect_get("/sts/BARRIER?NAME=t1&PARTIES=3&TIMEOUT=10", 1, "0");
    assert_int_equal(expect_released(&b, 1000, 0), 1);
    assert_int_equal(expect_released(&c, 1000, 0), 2);
    /* TIMEOUT=0: open now, or time out now without waiting. */
    expect_get("/sts/BARRIER?NAME=t1&PARTIES=2&TIMEOUT=0", 0,
               "Barrier t1 timed out with 1 of 2 arrived !");
    expect_get("/sts/BARRIER?NAME=t1&PARTIES=1&TIMEOUT=0", 1, "1");
}

static void test_timeout_release(void **state)
{
    http_conn a, b;
    arrive(&a, "/sts/BARRIER?NAME=t2&PARTIES=5&TIMEOUT=10&FORMAT=JSON");
    td_sleep_ms(50);
    arrive(&b, "/sts/BARRIER?NAME=t2&PARTIES=5&TIMEOUT=0.4&ON_TIMEOUT=RELEASE&FORMAT=JSON");
    expect_json_answer(&b, 2000, 200,
                       "{\"ok\":true,\"generation\":0,\"arrival\":2,\"parties\":5,\"released\":\"timeout\"}");
    expect_json_answer(&a, 1000, 200,
                       "{\"ok\":true,\"generation\":0,\"arrival\":1,\"parties\":5,\"released\":\"timeout\"}");
    /* The next arrival starts generation 1; TIMEOUT=0 with RELEASE opens it at once. */
    expect_json("/sts/BARRIER?NAME=t2&PARTIES=5&TIMEOUT=0&ON_TIMEOUT=RELEASE&FORMAT=JSON", 200,
                "{\"ok\":true,\"generation\":1,\"arrival\":1,\"parties\":5,\"released\":\"timeout\"}");
}

static void test_parties_mismatch_and_bad_values(void **state)
{
    http_conn a;
    arrive(&a, "/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(100);
    expect_get("/sts/BARRIER?NAME=m&PARTIES=4&TIMEOUT=10", 0,
               "PARTIES=4 differs from the PARTIES=3 of the arrivals waiting at barrier m !");
    expect_json("/sts/BARRIER?NAME=m&PARTIES=2&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"PARTIES=2 differs from the PARTIES=3 of the arrivals "
                "waiting at barrier m !\"}");
    /* Changed nothing: one waits, and two more open it. */
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/BARRIERS", &r), 0);
    assert_non_null(strstr(r.body, "\nm = 1 of 3 arrived, generation 0<br />\n"));
    http_reply_free(&r);
    const char *bad[][2] = {
        {"/sts/BARRIER?PARTIES=2", "NAME parameter was missing !"},
        {"/sts/BARRIER?NAME=&PARTIES=2", "NAME has to be 1 to 1024 bytes, none of them NUL !"},
        {"/sts/BARRIER?NAME=a%00b&PARTIES=2", "NAME has to be 1 to 1024 bytes, none of them NUL !"},
        {"/sts/BARRIER?NAME=m", "PARTIES parameter was missing !"},
        {"/sts/BARRIER?NAME=m&PARTIES=0", "PARTIES value has to be a number from 1 to 100000 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=100001", "PARTIES value has to be a number from 1 to 100000 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=-1", "PARTIES value has to be a number from 1 to 100000 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=3x", "PARTIES value has to be a number from 1 to 100000 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=601", "TIMEOUT value has to be a number of seconds from 0 to 600 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=abc", "TIMEOUT value has to be a number of seconds from 0 to 600 !"},
        {"/sts/BARRIER?NAME=m&PARTIES=3&ON_TIMEOUT=release", "ON_TIMEOUT value has to be KO or RELEASE !"},
        {"/sts/OPEN", "NAME parameter was missing !"},
        {"/sts/OPEN?NAME=nope", "Barrier nope not found !"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        expect_get(bad[i][0], 0, bad[i][1]);
    expect_json("/sts/BARRIER?NAME=m&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"PARTIES parameter was missing !\"}");
    expect_json("/sts/OPEN?NAME=nope&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"Barrier nope not found !\"}");
    assert_false(http_conn_ready(&a, 0));
    expect_get("/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=0", 0,
               "Barrier m timed out with 2 of 3 arrived !");
    http_conn b;
    arrive(&b, "/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(50);
    expect_get("/sts/BARRIER?NAME=m&PARTIES=3&TIMEOUT=10", 1, "0");
    assert_int_equal(expect_released(&a, 1000, 0), 1);
    assert_int_equal(expect_released(&b, 1000, 0), 2);
}

/* A client that closed its connection does not count: the barrier waits for another. */
static void test_gone_clients_not_counted(void **state)
{
    http_conn a, gone, b;
    arrive(&a, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(40);
    arrive(&gone, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(40);
    http_conn_close(&gone);
    td_sleep_ms(100);
    arrive(&b, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    assert_false(http_conn_ready(&a, 300));               /* two live arrivals: waits on */
    assert_false(http_conn_ready(&b, 0));
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/BARRIERS?FORMAT=JSON", &r), 0);
    assert_non_null(strstr(r.body, "{\"name\":\"g\",\"parties\":3,\"arrived\":2,\"generation\":0}"));
    http_reply_free(&r);
    expect_get("/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10", 1, "0");
    assert_int_equal(expect_released(&a, 1000, 0), 1);
    assert_int_equal(expect_released(&b, 1000, 0), 2);
    /* OPEN drops the gone too, and counts only the released. */
    arrive(&gone, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(40);
    arrive(&a, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(40);
    http_conn_close(&gone);
    td_sleep_ms(100);
    expect_get("/sts/OPEN?NAME=g", 1, "1");
    assert_int_equal(expect_released(&a, 1000, 1), 1);
    /* Only the arrivals still there set PARTIES: a gone one's does not refuse another. */
    arrive(&gone, "/sts/BARRIER?NAME=g&PARTIES=3&TIMEOUT=10");
    td_sleep_ms(40);
    http_conn_close(&gone);
    td_sleep_ms(100);
    expect_get("/sts/BARRIER?NAME=g&PARTIES=1&TIMEOUT=10", 1, "2");
}

static void test_open_by_hand(void **state)
{
    http_conn a, b;
    arrive(&a, "/sts/BARRIER?NAME=h&PARTIES=50&TIMEOUT=10&FORMAT=JSON");
    td_sleep_ms(40);
    arrive(&b, "/sts/BARRIER?NAME=h&PARTIES=50&TIMEOUT=10");
    td_sleep_ms(100);
    expect_json("/sts/OPEN?NAME=h&FORMAT=JSON", 200, "{\"ok\":true,\"released\":2,\"generation\":0}");
    expect_json_answer(&a, 1000, 200,
                       "{\"ok\":true,\"generation\":0,\"arrival\":1,\"parties\":50,\"released\":\"hand\"}");
    assert_int_equal(expect_released(&b, 1000, 0), 2);
    /* Nobody waiting: nothing opens. */
    expect_get("/sts/OPEN?NAME=h", 1, "0");
    expect_json("/sts/OPEN?NAME=h&FORMAT=JSON", 200, "{\"ok\":true,\"released\":0,\"generation\":1}");
}

/* BARRIER and BARRIERS take the data token, OPEN the admin one; a browser's BARRIER or
 * OPEN without the dashboard's header is refused (CSRF), its BARRIERS is not. */
static void test_tokens_and_csrf(void **state)
{
    daemon_proc d2;
    assert_int_equal(td_mkdirs(&d2), 0);
    const char *args[] = {"-Dstsd.token=data-1", "-Dstsd.adminToken=admin-2", NULL};
    assert_int_equal(td_start(&d2, args), 0);
    http_reply r;
    assert_int_equal(http_get_as(d2.port, "/sts/BARRIER?NAME=x&PARTIES=1", NULL, NULL, &r), 0);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/BARRIER?NAME=x&PARTIES=1", "data-1", NULL, &r), 0);
    expect_page(&r, 1, "0");
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/OPEN?NAME=x", "data-1", NULL, &r), 0);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/OPEN?NAME=x", "admin-2", NULL, &r), 0);
    expect_page(&r, 1, "0");
    http_reply_free(&r);
    const char *browser = "Origin: http://evil.example\r\n";
    assert_int_equal(http_get_as(d2.port, "/sts/BARRIER?NAME=x&PARTIES=1", "data-1", browser, &r), 0);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/OPEN?NAME=x", "admin-2", browser, &r), 0);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/BARRIERS", "data-1", browser, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "x = 0 of 1 arrived, generation 1"));
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/BARRIER?NAME=x&PARTIES=1", "data-1",
                              "Origin: http://evil.example\r\nX-STS-UI: 1\r\n", &r), 0);
    expect_page(&r, 1, "1");
    http_reply_free(&r);
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

/* A parked arrival outlives stsd.connectionTimeout: it is answered at its own timeout. */
static void test_longer_than_connection_timeout(void **state)
{
    daemon_proc d2;
    assert_int_equal(td_mkdirs(&d2), 0);
    const char *args[] = {"-Dstsd.connectionTimeout=1", NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int port = d.port;
    d.port = d2.port;
    http_conn a;
    arrive(&a, "/sts/BARRIER?NAME=slow&PARTIES=2&TIMEOUT=2.5");
    assert_false(http_conn_ready(&a, 2000));
    expect_ko_answer(&a, 2000, "Barrier slow timed out with 1 of 2 arrived !");
    d.port = port;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

/* STOP (and SIGTERM) answer every arrival at once with a KO, and the server exits. */
static void stop_with_arrivals(int by_signal)
{
    enum { N = 20 };
    daemon_proc d2;
    assert_int_equal(td_mkdirs(&d2), 0);
    assert_int_equal(td_start(&d2, NULL), 0);
    int port = d.port;
    d.port = d2.port;
    http_conn c[N + 2], gone;
    for (int i = 0; i < N; i++)
        arrive(&c[i], i % 2 ? "/sts/BARRIER?NAME=s&PARTIES=100&TIMEOUT=30"
                            : "/sts/BARRIER?NAME=s2&PARTIES=100&ON_TIMEOUT=RELEASE");
    /* A gone arrival dropped while its barrier waits on is answered (to nobody) then:
     * it is not among the requests still parked at the stop. */
    arrive(&gone, "/sts/BARRIER?NAME=s3&PARTIES=3&TIMEOUT=30");
    td_sleep_ms(50);
    http_conn_close(&gone);
    td_sleep_ms(50);
    for (int i = N; i < N + 2; i++) {
        arrive(&c[i], "/sts/BARRIER?NAME=s3&PARTIES=3&TIMEOUT=30");
        td_sleep_ms(50);
    }
    td_sleep_ms(200);
    int64_t t0 = td_now_ms();
    if (by_signal)
        kill(d2.pid, SIGTERM);
    else
        expect_get("/sts/STOP", 1, "");
    for (int i = 0; i < N + 2; i++)
        expect_ko_answer(&c[i], 1000, i >= N ? "Server is stopping: barrier s3 did not open !"
                                      : i % 2 ? "Server is stopping: barrier s did not open !"
                                              : "Server is stopping: barrier s2 did not open !");
    assert_int_equal(td_wait(&d2, 1000), 0);
    assert_non_null(strstr(td_log(&d2), "answering 22 waiting requests"));
    assert_true(td_now_ms() - t0 < 1000);
    d.port = port;
    td_cleanup(&d2);
}

static void test_stop_answers_arrivals(void **state)
{
    stop_with_arrivals(0);
}

static void test_sigterm_answers_arrivals(void **state)
{
    stop_with_arrivals(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opens_at_exactly_parties),
        cmocka_unit_test(test_twenty_generations),
        cmocka_unit_test(test_timeout_ko),
        cmocka_unit_test(test_timeout_release),
        cmocka_unit_test(test_parties_mismatch_and_bad_values),
        cmocka_unit_test(test_gone_clients_not_counted),
        cmocka_unit_test(test_open_by_hand),
        cmocka_unit_test(test_tokens_and_csrf),
        cmocka_unit_test(test_longer_than_connection_timeout),
        cmocka_unit_test(test_stop_answers_arrivals),
        cmocka_unit_test(test_sigterm_answers_arrivals),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
