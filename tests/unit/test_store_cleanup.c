/* SPDX-License-Identifier: Apache-2.0 */
/* test_store_cleanup.c - bulk adds and clean-up in the store and the journal: ADDMULTI
 * all or none, DROP's tombstones (lookups, STATUS, limits, a name coming back, waiters
 * told), key TTLs expiring, PUSH_MANY, DROP and deadlines replayed and carried over by a
 * compaction, and everything forgotten unrecorded (a replica that stops leading). */
#include "journal_fixture.h"
#include "base/clock.h"
#include "meet/keys.h"

static store_span span(const char *s)
{
    return (store_span){s, strlen(s)};
}

static size_t length_of(store *st, const char *name)
{
    size_t n = 0;
    return store_length(st, name, &n) == STORE_OK ? n : (size_t)-1;
}

static void test_add_many_all_or_none(void **s)
{
    (void)s;
    store_limits lim = {0, 20, 0};
    store *st = keyed_store(&lim);
    size_t bad;
    store_span v[] = {span("a"), span("b"), span("c")};
    assert_int_equal(store_add_many(st, "l", v, 3, 1, 1, &bad, NULL), STORE_OK);
    assert_int_equal(length_of(st, "l"), 3);
    store_span dup_list[] = {span("x"), span("b")};
    assert_int_equal(store_add_many(st, "l", dup_list, 2, 1, 1, &bad, NULL), STORE_EXISTS);
    assert_int_equal(bad, 1);
    store_span dup_batch[] = {span("x"), span("y"), span("x")};
    assert_int_equal(store_add_many(st, "l", dup_batch, 3, 1, 1, &bad, NULL), STORE_EXISTS);
    assert_int_equal(bad, 2);
    assert_int_equal(length_of(st, "l"), 3);
    /* maxBytes 20: 3 in, 18 more would not fit, and none goes in. */
    store_span big[] = {span("123456789"), span("123456789")};
    assert_int_equal(store_add_many(st, "l", big, 2, 1, 0, &bad, NULL), STORE_FULL);
    assert_int_equal(length_of(st, "l"), 3);
    store_free(st);
}

/* A waiter that records what it was told. */
typedef struct twaiter {
    store_waiter w;
    store_rc rc;
    int served;
} twaiter;

static int w_arm(store_waiter *w) { (void)w; return 0; }
static int w_claim(store_waiter *w) { (void)w; return 1; }
static void w_served(store_waiter *w, store_rc rc)
{
    twaiter *t = (twaiter *)w;
    t->rc = rc;
    t->served = 1;
}

/* t waiting for one line of name. */
static void twaiter_on(twaiter *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->w.name = name;
    t->w.n = 1;
    t->w.arm = w_arm;
    t->w.claim = w_claim;
    t->w.served = w_served;
}

