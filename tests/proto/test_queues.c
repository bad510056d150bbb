/* SPDX-License-Identifier: Apache-2.0 */
/* test_queues.c - READ, READMULTI and FIND with TIMEOUT on a real stsd: waiting, FIFO
 * order, one wake per line, KEEP=TRUE pass-through, FIND matching, timeouts, clients
 * that leave, STOP and SIGTERM during waits, bad values. */
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
    return td_start_fresh(&d, "f.csv", "f1\nf2\n");
}

static void expect_get(const char *target, int ok, const char *text)
{
    expect_get_page(d.port, target, ok, text);
}

/* Opens a connection and sends target on it: a waiter. */
static void start(http_conn *c, const char *target)
{
    assert_int_equal(http_conn_open(c, d.port), 0);
    assert_int_equal(http_conn_send(c, target), 0);
}

/* The waiter on c is answered (within ms) with the OK/KO page text. */
static void expect_answer(http_conn *c, int ms, int ok, const char *text)
{
    assert_true(http_conn_ready(c, ms));
    http_reply r;
    assert_int_equal(http_conn_recv(c, &r), 0);
    expect_page(&r, ok, text);
    http_reply_free(&r);
    http_conn_close(c);
}

static void test_read_waits_for_add(void **state)
{
    http_conn c;
    start(&c, "/sts/READ?FILENAME=w1&KEEP=FALSE&TIMEOUT=5");
    assert_false(http_conn_ready(&c, 300));              /* the list does not exist yet */
    int64_t t0 = td_now_ms();
    expect_get("/sts/ADD?FILENAME=w1&LINE=hello", 1, "");
    expect_answer(&c, 1000, 1, "hello");
    assert_true(td_now_ms() - t0 < 1000);
    expect_get("/sts/LENGTH?FILENAME=w1", 1, "0");
    /* ADD FIRST feeds waiters too, and a waiter on an existing empty list. */
    start(&c, "/sts/READ?FILENAME=w1&KEEP=FALSE&TIMEOUT=5");
    assert_false(http_conn_ready(&c, 200));
    expect_get("/sts/ADD?FILENAME=w1&LINE=first&ADD_MODE=FIRST", 1, "");
    expect_answer(&c, 1000, 1, "first");
}

static void test_timeout_not_early_not_late(void **state)
{
    http_reply r;
    int64_t t0 = td_now_ms();
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=w2&TIMEOUT=0.6", &r), 0);
    int64_t took = td_now_ms() - t0;
    expect_page(&r, 0, "w2 not loaded yet !");          /* the answer at that moment */
    http_reply_free(&r);
    assert_true(took >= 600);
    assert_true(took < 1600);          /* late only by scheduling on a busy machine */
    expect_get("/sts/ADD?FILENAME=w2&LINE=x", 1, "");
    expect_get("/sts/READ?FILENAME=w2&KEEP=FALSE", 1, "x");
    t0 = td_now_ms();
    expect_get("/sts/READMULTI?FILENAME=w2&NB_LINES=2&TIMEOUT=0.3", 0, "No more line !");
    took = td_now_ms() - t0;
    assert_true(took >= 300 && took < 1300);
    expect_get("/sts/ADD?FILENAME=w2&LINE=y", 1, "");
    expect_get("/sts/READMULTI?FILENAME=w2&NB_LINES=2&TIMEOUT=0.3", 0,
               "Number lines to read greater than file size, 2 greater than 1 !");
    /* TIMEOUT=0 is today's behaviour, and a servable request does not wait. */
    expect_get("/sts/READ?FILENAME=w2&TIMEOUT=0", 1, "y");
    expect_get("/sts/READ?FILENAME=w2&TIMEOUT=60&KEEP=FALSE", 1, "y");
    expect_get("/sts/READ?FILENAME=w2&TIMEOUT=0&KEEP=FALSE", 0, "No more line !");
}

static void test_fifo_one_wake_per_line(void **state)
{
    enum { N = 5 };
    http_conn c[N];
    char target[128];
    for (int i = 0; i < N; i++) {
        snprintf(target, sizeof target, "/sts/READ?FILENAME=w3&KEEP=FALSE&TIMEOUT=10");
        start(&c[i], target);
        td_sleep_ms(50);                                   /* arrival order */
    }
    expect_get("/sts/ADD?FILENAME=w3&LINE=l0", 1, "");
    expect_answer(&c[0], 1000, 1, "l0");
    for (int i = 1; i < N; i++)
        assert_false(http_conn_ready(&c[i], i == 1 ? 200 : 0));
    for (int i = 1; i < N; i++) {
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=w3&LINE=l%d", i);
        expect_get(target, 1, "");
        char line[16];
        snprintf(line, sizeof line, "l%d", i);
        expect_answer(&c[i], 1000, 1, line);
    }
    expect_get("/sts/LENGTH?FILENAME=w3", 1, "0");
}

