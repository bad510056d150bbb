/* SPDX-License-Identifier: Apache-2.0 */
/* test_journal.c - the journal through a real temp state directory: every record type
 * round trip, torn tails, damage and repair, compaction and a crash at each of its steps. */
#include "journal_fixture.h"
#include "base/clock.h"

/* ---- round trips --------------------------------------------------------------------------- */

static void round_trip(conf_fsync policy)
{
    store *st;
    journal *j = jopen(policy, 0, &st);
    workload(st);
    buf want = dump(st);
    jclose(j, st);
    reopen_same(&want, policy);
    /* Again, appending to the same log after a restart. */
    j = jopen(policy, 0, &st);
    workload(st);
    buf want2 = dump(st);
    jclose(j, st);
    reopen_same(&want2, policy);
    buf_free(&want);
    buf_free(&want2);
}

static void test_round_trip_always(void **s) { round_trip(CONF_FSYNC_ALWAYS); }
static void test_round_trip_everysec(void **s) { round_trip(CONF_FSYNC_EVERYSEC); }
static void test_round_trip_no(void **s) { round_trip(CONF_FSYNC_NO); }

/* INITFILE writes its lines to a snapshot file, not to the log. */
static void test_initfile_not_in_log(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    assert_int_equal(store_replace(st, "huge", lines("line", 100000), NULL), STORE_OK);
    buf want = dump(st);
    jclose(j, st);
    assert_true(size_of(path_of("journal.0000000001.log")) < 200);
    assert_true(size_of(path_of("snap-0000000001-0000000001.dat")) > 800000);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
}

/* ---- torn tails and damage -------------------------------------------------------------- */

#define STEPS 24

static int cannot_reserve(int fd, off_t off, off_t len)
{
    errno = EOPNOTSUPP;
    return -1;
}

/* Builds a log of STEPS changes to list t; sizes[k] and states[k] after k of them. The
 * file system "cannot reserve space": the log is written and its size is its records'. */
static void stepped_log(long sizes[STEPS + 1], buf states[STEPS + 1])
{
    store *st;
    wal_sys.reserve = cannot_reserve;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    sizes[0] = size_of(path_of("journal.0000000001.log"));
    states[0] = dump(st);
    for (int k = 1; k <= STEPS; k++) {
        char line[64];
        snprintf(line, sizeof line, "line number %d", k);
        if (k % 5 == 0)
            take(st, "t", STORE_FIRST, 0, 1);
        else
            add(st, "t", line, 1);
        sizes[k] = size_of(path_of("journal.0000000001.log"));
        states[k] = dump(st);
    }
    jclose(j, st);
}

static void test_torn_tail(void **s)
{
    long sizes[STEPS + 1];
    buf states[STEPS + 1];
    size_t len;
    stepped_log(sizes, states);
    char *log = read_all(path_of("journal.0000000001.log"), &len);
    assert_int_equal((long)len, sizes[STEPS]);
    for (int k = 1; k <= STEPS; k++) {
        long cuts[] = {1, 5, 11, 12, 13, sizes[k] - sizes[k - 1] - 1};
        for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
            write_all(path_of("journal.0000000001.log"), log, (size_t)(sizes[k - 1] + cuts[c]));
            reopen_same(&states[k - 1], CONF_FSYNC_NO);
            assert_int_equal(size_of(path_of("journal.0000000001.log")), sizes[k - 1]);
        }
    }
    /* The last record whole in length but failing its checksum: half-written. */
    log[len - 2] ^= 0x40;
    write_all(path_of("journal.0000000001.log"), log, len);
    reopen_same(&states[STEPS - 1], CONF_FSYNC_NO);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), sizes[STEPS - 1]);
    log[len - 2] ^= 0x40;
    /* A tail of zeros (a file system that extended the file but lost the data). */
    char *z = calloc(1, len + 4096);
    memcpy(z, log, len);
    write_all(path_of("journal.0000000001.log"), z, len + 4096);
    reopen_same(&states[STEPS], CONF_FSYNC_NO);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), sizes[STEPS]);
    free(z);
    free(log);
    for (int k = 0; k <= STEPS; k++)
        buf_free(&states[k]);
}

static void expect_open_fails(const char *want1, const char *want2)
{
    buf err = BUF_INIT;
    store *st = keyed_store(NULL);
    assert_null(journal_open(state, CONF_FSYNC_NO, st, 0, &err));
    fprintf(stderr, "expected failure: %s\n", err.data);
    assert_non_null(strstr(err.data, "--check-journal"));
    assert_non_null(strstr(err.data, want1));
    assert_non_null(strstr(err.data, want2));
    assert_int_equal(store_count(st), 0);
    store_free(st);
    buf_free(&err);
}

