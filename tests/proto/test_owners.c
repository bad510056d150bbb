/* SPDX-License-Identifier: Apache-2.0 */
/* test_owners.c - lines that stick to their owner (READ KEEP=FALSE OWNER=o) on a real
 * stsd: 100 owners reading 5 times each, renewal with LEASE and expiry back to the head,
 * RELEASE and ACK by owner, LENGTH and LEASES, RESET and INITFILE dropping the owners,
 * the KOs (with their HTTP status in JSON), owners that wait with TIMEOUT (in arrival
 * order, two READs of one owner sharing a line, timeouts, leases), and an owner's line
 * (one lent while it waited too) across kill -9 with fsync=always. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testlib.h"
#include "expect.h"

#define NO_OWNER "This OWNER holds no line of this list (settled already, expired, or " \
                 "never read) !"

static daemon_proc d;

static int setup(void **state)
{
    *state = &d;
    return td_start_fresh(&d, "logins.csv", "u1\nu2\nu3\n");
}

static void expect_get(const char *target, int ok, const char *text)
{
    expect_get_page(d.port, target, ok, text);
}

/* GETs target and copies the OK page's text (between <body> and </body>) to out. */
static void get_text(const char *target, char *out, size_t outlen)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    assert_int_equal(r.status, 200);
    const char *b = strstr(r.body, "<body>"), *e = b ? strstr(b, "</body>") : NULL;
    if (!b || !e || strstr(r.body, "Error :"))
        fail_msg("not an OK page: %s", r.body);
    b += 6;
    assert_true((size_t)(e - b) < outlen);
    memcpy(out, b, (size_t)(e - b));
    out[e - b] = 0;
    http_reply_free(&r);
}

/* The JSON KO of target: its HTTP status, and its error text contains want. */
static void expect_json_ko(const char *target, int status, const char *want)
{
    http_reply r;
    char t[512];
    snprintf(t, sizeof t, "%s&FORMAT=JSON", target);
    assert_int_equal(http_get(d.port, t, &r), 0);
    assert_int_equal(r.status, status);
    assert_non_null(strstr(r.body, "\"ok\":false"));
    if (!strstr(r.body, want))
        fail_msg("want %s in %s", want, r.body);
    http_reply_free(&r);
}

static void add_lines(const char *name, int n)
{
    char t[256];
    for (int i = 0; i < n; i++) {
        snprintf(t, sizeof t, "/sts/ADD?ADD_MODE=LAST&FILENAME=%s&LINE=line%03d", name, i);
        expect_get(t, 1, "");
    }
}

/* 100 owners, 5 READs each, interleaved: always their own line, all distinct. */
static void test_hundred_owners(void **state)
{
    static char got[100][32];
    char t[256], line[32];
    add_lines("o1", 120);
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < 100; i++) {
            snprintf(t, sizeof t, "/sts/READ?FILENAME=o1&KEEP=FALSE&OWNER=vu-%d%s", i,
                     round % 2 ? "&READ_MODE=RANDOM" : "");
            get_text(t, line, sizeof line);
            if (round == 0)
                strcpy(got[i], line);
            else
                assert_string_equal(line, got[i]);
        }
    for (int i = 0; i < 100; i++)
        for (int k = i + 1; k < 100; k++)
            assert_string_not_equal(got[i], got[k]);
    expect_get("/sts/LENGTH?FILENAME=o1", 1, "20");
    expect_get("/sts/LEASES?FILENAME=o1", 1, "100");
    /* Owners are per list: vu-0 on another list gets a line of that list. */
    add_lines("o1b", 1);
    expect_get("/sts/READ?FILENAME=o1b&KEEP=FALSE&OWNER=vu-0", 1, "line000");
    /* A plain READ takes none of the owned lines. */
    for (int i = 0; i < 20; i++) {
        get_text("/sts/READ?FILENAME=o1&KEEP=FALSE", line, sizeof line);
        for (int k = 0; k < 100; k++)
            assert_string_not_equal(line, got[k]);
    }
    expect_get("/sts/READ?FILENAME=o1&KEEP=FALSE", 0, "No more line !");
    expect_get("/sts/READ?FILENAME=o1&KEEP=FALSE&OWNER=newcomer", 0, "No more line !");
    expect_get("/sts/READ?FILENAME=o1&KEEP=FALSE&OWNER=vu-7", 1, got[7]);
}

