/* SPDX-License-Identifier: Apache-2.0 */
/* test_store.c - the store's operations, their atomic semantics and its limits. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "list/rx.h"
#include "store/store.h"

static store *st;

static int setup(void **state)
{
    st = store_create(NULL);
    return st ? 0 : -1;
}

static int teardown(void **state)
{
    store_free(st);
    return 0;
}

static void add(const char *name, const char *line, int at_tail)
{
    assert_int_equal(store_add(st, name, line, strlen(line), at_tail, 0, NULL), STORE_OK);
}

/* The lines of a READ/FIND result joined with '|'. */
static void joined(const buf *out, char *dst, size_t n)
{
    size_t off = 0, len;
    const char *s;
    int first = 1;
    dst[0] = '\0';
    while ((s = store_next_line(out, &off, &len))) {
        if (!first)
            strncat(dst, "|", n - strlen(dst) - 1);
        strncat(dst, s, len < n - strlen(dst) - 1 ? len : n - strlen(dst) - 1);
        first = 0;
    }
}

/* The whole list, without changing it (READMULTI of all lines with keep). */
static void contents(const char *name, char *dst, size_t n)
{
    size_t len, count;
    assert_int_equal(store_length(st, name, &len), STORE_OK);
    buf out = BUF_INIT;
    dst[0] = '\0';
    if (len)
        assert_int_equal(store_read(st, name, STORE_FIRST, 1, len, &out, &count, NULL), STORE_OK);
    joined(&out, dst, n);
    buf_free(&out);
}

static void load(const char *name, const char *csv)
{
    list *l = list_create();
    char tmp[256];
    snprintf(tmp, sizeof tmp, "%s", csv);
    for (char *s = strtok(tmp, ","); s; s = strtok(NULL, ","))
        assert_int_equal(list_push_back(l, s, strlen(s)), 0);
    assert_int_equal(store_replace(st, name, l, NULL), STORE_OK);
}

static void test_read_ends_and_keep(void **state)
{
    char got[256];
    buf out = BUF_INIT;
    size_t count;
    load("l", "a,b,c,d,e");
    assert_int_equal(store_read(st, "l", STORE_FIRST, 1, 1, &out, &count, NULL), STORE_OK);
    joined(&out, got, sizeof got);
    assert_string_equal(got, "a");
    contents("l", got, sizeof got);
    assert_string_equal(got, "b|c|d|e|a");
    buf_clear(&out);
    assert_int_equal(store_read(st, "l", STORE_LAST, 0, 2, &out, &count, NULL), STORE_OK);
    joined(&out, got, sizeof got);
    assert_string_equal(got, "a|e");
    assert_int_equal(count, 2);
    contents("l", got, sizeof got);
    assert_string_equal(got, "b|c|d");
    /* READMULTI LAST with keep: read d, c; then appended in read order. */
    buf_clear(&out);
    assert_int_equal(store_read(st, "l", STORE_LAST, 1, 2, &out, &count, NULL), STORE_OK);
    contents("l", got, sizeof got);
    assert_string_equal(got, "b|d|c");
    buf_clear(&out);
    assert_int_equal(store_read(st, "l", STORE_FIRST, 1, 4, &out, &count, NULL), STORE_TOO_FEW);
    assert_int_equal(count, 3);
    assert_int_equal(store_read(st, "none", STORE_FIRST, 1, 1, &out, &count, NULL), STORE_NOT_LOADED);
    buf_free(&out);
}

static void test_random_removal_keeps_order(void **state)
{
    char got[256];
    buf out = BUF_INIT;
    size_t count;
    load("r", "1,2,3,4,5,6,7,8,9");
    assert_int_equal(store_read(st, "r", STORE_RANDOM, 0, 4, &out, &count, NULL), STORE_OK);
    contents("r", got, sizeof got);
    /* What is left is an increasing subsequence of five. */
    int prev = 0, n = 0;
    for (char *s = got; *s; s++)
        if (*s >= '1' && *s <= '9') {
            assert_true(*s - '0' > prev);
            prev = *s - '0';
            n++;
        }
    assert_int_equal(n, 5);
    /* Every random draw of every line happens: 200 reads of a 3-line list with keep. */
    load("r3", "x,y,z");
    int seen[3] = {0};
    for (int i = 0; i < 200; i++) {
        buf_clear(&out);
        assert_int_equal(store_read(st, "r3", STORE_RANDOM, 1, 1, &out, &count, NULL), STORE_OK);
        size_t off = 0, len;
        const char *s = store_next_line(&out, &off, &len);
        seen[*s - 'x']++;
    }
    assert_true(seen[0] > 20 && seen[1] > 20 && seen[2] > 20);
    buf_free(&out);
}