static void test_damage_and_repair(void **s)
{
    long sizes[STEPS + 1];
    buf states[STEPS + 1];
    size_t len;
    stepped_log(sizes, states);
    char *log = read_all(path_of("journal.0000000001.log"), &len);
    /* A flipped byte in the body of record 7 (of 24): damage, not a tail. */
    log[sizes[6] + 16] ^= 0x20;
    write_all(path_of("journal.0000000001.log"), log, len);
    char at[64];
    snprintf(at, sizeof at, "offset %ld", sizes[6]);
    expect_open_fails("journal.0000000001.log", at);
    assert_int_equal(journal_check(state, 0), 1);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), (long)len);  /* untouched */
    assert_int_equal(journal_check(state, 1), 0);
    assert_int_equal(journal_check(state, 0), 0);
    reopen_same(&states[6], CONF_FSYNC_NO);
    sh("ls %s | grep -q 'journal.0000000001.log.damaged-'", state);
    /* Flipped in a record header, then in the file's magic bytes. */
    log[sizes[6] + 16] ^= 0x20;
    log[sizes[10] + 2] ^= 0x01;
    write_all(path_of("journal.0000000001.log"), log, len);
    expect_open_fails("journal.0000000001.log", "header checksum");
    log[sizes[10] + 2] ^= 0x01;
    log[1] = 'X';
    write_all(path_of("journal.0000000001.log"), log, len);
    expect_open_fails("journal.0000000001.log", "magic");
    free(log);
    for (int k = 0; k <= STEPS; k++)
        buf_free(&states[k]);
}

/* A mapped log (fsync=no) as a kill leaves it: its records, then the zeros of the space
 * reserved ahead, maybe with a record copied in part. Those are tails, cut at the start;
 * a bad record with another after it is still damage. */
static void test_mapped_tail(void **s)
{
    store *st;
    size_t len, len0;
    char log[256];
    snprintf(log, sizeof log, "%s", path_of("journal.0000000001.log"));
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    for (int k = 0; k < 30; k++) {
        char line[64];
        snprintf(line, sizeof line, "line number %d", k);
        add(st, "t", line, 1);
    }
    buf prev = dump(st);
    char *image0 = read_all(log, &len0);     /* the page cache before the last record */
    add(st, "t", "the last line", 1);
    buf want = dump(st);
    char *image = read_all(log, &len);       /* and after it: what a kill leaves */
    jclose(j, st);
    long end = size_of(log);                 /* a clean stop cuts the reserved space */
    assert_int_equal(len, len0);
    assert_true(len > 4096 && end < 4096);
    long at = -1;                            /* where the last record starts */
    for (size_t i = 0; i < len && at < 0; i++)
        if (image[i] != image0[i])
            at = (long)i;
    assert_true(at > WAL_HEADER_SIZE && at < end);
    char *part = malloc(len);
    assert_non_null(part);

    /* Killed after the last record. */
    write_all(log, image, len);
    reopen_same(&want, CONF_FSYNC_NO);
    assert_int_equal(size_of(log), end);

    /* Killed while the last record was copied, before its length (copied last). */
    memcpy(part, image, len);
    memset(part + at, 0, 4);
    write_all(log, part, len);
    reopen_same(&prev, CONF_FSYNC_NO);
    assert_int_equal(size_of(log), at);

    /* Its header whole and half its body: a crash lost the page with the rest. */
    memcpy(part, image0, len);
    memcpy(part + at, image + at, WAL_FRAME_SIZE + (size_t)(end - at - WAL_FRAME_SIZE) / 2);
    write_all(log, part, len);
    reopen_same(&prev, CONF_FSYNC_NO);
    assert_int_equal(size_of(log), at);

    /* A flipped byte in the record before it: damage, reserved zeros or not. */
    memcpy(part, image, len);
    part[at - 3] ^= 0x20;
    write_all(log, part, len);
    expect_open_fails("journal.0000000001.log", "checksum");
    free(part);
    free(image);
    free(image0);
    buf_free(&prev);
    buf_free(&want);
}

static void test_missing_snapshot(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    add(st, "a", "1", 1);
    assert_int_equal(store_replace(st, "b", lines("b", 10), NULL), STORE_OK);
    add(st, "a", "2", 1);
    buf want = dump(st);
    jclose(j, st);
    assert_int_equal(unlink(path_of("snap-0000000001-0000000001.dat")), 0);
    expect_open_fails("snap-0000000001-0000000001.dat", "journal.0000000001.log");
    /* The repair cuts the history at the REPLACE record: list a keeps its first line. */
    assert_int_equal(journal_check(state, 1), 0);
    j = jopen(CONF_FSYNC_NO, 0, &st);
    buf got = dump(st);
    assert_string_equal(got.data, "a (1)\n  1:1\n");
    buf_free(&got);
    buf_free(&want);
    jclose(j, st);
}

