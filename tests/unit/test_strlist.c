/* SPDX-License-Identifier: Apache-2.0 */
/* test_strlist.c - comma separated items (trimmed, empty ones kept) and words. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/buf.h"
#include "base/strlist.h"

/* The items of text, each in [brackets], by items (1) or by words (0). */
static const char *walk(const char *text, int items, buf *out)
{
    buf_clear(out);
    buf_puts(out, "");
    const char *c = text, *it;
    size_t n;
    while (items ? strlist_next(&c, &it, &n) : strlist_next_word(&c, &it, &n))
        buf_printf(out, "[%.*s]", (int)n, it);
    assert_null(c);
    return out->data;
}

static void test_items(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    assert_string_equal(walk("a", 1, &b), "[a]");
    assert_string_equal(walk("a,b", 1, &b), "[a][b]");
    assert_string_equal(walk(" 10.0.0.0/8 ,\tfd00::/8\r\n", 1, &b), "[10.0.0.0/8][fd00::/8]");
    assert_string_equal(walk("a.csv, my file.csv", 1, &b), "[a.csv][my file.csv]");
    /* n commas, n + 1 items: the empty ones too. */
    assert_string_equal(walk("", 1, &b), "[]");
    assert_string_equal(walk("  ", 1, &b), "[]");
    assert_string_equal(walk("a,,b", 1, &b), "[a][][b]");
    assert_string_equal(walk("a, ", 1, &b), "[a][]");
    assert_string_equal(walk(",", 1, &b), "[][]");
    assert_string_equal(walk(NULL, 1, &b), "");
    buf_free(&b);
}

static void test_words(void **state)
{
    (void)state;
    buf b = BUF_INIT;
    assert_string_equal(walk("tok1", 0, &b), "[tok1]");
    assert_string_equal(walk("tok1\ntok2\r\n", 0, &b), "[tok1][tok2]");
    assert_string_equal(walk(" a, b\tc,,d ", 0, &b), "[a][b][c][d]");
    assert_string_equal(walk("", 0, &b), "");
    assert_string_equal(walk(" ,\n", 0, &b), "");
    assert_string_equal(walk(NULL, 0, &b), "");
    /* Other bytes are a word's: the caller judges them. */
    assert_string_equal(walk("a\vb caf\xc3\xa9", 0, &b), "[a\vb][caf\xc3\xa9]");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