static void test_empty_and_reset(void **state)
{
    buf out = BUF_INIT;
    size_t count, len;
    load("e", "only");
    assert_int_equal(store_reset(st, "e", NULL), STORE_OK);
    assert_int_equal(store_length(st, "e", &len), STORE_OK);
    assert_int_equal(len, 0);
    assert_int_equal(store_read(st, "e", STORE_FIRST, 1, 1, &out, &count, NULL), STORE_EMPTY);
    assert_int_equal(store_reset(st, "ghost", NULL), STORE_OK);
    assert_int_equal(store_length(st, "ghost", &len), STORE_NOT_LOADED);
    buf_free(&out);
}

static void test_add_unique_and_ends(void **state)
{
    char got[256];
    add("a", "m", 0);
    add("a", "f", 0);
    add("a", "z", 1);
    assert_int_equal(store_add(st, "a", "m", 1, 1, 1, NULL), STORE_EXISTS);
    assert_int_equal(store_add(st, "a", "n", 1, 1, 1, NULL), STORE_OK);
    assert_int_equal(store_add(st, "a", "", 0, 0, 0, NULL), STORE_OK);
    assert_int_equal(store_add(st, "a", "", 0, 0, 1, NULL), STORE_EXISTS);
    contents("a", got, sizeof got);
    assert_string_equal(got, "|f|m|z|n");
}

static int has_q(const char *s, size_t len, void *ctx)
{
    return memchr(s, 'q', len) != NULL;
}

static void test_find(void **state)
{
    char got[256];
    buf out = BUF_INIT;
    load("f", "aq,b,dup,cq,dup");
    store_matcher eq = {NULL, NULL, "dup", 3, NULL, 0};
    assert_int_equal(store_find(st, "f", &eq, 1, &out, NULL), STORE_OK);
    contents("f", got, sizeof got);
    assert_string_equal(got, "aq|b|cq|dup|dup");
    store_matcher q = {has_q, NULL, NULL, 0, NULL, 0};
    buf_clear(&out);
    assert_int_equal(store_find(st, "f", &q, 0, &out, NULL), STORE_OK);
    joined(&out, got, sizeof got);
    assert_string_equal(got, "aq");
    rx *re = rx_get("^c.$", 4, 1);
    assert_non_null(re);
    store_matcher m = {rx_match, re, NULL, 0, NULL, 0};
    buf_clear(&out);
    assert_int_equal(store_find(st, "f", &m, 0, &out, NULL), STORE_OK);
    joined(&out, got, sizeof got);
    assert_string_equal(got, "cq");
    assert_int_equal(store_find(st, "f", &m, 0, &out, NULL), STORE_NO_MATCH);
    rx_release(re);
    store_matcher none = {NULL, NULL, "zzz", 3, NULL, 0};
    assert_int_equal(store_find(st, "f", &none, 0, &out, NULL), STORE_NO_MATCH);
    contents("f", got, sizeof got);
    assert_string_equal(got, "b|dup|dup");
    buf_free(&out);
}

static void status_fn(const char *name, size_t len, void *ctx)
{
    char *dst = ctx;
    char one[64];
    snprintf(one, sizeof one, "%s=%zu;", name, len);
    strcat(dst, one);
}

static void test_status_sorted_and_snapshot(void **state)
{
    store *s2 = store_create(NULL);
    store *keep = st;
    st = s2;
    add("zeta", "1", 1);
    add("alpha", "1", 1);
    add("alpha", "2", 1);
    add("Mid", "x", 1);
    char got[256] = "";
    assert_int_equal(store_status(st, status_fn, got), 3);
    assert_string_equal(got, "Mid=1;alpha=2;zeta=1;");
    list *copy;
    assert_int_equal(store_snapshot(st, "alpha", &copy), STORE_OK);
    add("alpha", "3", 1);
    assert_int_equal(list_length(copy), 2);   /* a copy, not a view */
    list_free(copy);
    assert_int_equal(store_snapshot(st, "none", &copy), STORE_NOT_LOADED);
    assert_int_equal(store_count(st), 3);
    st = keep;
    store_free(s2);
}