/* ---- compaction ---------------------------------------------------------------------------- */

static void test_compaction(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    workload(st);
    assert_int_equal(store_replace(st, "large", lines("large", 20000), NULL), STORE_OK);
    assert_int_equal(journal_compact(j, st), 0);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    assert_int_equal(size_of(path_of("snap-0000000001-0000000001.dat")), -1);
    assert_true(size_of(path_of("journal.0000000002.log")) > 0);
    take(st, "large", STORE_RANDOM, 0, 5);
    add(st, "q", "after", 1);
    assert_int_equal(journal_compact(j, st), 0);
    add(st, "q", "after2", 0);
    buf want = dump(st);
    jclose(j, st);
    assert_int_equal(size_of(path_of("journal.0000000002.log")), -1);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
}

/* ---- leases --------------------------------------------------------------------------- */

static uint64_t lend(store *st, const char *name, int64_t ms)
{
    buf out = BUF_INIT, ids = BUF_INIT;
    size_t count;
    uint64_t id;
    assert_int_equal(store_read_leased(st, name, STORE_FIRST, 1, ms, &out, &count, &ids, NULL),
                     STORE_OK);
    memcpy(&id, ids.data, sizeof id);
    buf_free(&out);
    buf_free(&ids);
    return id;
}

static size_t leases_of(store *st, const char *name)
{
    size_t n;
    assert_int_equal(store_leases(st, name, &n), STORE_OK);
    return n;
}

/* Leases, ACKs and RELEASEs replay; compaction carries the open leases; a lease past its
 * deadline at start is put back by the first expiry round; RESET drops leases. */
static void test_leases_replay_and_compaction(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    add(st, "q", "a", 1);
    add(st, "q", "b", 1);
    add(st, "q", "c", 1);
    add(st, "q", "d", 1);
    uint64_t a = lend(st, "q", 3600000), b = lend(st, "q", 3600000), c = lend(st, "q", 1);
    assert_int_equal(store_settle(st, "q", 0, b, NULL, 0, NULL), STORE_OK);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 2);
    int64_t next;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(store_lease_expire(st, clock_wall_ms(), &next), 1);   /* c */
    assert_true(next > clock_wall_ms());
    assert_int_equal(store_settle(st, "q", 0, b, NULL, 0, NULL), STORE_NO_LEASE);
    buf got = dump(st);
    assert_string_equal(got.data, "q (2)\n  1:c\n  1:d\n");
    buf_free(&got);
    /* A compaction writes the open lease (a) again; the old log goes. */
    uint64_t d = lend(st, "q", 3600000);                         /* c on loan */
    assert_int_equal(store_settle(st, "q", 1, d, NULL, 0, NULL), STORE_OK);   /* c back first */
    assert_int_equal(journal_compact(j, st), 0);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    add(st, "q", "e", 1);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 1);
    got = dump(st);
    assert_string_equal(got.data, "q (3)\n  1:c\n  1:d\n  1:e\n");
    buf_free(&got);
    assert_int_equal(store_settle(st, "q", 1, a, NULL, 0, NULL), STORE_OK);
    assert_int_equal(store_settle(st, "q", 1, c, NULL, 0, NULL), STORE_NO_LEASE);
    got = dump(st);
    assert_string_equal(got.data, "q (4)\n  1:a\n  1:c\n  1:d\n  1:e\n");
    buf_free(&got);
    uint64_t e = lend(st, "q", 3600000);
    assert_int_equal(store_reset(st, "q", NULL), STORE_OK);
    jclose(j, st);
    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 0);
    assert_int_equal(store_settle(st, "q", 1, e, NULL, 0, NULL), STORE_NO_LEASE);
    jclose(j, st);
}

/* READ OWNER=who on list q: its line, as a C string in out. */
static const char *own_read(store *st, const char *who, int64_t ms, char *out)
{
    buf b = BUF_INIT;
    uint64_t id;
    int taken;
    size_t off = 0, len;
    assert_int_equal(store_read_owned(st, "q", STORE_FIRST, who, strlen(who), ms, &b, &id,
                                      &taken, NULL), STORE_OK);
    const char *s = store_next_line(&b, &off, &len);
    memcpy(out, s, len);
    out[len] = 0;
    buf_free(&b);
    return out;
}