static void test_drop_tombstone(void **s)
{
    (void)s;
    store_limits lim = {2, 0, 0};
    store *st = keyed_store(&lim);
    size_t bad, n;
    store_span v[] = {span("a"), span("b")};
    assert_int_equal(store_add_many(st, "one", v, 2, 1, 0, &bad, NULL), STORE_OK);
    assert_int_equal(store_add(st, "two", "x", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_add(st, "three", "x", 1, 1, 0, NULL), STORE_FULL);
    /* A waiter on "two", emptied first. */
    buf out = BUF_INIT;
    size_t count;
    assert_int_equal(store_read(st, "two", STORE_FIRST, 0, 1, &out, &count, NULL), STORE_OK);
    twaiter t;
    twaiter_on(&t, "two");
    buf_clear(&out);
    assert_int_equal(store_read_wait(st, &t.w, &out, &count), STORE_WAITING);
    assert_int_equal(store_drop(st, "two", NULL), STORE_OK);
    assert_true(t.served);
    assert_int_equal(t.rc, STORE_DROPPED);
    assert_int_equal(store_drop(st, "two", NULL), STORE_NOT_LOADED);
    assert_int_equal(length_of(st, "two"), (size_t)-1);
    assert_int_equal(store_count(st), 1);
    /* The tombstone does not count against maxLists; a new name fits. */
    assert_int_equal(store_add(st, "three", "x", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(store_add(st, "two", "y", 1, 1, 0, NULL), STORE_FULL);
    assert_int_equal(store_drop_prefix(st, "t", &n, NULL), STORE_OK);
    assert_int_equal(n, 1);
    /* Back with the next ADD, empty but for it; a waiter on it waits again. */
    assert_int_equal(store_add(st, "two", "y", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(length_of(st, "two"), 1);
    assert_int_equal(store_count(st), 2);
    buf_free(&out);
    store_free(st);
}

/* A replica that stops leading: every list, lease and key forgotten, waiters told, and
 * not a record written (the committed state is elsewhere). */
static void test_clear_unrecorded(void **s)
{
    (void)s;
    store *st;
    size_t bad, n, count;
    uint64_t v;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    store_span lines3[] = {span("a"), span("b"), span("c")};
    assert_int_equal(store_add_many(st, "one", lines3, 3, 1, 0, &bad, NULL), STORE_OK);
    assert_int_equal(store_add(st, "two", "x", 1, 1, 0, NULL), STORE_OK);
    buf out = BUF_INIT, ids = BUF_INIT;
    assert_int_equal(store_read_leased(st, "one", STORE_FIRST, 1, 60000, &out, &count, &ids,
                                       NULL), STORE_OK);
    assert_int_equal(store_read(st, "two", STORE_FIRST, 0, 1, &out, &count, NULL), STORE_OK);
    twaiter t;
    twaiter_on(&t, "two");
    assert_int_equal(store_read_wait(st, &t.w, &out, &count), STORE_WAITING);
    assert_int_equal(keys_set_ttl(st, "k", "1", 1, -1, 60000, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "c", "5", 1, -1, &v, NULL), STORE_OK);
    key_incr q = {1, INT64_MIN, INT64_MAX, 60000, 0};
    key_out o;
    assert_int_equal(keys_incr(st, "c", &q, &o), STORE_OK);
    journal_stats before, after;
    journal_get_stats(j, &before);
    assert_int_equal(store_clear(st, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(keys_clear(st), 2);
    journal_get_stats(j, &after);
    assert_int_equal(after.records, before.records);
    assert_true(t.served);
    assert_int_equal(t.rc, STORE_JOURNAL);
    assert_int_equal(store_count(st), 0);
    assert_int_equal(length_of(st, "one"), (size_t)-1);
    assert_int_equal(keys_count(st), 0);
    assert_string_equal(key_of(st, "k"), "-");
    int64_t next;
    assert_int_equal(store_lease_expire(st, clock_wall_ms() + 120000, &next), 0);
    assert_int_equal(keys_lease_expire(st, clock_wall_ms() + 120000, &next), 0);
    /* Names come back as new ones. */
    assert_int_equal(store_add(st, "one", "z", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(length_of(st, "one"), 1);
    assert_int_equal(keys_set(st, "c", "7", 1, -1, &v, NULL), STORE_OK);
    assert_string_equal(key_of(st, "c"), "7/1");
    buf_free(&out);
    buf_free(&ids);
    jclose(j, st);
}

static void test_key_ttl(void **s)
{
    (void)s;
    store *st = keyed_store(NULL);
    uint64_t v, lsn;
    int64_t next;
    size_t n;
    assert_int_equal(keys_set_ttl(st, "a", "1", 1, -1, 1000, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "b", "2", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_expire(st, "b", 1000, &lsn), STORE_OK);
    assert_int_equal(keys_expire(st, "nope", 1000, &lsn), STORE_NO_KEY);
    assert_int_equal(keys_lease_expire(st, clock_wall_ms(), &next), 0);
    assert_true(next > clock_wall_ms());
    assert_int_equal(keys_lease_expire(st, clock_wall_ms() + 2000, &next), 2);
    assert_string_equal(key_of(st, "a"), "-");
    assert_string_equal(key_of(st, "b"), "-");
    assert_int_equal(keys_count(st), 0);
    assert_int_equal(keys_set(st, "p.1", "x", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "p.2", "x", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "q", "x", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_del_prefix(st, "p.", &n, &lsn), STORE_OK);
    assert_int_equal(n, 2);
    assert_int_equal(keys_count(st), 1);
    store_free(st);
}

/* PUSH_MANY and DROP replayed, then carried by a compaction; TTLs with their deadlines. */
static void test_journal_replay(void **s)
{
    (void)s;
    store *st;
    size_t bad;
    uint64_t v, lsn;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    store_span lines3[] = {span("a"), span("b"), span("c")};
    assert_int_equal(store_add_many(st, "keep", lines3, 3, 1, 0, &bad, NULL), STORE_OK);
    assert_int_equal(store_add_many(st, "gone", lines3, 3, 0, 0, &bad, NULL), STORE_OK);
    assert_int_equal(store_drop(st, "gone", NULL), STORE_OK);
    assert_int_equal(store_add_many(st, "back", lines3, 3, 1, 0, &bad, NULL), STORE_OK);
    assert_int_equal(store_drop(st, "back", NULL), STORE_OK);
    assert_int_equal(store_add(st, "back", "z", 1, 1, 0, NULL), STORE_OK);
    assert_int_equal(keys_set_ttl(st, "t", "1", 1, -1, 3600000, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "e", "1", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_expire(st, "e", 1, &lsn), STORE_OK);
    /* e's deadline is at most e_by. Close, reopen and check may all fall within the ms
     * EXPIRE ran in, when e is not due yet: wait past e_by, then ask at e_by itself, so
     * that a deadline restarted at reopen (later than e_by) would fail. */
    int64_t e_by = clock_wall_ms() + 1;
    while (clock_wall_ms() <= e_by)
        usleep(200);
    buf want = dump(st);
    jclose(j, st);
    for (int round = 0; round < 2; round++) {
        j = jopen(CONF_FSYNC_NO, 0, &st);
        buf got = dump(st);
        same(&want, &got);
        buf_free(&got);
        assert_int_equal(length_of(st, "gone"), (size_t)-1);
        assert_int_equal(length_of(st, "back"), 1);
        assert_string_equal(key_of(st, "t"), "1/1");
        /* e's deadline came back from the record, not restarted: due by e_by, it goes. */
        int64_t next;
        if (round == 0) {
            assert_string_equal(key_of(st, "e"), "1/1");
            assert_int_equal(keys_lease_expire(st, e_by, &next), 1);
            assert_true(next > clock_wall_ms() + 3000000);    /* t's, an hour away */
            assert_int_equal(journal_compact(j, st), 0);
        }
        assert_string_equal(key_of(st, "e"), "-");
        if (round == 1) {      /* t's deadline came through the compaction too */
            assert_int_equal(keys_lease_expire(st, clock_wall_ms() + 3601000, &next), 1);
            assert_string_equal(key_of(st, "t"), "-");
        }
        jclose(j, st);
    }
    buf_free(&want);
}

/* A list INITFILE made (a REPLACE with its snapshot file), then dropped: once the DROP
 * is on disk the file may go, and the next start must not need it. */
static void test_drop_replaced(void **s)
{
    (void)s;
    store *st;
    uint64_t lsn;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    assert_int_equal(store_replace(st, "init", lines("i", 10), &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(size_of(path_of("snap-0000000001-0000000001.dat")) > 0, 1);
    assert_int_equal(store_drop(st, "init", &lsn), STORE_OK);
    settle(lsn);
    assert_int_equal(store_add(st, "other", "x", 1, 1, 0, &lsn), STORE_OK);
    settle(lsn);
    jclose(j, st);
    for (int round = 0; round < 2; round++) {
        j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
        assert_int_equal(length_of(st, "init"), (size_t)-1);
        assert_int_equal(length_of(st, "other"), 1);
        jclose(j, st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_many_all_or_none),
        cmocka_unit_test(test_drop_tombstone),
        cmocka_unit_test(test_key_ttl),
        cmocka_unit_test_setup_teardown(test_journal_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_drop_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clear_unrecorded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
