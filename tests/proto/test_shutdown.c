/* SPDX-License-Identifier: Apache-2.0 */
/* test_shutdown.c - a graceful stop after requests whose buffers pass 64 KiB (the size
 * past which an HTTP thread frees a connection's state instead of pooling it): SIGTERM
 * must end in exit status 0 with nothing in the log from a sanitizer. Each case runs
 * one HTTP thread and makes a small request first, so that the big one reuses a pooled
 * state (issue 23: the thread's pool key was left naming that state once it was handed
 * out, and freed again at thread exit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testlib.h"

#define BIG_LINE (300 * 1024)
#define MANY_LISTS 10000

static void start(daemon_proc *d)
{
    static const char *const extra[] = {"-Dstsd.threads=1", NULL};
    assert_int_equal(td_mkdirs(d), 0);
    assert_int_equal(td_start(d, extra), 0);
    /* Pools one connection state on the thread: the big request below takes it. */
    http_reply r;
    assert_int_equal(http_get(d->port, "/sts/LENGTH?FILENAME=none.csv", &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    td_sleep_ms(100);    /* its close seen: the state is back in the pool */
}

/* SIGTERM: exit 0 within 5 s, and no sanitizer spoke. */
static void stop_clean(daemon_proc *d)
{
    int64_t t0 = td_now_ms();
    int rc = td_stop(d, 0);
    int64_t took = td_now_ms() - t0;
    const char *log = td_log(d);
    if (rc != 0 || strstr(log, "Sanitizer") || strstr(log, "runtime error"))
        fprintf(stderr, "exit %d after %lld ms; log:\n%s\n", rc, (long long)took, log);
    assert_int_equal(rc, 0);
    assert_null(strstr(log, "Sanitizer"));
    assert_null(strstr(log, "runtime error"));
    assert_true(took < 5000);
    td_cleanup(d);
}

/* A POSTed ADD whose LINE is 300 KB: the body, the parameters and the URI-decoded LINE. */
static void test_big_post_then_sigterm(void **state)
{
    daemon_proc d;
    start(&d);
    size_t cap = BIG_LINE + 64;
    char *body = malloc(cap);
    assert_non_null(body);
    int n = snprintf(body, cap, "FILENAME=big.csv&ADD_MODE=LAST&LINE=");
    memset(body + n, 'x', BIG_LINE);
    body[n + BIG_LINE] = '\0';
    http_reply r;
    assert_int_equal(http_post(d.port, "/sts/ADD", body, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "OK"));
    http_reply_free(&r);
    free(body);
    stop_clean(&d);
}

/* A READMULTI whose answer is ~400 KB. */
static void test_big_readmulti_then_sigterm(void **state)
{
    daemon_proc d;
    start(&d);
    char line[1100], target[1400];
    memset(line, 'y', 1000);
    line[1000] = '\0';
    http_conn c;
    assert_int_equal(http_conn_open(&c, d.port), 0);
    for (int i = 0; i < 400; i++) {
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=m.csv&LINE=%d%s", i, line);
        http_reply r;
        assert_int_equal(http_conn_get(&c, target, &r), 0);
        http_reply_free(&r);
    }
    http_conn_close(&c);
    td_sleep_ms(100);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READMULTI?FILENAME=m.csv&NB_LINES=400&KEEP=TRUE",
                              &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(r.body_len > 400 * 1000);
    http_reply_free(&r);
    stop_clean(&d);
}

/* /metrics and STATUS with 10,000 lists: answers of hundreds of KB. */
static void test_many_lists_metrics_then_sigterm(void **state)
{
    daemon_proc d;
    start(&d);
    http_conn c;
    char target[128];
    assert_int_equal(http_conn_open(&c, d.port), 0);
    for (int i = 0; i < MANY_LISTS; i++) {
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=list%05d.csv&LINE=a", i);
        http_reply r;
        assert_int_equal(http_conn_get(&c, target, &r), 0);
        http_reply_free(&r);
    }
    http_conn_close(&c);
    td_sleep_ms(100);
    http_reply r;
    assert_int_equal(http_get(d.port, "/metrics", &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(r.body_len > 65536);
    http_reply_free(&r);
    assert_int_equal(http_get(d.port, "/sts/STATUS", &r), 0);
    assert_int_equal(r.status, 200);
    assert_true(r.body_len > 65536);
    http_reply_free(&r);
    stop_clean(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_big_post_then_sigterm),
        cmocka_unit_test(test_big_readmulti_then_sigterm),
        cmocka_unit_test(test_many_lists_metrics_then_sigterm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
