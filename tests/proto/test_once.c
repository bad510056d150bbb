/* SPDX-License-Identifier: Apache-2.0 */
/* test_once.c - ONCE and DONE on a real stsd: RUN to the first caller only (200 at once),
 * DONE to waiters and later callers, failover when the run's lease expires and when it is
 * RELEASEd, a run kept past its lease by renewals (RUN=), a stale DONE refused, DEL for
 * another round, SET completing a run, the KOs, a run's lease (renewed or not) across
 * kill -9 with fsync=always, and RUNS: the runs in progress, their time left and waiters,
 * sorted, gone once DONE, behind the data token but open to a browser; the run's value
 * in X-STS-Value on every DONE. */
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include "testlib.h"
#include "expect.h"

static daemon_proc d;
static int port;

static int setup(void **state)
{
    if (td_mkdirs(&d) != 0 || td_start(&d, NULL) != 0)
        return -1;
    port = d.port;
    return 0;
}

static int teardown(void **state)
{
    td_cleanup(&d);
    return 0;
}

static void expect_get(const char *target, int ok, const char *text)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    expect_page_of(target, &r, ok, text);
    http_reply_free(&r);
}

static void expect_json(const char *target, int status, const char *body)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    assert_int_equal(r.status, status);
    if (strcmp(r.body, body) != 0)
        fail_msg("%s\nwant: %s\ngot:  %s", target, body, r.body);
    http_reply_free(&r);
}

/* GETs target, expects RUN and copies its lease into id. */
static void expect_run(const char *target, char *id, size_t idlen)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    expect_page(&r, 1, "RUN");
    assert_int_equal(http_header(&r, "X-STS-Lease", id, idlen), 0);
    assert_int_equal(strlen(id), 16);
    http_reply_free(&r);
}

/* Receives a parked answer on c (within ms), expects the page text; copies the lease of a
 * RUN into id (if id). */
static void recv_page(http_conn *c, int ms, int ok, const char *text, char *id, size_t idlen)
{
    http_reply r;
    assert_int_equal(http_conn_ready(c, ms), 1);
    assert_int_equal(http_conn_recv(c, &r), 0);
    expect_page_of("/sts/ONCE", &r, ok, text);
    if (id)
        assert_int_equal(http_header(&r, "X-STS-Lease", id, idlen), 0);
    http_reply_free(&r);
}

static void done_with(const char *name, const char *id, const char *value, int ok,
                      const char *text)
{
    char t[256];
    snprintf(t, sizeof t, "/sts/DONE?NAME=%s&LEASE=%s%s%s", name, id, value ? "&VALUE=" : "",
             value ? value : "");
    expect_get(t, ok, text);
}

#define STALE(n) "This LEASE is not the run of " n " (expired, given up, or " n " was set), " \
                 "nothing changed !"

static void test_run_then_done(void **state)
{
    char id[64];
    expect_run("/sts/ONCE?NAME=setup", id, sizeof id);
    /* Another caller that will not wait: 408. */
    expect_get("/sts/ONCE?NAME=setup&TIMEOUT=0", 0,
               "The run of setup is still in progress (TIMEOUT=0), nothing changed !");
    expect_json("/sts/ONCE?NAME=setup&TIMEOUT=0.2&FORMAT=JSON", 408,
                "{\"ok\":false,\"error\":\"The run of setup is still in progress at TIMEOUT, "
                "nothing changed !\"}");
    done_with("setup", "0123456789abcdef", "x", 0, STALE("setup"));
    done_with("setup", id, "tenant-7", 1, "DONE");
    expect_get("/sts/ONCE?NAME=setup", 1, "DONE");
    expect_json("/sts/ONCE?NAME=setup&FORMAT=JSON", 200,
                "{\"ok\":true,\"name\":\"setup\",\"state\":\"done\",\"value\":\"tenant-7\"}");
    expect_get("/sts/GET?NAME=setup", 1, "tenant-7");
    done_with("setup", id, "again", 0, STALE("setup"));          /* settled already */
    /* DEL: another round. */
    expect_get("/sts/DEL?NAME=setup", 1, "");
    expect_run("/sts/ONCE?NAME=setup&LEASE=5", id, sizeof id);
    done_with("setup", id, NULL, 1, "DONE");                     /* VALUE empty */
    expect_get("/sts/GET?NAME=setup", 1, "");
    expect_get("/sts/DEL?NAME=setup", 1, "");
}

