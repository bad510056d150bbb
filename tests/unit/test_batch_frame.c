/* SPDX-License-Identifier: Apache-2.0 */
/* test_batch_frame.c - a batch's bytes: requests and answers written and read back, and
 * every malformed or cut-short batch refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/batch_frame.h"

static void header(buf *h, const char *name, const char *value)
{
    buf_append(h, name, strlen(name) + 1);
    buf_append(h, value, strlen(value) + 1);
}

/* Two requests: a GET with headers, a POST whose body holds NULs. */
static void two_requests(buf *b)
{
    buf h = BUF_INIT;
    header(&h, "Accept", "application/json");
    header(&h, "Authorization", "Bearer t");
    frame_begin(b, 2);
    frame_put_request(b, "GET", "/sts/ADD?FILENAME=a&LINE=x", 26, &h, NULL, 0);
    frame_put_request(b, "POST", "/sts/ADD", 8, NULL, "L\0INE=\0y", 8);
    buf_free(&h);
}

static void test_requests_round_trip(void **state)
{
    buf b = BUF_INIT;
    two_requests(&b);
    size_t count, off;
    frame_item it;
    assert_int_equal(frame_head(b.data, b.len, &count, &off), 0);
    assert_int_equal(count, 2);
    assert_int_equal(frame_next(b.data, b.len, &off, 1, &it), 0);
    assert_string_equal(it.method, "GET");
    assert_string_equal(it.target, "/sts/ADD?FILENAME=a&LINE=x");
    assert_int_equal(it.headers_len, sizeof "Accept\0application/json\0Authorization\0Bearer t");
    assert_memory_equal(it.headers, "Accept\0application/json\0Authorization\0Bearer t\0",
                        it.headers_len);
    assert_int_equal(it.body_len, 0);
    assert_int_equal(frame_next(b.data, b.len, &off, 1, &it), 0);
    assert_string_equal(it.method, "POST");
    assert_int_equal(it.target_len, 8);
    assert_int_equal(it.headers_len, 0);
    assert_int_equal(it.body_len, 8);
    assert_memory_equal(it.body, "L\0INE=\0y", 8);
    assert_int_equal(off, b.len);
    /* Past the last: nothing more to read. */
    assert_int_equal(frame_next(b.data, b.len, &off, 1, &it), -1);
    buf_free(&b);
}

static void test_answers_round_trip(void **state)
{
    buf b = BUF_INIT, h = BUF_INIT;
    header(&h, "Content-Type", "text/html");
    frame_begin(&b, 2);
    frame_put_answer(&b, 200, &h, "<html>OK</html>", 15);
    frame_put_answer(&b, 503, NULL, "", 0);
    size_t count, off;
    frame_item it;
    assert_int_equal(frame_head(b.data, b.len, &count, &off), 0);
    assert_int_equal(count, 2);
    assert_int_equal(frame_next(b.data, b.len, &off, 0, &it), 0);
    assert_int_equal(it.status, 200);
    assert_null(it.method);
    assert_memory_equal(it.headers, "Content-Type\0text/html\0", it.headers_len);
    assert_memory_equal(it.body, "<html>OK</html>", it.body_len);
    assert_int_equal(frame_next(b.data, b.len, &off, 0, &it), 0);
    assert_int_equal(it.status, 503);
    assert_int_equal(it.body_len, 0);
    assert_int_equal(off, b.len);
    buf_free(&b);
    buf_free(&h);
}

/* Every strict prefix of a good batch is refused somewhere before its end. */
static void test_cut_short_refused(void **state)
{
    buf b = BUF_INIT;
    two_requests(&b);
    for (size_t len = 0; len < b.len; len++) {
        size_t count, off;
        frame_item it;
        int ok = frame_head(b.data, len, &count, &off) == 0;
        for (size_t i = 0; ok && i < count; i++)
            ok = frame_next(b.data, len, &off, 1, &it) == 0;
        if (ok)
            fail_msg("a batch cut to %zu of its %zu bytes was read whole", len, b.len);
    }
    buf_free(&b);
}

static void expect_bad_head(const char *p, size_t len)
{
    size_t count, off;
    if (frame_head(p, len, &count, &off) != -1)
        fail_msg("head %.*s not refused", (int)len, p);
}

static void test_bad_heads(void **state)
{
    expect_bad_head("STSB1\0" "0\0", 8);            /* no request */
    expect_bad_head("STSB1\0" "65\0", 9);           /* over BATCH_MAX */
    expect_bad_head("STSB2\0" "1\0", 8);            /* another magic */
    expect_bad_head("STSB1\0" "x\0", 8);
    expect_bad_head("STSB1\0" "\0", 7);             /* an empty count */
    expect_bad_head("STSB1\0" "1", 7);              /* no NUL after it */
    expect_bad_head("STSB1", 5);
    expect_bad_head("", 0);
}

static void expect_bad_item(const char *p, size_t len, int request)
{
    size_t off = 0;
    frame_item it;
    if (frame_next(p, len, &off, request, &it) != -1)
        fail_msg("item not refused");
}

static void test_bad_items(void **state)
{
    expect_bad_item("\0/x\0\0" "0\0", 8, 1);          /* no method */
    expect_bad_item("GET\0\0\0" "0\0", 8, 1);         /* no target */
    expect_bad_item("GET\0/x\0\0" "5\0abc", 14, 1);   /* a body longer than the rest */
    expect_bad_item("GET\0/x\0\0" "-1\0", 11, 1);     /* a negative length */
    expect_bad_item("GET\0/x\0A\0", 9, 1);            /* a header without its end */
    expect_bad_item("99\0\0" "0\0", 6, 0);            /* no such status */
    expect_bad_item("1000\0\0" "0\0", 8, 0);
    expect_bad_item("2x0\0\0" "0\0", 7, 0);
}

/* What a follower takes for "none of the batch ran" (retry elsewhere) and what for an
 * outcome unknown: only the refusals made before anything runs are the first. */
static void test_refusals(void **state)
{
    static const char stopping[] = BATCH_STOPPING_TEXT, oom[] = "503 out of memory\n";
    static const char late[] = BATCH_LATE_TEXT;
    static const long before[] = {400, 403, 404, 405, 413, 415};
    static const long after[] = {200, 500, 502, 504, 429, 401, 0};
    (void)state;
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++)
        assert_true(frame_refused(before[i], "", 0));
    for (size_t i = 0; i < sizeof after / sizeof after[0]; i++)
        assert_false(frame_refused(after[i], stopping, sizeof stopping - 1));
    /* A leader stopping ran nothing; out of memory may come after the requests ran. */
    assert_true(frame_refused(503, stopping, sizeof stopping - 1));
    assert_false(frame_refused(503, oom, sizeof oom - 1));
    assert_false(frame_refused(503, stopping, sizeof stopping - 2));
    assert_false(frame_refused(503, "", 0));
    /* Refused as late (past stsd.cluster.forwardWithin): nothing ran, whatever else. */
    assert_true(frame_refused(503, late, sizeof late - 1));
    assert_false(frame_refused(503, late, sizeof late - 2));
    for (size_t i = 0; i < sizeof after / sizeof after[0]; i++)
        assert_false(frame_refused(after[i], late, sizeof late - 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_round_trip),
        cmocka_unit_test(test_answers_round_trip),
        cmocka_unit_test(test_cut_short_refused),
        cmocka_unit_test(test_bad_heads),
        cmocka_unit_test(test_bad_items),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
