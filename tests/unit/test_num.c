/* SPDX-License-Identifier: Apache-2.0 */
/* test_num.c - unit tests of the strict decimal parsers (base/num). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/num.h"

#define S(text) text, strlen(text)

static void u64_is(const char *s, uint64_t min, uint64_t max, int rc, uint64_t want)
{
    uint64_t v = 12345;
    if (num_parse_u64(s, strlen(s), min, max, &v) != rc)
        fail_msg("num_parse_u64(\"%s\", %ju..%ju) is not %d", s, (uintmax_t)min, (uintmax_t)max, rc);
    assert_true(v == (rc == 0 ? want : 12345));   /* untouched on error */
}

static void test_u64(void **state)
{
    u64_is("0", 0, 10, 0, 0);
    u64_is("10", 0, 10, 0, 10);
    u64_is("007", 0, 10, 0, 7);                 /* decimal, not octal */
    u64_is("18446744073709551615", 0, UINT64_MAX, 0, UINT64_MAX);
    const char *bad[] = {"", " 1", "1 ", "+1", "-1", "1x", "x1", "0x10", "1e3", "1.0", "1,0",
                         "\xd9\xa1" /* Arabic-Indic one */};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        u64_is(bad[i], 0, UINT64_MAX, NUM_EINVAL, 0);
    u64_is("11", 0, 10, NUM_ERANGE, 0);
    u64_is("4", 5, 10, NUM_ERANGE, 0);
    u64_is("18446744073709551616", 0, UINT64_MAX, NUM_ERANGE, 0);
    u64_is("99999999999999999999999999999999", 0, UINT64_MAX, NUM_ERANGE, 0);
    /* Every byte is looked at, even past an overflow. */
    u64_is("99999999999999999999999x", 0, UINT64_MAX, NUM_EINVAL, 0);

    /* len bytes, not up to a NUL: "123" of "12345". */
    uint64_t v;
    assert_int_equal(num_parse_u64("12345", 3, 0, 1000, &v), 0);
    assert_true(v == 123);
    assert_int_equal(num_parse_u64("12\0" "3", 4, 0, 1000, &v), NUM_EINVAL);
    assert_int_equal(num_parse_u64(NULL, 0, 0, 1, &v), NUM_EINVAL);
}

static void i64_is(const char *s, int64_t min, int64_t max, int rc, int64_t want)
{
    int64_t v = 12345;
    if (num_parse_i64(s, strlen(s), min, max, &v) != rc)
        fail_msg("num_parse_i64(\"%s\") is not %d", s, rc);
    assert_true(v == (rc == 0 ? want : 12345));
}

