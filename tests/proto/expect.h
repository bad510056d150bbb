/* SPDX-License-Identifier: Apache-2.0 */
/* expect.h - assertions the protocol tests share: an answer is exactly an STS page.
 * Include after <cmocka.h> and "testlib.h". */
#include "cmd/command.h"
#ifndef STSD_TEST_EXPECT_H
#define STSD_TEST_EXPECT_H

/* The HTTP status of an HTML KO of the command target names ("/sts/NAME?..."), as
 * the command table says (stsd.koStatus off): 200 for the reference's 11 and for no
 * command; else 0, meaning an error status (400 to 599): its JSON answer's, which
 * test_answers checks command by command. */
static inline int expect_ko_status(const char *target)
{
    size_t len = strcspn(target, "?");
    const cmd_def *c = command_of_path(target, len);
    return !c || (c->flags & CMD_REF) ? 200 : 0;
}

/* Fails the test unless r is exactly the OK (ok) or the KO page of text of the command
 * target names: 200 for an OK, expect_ko_status for a KO. */
static inline void expect_page_of(const char *target, const http_reply *r, int ok,
                                  const char *text)
{
    char want[4096];
    if (ok)
        page_ok(want, sizeof want, text);
    else
        page_ko(want, sizeof want, text);
    int status = ok ? 200 : expect_ko_status(target);
    if (status)
        assert_int_equal(r->status, status);
    else if (r->status < 400 || r->status > 599)
        fail_msg("%s: a KO with HTTP %d, not an error status", target, r->status);
    if (strcmp(r->body, want) != 0)
        fail_msg("want: %s\ngot:  %s", want, r->body);
}

/* The same for a command of the reference (a KO is 200) or an OK. */
static inline void expect_page(const http_reply *r, int ok, const char *text)
{
    expect_page_of("/sts/READ", r, ok, text);
}

/* GET target on port: fails the test unless the answer is exactly the OK/KO page of text. */
static inline void expect_get_page(int port, const char *target, int ok, const char *text)
{
    http_reply r;
    assert_int_equal(http_get(port, target, &r), 0);
    expect_page_of(target, &r, ok, text);
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
