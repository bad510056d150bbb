/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal_mirror.c - a replica's state directory written by committed pieces: a
 * compaction's new log generation (JOURNAL_GEN) and its tidying (JOURNAL_TIDY), and a node
 * that comes to lead while the newest generation holds no record yet. */
#include "journal_fixture.h"

/* A follower's journal on the fixture's directory, its store empty. */
static journal *replica(store **st)
{
    buf err = BUF_INIT;
    *st = keyed_store(NULL);
    assert_non_null(*st);
    journal *j = journal_open_replica(state, *st, &err);
    if (!j)
        fprintf(stderr, "journal_open_replica: %s\n", err.data);
    assert_non_null(j);
    buf_free(&err);
    return j;
}

/* A committed batch of another leader's: n PUSHes of name's lines base..base+n-1. */
static void pushes(journal *j, const char *name, int base, int n)
{
    buf batch = BUF_INIT, body = BUF_INIT;
    for (int i = 0; i < n; i++) {
        char line[32];
        int len = snprintf(line, sizeof line, "%s-%d", name, base + i);
        buf_clear(&body);
        assert_int_equal(wal_enc_push(&body, name, 1, line, (size_t)len), 0);
        assert_int_equal(wal_frame(&batch, body.data, body.len), 0);
    }
    assert_int_equal(journal_mirror_batch(j, 0, batch.data, batch.len), 0);
    buf_free(&batch);
    buf_free(&body);
}

/* A batch of one record: a compaction's SNAPSHOT of name (inline, empty) or COMPACT_DONE. */
static void one_record(journal *j, int done, uint32_t gen, const char *name)
{
    buf batch = BUF_INIT, body = BUF_INIT;
    if (done)
        assert_int_equal(wal_enc_done(&body, gen, 1), 0);
    else   /* inline (id 0): its count of lines, none */
        assert_int_equal(wal_enc_ref(&body, WAL_SNAPSHOT, name, 0) ||
                         wal_put_varint(&body, 0), 0);
    assert_int_equal(wal_frame(&batch, body.data, body.len), 0);
    assert_int_equal(journal_mirror_batch(j, 0, batch.data, batch.len), 0);
    buf_free(&batch);
    buf_free(&body);
}

static size_t length_of(store *st, const char *name)
{
    size_t n = 0;
    assert_int_equal(store_length(st, name, &n), STORE_OK);
    return n;
}

/* A leader deposed right after its JOURNAL_GEN: every node holds a newest log with no
 * record, which recovery leaves out. The next leader loads the log before it (seed 308387
 * of the fault checker: "the log open (generation 2, 24 bytes) is not the one recovery
 * ends in", and no node could lead again). */
static void test_lead_with_empty_generation(void **s)
{
    store *st;
    journal *j = replica(&st);
    pushes(j, "a", 0, 5);
    assert_int_equal(journal_mirror_gen(j, 0, 2), 0);
    assert_true(size_of(path_of("journal.0000000002.log")) == WAL_HEADER_SIZE);
    buf err = BUF_INIT;
    if (journal_reload(j, st, &err) != 0)
        fail_msg("journal_reload: %s", err.data);
    buf_free(&err);
    assert_int_equal(length_of(st, "a"), 5);
    journal_close(j);
    store_free(st);
}

/* A compaction through the cluster: the new generation, its records, COMPACT_DONE, then
 * the tidying removes the older log (and only it); a start from what is left finds the
 * same lists. A generation the directory has already is refused. */
static void test_generation_and_tidy(void **s)
{
    store *st;
    journal *j = replica(&st);
    pushes(j, "a", 0, 5);
    pushes(j, "b", 0, 3);
    assert_int_equal(journal_mirror_gen(j, 0, 1), -1);
    assert_int_equal(journal_mirror_gen(j, 0, 2), 0);
    pushes(j, "a", 5, 2);          /* a change between the switch and a's snapshot */
    one_record(j, 0, 2, "b");      /* b's snapshot: empty */
    one_record(j, 1, 2, NULL);
    pushes(j, "b", 10, 1);
    /* Tidying for a generation that is not the open one removes nothing. */
    assert_int_equal(journal_mirror_tidy(j, 0, 1, NULL, 0), 0);
    assert_true(size_of(path_of("journal.0000000001.log")) > 0);
    assert_int_equal(journal_mirror_tidy(j, 0, 2, NULL, 0), 0);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    assert_true(size_of(path_of("journal.0000000002.log")) > WAL_HEADER_SIZE);
    journal_close(j);
    store_free(st);
    /* A lone start of the directory: generation 1 is gone, so a is what generation 2
     * holds of it (no snapshot of a was taken here) and b its snapshot and the line
     * after it. */
    j = jopen(CONF_FSYNC_ALWAYS, 0, &st);
    assert_int_equal(length_of(st, "a"), 2);
    assert_int_equal(length_of(st, "b"), 1);
    jclose(j, st);
}

int main(void)
{
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lead_with_empty_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generation_and_tidy, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
