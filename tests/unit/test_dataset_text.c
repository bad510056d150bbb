/* SPDX-License-Identifier: Apache-2.0 */
/* test_dataset_text.c - LOAD's text to list: line rules as INITFILE, charset conversion,
 * invalid bytes refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "dataset/dataset.h"
#include "list/list.h"

static char dir[] = "/tmp/stsd-test-dataset-text-XXXXXX";

static int setup(void **state)
{
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    rmdir(dir);
    return 0;
}

static dataset *open_with(const char *charset)
{
    buf err = BUF_INIT;
    dataset *d = dataset_open(dir, charset, "UTF-8", &err);
    buf_free(&err);
    assert_non_null(d);
    return d;
}

static void expect_line(const list *l, size_t pos, const char *want, size_t want_len)
{
    size_t len;
    const char *s = list_get(l, pos, &len);
    assert_non_null(s);
    assert_int_equal(len, want_len);
    assert_memory_equal(s, want, len);
}

static void test_lines_like_initfile(void **state)
{
    dataset *d = open_with("UTF-8");
    list *l = NULL;
    static const char text[] = "a;1\r\nb;2\rc;3\n\nlast";
    assert_int_equal(dataset_load_text(d, text, sizeof text - 1, &l), DATASET_OK);
    assert_int_equal(list_length(l), 5);
    expect_line(l, 0, "a;1", 3);
    expect_line(l, 1, "b;2", 3);
    expect_line(l, 2, "c;3", 3);
    expect_line(l, 3, "", 0);
    expect_line(l, 4, "last", 4);
    list_free(l);
    /* Empty text: an empty list, as an empty file gives. */
    assert_int_equal(dataset_load_text(d, "", 0, &l), DATASET_OK);
    assert_int_equal(list_length(l), 0);
    list_free(l);
    /* NUL is data. */
    assert_int_equal(dataset_load_text(d, "x\0y\n", 4, &l), DATASET_OK);
    expect_line(l, 0, "x\0y", 3);
    list_free(l);
    dataset_close(d);
}

static void test_charset(void **state)
{
    dataset *d = open_with("ISO-8859-1");
    list *l = NULL;
    static const char text[] = "caf\xe9\nna\xefve\n";
    assert_int_equal(dataset_load_text(d, text, sizeof text - 1, &l), DATASET_OK);
    assert_int_equal(list_length(l), 2);
    expect_line(l, 0, "caf\xc3\xa9", 5);
    expect_line(l, 1, "na\xc3\xafve", 6);
    list_free(l);
    /* Pure ASCII takes the fast path and gives the same lines. */
    assert_int_equal(dataset_load_text(d, "abc\ndef", 7, &l), DATASET_OK);
    expect_line(l, 1, "def", 3);
    list_free(l);
    /* A text that grows a lot in UTF-8 (every byte becomes two). */
    size_t n = 100000;
    char *big = malloc(n);
    assert_non_null(big);
    memset(big, '\xe9', n);
    assert_int_equal(dataset_load_text(d, big, n, &l), DATASET_OK);
    assert_int_equal(list_length(l), 1);
    size_t len;
    assert_non_null(list_get(l, 0, &len));
    assert_int_equal(len, 2 * n);
    list_free(l);
    free(big);
    dataset_close(d);
}

static void test_invalid_bytes(void **state)
{
    dataset *d = open_with("UTF-16");
    list *l = (list *)1;
    /* An odd number of bytes cannot be UTF-16. */
    assert_int_equal(dataset_load_text(d, "abc", 3, &l), DATASET_CHARSET);
    assert_null(l);
    dataset_close(d);
    d = open_with("windows-1252");
    /* 0x81 is no character in windows-1252. */
    assert_int_equal(dataset_load_text(d, "a\x81z", 3, &l), DATASET_CHARSET);
    assert_null(l);
    dataset_close(d);
}

/* A stop asked for (dataset_set_stop's flag): LOAD and INITFILE give up with
 * DATASET_STOPPING and hand back no list; a text shorter than DATASET_STOP_LINES lines
 * is done before the first look. */
static void test_stop_flag(void **state)
{
    dataset *d = open_with("UTF-8");
    atomic_int stop = 0;
    size_t n = 3 * DATASET_STOP_LINES;
    char *text = malloc(2 * n);
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        memcpy(text + 2 * i, "x\n", 2);
    dataset_set_stop(d, &stop);
    list *l = NULL;
    assert_int_equal(dataset_load_text(d, text, 2 * n, &l), DATASET_OK);
    assert_int_equal(list_length(l), n);
    list_free(l);
    atomic_store(&stop, 1);
    l = (list *)1;
    assert_int_equal(dataset_load_text(d, text, 2 * n, &l), DATASET_STOPPING);
    assert_null(l);
    assert_int_equal(dataset_load_text(d, text, 2 * (DATASET_STOP_LINES - 1), &l), DATASET_OK);
    assert_int_equal(list_length(l), DATASET_STOP_LINES - 1);
    list_free(l);
    /* INITFILE: looked at before each chunk of the file. */
    char path[200];
    snprintf(path, sizeof path, "%s/stop.csv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, 2 * n, f), 2 * n);
    assert_int_equal(fclose(f), 0);
    l = (list *)1;
    assert_int_equal(dataset_load(d, "stop.csv", &l), DATASET_STOPPING);
    assert_null(l);
    atomic_store(&stop, 0);
    assert_int_equal(dataset_load(d, "stop.csv", &l), DATASET_OK);
    assert_int_equal(list_length(l), n);
    list_free(l);
    unlink(path);
    free(text);
    dataset_close(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_like_initfile),
        cmocka_unit_test(test_charset),
        cmocka_unit_test(test_invalid_bytes),
        cmocka_unit_test(test_stop_flag),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
