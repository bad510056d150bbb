/* SPDX-License-Identifier: Apache-2.0 */
/* test_accept.c - the Accept header weighed as RFC 9110 says: media ranges, specificity,
 * q, and malformed ranges left out; JSON only when it is strictly preferred. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "http/accept.h"

static void test_weights(void **state)
{
    assert_int_equal(accept_weight(NULL, "text", "html"), 0);
    assert_int_equal(accept_weight("", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html", "text", "html"), 1000);
    assert_int_equal(accept_weight("TEXT/Html", "text", "html"), 1000);
    assert_int_equal(accept_weight("text/html;q=0.5", "text", "html"), 500);
    assert_int_equal(accept_weight("text/html ; Q=0.25 ", "text", "html"), 250);
    assert_int_equal(accept_weight("text/html;q=1.000", "text", "html"), 1000);
    assert_int_equal(accept_weight("text/html;q=0", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=0.001", "text", "html"), 1);
    /* The most specific range wins, whatever its q. */
    assert_int_equal(accept_weight("*/*;q=0.9, text/*;q=0.2", "text", "html"), 200);
    assert_int_equal(accept_weight("text/*;q=0.2, text/html;q=0.7, */*", "text", "html"), 700);
    assert_int_equal(accept_weight("*/*;q=0.3", "application", "json"), 300);
    assert_int_equal(accept_weight("text/*", "application", "json"), 0);
    assert_int_equal(accept_weight("text/plain", "text", "html"), 0);
    /* Equally specific: the higher q. */
    assert_int_equal(accept_weight("text/html;level=1;q=0.2, text/html;q=0.6", "text", "html"),
                     600);
    /* Other parameters, quoted commas included, do not change the range. */
    assert_int_equal(accept_weight("text/html;foo=\"a,b;q=0\";q=0.4", "text", "html"), 400);
}

static void test_malformed(void **state)
{
    /* A q that is not an RFC qvalue: the range is ignored, the others count. */
    assert_int_equal(accept_weight("text/html;q=2", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=abc, */*;q=0.1", "text", "html"), 100);
    assert_int_equal(accept_weight("text/html;q=0.1234", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=1.5", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=-1", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=.5", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;q=1.", "text", "html"), 1000);
    /* No subtype, a star type with a subtype, a parameter without '=', junk, an
     * unclosed quote (which also ends the header). */
    assert_int_equal(accept_weight("text", "text", "html"), 0);
    assert_int_equal(accept_weight("*/html", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html;level", "text", "html"), 0);
    assert_int_equal(accept_weight("text/html junk, text/*;q=0.3", "text", "html"), 300);
    assert_int_equal(accept_weight("text/*;q=0.3, text/html;x=\"open, text/html", "text",
                                   "html"), 300);
    assert_int_equal(accept_weight(",, ,text/html,", "text", "html"), 1000);
    assert_int_equal(accept_weight("@@@", "text", "html"), 0);
}

static void test_prefers_json(void **state)
{
    assert_false(accept_prefers_json(NULL));
    assert_false(accept_prefers_json(""));
    assert_true(accept_prefers_json("application/json"));
    assert_true(accept_prefers_json("Application/JSON"));
    assert_true(accept_prefers_json("text/html;q=0.5, application/json"));
    assert_true(accept_prefers_json("application/json, */*;q=0.8"));
    assert_true(accept_prefers_json("application/*, text/html;q=0.9"));
    assert_false(accept_prefers_json("application/json;q=0.1, text/html"));
    assert_false(accept_prefers_json("*/*"));
    assert_false(accept_prefers_json("application/json, */*"));
    assert_false(accept_prefers_json("application/json, text/plain, */*"));
    assert_false(accept_prefers_json("text/html"));
    assert_false(accept_prefers_json("text/html, application/json"));
    assert_false(accept_prefers_json("application/json;q=0"));
    assert_false(accept_prefers_json("application/json;q=0.5, text/*;q=0.5"));
    assert_false(accept_prefers_json("application/json;q=oops"));
    assert_false(accept_prefers_json("text/html,application/xhtml+xml,application/xml;q=0.9,"
                                     "*/*;q=0.8"));
}

/* Random headers, mostly made of the bytes the parser cares about, each in a buffer of
 * its exact size (ASan sees a read past the NUL): every weight is a q (0 to 1000), and
 * prefers_json agrees with the two weights. Bounded and seeded: the same run each time. */
static void test_random_bytes(void **state)
{
    (void)state;
    static const char alphabet[] = "application/json text/html*;,=q\"\\ \t.019";
    unsigned seed = 32;
    for (int round = 0; round < 200000; round++) {
        size_t len = (size_t)(rand_r(&seed) % 48);
        char *h = malloc(len + 1);
        assert_non_null(h);
        for (size_t i = 0; i < len; i++) {
            int r = rand_r(&seed);
            h[i] = r % 4 ? alphabet[(r >> 2) % (sizeof alphabet - 1)] : (char)(r >> 8);
            if (!h[i])
                h[i] = ',';
        }
        h[len] = '\0';
        int j = accept_weight(h, "application", "json"), t = accept_weight(h, "text", "html");
        assert_in_range(j, 0, 1000);
        assert_in_range(t, 0, 1000);
        assert_int_equal(accept_prefers_json(h), j > t);
        free(h);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weights),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_prefers_json),
        cmocka_unit_test(test_random_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
