/* SPDX-License-Identifier: Apache-2.0 */
/* test_leases.c - LEASE on READ, READMULTI and FIND on a real stsd: the X-STS-Lease ids,
 * ACK, RELEASE and LEASES, expiry back to the head, bad values, RESET, waiters fed by a
 * release, and leases across kill -9 with the journal and fsync=always. */
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
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    expect_page_of(target, &r, ok, text);
    char v[64];
    if (!strstr(target, "LEASE=") || !ok)
        assert_int_equal(http_header(&r, "X-STS-Lease", v, sizeof v), -1);
    http_reply_free(&r);
}

/* GETs target, expects the OK page text, and copies the X-STS-Lease value to id. */
static void get_leased(const char *target, const char *text, char *id, size_t idlen)
{
    http_reply r;
    assert_int_equal(http_get(d.port, target, &r), 0);
    expect_page(&r, 1, text);
    assert_int_equal(http_header(&r, "X-STS-Lease", id, idlen), 0);
    http_reply_free(&r);
}

static int is_id(const char *s, size_t len)
{
    if (len != 16)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

static void test_lease_ack(void **state)
{
    char id[64], t[256];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l1&LINE=a", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l1&LINE=b", 1, "");
    get_leased("/sts/READ?FILENAME=l1&KEEP=FALSE&LEASE=60", "a", id, sizeof id);
    assert_true(is_id(id, strlen(id)));
    expect_get("/sts/LENGTH?FILENAME=l1", 1, "1");
    expect_get("/sts/LEASES?FILENAME=l1", 1, "1");
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=l1&LEASE=%s", id);
    expect_get(t, 1, "");
    expect_get("/sts/LEASES?FILENAME=l1", 1, "0");
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=l1&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    expect_get("/sts/LENGTH?FILENAME=l1", 1, "1");
    /* ACK by LINE settles the oldest lease of that line. */
    char id2[64], id3[64];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l1&LINE=b", 1, "");
    get_leased("/sts/READ?FILENAME=l1&KEEP=FALSE&LEASE=60", "b", id2, sizeof id2);
    get_leased("/sts/READ?FILENAME=l1&KEEP=FALSE&LEASE=60", "b", id3, sizeof id3);
    assert_string_not_equal(id2, id3);
    expect_get("/sts/ACK?FILENAME=l1&LINE=b", 1, "");
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=l1&LEASE=%s", id2);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    /* An id of another list, and garbage ids, settle nothing. */
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l1b&LINE=z", 1, "");
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=l1b&LEASE=%s", id3);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    expect_get("/sts/ACK?FILENAME=l1&LEASE=xyz", 0,
               "No such lease (settled already, expired, or of another list) !");
    expect_get("/sts/ACK?FILENAME=l1&LINE=nothere", 0,
               "No such lease (settled already, expired, or of another list) !");
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=l1&LEASE=%s", id3);
    expect_get(t, 1, "");
    expect_get("/sts/LEASES?FILENAME=l1", 1, "0");
    expect_get("/sts/LEASES?FILENAME=nolist", 0, "nolist not loaded yet !");
}

static void test_readmulti_and_find(void **state)
{
    char ids[256], t[320];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l2&LINE=x1", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l2&LINE=x2", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l2&LINE=y3", 1, "");
    http_reply r;
    assert_int_equal(http_get(d.port, "/sts/READMULTI?FILENAME=l2&NB_LINES=2&KEEP=FALSE&LEASE=60", &r), 0);
    assert_non_null(strstr(r.body, "x1<br />"));
    assert_int_equal(http_header(&r, "X-STS-Lease", ids, sizeof ids), 0);
    http_reply_free(&r);
    assert_int_equal(strlen(ids), 33);
    assert_int_equal(ids[16], ',');
    assert_true(is_id(ids, 16) && is_id(ids + 17, 16));
    expect_get("/sts/LEASES?FILENAME=l2", 1, "2");
    /* The second id is x2's: releasing it puts x2 back at the head. */
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=l2&LEASE=%s", ids + 17);
    expect_get(t, 1, "");
    expect_get("/sts/READ?FILENAME=l2", 1, "x2");
    char id[64];
    get_leased("/sts/FIND?FILENAME=l2&LINE=y&KEEP=FALSE&LEASE=60", "y3", id, sizeof id);
    expect_get("/sts/RELEASE?FILENAME=l2&LINE=y3", 1, "");
    expect_get("/sts/READ?FILENAME=l2&KEEP=TRUE", 1, "y3");
    expect_get("/sts/LEASES?FILENAME=l2", 1, "1");
}

