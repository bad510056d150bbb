/* SPDX-License-Identifier: Apache-2.0 */
/* test_standby.c - the hot standby (journal/journal_standby.c): a history's records fed
 * in batches, a compaction's SNAPSHOT and COMPACT_DONE records among them, give the state
 * that a start's replay gives from the directory; a batch that does not fit stops it. */
#include "journal_fixture.h"
#include "journal/journal_standby.h"
#include "journal/recover.h"

static char dir2[128];

static int setup2(void **s)
{
    if (setup(s) != 0)
        return -1;
    snprintf(dir2, sizeof dir2, "%s/standby", tmp);
    return mkdir(dir2, 0700);
}

/* The snapshot files of the state directory, copied beside the standby's (as a follower
 * gets them, before the records that name them). */
static void copy_snaps(void)
{
    sh("for f in '%s'/snap-*.dat; do [ -e \"$f\" ] && cp -n \"$f\" '%s'/; done; true", state,
       dir2);
}

/* Log gen's bytes now (it may be gone after a compaction); *len: to its last record. */
static char *log_bytes(uint32_t gen, size_t *len)
{
    char name[32];
    size_t n, off = WAL_HEADER_SIZE, next, blen;
    const uint8_t *body;
    const char *why;
    wal_log_name(name, sizeof name, gen);
    char *p = read_all(path_of(name), &n);
    while (wal_next((uint8_t *)p, n, off, &body, &blen, &next, &why) == WAL_OK)
        off = next;
    *len = off;
    return p;
}

/* Pushes the records of a log, after its header, in batches of up to k records. */
static void feed(journal_standby *sb, const char *p, size_t len, uint32_t gen, int k,
                 uint64_t *pos)
{
    size_t off = WAL_HEADER_SIZE, start = off, next, blen;
    const uint8_t *body;
    const char *why;
    int n = 0;
    while (off < len) {
        assert_int_equal(wal_next((const uint8_t *)p, len, off, &body, &blen, &next, &why),
                         WAL_OK);
        off = next;
        if (++n % k == 0 || off == len) {
            *pos += off - start;
            journal_standby_push(sb, p + start, off - start, *pos, gen);
            start = off;
        }
    }
}

static int dump_line2(const char *s, size_t len, void *ctx)
{
    buf_printf(ctx, "%zu:", len);
    buf_append(ctx, s, len);
    buf_puts(ctx, "\n");
    return 0;
}

/* A recovered state as text: lists and their lines, leases, keys, counter leases, runs. */
static buf text_of(const recover_state *rs)
{
    buf b = BUF_INIT;
    for (size_t i = 0; i < rs->nlists; i++) {
        buf_printf(&b, "list %s def %llu (%zu)\n", rs->names[i],
                   (unsigned long long)rs->def_ids[i], list_length(rs->lists[i]));
        list_foreach(rs->lists[i], dump_line2, &b);
    }
    for (size_t i = 0; i < rs->nleases; i++) {
        const struct recover_lease *l = &rs->leases[i];
        buf_printf(&b, "lease %s %llu %lld %.*s owner %.*s\n", rs->names[l->list],
                   (unsigned long long)l->id, (long long)l->until, (int)l->len, l->line,
                   (int)l->owner_len, l->owner ? l->owner : "");
    }
    for (size_t i = 0; i < rs->nkeys; i++)
        buf_printf(&b, "key %s=%.*s v%llu exp %lld\n", rs->keys[i].name, (int)rs->keys[i].len,
                   rs->keys[i].value ? rs->keys[i].value : "",
                   (unsigned long long)rs->keys[i].version, (long long)rs->keys[i].expires);
    for (size_t i = 0; i < rs->nkey_leases; i++)
        buf_printf(&b, "key lease %s %llu %lld %lld\n", rs->keys[rs->key_leases[i].key].name,
                   (unsigned long long)rs->key_leases[i].id,
                   (long long)rs->key_leases[i].until, (long long)rs->key_leases[i].by);
    for (size_t i = 0; i < rs->nruns; i++)
        buf_printf(&b, "run %s %llu\n", rs->runs[i].name, (unsigned long long)rs->runs[i].id);
    return b;
}

/* Changes of every kind beside workload's: leases, owners, keys, ADDMULTI, DROP. */
static void more(store *st, int round)
{
    buf out = BUF_INIT, ids = BUF_INIT;
    size_t count, bad;
    uint64_t v, lsn, id;
    int taken;
    key_out o;
    char name[16];
    snprintf(name, sizeof name, "m%d", round);
    store_span span[3] = {{"x1", 2}, {"x2", 2}, {"x3", 2}};
    assert_int_equal(store_add_many(st, name, span, 3, 1, 0, &bad, &lsn), STORE_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(store_read_leased(st, "big", STORE_FIRST, 1, 3600000, &out, &count,
                                           &ids, NULL), STORE_OK);
        memcpy(&id, ids.data, sizeof id);
        buf_clear(&ids);
        if (i < 2)
            assert_int_equal(store_settle(st, "big", i, id, NULL, 0, NULL), STORE_OK);
    }
    assert_int_equal(store_read_owned(st, "q", STORE_FIRST, "alice", 5, 3600000, &out, &id,
                                      &taken, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "a", "one", 3, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_set_ttl(st, "t", "x", 1, -1, 3600000, &v, NULL), STORE_OK);
    assert_int_equal(keys_del(st, "a", -1, &v, NULL), STORE_OK);
    key_incr q = {5, INT64_MIN, INT64_MAX, 3600000, 0};
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);
    assert_int_equal(keys_settle(st, "n", round % 2, o.lease, &o), STORE_OK);
    assert_int_equal(keys_expire(st, "n", 7200000, &lsn), STORE_OK);
    assert_int_equal(store_drop(st, round ? "m0" : "bin", NULL), STORE_OK);
    add(st, "back", "b", 1);
    assert_int_equal(store_drop(st, "back", NULL), STORE_OK);
    add(st, "back", "again", 1);
    buf_free(&out);
    buf_free(&ids);
}

