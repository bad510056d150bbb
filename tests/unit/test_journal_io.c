/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal_io.c - the journal's file I/O: write and fsync errors through the seam
 * (answers held, changes refused, then accepted again after a rewrite), a full disk,
 * group commit (blocking and by callback), the everysec timer, superseded snapshot files,
 * --fresh and the directory lock. */
#include "journal_fixture.h"

#include <sys/mman.h>

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
    store *st, *st2 = keyed_store(NULL);
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
static ssize_t failing_pwrite(int fd, const void *p, size_t n, off_t off)
{
    if (atomic_fetch_sub(&writes_left, 1) > 0)
        return pwrite(fd, p, n, off);
    if (n > 1 && atomic_load(&writes_left) == -1)
        return pwrite(fd, p, n / 2, off);
    errno = EIO;
    return -1;
}

/* No mapping: the log is written (a write error is only met by a written log). */
static void *no_map(int fd, size_t len)
{
    errno = ENODEV;
    return MAP_FAILED;
}

static int failing_fsync(int fd)
{
    errno = EIO;
    return -1;
}

/* A change's answer, as a parked request would get it. */
typedef struct answer {
    atomic_int calls;
    atomic_int rc;
} answer;

static void on_durable(void *ctx, int rc)
{
    answer *a = ctx;
    atomic_store(&a->rc, rc);
    atomic_fetch_add(&a->calls, 1);
}

/* Adds line to list q and asks to be told once it is durable: 0 (durable now) or 1. */
static int add_async(journal *j, store *st, const char *line, answer *a)
{
    uint64_t lsn;
    atomic_store(&a->calls, 0);
    atomic_store(&a->rc, 99);
    assert_int_equal(store_add(st, "q", line, strlen(line), 1, 0, &lsn), STORE_OK);
    int rc = journal_when_durable(j, lsn, on_durable, a);
    assert_true(rc == 0 || rc == 1);
    return rc;
}

/* Callbacks come from the journal's threads: give them a moment. */
static void wait_calls(answer *a, int n)
{
    for (int i = 0; i < 200 && atomic_load(&a->calls) < n; i++)
        usleep(5000);
}

static void wait_healthy(journal *j)
{
    for (int i = 0; i < 50 && journal_broken(j); i++)
        usleep(100000);
    assert_false(journal_broken(j));
}

/* A write that fails holds the answer of the change it carried (applied in memory) until
 * a rewrite from memory is on disk; the changes after it are refused. */
static void test_write_error(void **s)
{
    store *st;
    answer a;
    wal_sys.map = no_map;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    add(st, "q", "before", 1);
    atomic_store(&writes_left, 0);
    wal_sys.pwrite = failing_pwrite;
    assert_int_equal(add_async(j, st, "held", &a), 1);
    assert_true(journal_broken(j));
    wal_sys.pwrite = pwrite;
    /* Healthy again, but changes stay refused until the log is rewritten from memory. */
    assert_int_equal(store_add(st, "q", "refused2", 8, 1, 0, NULL), STORE_JOURNAL);
    buf out = BUF_INIT;
    size_t count;
    assert_int_equal(store_read(st, "q", STORE_FIRST, 0, 1, &out, &count, NULL), STORE_JOURNAL);
    assert_int_equal(store_reset(st, "q", NULL), STORE_JOURNAL);
    assert_int_equal(store_replace(st, "q", lines("x", 3), NULL), STORE_JOURNAL);
    assert_int_equal(atomic_load(&a.calls), 0);
    assert_int_equal(journal_compact(j, st), 0);
    assert_false(journal_broken(j));
    assert_int_equal(atomic_load(&a.calls), 1);       /* answered once on disk, as done */
    assert_int_equal(atomic_load(&a.rc), 0);
    add(st, "q", "after", 1);
    buf want = dump(st);
    assert_string_equal(want.data, "q (3)\n  6:before\n  4:held\n  5:after\n");
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
    buf_free(&out);
}

/* fsync=always: a failed write or fdatasync holds the answers of the changes it carried
 * until the background thread has rewritten the log, by itself, once the fault is gone. */
