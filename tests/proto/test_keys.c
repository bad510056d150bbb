/* SPDX-License-Identifier: Apache-2.0 */
/* test_keys.c - keys on a real stsd: SET, GET (X-STS-Version, JSON), DEL, KEYS, IF_VERSION
 * and its races, watchers woken by SET, DEL and INCR or answered at their timeout, gone
 * watchers dropped, INCR's arithmetic, bounds and waits, a semaphore of 5 seats under 40
 * clients with a holder that dies, counter leases (ACK, RELEASE, expiry, across kill -9),
 * limits, CSRF, and ids taken by 8 clients across kill -9 with fsync=always. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
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

static void expect_get(const char *target, int ok, const char *text)
{
    expect_get_page(port, target, ok, text);
}

/* GETs target, expects the OK page text and X-STS-Version version (0: none). */
static void expect_version(const char *target, const char *text, long version)
{
    http_reply r;
    char v[64];
    assert_int_equal(http_get(port, target, &r), 0);
    expect_page(&r, 1, text);
    if (version) {
        assert_int_equal(http_header(&r, "X-STS-Version", v, sizeof v), 0);
        assert_int_equal(atol(v), version);
    } else {
        assert_int_equal(http_header(&r, "X-STS-Version", v, sizeof v), -1);
    }
    http_reply_free(&r);
}

/* GETs target with FORMAT=JSON, expects the status and exactly body. */
static void expect_json(const char *target, int status, const char *body)
{
    expect_get_json(port, target, status, body);
}

/* The body of an OK page (the payload), as a number. */
static long long ok_number(const http_reply *r)
{
    const char *b = strstr(r->body, "<body>");
    assert_non_null(b);
    assert_non_null(strstr(r->body, "<title>OK</title>"));
    return atoll(b + 6);
}

static void test_set_get_del(void **state)
{
    expect_version("/sts/SET?NAME=k1&VALUE=hello", "1", 1);
    expect_version("/sts/GET?NAME=k1", "hello", 1);
    expect_version("/sts/SET?NAME=k1&VALUE=a+b%26c", "2", 2);
    expect_version("/sts/GET?NAME=k1", "a b&c", 2);     /* as stored, as READ answers */
    expect_json("/sts/GET?NAME=k1&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"k1\",\"value\":\"a b&c\",\"version\":2}");
    expect_json("/sts/SET?NAME=k1&VALUE=x&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"k1\",\"version\":3}");
    expect_get("/sts/DEL?NAME=k1", 1, "");
    expect_get("/sts/GET?NAME=k1", 0, "Key k1 not found !");
    expect_json("/sts/GET?NAME=k1&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"Key k1 not found !\"}");
    expect_get("/sts/DEL?NAME=k1", 0, "Key k1 not found !");
    /* A new key starts at version 1 again. */
    expect_version("/sts/SET?NAME=k1&VALUE=", "1", 1);
    expect_version("/sts/GET?NAME=k1", "", 1);
    /* POST works as for ADD. */
    http_reply r;
    assert_int_equal(http_post(port, "/sts/SET", "NAME=k1&VALUE=posted", &r), 0);
    expect_page(&r, 1, "2");
    http_reply_free(&r);
    expect_get("/sts/DEL?NAME=k1", 1, "");
}

