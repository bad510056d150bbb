/* SPDX-License-Identifier: Apache-2.0 */
/* test_csv.c - RFC 4180 fields read in place (base/csv.h), and a list's column indexes
 * (list.h) kept right through pushes, removals, moves and leaf merges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/csv.h"
#include "list/list.h"

/* Field k of s as a C string in out, or "<none>". */
static const char *field(const char *s, char sep, size_t k, char *out, size_t outlen)
{
    csv_field f;
    buf b = BUF_INIT;
    if (csv_get(s, strlen(s), sep, k, &f) != 0)
        return "<none>";
    assert_int_equal(csv_field_append(&b, &f), 0);
    snprintf(out, outlen, "%s", b.data ? b.data : "");
    buf_free(&b);
    return out;
}

static void test_fields(void **s)
{
    char o[64];
    assert_int_equal(csv_count("", 0, ','), 1);
    assert_int_equal(csv_count("a,b,c", 5, ','), 3);
    assert_int_equal(csv_count("a,", 2, ','), 2);
    assert_string_equal(field("a,,c", ',', 1, o, sizeof o), "");
    assert_string_equal(field("a,b", ',', 2, o, sizeof o), "<none>");
    /* Quotes hold the separator and doubled quotes. */
    assert_string_equal(field("x,\"Doe, John\",y", ',', 1, o, sizeof o), "Doe, John");
    assert_string_equal(field("\"a\"\"b\"", ',', 0, o, sizeof o), "a\"b");
    assert_string_equal(field("\"\"\"\"", ',', 0, o, sizeof o), "\"");
    assert_string_equal(field("\"\",z", ',', 1, o, sizeof o), "z");
    assert_string_equal(field("1;\"a;b\";c", ';', 2, o, sizeof o), "c");
    /* A quote inside an unquoted field is a plain byte. */
    assert_string_equal(field("ab\"c,d", ',', 0, o, sizeof o), "ab\"c");
    /* Broken quoting: never closed, or text after the closing quote. */
    assert_int_equal(csv_count("\"abc", 4, ','), -1);
    assert_int_equal(csv_count("\"ab\"c,d", 7, ','), -1);
    assert_string_equal(field("a,\"b", ',', 1, o, sizeof o), "<none>");
    assert_string_equal(field("a,\"b", ',', 0, o, sizeof o), "a");
    assert_false(csv_sep_ok('"'));
    assert_false(csv_sep_ok('\n'));
    assert_true(csv_sep_ok('\t'));
}

static void test_eq_hash_put(void **s)
{
    csv_field q, p;
    assert_int_equal(csv_get("\"a\"\"b\"", 6, ',', 0, &q), 0);
    assert_true(csv_field_eq(&q, "a\"b", 3));
    assert_false(csv_field_eq(&q, "a\"", 2));
    assert_false(csv_field_eq(&q, "a\"bc", 4));
    /* The same value quoted or not hashes the same. */
    assert_int_equal(csv_get("\"u1\",x", 6, ',', 0, &q), 0);
    assert_int_equal(csv_get("u1,x", 4, ',', 0, &p), 0);
    assert_true(csv_field_hash(&q) == csv_field_hash(&p));
    buf b = BUF_INIT;
    assert_int_equal(csv_put(&b, "plain", 5, ','), 0);
    assert_int_equal(csv_put(&b, "a,b", 3, ','), 0);
    assert_int_equal(csv_put(&b, "say \"hi\"", 8, ','), 0);
    assert_int_equal(csv_put(&b, "a,b", 3, ';'), 0);
    assert_string_equal(b.data, "plain\"a,b\"\"say \"\"hi\"\"\"a,b");
    buf_free(&b);
}

static list *users(size_t n)
{
    list *l = list_create();
    char s[64];
    assert_non_null(l);
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(s, sizeof s, "u%zu,\"p,%zu\",%zu", i, i % 7, i % 3);
        assert_int_equal(list_push_back(l, s, (size_t)len), 0);
    }
    const char *names[] = {"login", "pass", "group"};
    size_t lens[] = {5, 4, 5};
    assert_int_equal(list_set_columns(l, names, lens, 3, ','), 0);
    return l;
}

static ssize_t find(list *l, size_t k, const char *v)
{
    return list_find_column(l, k, v, strlen(v));
}

/* The index, built on first use, follows every change: the answer is always the one a
 * scan from the head would give. */
static void test_column_index(void **s)
{
    list *l = users(5000);
    assert_int_equal(list_column_index(l, "pass", 4), 1);
    assert_int_equal(list_column_index(l, "nope", 4), -1);
    assert_int_equal(find(l, 0, "u4321"), 4321);
    assert_int_equal(find(l, 1, "p,3"), 3);
    assert_int_equal(find(l, 1, "p"), -1);
    assert_int_equal(find(l, 2, "2"), 2);
    assert_int_equal(find(l, 3, "x"), -1);          /* no such column */
    /* Removals in the middle merge leaves; moves to the tail; pushes at both ends. */
    for (size_t i = 0; i < 2000; i++)
        assert_int_equal(list_remove(l, 1000), 0);
    assert_int_equal(find(l, 0, "u1500"), -1);
    assert_int_equal(find(l, 0, "u3000"), 1000);
    assert_int_equal(list_move_to_back(l, 0), 0);
    assert_int_equal(find(l, 0, "u0"), 2999);
    assert_int_equal(find(l, 0, "u1"), 0);
    assert_int_equal(list_push_front(l, "\"u0\",z,9", 8), 0);
    assert_int_equal(find(l, 0, "u0"), 0);
    assert_int_equal(list_contains_column(l, 2, "9", 1), 1);
    assert_int_equal(list_push_back(l, "new,p,9", 7), 0);
    assert_int_equal(find(l, 0, "new"), 3001);
    assert_int_equal(list_remove(l, 0), 0);
    assert_int_equal(find(l, 0, "u0"), 2999);
    assert_int_equal(list_contains_column(l, 0, "zz", 2), 0);
    /* A clone keeps the names, not the indexes, and finds the same. */
    list *c = list_clone(l);
    assert_non_null(c);
    assert_int_equal(list_column_count(c), 3);
    assert_int_equal(find(c, 0, "new"), 3000);
    list_free(c);
    /* Columns can be copied and removed. */
    list *e = list_create();
    assert_int_equal(list_copy_columns(e, l), 0);
    assert_string_equal(list_column_name(e, 2, NULL), "group");
    assert_int_equal(list_set_columns(e, NULL, NULL, 0, ','), 0);
    assert_int_equal(list_column_count(e), 0);
    list_free(e);
    list_free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_eq_hash_put),
        cmocka_unit_test(test_column_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