static void test_log_error_background(void **s)
{
    store *st;
    answer a;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    add(st, "q", "before", 1);
    atomic_store(&writes_left, 0);
    wal_sys.pwrite = failing_pwrite;
    assert_int_equal(add_async(j, st, "held", &a), 1);
    for (int i = 0; i < 50 && !journal_broken(j); i++)
        usleep(10000);
    assert_true(journal_broken(j));
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0, NULL), STORE_JOURNAL);
    sleep(2);                  /* attempts fail while the fault lasts */
    assert_true(journal_broken(j));
    assert_int_equal(atomic_load(&a.calls), 0);
    wal_sys.pwrite = pwrite;
    wait_healthy(j);
    wait_calls(&a, 1);
    assert_int_equal(atomic_load(&a.calls), 1);
    assert_int_equal(atomic_load(&a.rc), 0);
    add(st, "q", "after", 1);
    /* The same for fdatasync. */
    wal_sys.fdatasync = failing_fsync;
    wal_sys.fsync = failing_fsync;
    assert_int_equal(add_async(j, st, "unsure", &a), 1);
    for (int i = 0; i < 50 && !journal_broken(j); i++)
        usleep(10000);
    assert_true(journal_broken(j));
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0, NULL), STORE_JOURNAL);
    usleep(1500000);
    assert_int_equal(atomic_load(&a.calls), 0);
    wal_io_reset();
    wait_healthy(j);
    wait_calls(&a, 1);
    assert_int_equal(atomic_load(&a.calls), 1);
    assert_int_equal(atomic_load(&a.rc), 0);
    buf want = dump(st);
    assert_string_equal(want.data, "q (4)\n  6:before\n  4:held\n  5:after\n  6:unsure\n");
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_ALWAYS);
    buf_free(&want);
}

/* Stopping while the log still fails: the held answers are given up (-1), never OK. */
static void test_held_until_stop(void **s)
{
    store *st;
    answer a;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    add(st, "q", "kept", 1);
    wal_sys.fdatasync = failing_fsync;
    wal_sys.fsync = failing_fsync;
    assert_int_equal(add_async(j, st, "unsure", &a), 1);
    for (int i = 0; i < 50 && !journal_broken(j); i++)
        usleep(10000);
    assert_true(journal_broken(j));
    journal_cancel_waits(j);
    assert_int_equal(atomic_load(&a.calls), 1);
    assert_int_equal(atomic_load(&a.rc), -1);
    uint64_t lsn;
    assert_int_equal(store_add(st, "q", "late", 4, 1, 0, &lsn), STORE_JOURNAL);
    jclose(j, st);
    wal_io_reset();
    /* Whether "unsure" reached the disk after all is the kernel's business; what was
     * answered OK is there. */
    j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    buf got = dump(st);
    assert_memory_equal(got.data, "q (", 3);
    assert_non_null(strstr(got.data, "\n  4:kept\n"));
    assert_null(strstr(got.data, "late"));
    buf_free(&got);
    jclose(j, st);
}

/* Closing while changes are refused rewrites the log from memory first. */
static void test_close_while_broken(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    add(st, "q", "kept", 1);
    journal_mark_broken(j);
    assert_int_equal(store_add(st, "q", "refused", 7, 1, 0, NULL), STORE_JOURNAL);
    buf want = dump(st);
    jclose(j, st);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    assert_true(size_of(path_of("journal.0000000002.log")) > 0);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
}

/* ---- a full disk: space for the log is reserved ahead, so a change is refused before it is
 * applied, and accepted again as soon as there is room, with no rewrite ------------------- */

static atomic_int reserve_fails;

static int counting_reserve(int fd, off_t off, off_t len)
{
    if (atomic_load(&reserve_fails)) {
        errno = ENOSPC;
        return -1;
    }
    return fallocate(fd, 0, off, len);
}

static void test_no_space(void **s)
{
    store *st;
    char line[4096];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\0';
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    wal_sys.reserve = counting_reserve;
    atomic_store(&reserve_fails, 1);
    /* The first chunk was reserved by the first record; fill it. */
    int refused = 0;
    for (int i = 0; i < 1000 && !refused; i++) {
        uint64_t lsn;
        store_rc rc = store_add(st, "q", line, strlen(line), 1, 0, &lsn);
        if (rc == STORE_JOURNAL)
            refused = 1;
        else
            settle(lsn);
    }
    assert_true(refused);
    assert_false(journal_broken(j));              /* nothing to rewrite: the log is whole */
    size_t len, after;
    assert_int_equal(store_length(st, "q", &len), STORE_OK);
    assert_int_equal(store_add(st, "q", "no", 2, 1, 0, NULL), STORE_JOURNAL);
    atomic_store(&reserve_fails, 0);
    add(st, "q", "room again", 1);
    assert_int_equal(store_length(st, "q", &after), STORE_OK);
    assert_int_equal(after, len + 1);
    buf want = dump(st);
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_ALWAYS);
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
        add(st, "q", "x", 1);    /* waits for its fdatasync */
    return NULL;
}

/* Threads that each wait for their change share fdatasyncs. */
static void test_group_commit(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    pthread_t t[WRITERS];
    atomic_store(&fsyncs, 0);
    wal_sys.fdatasync = slow_counting_fsync;
    for (int i = 0; i < WRITERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, writer, st), 0);
    for (int i = 0; i < WRITERS; i++)
        pthread_join(t[i], NULL);
    int n = atomic_load(&fsyncs);
    fprintf(stderr, "group commit: %d changes, %d fdatasyncs\n", WRITERS * PER_WRITER, n);
    assert_true(n < WRITERS * PER_WRITER / 2);
    wal_io_reset();
    jclose(j, st);
}

#define ASYNC_CHANGES 2000