/* Keys, versions and counter leases: replayed, carried over by a compaction, and a
 * lease whose deadline passed while stopped undone at start. */
static void test_keys_replay_and_compaction(void **s)
{
    store *st;
    uint64_t v;
    key_out o, o2, o3;
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(keys_set(st, "a", "one", 3, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "a", "two", 3, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_set(st, "gone", "x", 1, -1, &v, NULL), STORE_OK);
    assert_int_equal(keys_del(st, "gone", -1, &v, NULL), STORE_OK);
    key_incr q = {5, INT64_MIN, INT64_MAX, 3600000, 0};
    assert_int_equal(keys_incr(st, "n", &q, &o), STORE_OK);        /* 5, lent */
    assert_int_equal(keys_incr(st, "n", &q, &o2), STORE_OK);       /* 10, lent */
    q.lease_ms = 1;
    assert_int_equal(keys_incr(st, "n", &q, &o3), STORE_OK);       /* 15, ends soon */
    assert_int_equal(keys_settle(st, "n", 0, o2.lease, &o2), STORE_OK);   /* kept */
    jclose(j, st);

    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_string_equal(key_of(st, "a"), "two/2");
    assert_string_equal(key_of(st, "gone"), "-");
    assert_string_equal(key_of(st, "n"), "15/3");
    int64_t next;
    assert_int_equal(keys_lease_expire(st, clock_wall_ms(), &next), 1);  /* o3 */
    assert_string_equal(key_of(st, "n"), "10/4");
    assert_int_equal(journal_compact(j, st), 0);
    assert_int_equal(keys_incr(st, "n", &(key_incr){1, INT64_MIN, INT64_MAX, 0, 0}, &o2),
                     STORE_OK);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_string_equal(key_of(st, "a"), "two/2");
    assert_string_equal(key_of(st, "n"), "11/5");
    assert_int_equal(keys_count(st), 2);
    /* o's lease came through the compaction: releasing it undoes its 5. */
    assert_int_equal(keys_settle(st, "n", 1, o.lease, &o2), STORE_OK);
    assert_string_equal(key_of(st, "n"), "6/6");
    assert_int_equal(keys_settle(st, "n", 1, o3.lease, &o2), STORE_NO_LEASE);
    jclose(j, st);
    assert_int_equal(journal_check(state, 0), 0);
}

/* Owners replay (OWN, RENEW, SETTLE by owner); compaction carries them; RESET drops
 * them. */
static void test_owners_replay_and_compaction(void **s)
{
    store *st;
    char got[32];
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    add(st, "q", "a", 1);
    add(st, "q", "b", 1);
    add(st, "q", "c", 1);
    add(st, "q", "d", 1);
    assert_string_equal(own_read(st, "alice", 0, got), "a");
    assert_string_equal(own_read(st, "bob", 1, got), "b");
    assert_string_equal(own_read(st, "bob", 3600000, got), "b");      /* renewed */
    assert_string_equal(own_read(st, "carol", 0, got), "c");
    assert_int_equal(store_settle_owner(st, "q", 1, "carol", 5, NULL), STORE_OK);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 2);
    int64_t next;
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(store_lease_expire(st, clock_wall_ms(), &next), 0);  /* bob renewed */
    assert_string_equal(own_read(st, "alice", 0, got), "a");
    assert_string_equal(own_read(st, "bob", 0, got), "b");
    assert_int_equal(journal_compact(j, st), 0);
    add(st, "q", "e", 1);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 2);
    assert_string_equal(own_read(st, "alice", 0, got), "a");
    assert_string_equal(own_read(st, "bob", 0, got), "b");
    buf all = dump(st);
    assert_string_equal(all.data, "q (3)\n  1:c\n  1:d\n  1:e\n");
    buf_free(&all);
    assert_int_equal(store_settle_owner(st, "q", 0, "alice", 5, NULL), STORE_OK);
    jclose(j, st);

    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 1);
    assert_string_equal(own_read(st, "alice", 0, got), "c");
    assert_int_equal(store_reset(st, "q", NULL), STORE_OK);
    jclose(j, st);
    j = jopen(CONF_FSYNC_NO, 0, &st);
    assert_int_equal(leases_of(st, "q"), 0);
    jclose(j, st);
}

/* Offset of the first record of type t in a log, and the one after it. */
static size_t find_record(const char *name, int t, size_t *after)
{
    size_t len, off = WAL_HEADER_SIZE, next, blen;
    char *p = read_all(path_of(name), &len);
    const uint8_t *body;
    const char *why;
    while (wal_next((uint8_t *)p, len, off, &body, &blen, &next, &why) == WAL_OK) {
        if (body[0] == t) {
            free(p);
            *after = next;
            return off;
        }
        off = next;
    }
    fail_msg("no record of type %d in %s", t, name);
    return 0;
}