/* The lease id of an owned READ, in X-STS-Lease, settles it too. */
static void test_lease_header(void **state)
{
    char id[64], id2[64], t[256];
    add_lines("o2", 2);
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=o2&KEEP=FALSE&OWNER=a", &r), 0);
    expect_page(&r, 1, "line000");
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    assert_int_equal(strlen(id), 16);
    assert_int_equal(http_get(d.port, "/sts/READ?FILENAME=o2&KEEP=FALSE&OWNER=a", &r), 0);
    assert_int_equal(http_header(&r, "X-STS-Lease", id2, sizeof id2), 0);
    http_reply_free(&r);
    assert_string_equal(id, id2);
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=o2&LEASE=%s", id);
    expect_get(t, 1, "");
    expect_get("/sts/RELEASE?FILENAME=o2&OWNER=a", 0, NO_OWNER);
    expect_get("/sts/LENGTH?FILENAME=o2", 1, "2");
    /* Any bytes but NUL: an owner named with spaces, '&' and UTF-8. */
    expect_get("/sts/READ?FILENAME=o2&KEEP=FALSE&OWNER=m%C3%A9%20x%26y", 1, "line000");
    expect_get("/sts/READ?FILENAME=o2&KEEP=FALSE&OWNER=m%C3%A9%20x%26y", 1, "line000");
    expect_get("/sts/READ?FILENAME=o2&KEEP=FALSE&OWNER=m%C3%A9%20x", 1, "line001");
}

/* With LEASE each READ renews the loan; one not renewed goes back to the head. */
static void test_renew_and_expire(void **state)
{
    add_lines("o3", 3);
    expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=a&LEASE=1", 1, "line000");
    expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=b&LEASE=1", 1, "line001");
    for (int i = 0; i < 4; i++) {              /* a renews for 2 s, b does not */
        td_sleep_ms(400);
        expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=a&LEASE=1", 1, "line000");
    }
    /* b's loan (1 s) is over by now: back at the head. */
    expect_get("/sts/LEASES?FILENAME=o3", 1, "1");
    expect_get("/sts/LENGTH?FILENAME=o3", 1, "2");
    expect_get("/sts/READ?FILENAME=o3", 1, "line001");      /* KEEP=TRUE: to the tail */
    expect_get("/sts/RELEASE?FILENAME=o3&OWNER=b", 0, NO_OWNER);
    /* b reads again: a line afresh, from the head. */
    expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=b&LEASE=60", 1, "line002");
    td_sleep_ms(1500);                          /* a stops renewing */
    expect_get("/sts/LEASES?FILENAME=o3", 1, "1");
    expect_get("/sts/READ?FILENAME=o3", 1, "line000");
    /* Without LEASE a loan has no deadline. */
    expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=c", 1, "line001");
    td_sleep_ms(1200);
    expect_get("/sts/READ?FILENAME=o3&KEEP=FALSE&OWNER=c", 1, "line001");
    expect_get("/sts/LEASES?FILENAME=o3", 1, "2");
    expect_get("/sts/LENGTH?FILENAME=o3", 1, "1");
}

static void test_settle_by_owner(void **state)
{
    add_lines("o4", 3);
    expect_get("/sts/READ?FILENAME=o4&KEEP=FALSE&OWNER=a", 1, "line000");
    expect_get("/sts/READ?FILENAME=o4&KEEP=FALSE&OWNER=b", 1, "line001");
    expect_get("/sts/LENGTH?FILENAME=o4", 1, "1");
    expect_get("/sts/LEASES?FILENAME=o4", 1, "2");
    /* RELEASE: at the head now; a's next READ takes a line afresh. */
    expect_get("/sts/RELEASE?FILENAME=o4&OWNER=a", 1, "");
    expect_get("/sts/LENGTH?FILENAME=o4", 1, "2");
    expect_get("/sts/LEASES?FILENAME=o4", 1, "1");
    expect_get("/sts/READ?FILENAME=o4&KEEP=FALSE&OWNER=z", 1, "line000");
    expect_get("/sts/READ?FILENAME=o4&KEEP=FALSE&OWNER=a", 1, "line002");
    /* ACK: consumed for good. */
    expect_get("/sts/ACK?FILENAME=o4&OWNER=b", 1, "");
    expect_get("/sts/ACK?FILENAME=o4&OWNER=b", 0, NO_OWNER);
    expect_get("/sts/LEASES?FILENAME=o4", 1, "2");
    expect_get("/sts/LENGTH?FILENAME=o4", 1, "0");
    expect_get("/sts/READ?FILENAME=o4&KEEP=FALSE&OWNER=b", 0, "No more line !");
    expect_json_ko("/sts/ACK?FILENAME=o4&OWNER=nobody", 404, "holds no line");
    expect_get("/sts/ACK?FILENAME=nolist&OWNER=a", 0, "nolist not loaded yet !");
}

