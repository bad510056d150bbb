/* expect.h - an assertion the protocol tests share: an answer is exactly an STS page.
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

#endif