static void test_bad_parameters(void **state)
{
    expect_get("/sts/ONCE", 0, "NAME parameter was missing !");
    expect_get("/sts/ONCE?NAME=a/b", 0, "Illegal character found !");
    expect_get("/sts/ONCE?NAME=p&LEASE=0", 0,
               "LEASE value has to be a number of seconds from 0.001 to 3600 !");
    expect_get("/sts/ONCE?NAME=p&LEASE=x", 0,
               "LEASE value has to be a number of seconds from 0.001 to 3600 !");
    expect_get("/sts/DONE?NAME=p", 0, "LEASE parameter was missing !");
    expect_json("/sts/DONE?NAME=p&LEASE=zz&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"" STALE("p") "\"}");
    expect_json("/sts/DONE?FORMAT=JSON", 400,
                "{\"ok\":false,\"error\":\"NAME parameter was missing !\"}");
    /* Nothing changed: p is still runnable, and not done. */
    expect_get("/sts/GET?NAME=p", 0, "Key p not found !");
    /* ACK is not how a run ends. */
    char id[64], t[128];
    expect_run("/sts/ONCE?NAME=p", id, sizeof id);
    snprintf(t, sizeof t, "/sts/ACK?NAME=p&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another key) !");
    done_with("p", id, "1", 1, "DONE");
    expect_get("/sts/DEL?NAME=p", 1, "");
}

/* ---- 200 callers at once: exactly one RUN ------------------------------------------- */

#define CALLERS 200
static atomic_int runs, dones, errors;

static void *caller(void *arg)
{
    http_conn c;
    http_reply r;
    char id[64], t[128];
    (void)arg;
    if (http_conn_open(&c, port) != 0) {
        atomic_fetch_add(&errors, 1);
        return NULL;
    }
    if (http_conn_get(&c, "/sts/ONCE?NAME=crowd&TIMEOUT=30&LEASE=30", &r) != 0) {
        atomic_fetch_add(&errors, 1);
    } else if (strstr(r.body, "<body>RUN</body>") &&
               http_header(&r, "X-STS-Lease", id, sizeof id) == 0) {
        atomic_fetch_add(&runs, 1);
        http_reply_free(&r);
        td_sleep_ms(200);                   /* everybody else arrives meanwhile */
        snprintf(t, sizeof t, "/sts/DONE?NAME=crowd&LEASE=%s&VALUE=ok", id);
        if (http_conn_get(&c, t, &r) != 0 || !strstr(r.body, "<body>DONE</body>"))
            atomic_fetch_add(&errors, 1);
    } else if (strstr(r.body, "<body>DONE</body>")) {
        atomic_fetch_add(&dones, 1);
    } else {
        atomic_fetch_add(&errors, 1);
    }
    http_reply_free(&r);
    http_conn_close(&c);
    return NULL;
}

static void test_one_run_among_200(void **state)
{
    pthread_t th[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        assert_int_equal(pthread_create(&th[i], NULL, caller, NULL), 0);
    for (int i = 0; i < CALLERS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&errors), 0);
    assert_int_equal(atomic_load(&runs), 1);
    assert_int_equal(atomic_load(&dones), CALLERS - 1);
    expect_get("/sts/GET?NAME=crowd", 1, "ok");
    expect_get("/sts/DEL?NAME=crowd", 1, "");
}

/* ---- failover ------------------------------------------------------------------------- */