static void test_i64(void **state)
{
    i64_is("5", -10, 10, 0, 5);
    i64_is("+5", -10, 10, 0, 5);
    i64_is("-5", -10, 10, 0, -5);
    i64_is("-0", -10, 10, 0, 0);
    i64_is("9223372036854775807", INT64_MIN, INT64_MAX, 0, INT64_MAX);
    i64_is("-9223372036854775808", INT64_MIN, INT64_MAX, 0, INT64_MIN);
    i64_is("9223372036854775808", INT64_MIN, INT64_MAX, NUM_ERANGE, 0);
    i64_is("-9223372036854775809", INT64_MIN, INT64_MAX, NUM_ERANGE, 0);
    i64_is("-11", -10, 10, NUM_ERANGE, 0);
    i64_is("-1", 0, 10, NUM_ERANGE, 0);
    const char *bad[] = {"", "+", "-", "--1", "+-1", "-+1", " -1", "- 1", "1-", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        i64_is(bad[i], INT64_MIN, INT64_MAX, NUM_EINVAL, 0);
}

/* As Java's Integer.parseInt: NB_LINES and the like. */
static void test_int32(void **state)
{
    int32_t v = 0;
    assert_int_equal(num_parse_int32(S("2147483647"), &v), 0);
    assert_int_equal(v, INT32_MAX);
    assert_int_equal(num_parse_int32(S("-2147483648"), &v), 0);
    assert_int_equal(v, INT32_MIN);
    assert_int_equal(num_parse_int32(S("+42"), &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(num_parse_int32(S("00000000000000000000001"), &v), 0);   /* zeros are free */
    assert_int_equal(v, 1);
    assert_int_equal(num_parse_int32(S("2147483648"), &v), NUM_ERANGE);
    assert_int_equal(num_parse_int32(S("-2147483649"), &v), NUM_ERANGE);
    assert_int_equal(num_parse_int32(S("1.5"), &v), NUM_EINVAL);
    assert_int_equal(num_parse_int32(S(""), &v), NUM_EINVAL);
    assert_int_equal(num_parse_int32(S("-"), &v), NUM_EINVAL);
    assert_int_equal(v, 1);
}

static void seconds_is(const char *s, int64_t max_s, int rc, int64_t want)
{
    int64_t ms = -7;
    if (num_parse_seconds_ms(s, strlen(s), max_s, &ms) != rc)
        fail_msg("num_parse_seconds_ms(\"%s\", %jd) is not %d", s, (intmax_t)max_s, rc);
    assert_true(ms == (rc == 0 ? want : -7));
}

/* As TIMEOUT=: decimal seconds into milliseconds, at most max_s. */
static void test_seconds(void **state)
{
    seconds_is("0", 60, 0, 0);
    seconds_is("5", 60, 0, 5000);
    seconds_is("0.25", 60, 0, 250);
    seconds_is(".5", 60, 0, 500);
    seconds_is("2.", 60, 0, 2000);
    seconds_is("1.2345", 60, 0, 1234);            /* past milliseconds: dropped */
    seconds_is("60", 60, 0, 60000);
    seconds_is("60.000", 60, 0, 60000);
    seconds_is("60.0001", 60, 0, 60000);          /* rounds down to max */
    seconds_is("60.001", 60, NUM_ERANGE, 0);
    seconds_is("61", 60, NUM_ERANGE, 0);
    seconds_is("99999999999999999999999", 60, NUM_ERANGE, 0);
    seconds_is("9223372036854775807", INT64_MAX, NUM_ERANGE, 0);
    seconds_is("0", 0, 0, 0);
    const char *bad[] = {"", ".", "-1", "+1", "1..5", "1.5.", "1 ", " 1", "1s", "1e3", "..5",
                         "99999999999999999999999x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        seconds_is(bad[i], 60, NUM_EINVAL, 0);
}

static void size_is(const char *s, uint64_t min, uint64_t max, int rc, uint64_t want)
{
    uint64_t v = 3;
    if (num_parse_size(s, strlen(s), min, max, &v) != rc)
        fail_msg("num_parse_size(\"%s\") is not %d", s, rc);
    assert_true(v == (rc == 0 ? want : 3));
}

static void test_size(void **state)
{
    size_is("0", 0, UINT64_MAX, 0, 0);
    size_is("1500", 0, UINT64_MAX, 0, 1500);
    size_is("2k", 0, UINT64_MAX, 0, 2048);
    size_is("3M", 0, UINT64_MAX, 0, 3u << 20);
    size_is("1g", 0, UINT64_MAX, 0, 1u << 30);
    size_is("16777215G", 0, UINT64_MAX, 0, 16777215ULL << 30);
    size_is("17179869184G", 0, UINT64_MAX, NUM_ERANGE, 0);   /* 2^64 bytes */
    size_is("1023", 1024, 1u << 30, NUM_ERANGE, 0);
    size_is("2G", 1024, 1u << 30, NUM_ERANGE, 0);
    const char *bad[] = {"", "M", "16MB", "1.5M", "1 M", "-1", "+1K", "K1", "1KK", "1T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        size_is(bad[i], 0, UINT64_MAX, NUM_EINVAL, 0);
}

static void test_size_text(void **state)
{
    const struct { uint64_t v; const char *text; } cases[] = {
        {0, "0"}, {1, "1"}, {1023, "1023"}, {1024, "1K"}, {1536, "1536"}, {16u << 20, "16M"},
        {1u << 30, "1G"}, {1025ULL << 30, "1025G"}, {UINT64_MAX, "18446744073709551615"}};
    char out[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        num_size_text(out, sizeof out, cases[i].v);
        assert_string_equal(out, cases[i].text);
        uint64_t back;
        assert_int_equal(num_parse_size(out, strlen(out), 0, UINT64_MAX, &back), 0);
        assert_true(back == cases[i].v);
    }
    num_size_text(out, 3, 123456);
    assert_string_equal(out, "12");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_u64),
        cmocka_unit_test(test_i64),
        cmocka_unit_test(test_int32),
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_size_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