static void *churn(void *arg)
{
    store *st = arg;
    for (int i = 0; i < 3000; i++) {
        char s[32];
        snprintf(s, sizeof s, "churn%d", i);
        add(st, i % 2 ? "q" : "large", s, i % 3 != 0);
        if (i % 4 == 3)
            take(st, i % 2 ? "q" : "large", STORE_RANDOM, i % 8 == 3, 1);
    }
    return NULL;
}

/* A crash at each step of a compaction recovers the same lists. */
static void test_compaction_crash_points(void **s)
{
    store *st;
    size_t done_end, snap_end;
    char saved[128];
    snprintf(saved, sizeof saved, "%s/saved", tmp);
    journal *j = jopen(CONF_FSYNC_NO, 0, &st);
    workload(st);
    assert_int_equal(store_replace(st, "large", lines("large", 20000), NULL), STORE_OK);
    /* Hard links keep generation 1 as the compaction leaves it (appended, then removed). */
    sh("mkdir %s && ln %s/journal.* %s/snap-* %s/", saved, state, state, saved);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, churn, st), 0);
    assert_int_equal(journal_compact(j, st), 0);
    pthread_join(t, NULL);
    jclose(j, st);
    size_t done = find_record("journal.0000000002.log", WAL_COMPACT_DONE, &done_end);
    size_t len;
    char *log2 = read_all(path_of("journal.0000000002.log"), &len);
    sh("cp %s/snap-0000000002-* %s/", state, saved);

    /* Before COMPACT_DONE, with none of the new snapshot files: the old log is replayed
     * and the SNAPSHOT records are ignored. */
    sh("rm -f %s/snap-* && ln %s/journal.0000000001.log %s/snap-0000000001-* %s/", state,
       saved, saved, state);
    write_all(path_of("journal.0000000002.log"), log2, done);
    store *a;
    journal *ja = jopen(CONF_FSYNC_NO, 0, &a);
    buf sa = dump(a);
    jclose(ja, a);
    /* Just after it, before the old files went: they are ignored. */
    sh("rm -f %s/* && ln %s/journal.0000000001.log %s/snap-* %s/", state, saved, saved, state);
    write_all(path_of("journal.0000000002.log"), log2, done_end);
    reopen_same(&sa, CONF_FSYNC_NO);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);   /* tidied */
    /* And after they went. */
    sh("rm -f %s/* && cp %s/snap-0000000002-* %s/", state, saved, state);
    write_all(path_of("journal.0000000002.log"), log2, done_end);
    reopen_same(&sa, CONF_FSYNC_NO);
    /* In the middle of the SNAPSHOT records. */
    find_record("journal.0000000002.log", WAL_SNAPSHOT, &snap_end);
    sh("rm -f %s/* && ln %s/journal.0000000001.log %s/snap-0000000001-* %s/", state, saved,
       saved, state);
    write_all(path_of("journal.0000000002.log"), log2, snap_end);
    assert_int_equal(journal_check(state, 0), 0);
    free(log2);
    buf_free(&sa);
}

/* The background thread compacts when the log outgrows the threshold. */
static void test_compaction_by_threshold(void **s)
{
    store *st;
    journal *j = jopen(CONF_FSYNC_EVERYSEC, 0, &st);
    journal_set_compact_threshold(j, 4096);
    assert_int_equal(journal_start(j, st), 0);
    for (int i = 0; i < 400; i++)
        add(st, "q", "some line to fill the log up", 1);
    for (int i = 0; i < 50 && size_of(path_of("journal.0000000001.log")) >= 0; i++)
        usleep(100000);
    assert_int_equal(size_of(path_of("journal.0000000001.log")), -1);
    buf want = dump(st);
    jclose(j, st);
    reopen_same(&want, CONF_FSYNC_EVERYSEC);
    buf_free(&want);
}

static void test_crc32c(void **s)
{
    assert_int_equal(wal_crc32c(0, "123456789", 9), 0xE3069283u);
    assert_int_equal(wal_crc32c(wal_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}


int main(void)
{
    log_set_level(LOG_WARN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c),
        cmocka_unit_test_setup_teardown(test_round_trip_always, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_everysec, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip_no, setup, teardown),
        cmocka_unit_test_setup_teardown(test_initfile_not_in_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torn_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mapped_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damage_and_repair, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_snapshot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leases_replay_and_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keys_replay_and_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owners_replay_and_compaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_crash_points, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compaction_by_threshold, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
