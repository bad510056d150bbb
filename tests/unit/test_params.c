/* SPDX-License-Identifier: Apache-2.0 */
/* test_params.c - form decoding: percent escapes, '+', urlencoded pairs, multipart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cmd/params.h"

static void assert_value(const params *p, param_id id, const char *want, size_t want_len)
{
    size_t len;
    const char *v = params_get(p, id, &len);
    assert_non_null(v);
    assert_int_equal(len, want_len);
    assert_memory_equal(v, want, want_len);
}

static void test_decode(void **state)
{
    buf b = BUF_INIT;
    assert_int_equal(params_decode("a+b%2Bc%41%7e", 13, &b), PARAMS_OK);
    assert_string_equal(b.data, "a b+cA~");
    buf_clear(&b);
    assert_int_equal(params_decode("%C3%A9%e2%82%ac", 15, &b), PARAMS_OK);
    assert_string_equal(b.data, "\xc3\xa9\xe2\x82\xac");
    buf_clear(&b);
    assert_int_equal(params_decode("x%00y", 5, &b), PARAMS_OK);
    assert_int_equal(b.len, 3);
    assert_memory_equal(b.data, "x\0y", 3);
    const char *bad[] = {"%", "%4", "%G1", "a%zz", "%%41", "abc%"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&b);
        assert_int_equal(params_decode(bad[i], strlen(bad[i]), &b), PARAMS_BAD_ESCAPE);
    }
    buf_free(&b);
}

static void test_urlencoded(void **state)
{
    params p = {0};
    const char *q = "FILENAME=logins.csv&LINE=plus+sign%2Bpct&UNKNOWN=1&KEEP=FALSE&LINE=second";
    assert_int_equal(params_parse_urlencoded(&p, q, strlen(q)), PARAMS_OK);
    assert_value(&p, PARAM_FILENAME, "logins.csv", 10);
    assert_value(&p, PARAM_LINE, "plus sign+pct", 13);   /* the first value wins */
    assert_value(&p, PARAM_KEEP, "FALSE", 5);
    assert_null(params_get(&p, PARAM_READ_MODE, NULL));
    params_free(&p);
}

static void test_urlencoded_edges(void **state)
{
    params p = {0};
    const char *q = "LINE=&&=x&FILENAME&NB_LINES=a=b&FIND%5FMODE=EQUALS";
    assert_int_equal(params_parse_urlencoded(&p, q, strlen(q)), PARAMS_OK);
    assert_value(&p, PARAM_LINE, "", 0);              /* empty, but present */
    assert_value(&p, PARAM_FILENAME, "", 0);          /* a name without '=' */
    assert_value(&p, PARAM_NB_LINES, "a=b", 3);
    assert_value(&p, PARAM_FIND_MODE, "EQUALS", 6);   /* names are decoded too */
    params_reset(&p);
    assert_null(params_get(&p, PARAM_LINE, NULL));
    const char *bad = "FILENAME=a%2";
    assert_int_equal(params_parse_urlencoded(&p, bad, strlen(bad)), PARAMS_BAD_ESCAPE);
    params_free(&p);
}

static void test_multipart(void **state)
{
    params p = {0};
    const char *ctype = "multipart/form-data; boundary=XyZ";
    const char body[] = "--XyZ\r\nContent-Disposition: form-data; name=\"FILENAME\"\r\n\r\n"
                        "new.csv\r\n"
                        "--XyZ\r\nContent-Disposition: form-data; name=\"LINE\"\r\n"
                        "Content-Type: text/plain\r\n\r\nmulti;1\r\nline two\r\n"
                        "--XyZ\r\nContent-Disposition: form-data; name=\"KEEP\"\r\n\r\n\r\n"
                        "--XyZ--\r\n";
    assert_int_equal(params_parse_body(&p, ctype, body, sizeof body - 1), PARAMS_OK);
    assert_value(&p, PARAM_FILENAME, "new.csv", 7);
    assert_value(&p, PARAM_LINE, "multi;1\r\nline two", 17);   /* raw, not decoded */
    assert_value(&p, PARAM_KEEP, "", 0);
    params_free(&p);
}

static void test_multipart_quoted_boundary_and_errors(void **state)
{
    params p = {0};
    const char body[] = "--a b\r\nContent-Disposition: form-data; name=LINE\r\n\r\nv%41+\r\n--a b--";
    assert_int_equal(params_parse_multipart(&p, "multipart/form-data; boundary=\"a b\"", body,
                                            sizeof body - 1), PARAMS_OK);
    assert_value(&p, PARAM_LINE, "v%41+", 5);
    params_reset(&p);
    assert_int_equal(params_parse_multipart(&p, "multipart/form-data", body, sizeof body - 1),
                     PARAMS_BAD_BODY);
    const char torn[] = "--a b\r\nContent-Disposition: form-data; name=LINE\r\n\r\nno end";
    assert_int_equal(params_parse_multipart(&p, "multipart/form-data; boundary=\"a b\"", torn,
                                            sizeof torn - 1), PARAMS_BAD_BODY);
    params_free(&p);
}

static void test_body_types(void **state)
{
    params p = {0};
    assert_int_equal(params_parse_body(&p, "application/x-www-form-urlencoded; charset=UTF-8",
                                       "LINE=a+b", 8), PARAMS_OK);
    assert_value(&p, PARAM_LINE, "a b", 3);
    params_reset(&p);
    assert_int_equal(params_parse_body(&p, "text/plain", "LINE=a", 6), PARAMS_OK);
    assert_null(params_get(&p, PARAM_LINE, NULL));
    assert_int_equal(params_parse_body(&p, NULL, "LINE=a", 6), PARAMS_OK);
    assert_null(params_get(&p, PARAM_LINE, NULL));
    params_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_urlencoded),
        cmocka_unit_test(test_urlencoded_edges),
        cmocka_unit_test(test_multipart),
        cmocka_unit_test(test_multipart_quoted_boundary_and_errors),
        cmocka_unit_test(test_body_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
