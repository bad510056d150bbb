/* SPDX-License-Identifier: Apache-2.0 */
/* test_rx.c - FIND's regexes: Java-like find/match semantics, the compile cache, the
 * match limits, and subjects that are not valid UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "list/rx.h"

static int matches(const char *pattern, int whole, const char *subject)
{
    rx *r = rx_get(pattern, strlen(pattern), whole);
    assert_non_null(r);
    int m = rx_match(subject, strlen(subject), r);
    rx_release(r);
    return m;
}

static void test_find_and_match(void **state)
{
    assert_int_equal(matches("\\d{3}", 0, "A123B"), 1);
    assert_int_equal(matches("\\d{3}", 1, "A123B"), 0);       /* REGEX_MATCH: whole line */
    assert_int_equal(matches("[A-Z]\\d{3}.*", 1, "A123B"), 1);
    assert_int_equal(matches(".*?U.*", 1, "BLUE"), 1);
    assert_int_equal(matches("a|ab", 1, "ab"), 1);            /* backtracks into the end */
    assert_int_equal(matches("(BLUE|RED)", 0, "GREEN"), 0);
    assert_int_equal(matches("^.$", 0, "\xc3\xab"), 1);      /* one character, two bytes */
    assert_int_equal(matches("b", 0, "a\xff\xfe" "b"), 1);    /* invalid UTF-8 is no error */
}

static void test_compile_errors(void **state)
{
    const char *bad[] = {"\\d\\d\\d)", "(", "[a-", "a{2,1}", "\\"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_null(rx_get(bad[i], strlen(bad[i]), 0));
}

static void test_cache(void **state)
{
    rx *a = rx_get("login\\d+;", 9, 0);
    rx *b = rx_get("login\\d+;", 9, 0);
    rx *c = rx_get("login\\d+;", 9, 1);
    assert_ptr_equal(a, b);          /* compiled once, shared */
    assert_ptr_not_equal(a, c);      /* find and match are different programs */
    rx_release(a);
    rx_release(b);
    rx_release(c);
    /* Patterns with NUL bytes are patterns like any other. */
    rx *n = rx_get("a\0b", 3, 1);
    assert_non_null(n);
    assert_int_equal(rx_match("a\0b", 3, n), 1);
    assert_int_equal(rx_match("a", 1, n), 0);
    rx_release(n);
}

static void test_limits(void **state)
{
    /* Exponential backtracking on a long line gives up with RX_LIMIT. */
    size_t n = 5000;
    char *line = malloc(n + 2);
    memset(line, 'a', n);
    line[n] = '!';
    line[n + 1] = '\0';
    const char *evil[] = {"^(a|aa)+$", "(a+)+$", "^(\\w+\\s?)*$", "^(a|a?)+$"};
    for (size_t i = 0; i < sizeof evil / sizeof evil[0]; i++)
        assert_int_equal(matches(evil[i], 0, line), RX_LIMIT);
    /* A plain pattern over the same line is no problem. */
    assert_int_equal(matches("a!", 0, line), 1);
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_and_match),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_cache),
        cmocka_unit_test(test_limits),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rx_shutdown();
    return rc;
}