static void test_expiry_back_to_head(void **state)
{
    char id[64];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l3&LINE=first", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l3&LINE=second", 1, "");
    get_leased("/sts/READ?FILENAME=l3&KEEP=FALSE&LEASE=1.5", "first", id, sizeof id);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_get("/sts/LENGTH?FILENAME=l3", 1, "1");
    td_sleep_ms(700);
    expect_get("/sts/LENGTH?FILENAME=l3", 1, "1");          /* not early */
    for (;;) {                                              /* not much late */
        http_reply r;
        assert_int_equal(http_get(d.port, "/sts/LENGTH?FILENAME=l3", &r), 0);
        int back = strstr(r.body, "<body>2</body>") != NULL;
        http_reply_free(&r);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (back)
            break;
        assert_true(ms < 3000);
        td_sleep_ms(20);
    }
    expect_get("/sts/LEASES?FILENAME=l3", 1, "0");
    expect_get("/sts/READ?FILENAME=l3", 1, "first");
    char t[256];
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=l3&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
}

static void test_bad_leases(void **state)
{
    const char *msg = "LEASE value has to be a number of seconds above 0 up to 3600 !";
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l4&LINE=only", 1, "");
    expect_get("/sts/READ?FILENAME=l4&KEEP=FALSE&LEASE=0", 0, msg);
    expect_get("/sts/READ?FILENAME=l4&KEEP=FALSE&LEASE=-1", 0, msg);
    expect_get("/sts/READ?FILENAME=l4&KEEP=FALSE&LEASE=abc", 0, msg);
    expect_get("/sts/READ?FILENAME=l4&KEEP=FALSE&LEASE=3601", 0, msg);
    expect_get("/sts/READ?FILENAME=l4&KEEP=FALSE&LEASE=NaN", 0, msg);
    expect_get("/sts/READ?FILENAME=l4&LEASE=10", 0, "LEASE needs KEEP=FALSE !");
    expect_get("/sts/READ?FILENAME=l4&KEEP=TRUE&LEASE=10", 0, "LEASE needs KEEP=FALSE !");
    expect_get("/sts/FIND?FILENAME=l4&LINE=o&LEASE=10", 0, "LEASE needs KEEP=FALSE !");
    /* The ids of more would not fit in the answer's header: refused before any is taken. */
    expect_get("/sts/READMULTI?FILENAME=l4&NB_LINES=1001&KEEP=FALSE&LEASE=10", 0,
               "LEASE takes at most 1000 lines at once !");
    expect_get("/sts/ACK?FILENAME=l4", 0, "LINE or LEASE parameter was missing !");
    expect_get("/sts/RELEASE?FILENAME=l4", 0, "LINE or LEASE parameter was missing !");
    expect_get("/sts/ACK?LINE=only", 0, "FILENAME parameter was missing !");
    expect_get("/sts/LENGTH?FILENAME=l4", 1, "1");
    expect_get("/sts/LEASES?FILENAME=l4", 1, "0");
}

static void test_reset_drops_leases(void **state)
{
    char id[64];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l5&LINE=a", 1, "");
    get_leased("/sts/READ?FILENAME=l5&KEEP=FALSE&LEASE=60", "a", id, sizeof id);
    expect_get("/sts/RESET?FILENAME=l5", 1, "");
    expect_get("/sts/LEASES?FILENAME=l5", 1, "0");
    char t[256];
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=l5&LEASE=%s", id);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    expect_get("/sts/LENGTH?FILENAME=l5", 1, "0");
}

