/* test_journal_io.c - the journal's file I/O: write and fsync errors through the seam
 * (changes refused, then accepted again after a rewrite), group commit, the everysec
 * timer, --fresh and the directory lock. */
#include "journal_fixture.h"

/* ---- fresh, lock -------------------------------------------------------------------------- */

static void test_fresh(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    workload(st);
    jclose(j, st);
    j = jopen(CONF_FSYNC_NO, 1, &st);
    assert_int_equal(store_count(st), 0);
    add(st, "new", "1", 1);
    buf want = dump(st);
    jclose(j, st);
    sh("ls -d %s/old-*/journal.0000000001.log >/dev/null", state);
    reopen_same(&want, CONF_FSYNC_NO);
    buf_free(&want);
}

static void test_locked(void **s)
{
    store *st, *st2 = store_create(NULL);
    buf err = BUF_INIT;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_null(journal_open(state, CONF_FSYNC_NO, st2, 0, &err));
    assert_non_null(strstr(err.data, "in use"));
    assert_int_equal(journal_check(state, 1), 1);      /* no repair under a running stsd */
    jclose(j, st);
    store_free(st2);
    buf_free(&err);
}

/* ---- write errors through the seam ------------------------------------------------------ */

static atomic_int writes_left;

/* Lets writes_left writes through, then fails; half a write first, to leave a partial
 * record behind. */
static ssize_t failing_write(int fd, const void *p, size_t n)
{
    if (atomic_fetch_sub(&writes_left, 1) > 0)
        return write(fd, p, n);
    if (n > 1 && atomic_load(&writes_left) == -1)
        return write(fd, p, n / 2);
    errno = ENOSPC;
    return -1;
}

static int failing_fsync(int fd)
{
    errno = EIO;
    return -1;
}

static void test_write_error(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    add(st, "q", "before", 1);
    atomic_store(&writes_left, 0);
    wal_sys.write = failing_write;
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0), STORE_JOURNAL);
    assert_true(journal_broken(j));
    wal_sys.write = write;
    /* Healthy again, but changes stay refused until the log is rewritten from memory. */
    assert_int_equal(store_add(st, "q", "refused2", 8, 1, 0), STORE_JOURNAL);
    buf out = BUF_INIT;
    size_t count;
    assert_int_equal(store_read(st, "q", STORE_FIRST, 0, 1, &out, &count), STORE_JOURNAL);
    assert_int_equal(store_reset(st, "q"), STORE_JOURNAL);
    assert_int_equal(store_replace(st, "q", lines("x", 3)), STORE_JOURNAL);
    assert_int_equal(journal_compact(j, st), 0);
    assert_false(journal_broken(j));
    add(st, "q", "after", 1);
    buf want = dump(st);
    assert_string_equal(want.data, "q (2)\n  6:before\n  5:after\n");
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
    buf_free(&out);
}

/* The background thread repairs by itself once the fault is gone. */
static void test_write_error_background(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    add(st, "q", "before", 1);
    atomic_store(&writes_left, 0);
    wal_sys.write = failing_write;
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0), STORE_JOURNAL);
    sleep(2);                  /* attempts fail while the fault lasts */
    assert_true(journal_broken(j));
    wal_sys.write = write;
    for (int i = 0; i < 50 && journal_broken(j); i++)
        usleep(100000);
    assert_false(journal_broken(j));
    add(st, "q", "after", 1);
    /* fsync failures refuse changes too (fsync=always). */
    wal_sys.fsync = failing_fsync;
    assert_int_equal(store_add(st, "q", "unsure", 6, 1, 0), STORE_OK);
    assert_true(journal_broken(j));
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0), STORE_JOURNAL);
    wal_sys.fsync = fsync;
    for (int i = 0; i < 50 && journal_broken(j); i++)
        usleep(100000);
    assert_false(journal_broken(j));
    buf want = dump(st);
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_ALWAYS);
    buf_free(&want);
}

/* Closing while changes are refused rewrites the log from memory first. */
static void test_close_while_broken(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    add(st, "q", "kept", 1);
    journal_mark_broken(j);
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0), STORE_JOURNAL);
    buf want = dump(st);
    jclose(j, st);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    assert_true(size_of(path_of("journal.0000000002.log")) > 0);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
}

/* ---- fsync policies ---------------------------------------------------------------------- */

static atomic_int fsyncs;

static int slow_counting_fsync(int fd)
{
    atomic_fetch_add(&fsyncs, 1);
    usleep(2000);             /* a disk's flush */
    return 0;
}

#define WRITERS 8
#define PER_WRITER 150

static void *writer(void *arg)
{
    store *st = arg;
    for (int i = 0; i < PER_WRITER; i++)
        add(st, "q", "x", 1);
    return NULL;
}

static void test_group_commit(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    pthread_t t[WRITERS];
    atomic_store(&fsyncs, 0);
    wal_sys.fsync = slow_counting_fsync;
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, writer, st), 0);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(t[i], NULL);
    int n = atomic_load(&fsyncs);
    fprintf(stderr, "group commit: %d changes, %d fsyncs\n", WRITERS * PER_WRITER, n);
    assert_true(n < WRITERS * PER_WRITER / 2);
    wal_sys.fsync = fsync;
    jclose(j, st);
}

static void test_everysec_timer(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    wal_sys.fsync = slow_counting_fsync;
    atomic_store(&fsyncs, 0);
    add(st, "q", "one", 1);
    assert_int_equal(atomic_load(&fsyncs), 0);     /* not on the write itself */
    usleep(2500000);
    assert_int_equal(atomic_load(&fsyncs), 1);     /* by the timer, without another write */
    wal_sys.fsync = fsync;
    jclose(j, st);
}

int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_while_broken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_everysec_timer, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