static void test_failover_when_the_runner_dies(void **state)
{
    char a[64], b[64];
    http_conn w1, w2;
    expect_run("/sts/ONCE?NAME=f&LEASE=0.5", a, sizeof a);
    assert_int_equal(http_conn_open(&w1, port), 0);
    assert_int_equal(http_conn_open(&w2, port), 0);
    assert_int_equal(http_conn_send(&w1, "/sts/ONCE?NAME=f&TIMEOUT=10&LEASE=30"), 0);
    td_sleep_ms(50);
    assert_int_equal(http_conn_send(&w2, "/sts/ONCE?NAME=f&TIMEOUT=10"), 0);
    assert_int_equal(http_conn_ready(&w1, 200), 0);          /* still running */
    /* The lease ends: the first waiter runs, the second still waits. */
    recv_page(&w1, 3000, 1, "RUN", b, sizeof b);
    assert_string_not_equal(a, b);
    assert_int_equal(http_conn_ready(&w2, 200), 0);
    done_with("f", a, "late", 0, STALE("f"));                  /* the dead runner's */
    done_with("f", b, "fine", 1, "DONE");
    recv_page(&w2, 3000, 1, "DONE", NULL, 0);
    expect_get("/sts/GET?NAME=f", 1, "fine");
    http_conn_close(&w1);
    http_conn_close(&w2);
    /* With no waiter, the next caller runs. */
    expect_get("/sts/DEL?NAME=f", 1, "");
    expect_run("/sts/ONCE?NAME=f&LEASE=0.3", a, sizeof a);
    td_sleep_ms(600);
    expect_run("/sts/ONCE?NAME=f", b, sizeof b);
    done_with("f", a, NULL, 0, STALE("f"));
    done_with("f", b, NULL, 1, "DONE");
    expect_get("/sts/DEL?NAME=f", 1, "");
}

static void test_failover_on_release(void **state)
{
    char a[64], b[64], t[128];
    http_conn w;
    expect_run("/sts/ONCE?NAME=g", a, sizeof a);
    assert_int_equal(http_conn_open(&w, port), 0);
    assert_int_equal(http_conn_send(&w, "/sts/ONCE?NAME=g&TIMEOUT=10"), 0);
    assert_int_equal(http_conn_ready(&w, 200), 0);
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=g&LEASE=%s", a);
    expect_get(t, 1, "");
    recv_page(&w, 2000, 1, "RUN", b, sizeof b);
    expect_get(t, 0, "No such lease (settled already, expired, or of another key) !");
    done_with("g", a, NULL, 0, STALE("g"));
    /* Given up with nobody waiting: the next caller runs. */
    snprintf(t, sizeof t, "/sts/RELEASE?NAME=g&LEASE=%s", b);
    expect_get(t, 1, "");
    expect_run("/sts/ONCE?NAME=g", a, sizeof a);
    done_with("g", b, NULL, 0, STALE("g"));
    done_with("g", a, "3", 1, "DONE");
    expect_get("/sts/ONCE?NAME=g&TIMEOUT=0", 1, "DONE");
    http_conn_close(&w);
    expect_get("/sts/DEL?NAME=g", 1, "");
}

/* The runner renews: nobody takes over while it does, and as soon as it stops they do. */
static void test_renewal_keeps_the_run(void **state)
{
    char a[64], b[64], t[160], got[64];
    http_conn w;
    expect_run("/sts/ONCE?NAME=r&LEASE=0.4", a, sizeof a);
    assert_int_equal(http_conn_open(&w, port), 0);
    assert_int_equal(http_conn_send(&w, "/sts/ONCE?NAME=r&TIMEOUT=10"), 0);
    snprintf(t, sizeof t, "/sts/ONCE?NAME=r&RUN=%s&LEASE=0.4", a);
    for (int i = 0; i < 8; i++) {                /* 1.6 s: four times the lease */
        td_sleep_ms(200);
        expect_run(t, got, sizeof got);
        assert_string_equal(got, a);             /* the same run, not a new one */
    }
    assert_int_equal(http_conn_ready(&w, 0), 0);
    snprintf(t, sizeof t, "/sts/ONCE?NAME=r&RUN=%s&LEASE=0.4&FORMAT=JSON", a);
    char want[160];
    snprintf(want, sizeof want, "{\"ok\":true,\"name\":\"r\",\"state\":\"run\","
             "\"lease\":\"%s\",\"lease_ms\":400}", a);
    expect_json(t, 200, want);
    /* Not the run: a lease of nothing, of another key, or no lease at all. */
    expect_json("/sts/ONCE?NAME=r&RUN=0123456789abcdef&FORMAT=JSON", 409,
                "{\"ok\":false,\"error\":\"" STALE("r") "\"}");
    expect_get("/sts/ONCE?NAME=r&RUN=zz", 0, STALE("r"));
    snprintf(t, sizeof t, "/sts/ONCE?NAME=other&RUN=%s", a);
    expect_get(t, 0, STALE("other"));
    snprintf(t, sizeof t, "/sts/ONCE?NAME=r&RUN=%s&LEASE=0", a);
    expect_get(t, 0, "LEASE value has to be a number of seconds from 0.001 to 3600 !");
    expect_get("/sts/GET?NAME=other", 0, "Key other not found !");
    /* The renewals stop: the waiter runs, and the old run's renewal is refused. */
    recv_page(&w, 3000, 1, "RUN", b, sizeof b);
    assert_string_not_equal(a, b);
    snprintf(t, sizeof t, "/sts/ONCE?NAME=r&RUN=%s", a);
    expect_get(t, 0, STALE("r"));
    done_with("r", b, "7", 1, "DONE");
    /* Done: a renewal is refused too, and the key stays as DONE set it. */
    snprintf(t, sizeof t, "/sts/ONCE?NAME=r&RUN=%s", b);
    expect_get(t, 0, STALE("r"));
    expect_get("/sts/GET?NAME=r", 1, "7");
    http_conn_close(&w);
    expect_get("/sts/DEL?NAME=r", 1, "");
}