/* A history with a compaction in its middle: fed to a standby, the state it hands over
 * is the one recover_run finds in the directory (def ids and bookkeeping included). */
static void test_standby_equals_replay(void **s)
{
    store *st;
    size_t len1, len2;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    workload(st);
    more(st, 0);
    copy_snaps();
    char *log1 = log_bytes(1, &len1);
    assert_int_equal(journal_compact(j, st), 0);
    copy_snaps();
    uint64_t lsn;
    assert_int_equal(store_replace(st, "big2", lines("big2", 3000), &lsn), STORE_OK);
    settle(lsn);
    copy_snaps();
    take(st, "big2", STORE_RANDOM, 0, 10);
    add(st, "big2", "tail", 0);
    take(st, "q", STORE_LAST, 1, 2);
    more(st, 1);
    take(st, "big", STORE_RANDOM, 0, 7);
    jclose(j, st);
    copy_snaps();
    char *log2 = log_bytes(2, &len2);

    recover_state want, got;
    buf err = BUF_INIT;
    int dirfd = open(state, O_RDONLY | O_DIRECTORY);
    assert_true(dirfd >= 0);
    assert_int_equal(recover_run(dirfd, &want, NULL, &err), 0);
    close(dirfd);
    int fd2 = open(dir2, O_RDONLY | O_DIRECTORY);
    assert_true(fd2 >= 0);
    uint64_t pos = 0;
    journal_standby *sb = journal_standby_new(fd2, dir2, pos);
    assert_non_null(sb);
    feed(sb, log1, len1, 1, 3, &pos);
    feed(sb, log2, len2, 2, 5, &pos);
    assert_int_equal(journal_standby_take(sb, pos - 1, &got, &err), -1);  /* not there */
    journal_standby_free(sb);

    pos = 0;
    sb = journal_standby_new(fd2, dir2, pos);
    feed(sb, log1, len1, 1, 1, &pos);
    feed(sb, log2, len2, 2, 1000, &pos);
    journal_standby_wait(sb);
    buf_clear(&err);
    if (journal_standby_take(sb, pos, &got, &err) != 0)
        fail_msg("take: %s", err.data);
    buf a = text_of(&want), b = text_of(&got);
    same(&a, &b);
    assert_true(want.nlists > 5 && want.nleases > 2 && want.nkeys >= 2 && want.nkey_leases);
    assert_int_equal(got.last_gen, 2);
    assert_int_equal(got.last_snap_n, want.last_snap_n);
    journal_standby_free(sb);
    close(fd2);
    buf_free(&a);
    buf_free(&b);
    buf_free(&err);
    recover_free(&want);
    recover_free(&got);
    free(log1);
    free(log2);
}

/* A batch that does not fit the state (a TAKE past the end) stops the standby: the take
 * says so, and a promotion would read the directory. */
static void test_standby_stops_following(void **s)
{
    store *st;
    size_t len;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    add(st, "q", "a", 1);
    take(st, "q", STORE_FIRST, 0, 1);
    jclose(j, st);
    char *log1 = log_bytes(1, &len);
    int fd2 = open(dir2, O_RDONLY | O_DIRECTORY);
    uint64_t pos = 0;
    recover_state got;
    buf err = BUF_INIT;
    journal_standby *sb = journal_standby_new(fd2, dir2, pos);
    assert_non_null(sb);
    feed(sb, log1, len, 1, 1, &pos);
    /* The last record, the TAKE, again: the list is empty now. */
    const uint8_t *body;
    size_t blen, off = WAL_HEADER_SIZE, last = off, next;
    const char *why;
    while (off < len) {
        assert_int_equal(wal_next((const uint8_t *)log1, len, off, &body, &blen, &next, &why),
                         WAL_OK);
        last = off;
        off = next;
    }
    assert_int_equal(body[0], WAL_TAKE);
    pos += len - last;
    journal_standby_push(sb, log1 + last, len - last, pos, 1);
    assert_int_equal(journal_standby_take(sb, pos, &got, &err), -1);
    assert_non_null(strstr(err.data, "does not follow"));
    journal_standby_free(sb);
    close(fd2);
    buf_free(&err);
    free(log1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_standby_equals_replay, setup2, teardown),
        cmocka_unit_test_setup_teardown(test_standby_stops_following, setup2, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