static void test_reset_and_initfile_drop_owners(void **state)
{
    add_lines("o5", 2);
    expect_get("/sts/READ?FILENAME=o5&KEEP=FALSE&OWNER=a", 1, "line000");
    expect_get("/sts/RESET?FILENAME=o5", 1, "");
    expect_get("/sts/LEASES?FILENAME=o5", 1, "0");
    expect_get("/sts/RELEASE?FILENAME=o5&OWNER=a", 0, NO_OWNER);
    expect_get("/sts/READ?FILENAME=o5&KEEP=FALSE&OWNER=a", 0, "No more line !");
    expect_get("/sts/INITFILE?FILENAME=logins.csv", 1, "3");
    expect_get("/sts/READ?FILENAME=logins.csv&KEEP=FALSE&OWNER=a", 1, "u1");
    expect_get("/sts/READ?FILENAME=logins.csv&KEEP=FALSE&OWNER=b", 1, "u2");
    expect_get("/sts/INITFILE?FILENAME=logins.csv", 1, "3");
    expect_get("/sts/LEASES?FILENAME=logins.csv", 1, "0");
    expect_get("/sts/LENGTH?FILENAME=logins.csv", 1, "3");
    expect_get("/sts/READ?FILENAME=logins.csv&KEEP=FALSE&OWNER=b", 1, "u1");
}

static void test_bad_owners(void **state)
{
    char t[512], big[200];
    add_lines("o6", 2);
    const char *keep = "OWNER needs KEEP=FALSE !";
    expect_get("/sts/READ?FILENAME=o6&OWNER=a", 0, keep);
    expect_get("/sts/READ?FILENAME=o6&KEEP=TRUE&OWNER=a", 0, keep);
    expect_json_ko("/sts/READ?FILENAME=o6&KEEP=TRUE&OWNER=a", 400, keep);
    const char *only = "OWNER works with READ, ACK and RELEASE only !";
    expect_get("/sts/READMULTI?FILENAME=o6&NB_LINES=1&KEEP=FALSE&OWNER=a", 0, only);
    expect_get("/sts/FIND?FILENAME=o6&LINE=line&KEEP=FALSE&OWNER=a", 0, only);
    const char *value = "OWNER value has to be 1 to 128 bytes, without NUL !";
    expect_get("/sts/READ?FILENAME=o6&KEEP=FALSE&OWNER=", 0, value);
    expect_get("/sts/READ?FILENAME=o6&KEEP=FALSE&OWNER=a%00b", 0, value);
    memset(big, 'x', 129);
    big[129] = 0;
    snprintf(t, sizeof t, "/sts/READ?FILENAME=o6&KEEP=FALSE&OWNER=%s", big);
    expect_get(t, 0, value);
    expect_json_ko(t, 400, "OWNER value");
    big[128] = 0;                               /* 128 bytes: fine */
    snprintf(t, sizeof t, "/sts/READ?FILENAME=o6&KEEP=FALSE&OWNER=%s", big);
    expect_get(t, 1, "line000");
    expect_get("/sts/READ?FILENAME=o6&KEEP=FALSE&OWNER=a&LEASE=0", 0,
               "LEASE value has to be a number of seconds above 0 up to 3600 !");
    const char *alone = "OWNER settles alone: no LINE or LEASE with it !";
    expect_get("/sts/RELEASE?FILENAME=o6&OWNER=a&LINE=line000", 0, alone);
    expect_get("/sts/ACK?FILENAME=o6&OWNER=a&LEASE=0123456789abcdef", 0, alone);
    expect_get("/sts/ACK?FILENAME=o6&OWNER=", 0, value);
    /* None of these changed anything. */
    expect_get("/sts/LENGTH?FILENAME=o6", 1, "1");
    expect_get("/sts/LEASES?FILENAME=o6", 1, "1");
    expect_get("/sts/READ?FILENAME=nolist&KEEP=FALSE&OWNER=a", 0, "nolist not loaded yet !");
}

/* ---- owners that wait (TIMEOUT) ---- */

/* Opens a connection and sends target on it: a waiter. */
static void start(http_conn *c, const char *target)
{
    assert_int_equal(http_conn_open(c, d.port), 0);
    assert_int_equal(http_conn_send(c, target), 0);
}

