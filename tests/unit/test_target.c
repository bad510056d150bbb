/* SPDX-License-Identifier: Apache-2.0 */
/* test_target.c - absolute-form request targets reduced to their origin form, and the
 * malformed ones refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http/target.h"

/* target_origin on t: its return, and *off / *empty_path. */
static int origin(const char *t, size_t *off, int *empty)
{
    return target_origin(t, strlen(t), off, empty);
}

static void expect_origin(const char *t, const char *want, int want_empty)
{
    size_t off;
    int empty;
    assert_int_equal(origin(t, &off, &empty), 0);
    assert_string_equal(t + off, want);
    assert_int_equal(empty, want_empty);
}

static void expect_bad(const char *t)
{
    size_t off;
    int empty;
    if (origin(t, &off, &empty) != -1)
        fail_msg("%s: not refused", t);
}

static void test_origin_form_untouched(void **state)
{
    expect_origin("/sts/LENGTH?FILENAME=x", "/sts/LENGTH?FILENAME=x", 0);
    expect_origin("/", "/", 0);
    expect_origin("", "", 0);
    expect_origin("*", "*", 0);
    expect_origin("sts/READ", "sts/READ", 0);     /* no scheme: the routes decide */
    expect_origin("/http://x/sts/READ", "/http://x/sts/READ", 0);
}

static void test_absolute_form(void **state)
{
    expect_origin("http://host:9191/sts/LENGTH?FILENAME=x", "/sts/LENGTH?FILENAME=x", 0);
    expect_origin("HTTPS://any-host/metrics", "/metrics", 0);
    expect_origin("hTtP://127.0.0.1:1/ui/app.js", "/ui/app.js", 0);
    expect_origin("http://[::1]:9191/sts/", "/sts/", 0);
    expect_origin("http://h/", "/", 0);
    expect_origin("http://h:9191", "", 1);
    expect_origin("http://h?x=1", "?x=1", 1);
    expect_origin("http://a%41b!$&'()*+,;=.-_~/sts/READ", "/sts/READ", 0);
}

static void test_malformed(void **state)
{
    expect_bad("http://");
    expect_bad("http:///sts/READ");
    expect_bad("http:/x");
    expect_bad("http:x/sts/READ");
    expect_bad("http:");
    expect_bad("ftp://host/sts/READ");
    expect_bad("httpx://host/sts/READ");
    expect_bad("localhost:9191");
    expect_bad("http://user:pw@host/sts/READ");
    expect_bad("http://ho st/sts/READ");
    expect_bad("http://host#frag/sts/READ");
    expect_bad("http://ho\"st/");
}

/* Random targets, mostly of the bytes the parser looks at, each in a buffer of its exact
 * size with no NUL (ASan sees a read past len): the result is 0 or -1, an origin form
 * found starts at '/' or '?' or is empty, and only an empty path says empty_path. */
static void test_random_bytes(void **state)
{
    (void)state;
    static const char alphabet[] = "hHtTpPsS:/?@[]%.-+#xX09 ";
    unsigned seed = 32;
    for (int round = 0; round < 200000; round++) {
        size_t len = (size_t)(rand_r(&seed) % 40), off = 99;
        char *t = malloc(len ? len : 1);
        assert_non_null(t);
        for (size_t i = 0; i < len; i++) {
            int r = rand_r(&seed);
            t[i] = r % 4 ? alphabet[(r >> 2) % (sizeof alphabet - 1)] : (char)(r >> 8);
        }
        if (len > 7 && rand_r(&seed) % 2)
            memcpy(t, "http://", 7);
        int empty = -1, rc = target_origin(t, len, &off, &empty);
        assert_true(rc == 0 || rc == -1);
        if (rc == 0) {
            assert_true(off <= len);
            assert_true(off == 0 || off == len || t[off] == '/' || t[off] == '?');
            assert_int_equal(empty, off > 0 && (off == len || t[off] == '?'));
        }
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_origin_form_untouched),
        cmocka_unit_test(test_absolute_form),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