static void test_keep_true_passes_through(void **state)
{
    http_conn c[3];
    for (int i = 0; i < 3; i++) {
        start(&c[i], "/sts/READ?FILENAME=w4&TIMEOUT=10");
        td_sleep_ms(30);
    }
    http_conn taker;
    start(&taker, "/sts/READ?FILENAME=w4&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    expect_get("/sts/ADD?FILENAME=w4&LINE=shared", 1, "");
    for (int i = 0; i < 3; i++)
        expect_answer(&c[i], 1000, 1, "shared");
    expect_answer(&taker, 1000, 1, "shared");         /* and the consumer behind them */
    expect_get("/sts/LENGTH?FILENAME=w4", 1, "0");
}

static void test_find_woken_by_matching_lines_only(void **state)
{
    http_conn f, r;
    start(&f, "/sts/FIND?FILENAME=w5&LINE=b&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    start(&r, "/sts/READ?FILENAME=w5&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    expect_get("/sts/ADD?FILENAME=w5&LINE=a", 1, "");
    expect_answer(&r, 1000, 1, "a");                  /* the FIND waiter let it pass */
    assert_false(http_conn_ready(&f, 200));
    expect_get("/sts/ADD?FILENAME=w5&LINE=c", 1, "");
    assert_false(http_conn_ready(&f, 200));
    expect_get("/sts/ADD?FILENAME=w5&LINE=xbx", 1, "");
    expect_answer(&f, 1000, 1, "xbx");
    expect_get("/sts/LENGTH?FILENAME=w5", 1, "1");
    /* EQUALS and regexes wait too; a timed-out FIND answers as FIND does then. */
    start(&f, "/sts/FIND?FILENAME=w5&LINE=%5Ez%5Cd%24&FIND_MODE=REGEX_MATCH&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    expect_get("/sts/ADD?FILENAME=w5&LINE=zz", 1, "");
    assert_false(http_conn_ready(&f, 200));
    expect_get("/sts/ADD?FILENAME=w5&LINE=z7", 1, "");
    expect_answer(&f, 1000, 1, "z7");
    expect_get("/sts/FIND?FILENAME=w5&LINE=nothing&FIND_MODE=EQUALS&TIMEOUT=0.2", 0,
               "Not find !");
}

static void test_readmulti_waits_for_all(void **state)
{
    http_conn c;
    start(&c, "/sts/READMULTI?FILENAME=w6&NB_LINES=3&KEEP=FALSE&TIMEOUT=10");
    expect_get("/sts/ADD?FILENAME=w6&LINE=a", 1, "");
    expect_get("/sts/ADD?FILENAME=w6&LINE=b", 1, "");
    assert_false(http_conn_ready(&c, 200));
    expect_get("/sts/ADD?FILENAME=w6&LINE=c", 1, "");
    assert_true(http_conn_ready(&c, 1000));
    http_reply r;
    assert_int_equal(http_conn_recv(&c, &r), 0);
    assert_non_null(strstr(r.body, "a<br />"));
    assert_non_null(strstr(r.body, "c<br />"));
    http_reply_free(&r);
    http_conn_close(&c);
    expect_get("/sts/LENGTH?FILENAME=w6", 1, "0");
}

static void test_client_gone_takes_no_line(void **state)
{
    http_conn gone, live;
    start(&gone, "/sts/READ?FILENAME=w7&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    start(&live, "/sts/READ?FILENAME=w7&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    http_conn_close(&gone);
    td_sleep_ms(50);
    expect_get("/sts/ADD?FILENAME=w7&LINE=kept", 1, "");
    expect_answer(&live, 1000, 1, "kept");
    /* Only a gone waiter: the line stays. */
    start(&gone, "/sts/READ?FILENAME=w7&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(50);
    http_conn_close(&gone);
    td_sleep_ms(50);
    expect_get("/sts/ADD?FILENAME=w7&LINE=stays", 1, "");
    expect_get("/sts/LENGTH?FILENAME=w7", 1, "1");
}

static void test_initfile_feeds_waiters(void **state)
{
    http_conn c;
    start(&c, "/sts/READ?FILENAME=f.csv&KEEP=FALSE&TIMEOUT=10");
    assert_false(http_conn_ready(&c, 200));
    expect_get("/sts/INITFILE?FILENAME=f.csv", 1, "2");
    expect_answer(&c, 1000, 1, "f1");
    expect_get("/sts/LENGTH?FILENAME=f.csv", 1, "1");
}

static void test_bad_timeouts(void **state)
{
    const char *bad[] = {"abc", "-1", "601", "NaN", "1e3", "", "1.2.3", "+1", "600.5", " 1"};
    char target[128];
    expect_get("/sts/ADD?FILENAME=w8&LINE=only", 1, "");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char enc[64];
        url_encode(bad[i], strlen(bad[i]), enc, sizeof enc);
        snprintf(target, sizeof target, "/sts/READ?FILENAME=w8&KEEP=FALSE&TIMEOUT=%s", enc);
        expect_get(target, 0, "TIMEOUT value has to be a number of seconds from 0 to 600 !");
        snprintf(target, sizeof target, "/sts/FIND?FILENAME=w8&LINE=o&TIMEOUT=%s", enc);
        expect_get(target, 0, "TIMEOUT value has to be a number of seconds from 0 to 600 !");
    }
    expect_get("/sts/LENGTH?FILENAME=w8", 1, "1");
    expect_get("/sts/READ?FILENAME=w8&KEEP=FALSE&TIMEOUT=600.0", 1, "only");
}

/* STOP (and SIGTERM) answer every waiter at once, and the server exits promptly. */
static void stop_with_waiters(int by_signal)
{
    enum { N = 20 };
    daemon_proc d2;
    assert_int_equal(td_mkdirs(&d2), 0);
    assert_int_equal(td_start(&d2, NULL), 0);
    int port = d.port;
    d.port = d2.port;
    http_conn c[N];
    for (int i = 0; i < N; i++)
        start(&c[i], i % 2 ? "/sts/READ?FILENAME=s&KEEP=FALSE&TIMEOUT=30"
                           : "/sts/FIND?FILENAME=s&LINE=q&TIMEOUT=30");
    td_sleep_ms(200);
    int64_t t0 = td_now_ms();
    if (by_signal)
        kill(d2.pid, SIGTERM);
    else
        expect_get("/sts/STOP", 1, "");
    for (int i = 0; i < N; i++)
        expect_answer(&c[i], 1000, 0, "s not loaded yet !");
    assert_int_equal(td_wait(&d2, 1000), 0);
    assert_true(td_now_ms() - t0 < 1000);
    d.port = port;
    td_cleanup(&d2);
}

static void test_stop_answers_waiters(void **state)
{
    stop_with_waiters(0);
}

static void test_sigterm_answers_waiters(void **state)
{
    stop_with_waiters(1);
}

/* With the journal and fsync=always, a line handed to a waiter is journaled like a READ:
 * after kill -9 it does not come back. */
static void test_waiter_take_is_journaled(void **state)
{
    daemon_proc d2;
    char so[400];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int port = d.port;
    d.port = d2.port;
    http_conn c;
    start(&c, "/sts/READ?FILENAME=j&KEEP=FALSE&TIMEOUT=10");
    td_sleep_ms(100);
    expect_get("/sts/ADD?FILENAME=j&LINE=one", 1, "");
    expect_get("/sts/ADD?FILENAME=j&LINE=two", 1, "");
    expect_answer(&c, 1000, 1, "one");
    assert_int_equal(td_stop(&d2, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&d2, args), 0);
    d.port = d2.port;
    expect_get("/sts/LENGTH?FILENAME=j", 1, "1");
    expect_get("/sts/READ?FILENAME=j", 1, "two");
    d.port = port;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_waits_for_add),
        cmocka_unit_test(test_timeout_not_early_not_late),
        cmocka_unit_test(test_fifo_one_wake_per_line),
        cmocka_unit_test(test_keep_true_passes_through),
        cmocka_unit_test(test_find_woken_by_matching_lines_only),
        cmocka_unit_test(test_readmulti_waits_for_all),
        cmocka_unit_test(test_client_gone_takes_no_line),
        cmocka_unit_test(test_initfile_feeds_waiters),
        cmocka_unit_test(test_bad_timeouts),
        cmocka_unit_test(test_stop_answers_waiters),
        cmocka_unit_test(test_sigterm_answers_waiters),
        cmocka_unit_test(test_waiter_take_is_journaled),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