/* The answer r is the OK page of text with an X-STS-Lease, copied to id (17 bytes). */
static void expect_lent(http_reply *r, const char *text, char *id)
{
    expect_page(r, 1, text);
    assert_int_equal(http_header(r, "X-STS-Lease", id, 17), 0);
    assert_int_equal(strlen(id), 16);
}

/* The waiter on c is answered within ms with the OK page of text and a lease id (into
 * id, 17 bytes). */
static void expect_served(http_conn *c, int ms, const char *text, char *id)
{
    assert_true(http_conn_ready(c, ms));
    http_reply r;
    assert_int_equal(http_conn_recv(c, &r), 0);
    expect_lent(&r, text, id);
    http_reply_free(&r);
    http_conn_close(c);
}

/* GET target: the OK page of text with a lease id (into id, 17 bytes). */
static void get_lent(const char *target, const char *text, char *id)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    expect_lent(&r, text, id);
    http_reply_free(&r);
}

/* An owner holding no line waits for one another owner releases; once it holds it, its
 * READs (with TIMEOUT or not) answer it at once, with the same id. */
static void test_owner_waits_for_release(void **state)
{
    char id[17], id2[17];
    http_conn b;
    add_lines("w1", 1);
    expect_get("/sts/READ?FILENAME=w1&KEEP=FALSE&OWNER=a", 1, "line000");
    start(&b, "/sts/READ?FILENAME=w1&KEEP=FALSE&OWNER=b&TIMEOUT=5");
    assert_false(http_conn_ready(&b, 200));
    expect_get("/sts/LEASES?FILENAME=w1", 1, "1");          /* waiting takes nothing */
    expect_get("/sts/RELEASE?FILENAME=w1&OWNER=a", 1, "");
    expect_served(&b, 1000, "line000", id);
    get_lent("/sts/READ?FILENAME=w1&KEEP=FALSE&OWNER=b", "line000", id2);
    assert_string_equal(id, id2);
    int64_t t0 = td_now_ms();
    get_lent("/sts/READ?FILENAME=w1&KEEP=FALSE&OWNER=b&TIMEOUT=5", "line000", id2);
    assert_true(td_now_ms() - t0 < 1000);                   /* holds one: no wait */
    assert_string_equal(id, id2);
    expect_get("/sts/LENGTH?FILENAME=w1", 1, "0");
    expect_get("/sts/LEASES?FILENAME=w1", 1, "1");
    expect_get("/sts/READ?FILENAME=w1&KEEP=FALSE&OWNER=a", 0, "No more line !");
    /* The lease id settles it too, and the owner's next READ takes afresh. */
    char t[128];
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=w1&LEASE=%s", id);
    expect_get(t, 1, "");
    expect_get("/sts/RELEASE?FILENAME=w1&OWNER=b", 0, NO_OWNER);
}

/* Plain READs and owners wait in one queue, in arrival order; an owner's answer in JSON
 * is that of an immediate owned READ. */
static void test_owner_waiters_in_arrival_order(void **state)
{
    char id[17], id2[17];
    http_conn p, o;
    start(&p, "/sts/READ?FILENAME=w5&KEEP=FALSE&TIMEOUT=5");
    td_sleep_ms(50);
    start(&o, "/sts/READ?FILENAME=w5&KEEP=FALSE&OWNER=j&TIMEOUT=5&FORMAT=JSON");
    assert_false(http_conn_ready(&o, 200));                 /* no list yet: waits */
    expect_get("/sts/ADD?FILENAME=w5&LINE=first", 1, "");
    assert_true(http_conn_ready(&p, 1000));
    http_reply r;
    assert_int_equal(http_conn_recv(&p, &r), 0);
    expect_page(&r, 1, "first");
    http_reply_free(&r);
    http_conn_close(&p);
    assert_false(http_conn_ready(&o, 200));
    expect_get("/sts/ADD?FILENAME=w5&LINE=second", 1, "");
    assert_true(http_conn_ready(&o, 1000));
    assert_int_equal(http_conn_recv(&o, &r), 0);
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "{\"ok\":true,\"line\":\"second\"}");
    assert_int_equal(http_header(&r, "X-STS-Lease", id, sizeof id), 0);
    http_reply_free(&r);
    http_conn_close(&o);
    get_lent("/sts/READ?FILENAME=w5&KEEP=FALSE&OWNER=j", "second", id2);
    assert_string_equal(id, id2);
}