static void test_bad_parameters(void **state)
{
    expect_json("/sts/SET?VALUE=x&FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"NAME parameter was missing !\"}");
    expect_get("/sts/SET?NAME=k", 0, "VALUE parameter was missing !");
    expect_get("/sts/SET?NAME=a/b&VALUE=x", 0, "Illegal character found !");
    expect_get("/sts/SET?NAME=k&VALUE=x&IF_VERSION=-1", 0,
               "IF_VERSION value has to be an integer from 0 to 9223372036854775807 !");
    expect_get("/sts/GET?NAME=k&VERSION=1", 0,
               "VERSION needs TIMEOUT, and TIMEOUT on GET needs VERSION !");
    expect_get("/sts/GET?NAME=k&TIMEOUT=1", 0,
               "VERSION needs TIMEOUT, and TIMEOUT on GET needs VERSION !");
    expect_get("/sts/INCR?NAME=k&BY=x", 0,
               "BY value has to be an integer from -9223372036854775808 to "
               "9223372036854775807 !");
    expect_get("/sts/INCR?NAME=k&MIN=5&MAX=1", 0, "MIN is greater than MAX !");
    expect_get("/sts/INCR?NAME=k&LEASE=0", 0,
               "LEASE value has to be a number of seconds above 0 up to 3600 !");
    expect_get("/sts/RELEASE?NAME=k", 0, "LEASE parameter was missing !");
    expect_json("/sts/RELEASE?NAME=k&LEASE=0123456789abcdef&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"No such lease (settled already, expired, or of "
                "another key) !\"}");
    /* Nothing was made by any of them. */
    expect_json("/sts/KEYS?FORMAT=JSON", 200, "{\"ok\":true,\"keys\":[]}");
}

static void test_if_version(void **state)
{
    expect_version("/sts/SET?NAME=cas&VALUE=a&IF_VERSION=0", "1", 1);
    expect_get("/sts/SET?NAME=cas&VALUE=b&IF_VERSION=0", 0,
               "Key cas is at version 1, nothing changed !");
    expect_json("/sts/SET?NAME=cas&VALUE=b&IF_VERSION=7&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"Key cas is at version 1, nothing changed !\"}");
    expect_version("/sts/SET?NAME=cas&VALUE=b&IF_VERSION=1", "2", 2);
    expect_get("/sts/DEL?NAME=cas&IF_VERSION=1", 0, "Key cas is at version 2, nothing changed !");
    expect_version("/sts/GET?NAME=cas", "b", 2);
    expect_get("/sts/DEL?NAME=cas&IF_VERSION=2", 1, "");
}

#define CAS_CLIENTS 16
#define CAS_EACH 25
static atomic_int cas_conflicts;

/* Adds 1 to key "race" CAS_EACH times by GET then SET IF_VERSION, retrying on conflict. */
static void *cas_client(void *arg)
{
    http_conn c;
    char t[128], v[32];
    (void)arg;
    if (http_conn_open(&c, port) != 0)
        return NULL;
    for (int done = 0; done < CAS_EACH;) {
        http_reply r;
        if (http_conn_get(&c, "/sts/GET?NAME=race", &r) != 0)
            break;
        long long n = ok_number(&r);
        http_header(&r, "X-STS-Version", v, sizeof v);
        http_reply_free(&r);
        snprintf(t, sizeof t, "/sts/SET?NAME=race&VALUE=%lld&IF_VERSION=%s", n + 1, v);
        if (http_conn_get(&c, t, &r) != 0)
            break;
        if (strstr(r.body, "<title>OK</title>"))
            done++;
        else if (strstr(r.body, "nothing changed"))
            atomic_fetch_add(&cas_conflicts, 1);
        else
            break;
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

static void test_compare_and_set_race(void **state)
{
    pthread_t th[CAS_CLIENTS];
    char want[32];
    expect_get("/sts/SET?NAME=race&VALUE=0", 1, "1");
    for (int i = 0; i < CAS_CLIENTS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, cas_client, NULL), 0);
    for (int i = 0; i < CAS_CLIENTS; i++)
        pthread_join(th[i], NULL);
    /* No update lost: every success counted once, every conflict changed nothing. */
    snprintf(want, sizeof want, "%d", CAS_CLIENTS * CAS_EACH);
    expect_version("/sts/GET?NAME=race", want, 1 + CAS_CLIENTS * CAS_EACH);
    print_message("compare-and-set: %d conflicts\n", atomic_load(&cas_conflicts));
    expect_get("/sts/DEL?NAME=race", 1, "");
}

static void test_keys_listing(void **state)
{
    expect_get("/sts/SET?NAME=run.phase&VALUE=ramp", 1, "1");
    expect_get("/sts/SET?NAME=run.abort&VALUE=no", 1, "1");
    expect_get("/sts/SET?NAME=other&VALUE=%C3%A9", 1, "1");
    http_reply r;
    assert_int_equal(http_get(port, "/sts/KEYS", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\nother = \xc3\xa9<br />\n"
                        "run.abort = no<br />\nrun.phase = ramp<br />\n</body></html>");
    http_reply_free(&r);
    expect_json("/sts/KEYS?PREFIX=run.&FORMAT=JSON", 200,
                "{\"ok\":true,\"keys\":[{\"name\":\"run.abort\",\"value\":\"no\",\"version\":1,"
                "\"watchers\":0,\"waiters\":0},"
                "{\"name\":\"run.phase\",\"value\":\"ramp\",\"version\":1,"
                "\"watchers\":0,\"waiters\":0}]}");
    assert_int_equal(http_get(port, "/sts/INFO", &r), 0);
    assert_non_null(strstr(r.body, "keys=3<br />"));
    http_reply_free(&r);
    assert_int_equal(http_get(port, "/metrics", &r), 0);
    assert_non_null(strstr(r.body, "\nstsd_keys 3\n"));
    assert_non_null(strstr(r.body, "\nstsd_key_watchers 0\n"));
    http_reply_free(&r);
    expect_get("/sts/DEL?NAME=run.phase", 1, "");
    expect_get("/sts/DEL?NAME=run.abort", 1, "");
    expect_get("/sts/DEL?NAME=other", 1, "");
}

/* Watchers: n connections waiting on target; returns them open. */
static void watch(http_conn *c, int n, const char *target)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(http_conn_open(&c[i], port), 0);
        assert_int_equal(http_conn_send(&c[i], target), 0);
    }
    td_sleep_ms(150);
    for (int i = 0; i < n; i++)
        assert_int_equal(http_conn_ready(&c[i], 0), 0);     /* all still waiting */
}

/* Each of the n watchers answers page (OK with text, or the KO) within 1 s. */
static void woken(http_conn *c, int n, int ok, const char *text)
{
    for (int i = 0; i < n; i++) {
        http_reply r;
        assert_int_equal(http_conn_ready(&c[i], 5000), 1);
        assert_int_equal(http_conn_recv(&c[i], &r), 0);
        expect_page_of("/sts/GET", &r, ok, text);
        http_reply_free(&r);
        http_conn_close(&c[i]);
    }
}

static void test_watchers_woken_by_set_and_del(void **state)
{
    http_conn c[5];
    /* A key not there yet: VERSION=0 waits for its creation. */
    watch(c, 5, "/sts/GET?NAME=flag&VERSION=0&TIMEOUT=10");
    expect_get("/sts/SET?NAME=flag&VALUE=go", 1, "1");
    woken(c, 5, 1, "go");
    /* The version held now: answered at once, with the value. */
    expect_version("/sts/GET?NAME=flag&VERSION=0&TIMEOUT=10", "go", 1);
    watch(c, 3, "/sts/GET?NAME=flag&VERSION=1&TIMEOUT=10");
    expect_get("/sts/SET?NAME=flag&VALUE=stop", 1, "2");
    woken(c, 3, 1, "stop");
    watch(c, 3, "/sts/GET?NAME=flag&VERSION=2&TIMEOUT=10");
    expect_get("/sts/DEL?NAME=flag", 1, "");
    woken(c, 3, 0, "Key flag not found !");
    /* INCR wakes them too. */
    watch(c, 2, "/sts/GET?NAME=flag&VERSION=0&TIMEOUT=10");
    expect_get("/sts/INCR?NAME=flag", 1, "1");
    woken(c, 2, 1, "1");
    expect_get("/sts/DEL?NAME=flag", 1, "");
}

static void test_watch_timeout_answers_current_state(void **state)
{
    http_reply r;
    char v[32];
    expect_get("/sts/SET?NAME=still&VALUE=same", 1, "1");
    int64_t t0 = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    t0 = ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    assert_int_equal(http_get(port, "/sts/GET?NAME=still&VERSION=1&TIMEOUT=0.4", &r), 0);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ms = ts.tv_sec * 1000 + ts.tv_nsec / 1000000 - t0;
    assert_true(ms >= 380);
    expect_page(&r, 1, "same");
    assert_int_equal(http_header(&r, "X-STS-Version", v, sizeof v), 0);
    assert_string_equal(v, "1");
    http_reply_free(&r);
    expect_get("/sts/GET?NAME=nothing&VERSION=0&TIMEOUT=0.2", 0, "Key nothing not found !");
    expect_json("/sts/GET?NAME=nothing&VERSION=0&TIMEOUT=0.2&FORMAT=JSON", 404,
                "{\"ok\":false,\"error\":\"Key nothing not found !\"}");
    expect_get("/sts/DEL?NAME=still", 1, "");
}

static void test_gone_watchers_dropped(void **state)
{
    http_conn c[10];
    http_reply r;
    watch(c, 10, "/sts/GET?NAME=gone&VERSION=0&TIMEOUT=30");
    assert_int_equal(http_get(port, "/metrics", &r), 0);
    assert_non_null(strstr(r.body, "\nstsd_key_watchers 10\n"));
    http_reply_free(&r);
    for (int i = 0; i < 10; i++)
        http_conn_close(&c[i]);
    td_sleep_ms(50);
    expect_get("/sts/SET?NAME=gone&VALUE=x", 1, "1");
    assert_int_equal(http_get(port, "/metrics", &r), 0);
    assert_non_null(strstr(r.body, "\nstsd_key_watchers 0\n"));
    http_reply_free(&r);
    expect_get("/sts/DEL?NAME=gone", 1, "");
}

/* KEYS in JSON counts each key's watchers (GETs waiting) and waiters (INCRs waiting to
 * fit), for the dashboard; the text listing stays `name = value`. */
static void test_keys_counts_watchers(void **state)
{
    http_conn w[3], i[2];
    http_reply r;
    expect_get("/sts/SET?NAME=seen&VALUE=1", 1, "1");
    watch(w, 3, "/sts/GET?NAME=seen&VERSION=1&TIMEOUT=10");
    watch(i, 2, "/sts/INCR?NAME=seen&MAX=1&TIMEOUT=10");
    expect_json("/sts/KEYS?PREFIX=seen&FORMAT=JSON", 200,
                "{\"ok\":true,\"keys\":[{\"name\":\"seen\",\"value\":\"1\",\"version\":1,"
                "\"watchers\":3,\"waiters\":2}]}");
    assert_int_equal(http_get(port, "/sts/KEYS?PREFIX=seen", &r), 0);
    assert_string_equal(r.body, "<html><title>OK</title>\n<body>\nseen = 1<br />\n</body></html>");
    http_reply_free(&r);
    /* SET 0 lets the first INCR fit (to 1), then wakes the watchers, who see it: 0
     * watchers and 1 waiter left. */
    expect_get("/sts/SET?NAME=seen&VALUE=0", 1, "2");
    woken(w, 3, 1, "1");
    /* The INCR the server queued first is served: the two were sent on two connections,
     * which may reach it in either order. */
    int first = -1;
    for (int t = 0; t < 50 && first < 0; t++)
        for (int k = 0; k < 2 && first < 0; k++)
            if (http_conn_ready(&i[k], 100) == 1)
                first = k;
    assert_true(first >= 0);
    assert_int_equal(http_conn_recv(&i[first], &r), 0);
    expect_page(&r, 1, "1");
    http_reply_free(&r);
    assert_int_equal(http_conn_ready(&i[1 - first], 0), 0);      /* the other still waits */
    http_conn_close(&i[first]);
    expect_json("/sts/KEYS?PREFIX=seen&FORMAT=JSON", 200,
                "{\"ok\":true,\"keys\":[{\"name\":\"seen\",\"value\":\"1\",\"version\":3,"
                "\"watchers\":0,\"waiters\":1}]}");
    http_conn_close(&i[1 - first]);
    expect_get("/sts/DEL?NAME=seen", 1, "");
}

static void test_incr_rules(void **state)
{
    expect_version("/sts/INCR?NAME=n", "1", 1);
    expect_version("/sts/INCR?NAME=n&BY=41", "42", 2);
    expect_version("/sts/INCR?NAME=n&BY=-50", "-8", 3);
    expect_json("/sts/INCR?NAME=n&BY=8&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"n\",\"value\":0,\"version\":4}");
    expect_get("/sts/INCR?NAME=n&BY=-1&MIN=0", 0, "Key n is at its bound, nothing changed !");
    expect_json("/sts/INCR?NAME=n&BY=3&MAX=2&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"Key n is at its bound, nothing changed !\"}");
    expect_get("/sts/INCR?NAME=n&BY=2&MAX=2", 1, "2");
    expect_get("/sts/SET?NAME=n&VALUE=9223372036854775806", 1, "6");
    expect_get("/sts/INCR?NAME=n", 1, "9223372036854775807");
    expect_json("/sts/INCR?NAME=n&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"Key n would overflow a signed 64-bit integer, "
                "nothing changed !\"}");
    expect_get("/sts/SET?NAME=n&VALUE=-9223372036854775808", 1, "8");
    expect_get("/sts/INCR?NAME=n&BY=-1", 0,
               "Key n would overflow a signed 64-bit integer, nothing changed !");
    expect_get("/sts/SET?NAME=n&VALUE=12abc", 1, "9");
    expect_json("/sts/INCR?NAME=n&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"Key n does not hold an integer, nothing changed !\"}");
    expect_version("/sts/GET?NAME=n", "12abc", 9);
    /* An absent key below its MIN is at its bound, and is not made. */
    expect_get("/sts/INCR?NAME=fresh&BY=-1&MIN=0", 0,
               "Key fresh is at its bound, nothing changed !");
    expect_get("/sts/GET?NAME=fresh", 0, "Key fresh not found !");
    expect_get("/sts/DEL?NAME=n", 1, "");
}

static void test_incr_waits_until_it_fits(void **state)
{
    http_conn c[3];
    expect_get("/sts/INCR?NAME=w&BY=2", 1, "2");
    /* In arrival order: the first needs 2 down, the second 1 more. */
    assert_int_equal(http_conn_open(&c[0], port), 0);
    assert_int_equal(http_conn_send(&c[0], "/sts/INCR?NAME=w&BY=2&MAX=2&TIMEOUT=10"), 0);
    td_sleep_ms(300);                          /* queued before the next, even under ASan */
    assert_int_equal(http_conn_open(&c[1], port), 0);
    assert_int_equal(http_conn_send(&c[1], "/sts/INCR?NAME=w&BY=1&MAX=3&TIMEOUT=10"), 0);
    td_sleep_ms(100);
    assert_int_equal(http_conn_ready(&c[0], 0), 0);
    assert_int_equal(http_conn_ready(&c[1], 0), 0);
    expect_get("/sts/INCR?NAME=w&BY=-2", 1, "0");        /* fits both: 0+2, then 2+1 */
    http_reply r;
    assert_int_equal(http_conn_ready(&c[0], 5000), 1);
    assert_int_equal(http_conn_recv(&c[0], &r), 0);
    expect_page(&r, 1, "2");
    http_reply_free(&r);
    assert_int_equal(http_conn_ready(&c[1], 5000), 1);
    assert_int_equal(http_conn_recv(&c[1], &r), 0);
    expect_page(&r, 1, "3");
    http_reply_free(&r);
    http_conn_close(&c[0]);
    http_conn_close(&c[1]);
    /* Still at its bound at the timeout: 408. */
    expect_json("/sts/INCR?NAME=w&MAX=3&TIMEOUT=0.2&FORMAT=JSON", 408,
                "{\"ok\":false,\"error\":\"Key w stayed at its bound until TIMEOUT, nothing "
                "changed !\"}");
    expect_version("/sts/GET?NAME=w", "3", 4);
    expect_get("/sts/DEL?NAME=w", 1, "");
}

static void test_counter_leases(void **state)
{
    http_reply r;
    char id[64], t[128];
    assert_int_equal(http_get(port, "/sts/INCR?NAME=c&LEASE=60", &r), 0);
    expect_page(&r, 1, "1");
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    assert_int_equal(strlen(id), 16);
    http_reply_free(&r);
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=c&LEASE=%s", id);
    expect_get(t, 1, "");
    expect_version("/sts/GET?NAME=c", "0", 2);
    expect_get(t, 0, "No such lease (settled already, expired, or of another key) !");
    /* ACK keeps it for good. */
    assert_int_equal(http_get(port, "/sts/INCR?NAME=c&BY=5&LEASE=60", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=other&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another key) !");
    snprintf(t, sizeof t, "/sts/ACK?NAME=c&LEASE=%s", id);
    expect_get(t, 1, "");
    expect_version("/sts/GET?NAME=c", "5", 3);
    /* Expiry undoes it and wakes a waiter. */
    expect_get("/sts/INCR?NAME=c&BY=5&LEASE=0.5", 1, "10");
    expect_get("/sts/INCR?NAME=c&MAX=6&TIMEOUT=5", 1, "6");
    /* SET drops the key's leases. */
    assert_int_equal(http_get(port, "/sts/INCR?NAME=c&LEASE=60", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    expect_get("/sts/SET?NAME=c&VALUE=0", 1, "8");
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=c&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another key) !");
    expect_get("/sts/DEL?NAME=c", 1, "");
}

/* ---- a semaphore of 5 seats under 40 clients --------------------------------------- */

#define SEATS 5
#define SEMA_CLIENTS 40
#define SEMA_ROUNDS 5
static atomic_int holders, max_holders, sema_errors, sema_done;

static void *sema_client(void *arg)
{
    http_conn c;
    char t[128], id[64];
    (void)arg;
    if (http_conn_open(&c, port) != 0) {
        atomic_fetch_add(&sema_errors, 1);
        return NULL;
    }
    for (int i = 0; i < SEMA_ROUNDS; i++) {
        http_reply r;
        if (http_conn_get(&c, "/sts/INCR?NAME=seats&MAX=5&TIMEOUT=20&LEASE=30", &r) != 0 ||
            !strstr(r.body, "<title>OK</title>") ||
            http_header(&r, "X-STS-Lease", id, sizeof id) != 0) {
            atomic_fetch_add(&sema_errors, 1);
            break;
        }
        http_reply_free(&r);
        int now = atomic_fetch_add(&holders, 1) + 1;
        for (int m = atomic_load(&max_holders); now > m &&
             !atomic_compare_exchange_weak(&max_holders, &m, now);)
            ;
        td_sleep_ms(2);
        atomic_fetch_sub(&holders, 1);
        snprintf(t, sizeof t, "/sts/RELEASE?NAME=seats&LEASE=%s", id);
        if (http_conn_get(&c, t, &r) != 0 || !strstr(r.body, "<title>OK</title>"))
            atomic_fetch_add(&sema_errors, 1);
        http_reply_free(&r);
        atomic_fetch_add(&sema_done, 1);
    }
    http_conn_close(&c);
    return NULL;
}

static void test_semaphore_five_seats(void **state)
{
    pthread_t th[SEMA_CLIENTS];
    /* A holder that dies: its seat comes back when its lease ends. */
    expect_get("/sts/INCR?NAME=seats&MAX=5&LEASE=1", 1, "1");
    atomic_store(&holders, 1);           /* it counts as a holder until its lease ends */
    atomic_store(&max_holders, 1);
    for (int i = 0; i < SEMA_CLIENTS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, sema_client, NULL), 0);
    td_sleep_ms(1100);
    atomic_fetch_sub(&holders, 1);       /* dead holder's lease is over by now */
    for (int i = 0; i < SEMA_CLIENTS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&sema_errors), 0);
    assert_int_equal(atomic_load(&sema_done), SEMA_CLIENTS * SEMA_ROUNDS);
    assert_true(atomic_load(&max_holders) <= SEATS);
    print_message("semaphore: at most %d holders of %d seats\n", atomic_load(&max_holders),
                  SEATS);
    http_reply r;
    assert_int_equal(http_get(port, "/sts/GET?NAME=seats", &r), 0);
    expect_page(&r, 1, "0");
    http_reply_free(&r);
    expect_get("/sts/DEL?NAME=seats", 1, "");
}

static void test_limits(void **state)
{
    daemon_proc d2;
    assert_int_equal(td_mkdirs(&d2), 0);
    const char *args[] = {"-Dstsd.maxKeys=2", "-Dstsd.maxLineSize=8", NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int was = port;
    port = d2.port;
    expect_get("/sts/SET?NAME=a&VALUE=12345678", 1, "1");
    expect_get("/sts/SET?NAME=a&VALUE=123456789", 0, "VALUE is too long !");
    expect_get("/sts/INCR?NAME=b", 1, "1");
    expect_json("/sts/SET?NAME=c&VALUE=x&FORMAT=JSON", 413,
                "{\"ok\":false,\"error\":\"Key limit reached (stsd.maxKeys or stsd.maxBytes), "
                "nothing changed !\"}");
    expect_get("/sts/INCR?NAME=c", 0,
               "Key limit reached (stsd.maxKeys or stsd.maxBytes), nothing changed !");
    expect_get("/sts/SET?NAME=a&VALUE=x", 1, "2");      /* existing keys still change */
    expect_get("/sts/DEL?NAME=a", 1, "");
    expect_get("/sts/SET?NAME=c&VALUE=x", 1, "1");
    port = was;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

static void test_csrf_for_writes(void **state)
{
    http_reply r;
    const char *set = "GET /sts/SET?NAME=x&VALUE=1 HTTP/1.1\r\nHost: a\r\n"
                      "Sec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n";
    const char *get = "GET /sts/KEYS HTTP/1.1\r\nHost: a\r\n"
                      "Sec-Fetch-Site: cross-site\r\nConnection: close\r\n\r\n";
    assert_int_equal(http_raw(port, set, strlen(set), &r), 0);
    assert_int_equal(r.status, 403);
    http_reply_free(&r);
    assert_int_equal(http_raw(port, get, strlen(get), &r), 0);
    assert_int_equal(r.status, 200);
    http_reply_free(&r);
    expect_get("/sts/GET?NAME=x", 0, "Key x not found !");
}

/* ---- ids across kill -9 with fsync=always --------------------------------------------- */

#define ID_CLIENTS 8
#define MAX_TAKEN 200000
static atomic_int taken_n;
static long long taken[MAX_TAKEN];
static int id_port;

static void *id_client(void *arg)
{
    http_conn c;
    (void)arg;
    if (http_conn_open(&c, id_port) != 0)
        return NULL;
    for (;;) {
        http_reply r;
        if (http_conn_get(&c, "/sts/INCR?NAME=orderId", &r) != 0)
            break;                       /* killed: this one may or may not count */
        if (!strstr(r.body, "<title>OK</title>")) {
            http_reply_free(&r);
            break;
        }
        int i = atomic_fetch_add(&taken_n, 1);
        if (i < MAX_TAKEN)
            taken[i] = ok_number(&r);
        http_reply_free(&r);
    }
    http_conn_close(&c);
    return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

static void take_ids_then_kill(daemon_proc *dp, const char *const *args, int ms)
{
    pthread_t th[ID_CLIENTS];
    assert_int_equal(td_start(dp, args), 0);
    id_port = dp->port;
    for (int i = 0; i < ID_CLIENTS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, id_client, NULL), 0);
    td_sleep_ms(ms);
    assert_int_equal(td_stop(dp, 1), 128 + SIGKILL);
    for (int i = 0; i < ID_CLIENTS; i++)
        pthread_join(th[i], NULL);
}

static void test_ids_across_kill9(void **state)
{
    daemon_proc d2;
    char so[400];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    atomic_store(&taken_n, 0);
    for (int round = 0; round < 3; round++)
        take_ids_then_kill(&d2, args, 300);
    int n = atomic_load(&taken_n);
    assert_true(n > 0 && n < MAX_TAKEN);
    qsort(taken, (size_t)n, sizeof taken[0], cmp_ll);
    for (int i = 1; i < n; i++)
        if (taken[i] == taken[i - 1])
            fail_msg("id %lld answered twice", taken[i]);
    /* Nothing acknowledged is lost: the next id is past every one answered. */
    assert_int_equal(td_start(&d2, args), 0);
    http_reply r;
    assert_int_equal(http_get(d2.port, "/sts/INCR?NAME=orderId", &r), 0);
    long long next = ok_number(&r);
    http_reply_free(&r);
    assert_true(next > taken[n - 1]);
    print_message("ids: %d answered over 3 kills, none twice; next %lld\n", n, next);
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

static void test_counter_leases_across_kill9(void **state)
{
    daemon_proc d2;
    char so[400], keep[64], t[128];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int was = port;
    port = d2.port;
    http_reply r;
    expect_get("/sts/SET?NAME=flag&VALUE=on", 1, "1");
    expect_get("/sts/INCR?NAME=s&LEASE=1", 1, "1");             /* ends while down */
    assert_int_equal(http_get(port, "/sts/INCR?NAME=s&LEASE=60", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-Lease", keep, sizeof keep), 0);
    http_reply_free(&r);
    expect_get("/sts/INCR?NAME=s&BY=10", 1, "12");
    assert_int_equal(td_stop(&d2, 1), 128 + SIGKILL);
    td_sleep_ms(1200);
    assert_int_equal(td_start(&d2, args), 0);
    port = d2.port;
    td_sleep_ms(300);                                           /* the timer's first round */
    expect_get("/sts/GET?NAME=s", 1, "11");
    expect_version("/sts/GET?NAME=flag", "on", 1);
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=s&LEASE=%s", keep);
    expect_get(t, 1, "");
    expect_get("/sts/GET?NAME=s", 1, "10");
    /* And once more, through a graceful stop. */
    assert_int_equal(td_stop(&d2, 0), 0);
    assert_int_equal(td_start(&d2, args), 0);
    port = d2.port;
    expect_version("/sts/GET?NAME=s", "10", 5);
    port = was;
    td_stop(&d2, 0);
    /* --check-journal reads the keys' records and names the keys. */
    const char *bin = getenv("STSD") ? getenv("STSD") : "build/stsd";
    char cmd[1200], out[400];
    snprintf(cmd, sizeof cmd, "%s --check-journal %s/state > %s/check.out 2>&1", bin, d2.dir,
             d2.dir);
    assert_int_equal(system(cmd), 0);
    snprintf(out, sizeof out, "%s/check.out", d2.dir);
    FILE *f = fopen(out, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "keys: 2, counter leases: 0\n"));
    assert_non_null(strstr(text, "  s: version 5, 2 bytes\n"));
    assert_non_null(strstr(text, "key lease"));
    td_cleanup(&d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_get_del),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_if_version),
        cmocka_unit_test(test_compare_and_set_race),
        cmocka_unit_test(test_keys_listing),
        cmocka_unit_test(test_watchers_woken_by_set_and_del),
        cmocka_unit_test(test_watch_timeout_answers_current_state),
        cmocka_unit_test(test_gone_watchers_dropped),
        cmocka_unit_test(test_keys_counts_watchers),
        cmocka_unit_test(test_incr_rules),
        cmocka_unit_test(test_incr_waits_until_it_fits),
        cmocka_unit_test(test_counter_leases),
        cmocka_unit_test(test_semaphore_five_seats),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_csrf_for_writes),
        cmocka_unit_test(test_ids_across_kill9),
        cmocka_unit_test(test_counter_leases_across_kill9),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