static void test_release_feeds_waiter_with_lease(void **state)
{
    char id[64];
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=l6&LINE=job", 1, "");
    get_leased("/sts/READ?FILENAME=l6&KEEP=FALSE&LEASE=60", "job", id, sizeof id);
    http_conn c;
    assert_int_equal(http_conn_open(&c, d.port), 0);
    assert_int_equal(http_conn_send(&c, "/sts/READ?FILENAME=l6&KEEP=FALSE&TIMEOUT=10&LEASE=60"), 0);
    assert_false(http_conn_ready(&c, 200));
    char t[256];
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=l6&LEASE=%s", id);
    expect_get(t, 1, "");
    assert_true(http_conn_ready(&c, 1000));
    http_reply r;
    assert_int_equal(http_conn_recv(&c, &r), 0);
    expect_page(&r, 1, "job");
    char id2[64];
    assert_int_equal(http_header(&r, "X-STS-Lease", id2, sizeof id2), 0);
    assert_true(is_id(id2, strlen(id2)));
    assert_string_not_equal(id, id2);
    http_reply_free(&r);
    http_conn_close(&c);
    expect_get("/sts/LEASES?FILENAME=l6", 1, "1");
}

/* After kill -9 with fsync=always: an ACKed line never comes back, an open lease keeps
 * its deadline, a lease whose deadline passed while stsd was down is back at start. */
static void test_leases_across_kill9(void **state)
{
    daemon_proc d2;
    char so[400], t[256], ida[64], idb[64], idc[64];
    assert_int_equal(td_mkdirs(&d2), 0);
    snprintf(so, sizeof so, "--state-dir=%s/state", d2.dir);
    const char *args[] = {"--journal=on", "-Dstsd.journal.fsync=always", so, NULL};
    assert_int_equal(td_start(&d2, args), 0);
    int port = d.port;
    d.port = d2.port;
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=k&LINE=a", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=k&LINE=b", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=k&LINE=c", 1, "");
    expect_get("/sts/ADD?ADD_MODE=LAST&FILENAME=k&LINE=d", 1, "");
    get_leased("/sts/READ?FILENAME=k&KEEP=FALSE&LEASE=3", "a", ida, sizeof ida);
    get_leased("/sts/READ?FILENAME=k&KEEP=FALSE&LEASE=60", "b", idb, sizeof idb);
    get_leased("/sts/READ?FILENAME=k&KEEP=FALSE&LEASE=60", "c", idc, sizeof idc);
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=k&LEASE=%s", idb);
    expect_get(t, 1, "");
    assert_int_equal(td_stop(&d2, 1), 128 + SIGKILL);
    td_sleep_ms(3200);                          /* a's lease ends while stsd is down */
    assert_int_equal(td_start(&d2, args), 0);
    d.port = d2.port;
    td_sleep_ms(300);                           /* the lease timer's first round */
    expect_get("/sts/LEASES?FILENAME=k", 1, "1");
    expect_get("/sts/LENGTH?FILENAME=k", 1, "2");
    expect_get("/sts/READ?FILENAME=k", 1, "a");             /* back at the head */
    snprintf(t, sizeof t, "/sts/ACK?FILENAME=k&LEASE=%s", idb);
    expect_get(t, 0, "No such lease (settled already, expired, or of another list) !");
    snprintf(t, sizeof t, "/sts/RELEASE?FILENAME=k&LEASE=%s", idc);
    expect_get(t, 1, "");                                    /* c's lease survived */
    expect_get("/sts/READ?FILENAME=k", 1, "c");
    expect_get("/sts/LENGTH?FILENAME=k", 1, "3");
    d.port = port;
    td_stop(&d2, 0);
    td_cleanup(&d2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lease_ack),
        cmocka_unit_test(test_readmulti_and_find),
        cmocka_unit_test(test_expiry_back_to_head),
        cmocka_unit_test(test_bad_leases),
        cmocka_unit_test(test_reset_drops_leases),
        cmocka_unit_test(test_release_feeds_waiter_with_lease),
        cmocka_unit_test(test_leases_across_kill9),
    };
    return cmocka_run_group_tests(tests, setup, td_teardown_state);
}