static void test_limits(void **state)
{
    store_limits lim = {2, 10, 0};
    store *s2 = store_create(&lim);
    assert_int_equal(store_add(s2, "a", "12345", 5, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_add(s2, "b", "1234", 4, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_add(s2, "c", "1", 1, 1, 0, NULL), STORE_FULL);     /* a third list */
    assert_int_equal(store_add(s2, "a", "12", 2, 1, 0, NULL), STORE_FULL);    /* 11 bytes */
    assert_int_equal(store_add(s2, "a", "1", 1, 1, 0, NULL), STORE_OK);       /* exactly 10 */
    buf out = BUF_INIT;
    size_t count, len;
    assert_int_equal(store_read(s2, "a", STORE_FIRST, 0, 1, &out, &count, NULL), STORE_OK);
    assert_int_equal(store_add(s2, "b", "12345", 5, 1, 0, NULL), STORE_OK);   /* room freed */
    assert_int_equal(store_reset(s2, "b", NULL), STORE_OK);
    list *l = list_create();
    list_push_back(l, "123456789", 9);
    assert_int_equal(store_replace(s2, "a", l, NULL), STORE_OK);
    assert_int_equal(store_length(s2, "a", &len), STORE_OK);
    assert_int_equal(len, 1);
    buf_free(&out);
    store_free(s2);
}

#define WORKERS 4
#define PER_WORKER 5000

static void *churn(void *arg)
{
    int id = (int)(intptr_t)arg;
    char line[32];
    buf out = BUF_INIT;
    size_t count;
    for (int i = 0; i < PER_WORKER; i++) {
        snprintf(line, sizeof line, "w%d-%d", id, i);
        store_add(st, "shared", line, strlen(line), i & 1, 0, NULL);
        buf_clear(&out);
        store_read(st, "shared", (store_end)(i % 3), i % 2, 1, &out, &count, NULL);
    }
    buf_free(&out);
    return NULL;
}

static void test_concurrent_ops_keep_count(void **state)
{
    /* Every worker adds PER_WORKER lines and takes PER_WORKER / 2 of them for good. */
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, churn, (void *)(intptr_t)i);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(t[i], NULL);
    size_t len;
    assert_int_equal(store_length(st, "shared", &len), STORE_OK);
    assert_int_equal(len, WORKERS * PER_WORKER / 2);
}

#define NAMES_PER_THREAD 2500

static void *create_names(void *arg)
{
    int id = (int)(intptr_t)arg;
    char name[32];
    size_t len;
    for (int i = 0; i < NAMES_PER_THREAD; i++) {
        snprintf(name, sizeof name, "t%d-%d", id, i);
        if (store_add(st, name, "x", 1, 1, 0, NULL) != STORE_OK)
            return (void *)1;
        /* A name just created is found at once, while other threads grow the table. */
        if (store_length(st, name, &len) != STORE_OK || len != 1)
            return (void *)1;
        snprintf(name, sizeof name, "t%d-%d", id, i / 2);
        if (store_length(st, name, &len) != STORE_OK)
            return (void *)1;
    }
    return NULL;
}

static void test_many_names_concurrently(void **state)
{
    store *keep = st;
    st = store_create(NULL);
    pthread_t t[WORKERS];
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, create_names, (void *)(intptr_t)i);
    for (int i = 0; i < WORKERS; i++) {
        void *failed;
        pthread_join(t[i], &failed);
        assert_null(failed);
    }
    assert_int_equal(store_count(st), WORKERS * NAMES_PER_THREAD);
    size_t len;
    assert_int_equal(store_length(st, "t3-2499", &len), STORE_OK);
    assert_int_equal(store_length(st, "t4-0", &len), STORE_NOT_LOADED);
    store_free(st);
    st = keep;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_ends_and_keep),
        cmocka_unit_test(test_random_removal_keeps_order),
        cmocka_unit_test(test_empty_and_reset),
        cmocka_unit_test(test_add_unique_and_ends),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_status_sorted_and_snapshot),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_concurrent_ops_keep_count),
        cmocka_unit_test(test_many_names_concurrently),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    rx_shutdown();
    return rc;
}
