/* SPDX-License-Identifier: Apache-2.0 */
/* expect.h - assertions the protocol tests share: an answer is exactly an STS page.
 * Include after <cmocka.h> and "testlib.h". */
#ifndef STSD_TEST_EXPECT_H
#define STSD_TEST_EXPECT_H

/* Fails the test unless r is 200 with exactly the OK (ok) or the KO page of text. */
static inline void expect_page(const http_reply *r, int ok, const char *text)
{
    char want[4096];
    if (ok)
        page_ok(want, sizeof want, text);
    else
        page_ko(want, sizeof want, text);
    assert_int_equal(r->status, 200);
    if (strcmp(r->body, want) != 0)
        fail_msg("want: %s\ngot:  %s", want, r->body);
}

/* GET target on port: fails the test unless the answer is exactly the OK/KO page of text. */
static inline void expect_get_page(int port, const char *target, int ok, const char *text)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    expect_page(&r, ok, text);
    http_reply_free(&r);
}

/* GET target on port: fails the test unless the answer has status and exactly body. */
static inline void expect_get_json(int port, const char *target, int status, const char *body)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    assert_int_equal(r.status, status);
    if (strcmp(r.body, body) != 0)
        fail_msg("%s\nwant: %s\ngot:  %s", target, body, r.body);
    http_reply_free(&r);
}

#endif
