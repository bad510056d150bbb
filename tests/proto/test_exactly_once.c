/* SPDX-License-Identifier: Apache-2.0 */
/* test_exactly_once.c - producers ADD while consumers READ KEEP=FALSE, all at once on a
 * real stsd: every line must come out exactly once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testlib.h"

#define PRODUCERS 4
#define CONSUMERS 8
#define LINES 50000
#define PER_PRODUCER (LINES / PRODUCERS)

static int port;
static atomic_int producers_left;
static atomic_int errors;
static atomic_int seen[LINES];

static void *producer(void *arg)
{
    int id = (int)(intptr_t)arg;
    http_conn c;
    if (http_conn_open(&c, port) != 0) {
        atomic_fetch_add(&errors, 1);
        return NULL;
    }
    char target[256], ok[128];
    page_ok(ok, sizeof ok, "");
    for (int i = 0; i < PER_PRODUCER; i++) {
        int n = id * PER_PRODUCER + i;
        /* Alternate ends so that both insertion paths race with the readers. */
        snprintf(target, sizeof target, "/sts/ADD?FILENAME=queue.csv&LINE=item%%3B%d&ADD_MODE=%s",
                 n, i % 4 == 3 ? "FIRST" : "LAST");
        http_reply r;
        if (http_conn_get(&c, target, &r) != 0 || strcmp(r.body, ok) != 0)
            atomic_fetch_add(&errors, 1);
        http_reply_free(&r);
    }
    http_conn_close(&c);
    atomic_fetch_sub(&producers_left, 1);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    http_conn c;
    if (http_conn_open(&c, port) != 0) {
        atomic_fetch_add(&errors, 1);
        return NULL;
    }
    const char *prefix = "<html><title>OK</title>\n<body>item;";
    for (;;) {
        int done = atomic_load(&producers_left) == 0;
        http_reply r;
        if (http_conn_get(&c, "/sts/READ?FILENAME=queue.csv&KEEP=FALSE", &r) != 0) {
            atomic_fetch_add(&errors, 1);
            break;
        }
        int n;
        if (strncmp(r.body, prefix, strlen(prefix)) == 0 &&
            sscanf(r.body + strlen(prefix), "%d", &n) == 1 && n >= 0 && n < LINES) {
            atomic_fetch_add(&seen[n], 1);
        } else if (!strstr(r.body, "No more line !") && !strstr(r.body, "not loaded yet !")) {
            atomic_fetch_add(&errors, 1);
        } else if (done) {
            /* Empty after every producer finished: nothing more can come. */
            http_reply_free(&r);
            break;
        }
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

static void test_exactly_once(void **state)
{
    daemon_proc d;
    assert_int_equal(td_mkdirs(&d), 0);
    assert_int_equal(td_start(&d, NULL), 0);
    port = d.port;
    atomic_store(&producers_left, PRODUCERS);

    pthread_t p[PRODUCERS], c[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++)
        assert_int_equal(pthread_create(&c[i], NULL, consumer, NULL), 0);
    for (int i = 0; i < PRODUCERS; i++)
        assert_int_equal(pthread_create(&p[i], NULL, producer, (void *)(intptr_t)i), 0);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(p[i], NULL);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(c[i], NULL);

    int missing = 0, dup = 0;
    for (int i = 0; i < LINES; i++) {
        missing += atomic_load(&seen[i]) == 0;
        dup += atomic_load(&seen[i]) > 1;
    }
    fprintf(stderr, "exactly-once: %d lines, %d missing, %d duplicated, %d errors\n", LINES,
            missing, dup, atomic_load(&errors));
    assert_int_equal(atomic_load(&errors), 0);
    assert_int_equal(missing, 0);
    assert_int_equal(dup, 0);

    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=queue.csv", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>0</body>\n</html>");
    http_reply_free(&r);
    assert_int_equal(td_stop(&d, 0), 0);
    td_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_exactly_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