/* Nobody waits with a thread: one writer takes all that came in during the last
 * fdatasync, so batches grow with the load, and every answer comes once, after its sync. */
static void test_group_commit_async(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    static answer a[ASYNC_CHANGES];
    static int how[ASYNC_CHANGES];
    uint64_t lsn = 0;
    atomic_store(&fsyncs, 0);
    wal_sys.fdatasync = slow_counting_fsync;
    int later = 0;
    for (int i = 0; i < ASYNC_CHANGES; i++) {
        how[i] = add_async(j, st, "y", &a[i]);
        later += how[i] == 1;
    }
    assert_int_equal(store_add(st, "q", "z", 1, 1, 0, &lsn), STORE_OK);
    assert_int_equal(journal_wait(j, lsn), 0);
    int n = atomic_load(&fsyncs), called = 0;
    for (int i = 0; i < ASYNC_CHANGES; i++)
        if (how[i] == 1)
            wait_calls(&a[i], 1);
    for (int i = 0; i < ASYNC_CHANGES; i++) {
        /* Called back exactly once, unless durable already when it asked. */
        assert_int_equal(atomic_load(&a[i].calls), how[i] == 1);
        called += atomic_load(&a[i].calls);
        if (atomic_load(&a[i].calls))
            assert_int_equal(atomic_load(&a[i].rc), 0);
    }
    fprintf(stderr, "async group commit: %d changes (%d called back), %d fdatasyncs\n",
            ASYNC_CHANGES, called, n);
    assert_true(later > ASYNC_CHANGES / 2);
    assert_true(n < ASYNC_CHANGES / 20);
    wal_io_reset();
    jclose(j, st);
}

/* A lone change waits for one fdatasync, not for a timer or for more changes. */
static void test_lone_change(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    struct timespec t0, t1;
    add(st, "q", "warm", 1);
    atomic_store(&fsyncs, 0);
    wal_sys.fdatasync = slow_counting_fsync;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    add(st, "q", "alone", 1);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    fprintf(stderr, "a lone change: %.2f ms, %d fdatasync\n", ms, atomic_load(&fsyncs));
    assert_int_equal(atomic_load(&fsyncs), 1);
    wal_io_reset();
    jclose(j, st);
}

static void test_everysec_timer(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(journal_start(j, st), 0);
    wal_sys.fdatasync = slow_counting_fsync;
    atomic_store(&fsyncs, 0);
    add(st, "q", "one", 1);
    assert_int_equal(atomic_load(&fsyncs), 0);     /* not on the write itself */
    usleep(2500000);
    assert_int_equal(atomic_load(&fsyncs), 1);     /* by the timer, without another write */
    wal_io_reset();
    jclose(j, st);
}

/* ---- superseded snapshot files --------------------------------------------------------------- */

static int count_snaps(void)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '^snap-.*\\.dat$'", state);
    FILE *f = popen(cmd, "r");
    int n = -1;
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%d", &n), 1);
    pclose(f);
    return n;
}

/* INITFILE over and over: each new snapshot file makes the last one useless once its
 * record is on disk, and it is removed then, across restarts too. */
static void test_superseded_snapshots(void **s)
{
    static const conf_fsync policies[] = {CONF_FSYNC_ALWAYS, CONF_FSYNC_NO};
    for (size_t p = 0; p < 2; p++) {
        store *st;
        uint64_t lsn;
        journal *j = jopen(policies[p], 0, &st);
        assert_int_equal(journal_start(j, st), 0);
        for (int i = 0; i < 10; i++) {
            assert_int_equal(store_replace(st, "l", lines("v", 1000 + (size_t)i), &lsn), STORE_OK);
            settle(lsn);
            assert_int_equal(store_replace(st, "m", lines("w", 500), &lsn), STORE_OK);
            settle(lsn);
        }
        for (int i = 0; i < 30 && count_snaps() > 2; i++)
            usleep(100000);
        assert_int_equal(count_snaps(), 2);
        buf want = dump(st);
        jclose(j, st);
        j = jopen(policies[p], 0, &st);
        assert_int_equal(journal_start(j, st), 0);
        assert_int_equal(store_replace(st, "l", lines("v", 7), &lsn), STORE_OK);
        settle(lsn);
        for (int i = 0; i < 30 && count_snaps() > 2; i++)
            usleep(100000);
        assert_int_equal(count_snaps(), 2);
        jclose(j, st);
        j = jopen(policies[p], 0, &st);
        buf got = dump(st);
        assert_non_null(strstr(got.data, "l (7)\n"));
        assert_non_null(strstr(want.data, "m (500)\n"));
        assert_non_null(strstr(got.data, "m (500)\n"));
        buf_free(&got);
        buf_free(&want);
        jclose(j, st);
        sh("rm -rf %s", state);
    }
}

int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_fresh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_locked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_error_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_until_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_close_while_broken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_space, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_group_commit_async, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lone_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_everysec_timer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_superseded_snapshots, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