static void test_done_reaches_waiters_and_later_callers(void **state)
{
    char id[64];
    http_conn w[3];
    expect_run("/sts/ONCE?NAME=h", id, sizeof id);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(http_conn_open(&w[i], port), 0);
        assert_int_equal(http_conn_send(&w[i], i == 2 ? "/sts/ONCE?NAME=h&FORMAT=JSON"
                                                      : "/sts/ONCE?NAME=h&TIMEOUT=10"), 0);
    }
    td_sleep_ms(100);
    done_with("h", id, "42", 1, "DONE");
    for (int i = 0; i < 2; i++)
        recv_page(&w[i], 2000, 1, "DONE", NULL, 0);
    http_reply r;
    assert_int_equal(http_conn_ready(&w[2], 2000), 1);
    assert_int_equal(http_conn_recv(&w[2], &r), 0);
    assert_string_equal(r.body,
                        "{\"ok\":true,\"name\":\"h\",\"state\":\"done\",\"value\":\"42\"}");
    http_reply_free(&r);
    for (int i = 0; i < 3; i++)
        http_conn_close(&w[i]);
    expect_get("/sts/ONCE?NAME=h", 1, "DONE");
    expect_get("/sts/DEL?NAME=h", 1, "");
}

/* expect_sts_value(r, want): r's X-STS-Value is want (NULL: r has none). */
static void expect_sts_value(const http_reply *r, const char *want)
{
    char got[128];
    int rc = http_header(r, "X-STS-Value", got, sizeof got);
    if (!want && rc == 0)
        fail_msg("an X-STS-Value it should not have: [%s]", got);
    if (want && (rc != 0 || strcmp(got, want) != 0))
        fail_msg("X-STS-Value: want [%s], got %s[%s]", want, rc ? "none " : "", rc ? "" : got);
}

/* The whole answer to request req on a new connection to stsd, read until it closes
 * (testlib keeps only 4 KiB of headers): a malloc'd string the caller frees. */
static char *whole_answer(const char *req)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    for (size_t off = 0, len = strlen(req); off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        assert_true(w > 0);
        off += (size_t)w;
    }
    size_t cap = 65536, have = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    ssize_t n;
    while ((n = recv(fd, out + have, cap - have - 1, 0)) > 0)
        have += (size_t)n;
    close(fd);
    out[have] = '\0';
    return out;
}

/* POSTs DONE NAME=name of run id with VALUE n times the byte whose encoding is unit
 * ("%3B": 3 bytes each encoded; "a": 1): the answer must be DONE, with all of the value
 * in X-STS-Value when it is short enough to go in a header, else none. */
static void done_long(const char *name, const char *id, size_t n, const char *unit,
                      int header)
{
    size_t u = strlen(unit), cap = 256 + n * u;
    char *req = malloc(cap), *want = malloc(cap);
    assert_non_null(req);
    assert_non_null(want);
    size_t o = (size_t)snprintf(want, cap, "\r\nX-STS-Value: ");
    for (size_t i = 0; i < n; i++, o += u)
        memcpy(want + o, unit, u);
    memcpy(want + o, "\r\n", 3);
    const char *enc = want + strlen("\r\nX-STS-Value: ");
    snprintf(req, cap, "POST /sts/DONE HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
             "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: %zu\r\n\r\n"
             "NAME=%s&LEASE=%s&VALUE=%.*s", strlen("NAME=&LEASE=&VALUE=") + strlen(name) +
             strlen(id) + n * u, name, id, (int)(n * u), enc);
    char *got = whole_answer(req);
    assert_true(strncmp(got, "HTTP/1.1 200 ", 13) == 0);
    assert_non_null(strstr(got, "<body>DONE</body>"));
    assert_int_equal(strstr(got, want) != NULL, header);
    assert_int_equal(strstr(got, "X-STS-Value") != NULL, header);
    free(got);
    free(req);
    free(want);
}

