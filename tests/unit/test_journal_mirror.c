/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal_mirror.c - a replica's state directory written by committed pieces: a
 * compaction's new log generation (JOURNAL_GEN) and its tidying (JOURNAL_TIDY), a node
 * that comes to lead while the newest generation holds no record yet, and a leader that
 * is deposed with a change on its way (journal_demote), and a follower's reads from its
 * hot standby (journal_view_*). */
#include <stdatomic.h>
#include <unistd.h>

#include "journal_fixture.h"
#include "base/clock.h"
#include "meet/keys.h"

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

/* The cluster as the demotion test sees it: batches kept, never committed, until
 * `committing`; then each is committed as it is shipped (without the directory's write:
 * only the journal's count is looked at). */
static _Atomic uint64_t shipped_upto;
static atomic_int committing;

static int keep_piece(void *ctx, journal_piece kind, uint64_t id, const void *data,
                      size_t len)
{
    (void)ctx, (void)kind, (void)id, (void)data, (void)len;
    return -1;
}

static int keep_batch(void *ctx, const void *data, size_t len, uint64_t upto)
{
    (void)data, (void)len;
    atomic_store(&shipped_upto, upto);
    if (atomic_load(&committing))
        journal_shipped(ctx, upto, 0);
    return 0;
}

static int keep_file(void *ctx, uint64_t id, int fd, uint64_t size)
{
    (void)ctx, (void)id, (void)fd, (void)size;
    return -1;
}

/* A leader deposed with a change on its way: the change's wait fails and stays failed
 * while the node, following, moves its lsns past it; the batch's late outcome changes
 * nothing; no change is taken while it follows; led again, the state is the committed
 * one, from the standby, without the change. */
static void test_demote(void **s)
{
    (void)s;
    store *st;
    journal *j = replica(&st);
    static const journal_ship_hooks h = {keep_piece, keep_batch, keep_file, 1};
    journal_set_ship(j, &h, j);
    journal_attach(j, st);
    pushes(j, "a", 0, 3);
    buf err = BUF_INIT;
    if (journal_reload(j, st, &err) != 0)
        fail_msg("journal_reload: %s", err.data);
    assert_int_equal(journal_leading(j), 1);
    uint64_t lsn = 0;
    assert_int_equal(store_add(st, "a", "uncommitted", 11, 1, 0, &lsn), STORE_OK);
    for (int i = 0; i < 2000 && atomic_load(&shipped_upto) < lsn; i++)
        usleep(1000);
    assert_true(atomic_load(&shipped_upto) >= lsn);
    assert_int_equal(journal_answerable(j, lsn), 1);
    uint64_t at = journal_demote(j);
    assert_true(at >= lsn);
    assert_int_equal(journal_leading(j), 0);
    assert_int_equal(journal_demote(j), 0);       /* once */
    assert_int_equal(journal_answerable(j, lsn), -1);
    journal_shipped(j, atomic_load(&shipped_upto), -1);     /* late: ignored */
    assert_int_equal(journal_broken(j), 0);
    pushes(j, "a", 10, 5);                                  /* the next leader's */
    assert_int_equal(journal_answerable(j, lsn), -1);
    assert_int_equal(journal_when_durable(j, lsn, NULL, NULL), -1);
    assert_int_equal(store_add(st, "a", "follower", 8, 1, 0, NULL), STORE_JOURNAL);
    size_t n;
    atomic_store(&committing, 1);     /* the next leadership's batches commit */
    assert_int_equal(store_clear(st, &n), 0);
    assert_int_equal(n, 1);
    keys_clear(st);
    if (journal_reload(j, st, &err) != 0)
        fail_msg("journal_reload: %s", err.data);
    buf_free(&err);
    assert_int_equal(length_of(st, "a"), 8);
    buf out = BUF_INIT;
    size_t count;
    /* KEEP=TRUE: the last line read, and moved to the front (a change, committed). */
    assert_int_equal(store_read(st, "a", STORE_LAST, 1, 1, &out, &count, NULL), STORE_OK);
    size_t off = 0, len = 0;
    const char *line = store_next_line(&out, &off, &len);
    assert_non_null(line);
    assert_int_equal(len, 4);
    assert_memory_equal(line, "a-14", 4);
    buf_free(&out);
    /* Leading again: a change is taken and shipped after everything before. */
    assert_int_equal(store_add(st, "a", "again", 5, 1, 0, &lsn), STORE_OK);
    assert_true(lsn > at);
    for (int i = 0; i < 2000 && journal_answerable(j, lsn) == 1; i++)
        usleep(1000);
    assert_int_equal(journal_answerable(j, lsn), 0);
    journal_attach(NULL, st);
    journal_close(j);
    store_free(st);
}

