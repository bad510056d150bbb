/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal_columns.c - a list's named columns through the journal: INITFILE's
 * COLUMNS record, RESET keeping them, compaction's SNAPSHOT carrying them, a REPLACE
 * without them dropping them, and a log written before columns recovering as before. */
#include "journal_fixture.h"

/* The columns of list name as one line ("a,b;sep" style: names joined by '|', then the
 * separator), or "-" when the list is absent. */
static void columns_of(store *st, const char *name, char *out, size_t outlen)
{
    list *c = NULL;
    if (store_columns(st, name, &c) != STORE_OK) {
        snprintf(out, outlen, "-");
        return;
    }
    size_t off = 0;
    out[0] = '\0';
    for (size_t k = 0; k < list_column_count(c); k++)
        off += (size_t)snprintf(out + off, outlen - off, "%s%s", k ? "|" : "",
                                list_column_name(c, k, NULL));
    snprintf(out + off, outlen - off, ";%c", list_column_sep(c));
    list_free(c);
}

static list *with_columns(const char *prefix, size_t n, char sep)
{
    list *l = lines(prefix, n);
    const char *names[] = {"login", "pass"};
    size_t lens[] = {5, 4};
    assert_int_equal(list_set_columns(l, names, lens, 2, sep), 0);
    return l;
}

static void expect_columns(store *st, const char *name, const char *want)
{
    char got[256];
    columns_of(st, name, got, sizeof got);
    assert_string_equal(got, want);
}

static void test_columns_replay(void **s)
{
    store *st;
    uint64_t lsn;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(store_replace(st, "u", with_columns("u", 10, ';'), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_replace(st, "empty", with_columns("e", 0, ','), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_replace(st, "gone", with_columns("g", 3, ','), &lsn), STORE_OK);
    settle(lsn);
    /* Replaced by a list without columns: none after replay either. */
    assert_int_equal(store_replace(st, "gone", lines("g", 2), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_reset(st, "u", &lsn), STORE_OK);
    settle(lsn);
    add(st, "u", "x;y", 1);
    add(st, "plain", "a", 1);
    buf want = dump(st);
    jclose(j, st);

    j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    buf got = dump(st);
    same(&want, &got);
    buf_free(&got);
    expect_columns(st, "u", "login|pass;;");
    expect_columns(st, "empty", "login|pass;,");
    expect_columns(st, "gone", ";,");
    expect_columns(st, "plain", ";,");
    /* Compaction writes SNAPSHOT records, inline and in files: COLUMNS follow each. */
    assert_int_equal(store_replace(st, "big", with_columns("b", 20000, ','), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(journal_compact(j, st), 0);
    jclose(j, st);

    j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    expect_columns(st, "u", "login|pass;;");
    expect_columns(st, "big", "login|pass;,");
    expect_columns(st, "empty", "login|pass;,");
    expect_columns(st, "gone", ";,");
    got = dump(st);
    jclose(j, st);
    buf_free(&got);
    buf_free(&want);
}

/* A COLUMNS record that names nothing, or names a column with NUL, stops recovery with
 * the reason (not a torn tail: a record after it follows). */
static void test_columns_record_checked(void **s)
{
    buf body = BUF_INIT;
    wal_rec r;
    const char *why;
    list *l = list_create();
    assert_non_null(l);
    assert_int_equal(list_set_columns(l, (const char *[]){"a", "b"}, (size_t[]){1, 1}, 2, '\t'), 0);
    assert_int_equal(wal_enc_columns(&body, "n", l), 0);
    assert_int_equal(wal_decode((const uint8_t *)body.data, body.len, &r, &why), 0);
    assert_int_equal(r.type, WAL_COLUMNS);
    list *m = list_create();
    assert_int_equal(wal_columns_apply(&r, m, &why), 0);
    assert_int_equal(list_column_count(m), 2);
    assert_int_equal(list_column_sep(m), '\t');
    /* A separator that cannot be one, and a record without names. */
    body.data[3] = '"';
    assert_int_equal(wal_decode((const uint8_t *)body.data, body.len, &r, &why), -1);
    body.data[3] = ',';
    assert_int_equal(wal_decode((const uint8_t *)body.data, 4, &r, &why), 0);
    assert_int_equal(wal_columns_apply(&r, m, &why), -1);
    /* A name holding NUL. */
    body.data[5] = '\0';
    assert_int_equal(wal_decode((const uint8_t *)body.data, body.len, &r, &why), 0);
    assert_int_equal(wal_columns_apply(&r, m, &why), -1);
    /* Snapshot file records are no log records. */
    body.data[0] = WAL_LINES;
    assert_int_equal(wal_decode((const uint8_t *)body.data, body.len, &r, &why), -1);
    list_free(l);
    list_free(m);
    buf_free(&body);
}

int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_columns_replay, setup, teardown),
        cmocka_unit_test(test_columns_record_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