/* The run's value rides on every DONE answer in X-STS-Value, percent-encoded, so that a
 * waiter needs no second request: the waiters', a later caller's (HTML and JSON), and
 * DONE's own; RUN has none. A value too long for a header goes without it. */
static void test_done_carries_the_value(void **state)
{
    char id[64];
    http_conn w;
    http_reply r;
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=v", &r), 0);
    expect_page(&r, 1, "RUN");
    expect_sts_value(&r, NULL);
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    assert_int_equal(http_conn_open(&w, port), 0);
    assert_int_equal(http_conn_send(&w, "/sts/ONCE?NAME=v&TIMEOUT=10"), 0);
    assert_int_equal(http_conn_ready(&w, 200), 0);
    /* UTF-8, a space, ';', '%' and a line break: all encoded, unreserved bytes as they are. */
    char t[256];
    snprintf(t, sizeof t, "/sts/DONE?NAME=v&LEASE=%s&VALUE=t-42_~.%%20%%C3%%A9%%3B%%25%%0A", id);
    const char *enc = "t-42_~.%20%C3%A9%3B%25%0A";
    assert_int_equal(http_get(port, t, &r), 0);
    expect_page(&r, 1, "DONE");
    expect_sts_value(&r, enc);
    http_reply_free(&r);
    assert_int_equal(http_conn_ready(&w, 2000), 1);
    assert_int_equal(http_conn_recv(&w, &r), 0);
    expect_page(&r, 1, "DONE");
    expect_sts_value(&r, enc);
    http_reply_free(&r);
    http_conn_close(&w);
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=v", &r), 0);
    expect_page(&r, 1, "DONE");
    expect_sts_value(&r, enc);
    http_reply_free(&r);
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=v&FORMAT=JSON", &r), 0);
    assert_string_equal(r.body, "{\"ok\":true,\"name\":\"v\",\"state\":\"done\","
                        "\"value\":\"t-42_~. \u00e9;%\\n\"}");
    expect_sts_value(&r, enc);
    http_reply_free(&r);
    /* An empty value: no header (libmicrohttpd sends no header with an empty value). */
    expect_get("/sts/DEL?NAME=v", 1, "");
    expect_run("/sts/ONCE?NAME=v", id, sizeof id);
    snprintf(t, sizeof t, "/sts/DONE?NAME=v&LEASE=%s", id);
    assert_int_equal(http_get(port, t, &r), 0);
    expect_page(&r, 1, "DONE");
    expect_sts_value(&r, NULL);
    http_reply_free(&r);
    /* 8190 bytes encoded still go in the header, 8193 do not; the answer is DONE. */
    expect_get("/sts/DEL?NAME=v", 1, "");
    expect_run("/sts/ONCE?NAME=v", id, sizeof id);
    done_long("v", id, 2730, "%3B", 1);
    expect_get("/sts/DEL?NAME=v", 1, "");
    expect_run("/sts/ONCE?NAME=v", id, sizeof id);
    done_long("v", id, 2731, "%3B", 0);
    /* The limit is the encoded length, not three times the value's: 8192 unreserved
     * bytes still go, 8193 do not. */
    expect_get("/sts/DEL?NAME=v", 1, "");
    expect_run("/sts/ONCE?NAME=v", id, sizeof id);
    done_long("v", id, 8192, "a", 1);
    expect_get("/sts/DEL?NAME=v", 1, "");
    expect_run("/sts/ONCE?NAME=v", id, sizeof id);
    done_long("v", id, 8193, "a", 0);
    assert_int_equal(http_get(port, "/sts/ONCE?NAME=v", &r), 0);
    expect_page(&r, 1, "DONE");
    expect_sts_value(&r, NULL);
    http_reply_free(&r);
    expect_get("/sts/DEL?NAME=v", 1, "");
}