/* Two waiting READs of one owner take one line: the second gets the first's, while an
 * owner between them waits on. */
static void test_same_owner_waiters_share_a_line(void **state)
{
    char id1[17], id2[17], id3[17];
    http_conn c1, other, c2;
    add_lines("w2", 1);
    expect_get("/sts/READ?FILENAME=w2&KEEP=FALSE", 1, "line000");
    start(&c1, "/sts/READ?FILENAME=w2&KEEP=FALSE&OWNER=c&TIMEOUT=5");
    td_sleep_ms(50);
    start(&other, "/sts/READ?FILENAME=w2&KEEP=FALSE&OWNER=x&TIMEOUT=5");
    td_sleep_ms(50);
    start(&c2, "/sts/READ?FILENAME=w2&KEEP=FALSE&OWNER=c&TIMEOUT=5&LEASE=60");
    assert_false(http_conn_ready(&c1, 200));
    assert_false(http_conn_ready(&c2, 0));
    expect_get("/sts/ADD?FILENAME=w2&LINE=shared", 1, "");
    expect_served(&c1, 1000, "shared", id1);
    expect_served(&c2, 1000, "shared", id2);
    assert_string_equal(id1, id2);
    assert_false(http_conn_ready(&other, 100));
    expect_get("/sts/LENGTH?FILENAME=w2", 1, "0");
    expect_get("/sts/LEASES?FILENAME=w2", 1, "1");
    expect_get("/sts/ADD?FILENAME=w2&LINE=next", 1, "");
    expect_served(&other, 1000, "next", id3);
    assert_string_not_equal(id1, id3);
    expect_get("/sts/LEASES?FILENAME=w2", 1, "2");
}

/* Plain READ's and an owner's answers of the same target, FORMAT=JSON or not: the same
 * status and body, each after at least ms. */
static void same_as_plain(const char *plain, const char *owned, int ms)
{
    http_reply a, b;
    int64_t t0 = td_now_ms();
    assert_int_equal(http_get(d.port, plain, &a), 0);
    assert_true(td_now_ms() - t0 >= ms);
    t0 = td_now_ms();
    assert_int_equal(http_get(d.port, owned, &b), 0);
    int64_t took = td_now_ms() - t0;
    assert_true(took >= ms && took < ms + 1000);
    assert_int_equal(a.status, b.status);
    assert_string_equal(a.body, b.body);
    http_reply_free(&a);
    http_reply_free(&b);
}

/* At its timeout an owner gets a plain READ's KO; a waiter whose client left takes no
 * line. */
static void test_owner_timeout(void **state)
{
    expect_get("/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=t&TIMEOUT=0.3", 0,
               "w3 not loaded yet !");
    same_as_plain("/sts/READ?FILENAME=w3&KEEP=FALSE&TIMEOUT=0.3&FORMAT=JSON",
                  "/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=t&TIMEOUT=0.3&FORMAT=JSON", 300);
    add_lines("w3", 1);
    expect_get("/sts/READ?FILENAME=w3&KEEP=FALSE", 1, "line000");
    same_as_plain("/sts/READ?FILENAME=w3&KEEP=FALSE&TIMEOUT=0.3",
                  "/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=t&TIMEOUT=0.3", 300);
    expect_get("/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=t&TIMEOUT=0.3", 0, "No more line !");
    same_as_plain("/sts/READ?FILENAME=w3&KEEP=FALSE&TIMEOUT=0.3&FORMAT=JSON",
                  "/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=t&TIMEOUT=0.3&FORMAT=JSON", 300);
    http_conn g;
    start(&g, "/sts/READ?FILENAME=w3&KEEP=FALSE&OWNER=g&TIMEOUT=10");
    td_sleep_ms(50);
    http_conn_close(&g);
    td_sleep_ms(50);
    add_lines("w3", 1);
    expect_get("/sts/LENGTH?FILENAME=w3", 1, "1");
    expect_get("/sts/LEASES?FILENAME=w3", 1, "0");
    expect_get("/sts/RELEASE?FILENAME=w3&OWNER=g", 0, NO_OWNER);
}