static void status_line(const char *name, size_t len, void *ctx)
{
    buf_printf(ctx, "%s=%zu;", name, len);
}

static void key_line(const key_info *k, void *ctx)
{
    buf_printf(ctx, "%s=%.*s@%llu;", k->name, (int)k->len, k->value,
               (unsigned long long)k->version);
}

/* A batch of one key record, as the leader's keys would write it. */
static void key_record(journal *j, int type, const char *name, uint64_t version,
                       const char *value)
{
    buf batch = BUF_INIT, body = BUF_INIT;
    assert_int_equal(wal_enc_key(&body, type, name, 0, 0, 0, 0, version, value,
                                 value ? strlen(value) : 0), 0);
    assert_int_equal(wal_frame(&batch, body.data, body.len), 0);
    assert_int_equal(journal_mirror_batch(j, 0, batch.data, batch.len), 0);
    buf_free(&batch);
    buf_free(&body);
}

/* The reads a follower answers from its standby: lengths, STATUS's order, PEEK, keys and
 * KEYS's order, after waiting for the position the journal counted; none once the node
 * leads (the standby taken). */
static void test_view(void **s)
{
    (void)s;
    store *st;
    journal *j = replica(&st);
    pushes(j, "zeta", 0, 2);
    pushes(j, "alpha", 0, 3);
    key_record(j, WAL_KEY_SET, "k2", 4, "two");
    key_record(j, WAL_KEY_SET, "k1", 1, "one");
    key_record(j, WAL_KEY_SET, "gone", 2, "x");
    key_record(j, WAL_KEY_DEL, "gone", 0, NULL);
    uint64_t pos = journal_view_position(j);
    assert_true(pos > 0);
    assert_int_equal(journal_view_wait(j, pos, clock_now_ms() + 5000), 0);
    assert_int_equal(journal_view_wait(j, pos + 1, clock_now_ms() + 20), -1);
    assert_int_equal(journal_view_begin(j), 0);
    size_t n = 99;
    assert_int_equal(journal_view_length(j, "alpha", &n), STORE_OK);
    assert_int_equal(n, 3);
    assert_int_equal(journal_view_length(j, "beta", &n), STORE_NOT_LOADED);
    buf out = BUF_INIT;
    assert_int_equal(journal_view_status(j, status_line, &out), 2);
    assert_string_equal(out.data, "alpha=3;zeta=2;");
    buf_clear(&out);
    uint64_t v = 0;
    assert_int_equal(journal_view_get(j, "k2", &out, &v), STORE_OK);
    assert_int_equal(v, 4);
    assert_memory_equal(out.data, "two", 3);
    buf_clear(&out);
    assert_int_equal(journal_view_get(j, "gone", &out, &v), STORE_NO_KEY);
    assert_int_equal(journal_view_get(j, "never", &out, &v), STORE_NO_KEY);
    assert_int_equal(journal_view_keys(j, NULL, key_line, &out), 2);
    assert_string_equal(out.data, "k1=one@1;k2=two@4;");
    buf_clear(&out);
    assert_int_equal(journal_view_keys(j, "k2", key_line, &out), 1);
    buf_clear(&out);
    store_peek_req q = {1, 10, NULL, 100, 100};
    size_t length = 0, next = 0, off = 0, at, len;
    assert_int_equal(journal_view_peek(j, "alpha", &q, &out, &length, &next), STORE_OK);
    assert_int_equal(length, 3);
    assert_int_equal(next, SIZE_MAX);
    const char *line = store_next_peek(&out, &off, &at, &len);
    assert_non_null(line);
    assert_int_equal(at, 1);
    assert_memory_equal(line, "alpha-1", len);
    list *cols = NULL;
    assert_int_equal(journal_view_columns(j, "alpha", &cols), STORE_OK);
    assert_int_equal(list_column_count(cols), 0);
    list_free(cols);
    assert_int_equal(journal_view_columns(j, "beta", &cols), STORE_NOT_LOADED);
    journal_view_end(j);
    buf_free(&out);
    /* Leading: the store is the state, the standby is gone. */
    buf err = BUF_INIT;
    if (journal_reload(j, st, &err) != 0)
        fail_msg("journal_reload: %s", err.data);
    buf_free(&err);
    assert_int_equal(journal_view_begin(j), -1);
    assert_int_equal(length_of(st, "alpha"), 3);
    journal_attach(NULL, st);
    journal_close(j);
    store_free(st);
}

int main(void)
{
    log_set_level(LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lead_with_empty_generation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_generation_and_tidy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_demote, setup, teardown),
        cmocka_unit_test_setup_teardown(test_view, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