static void test_set_completes_a_run(void **state)
{
    char id[64];
    http_conn w;
    expect_run("/sts/ONCE?NAME=s", id, sizeof id);
    assert_int_equal(http_conn_open(&w, port), 0);
    assert_int_equal(http_conn_send(&w, "/sts/ONCE?NAME=s&TIMEOUT=10"), 0);
    assert_int_equal(http_conn_ready(&w, 200), 0);
    expect_get("/sts/SET?NAME=s&VALUE=by-hand", 1, "1");
    recv_page(&w, 2000, 1, "DONE", NULL, 0);
    http_conn_close(&w);
    done_with("s", id, "mine", 0, STALE("s"));
    expect_get("/sts/GET?NAME=s", 1, "by-hand");
    expect_get("/sts/DEL?NAME=s", 1, "");
}

static void test_csrf(void **state)
{
    http_reply r;
    const char req[] = "GET /sts/ONCE?NAME=c HTTP/1.1\r\nHost: x\r\n"
                       "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n\r\n";
    assert_int_equal(http_raw(port, req, sizeof req - 1, &r), 0);
    assert_null(strstr(r.body, "RUN"));
    http_reply_free(&r);
    expect_get("/sts/GET?NAME=c", 0, "Key c not found !");
    char id[64];
    expect_run("/sts/ONCE?NAME=c", id, sizeof id);            /* nobody ran it before */
    done_with("c", id, NULL, 1, "DONE");
    expect_get("/sts/DEL?NAME=c", 1, "");
}

/* ---- RUNS ------------------------------------------------------------------------------ */

#define LISTING(entries) "<html><title>OK</title>\n<body>\n" entries "</body></html>"

static void expect_body(const char *target, const char *body)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    assert_int_equal(r.status, 200);
    if (strcmp(r.body, body) != 0)
        fail_msg("%s\nwant: %s\ngot:  %s", target, body, r.body);
    http_reply_free(&r);
}

/* RUNS?FORMAT=JSON with one run, of name, lasting 29-30 s, with `waiters` waiting. */
static void expect_one_run(const char *target, const char *name, int waiters)
{
    http_reply r;
    char head[128], tail[64];
    assert_int_equal(http_get(port, target, &r), 0);
    assert_int_equal(r.status, 200);
    int hl = snprintf(head, sizeof head, "{\"ok\":true,\"runs\":[{\"name\":\"%s\","
                      "\"expires_in_ms\":", name);
    snprintf(tail, sizeof tail, ",\"waiters\":%d}]}", waiters);
    char *end = NULL;
    long ms = strncmp(r.body, head, (size_t)hl) == 0 ? strtol(r.body + hl, &end, 10) : -1;
    if (!end || strcmp(end, tail) != 0 || ms < 29000 || ms > 30000)
        fail_msg("%s: %s", target, r.body);
    http_reply_free(&r);
}

/* Polls target until its body holds want (up to 2 s): parked callers reach the store
 * after their requests are sent. */
static void wait_body_has(const char *target, const char *want)
{
    http_reply r;
    for (int i = 0; i < 100; i++) {
        assert_int_equal(http_get(port, target, &r), 0);
        int found = strstr(r.body, want) != NULL;
        http_reply_free(&r);
        if (found)
            return;
        td_sleep_ms(20);
    }
    fail_msg("%s never held %s", target, want);
}