/* A waiter's LEASE is its loan's deadline: not renewed, the line goes back. */
static void test_owner_waiter_lease_expires(void **state)
{
    char id[17];
    http_conn c;
    start(&c, "/sts/READ?FILENAME=w4&KEEP=FALSE&OWNER=e&LEASE=0.5&TIMEOUT=5");
    assert_false(http_conn_ready(&c, 200));
    expect_get("/sts/ADD?FILENAME=w4&LINE=lent", 1, "");
    expect_served(&c, 1000, "lent", id);
    expect_get("/sts/LENGTH?FILENAME=w4", 1, "0");
    expect_get("/sts/LEASES?FILENAME=w4", 1, "1");
    td_sleep_ms(1300);
    expect_get("/sts/LEASES?FILENAME=w4", 1, "0");
    expect_get("/sts/LENGTH?FILENAME=w4", 1, "1");
    expect_get("/sts/RELEASE?FILENAME=w4&OWNER=e", 0, NO_OWNER);
    expect_get("/sts/READ?FILENAME=w4", 1, "lent");
}

/* --check-journal on d2's state: its report (in d2's dataset folder) must hold want. */
static void check_journal(const daemon_proc *d2, const char *want)
{
    const char *bin = getenv("STSD") ? getenv("STSD") : "build/stsd";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s --check-journal %s/state >%s/check.out 2>&1", bin, d2->dir,
             d2->data);
    int st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t len;
    char *out = td_read_file(d2, "check.out", &len);
    assert_non_null(out);
    if (!strstr(out, want) || !strstr(out, "result: OK"))
        fail_msg("want %s in: %s", want, out);
    free(out);
}

/* After kill -9 with fsync=always an owner still gets its same line; a loan renewed with
 * LEASE keeps its new deadline; one settled stays settled. */
static void test_owner_across_kill9(void **state)
{
    daemon_proc d2;
    char so[400];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int port = d.port;
    d.port = d2.port;
    add_lines("k", 5);
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=a", 1, "line000");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=b&LEASE=1", 1, "line001");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=b&LEASE=60", 1, "line001");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=c", 1, "line002");
    expect_get("/sts/ACK?FILENAME=k&OWNER=c", 1, "");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=e&LEASE=1", 1, "line003");
    /* An owner served while it waited: its loan is journaled before it is answered. */
    http_conn w;
    start(&w, "/sts/READ?FILENAME=kw&KEEP=FALSE&OWNER=w&TIMEOUT=10");
    assert_false(http_conn_ready(&w, 200));
    expect_get("/sts/ADD?FILENAME=kw&LINE=mine", 1, "");
    expect_get("/sts/ADD?FILENAME=kw&LINE=spare", 1, "");
    char id[17], id2[17];
    expect_served(&w, 1000, "mine", id);
    assert_int_equal(td_stop(&d2, 1), 128 + SIGKILL);
    check_journal(&d2, " 5 own 1 renew");
    td_sleep_ms(1200);                          /* b's first deadline and e's pass */
    assert_int_equal(td_start(&d2, args), 0);
    d.port = d2.port;
    td_sleep_ms(300);                           /* the lease timer's first round */
    expect_get("/sts/LEASES?FILENAME=k", 1, "2");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=a", 1, "line000");
    expect_get("/sts/READ?FILENAME=k&KEEP=FALSE&OWNER=b", 1, "line001");
    expect_get("/sts/ACK?FILENAME=k&OWNER=c", 0, NO_OWNER);
    expect_get("/sts/RELEASE?FILENAME=k&OWNER=e", 0, NO_OWNER);
    expect_get("/sts/READ?FILENAME=k", 1, "line003");       /* e's, back at the head */
    expect_get("/sts/LENGTH?FILENAME=k", 1, "2");
    get_lent("/sts/READ?FILENAME=kw&KEEP=FALSE&OWNER=w", "mine", id2);
    assert_string_equal(id, id2);
    expect_get("/sts/LENGTH?FILENAME=kw", 1, "1");
    expect_get("/sts/LEASES?FILENAME=kw", 1, "1");
    d.port = port;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hundred_owners),
        cmocka_unit_test(test_lease_header),
        cmocka_unit_test(test_renew_and_expire),
        cmocka_unit_test(test_settle_by_owner),
        cmocka_unit_test(test_reset_and_initfile_drop_owners),
        cmocka_unit_test(test_bad_owners),
        cmocka_unit_test(test_owner_waits_for_release),
        cmocka_unit_test(test_owner_waiters_in_arrival_order),
        cmocka_unit_test(test_same_owner_waiters_share_a_line),
        cmocka_unit_test(test_owner_timeout),
        cmocka_unit_test(test_owner_waiter_lease_expires),
        cmocka_unit_test(test_owner_across_kill9),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
