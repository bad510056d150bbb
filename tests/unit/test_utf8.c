/* SPDX-License-Identifier: Apache-2.0 */
/* test_utf8.c - UTF-8 lead lengths, sequences and validation, at the edges of each range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/utf8.h"

static void test_lead_len(void **state)
{
    (void)state;
    assert_int_equal(utf8_lead_len('a'), 1);
    assert_int_equal(utf8_lead_len(0x00), 1);
    assert_int_equal(utf8_lead_len(0x80), 1);       /* continuation */
    assert_int_equal(utf8_lead_len(0xbf), 1);
    assert_int_equal(utf8_lead_len(0xc0), 1);       /* only ever overlong */
    assert_int_equal(utf8_lead_len(0xc1), 1);
    assert_int_equal(utf8_lead_len(0xc2), 2);
    assert_int_equal(utf8_lead_len(0xdf), 2);
    assert_int_equal(utf8_lead_len(0xe0), 3);
    assert_int_equal(utf8_lead_len(0xef), 3);
    assert_int_equal(utf8_lead_len(0xf0), 4);
    assert_int_equal(utf8_lead_len(0xf4), 4);
    assert_int_equal(utf8_lead_len(0xf5), 1);       /* past U+10FFFF */
    assert_int_equal(utf8_lead_len(0xff), 1);
}

static void test_seq(void **state)
{
    (void)state;
    assert_int_equal(utf8_seq("a", 1), 1);
    assert_int_equal(utf8_seq("\0", 1), 1);
    assert_int_equal(utf8_seq("\xc3\xa9", 2), 2);
    assert_int_equal(utf8_seq("\xe2\x82\xac", 3), 3);               /* U+20AC */
    assert_int_equal(utf8_seq("\xf0\x9f\x98\x80", 4), 4);           /* U+1F600 */
    assert_int_equal(utf8_seq("\xc3\xa9zz", 4), 2);                 /* one at a time */
    assert_int_equal(utf8_seq("\xe2\x82\xac", 2), 0);               /* cut by left */
    assert_int_equal(utf8_seq("\xe0\xa0\x80", 3), 3);               /* U+0800, first */
    assert_int_equal(utf8_seq("\xe0\x9f\xbf", 3), 0);               /* overlong */
    assert_int_equal(utf8_seq("\xed\x9f\xbf", 3), 3);               /* U+D7FF */
    assert_int_equal(utf8_seq("\xed\xa0\x80", 3), 0);               /* U+D800 */
    assert_int_equal(utf8_seq("\xf0\x90\x80\x80", 4), 4);           /* U+10000 */
    assert_int_equal(utf8_seq("\xf0\x8f\xbf\xbf", 4), 0);           /* overlong */
    assert_int_equal(utf8_seq("\xf4\x8f\xbf\xbf", 4), 4);           /* U+10FFFF */
    assert_int_equal(utf8_seq("\xf4\x90\x80\x80", 4), 0);           /* past it */
    assert_int_equal(utf8_seq("\xe2\x28\xa1", 3), 0);               /* bad 2nd byte */
    assert_int_equal(utf8_seq("\xe2\x82\x28", 3), 0);               /* bad 3rd byte */
    assert_int_equal(utf8_seq("\x80", 1), 0);
}

static void test_valid(void **state)
{
    (void)state;
    assert_true(utf8_valid("", 0));
    assert_true(utf8_valid("abc", 3));
    assert_true(utf8_valid("\xc3\xa9", 2));
    assert_true(utf8_valid("\xf4\x8f\xbf\xbf", 4));       /* U+10FFFF */
    assert_true(utf8_valid("a\0b", 3));                    /* NUL is a character */
    assert_false(utf8_valid("\xff", 1));
    assert_false(utf8_valid("\xc3", 1));                   /* truncated */
    assert_false(utf8_valid("\xc0\xaf", 2));               /* overlong '/' */
    assert_false(utf8_valid("\xe0\x80\xaf", 3));           /* overlong */
    assert_false(utf8_valid("\xed\xa0\x80", 3));           /* surrogate */
    assert_false(utf8_valid("\xf4\x90\x80\x80", 4));       /* past U+10FFFF */
    assert_false(utf8_valid("\x80", 1));                   /* lone continuation */
    assert_false(utf8_valid("ab\xc3", 3));                 /* cut at the end */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lead_len),
        cmocka_unit_test(test_seq),
        cmocka_unit_test(test_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