static void test_runs(void **state)
{
    expect_json("/sts/RUNS?FORMAT=JSON", 200, "{\"ok\":true,\"runs\":[]}");
    expect_body("/sts/RUNS", LISTING(""));
    /* A run of 30 s, two ONCE callers waiting for it and a GET watching the key, which
     * is not one of them. */
    char id[64], a[64], b[64];
    http_conn w[3];
    expect_run("/sts/ONCE?NAME=setup&LEASE=30", id, sizeof id);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(http_conn_open(&w[i], port), 0);
        assert_int_equal(http_conn_send(&w[i], i < 2 ? "/sts/ONCE?NAME=setup&TIMEOUT=10"
                                                     : "/sts/GET?NAME=setup&VERSION=0&TIMEOUT=10"), 0);
    }
    wait_body_has("/sts/RUNS?FORMAT=JSON", "\"waiters\":2}");
    expect_one_run("/sts/RUNS?FORMAT=JSON", "setup", 2);
    http_reply r;
    assert_int_equal(http_get(port, "/sts/RUNS", &r), 0);
    const char *head = "<html><title>OK</title>\n<body>\nsetup = lease ends in ";
    const char *tail = " s, 2 waiting<br />\n</body></html>";
    size_t hl = strlen(head), tl = strlen(tail), bl = strlen(r.body);
    int s = 0, tenths = 0, used = 0;
    if (bl < hl + tl || strncmp(r.body, head, hl) != 0 || strcmp(r.body + bl - tl, tail) != 0 ||
        sscanf(r.body + hl, "%d.%d%n", &s, &tenths, &used) != 2 || hl + (size_t)used + tl != bl ||
        s < 29 || s > 30 || tenths < 0 || tenths > 9)
        fail_msg("RUNS: %s", r.body);
    http_reply_free(&r);
    /* More runs: sorted by name, whatever the order they began in; PREFIX picks. */
    expect_run("/sts/ONCE?NAME=zz-last&LEASE=5", a, sizeof a);
    expect_run("/sts/ONCE?NAME=aa-first&LEASE=5", b, sizeof b);
    assert_int_equal(http_get(port, "/sts/RUNS?FORMAT=JSON", &r), 0);
    const char *p1 = strstr(r.body, "{\"name\":\"aa-first\",\"expires_in_ms\":");
    const char *p2 = strstr(r.body, "{\"name\":\"setup\",\"expires_in_ms\":");
    const char *p3 = strstr(r.body, "{\"name\":\"zz-last\",\"expires_in_ms\":");
    if (!p1 || !p2 || !p3 || !(p1 < p2 && p2 < p3) || strncmp(r.body, "{\"ok\":true,\"runs\":[{", 20))
        fail_msg("RUNS not sorted: %s", r.body);
    http_reply_free(&r);
    assert_int_equal(http_get(port, "/sts/RUNS", &r), 0);
    p1 = strstr(r.body, "\naa-first = lease ends in ");
    p2 = strstr(r.body, "\nsetup = lease ends in ");
    p3 = strstr(r.body, "\nzz-last = lease ends in ");
    if (!p1 || !p2 || !p3 || !(p1 < p2 && p2 < p3) || !strstr(r.body, " s, 0 waiting<br />\nsetup"))
        fail_msg("RUNS' listing not sorted: %s", r.body);
    http_reply_free(&r);
    expect_one_run("/sts/RUNS?PREFIX=set&FORMAT=JSON", "setup", 2);
    expect_json("/sts/RUNS?PREFIX=nothing&FORMAT=JSON", 200, "{\"ok\":true,\"runs\":[]}");
    /* DONE: the run is gone from RUNS, its waiters answered. */
    done_with("setup", id, "ok", 1, "DONE");
    for (int i = 0; i < 2; i++)
        recv_page(&w[i], 2000, 1, "DONE", NULL, 0);
    recv_page(&w[2], 2000, 1, "ok", NULL, 0);
    for (int i = 0; i < 3; i++)
        http_conn_close(&w[i]);
    assert_int_equal(http_get(port, "/sts/RUNS?FORMAT=JSON", &r), 0);
    if (strstr(r.body, "setup") || !strstr(r.body, "aa-first") || !strstr(r.body, "zz-last"))
        fail_msg("RUNS after DONE: %s", r.body);
    http_reply_free(&r);
    done_with("aa-first", b, NULL, 1, "DONE");
    done_with("zz-last", a, NULL, 1, "DONE");
    expect_json("/sts/RUNS?FORMAT=JSON", 200, "{\"ok\":true,\"runs\":[]}");
    expect_body("/sts/RUNS", LISTING(""));
    expect_get("/sts/DEL?NAME=setup", 1, "");
    expect_get("/sts/DEL?NAME=aa-first", 1, "");
    expect_get("/sts/DEL?NAME=zz-last", 1, "");
}

/* RUNS takes the data token as BARRIERS does, and only looks: a browser's RUNS without
 * the dashboard's header is answered. */
static void test_runs_tokens(void **state)
{
    daemon_proc d2;
    http_reply r;
    assert_int_equal(td_mkdirs(&d2), 0);
    const char *args[] = {"-Dstsd.token=data-1", "-Dstsd.adminToken=admin-2", NULL};
    assert_int_equal(td_start(&d2, args), 0);
    assert_int_equal(http_get_as(d2.port, "/sts/RUNS", NULL, NULL, &r), 0);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/RUNS", "wrong", NULL, &r), 0);
    assert_int_equal(r.status, 401);
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/ONCE?NAME=t&LEASE=30", "data-1", NULL, &r), 0);
    expect_page(&r, 1, "RUN");
    http_reply_free(&r);
    const char *browser = "Origin: http://evil.example\r\nSec-Fetch-Site: cross-site\r\n";
    assert_int_equal(http_get_as(d2.port, "/sts/RUNS", "data-1", browser, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "\nt = lease ends in "));
    http_reply_free(&r);
    assert_int_equal(http_get_as(d2.port, "/sts/RUNS?FORMAT=JSON", "admin-2", NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.body, "{\"name\":\"t\",\"expires_in_ms\":"));
    http_reply_free(&r);
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

/* ---- kill -9 between RUN and DONE ------------------------------------------------------ */

static void test_run_across_kill9(void **state)
{
    daemon_proc d2;
    char so[400], a[64], b[64], k[64];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int was = port;
    port = d2.port;
    expect_run("/sts/ONCE?NAME=k&LEASE=2.5", a, sizeof a);
    expect_run("/sts/ONCE?NAME=keep&LEASE=60", k, sizeof k);
    char ren[64], t[160];
    expect_run("/sts/ONCE?NAME=ren&LEASE=0.5", ren, sizeof ren);
    snprintf(t, sizeof t, "/sts/ONCE?NAME=ren&RUN=%s&LEASE=60", ren);
    expect_run(t, b, sizeof b);
    assert_int_equal(td_stop(&d2, 1), 128 + SIGKILL);
    assert_int_equal(td_start(&d2, args), 0);
    port = d2.port;
    /* The run still holds: nobody else runs it before its deadline. */
    expect_get("/sts/ONCE?NAME=k&TIMEOUT=0", 0,
               "The run of k is still in progress (TIMEOUT=0), nothing changed !");
    expect_get("/sts/ONCE?NAME=keep&TIMEOUT=0", 0,
               "The run of keep is still in progress (TIMEOUT=0), nothing changed !");
    /* The renewal's deadline, not the first one's, survived. */
    td_sleep_ms(600);
    expect_get("/sts/ONCE?NAME=ren&TIMEOUT=0", 0,
               "The run of ren is still in progress (TIMEOUT=0), nothing changed !");
    done_with("ren", ren, "2", 1, "DONE");
    /* Past it, a waiter takes over. */
    http_conn w;
    assert_int_equal(http_conn_open(&w, port), 0);
    assert_int_equal(http_conn_send(&w, "/sts/ONCE?NAME=k&TIMEOUT=10"), 0);
    recv_page(&w, 5000, 1, "RUN", b, sizeof b);
    http_conn_close(&w);
    done_with("k", a, NULL, 0, STALE("k"));
    done_with("k", b, "1", 1, "DONE");
    /* The other run, still in its lease, ends with its own lease after the restart. */
    done_with("keep", k, "0", 1, "DONE");
    /* And through a compaction-free graceful restart, done stays done. */
    assert_int_equal(td_stop(&d2, 0), 0);
    assert_int_equal(td_start(&d2, args), 0);
    port = d2.port;
    expect_get("/sts/ONCE?NAME=k", 1, "DONE");
    expect_get("/sts/GET?NAME=keep", 1, "0");
    port = was;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_then_done),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_one_run_among_200),
        cmocka_unit_test(test_failover_when_the_runner_dies),
        cmocka_unit_test(test_failover_on_release),
        cmocka_unit_test(test_renewal_keeps_the_run),
        cmocka_unit_test(test_done_reaches_waiters_and_later_callers),
        cmocka_unit_test(test_done_carries_the_value),
        cmocka_unit_test(test_set_completes_a_run),
        cmocka_unit_test(test_csrf),
        cmocka_unit_test(test_runs),
        cmocka_unit_test(test_runs_tokens),
        cmocka_unit_test(test_run_across_kill9),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
